package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"folio/app"
)

var _ app.Secrets = (*DB)(nil)

// secretSize is the size of every key, as the files of an embedded
// install (store.Secret).
const secretSize = 32

// Secret returns the key called name, created by the first replica that
// asks: replicas starting together each offer a random key with INSERT
// ... ON CONFLICT DO NOTHING (one waits for the other's transaction to
// end), and all read back the one that was stored.
func (db *DB) Secret(ctx context.Context, name string) ([]byte, error) {
	v, err := db.readSecret(ctx, name)
	if !errors.Is(err, pgx.ErrNoRows) {
		return v, err
	}
	offer := make([]byte, secretSize)
	if _, err := rand.Read(offer); err != nil {
		return nil, err
	}
	if _, err := db.pool.Exec(ctx, `INSERT INTO secrets (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING`,
		name, offer, ms(time.Now())); err != nil {
		return nil, err
	}
	return db.readSecret(ctx, name)
}

func (db *DB) readSecret(ctx context.Context, name string) ([]byte, error) {
	var v []byte
	if err := db.pool.QueryRow(ctx, `SELECT value FROM secrets WHERE name = $1`, name).Scan(&v); err != nil {
		return nil, err
	}
	if len(v) != secretSize {
		return nil, fmt.Errorf("key %s in the database: expected %d bytes, found %d", name, secretSize, len(v))
	}
	return v, nil
}
