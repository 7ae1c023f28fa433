package store

import (
	"context"

	"folio/app"
)

var _ app.MetaGenerations = (*DB)(nil)

// MetadataGeneration reads the counter that migration 0016's triggers raise
// in every transaction changing keys, users, teams, members, templates,
// versions or shares (app.MetaCache).
func (db *DB) MetadataGeneration(ctx context.Context) (int64, error) {
	var n int64
	err := db.read.QueryRowContext(ctx, `SELECT n FROM meta_generation WHERE id = 1`).Scan(&n)
	return n, err
}
