package storetest

import (
	"fmt"
	"testing"
	"time"

	"folio/app"
)

var queueCases = []QueueCase{
	{"PriorityLeaseAck", queuePriorityLeaseAck},
	{"ReleaseLeases", queueReleaseLeases},
	{"Renew", queueRenew},
}

// drain claims until none is claimable at now and returns the job ids.
func drain(t *testing.T, q app.Queue, now time.Time) []string {
	t.Helper()
	var out []string
	for {
		e, err := q.Claim(ctx, now, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			return out
		}
		out = append(out, e.JobID)
	}
}

func enqueue(t *testing.T, q app.Queue, entries ...*app.QueueEntry) {
	t.Helper()
	if err := q.Enqueue(ctx, entries...); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if len(e.Key) == 0 {
			t.Fatalf("entry of %s has no key after Enqueue", e.JobID)
		}
	}
}

// queuePriorityLeaseAck: entries are claimed by priority, then in the order
// they came; a lapsed lease hands its entry out again; an acknowledged
// entry is gone.
func queuePriorityLeaseAck(t *testing.T, q app.Queue) {
	enqueue(t, q, &app.QueueEntry{JobID: "batch-1", Priority: 5}, &app.QueueEntry{JobID: "large-1", Priority: 10})
	enqueue(t, q, &app.QueueEntry{JobID: "single-1", Priority: 1}, &app.QueueEntry{JobID: "batch-2", Priority: 5})
	now := t0
	if got := fmt.Sprint(drain(t, q, now)); got != "[single-1 batch-1 batch-2 large-1]" {
		t.Fatalf("claimed %s", got)
	}
	// Leased entries come back once the lease ends (a dead worker).
	e, err := q.Claim(ctx, now.Add(2*time.Minute), time.Minute)
	if err != nil || e == nil || e.JobID != "single-1" || e.Priority != 1 {
		t.Fatalf("after lease expiry: %+v %v", e, err)
	}
	if err := q.Ack(ctx, e); err != nil {
		t.Fatal(err)
	}
	ids, err := q.JobIDs(ctx)
	if err != nil || ids["single-1"] || !ids["large-1"] || len(ids) != 3 {
		t.Fatalf("ids after ack: %v %v", ids, err)
	}
	// New entries sort after the old ones of their priority.
	enqueue(t, q, &app.QueueEntry{JobID: "batch-3", Priority: 5})
	if got := fmt.Sprint(drain(t, q, now.Add(10*time.Minute))); got != "[batch-1 batch-2 batch-3 large-1]" {
		t.Fatalf("after more: %s", got)
	}
}

// queueReleaseLeases: released entries are claimable at once.
func queueReleaseLeases(t *testing.T, q app.Queue) {
	enqueue(t, q, &app.QueueEntry{JobID: "a", Priority: 1}, &app.QueueEntry{JobID: "b", Priority: 1})
	if e, _ := q.Claim(ctx, t0, time.Hour); e == nil || e.JobID != "a" {
		t.Fatal("claim a")
	}
	if n, err := q.ReleaseLeases(ctx); n != 1 || err != nil {
		t.Fatalf("released %d %v", n, err)
	}
	if e, _ := q.Claim(ctx, t0, time.Hour); e == nil || e.JobID != "a" {
		t.Fatalf("a not claimable after release: %+v", e)
	}
}

// queueRenew: a renewed lease holds its entry past the lease it was
// claimed with, and lapses only at the renewed end; a lapsed entry not yet
// claimed again is leased again by a renewal; an acknowledged entry cannot
// be renewed.
func queueRenew(t *testing.T, q app.Queue) {
	enqueue(t, q, &app.QueueEntry{JobID: "a", Priority: 1}, &app.QueueEntry{JobID: "b", Priority: 1})
	claim := func(at time.Duration) string {
		t.Helper()
		e, err := q.Claim(ctx, t0.Add(at), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			return ""
		}
		return e.JobID
	}
	renew := func(e *app.QueueEntry, until time.Duration) {
		t.Helper()
		if err := q.Renew(ctx, e, t0.Add(until)); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := q.Claim(ctx, t0, time.Minute)
	if a == nil || a.JobID != "a" {
		t.Fatalf("claim = %+v, want a", a)
	}
	renew(a, 5*time.Minute)
	// At 2 min the lease a was claimed with has lapsed; the renewed one holds.
	b, _ := q.Claim(ctx, t0.Add(2*time.Minute), time.Minute)
	if b == nil || b.JobID != "b" {
		t.Fatalf("claim at 2 min = %+v, want b (a is renewed)", b)
	}
	renew(b, 10*time.Minute)
	if got := claim(4 * time.Minute); got != "" {
		t.Fatalf("claim at 4 min = %q, want none: both renewed", got)
	}
	// A renewed lease lapses at its renewed end.
	if got := claim(6 * time.Minute); got != "a" {
		t.Fatalf("claim at 6 min = %q, want a (renewed to 5 min only)", got)
	}
	if err := q.Ack(ctx, a); err != nil {
		t.Fatal(err)
	}
	// b lapses at 10 min; a claim at 11 min takes c, queued ahead of it.
	// b's worker's renewal leases it again before anyone claims it.
	enqueue(t, q, &app.QueueEntry{JobID: "c", Priority: 0})
	if got := claim(11 * time.Minute); got != "c" {
		t.Fatalf("claim at 11 min = %q, want c", got)
	}
	renew(b, 20*time.Minute)
	if got := claim(11*time.Minute + 30*time.Second); got != "" {
		t.Fatalf("claim after b's renewal = %q, want none", got)
	}
	if got := claim(21 * time.Minute); got != "b" && got != "c" {
		t.Fatalf("claim at 21 min = %q, want b or c (both lapsed)", got)
	}
	// An acknowledged entry is gone: renewing it fails.
	if err := q.Ack(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := q.Renew(ctx, b, t0.Add(time.Hour)); err == nil {
		t.Fatal("renew after ack succeeded")
	}
}
