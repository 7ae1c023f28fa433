package store

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"folio/app"
)

// TestWritesAnswerDuringRetention runs the janitor's job retention over a
// grown history of 100,000 jobs (90 days: most are past their 7 days)
// while another goroutine keeps writing jobs, as requests do. The pass
// must take many short transactions and the writes must go between them:
// some answer before the pass ends, and none fails. (Not a latency
// threshold: this machine's speed varies; docs/performance.md has the
// figures of a pass over 1M and 10M jobs.)
func TestWritesAnswerDuringRetention(t *testing.T) {
	if testing.Short() {
		t.Skip("grows 100,000 jobs")
	}
	ctx := context.Background()
	n := 100_000
	if raceEnabled {
		// The same pass over 2,000 rows in fixed steps of 100, so it still
		// takes many: growing 10,000 took a minute of the race step at
		// load 10, and steps sized by time shrank to 50 rows (-race slows
		// SQLite tenfold), 170 transactions and checkpoints for 9,000 jobs.
		n = 2_000
		defer func(rows int) { testStepRows = rows }(testStepRows)
		testStepRows = 100
	}
	db, res := mustGrow(t, n, 100)
	var before int
	db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM jobs`).Scan(&before)

	var purgeDone atomic.Bool
	var wg sync.WaitGroup
	var writes, writesDuring int
	var longestWrite time.Duration
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			now := time.Now().UTC()
			j := &app.Job{ID: app.NewID("job"), TeamID: res.BigTeamID, TemplateID: res.TemplateIDs[0], Status: app.StatusPending, Format: "pdf",
				Priority: app.PrioritySingle, CreatedAt: now}
			t0 := time.Now()
			if err := db.CreateJobs(ctx, nil, j); err != nil {
				t.Errorf("write %d: %v", i, err)
				return
			}
			longestWrite = max(longestWrite, time.Since(t0))
			writes++
			if !purgeDone.Load() {
				writesDuring++
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	time.Sleep(20 * time.Millisecond) // the writer is busy before the pass begins
	now := time.Now().UTC()
	st, err := db.PurgeJobs(ctx, now.Add(-app.CompletedJobRetention), now.Add(-app.FailedJobRetention))
	purgeDone.Store(true)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	var after int
	db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM jobs`).Scan(&after)
	t.Logf("purged %v in %d transactions (longest %v) in %v; %d writes, %d during the pass, the longest %v",
		st.Deleted, st.Transactions, st.Longest, st.Duration, writes, writesDuring, longestWrite)
	if st.Deleted["jobs"] < before/2 || after != before+writes-st.Deleted["jobs"] {
		t.Fatalf("purged %d of %d jobs, %d left after %d writes", st.Deleted["jobs"], before, after, writes)
	}
	if st.Deleted["batches"] == 0 {
		t.Fatal("no batch purged")
	}
	if min := st.Deleted["jobs"] / stepMax; st.Transactions < min {
		t.Fatalf("%d transactions for %d jobs: steps of more than %d rows", st.Transactions, st.Deleted["jobs"], stepMax)
	}
	if writesDuring < 2 {
		t.Fatalf("%d writes answered during the pass: they waited for it", writesDuring)
	}
	// No batch is left without jobs, and none that has some went.
	var orphans, lost int
	db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM batches WHERE completed_at < ? AND NOT EXISTS
		(SELECT 1 FROM jobs WHERE jobs.batch_id = batches.id AND jobs.batch_id != '')`, ms(now.Add(-app.CompletedJobRetention))).Scan(&orphans)
	db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM jobs WHERE batch_id != '' AND NOT EXISTS
		(SELECT 1 FROM batches WHERE batches.id = jobs.batch_id)`).Scan(&lost)
	if orphans != 0 || lost != 0 {
		t.Fatalf("%d ended batches without jobs kept, %d jobs whose batch went", orphans, lost)
	}

	// The webhook history goes the same way.
	wh, err := db.DeleteWebhookHistory(ctx, now.Add(-app.WebhookRetention))
	if err != nil || wh.Deleted["events"] == 0 || wh.Deleted["events"] != wh.Deleted["webhook_deliveries"] || wh.Transactions < 2 {
		t.Fatalf("webhook history: %+v, %v", wh, err)
	}
}

// TestRetentionStopsWithItsContext: shutdown cancels the janitor's context
// and the pass ends after the step it is in, with what it did so far.
func TestRetentionStopsWithItsContext(t *testing.T) {
	if testing.Short() {
		t.Skip("grows 20,000 jobs")
	}
	// Three steps of a hundred rows each, without the step deadline: on a
	// loaded machine (or under -race, which slows SQLite tenfold) a first
	// step of the adaptive size could pass its 20 ms, be interrupted and
	// delete nothing, which is not what this test is about.
	n := 2_000
	defer func(rows int) { testStepRows = rows }(testStepRows)
	testStepRows = 100
	db, _ := mustGrow(t, n, 10)
	ctx, cancel := context.WithCancel(context.Background())
	testHookStep = func(n int, _ time.Duration) {
		if n == 3 {
			cancel()
		}
	}
	defer func() { testHookStep = nil }()
	now := time.Now().UTC()
	st, err := db.PurgeJobs(ctx, now, now)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("PurgeJobs after cancel: %v", err)
	}
	if st.Transactions != 3 || st.Deleted["jobs"] == 0 {
		t.Fatalf("stopped after %d transactions (%v), want 3", st.Transactions, st.Deleted)
	}
}

// TestSlowStepIsInterruptedAndDoneAgain: a step still running at its
// deadline is rolled back, and smaller steps after it delete its rows; the
// pass deletes exactly what it would have, with the list hours and the
// batches' bookkeeping whole; after maxInterrupts interruptions in a row
// a step runs without a deadline, so a pass always ends.
func TestSlowStepIsInterruptedAndDoneAgain(t *testing.T) {
	ctx := context.Background()
	db, _ := mustGrow(t, 3000, 10)
	now := time.Now().UTC()
	completed, failed := now.Add(-app.CompletedJobRetention), now.Add(-app.FailedJobRetention)
	var due, total int
	db.read.QueryRowContext(ctx, `SELECT count(*) FROM jobs WHERE (status = 'completed' AND completed_at < ?) OR (status = 'failed' AND completed_at < ?)`,
		ms(completed), ms(failed)).Scan(&due)
	db.read.QueryRowContext(ctx, `SELECT count(*) FROM jobs`).Scan(&total)
	if due == 0 {
		t.Fatal("nothing past retention in the grown data")
	}

	// The first maxInterrupts+2 steps outlast the deadline: maxInterrupts
	// in a row are interrupted in the middle of a statement that would run
	// for many seconds, the next runs without a deadline and ends, the one
	// after it is interrupted again (before its first statement).
	attempts, stopped := 0, 0
	testHookStatements = func(tx *Tx) {
		attempts++
		switch {
		case attempts <= maxInterrupts:
			var n int
			err := tx.QueryRowContext(ctx, `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000)
				SELECT count(*) FROM c`).Scan(&n)
			if err == nil {
				t.Errorf("step %d: a billion rows counted, not interrupted", attempts)
			} else {
				stopped++
			}
		case attempts <= maxInterrupts+2:
			time.Sleep(stepDeadline + 20*time.Millisecond)
		}
	}
	defer func() { testHookStatements = nil }()
	st, err := db.PurgeJobs(ctx, completed, failed)
	if err != nil {
		t.Fatal(err)
	}
	// (A loaded machine may interrupt a few more steps of its own.)
	if st.Interrupted < maxInterrupts+1 || stopped != maxInterrupts {
		t.Errorf("%d steps interrupted (%d in a statement), want %d or more (%d in a row, then one after the step without a deadline)",
			st.Interrupted, stopped, maxInterrupts+1, maxInterrupts)
	}
	if st.Longest < stepDeadline+20*time.Millisecond {
		t.Errorf("the longest step took %v: the one without a deadline slept longer", st.Longest)
	}
	var left, stillDue int
	db.read.QueryRowContext(ctx, `SELECT count(*) FROM jobs`).Scan(&left)
	db.read.QueryRowContext(ctx, `SELECT count(*) FROM jobs WHERE (status = 'completed' AND completed_at < ?) OR (status = 'failed' AND completed_at < ?)`,
		ms(completed), ms(failed)).Scan(&stillDue)
	if st.Deleted["jobs"] != due || left != total-due || stillDue != 0 {
		t.Fatalf("deleted %d of %d jobs due (%d left of %d, %d still due)", st.Deleted["jobs"], due, left, total, stillDue)
	}
	// The interrupted steps' bookkeeping went with them: the list hours
	// count the jobs left, and every batch's version counts its jobs' changes.
	for _, q := range []string{
		`SELECT team_id, created_at / 3600000, COUNT(*) FROM jobs GROUP BY 1, 2 EXCEPT SELECT team_id, slot, n FROM job_list_hours`,
		`SELECT team_id, slot, n FROM job_list_hours EXCEPT SELECT team_id, created_at / 3600000, COUNT(*) FROM jobs GROUP BY 1, 2`,
		`SELECT id FROM batches b WHERE states IS NOT NULL AND length(states) - length(replace(states, '-', '')) !=
			total - (SELECT count(*) FROM jobs WHERE batch_id = b.id AND batch_id != '')`,
	} {
		var bad int
		if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM (`+q+`)`).Scan(&bad); err != nil || bad != 0 {
			t.Fatalf("%d rows of %s (%v)", bad, q, err)
		}
	}
}
