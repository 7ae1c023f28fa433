package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"folio/app"
)

var _ app.MetaGenerations = (*DB)(nil)

// MetadataGeneration reads the counter that migration 0006's triggers raise
// in every transaction changing keys, users, teams or members
// (app.MetaCache). It changes at the commit of the write that raised it,
// together with the write: a replica that reads the new number reads the
// new rows.
func (db *DB) MetadataGeneration(ctx context.Context) (int64, error) {
	var n int64
	err := db.pool.QueryRow(ctx, `SELECT n FROM meta_generation WHERE id = 1`).Scan(&n)
	return n, err
}

// metaTx runs fn in a transaction that first locks the metadata generation's
// row: the transactions that raise it (their triggers do) take that one
// lock before any other, in the same order everywhere, so they queue
// instead of deadlocking on each other's rows.
func (db *DB) metaTx(ctx context.Context, fn func(pgx.Tx) error) error {
	return db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT n FROM meta_generation WHERE id = 1 FOR UPDATE`); err != nil {
			return err
		}
		return fn(tx)
	})
}

// metaExec runs one statement under metaTx.
func (db *DB) metaExec(ctx context.Context, sql string, args ...any) (n int64, err error) {
	err = db.metaTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, sql, args...)
		n = tag.RowsAffected()
		return err
	})
	return n, err
}
