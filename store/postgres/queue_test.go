package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"folio/app"
	"folio/internal/pgtest"
)

func errorsIs(err, target error) bool { return errors.Is(err, target) }

// openReplicas opens n DBs on one fresh database: n replicas.
func openReplicas(t *testing.T, n int) []*DB {
	t.Helper()
	url := pgtest.NewDatabase(t)
	var dbs []*DB
	for range n {
		db, err := Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs = append(dbs, db)
	}
	return dbs
}

// TestClaimsAcrossReplicas: three replicas with four workers each drain
// 300 entries at once; each entry is claimed exactly once, and none is
// left.
func TestClaimsAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	dbs := openReplicas(t, 3)
	var entries []*app.QueueEntry
	for i := range 300 {
		entries = append(entries, &app.QueueEntry{JobID: fmt.Sprintf("job-%03d", i), Priority: 1 + i%3})
	}
	if err := dbs[0].Enqueue(ctx, entries...); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	claimed := map[string]int{}
	perReplica := make([]int, len(dbs))
	var wg sync.WaitGroup
	for r, db := range dbs {
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					e, err := db.Claim(ctx, time.Now(), time.Minute)
					if err != nil {
						t.Error(err)
						return
					}
					if e == nil {
						return
					}
					mu.Lock()
					claimed[e.JobID]++
					perReplica[r]++
					mu.Unlock()
					if err := db.Ack(ctx, e); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	if len(claimed) != 300 {
		t.Fatalf("%d distinct entries claimed, want 300", len(claimed))
	}
	for id, n := range claimed {
		if n != 1 {
			t.Fatalf("%s claimed %d times", id, n)
		}
	}
	if ids, err := dbs[1].JobIDs(ctx); err != nil || len(ids) != 0 {
		t.Fatalf("left in the queue: %d %v", len(ids), err)
	}
	t.Logf("claims per replica: %v", perReplica)
}

// TestLeaseTakeover: a replica that dies holding a lease stops renewing;
// once the lease lapses another replica claims the entry, and the dead
// one's late renewal is refused (the lease is lost). A replica that stops
// gracefully (Close) releases its leases: another claims them at once.
func TestLeaseTakeover(t *testing.T) {
	ctx := context.Background()
	dbs := openReplicas(t, 3)
	a, b, c := dbs[0], dbs[1], dbs[2]
	if err := a.Enqueue(ctx, &app.QueueEntry{JobID: "j1", Priority: 1}, &app.QueueEntry{JobID: "j2", Priority: 1}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	held, err := a.Claim(ctx, now, time.Minute)
	if err != nil || held == nil || held.JobID != "j1" {
		t.Fatalf("a claims %+v %v", held, err)
	}
	// a is alive: its renewal holds j1 past the first lease.
	if err := a.Renew(ctx, held, now.Add(3*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if e, _ := b.Claim(ctx, now.Add(2*time.Minute), time.Minute); e == nil || e.JobID != "j2" {
		t.Fatalf("b at 2 min claims %+v, want j2 (j1 renewed by a)", e)
	}
	// a dies: no more renewals. After its lease, b takes j1 over.
	e, err := b.Claim(ctx, now.Add(4*time.Minute), time.Minute)
	if err != nil || e == nil || e.JobID != "j1" {
		t.Fatalf("b after a's lease: %+v %v, want j1", e, err)
	}
	if err := a.Renew(ctx, held, now.Add(10*time.Minute)); !errors.Is(err, errLeaseLost) {
		t.Fatalf("a's late renewal: %v, want errLeaseLost", err)
	}
	if err := b.Renew(ctx, e, now.Add(10*time.Minute)); err != nil {
		t.Fatalf("b's renewal: %v", err)
	}
	// a's start-up release touches only its own leases: none now.
	if n, err := a.ReleaseLeases(ctx); err != nil || n != 0 {
		t.Fatalf("a released %d %v, want 0 (b holds both)", n, err)
	}
	// b stops gracefully: its two leases go back at once, for c.
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for range 2 {
		e, err := c.Claim(ctx, now.Add(5*time.Minute), time.Minute)
		if err != nil || e == nil {
			t.Fatalf("c after b's close: %+v %v", e, err)
		}
		got[e.JobID] = true
		if err := c.Ack(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if !got["j1"] || !got["j2"] {
		t.Fatalf("c claimed %v, want j1 and j2", got)
	}
}

// BenchmarkEnqueueClaimAck is one job's trip through the queue: a
// committed enqueue, a claim and an ack (compare store's bbolt benchmark
// of the same name).
func BenchmarkEnqueueClaimAck(b *testing.B) {
	ctx := context.Background()
	db := mustDB(b)
	now := time.Now()
	for b.Loop() {
		if err := db.Enqueue(ctx, &app.QueueEntry{JobID: "j", Priority: 1}); err != nil {
			b.Fatal(err)
		}
		e, err := db.Claim(ctx, now, time.Minute)
		if err != nil || e == nil {
			b.Fatal(err)
		}
		if err := db.Ack(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
}

// TestScheduleClaimsAcrossReplicas: three replicas claiming due webhook
// attempts at once take each exactly once; a replica's release frees only
// its own leases.
func TestScheduleClaimsAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	dbs := openReplicas(t, 3)
	now := time.Now().Truncate(time.Millisecond)
	var entries []*app.ScheduleEntry
	for i := range 120 {
		entries = append(entries, &app.ScheduleEntry{DeliveryID: fmt.Sprintf("dlv_%03d", i), SubscriptionID: fmt.Sprintf("whk_%d", i%7), Attempt: 1,
			Due: now.Add(-time.Duration(i) * time.Millisecond)})
	}
	if err := dbs[0].ScheduleAttempts(ctx, entries...); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	claimed := map[string]int{}
	var wg sync.WaitGroup
	for _, db := range dbs {
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					got, _, err := db.ClaimDueAttempts(ctx, now, time.Minute, 4, nil)
					if err != nil {
						t.Error(err)
						return
					}
					if len(got) == 0 {
						return
					}
					mu.Lock()
					for _, e := range got {
						claimed[e.DeliveryID]++
					}
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	if len(claimed) != 120 {
		t.Fatalf("%d distinct attempts claimed, want 120", len(claimed))
	}
	for id, n := range claimed {
		if n != 1 {
			t.Fatalf("%s claimed %d times", id, n)
		}
	}
	var released int
	for _, db := range dbs {
		n, err := db.ReleaseAttemptLeases(ctx)
		if err != nil {
			t.Fatal(err)
		}
		released += n
	}
	if released != 120 {
		t.Fatalf("the replicas released %d leases, want 120 (each its own)", released)
	}
}
