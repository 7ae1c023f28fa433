package store

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"reflect"
	"testing"
)

// A ROLLBACK that fails leaves the connection inside the transaction,
// with the failed call's writes; the next group's BEGIN must end that
// transaction first, or it fails ("within a transaction") and, worse, a
// later COMMIT would write the failed call's rows.
func TestWriterEndsATransactionAFailedRollbackLeft(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	if _, err := db.write.ExecContext(ctx, `CREATE TABLE kept (k TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	failOnce := true
	testHookControl = func(q string) error {
		if q == sqlRollback && failOnce {
			failOnce = false
			return errors.New("rollback refused")
		}
		return nil
	}
	t.Cleanup(func() { testHookControl = nil })
	errBoom := errors.New("boom")
	err := db.tx(ctx, func(tx *Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO kept (k) VALUES ('failed')`); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("failing call: %v, want boom", err)
	}
	if failOnce {
		t.Fatal("the failed call's ROLLBACK did not reach the hook")
	}
	if err := db.tx(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO kept (k) VALUES ('next')`)
		return err
	}); err != nil {
		t.Fatalf("next call: %v", err)
	}
	rows, err := db.read.QueryContext(ctx, `SELECT k FROM kept ORDER BY k`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := scanStrings(rows)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"next"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("rows %q, want %q", got, want)
	}
}

// A transaction's rows are scanned like database/sql's: the same values
// and the same refusals for the same destinations.
func TestTxScansLikeDatabaseSQL(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	type status string
	type count int32
	type dests struct {
		s     string
		i64   int64
		i     int
		b     bool
		f     float64
		blob  []byte
		a     any
		ns    sql.NullString
		ni    sql.NullInt64
		named status
		n32   count
		nilB  []byte
		nilA  any
	}
	const q = `SELECT 'text', 42, '7', 1, 2.5, x'00ff', 'any', NULL, 9, 'done', 12, NULL, NULL`
	scanInto := func(row interface{ Scan(...any) error }, d *dests) error {
		return row.Scan(&d.s, &d.i64, &d.i, &d.b, &d.f, &d.blob, &d.a, &d.ns, &d.ni, &d.named, &d.n32, &d.nilB, &d.nilA)
	}
	var want, got dests
	if err := scanInto(db.read.QueryRowContext(ctx, q), &want); err != nil {
		t.Fatal(err)
	}
	var nullErr, wantNullErr, noRows error
	var tooBig, wantTooBig error
	err := db.tx(ctx, func(tx *Tx) error {
		if err := scanInto(tx.QueryRowContext(ctx, q), &got); err != nil {
			return err
		}
		var s string
		nullErr = tx.QueryRowContext(ctx, `SELECT NULL`).Scan(&s)
		noRows = tx.QueryRowContext(ctx, `SELECT 1 WHERE 0`).Scan(&s)
		var c count
		tooBig = tx.QueryRowContext(ctx, `SELECT 1 << 40`).Scan(&c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("scanned in a transaction:\n%#v\nthrough database/sql:\n%#v", got, want)
	}
	var s string
	wantNullErr = db.read.QueryRowContext(ctx, `SELECT NULL`).Scan(&s)
	if nullErr == nil || wantNullErr == nil {
		t.Fatalf("NULL into a string: %v, database/sql %v; want both refused", nullErr, wantNullErr)
	}
	if !errors.Is(noRows, sql.ErrNoRows) {
		t.Fatalf("no row: %v, want sql.ErrNoRows", noRows)
	}
	var c count
	wantTooBig = db.read.QueryRowContext(ctx, `SELECT 1 << 40`).Scan(&c)
	if tooBig == nil || wantTooBig == nil {
		t.Fatalf("2^40 into an int32: %v, database/sql %v; want both refused", tooBig, wantTooBig)
	}
}

// Arguments are converted as database/sql converts them: named basic
// types by their kind, a driver.Valuer by its value, an int to int64.
func TestTxArgumentsLikeDatabaseSQL(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	type status string
	var got []any
	err := db.tx(ctx, func(tx *Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT ?, ?, ?, ?, ?, typeof(?)`,
			status("done"), sql.NullString{String: "v", Valid: true}, sql.NullInt64{}, 7, uint16(9), true)
		if err != nil {
			return err
		}
		defer rows.Close()
		got = make([]any, 6)
		ptrs := make([]any, len(got))
		for i := range got {
			ptrs[i] = &got[i]
		}
		if !rows.Next() {
			return errors.New("no row")
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		if rows.Next() {
			return errors.New("a second row")
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []any{"done", "v", nil, int64(7), int64(9), "integer"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v", got, want)
	}
}

// Close finalizes the writer's statements: SQLite keeps a connection
// with statements open as a zombie, and the last connection's close is
// what checkpoints and removes the WAL file.
func TestCloseEndsTheWritersStatements(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	if err := db.tx(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE closing (k TEXT)`)
		if err == nil {
			_, err = tx.ExecContext(ctx, `INSERT INTO closing (k) VALUES ('a')`)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(db.Path + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the WAL after Close: %v, want it removed", err)
	}
}
