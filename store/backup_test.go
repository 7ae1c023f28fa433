package store

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// mustPaddedDB returns a database with rows rows of 4,000 bytes in a table
// pad (about a page each) and an empty table w for writes made during a
// backup; steps of 64 pages make a backup of it take dozens of steps.
func mustPaddedDB(tb testing.TB, rows int) *DB {
	tb.Helper()
	ctx := context.Background()
	db := mustDB(tb)
	for _, q := range []string{
		`CREATE TABLE pad (id INTEGER PRIMARY KEY, body BLOB)`,
		`CREATE TABLE w (id INTEGER PRIMARY KEY, v TEXT)`,
		`WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ?) INSERT INTO pad SELECT i, zeroblob(4000) FROM c`,
	} {
		if _, err := db.write.ExecContext(ctx, q, rows); err != nil {
			tb.Fatal(err)
		}
	}
	old := backupStep
	backupStep = 64
	tb.Cleanup(func() { backupStep = old })
	return db
}

// insertW writes one row to w through the writer, as every store write does.
func insertW(ctx context.Context, db *DB) error {
	return db.tx(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO w (v) VALUES ('x')`)
		return err
	})
}

// countRows counts a table's rows in the SQLite file at path, after checking
// the file's integrity.
func countRows(t *testing.T, path, table string) int {
	t.Helper()
	c, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var ok string
	if err := c.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("integrity_check of %s: %q %v", path, ok, err)
	}
	var n int
	if err := c.QueryRow(`SELECT COUNT(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestBackupLetsWritesThrough: between every two steps of a backup a write
// goes through the writer and commits, which it could not if the backup
// held the writer connection or SQLite's write lock (VACUUM INTO on the
// writer did, for the whole copy). The copy is the database as it was when
// the backup began: none of those writes, every row before them, intact
// and private. Without the read transaction held across steps, each write
// would restart the copy from its first page.
func TestBackupLetsWritesThrough(t *testing.T) {
	const rows = 2000
	db := mustPaddedDB(t, rows)
	ctx, stop := context.WithCancel(context.Background()) // stop: a failure ends the backup at its next step
	defer stop()
	out := filepath.Join(t.TempDir(), "copy.db")
	var steps, writes int
	var last, size int64
	err := db.Backup(ctx, out, func(copied, total int64) {
		steps++
		if copied <= last {
			t.Errorf("the copy restarted at step %d (%d bytes copied, then %d): it does not read one snapshot", steps, last, copied)
			stop()
		}
		last, size = copied, total
		if copied == total {
			return // the copy is done; nothing is between steps any more
		}
		done := make(chan error, 1)
		go func() { done <- insertW(context.Background(), db) }()
		select {
		case err := <-done:
			if err != nil {
				t.Error(err)
				stop()
			}
			writes++
		case <-time.After(time.Minute): // a guard against hanging, not a measure
			t.Error("a write waited for the backup")
			stop()
		}
	})
	if err != nil || t.Failed() {
		t.Fatal(err)
	}
	if steps < 10 || writes != steps-1 || last != size || size < rows*4000 {
		t.Fatalf("%d steps, %d writes between them, last progress %d of %d bytes", steps, writes, last, size)
	}
	if got := countRows(t, out, "pad"); got != rows {
		t.Fatalf("copy has %d padded rows, want %d", got, rows)
	}
	if got := countRows(t, out, "w"); got != 0 {
		t.Fatalf("copy has %d rows written after it began, want none", got)
	}
	if got := countRows(t, db.Path, "w"); got != writes {
		t.Fatalf("live database has %d rows written during the backup, want %d", got, writes)
	}
	if runtime.GOOS != "windows" {
		if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("copy mode: %v %v", fi.Mode(), err)
		}
	}
}

// TestBackupDoesNotWaitForTheWriter: a backup taken while a long write
// transaction holds the writer (the janitor's deletes, say) completes
// before that transaction ends.
func TestBackupDoesNotWaitForTheWriter(t *testing.T) {
	db := mustPaddedDB(t, 500)
	ctx := context.Background()
	held, release := make(chan struct{}), make(chan struct{})
	writeDone := make(chan error, 1)
	go func() {
		writeDone <- db.tx(ctx, func(tx *Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO w (v) VALUES ('held')`); err != nil {
				return err
			}
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	out := filepath.Join(t.TempDir(), "copy.db")
	backupDone := make(chan error, 1)
	go func() { backupDone <- db.Backup(ctx, out, nil) }()
	select {
	case err := <-backupDone:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute): // a guard against hanging, not a measure
		t.Fatal("the backup waited for the writer")
	}
	select {
	case err := <-writeDone:
		t.Fatalf("the held transaction ended before it was released: %v", err)
	default:
	}
	close(release)
	if err := <-writeDone; err != nil {
		t.Fatal(err)
	}
	if got := countRows(t, out, "pad"); got != 500 {
		t.Fatalf("copy has %d rows, want 500", got)
	}
	if got := countRows(t, out, "w"); got != 0 {
		t.Fatalf("copy has the uncommitted row")
	}
}

// TestBackupStopsWithItsContext: a cancelled backup stops between steps and
// gives its reader back outside any transaction, so reads see later writes.
func TestBackupStopsWithItsContext(t *testing.T) {
	db := mustPaddedDB(t, 1000)
	ctx, cancel := context.WithCancel(context.Background())
	steps := 0
	err := db.Backup(ctx, filepath.Join(t.TempDir(), "copy.db"), func(copied, total int64) {
		if steps++; steps == 2 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || steps != 2 {
		t.Fatalf("err %v after %d steps, want context.Canceled after 2", err, steps)
	}
	if err := insertW(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	// Every reader sees the write: none is left inside the backup's snapshot.
	conns := make([]*sql.Conn, readConns)
	for i := range conns {
		c, err := db.read.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
		var n int
		if err := c.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM w`).Scan(&n); err != nil || n != 1 {
			t.Fatalf("reader %d sees %d rows (%v), want 1", i, n, err)
		}
	}
}
