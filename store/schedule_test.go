package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"folio/app"
)

// TestClaimPassesOverARefusedSubscription: a subscription the send gate
// refuses keeps its due entries (thousands while its endpoint is down);
// a claim asks the gate once for it, passes over its other entries
// without decoding them, still leases the other subscriptions' entries,
// and commits nothing when it leased nothing.
func TestClaimPassesOverARefusedSubscription(t *testing.T) {
	ctx := context.Background()
	b := mustBolt(t, filepath.Join(t.TempDir(), "q.db"))
	now := time.Now()
	var entries []*app.ScheduleEntry
	for i := range 500 {
		entries = append(entries, &app.ScheduleEntry{DeliveryID: fmt.Sprintf("dlv_down_%03d", i), SubscriptionID: "sub_down", Attempt: 1, Due: now.Add(-time.Hour + time.Duration(i)*time.Millisecond)})
	}
	// An id that contains the refused one, and entries due after the backlog.
	entries = append(entries,
		&app.ScheduleEntry{DeliveryID: "dlv_up_1", SubscriptionID: "sub_down2", Attempt: 1, Due: now.Add(-time.Minute)},
		&app.ScheduleEntry{DeliveryID: "dlv_up_2", SubscriptionID: "sub_up", Attempt: 2, Due: now.Add(-time.Second)},
		&app.ScheduleEntry{DeliveryID: "dlv_later", SubscriptionID: "sub_up", Attempt: 1, Due: now.Add(time.Hour)})
	if err := b.ScheduleAttempts(ctx, entries...); err != nil {
		t.Fatal(err)
	}
	asked := map[string]int{}
	admit := func(sub string, _ int, _ time.Time) (bool, time.Time) {
		asked[sub]++
		return sub != "sub_down", time.Time{}
	}
	got, next, err := b.ClaimDueAttempts(ctx, now, time.Minute, 10, admit)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range got {
		ids = append(ids, e.DeliveryID)
	}
	if fmt.Sprint(ids) != "[dlv_up_1 dlv_up_2]" {
		t.Fatalf("claimed %v, want the two other subscriptions' entries", ids)
	}
	if asked["sub_down"] != 1 || asked["sub_down2"] != 1 || asked["sub_up"] != 1 {
		t.Errorf("the gate was asked %v, want once per subscription", asked)
	}
	if !next.IsZero() && next.Before(now) {
		t.Errorf("next = %v, before now", next)
	}

	// Everything left due is refused: nothing leased, nothing committed.
	writes := func() int64 { s := b.db.Stats(); return s.TxStats.GetWrite() }
	w0 := writes()
	got, _, err = b.ClaimDueAttempts(ctx, now, time.Minute, 10, admit)
	if err != nil || len(got) != 0 {
		t.Fatalf("second claim: %v, %v", got, err)
	}
	if w := writes(); w != w0 {
		t.Errorf("a claim that leased nothing wrote %d pages", w-w0)
	}

	// Admitted again, the backlog is claimed in due order.
	got, _, err = b.ClaimDueAttempts(ctx, now, time.Minute, 3, nil)
	if err != nil || len(got) != 3 || got[0].DeliveryID != "dlv_down_000" || got[2].DeliveryID != "dlv_down_002" {
		t.Fatalf("claim after the gate opened: %v, %v", got, err)
	}
}
