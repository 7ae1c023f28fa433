// Package store implements app's storage interfaces: records in SQLite,
// the job queue and schedules in bbolt, documents and mail on local disk.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

//go:embed migrations/*.sql
var migrations embed.FS

// DB is the SQLite database: one writer connection (SQLite allows one writer
// at a time; queuing in Go beats busy-waiting in SQLite) and a reader pool.
type DB struct {
	Path    string
	write   *pool
	read    *pool
	touches keyTouches
	stop    chan struct{} // ends the background flush
	flushed chan struct{} // closed when it has ended
	// checkpointed is closed when the checkpoint loop has ended (checkpoint.go).
	checkpointed chan struct{}
	// stepping is held by a maintenance step's transaction and by the
	// loop's checkpoints, which therefore never run during a step
	// (checkpoint.go).
	stepping sync.Mutex
	once     sync.Once

	writes     chan *writeReq // to the writer goroutine
	sendMu     sync.RWMutex   // held to send on writes; Close takes it to end sends
	closed     bool           // under sendMu
	writerDone chan struct{}  // closed when the writer has stopped

	// readyJobs, readyDeliveries and readyList are set once the roll-ups of 0019 hold
	// the whole history (rollup.go), readyTemplates those of 0022; the reads
	// use the older tables until.
	readyJobs, readyDeliveries, readyList, readyTemplates atomic.Bool

	quota quotaSeen // the usage charges wrote, for CheckQuota
}

// readConns is the size of the reader pool.
const readConns = 8

// Open opens (creating when needed) and migrates the database at path.
func Open(ctx context.Context, path string) (*DB, error) { return open(ctx, path, "") }

// open opens the database and applies the migrations up to and including
// the file named upTo ("": all); tests build older schemas with it.
func open(ctx context.Context, path, upTo string) (*DB, error) {
	dsn := func(extra string) string {
		q := url.Values{}
		for _, p := range []string{"journal_mode(WAL)", "busy_timeout(10000)", "foreign_keys(1)", "synchronous(NORMAL)"} {
			q.Add("_pragma", p)
		}
		return "file:" + path + "?" + q.Encode() + extra
	}
	// SQLite would create the database 0644 (less the umask) and gives its
	// -wal and -shm files the mode of the database file, so the file is
	// made 0600 before the first open; files an older version left wider
	// are closed too.
	if err := privateFile(path, true); err != nil {
		return nil, err
	}
	for _, p := range []string{path + "-wal", path + "-shm"} {
		if err := privateFile(p, false); err != nil {
			return nil, err
		}
	}
	// The writer checkpoints only a large WAL (checkpoint.go). Its
	// statement journal stays in memory (temp_store MEMORY): a grouped
	// transaction runs each call in a savepoint, and a savepoint that
	// touched more than 64 KB of pages spilled its journal to a temp file
	// (an open, writes and an unlink per call, on disk in /tmp). Sorts that
	// outgrow the cache (CREATE INDEX in a migration) still spill to files.
	w, err := sql.Open("sqlite", dsn("&_txlock=immediate&_pragma=wal_autocheckpoint("+strconv.Itoa(writerCheckpointPages)+")&_pragma=temp_store(MEMORY)"))
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxLifetime(0)
	r, err := sql.Open("sqlite", dsn(""))
	if err != nil {
		w.Close()
		return nil, err
	}
	// Keep every reader open: database/sql keeps 2 idle by default, so
	// concurrent reads opened fresh connections (each applying the pragmas
	// and preparing its statements again) and closed them after use.
	r.SetMaxOpenConns(readConns)
	r.SetMaxIdleConns(readConns)
	db := &DB{Path: path, write: newPool(w), read: newPool(r), stop: make(chan struct{}), flushed: make(chan struct{}), checkpointed: make(chan struct{}),
		writes: make(chan *writeReq, maxGroup), writerDone: make(chan struct{})}
	go db.writer()
	// Checkpoints on a reader (checkpoint.go), and counts kept in memory
	// (TouchAPIKey) that no write transaction took within touchFlush;
	// a failed flush keeps them for the next try.
	go db.every(checkpointEvery, db.checkpointed, db.loopCheckpoint)
	go db.every(touchFlush, db.flushed, func() { _ = db.flushTouches(context.Background()) })
	if err := db.migrate(ctx, upTo); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate %s: %w", path, err)
	}
	db.loadRollupState(ctx)
	return db, nil
}

// every runs fn every interval until Close, then closes done.
func (db *DB) every(interval time.Duration, done chan struct{}, fn func()) {
	defer close(done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-db.stop:
			return
		case <-t.C:
			fn()
		}
	}
}

// Close writes what is kept in memory and closes both pools.
func (db *DB) Close() error {
	var err error
	db.once.Do(func() {
		close(db.stop)
		<-db.flushed
		<-db.checkpointed
		err = db.flushTouches(context.Background())
		db.sendMu.Lock()
		db.closed = true
		db.sendMu.Unlock()
		close(db.writes) // the writer runs what was sent, then stops
		<-db.writerDone
	})
	return errors.Join(err, db.read.Close(), db.write.Close())
}

// migrate applies every embedded migration not yet recorded, each in its own
// transaction. Migrations only move forward and are never edited once landed.
func (db *DB) migrate(ctx context.Context, upTo string) error {
	if _, err := db.write.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		return err
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	if err := db.refuseNewerSchema(ctx, names); err != nil {
		return err
	}
	for _, name := range names {
		if upTo != "" && name > upTo {
			break
		}
		if err := db.migrateFile(ctx, name); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// refuseNewerSchema fails when the database records a migration this binary
// does not have: a newer Folio migrated it, and this older one would run
// against tables it does not understand. Downgrades go through a backup.
func (db *DB) refuseNewerSchema(ctx context.Context, known []string) error {
	rows, err := db.write.QueryContext(ctx, `SELECT name FROM migrations ORDER BY name`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var unknown []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return err
		}
		if _, found := slices.BinarySearch(known, name); !found {
			unknown = append(unknown, strings.TrimPrefix(name, "migrations/"))
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(unknown) > 0 {
		return fmt.Errorf("%w: the database has migrations this binary does not know (%s); run the newer folio, or restore a backup taken before the upgrade",
			ErrSchemaNewer, strings.Join(unknown, ", "))
	}
	return nil
}

// ErrSchemaNewer reports a database migrated by a newer Folio.
var ErrSchemaNewer = errors.New("database schema is newer than this binary")

func (db *DB) migrateFile(ctx context.Context, name string) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM migrations WHERE name = ?`, name).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	body, err := fs.ReadFile(migrations, name)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, string(body)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO migrations (name, applied_at) VALUES (?, ?)`, name, time.Now().UnixMilli()); err != nil {
		return err
	}
	return tx.Commit()
}

// Version returns the name of the last applied migration.
func (db *DB) Version(ctx context.Context) (string, error) {
	var v sql.NullString
	err := db.read.QueryRowContext(ctx, `SELECT MAX(name) FROM migrations`).Scan(&v)
	return v.String, err
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	var n int
	return db.read.QueryRowContext(ctx, `SELECT 1`).Scan(&n)
}

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
	ended time.Time        // when the writer ended fn's transaction; read after done
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
	more:
		for len(group) < maxGroup && !r.alone {
			select {
			case r2, ok := <-db.writes:
				if !ok {
					break more
				}
				if r2.alone {
					next = r2
					break more
				}
				group = append(group, r2)
			default:
				break more
			}
		}
		if testHookGroup != nil {
			testHookGroup(group)
		}
		db.runGroup(group)
	}
}

// testHookGroup, when set, sees each group before it runs.
var testHookGroup func([]*writeReq)

// runGroup runs calls in one transaction. With one call its failure rolls
// the transaction back, as ever; with several each runs in a savepoint.
// The key usage counts kept in memory ride along as one more call: when
// they cannot be written they are undone alone and kept for the next group.
func (db *DB) runGroup(group []*writeReq) {
	if group[0].alone {
		db.runCalls(group)
		return
	}
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
	ctx := context.Background()
	stx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		finish(err)
		return
	}
	tx := &Tx{Tx: stx, pool: db.write, quota: &db.quota}
	defer tx.endStep() // done before the answer on every usual path
	defer tx.prepareMissed(ctx)
	defer stx.Rollback()
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
		if len(counts) > 0 {
			if err := writeCounts(ctx, tx, counts); err != nil {
				return err
			}
		}
		return stx.Commit()
	}
	if len(group) == 1 {
		if !group[0].start() {
			results[0].err = skipped(group[0])
			finish(nil)
			return
		}
		if results[0] = call(group[0], tx); failed(0) {
			// Roll back before answering: the caller's time with the
			// writer (a maintenance step's, interrupted at its deadline)
			// ends when the writer is free again.
			_ = stx.Rollback()
			tx.endStep()
			finish(nil)
			return
		}
		keep()
		err := commit()
		tx.endStep()
		finish(err)
		return
	}
	savepoint := func(q string) error {
		// Prepared once, like the writer's other statements (not
		// traced: they are the group's, not a caller's).
		var err error
		if s := tx.cached(q); s != nil {
			_, err = stx.StmtContext(ctx, s).ExecContext(ctx)
		} else {
			_, err = stx.ExecContext(ctx, q)
		}
		if err != nil {
			return fmt.Errorf("%w: %w", errTxGone, err)
		}
		return nil
	}
	for i, r := range group {
		if !r.start() {
			results[i].err = skipped(r)
			continue
		}
		if err := savepoint(`SAVEPOINT call`); err != nil {
			finish(err)
			return
		}
		if results[i] = call(r, tx); failed(i) {
			tx.counts = nil // its jobs are rolled back
			if err := savepoint(`ROLLBACK TO call`); err != nil {
				finish(err)
				return
			}
		}
		if err := savepoint(`RELEASE call`); err != nil {
			finish(err)
			return
		}
		keep()
	}
	finish(commit())
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

// errTxGone wraps a failure that ended the transaction itself.
var errTxGone = errors.New("transaction rolled back")

// isUnique reports whether err is a UNIQUE constraint failure, optionally on
// an index whose columns mention col.
func isUnique(err error, col string) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) || se.Code() != sqlite3.SQLITE_CONSTRAINT_UNIQUE {
		return false
	}
	return col == "" || strings.Contains(se.Error(), col)
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func msPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMilli()
}

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

func fromNullMS(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMS(v.Int64)
	return &t
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// querier is a pool or a *Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scanStrings reads a one-column result of strings and closes rows.
func scanStrings(rows *sql.Rows) ([]string, error) {
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// TrimIdle gives back the memory SQLite kept for a load (the idle trim's
// hook, app/idletrim.go), all of it allocated outside the Go heap. It
// closes the reader connections no read is using: each keeps its own copy
// of the schema, its prepared statements and a page cache; the next reads
// open connections again as they need them. It empties the writer's page
// cache (PRAGMA shrink_memory), which a load fills and nothing else
// shrinks: the next write reads its pages again, from the OS's cache.
// Then the C allocator returns the regions that emptied (trimC).
func (db *DB) TrimIdle(ctx context.Context) error {
	db.read.SetMaxIdleConns(0)
	db.read.SetMaxIdleConns(readConns)
	if _, err := db.write.ExecContext(ctx, `PRAGMA shrink_memory`); err != nil {
		return fmt.Errorf("shrink the writer's page cache: %w", err)
	}
	return trimC()
}
