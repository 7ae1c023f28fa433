package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"time"

	"folio/app"
)

// Maintenance deletes in steps (docs/performance.md, Growth). One DELETE
// over a long history held SQLite's only write connection for minutes
// (issue 19): every request that writes waited behind it, and shutdown
// with it. Each step here is a transaction of its own through the writer,
// deleting at most stepRows rows found through an index, so the writes
// queued meanwhile run between two steps; the context is checked between
// steps, so shutdown stops a pass within one step.

// Bounds of a step's size: it starts at stepFirst rows and doubles or
// halves to take about stepTarget (historyStepTarget for the webhook
// history).
const (
	stepFirst  = 500
	stepMin    = 50
	stepMax    = 5000
	stepTarget = 10 * time.Millisecond
	// A history step's rows sit in five indexes whose pages are scattered
	// over every subscription and team, so its commit writes more pages
	// for the same time of statements than a jobs step does: on a 1M-job
	// pass at 10 ms, 7 of 657 history steps held the writer over 50 ms
	// (all of it in the commit) against none of 8,520 jobs steps; at
	// 5 ms none of 1,775 (docs/performance.md, fifth session).
	historyStepTarget = 5 * time.Millisecond
)

// targetFor is the time a step deleting from table aims at.
func targetFor(table string) time.Duration {
	if table == "events" || table == "webhook_deliveries" {
		return historyStepTarget
	}
	return stepTarget
}

// testHookStatements, when set, runs at the start of each step's
// transaction, before its statements and within its deadline.
var testHookStatements func(tx *Tx)

// testHookStep, when set, is told the number of each step as it ends and
// how long its transaction took.
var testHookStep func(n int, d time.Duration)

// stepper runs the steps of one pass and keeps its figures.
type stepper struct {
	db    *DB
	stats app.SweepStats
	rows  int // the next step's size
	// While steps are observed: the current step's phases, and how long
	// its rows took to pick and warm on a reader before it began.
	phases *stepPhases
	warmed time.Duration
	// interrupts counts the steps interrupted in a row (stepDeadline).
	interrupts int
	// wal is what the last checkpoint after a step found.
	wal WALState
	// restartPending says a checkpoint after a step settled the WAL with
	// requests writing, at the writer's commit count restartAt
	// (leaveRestart).
	restartPending bool
	restartAt      uint64
}

// stepPhases notes how long each part of a step's statements took, for
// the observer (nil: not observed; its methods then do nothing).
type stepPhases struct {
	b    []byte
	last time.Time
}

// mark ends the phase begun at the previous mark (or the step's start).
func (p *stepPhases) mark(name string) {
	if p == nil {
		return
	}
	now := time.Now()
	p.b = fmt.Appendf(p.b, "%s %.1fms ", name, float64(now.Sub(p.last).Microseconds())/1000)
	p.last = now
}

// note adds a figure to the step's detail.
func (p *stepPhases) note(format string, args ...any) {
	if p == nil {
		return
	}
	p.b = fmt.Appendf(p.b, format+" ", args...)
}

// StepTime is one maintenance step or backfill chunk: what it was (the
// table a step deleted from, or "backfill"), the rows it deleted or
// covered, how long it held the writer (from its first statement to the
// end of the commit of the transaction it ran in, which may hold the
// calls of requests queued beside it: the writer groups them) and how
// long its own statements took.
//
// The other fields explain a slow step: when it ended, the writer
// thread's CPU time during the statements, the blocks it read from
// storage, the times the kernel switched it out, the garbage collections
// that ran meanwhile, and the step's phases (Detail).
type StepTime struct {
	Kind       string
	Rows       int
	Held       time.Duration
	Statements time.Duration
	Ended      time.Time
	CPU        time.Duration
	InBlocks   int64
	Preempted  int64
	GCs        uint64
	Detail     string
	// Interrupted says the step was stopped at its deadline and rolled
	// back (its rows are deleted by a smaller step after it).
	Interrupted bool
	// Kernel is what the writer's thread was doing, sampled every 2 ms
	// once the step (its statements and commit) ran past 25 ms: "+30ms D
	// pwrite64(fd 7) [frame<caller<...]" — its scheduler state (R, S, D),
	// its system call or "user", and the top of its kernel stack.
	Kernel []string
	// WAL is what the checkpoint before the step found, and After what
	// the one after it found.
	WAL, After WALState
}

var stepObserver atomic.Pointer[func(StepTime)]

// ObserveSteps calls fn after every maintenance step and backfill chunk of
// every database in the process (the growth benchmark's distribution of
// step durations) until stop is called. fn must be quick and safe for
// concurrent use.
func ObserveSteps(fn func(StepTime)) (stop func()) {
	stepObserver.Store(&fn)
	return func() { stepObserver.CompareAndSwap(&fn, nil) }
}

func observeStep(st StepTime) {
	if fn := stepObserver.Load(); fn != nil {
		(*fn)(st)
	}
}

func observing() bool { return stepObserver.Load() != nil }

// gcCycles is the number of garbage collections the process has completed.
func gcCycles() uint64 {
	m := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(m)
	if m[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return m[0].Value.Uint64()
}

// testStepRows, when set (tests), fixes every step's size.
var testStepRows = 0

func (db *DB) newStepper() *stepper {
	if testStepRows > 0 {
		return &stepper{db: db, rows: testStepRows}
	}
	return &stepper{db: db, rows: stepFirst}
}

// stepDeadline bounds a step's statements: past it the step is
// interrupted and rolled back, and its rows are deleted by a step half its
// size. Warming reads most of a step's pages beforehand, but not all:
// deleting keys rebalances index pages with neighbours nobody read, and
// at 10M jobs with part of the database out of the page cache a few steps'
// DELETE read hundreds of pages from the disk while it held the writer (up
// to 90 ms of statements with 7 ms of CPU). Interrupted, such a step leaves
// the pages it read in the cache for its smaller retry, and the writer is
// held for the deadline and the rollback only.
const stepDeadline = 20 * time.Millisecond

// maxInterrupts is how many times in a row a step may be interrupted; the
// next attempt runs without a deadline, so a pass always progresses.
const maxInterrupts = 5

// restartWait is how long a step waits for a request to start the WAL
// over (leaveRestart).
var restartWait = 20 * time.Millisecond

// leaveRestart waits, up to restartWait, for another write after a
// settled checkpoint when requests were writing beside the pass: the
// write that starts the WAL over syncs its header (an fsync in that
// write's commit), and a step should not be the one to pay it. At 10M
// jobs one such fsync took 320 ms in a step's commit while the disk was
// busy (docs/performance.md, eighth session); the requests' writes pay
// the same sync after every checkpoint of an idle moment anyway. With no
// request writing, the step goes on at once and starts the WAL over
// itself.
func (s *stepper) leaveRestart(ctx context.Context) {
	if !s.restartPending {
		return
	}
	at := s.restartAt
	s.restartPending = false
	deadline := time.Now().Add(restartWait)
	for s.db.commits.Load() == at && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
}

// restartWAL makes the WAL start over after a step that left it long
// and wholly copied when settle could not (DB.restartWAL). Its hold of
// the writer counts as one of the pass's transactions.
func (s *stepper) restartWAL(ctx context.Context) {
	before := s.wal
	w, held, err := s.db.restartWAL(ctx)
	if err != nil {
		return // the next step's checkpoint tries again
	}
	s.stats.Hold(held)
	s.stats.Restarts++
	s.stats.Forced++
	if observing() {
		observeStep(StepTime{Kind: "wal restart", Held: held, Statements: held, Ended: time.Now(), WAL: before, After: w})
	}
}

// run runs fn, which deletes at most limit rows of table and returns how
// many, in one write transaction, and adapts the next step's size to how
// long this one took. fn's statements run with ctx bounded by the step's
// deadline; an interrupted step returns 0 rows and a nil error, and the
// caller picks its rows again.
func (s *stepper) run(ctx context.Context, table string, fn func(ctx context.Context, tx *Tx, limit int) (int, error)) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	n, limit := 0, s.rows
	var t0, t1 time.Time
	watch := observing()
	var usage threadUsage
	var gcs uint64
	s.phases = nil
	sctx, cancel := ctx, context.CancelFunc(func() {})
	if s.interrupts < maxInterrupts && testStepRows == 0 {
		sctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	s.leaveRestart(ctx)
	commits := s.db.commits.Load()
	s.db.stepping.Lock() // no loop checkpoint during the step (checkpoint.go)
	ended, err := s.db.txAlone(ctx, func(tx *Tx) error {
		t0 = time.Now() // the transaction has begun: the time to its commit is the writer's
		if s.interrupts < maxInterrupts && testStepRows == 0 {
			// The deadline starts with the transaction, not with the wait
			// for the writer.
			stop := time.AfterFunc(stepDeadline, cancel)
			defer stop.Stop()
		}
		tx.stepCtx = sctx
		if testHookStatements != nil {
			testHookStatements(tx)
		}
		if watch {
			s.phases = &stepPhases{last: t0}
			gcs = gcCycles()
			// Measured up to the end of the commit or rollback (Tx.endStep).
			stop := lockThreadUsage()
			tx.stepEnd = func() { usage = stop() }
		}
		var err error
		n, err = fn(sctx, tx, limit)
		t1 = time.Now()
		return err
	})
	s.db.stepping.Unlock()
	interrupted := err != nil && sctx.Err() != nil && ctx.Err() == nil
	if err != nil && !interrupted {
		return 0, err
	}
	d := ended.Sub(t0)
	if interrupted {
		n = 0
		s.interrupts++
		s.stats.Interrupted++
	} else {
		s.interrupts = 0
	}
	s.stats.Count(table, n, d)
	// Copy the step's pages into the database file before the next step,
	// on a reader connection: the writer serves requests meanwhile, and the
	// next write starts the WAL over (checkpoint.go). Back to back, steps
	// grew the WAL by gigabytes at 10M jobs.
	before := s.wal
	restart := false
	if !interrupted {
		var settled bool
		s.wal, settled = s.db.settle(ctx)
		if settled && s.wal.Frames > 0 {
			s.stats.Restarts++
			// Requests wrote beside the step: leave the restart to them.
			if now := s.db.commits.Load(); now-commits > 1 {
				s.restartPending, s.restartAt = true, now
			}
		}
		restart = !settled && s.wal.Frames >= writerCheckpointPages/2 && s.wal.Backfilled == s.wal.Frames && s.wal.Err == ""
	}
	if watch {
		st := StepTime{Kind: table, Rows: n, Held: d, Statements: t1.Sub(t0), Ended: ended,
			CPU: usage.cpu, InBlocks: usage.inBlocks, Preempted: usage.preempted, GCs: gcCycles() - gcs, Interrupted: interrupted,
			Kernel: usage.samples(), WAL: before, After: s.wal}
		if s.phases != nil {
			s.phases.note("picked+warmed %.1fms", float64(s.warmed.Microseconds())/1000)
			st.Detail = strings.TrimSpace(string(s.phases.b))
		}
		observeStep(st)
	}
	if restart {
		s.restartWAL(ctx)
	}
	if testHookStep != nil {
		testHookStep(s.stats.Transactions, d)
	}
	target := targetFor(table)
	switch {
	case testStepRows > 0:
		s.rows = testStepRows
	case interrupted:
		s.rows = max(limit/2, stepMin)
	case d < target/2 && n == limit:
		s.rows = min(limit*2, stepMax)
	case d > target*3/2:
		s.rows = max(limit/2, stepMin)
	}
	return n, nil
}

// Warming (issue 19). A step's rows are found in the order they ended, so
// the pages of the table and of most indexes it touches are neighbours;
// but the primary keys are random ids, and deleting a row deletes its key
// from a page anywhere in that index. On a cold cache (the janitor's first
// pass after a start) each of those pages was a disk read made while the
// step held the writer: a third of the steps over 1M jobs took more than
// 50 ms. deletePicked therefore picks a step's rows on a reader and reads
// the pages its DELETE will need there, with queries that walk the same
// indexes (warm*, each given the JSON array of the picked rowids); the
// write transaction then finds them in the page cache.
var (
	warmJobs = []string{
		// The step's rows, once (their later columns sit past the
		// variables, on overflow pages when those are long), then every
		// index and table their DELETE writes to: the primary key and
		// job_files' (random ids before time-ordered ones) and its
		// segments' (docseg.go), the five
		// team-prefixed indexes (a step's rows are neighbours in time but
		// spread over every team: at 10M jobs with 1,000 teams, 3 of
		// 91,779 steps spent over 50 ms in their statements without
		// these), the list hours and the batches.
		`WITH r AS MATERIALIZED (SELECT id, team_id, status, template_id, batch_id, created_at, completed_at
			FROM jobs WHERE rowid IN (SELECT value FROM json_each(?1)))
		SELECT (SELECT count(*) FROM jobs WHERE id IN (SELECT id FROM r))
		+ (SELECT count(*) FROM jobs WHERE batch_id != '' AND batch_id IN (SELECT batch_id FROM r WHERE batch_id != ''))
		+ (SELECT count(*) FROM jobs INDEXED BY jobs_team_created WHERE (team_id, created_at) IN (SELECT team_id, created_at FROM r))
		+ (SELECT count(*) FROM jobs INDEXED BY jobs_team_status WHERE (team_id, status, created_at) IN (SELECT team_id, status, created_at FROM r))
		+ (SELECT count(*) FROM jobs INDEXED BY jobs_team_template WHERE (team_id, template_id, created_at) IN
			(SELECT team_id, template_id, created_at FROM r))
		+ (SELECT count(*) FROM jobs INDEXED BY jobs_team_status_template WHERE (team_id, status, template_id, created_at) IN
			(SELECT team_id, status, template_id, created_at FROM r))
		+ (SELECT count(*) FROM jobs INDEXED BY jobs_team_ended WHERE (team_id, status, completed_at) IN (SELECT team_id, status, completed_at FROM r))
		+ (SELECT count(*) FROM job_files WHERE job_id IN (SELECT id FROM r) AND substr(data, -1) IS NOT NULL)
		+ (SELECT count(*) FROM job_files INDEXED BY job_files_seg WHERE seg IS NOT NULL AND (seg, rowid) IN
			(SELECT seg, rowid FROM job_files WHERE job_id IN (SELECT id FROM r) AND seg IS NOT NULL))
		+ (SELECT count(*) FROM job_list_hours WHERE (team_id, slot) IN (SELECT team_id, created_at / 3600000 FROM r))
		+ (SELECT count(*) FROM batches WHERE id IN (SELECT batch_id FROM r WHERE batch_id != ''))`,
	}
	warmEvents = []string{
		`SELECT count(*) FROM events WHERE id IN (SELECT id FROM events WHERE rowid IN (SELECT value FROM json_each(?1)))`,
	}
	warmDeliveries = []string{
		`SELECT count(*) FROM webhook_deliveries WHERE id IN
			(SELECT id FROM webhook_deliveries WHERE rowid IN (SELECT value FROM json_each(?1)))`,
		`SELECT count(*) FROM webhook_deliveries WHERE (event_id, subscription_id) IN
			(SELECT event_id, subscription_id FROM webhook_deliveries WHERE rowid IN (SELECT value FROM json_each(?1)))`,
		// A step's deliveries are neighbours in time but spread over
		// every subscription and team, so these two indexes' pages are
		// as scattered as the primary key's (a 1M-job pass without
		// them: statements of a step up to 45 ms).
		`SELECT count(*) FROM webhook_deliveries WHERE (subscription_id, created_at) IN
			(SELECT subscription_id, created_at FROM webhook_deliveries WHERE rowid IN (SELECT value FROM json_each(?1)))`,
		`SELECT count(*) FROM webhook_deliveries WHERE (team_id, attempted_at, status) IN
			(SELECT team_id, attempted_at, status FROM webhook_deliveries WHERE rowid IN (SELECT value FROM json_each(?1)))`,
	}
)

// deletePicked deletes in steps the rows that pick (run on a reader, its
// last argument the step's row limit) selects by rowid. Each step warms the
// pages with the warm queries, then deletes the picked rows that still
// match (del: the JSON array of rowids, then args) in one write
// transaction (del's conditions other than the rowid must carry a unary +,
// or SQLite may walk their index's whole range instead of the rowids).
// It ends when pick finds fewer rows than the limit.
func (s *stepper) deletePicked(ctx context.Context, table, pick, del string, args []any, warm ...string) error {
	return s.deletePickedBy(ctx, table, pick, args, func(ctx context.Context, tx *Tx, list string) (int, error) {
		res, err := tx.ExecContext(ctx, del, append([]any{list}, args...)...)
		if err != nil {
			return 0, err
		}
		k, _ := res.RowsAffected()
		return int(k), nil
	}, warm...)
}

// deletePickedBy is deletePicked with the step's delete a function, given
// the write transaction and the JSON array of the picked rowids.
func (s *stepper) deletePickedBy(ctx context.Context, table, pick string, args []any, del func(ctx context.Context, tx *Tx, list string) (int, error), warm ...string) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		limit := s.rows
		picked := time.Now()
		rows, err := s.db.read.QueryContext(ctx, pick, append(args[:len(args):len(args)], limit)...)
		if err != nil {
			return err
		}
		var ids []int64
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		list, _ := json.Marshal(ids)
		for _, q := range warm {
			var n int
			if err := s.db.read.QueryRowContext(ctx, q, string(list)).Scan(&n); err != nil {
				return err
			}
		}
		s.warmed = time.Since(picked)
		k, err := s.run(ctx, table, func(ctx context.Context, tx *Tx, _ int) (int, error) { return del(ctx, tx, string(list)) })
		if err != nil {
			return err
		}
		if k == 0 && s.interrupts > 0 {
			continue // interrupted: pick again, fewer
		}
		if len(ids) < limit {
			return nil
		}
	}
}

func (s *stepper) done(start time.Time) app.SweepStats {
	s.stats.Duration = time.Since(start)
	if s.stats.Deleted == nil {
		s.stats.Deleted = map[string]int{}
	}
	return s.stats
}

// PurgeJobs deletes ended job records past their retention, and ended
// batches whose jobs are all gone, in steps.
func (db *DB) PurgeJobs(ctx context.Context, completedBefore, failedBefore time.Time) (app.SweepStats, error) {
	start := time.Now()
	s := db.newStepper()
	for _, p := range []struct {
		status string
		before time.Time
	}{{app.StatusCompleted, completedBefore}, {app.StatusFailed, failedBefore}} {
		args := []any{p.status, ms(p.before)}
		if err := s.deletePickedBy(ctx, "jobs", `SELECT rowid FROM jobs WHERE status = ? AND completed_at < ? LIMIT ?`, args,
			func(ctx context.Context, tx *Tx, list string) (int, error) {
				return purgeJobStep(ctx, tx, s.phases, list, args...)
			}, warmJobs...); err != nil {
			return s.done(start), err
		}
	}
	err := db.purgeBatches(ctx, s, completedBefore)
	return s.done(start), err
}

// purgeBatches deletes the batches that ended before a time and have no
// job left. It walks them in the order they ended, a window at a time:
// the window is read on a reader, and a step deletes those of it whose
// jobs are gone (the jobs_batch lookup requires batch_id not empty to use
// the partial index). Batches that still have jobs (failed ones are kept
// longer) are passed over.
func (db *DB) purgeBatches(ctx context.Context, s *stepper, before time.Time) error {
	var at, rowid int64 = -1, 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		from, fromRow := at, rowid
		rows, err := db.read.QueryContext(ctx, `SELECT rowid, id, completed_at FROM batches WHERE status != 'processing' AND completed_at < ?
			AND (completed_at, rowid) > (?, ?) ORDER BY completed_at, rowid LIMIT ?`, ms(before), at, rowid, s.rows)
		if err != nil {
			return err
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&rowid, &id, &at); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		list, _ := json.Marshal(ids)
		k, err := s.run(ctx, "batches", func(ctx context.Context, tx *Tx, _ int) (int, error) {
			res, err := tx.ExecContext(ctx, `DELETE FROM batches WHERE id IN (SELECT value FROM json_each(?)) AND status != 'processing'
				AND NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.batch_id = batches.id AND jobs.batch_id != '')`, string(list))
			if err != nil {
				return 0, err
			}
			n, _ := res.RowsAffected()
			return int(n), nil
		})
		if err != nil {
			return err
		}
		if k == 0 && s.interrupts > 0 {
			at, rowid = from, fromRow // interrupted: the same window again, smaller
		}
	}
}

// DeleteWebhookHistory removes dispatched events and ended (successful or
// failed) deliveries created before a time, in steps.
func (db *DB) DeleteWebhookHistory(ctx context.Context, before time.Time) (app.SweepStats, error) {
	start := time.Now()
	s := db.newStepper()
	err := s.deletePicked(ctx, "events", `SELECT rowid FROM events WHERE created_at < ? AND dispatched = 1 LIMIT ?`,
		`DELETE FROM events WHERE rowid IN (SELECT value FROM json_each(?)) AND +created_at < ? AND +dispatched = 1`,
		[]any{ms(before)}, warmEvents...)
	if err == nil {
		err = s.deletePicked(ctx, "webhook_deliveries", `SELECT rowid FROM webhook_deliveries WHERE created_at < ? AND status <> 'pending' LIMIT ?`,
			`DELETE FROM webhook_deliveries WHERE rowid IN (SELECT value FROM json_each(?)) AND +created_at < ? AND +status <> 'pending'`,
			[]any{ms(before)}, warmDeliveries...)
	}
	return s.done(start), err
}

// purgeJobStep deletes the picked jobs that are still past their
// retention (args: status, completed before) and does the bookkeeping of
// the delete triggers on jobs once for all of them (migration 0022): the
// triggers skip while step_bookkeeping holds a row, which this
// transaction inserts before its DELETE and deletes before it commits, so
// no other transaction sees it. One grouped UPDATE (and DELETE of emptied
// hours) of job_list_hours, one UPDATE of the batches the rows were in,
// instead of three statements a row.
//
// p, when not nil, is told the time of each part and what it touched.
func purgeJobStep(ctx context.Context, tx *Tx, p *stepPhases, list string, args ...any) (int, error) {
	if _, err := tx.ExecContext(ctx, `INSERT INTO step_bookkeeping (on_step) VALUES (1)`); err != nil {
		return 0, err
	}
	rows, err := tx.QueryContext(ctx, `DELETE FROM jobs WHERE rowid IN (SELECT value FROM json_each(?)) AND +status = ? AND +completed_at < ?
		RETURNING team_id, created_at / 3600000, batch_id, batch_seq`, append([]any{list}, args...)...)
	if err != nil {
		return 0, err
	}
	type hour struct {
		Team string `json:"t"`
		Slot int64  `json:"s"`
		N    int    `json:"n"`
	}
	hours := map[[2]any]*hour{}
	var hourList []*hour
	batches := map[string][]int64{} // batch -> the seqs of its deleted jobs (-1: none)
	var batchIDs []string
	n := 0
	for rows.Next() {
		var team, batch string
		var slot int64
		var seq sql.NullInt64
		if err := rows.Scan(&team, &slot, &batch, &seq); err != nil {
			rows.Close()
			return 0, err
		}
		n++
		k := [2]any{team, slot}
		if h := hours[k]; h != nil {
			h.N++
		} else {
			h = &hour{team, slot, 1}
			hours[k] = h
			hourList = append(hourList, h)
		}
		if batch != "" {
			if _, ok := batches[batch]; !ok {
				batchIDs = append(batchIDs, batch)
			}
			s := int64(-1)
			if seq.Valid {
				s = seq.Int64
			}
			batches[batch] = append(batches[batch], s)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	p.mark("delete")
	p.note("(hours %d, batches %d)", len(hourList), len(batchIDs))
	if len(hourList) > 0 {
		hl, _ := json.Marshal(hourList)
		if _, err := tx.ExecContext(ctx, `UPDATE job_list_hours SET n = n - json_extract(h.value, '$.n') FROM json_each(?1) h
			WHERE job_list_hours.team_id = json_extract(h.value, '$.t') AND job_list_hours.slot = json_extract(h.value, '$.s')`, string(hl)); err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM job_list_hours WHERE (team_id, slot) IN
			(SELECT json_extract(value, '$.t'), json_extract(value, '$.s') FROM json_each(?1)) AND +n <= 0`, string(hl)); err != nil {
			return 0, err
		}
	}
	p.mark("hours")
	if len(batchIDs) > 0 {
		if err := markBatchesDeleted(ctx, tx, batchIDs, batches); err != nil {
			return 0, err
		}
	}
	p.mark("batches")
	if _, err := tx.ExecContext(ctx, `DELETE FROM step_bookkeeping`); err != nil {
		return 0, err
	}
	return n, nil
}

// markBatchesDeleted does for the batches of a step's deleted jobs what
// the trigger batch_job_delete does a row: the version rises by one per
// deleted job and each job's character in states becomes '-' (states
// NULL, a NULL seq or one past its end leave states as they are).
func markBatchesDeleted(ctx context.Context, tx *Tx, ids []string, seqs map[string][]int64) error {
	idList, _ := json.Marshal(ids)
	rows, err := tx.QueryContext(ctx, `SELECT id, states FROM batches WHERE id IN (SELECT value FROM json_each(?))`, string(idList))
	if err != nil {
		return err
	}
	type change struct {
		ID     string  `json:"id"`
		K      int     `json:"k"`
		States *string `json:"s"`
	}
	var changes []change
	for rows.Next() {
		var id string
		var states sql.NullString
		if err := rows.Scan(&id, &states); err != nil {
			rows.Close()
			return err
		}
		c := change{ID: id, K: len(seqs[id])}
		if states.Valid {
			b := []byte(states.String)
			for _, s := range seqs[id] {
				if s >= 0 && s < int64(len(b)) {
					b[s] = '-'
				}
			}
			st := string(b)
			c.States = &st
		}
		changes = append(changes, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(changes) == 0 {
		return nil
	}
	cl, _ := json.Marshal(changes)
	_, err = tx.ExecContext(ctx, `UPDATE batches SET version = version + json_extract(c.value, '$.k'), states = json_extract(c.value, '$.s')
		FROM json_each(?) c WHERE batches.id = json_extract(c.value, '$.id')`, string(cl))
	return err
}
