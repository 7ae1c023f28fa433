package store

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
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

// Concurrent enqueues are group-committed: each returns only once its entry
// is in the file, every entry gets its own key, and all survive a reopen.
func TestConcurrentEnqueuesAreDurable(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "q.db")
	q := mustBolt(t, path)
	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- q.Enqueue(ctx, &app.QueueEntry{JobID: fmt.Sprintf("job-%03d", i), Priority: 1 + i%2*4})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// A copy taken now holds every acknowledged enqueue.
	cp := filepath.Join(t.TempDir(), "copy.db")
	if err := q.Backup(cp); err != nil {
		t.Fatal(err)
	}
	c := mustBolt(t, cp)
	if ids, _ := c.JobIDs(ctx); len(ids) != n {
		t.Fatalf("the file holds %d entries, want %d", len(ids), n)
	}
	seen := map[string]bool{}
	prio := 0
	for {
		e, err := q.Claim(ctx, time.Now(), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			break
		}
		if seen[e.JobID] || e.Priority < prio {
			t.Fatalf("claimed %s (priority %d) twice or out of order", e.JobID, e.Priority)
		}
		seen[e.JobID], prio = true, e.Priority
	}
	if len(seen) != n {
		t.Fatalf("claimed %d, want %d", len(seen), n)
	}
}

// An acknowledgement is written with the next commit: a crash before it
// brings the entry back (the worker then finds its job ended), and Close
// writes it.
func TestAckIsWrittenLazily(t *testing.T) {
	defer func(d time.Duration) { ackFlush = d }(ackFlush)
	ackFlush = time.Hour // no background flush between the steps
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "q.db")
	q := mustBolt(t, path)
	q.Enqueue(ctx, &app.QueueEntry{JobID: "a", Priority: 1}, &app.QueueEntry{JobID: "b", Priority: 1})
	e, _ := q.Claim(ctx, time.Now(), time.Minute)
	if err := q.Ack(ctx, e); err != nil {
		t.Fatal(err)
	}
	if ids, _ := q.JobIDs(ctx); ids["a"] || !ids["b"] {
		t.Fatalf("in memory after ack: %v", ids)
	}
	crash := filepath.Join(dir, "crash.db") // the file as a kill -9 now would leave it
	if err := q.Backup(crash); err != nil {
		t.Fatal(err)
	}
	if ids, _ := mustBolt(t, crash).JobIDs(ctx); !ids["a"] || !ids["b"] {
		t.Fatalf("after a crash: %v, want a back with b", ids)
	}
	q.Close()
	if ids, _ := mustBolt(t, path).JobIDs(ctx); ids["a"] || !ids["b"] {
		t.Fatalf("after Close: %v, want only b", ids)
	}
}

// BenchmarkEnqueueParallel enqueues from 8 goroutines per CPU: enqueues
// that arrive during a commit share the next one.
func BenchmarkEnqueueParallel(b *testing.B) {
	ctx := context.Background()
	q := mustBolt(b, filepath.Join(b.TempDir(), "q.db"))
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := q.Enqueue(ctx, &app.QueueEntry{JobID: "j", Priority: 1}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
