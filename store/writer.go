package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"time"
)

// tx runs fn in a write transaction and returns once it is committed.
// Calls that wait while another transaction runs are written together
// (docs/decisions.md, Storage): one SQLite transaction, each call in a
// savepoint of its own, so each still commits or rolls back alone, while
// the pages they share (index leaves, counters) reach the WAL once.
//
// Until the writer starts fn, the call waits only as long as ctx allows:
// it returns ctx.Err() and fn never runs. Once fn has started it runs to
// the end and tx returns its outcome, whatever ctx does meanwhile (see
// Tx: interrupting it would undo other callers' writes).
func (db *DB) tx(ctx context.Context, fn func(*Tx) error) error {
	return db.send(&writeReq{ctx: ctx, fn: fn, done: make(chan writeResult, 1)})
}

// txAlone is tx in a transaction of fn's own, never grouped with other
// calls: a maintenance step or backfill chunk (maintain.go, rollup.go).
// Grouped, the calls of requests queued behind a step ran in its
// transaction and its commit wrote their pages too, so the step held the
// writer for all of them and its time said so; alone, the step's
// transaction is its statements and its own commit, and the size it
// adapts to its time is its own.
//
// It also returns when the writer let go of the transaction (its commit or
// rollback done): the time a step held the writer ends there, not when
// its caller next runs.
func (db *DB) txAlone(ctx context.Context, fn func(*Tx) error) (ended time.Time, err error) {
	r := &writeReq{ctx: ctx, fn: fn, done: make(chan writeResult, 1), alone: true}
	err = db.send(r)
	return r.ended, err
}

func (db *DB) send(r *writeReq) error {
	ctx := r.ctx
	db.sendMu.RLock()
	if db.closed {
		db.sendMu.RUnlock()
		return errDBClosed
	}
	select {
	case db.writes <- r:
		db.sendMu.RUnlock()
	case <-ctx.Done():
		db.sendMu.RUnlock()
		return ctx.Err()
	}
	var res writeResult
	select {
	case res = <-r.done:
	case <-ctx.Done():
		if r.state.CompareAndSwap(reqQueued, reqAbandoned) {
			return ctx.Err() // the writer will pass over it
		}
		res = <-r.done // started: it finishes
	}
	if res.panic != nil {
		panic(res.panic)
	}
	return res.err
}

// maxGroup bounds how many calls one transaction takes.
const maxGroup = 64

var errDBClosed = errors.New("store: the database is closed")

type writeReq struct {
	ctx   context.Context
	fn    func(*Tx) error
	done  chan writeResult // buffered: the writer never waits for the caller
	state atomic.Int32     // reqQueued, then reqStarted (writer) or reqAbandoned (caller)
	alone bool             // runs in a transaction of its own (txAlone)
	// raw, when set, runs instead of fn in the writer's turn, outside any
	// transaction (alone is set too).
	raw   func() error
	ended time.Time // when the writer ended fn's transaction; read after done
	// flush makes the group write the key counts kept in memory and fold
	// the pending job counts, whatever their age (DB.flush: a read of
	// them, the loop, Close).
	flush bool
}

// States of a writeReq: whichever of the writer and the caller moves it
// out of reqQueued first decides whether fn runs.
const (
	reqQueued int32 = iota
	reqStarted
	reqAbandoned
)

// start marks r as taken by the writer, or reports that it must be passed
// over: its caller gave up waiting or its context has ended.
func (r *writeReq) start() bool {
	return r.ctx.Err() == nil && r.state.CompareAndSwap(reqQueued, reqStarted)
}

// waiting reports whether r may still start (for dropping requests before
// a transaction begins; start decides).
func (r *writeReq) waiting() bool {
	return r.ctx.Err() == nil && r.state.Load() == reqQueued
}

type writeResult struct {
	err   error
	panic any // fn panicked: the caller panics with it
}

// writer runs the write transactions, grouping the calls that queued up
// while the previous group ran.
// A call that must run alone ends the group it would have joined and runs
// next, in a transaction of its own.
func (db *DB) writer() {
	defer close(db.writerDone)
	defer db.closeWriterStmts()
	var next *writeReq // received while a group was gathered, to run alone
	for {
		r := next
		next = nil
		if r == nil {
			var ok bool
			if r, ok = <-db.writes; !ok {
				return
			}
		}
		group := []*writeReq{r}
		if !r.alone {
			next = db.gather(&group, nil, func() bool { return true })
		}
		if !r.alone && next == nil {
			next = db.awaitExpected(&group)
		}
		if testHookGroup != nil {
			testHookGroup(group)
		}
		db.runGroup(group)
	}
}

// A busy server's group waits a little before it commits, for more of
// the documents in progress to end. Every commit writes about the same 19
// pages whatever it holds (the rightmost leaves of the jobs table and its
// indexes, job_files', the usage row's, the pending counts'): under load
// on tmpfs a group held 1.6 documents, and its commit was about half of
// the writer's CPU. The group waits, up to groupWait and until it holds
// groupTarget calls, while more documents are in progress (ExpectWrites)
// than there are cores and some of them are not in the group yet: the
// cores are then busy with them, so the wait costs no CPU, and
// throughput rises, which at a fixed number of clients lowers their
// latency too. With no more in progress than cores (a lone request, two
// clients on two cores) a core would sit idle through the wait, and the
// group commits at once (docs/decisions.md, "The writer waits while the
// server is busy").
var (
	groupWait   = time.Millisecond
	groupTarget = 4
)

// ExpectWrites adds delta to the documents in progress: the document
// service adds one when a document's request or job starts and takes it
// back once its end is written.
func (db *DB) ExpectWrites(delta int) { db.expected.Add(int64(delta)) }

// awaitExpected adds to group the calls that arrive while more documents
// are in progress than there are cores and some are outside the group, up
// to groupWait and groupTarget calls. It returns a call that must run
// alone, received meanwhile, for the next turn.
func (db *DB) awaitExpected(group *[]*writeReq) (next *writeReq) {
	cores := int64(runtime.GOMAXPROCS(0))
	busy := func() bool { e := db.expected.Load(); return e > cores && e > int64(len(*group)) }
	if len(*group) >= groupTarget || !busy() {
		return nil
	}
	timer := time.NewTimer(groupWait)
	defer timer.Stop()
	return db.gather(group, timer.C, func() bool { return len(*group) < groupTarget && busy() })
}

// gather adds to group the calls sent to the writer while more holds, up
// to maxGroup: those already waiting when until is nil, else those that
// come before until fires. It stops at a call that must run alone and
// returns it, for the next turn.
func (db *DB) gather(group *[]*writeReq, until <-chan time.Time, more func() bool) (next *writeReq) {
	for len(*group) < maxGroup && more() {
		var r *writeReq
		ok := true
		if until == nil {
			select {
			case r, ok = <-db.writes:
			default:
				return nil
			}
		} else {
			select {
			case r, ok = <-db.writes:
			case <-until:
				return nil
			}
		}
		if !ok {
			return nil
		}
		if r.alone {
			return r
		}
		*group = append(*group, r)
	}
	return nil
}

// closeWriterStmts closes the writer's statements on its connection
// before the pool closes it.
func (db *DB) closeWriterStmts() {
	conn, err := db.write.DB.Conn(context.Background())
	if err != nil {
		return // the pool is closed, and its connection with it
	}
	defer conn.Close()
	_ = conn.Raw(func(ci any) error {
		if c, ok := ci.(driver.Conn); ok && c == db.wc.ci {
			db.wc.close()
		}
		return nil
	})
}

// testHookGroup, when set, sees each group before it runs.
var testHookGroup func([]*writeReq)

// runGroup runs calls in one transaction. With one call its failure rolls
// the transaction back, as ever; with several each runs in a savepoint.
// The key usage counts kept in memory ride along as one more call: when
// they cannot be written they are undone alone and kept for the next group.
func (db *DB) runGroup(group []*writeReq) {
	if r := group[0]; r.raw != nil {
		res := writeResult{err: skipped(r)}
		if r.start() {
			res = writeResult{err: r.raw()}
		}
		r.ended = time.Now()
		r.done <- res
		return
	}
	if group[0].alone {
		db.runCalls(group)
		return
	}
	if !db.touchesDue(group) {
		db.runCalls(group)
		return
	}
	db.touchedAt = time.Now()
	if touches := db.touches.take(); len(touches) > 0 {
		w := &writeReq{ctx: context.Background(), done: make(chan writeResult, 1),
			fn: func(tx *Tx) error { return writeTouches(context.Background(), tx, touches) }}
		db.runCalls(append([]*writeReq{w}, group...))
		if res := <-w.done; res.err != nil || res.panic != nil {
			db.touches.restore(touches)
		}
		return
	}
	db.runCalls(group)
}

// touchesDue reports whether a group writes the key counts kept in memory:
// when one of its calls asks for them, or touchFlush has passed since a
// group last wrote them. Written with every group they cost each
// synchronous generate an UPDATE of its key's row (~0.011 ms of the
// writer's CPU a document under load, issue 24, eleventh session); their
// readers flush first, so they never read them stale.
func (db *DB) touchesDue(group []*writeReq) bool {
	if time.Since(db.touchedAt) >= touchFlush {
		return true
	}
	return slices.ContainsFunc(group, func(r *writeReq) bool { return r.flush })
}

// runCalls runs a group's calls in one transaction and answers each.
// Calls whose callers stopped waiting before their turn are passed over;
// a group left with none begins no transaction.
func (db *DB) runCalls(group []*writeReq) {
	group = slices.DeleteFunc(group, func(r *writeReq) bool {
		if r.waiting() {
			return false
		}
		r.done <- writeResult{err: skipped(r)}
		return true
	})
	if len(group) == 0 {
		return
	}
	results := make([]writeResult, len(group))
	finish := func(commitErr error) {
		ended := time.Now()
		for i, r := range group {
			r.ended = ended
			if results[i].err == nil && results[i].panic == nil {
				results[i].err = commitErr
			}
			r.done <- results[i]
		}
		// Let the callers just answered run before the next group: each
		// send put its caller in this goroutine's run slot, where it
		// waited until the writer blocked, after one more group's
		// statements and commit when writes keep coming. Measured with
		// the execution tracer, those waits were most of a synchronous
		// generate's time between its commit and its answer; yielding
		// here moved sync/render-only from 48.0 to 51.4 % on disk and
		// 58.5 to 59.6 % on tmpfs (docs/performance.md, fifth session).
		runtime.Gosched()
	}
	// The connection is the writer pool's one, taken for the group and
	// given back before the callers are answered (as the sql.Tx gave it
	// back at its end), so the pool's other users get their turn between
	// groups.
	ctx := context.Background()
	conn, err := db.write.DB.Conn(ctx)
	if err != nil {
		finish(err)
		return
	}
	var commitErr error
	rawErr := conn.Raw(func(ci any) error {
		if err := db.wc.use(ci); err != nil {
			return err
		}
		commitErr = db.runTx(group, results)
		return nil
	})
	conn.Close()
	if rawErr != nil {
		commitErr = rawErr
	}
	finish(commitErr)
}

// runTx runs the group's calls in one transaction on the writer's driver
// connection, setting each call's result, and returns the error every
// call kept gets: the commit's, or the failure that ended the
// transaction.
func (db *DB) runTx(group []*writeReq, results []writeResult) error {
	ctx := context.Background()
	wc := &db.wc
	if err := wc.control(sqlBegin); err != nil {
		return err
	}
	tx := &Tx{wc: wc, quota: &db.quota}
	changes := db.changesAtBegin(ctx, tx)
	ended := false
	end := func(query string) error {
		tx.closeRows()
		ended = true
		err := wc.control(query)
		if err != nil && query == sqlCommit {
			// A failed COMMIT can leave the transaction open (SQLITE_BUSY);
			// roll it back, as modernc's Tx.Commit does.
			_ = wc.control(sqlRollback)
		}
		tx.endStep()
		return err
	}
	defer func() {
		if !ended {
			_ = end(sqlRollback)
		}
		tx.endStep() // done before the answer on every usual path
	}()
	failed := func(i int) bool { return results[i].err != nil || results[i].panic != nil }
	// commit writes the counts of the calls kept (countJob), once for the
	// group, and commits; a failure there fails every call kept.
	var counts jobCounts
	keep := func() {
		if counts == nil {
			counts, tx.counts = tx.counts, nil
		} else {
			counts.merge(tx.counts)
			tx.counts = nil
		}
	}
	commit := func() error {
		fold := db.foldDue(group)
		var foldErr error
		if fold {
			if foldErr = db.foldInSavepoint(ctx, tx, counts); errors.Is(foldErr, errTxGone) {
				return foldErr
			} else if foldErr != nil {
				// The roll-ups stay as they were and the pending rows
				// with them: the group's own calls still commit, with its
				// counts pending, and the fold is tried again after
				// countFold (or at the next read). A read that asked for
				// it gets the error.
				fold = false
				for i, r := range group {
					if r.flush && results[i].err == nil && results[i].panic == nil {
						results[i].err = fmt.Errorf("store: fold the pending job counts: %w", foldErr)
					}
				}
			}
		}
		switch {
		case fold:
		case len(counts) > 0 && !db.pendTable:
			if err := writeCounts(ctx, tx, counts); err != nil {
				return err
			}
		case len(counts) > 0:
			if err := pendCounts(ctx, tx, counts); err != nil {
				return err
			}
		}
		gen := db.generationBeforeCommit(ctx, tx, changes)
		frames := walCommitFrames.Load()
		defer db.commits.Add(1)
		err := end(sqlCommit)
		if err == nil {
			switch {
			case fold:
				db.countsPending.Store(false)
				db.pendingRows, db.foldedAt = 0, time.Now()
			case len(counts) > 0 && db.pendTable:
				db.countsPending.Store(true) // before the callers are answered: their reads fold
				db.pendingRows++
			}
			if foldErr != nil {
				db.foldedAt = time.Now() // the next try after countFold
			}
			if testHookCommitted != nil {
				testHookCommitted()
			}
			db.generationCommitted(gen, walCommitFrames.Load() == frames+1)
		}
		return err
	}
	if len(group) == 1 {
		if !group[0].start() {
			results[0].err = skipped(group[0])
			return nil
		}
		if results[0] = call(group[0], tx); failed(0) {
			// Roll back before answering: the caller's time with the
			// writer (a maintenance step's, interrupted at its deadline)
			// ends when the writer is free again.
			_ = end(sqlRollback)
			return nil
		}
		keep()
		return commit()
	}
	savepoint := func(q string) error { return tx.savepoint(ctx, q) }
	for i, r := range group {
		if !r.start() {
			results[i].err = skipped(r)
			continue
		}
		if err := savepoint(sqlSavepoint); err != nil {
			return err
		}
		if results[i] = call(r, tx); failed(i) {
			tx.counts = nil // its jobs are rolled back
			if err := savepoint(sqlRollbackTo); err != nil {
				return err
			}
		}
		if err := savepoint(sqlRelease); err != nil {
			return err
		}
		keep()
	}
	return commit()
}

// foldInSavepoint folds the pending counts and counts into the roll-ups
// in a savepoint of the group's transaction: a fold that fails is undone
// alone (errTxGone when the savepoint itself failed, which ends the
// transaction).
func (db *DB) foldInSavepoint(ctx context.Context, tx *Tx, counts jobCounts) error {
	savepoint := func(q string) error { return tx.savepoint(ctx, q) }
	if err := savepoint(sqlSavepoint); err != nil {
		return err
	}
	err := foldCounts(ctx, tx, counts)
	if err != nil {
		if err := savepoint(sqlRollbackTo); err != nil {
			return err
		}
	}
	if err := savepoint(sqlRelease); err != nil {
		return err
	}
	return err
}

// foldDue reports whether a group's commit folds the pending counts into
// the roll-ups (analytics.go): some wait, and a call asks (flush),
// countFold has passed since the last fold or maxPendingCounts rows wait.
// A call that runs alone (a maintenance step, timed) never folds unless
// it asks.
func (db *DB) foldDue(group []*writeReq) bool {
	if !db.countsPending.Load() {
		return false
	}
	if slices.ContainsFunc(group, func(r *writeReq) bool { return r.flush }) {
		return true
	}
	return !group[0].alone && (db.pendingRows >= maxPendingCounts || time.Since(db.foldedAt) >= countFold)
}

// skipped is the outcome of a call passed over: its context's error.
func skipped(r *writeReq) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	return context.Canceled // abandoned implies an ended context; not reached
}

// call runs one caller's fn, turning a panic into a result.
func call(r *writeReq, tx *Tx) (res writeResult) {
	defer func() {
		if p := recover(); p != nil {
			res = writeResult{panic: p}
		}
	}()
	return writeResult{err: r.fn(tx)}
}

// savepoint runs a savepoint statement of the writer's (sqlSavepoint,
// sqlRollbackTo, sqlRelease); its failure ends the transaction
// (errTxGone).
func (tx *Tx) savepoint(ctx context.Context, q string) error {
	tx.closeRows()
	if _, err := tx.wc.exec(ctx, q, nil); err != nil {
		return fmt.Errorf("%w: %w", errTxGone, err)
	}
	return nil
}

// errTxGone wraps a failure that ended the transaction itself.
var errTxGone = errors.New("transaction rolled back")
