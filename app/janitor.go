package app

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"
)

// Sweeper is one janitor task: retention of files and records, purging of
// deleted accounts.
type Sweeper func(ctx context.Context) error

// RunJanitor runs every sweeper at start and then every interval until ctx
// ends. A failing sweeper is logged and tried again next time.
func RunJanitor(ctx context.Context, logger *slog.Logger, every time.Duration, sweepers ...Sweeper) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		for _, sw := range sweepers {
			if err := sw(ctx); err != nil && ctx.Err() == nil {
				logger.Error("janitor", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// TaskLock lets one replica of several run a periodic task at a time
// (PostgreSQL: an advisory lock and the time the task last began).
type TaskLock interface {
	// RunTask runs fn unless another process is running the task called
	// name or began it less than gap before now, and reports whether fn
	// ran.
	RunTask(ctx context.Context, name string, gap time.Duration, now time.Time, fn func(context.Context) error) (bool, error)
}

// OneReplica is one janitor pass of sweepers run as the task called name
// of lock, so that of several replicas, each with its janitor ticking
// every interval, one runs the pass per interval and never two at once.
// The sweepers log their counts as they do alone; the pass logs its
// duration, or that another replica had it.
func OneReplica(lock TaskLock, name string, every time.Duration, logger *slog.Logger, now func() time.Time, sweepers ...Sweeper) Sweeper {
	return func(ctx context.Context) error {
		start := time.Now()
		var errs []error
		// A tenth of the interval to spare: the replica whose ticker ran
		// the last pass comes back a little less than an interval later.
		ran, err := lock.RunTask(ctx, name, every-every/10, now(), func(ctx context.Context) error {
			for _, sw := range sweepers {
				if err := sw(ctx); err != nil && ctx.Err() == nil {
					errs = append(errs, err)
				}
			}
			return nil
		})
		switch {
		case err != nil:
			return err
		case !ran:
			logger.Debug(name + ": skipped, another replica ran it or runs it now")
			return nil
		}
		logger.Info(name+" pass", "sweepers", len(sweepers), "errors", len(errs), "duration_ms", time.Since(start).Milliseconds())
		return errors.Join(errs...)
	}
}

// SweepStats describe one maintenance pass (docs/performance.md, Growth).
// A pass deletes in short write transactions, each its own call of the
// store's writer, so the writes of requests and jobs queued meanwhile go
// between them instead of waiting for the whole pass.
type SweepStats struct {
	Deleted      map[string]int // rows by table
	Transactions int            // write transactions the pass took
	Longest      time.Duration  // the longest of them, from its first statement to its commit
	Slow         int            // those longer than SlowStep
	Interrupted  int            // steps stopped at their deadline, rolled back and done again smaller
	Restarts     int            // checkpoints after which the next write started the WAL over
	Forced       int            // of them, those run in the writer's turn (a WAL past half the writer's mark)
	Duration     time.Duration  // the whole pass
}

// SlowStep is how long a maintenance transaction may hold the writer
// (issue 19's target); the steps aim at less than half of it.
const SlowStep = 50 * time.Millisecond

// Count records a transaction of the pass that took d and deleted n rows
// of table.
func (s *SweepStats) Count(table string, n int, d time.Duration) {
	if s.Deleted == nil {
		s.Deleted = map[string]int{}
	}
	s.Deleted[table] += n
	s.Hold(d)
}

// Hold records a transaction or other hold of the writer that took d.
func (s *SweepStats) Hold(d time.Duration) {
	s.Transactions++
	s.Longest = max(s.Longest, d)
	if d > SlowStep {
		s.Slow++
	}
}

// Total is the number of rows deleted.
func (s SweepStats) Total() int {
	n := 0
	for _, k := range s.Deleted {
		n += k
	}
	return n
}

// Log writes the pass's line, its counts and durations, when it deleted
// anything or failed.
func (s SweepStats) Log(logger *slog.Logger, msg string, err error) {
	if s.Total() == 0 && err == nil {
		return
	}
	args := []any{"deleted", s.Total()}
	tables := make([]string, 0, len(s.Deleted))
	for t := range s.Deleted {
		tables = append(tables, t)
	}
	slices.Sort(tables)
	for _, t := range tables {
		args = append(args, t, s.Deleted[t])
	}
	args = append(args, "transactions", s.Transactions, "longest_ms", float64(s.Longest.Microseconds())/1000,
		"over_50ms", s.Slow, "interrupted", s.Interrupted, "wal_restarts", s.Restarts, "wal_restarts_forced", s.Forced, "duration_ms", s.Duration.Milliseconds())
	if err != nil {
		args = append(args, "err", err)
	}
	logger.Info(msg, args...)
}
