package main

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"folio/app"
)

// leaseSpy records the claims and lease renewals of the document
// workers' queue.
type leaseSpy struct {
	app.Queue
	mu      sync.Mutex
	claims  []*app.QueueEntry
	renewed time.Time // the latest end a renewal asked for
}

func (q *leaseSpy) Claim(ctx context.Context, now time.Time, lease time.Duration) (*app.QueueEntry, error) {
	e, err := q.Queue.Claim(ctx, now, lease)
	if e != nil {
		q.mu.Lock()
		q.claims = append(q.claims, e)
		q.mu.Unlock()
	}
	return e, err
}

func (q *leaseSpy) Renew(ctx context.Context, e *app.QueueEntry, until time.Time) error {
	q.mu.Lock()
	if until.After(q.renewed) {
		q.renewed = until
	}
	q.mu.Unlock()
	return q.Queue.Renew(ctx, e, until)
}

func (q *leaseSpy) renewedUntil() time.Time {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.renewed
}

func (q *leaseSpy) claimed() []*app.QueueEntry {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.claims)
}

// leaseServer starts a server (two workers) whose clock the test moves,
// whose job lease is lease, and whose queue spy sees; its logs go to logs.
func leaseServer(t *testing.T, lease time.Duration, logs *syncBuffer) (s *testServer, spy *leaseSpy, now func() time.Time, advance func(time.Duration)) {
	var mu sync.Mutex
	at := time.Now()
	now = func() time.Time { mu.Lock(); defer mu.Unlock(); return at }
	advance = func(d time.Duration) { mu.Lock(); at = at.Add(d); mu.Unlock() }
	spy = &leaseSpy{}
	testHookDocuments = func(d *app.DocumentService) {
		spy.Queue = d.Queue
		d.Queue = spy
		d.JobLease = lease
	}
	t.Cleanup(func() { testHookDocuments = nil })
	s = startMain(t, &Main{Now: now, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	return s, spy, now, advance
}

// jobState reads a job's attempts and crashes as stored.
func jobState(t *testing.T, s *testServer, id string) (attempts, crashes int) {
	t.Helper()
	j, err := s.DB.FindJobForWorker(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j.Attempts, j.Crashes
}

// TestRunningJobKeepsItsLease: a job whose run outlasts its queue lease
// many times over (here its file write is held; under load it waits for
// render memory) keeps the lease while it runs: at every step of the
// injected clock, past ten leases, the queue hands it to no one else, so
// the second worker never starts it. It renders and ends exactly once,
// with one attempt and no crash counted.
func TestRunningJobKeepsItsLease(t *testing.T) {
	const lease = 300 * time.Millisecond // renewed every 100 ms of real time
	var logs syncBuffer
	s, spy, now, advance := leaseServer(t, lease, &logs)
	g := newGate(t, s)
	u := s.signup("Lessee")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate).str("id")
	id := s.must(200, "POST", "/api/v1/documents/generate?async=true", key, invoiceBody(tpl, "Slow Ltd")).str("jobId")
	if held := g.Held(); held != id {
		t.Fatalf("held %s, want %s", held, id)
	}

	// Each step moves the clock half a lease, waits for the running
	// worker's next renewal, then claims as a second worker would.
	for step := 0; step < 20; step++ {
		advance(lease / 2)
		want := now().Add(lease)
		for wait := time.Now().Add(3 * time.Second); spy.renewedUntil().Before(want) && time.Now().Before(wait); {
			time.Sleep(5 * time.Millisecond)
		}
		if e, err := s.Bolt.Claim(context.Background(), now(), lease); err != nil || e != nil {
			t.Fatalf("step %d: the running job's entry was claimed again: %+v, %v", step, e, err)
		}
	}
	if n := len(spy.claimed()); n != 1 {
		t.Fatalf("the workers claimed %d entries, want 1", n)
	}
	g.Pass()
	if j := s.waitEnd(key, id); j.str("status") != "completed" {
		t.Fatalf("job = %s", j.raw)
	}
	if order := g.Order(); len(order) != 1 || order[0] != id {
		t.Fatalf("documents rendered and written: %v, want %s once", order, id)
	}
	if a, c := jobState(t, s, id); a != 1 || c != 0 {
		t.Fatalf("attempts %d, crashes %d; want 1, 0", a, c)
	}
	if n := strings.Count(logs.String(), `msg="job ended" job=`+id+" "); n != 1 {
		t.Fatalf("job ended %d times", n)
	}
	waitUntil(t, 10*time.Second, "the entry was acknowledged", func() bool {
		ids, _ := s.Bolt.JobIDs(context.Background())
		return len(ids) == 0
	})
}

// TestJobQueuedTwiceRunsOnce: a second entry for a job that is running
// (a re-queue raced with its run) is claimed by the other worker, which
// leaves it alone: the job is not started again (no second attempt, no
// crash counted), renders once, and the extra entry is acknowledged once
// it comes back after its lease with the job ended.
func TestJobQueuedTwiceRunsOnce(t *testing.T) {
	const lease = 300 * time.Millisecond
	var logs syncBuffer
	s, spy, _, advance := leaseServer(t, lease, &logs)
	g := newGate(t, s)
	u := s.signup("Twice")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate).str("id")
	id := s.must(200, "POST", "/api/v1/documents/generate?async=true", key, invoiceBody(tpl, "Twice Ltd")).str("jobId")
	if held := g.Held(); held != id {
		t.Fatalf("held %s, want %s", held, id)
	}
	if err := s.Bolt.Enqueue(context.Background(), &app.QueueEntry{JobID: id, Priority: app.PrioritySingle}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 10*time.Second, "the other worker claimed the second entry", func() bool { return len(spy.claimed()) == 2 })
	waitUntil(t, 10*time.Second, "the other worker left the running job alone", func() bool {
		return strings.Contains(logs.String(), `msg="job already running; not started twice" job=`+id)
	})
	if a, c := jobState(t, s, id); a != 1 || c != 0 {
		t.Fatalf("while it runs: attempts %d, crashes %d; want 1, 0", a, c)
	}
	g.Pass()
	if j := s.waitEnd(key, id); j.str("status") != "completed" {
		t.Fatalf("job = %s", j.raw)
	}
	// The second entry's lease lapses; claimed again, it finds the job
	// ended and is acknowledged without a run.
	advance(2 * lease)
	waitUntil(t, 10*time.Second, "both entries were acknowledged", func() bool {
		ids, _ := s.Bolt.JobIDs(context.Background())
		return len(ids) == 0
	})
	if order := g.Order(); len(order) != 1 || order[0] != id {
		t.Fatalf("documents rendered and written: %v, want %s once", order, id)
	}
	if a, c := jobState(t, s, id); a != 1 || c != 0 {
		t.Fatalf("attempts %d, crashes %d; want 1, 0", a, c)
	}
	if n := strings.Count(logs.String(), `msg="job ended" job=`+id+" "); n != 1 {
		t.Fatalf("job ended %d times", n)
	}
}
