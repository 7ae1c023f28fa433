package store

import (
	"context"

	"folio/app"
)

var _ app.MetaGenerations = (*DB)(nil)

// MetadataGeneration reads the counter that migration 0016's triggers raise
// in every transaction changing keys, users, teams, members, templates,
// versions or shares (app.MetaCache). Every API request reads it once, so
// it runs without cancellation (shortRead).
func (db *DB) MetadataGeneration(ctx context.Context) (int64, error) {
	var n int64
	err := db.read.QueryRowContext(shortRead(ctx), `SELECT n FROM meta_generation WHERE id = 1`).Scan(&n)
	return n, err
}

// shortRead is ctx for a read of a row or two by key, which ends in
// microseconds: without its cancellation. With a context that can end,
// database/sql watches the rows and the driver the statement, each with a
// goroutine of its own per statement (and the driver a progress handler),
// which such a read does not need.
func shortRead(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }
