// Package transfer moves an embedded install (SQLite records, the bbolt
// queue and webhook schedule, the keys and the files of a data directory)
// into the cluster backends, PostgreSQL and an S3 bucket, and verifies
// the copy: folio admin migrate (docs/deploy.md, Moving an install).
//
// The copy is resumable and idempotent: rows go in with INSERT ... ON
// CONFLICT DO NOTHING, committed a batch at a time; files are compared
// with what the bucket holds before they are sent. A run that was
// interrupted goes on where it stopped, and a run over a complete copy
// verifies it and copies nothing.
//
// The records are copied generically, driven by the PostgreSQL schema:
// its schema mirrors SQLite's (same table and column names, same
// representations but for BOOLEAN flags and BYTEA blobs), so every
// PostgreSQL table that SQLite also has is copied column for column, in
// the order of the foreign keys; SQLite's rowid becomes the identity
// column seq, which lists use for insertion order. A SQLite table with
// rows and no PostgreSQL table, or a column PostgreSQL lacks, is reported
// as a problem: the copy is then incomplete, never silently partial.
package transfer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
	_ "modernc.org/sqlite"

	"folio/store"
	"folio/store/postgres"
	"folio/store/s3files"
)

// Options says what to move where.
type Options struct {
	// Data is the embedded install's data directory (folio.db, queue.db,
	// keys/, files/).
	Data string
	// DatabaseURL is the PostgreSQL database to fill (postgres://...).
	DatabaseURL string
	// FilesURL is the bucket to fill (s3://...); "" leaves the files
	// where they are and says so in the report.
	FilesURL string
	// Getenv reads the S3 credentials (os.Getenv when nil).
	Getenv func(string) string
	// Log receives a line per table and step (io.Discard when nil).
	Log io.Writer
	// BatchRows is the number of rows per transaction (2,000 when 0).
	BatchRows int

	// afterStep, in tests, is called after each committed batch of rows
	// and each file: a test cancels the run from it half way.
	afterStep func()
}

// Table is what one table holds on each side.
type Table struct {
	Name string
	// From is where the rows come from: "sqlite", "bbolt" (the queue and
	// webhook schedule) or "keys".
	From           string
	Source, Target int64
	// Copied is the rows this run inserted (0 when the copy was complete).
	Copied int64
}

// FileCounts is what the file copy did.
type FileCounts struct {
	Count  int   // files in the data directory
	Bytes  int64 // their total size
	Copied int   // sent by this run
	// Verified is the files whose object in the bucket has their size and
	// checksum (all of them when the copy is complete); ReadBack the
	// ones of them checked by reading the object back, where the
	// store's ETag is not the MD5 the local bytes give.
	Verified, ReadBack int
}

// Report is the outcome of a run.
type Report struct {
	Tables []Table
	Files  FileCounts
	// FilesSkipped is set when no bucket was given.
	FilesSkipped bool
	// Notes are what was deliberately not copied, and why.
	Notes []string
	// Problems are what keeps the copy from being complete: a table or
	// column PostgreSQL has no place for, counts that differ, a file
	// whose object does not match. Run returns ErrIncomplete with them.
	Problems []string
}

// ErrIncomplete reports a run that copied what it could but found
// problems (Report.Problems).
var ErrIncomplete = errors.New("the copy is not complete")

func (r *Report) problem(format string, args ...any) {
	r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
}

func (r *Report) note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// Table returns the report of the named table (nil if none).
func (r *Report) Table(name string) *Table {
	for i := range r.Tables {
		if r.Tables[i].Name == name {
			return &r.Tables[i]
		}
	}
	return nil
}

// Run copies the install at o.Data into o.DatabaseURL and o.FilesURL and
// verifies the copy. The embedded server must be stopped: Run holds the
// bbolt file's lock for its whole length (so no server can start on the
// directory meanwhile) and reads SQLite in one transaction. No Folio may
// serve the PostgreSQL database yet either (docs/deploy.md).
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.BatchRows <= 0 {
		o.BatchRows = 2000
	}
	dbPath := filepath.Join(o.Data, "folio.db")
	if _, err := os.Stat(dbPath); err != nil {
		return nil, fmt.Errorf("no Folio database in %s (--data)", o.Data)
	}
	if err := postgres.CheckURL(o.DatabaseURL); err != nil {
		return nil, fmt.Errorf("--to-database-url: %w", err)
	}
	var files *s3files.Store
	if o.FilesURL != "" {
		cfg, err := s3files.ParseURL(o.FilesURL, o.Getenv)
		if err != nil {
			return nil, fmt.Errorf("--to-files-url: %w", err)
		}
		if files, err = s3files.Open(cfg, nil); err != nil {
			return nil, err
		}
		if err := files.Check(ctx); err != nil {
			return nil, fmt.Errorf("--to-files-url: %w", err)
		}
	}

	// The bbolt file first: the server holds it exclusively, so this
	// fails while one runs, and holding it keeps one from starting.
	bolt, err := store.OpenBolt(filepath.Join(o.Data, "queue.db"))
	if err != nil {
		return nil, fmt.Errorf("%w; stop the server first (folio admin migrate copies a stopped install)", err)
	}
	defer bolt.Close()

	// SQLite at this binary's schema, with complete roll-ups, as a
	// server of this version would have it.
	if err := prepareSQLite(ctx, dbPath); err != nil {
		return nil, err
	}
	src, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return nil, err
	}
	defer src.Close()
	src.SetMaxOpenConns(1)
	// One read transaction for every table: a consistent snapshot even if
	// an admin command wrote meanwhile.
	stx, err := src.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer stx.Rollback()

	// PostgreSQL at this binary's schema, under the migrations' advisory
	// lock as a replica's start would, then a pool of its own.
	pdb, err := postgres.Open(ctx, o.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("--to-database-url: %w", err)
	}
	defer pdb.Close()
	pool, err := pgxpool.New(ctx, o.DatabaseURL)
	if err != nil {
		return nil, err
	}
	defer pool.Close()

	r := &Report{}
	if err := copyTables(ctx, o, stx, pool, r); err != nil {
		return r, err
	}
	if err := copyBolt(ctx, o, bolt, pool, r); err != nil {
		return r, err
	}
	if err := copyKeys(ctx, o, pdb, pool, r); err != nil {
		return r, err
	}
	if files == nil {
		r.FilesSkipped = true
		r.note("files: not copied (no --to-files-url); they stay in %s", filepath.Join(o.Data, "files"))
	} else if err := copyFiles(ctx, o, files, r); err != nil {
		return r, err
	}
	if err := ctx.Err(); err != nil {
		return r, err
	}
	if len(r.Problems) > 0 {
		return r, fmt.Errorf("%w: %s", ErrIncomplete, strings.Join(r.Problems, "; "))
	}
	return r, nil
}

// prepareSQLite migrates the database to this binary's schema and
// completes the roll-ups' backfill, which a server does at its start.
func prepareSQLite(ctx context.Context, path string) error {
	db, err := store.Open(ctx, path)
	if err != nil {
		return err
	}
	_, err = db.BackfillRollups(ctx)
	if err == nil {
		// PostgreSQL's job_files holds the bytes of the documents that
		// SQLite's rows name in docs/ (store/docseg.go).
		_, err = db.InlineDocuments(ctx)
	}
	return errors.Join(err, db.Close())
}

// WriteReport prints a report as a table.
func WriteReport(w io.Writer, r *Report) {
	fmt.Fprintf(w, "%-28s %-7s %10s %10s %10s\n", "table", "from", "source", "target", "copied")
	for _, t := range r.Tables {
		mark := ""
		if t.Source != t.Target {
			mark = "  MISMATCH"
		}
		fmt.Fprintf(w, "%-28s %-7s %10d %10d %10d%s\n", t.Name, t.From, t.Source, t.Target, t.Copied, mark)
	}
	if !r.FilesSkipped {
		f := r.Files
		fmt.Fprintf(w, "files: %d (%d bytes), %d copied by this run, %d verified (%d by reading back)\n", f.Count, f.Bytes, f.Copied, f.Verified, f.ReadBack)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "PROBLEM: %s\n", p)
	}
}
