package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"folio/app"
)

func mustBolt(tb testing.TB, path string) *Bolt {
	tb.Helper()
	b, err := OpenBolt(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { b.Close() })
	return b
}

func TestQueuePriorityLeaseAck(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "q.db")
	q := mustBolt(t, path)
	if err := q.Enqueue(ctx, &app.QueueEntry{JobID: "batch-1", Priority: 5}, &app.QueueEntry{JobID: "large-1", Priority: 10}); err != nil {
		t.Fatal(err)
	}
	if err := q.Enqueue(ctx, &app.QueueEntry{JobID: "single-1", Priority: 1}, &app.QueueEntry{JobID: "batch-2", Priority: 5}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	var order []string
	for {
		e, err := q.Claim(ctx, now, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			break
		}
		order = append(order, e.JobID)
	}
	want := []string{"single-1", "batch-1", "batch-2", "large-1"}
	if len(order) != len(want) {
		t.Fatalf("claimed %v, want %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("claimed %v, want %v", order, want)
		}
	}

	// Leased entries come back once the lease ends (a dead worker).
	e, _ := q.Claim(ctx, now.Add(2*time.Minute), time.Minute)
	if e == nil || e.JobID != "single-1" {
		t.Fatalf("after lease expiry: %+v", e)
	}
	if err := q.Ack(ctx, e); err != nil {
		t.Fatal(err)
	}
	ids, _ := q.JobIDs(ctx)
	if ids["single-1"] || !ids["large-1"] || len(ids) != 3 {
		t.Fatalf("ids after ack: %v", ids)
	}

	// Entries survive a reopen, in order, and new ones sort after old ones.
	q.Close()
	q2 := mustBolt(t, path)
	q2.Enqueue(ctx, &app.QueueEntry{JobID: "batch-3", Priority: 5})
	var again []string
	for {
		e, _ := q2.Claim(ctx, now.Add(10*time.Minute), time.Minute)
		if e == nil {
			break
		}
		again = append(again, e.JobID)
	}
	if len(again) != 4 || again[0] != "batch-1" || again[1] != "batch-2" || again[2] != "batch-3" || again[3] != "large-1" {
		t.Fatalf("after reopen: %v", again)
	}
}

func BenchmarkEnqueueClaimAck(b *testing.B) {
	ctx := context.Background()
	q := mustBolt(b, filepath.Join(b.TempDir(), "q.db"))
	now := time.Now()
	for b.Loop() {
		if err := q.Enqueue(ctx, &app.QueueEntry{JobID: "j", Priority: 1}); err != nil {
			b.Fatal(err)
		}
		e, err := q.Claim(ctx, now, time.Minute)
		if err != nil || e == nil {
			b.Fatal(err)
		}
		if err := q.Ack(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
}

func TestReleaseLeases(t *testing.T) {
	ctx := context.Background()
	q := mustBolt(t, filepath.Join(t.TempDir(), "q.db"))
	q.Enqueue(ctx, &app.QueueEntry{JobID: "a", Priority: 1}, &app.QueueEntry{JobID: "b", Priority: 1})
	now := time.Now()
	if e, _ := q.Claim(ctx, now, time.Hour); e == nil || e.JobID != "a" {
		t.Fatal("claim a")
	}
	if n, err := q.ReleaseLeases(ctx); n != 1 || err != nil {
		t.Fatalf("released %d %v", n, err)
	}
	if e, _ := q.Claim(ctx, now, time.Hour); e == nil || e.JobID != "a" {
		t.Fatalf("a not claimable after release: %+v", e)
	}
}
