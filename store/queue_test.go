package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"folio/app"
)

// TestQueueRenew: a renewed lease holds its entry past the lease it was
// claimed with, and lapses only at the renewed end; a lapsed entry not yet
// claimed again is leased again by a renewal; an acknowledged entry cannot
// be renewed.
func TestQueueRenew(t *testing.T) {
	ctx := context.Background()
	q := mustBolt(t, filepath.Join(t.TempDir(), "q.db"))
	if err := q.Enqueue(ctx, &app.QueueEntry{JobID: "a", Priority: 1}, &app.QueueEntry{JobID: "b", Priority: 1}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1700000000, 0)
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

	// b lapses at 10 min; a claim at 11 min puts it back among the
	// claimable entries but takes c, queued ahead of it. Its worker's
	// renewal leases it again before anyone claims it.
	if err := q.Enqueue(ctx, &app.QueueEntry{JobID: "c", Priority: 0}); err != nil {
		t.Fatal(err)
	}
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
	if err := q.Renew(ctx, b, t0.Add(time.Hour)); !errors.Is(err, errNotQueued) {
		t.Fatalf("renew after ack = %v, want errNotQueued", err)
	}
}
