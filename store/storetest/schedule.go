package storetest

import (
	"fmt"
	"testing"
	"time"

	"folio/app"
)

// ScheduleCase is one contract case of the webhook attempt schedule.
type ScheduleCase struct {
	Name string
	Run  func(t *testing.T, q app.WebhookSchedule)
}

// RunSchedule runs every schedule case, each on a schedule made by open.
func RunSchedule(t *testing.T, open func(testing.TB) app.WebhookSchedule) {
	for _, c := range scheduleCases {
		t.Run(c.Name, func(t *testing.T) { c.Run(t, open(t)) })
	}
}

var scheduleCases = []ScheduleCase{
	{"KeepsOneEntryPerKey", scheduleKeepsOneEntryPerKey},
	{"ReplaceReleaseAndNext", scheduleReplaceReleaseAndNext},
}

func attempt(id, sub string, n int, due time.Time) *app.ScheduleEntry {
	return &app.ScheduleEntry{DeliveryID: id, SubscriptionID: sub, Attempt: n, Due: due}
}

// scheduleKeepsOneEntryPerKey: scheduling the same attempt twice (the
// sweep racing a dispatch) keeps the first entry and its lease; claims take
// only what admit lets through, at most max, earliest first.
func scheduleKeepsOneEntryPerKey(t *testing.T, q app.WebhookSchedule) {
	if err := q.ScheduleAttempts(ctx, attempt("dlv_a", "whk_1", 1, t0), attempt("dlv_b", "whk_1", 1, t0.Add(time.Millisecond)),
		attempt("dlv_c", "whk_2", 1, t0.Add(2*time.Millisecond))); err != nil {
		t.Fatal(err)
	}
	got, _, err := q.ClaimDueAttempts(ctx, t0.Add(time.Second), time.Minute, 1, nil)
	if err != nil || len(got) != 1 || got[0].DeliveryID != "dlv_a" || got[0].SubscriptionID != "whk_1" || !got[0].Due.Equal(t0) || got[0].Attempt != 1 {
		t.Fatalf("claim = %+v, %v", got, err)
	}
	// Scheduling dlv_a again under the same key must not clear its lease.
	if err := q.ScheduleAttempts(ctx, attempt("dlv_a", "whk_1", 1, t0)); err != nil {
		t.Fatal(err)
	}
	all, _ := q.ScheduledAttempts(ctx)
	if len(all) != 3 {
		t.Fatalf("%d entries after rescheduling the same key", len(all))
	}
	// Subscription whk_1 is refused: only dlv_c can be taken; the next look
	// is when admit says whk_1 reopens.
	reopen := t0.Add(1500 * time.Millisecond)
	admit := func(sub string, _ int, _ time.Time) (bool, time.Time) { return sub != "whk_1", reopen }
	got, _, err = q.ClaimDueAttempts(ctx, t0.Add(time.Second), time.Minute, 5, admit)
	if err != nil || len(got) != 1 || got[0].DeliveryID != "dlv_c" {
		t.Fatalf("claim with admit = %+v, %v", got, err)
	}
	got, next, err := q.ClaimDueAttempts(ctx, t0.Add(time.Second), time.Minute, 5, admit)
	if err != nil || len(got) != 0 || !next.Equal(reopen) {
		t.Fatalf("nothing admitted: %+v, next %v, %v", got, next, err)
	}
	if err := q.RemoveAttempts(ctx, "dlv_a", "dlv_b"); err != nil {
		t.Fatal(err)
	}
	all, _ = q.ScheduledAttempts(ctx)
	if len(all) != 1 || all[0].DeliveryID != "dlv_c" {
		t.Fatalf("after removing a and b: %+v", all)
	}
}

// scheduleReplaceReleaseAndNext: with nothing due a claim says when the
// next entry is; a replaced entry gives way to its next attempt; released
// leases are claimable at once; lapsed leases come back.
func scheduleReplaceReleaseAndNext(t *testing.T, q app.WebhookSchedule) {
	if err := q.ScheduleAttempts(ctx, attempt("dlv_2", "whk", 1, t0.Add(time.Minute)), attempt("dlv_1", "whk", 1, t0.Add(time.Minute)),
		attempt("dlv_3", "whk", 1, t0.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	got, next, err := q.ClaimDueAttempts(ctx, t0, time.Minute, 5, nil)
	if err != nil || len(got) != 0 || !next.Equal(t0.Add(time.Minute)) {
		t.Fatalf("nothing due: %+v, next %v, %v", got, next, err)
	}
	got, _, err = q.ClaimDueAttempts(ctx, t0.Add(time.Minute), time.Minute, 5, nil)
	if err != nil || len(got) != 2 || got[0].DeliveryID != "dlv_1" || got[1].DeliveryID != "dlv_2" {
		t.Fatalf("due at the minute: %+v, %v", got, err)
	}
	// dlv_1 failed: its second attempt in five minutes replaces it.
	if err := q.ReplaceAttempt(ctx, got[0], attempt("dlv_1", "whk", 2, t0.Add(6*time.Minute))); err != nil {
		t.Fatal(err)
	}
	// dlv_2 succeeded: removed with nothing next.
	if err := q.ReplaceAttempt(ctx, got[1], nil); err != nil {
		t.Fatal(err)
	}
	all, _ := q.ScheduledAttempts(ctx)
	var list []string
	for _, e := range all {
		list = append(list, fmt.Sprintf("%s#%d@%s", e.DeliveryID, e.Attempt, e.Due.Sub(t0)))
	}
	if fmt.Sprint(list) != "[dlv_1#2@6m0s dlv_3#1@1h0m0s]" {
		t.Fatalf("schedule %v", list)
	}
	got, _, _ = q.ClaimDueAttempts(ctx, t0.Add(7*time.Minute), time.Hour, 5, nil)
	if len(got) != 1 || got[0].Attempt != 2 {
		t.Fatalf("second attempt: %+v", got)
	}
	if got, _, _ := q.ClaimDueAttempts(ctx, t0.Add(8*time.Minute), time.Hour, 5, nil); len(got) != 0 {
		t.Fatalf("claimed while leased: %+v", got)
	}
	if n, err := q.ReleaseAttemptLeases(ctx); err != nil || n != 1 {
		t.Fatalf("released %d %v", n, err)
	}
	if got, _, _ := q.ClaimDueAttempts(ctx, t0.Add(8*time.Minute), time.Hour, 5, nil); len(got) != 1 {
		t.Fatalf("after release: %+v", got)
	}
	// A lapsed lease comes back, before dlv_3, due later.
	if got, _, _ := q.ClaimDueAttempts(ctx, t0.Add(8*time.Minute+time.Hour), time.Hour, 5, nil); len(got) != 2 || got[0].DeliveryID != "dlv_1" || got[1].DeliveryID != "dlv_3" {
		t.Fatalf("after the lease lapsed: %d entries", len(got))
	}
}
