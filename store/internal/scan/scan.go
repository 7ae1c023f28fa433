// Package scan reads rows into app's types for both storage backends:
// package store (SQLite) and package store/postgres keep the same columns
// in the same representation (instants as Unix milliseconds, flags as
// integers), so the code that turns a row into an app value is written
// once, here. The SQL stays in each backend: placeholders, upserts and
// locking differ between the engines.
//
// A scanner gets a *sql.Row, *sql.Rows, pgx.Row or pgx.Rows. pgx's
// ErrNoRows wraps sql.ErrNoRows, so "not found" is tested once with
// errors.Is(err, sql.ErrNoRows) for both. Nullable integers scan into
// sql.NullInt64, which both drivers fill.
package scan

import (
	"database/sql"
	"time"
)

// Row is a *sql.Row, *sql.Rows, pgx.Row or pgx.Rows.
type Row interface{ Scan(dest ...any) error }

// MS is t as stored: Unix milliseconds.
func MS(t time.Time) int64 { return t.UnixMilli() }

// FromMS is the instant v stored, in UTC.
func FromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

// FromNullMS is the instant v stored, or nil for NULL.
func FromNullMS(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := FromMS(v.Int64)
	return &t
}
