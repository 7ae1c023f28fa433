// Package postgres implements app's storage interfaces on PostgreSQL, for
// installs that run several Folio replicas (folio serve --database-url).
// It mirrors package store (SQLite and bbolt) query for query: the same
// orderings, the same app errors, timestamps in the same Unix milliseconds;
// package storetest runs one table of cases against both.
//
// Where SQLite's single writer made a check-then-write safe, the
// transaction here locks the row the check is about (the team, the token)
// with SELECT ... FOR UPDATE, so replicas writing at once still see each
// other's writes in order (docs/decisions.md, PostgreSQL).
package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DB is a pool of connections to one PostgreSQL database.
type DB struct {
	pool *pgxpool.Pool
	// owner names this process's queue leases: ReleaseLeases frees its
	// own only, since other replicas' workers may still be alive.
	owner string
}

// Open connects to the database at url (postgres://...) and applies the
// migrations this binary has and the database lacks; replicas starting
// at once apply each exactly once (migrate.go).
func Open(ctx context.Context, url string) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("database URL: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	db := &DB{pool: pool, owner: newOwner()}
	if err := migrate(ctx, pool, migrations); err != nil {
		pool.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return db, nil
}

// newOwner is a random name for this process's leases.
func newOwner() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Close releases this process's queue and webhook schedule leases, so
// other replicas take its interrupted jobs and attempts at once rather
// than when the leases lapse, and closes
// the pool, waiting for connections in use to be returned.
func (db *DB) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := db.ReleaseLeases(ctx)
	_, err2 := db.ReleaseAttemptLeases(ctx)
	db.pool.Close()
	return errors.Join(err, err2)
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error { return db.pool.Ping(ctx) }

// tx runs fn in a transaction, committed when fn returns nil.
func (db *DB) tx(ctx context.Context, fn func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, db.pool, fn)
}

// querier is the pool or a transaction.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// scanner is a pgx.Row or pgx.Rows.
type scanner interface{ Scan(dest ...any) error }

// isUnique reports whether err is a unique violation, on the named
// constraint or index when constraint is not "".
func isUnique(err error, constraint string) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "23505" {
		return false
	}
	return constraint == "" || pe.ConstraintName == constraint
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func msPtr(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	v := t.UnixMilli()
	return &v
}

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

func fromNullMS(v *int64) *time.Time {
	if v == nil {
		return nil
	}
	t := fromMS(*v)
	return &t
}

// scanStrings reads a one-column result of strings and closes rows.
func scanStrings(rows pgx.Rows) ([]string, error) {
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
