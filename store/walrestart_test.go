package store

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"folio/app"
)

// TestPassStartsTheWALOver runs job retention while another goroutine
// keeps writing, as requests do, so that a write always commits between a
// reader's checkpoint and the next write and SQLite never starts the WAL
// over by itself. The pass must make it start over whenever it grew past
// restartFrames: the WAL file (which keeps the size of its longest use)
// stays a few times that long, where without it the pass's pages pile up.
func TestPassStartsTheWALOver(t *testing.T) {
	if testing.Short() {
		t.Skip("grows 20,000 jobs")
	}
	ctx := context.Background()
	n := 20_000
	if raceEnabled {
		n = 4_000
		defer func(rows int) { testStepRows = rows }(testStepRows)
		testStepRows = 100
	}
	defer func(f int) { restartFrames = f }(restartFrames)
	restartFrames = 64
	db, res := mustGrow(t, n, 10)
	// Start from an empty WAL: the growth's own pages are not the pass's.
	if _, err := db.write.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			j := &app.Job{ID: app.NewID("job"), TeamID: res.BigTeamID, TemplateID: res.TemplateIDs[0], Status: app.StatusPending, Format: "pdf",
				Priority: app.PrioritySingle, CreatedAt: time.Now().UTC()}
			if err := db.CreateJobs(ctx, nil, j); err != nil {
				t.Errorf("write %d: %v", i, err)
				return
			}
			time.Sleep(2 * time.Millisecond) // requests come with gaps
		}
	})
	now := time.Now().UTC()
	st, err := db.PurgeJobs(ctx, now.Add(-app.CompletedJobRetention), now.Add(-app.FailedJobRetention))
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(db.Path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	frames := fi.Size() / 4120
	t.Logf("%d jobs deleted in %d transactions, %d restarts (%d forced), longest WAL %d frames", st.Deleted["jobs"], st.Transactions, st.Restarts, st.Forced, frames)
	// Measured: 64 restarts and 7,110 frames at most; 40,248 frames
	// without them (past the writer's own mark, writerCheckpointPages).
	if st.Restarts == 0 || frames >= writerCheckpointPages/2 {
		t.Errorf("%d restarts, the WAL reached %d frames: the pass did not start it over", st.Restarts, frames)
	}
}

// TestStepLeavesTheRestartToARequest: after a checkpoint that settled
// the WAL while requests were writing, the next step waits for a
// request's write (which starts the WAL over and pays its header's
// fsync) before it begins, for up to restartWait.
func TestStepLeavesTheRestartToARequest(t *testing.T) {
	ctx := context.Background()
	db, res := mustGrow(t, 100, 2)
	defer func(d time.Duration) { restartWait = d }(restartWait)
	restartWait = time.Minute // the request's write ends the wait, not this
	s := &stepper{db: db}
	s.restartPending, s.restartAt = true, db.commits.Load()
	wrote := make(chan uint64, 1)
	go func() {
		time.Sleep(20 * time.Millisecond)
		j := &app.Job{ID: app.NewID("job"), TeamID: res.BigTeamID, TemplateID: res.TemplateIDs[0], Status: app.StatusPending, Format: "pdf",
			Priority: app.PrioritySingle, CreatedAt: time.Now().UTC()}
		if err := db.CreateJobs(ctx, nil, j); err != nil {
			t.Error(err)
		}
		wrote <- db.commits.Load()
	}()
	at := s.restartAt
	s.leaveRestart(ctx)
	if db.commits.Load() == at {
		t.Fatal("the step went on before any other write")
	}
	<-wrote
	if s.restartPending {
		t.Error("the wait is not cleared")
	}
	// Nothing pending: no wait.
	done := make(chan struct{})
	go func() { s.leaveRestart(ctx); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("waited with no settled checkpoint")
	}
}
