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
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"folio/store/internal/scan"
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

	wc writerConn // the writer goroutine's statements (wconn.go)

	// commits counts the writer's commits (attempted), so a checkpoint
	// can tell whether one came while it ran (checkpoint.go).
	commits atomic.Uint64

	// wal is the WAL-index's header page, shmPin the connection that
	// keeps its file (metagen.go); genSeen the metadata generation last
	// read with the header before it.
	wal      *walIndex
	shmPin   *sql.Conn
	shmPinDB *sql.DB
	genSeen  atomic.Pointer[genSeen]

	// segs holds the bytes of the documents kept by the database
	// (docseg.go); nil for a database that is not a file. collected is
	// closed when the loop removing unused segments has stopped.
	segs      *docSegments
	collected chan struct{}

	touchedAt time.Time // when a group last wrote the key counts (writer goroutine only)

	// expected counts the writes on their way (ExpectWrites).
	expected atomic.Int64

	// countsPending is true while job_count_pending may hold counts not
	// yet in the roll-ups (analytics.go, pendCounts); pendingRows counts
	// its rows and foldedAt is when they were last folded (both writer
	// goroutine only).
	// A database opened at a schema before 0032 (tests) has no such table
	// and writes counts straight into the roll-ups (pendTable false).
	countsPending atomic.Bool
	pendTable     bool
	pendingRows   int
	foldedAt      time.Time
}

// segmentCollectEvery is how often segments no row names are removed (a
// variable for tests).
var segmentCollectEvery = time.Minute

// segmentDir is where the segments of the database at path go: docs/
// beside it; ok is false for a database that is not a plain file.
func segmentDir(path string) (dir string, ok bool) {
	if path == "" || strings.HasPrefix(path, ":memory:") || strings.HasPrefix(path, "file:") {
		return "", false
	}
	return filepath.Join(filepath.Dir(path), "docs"), true
}

// readConns is the size of the reader pool.
const readConns = 8

// Open opens (creating when needed) and migrates the database at path.
func Open(ctx context.Context, path string) (*DB, error) { return open(ctx, path, "") }

// open opens the database and applies the migrations up to and including
// the file named upTo ("": all); tests build older schemas with it.
func open(ctx context.Context, path, upTo string) (*DB, error) {
	dsn := func(extra string) string {
		q := url.Values{"vfs": {walVFSName}}
		for _, p := range []string{"journal_mode(WAL)", "busy_timeout(10000)", "foreign_keys(1)", "synchronous(NORMAL)"} {
			q.Add("_pragma", p)
		}
		return "file:" + path + "?" + q.Encode() + extra
	}
	if err := registerWALVFS(); err != nil {
		return nil, err
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
		writes: make(chan *writeReq, maxGroup), writerDone: make(chan struct{}), collected: make(chan struct{})}
	if dir, ok := segmentDir(path); ok {
		db.segs = newDocSegments(dir)
	}
	go db.writer()
	// Checkpoints on a reader (checkpoint.go), and counts kept in memory
	// (TouchAPIKey) that no write transaction took within touchFlush;
	// a failed flush keeps them for the next try.
	go db.every(checkpointEvery, db.checkpointed, db.loopCheckpoint)
	go db.every(touchFlush, db.flushed, func() { _ = db.flush(context.Background()) })
	go db.every(segmentCollectEvery, db.collected, func() { _, _ = db.collectSegments(context.Background()) })
	if err := db.migrate(ctx, upTo); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate %s: %w", path, err)
	}
	db.loadRollupState(ctx)
	if err := db.loadPending(ctx); err != nil {
		db.Close()
		return nil, err
	}
	db.watchWAL(ctx, dsn(""))
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
		<-db.collected
		err = db.flush(context.Background())
		db.sendMu.Lock()
		db.closed = true
		db.sendMu.Unlock()
		close(db.writes) // the writer runs what was sent, then stops
		<-db.writerDone
		db.unwatchWAL()
	})
	err = errors.Join(err, db.read.Close(), db.write.Close())
	if db.segs != nil {
		err = errors.Join(err, db.segs.close()) // after the pools: their last checkpoint syncs the segments
	}
	return err
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

// querier is a pool or a *Tx: the helpers that read inside a write
// transaction or outside one.
type querier interface {
	query(ctx context.Context, query string, args ...any) (rowsCloser, error)
	queryRow(ctx context.Context, query string, args ...any) scan.Row
}

// rowsCloser is a *sql.Rows or a *txRows.
type rowsCloser interface {
	scan.Rows
	Close() error
}

func (p *pool) query(ctx context.Context, query string, args ...any) (rowsCloser, error) {
	rows, err := p.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err // not a typed nil
	}
	return rows, nil
}

func (p *pool) queryRow(ctx context.Context, query string, args ...any) scan.Row {
	return p.QueryRowContext(ctx, query, args...)
}

func (tx *Tx) query(ctx context.Context, query string, args ...any) (rowsCloser, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return rows, nil
}

func (tx *Tx) queryRow(ctx context.Context, query string, args ...any) scan.Row {
	return tx.QueryRowContext(ctx, query, args...)
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scanStrings reads a one-column result of strings and closes rows.
func scanStrings(rows rowsCloser) ([]string, error) {
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
