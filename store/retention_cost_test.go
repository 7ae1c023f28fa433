package store

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"folio/app"
)

func cpu() time.Duration {
	var r syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

// TestRetentionCost (a measurement, run with FOLIO_MEASURE_RETENTION=1; docs/performance.md): the job retention of a grown history, with the
// bookkeeping once a step and a row at a time (the triggers), alternately.
func TestRetentionCost(t *testing.T) {
	if os.Getenv("FOLIO_MEASURE_RETENTION") == "" {
		t.Skip()
	}
	ctx := context.Background()
	for round := range 2 {
		for _, perRow := range []bool{true, false} {
			db, _ := mustGrow(t, 100_000, 100)
			now := time.Now().UTC()
			s := db.newStepper()
			c0, t0 := cpu(), time.Now()
			for _, p := range []struct {
				status string
				before time.Time
			}{{app.StatusCompleted, now.Add(-app.CompletedJobRetention)}, {app.StatusFailed, now.Add(-app.FailedJobRetention)}} {
				args := []any{p.status, ms(p.before)}
				var err error
				if perRow {
					err = s.deletePicked(ctx, "jobs", `SELECT rowid FROM jobs WHERE status = ? AND completed_at < ? LIMIT ?`,
						`DELETE FROM jobs WHERE rowid IN (SELECT value FROM json_each(?)) AND +status = ? AND +completed_at < ?`, args, warmJobs...)
				} else {
					err = s.deletePickedBy(ctx, "jobs", `SELECT rowid FROM jobs WHERE status = ? AND completed_at < ? LIMIT ?`, args,
						func(ctx context.Context, tx *Tx, list string) (int, error) {
							return purgeJobStep(ctx, tx, nil, list, args...)
						}, warmJobs...)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			st := s.done(t0)
			t.Logf("round %d perRow=%v: deleted %d jobs in %d steps, %v wall, %v CPU (this process), longest %v, over 50 ms %d",
				round, perRow, st.Deleted["jobs"], st.Transactions, time.Since(t0).Round(time.Millisecond), (cpu() - c0).Round(time.Millisecond), st.Longest, st.Slow)
			db.Close()
		}
	}
}
