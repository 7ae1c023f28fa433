package postgres

import (
	"bytes"
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
	return db.offerSecret(ctx, name, offer)
}

// offerSecret stores value as the key called name unless the database
// holds one already, and returns the one it holds.
func (db *DB) offerSecret(ctx context.Context, name string, value []byte) ([]byte, error) {
	if _, err := db.pool.Exec(ctx, `INSERT INTO secrets (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING`,
		name, value, ms(time.Now())); err != nil {
		return nil, err
	}
	return db.readSecret(ctx, name)
}

// ImportSecret stores an embedded install's key (keys/NAME.key) when the
// database has none of that name yet (folio admin migrate), so that moving
// to PostgreSQL keeps the tokens, download links and sealed signing keys
// valid. A database that already holds a different key is an error:
// replacing it would break what it signed or sealed.
func (db *DB) ImportSecret(ctx context.Context, name string, value []byte) error {
	if len(value) != secretSize {
		return fmt.Errorf("key %s: expected %d bytes, found %d", name, secretSize, len(value))
	}
	v, err := db.offerSecret(ctx, name, value)
	if err != nil {
		return err
	}
	if !bytes.Equal(v, value) {
		return fmt.Errorf("the database already holds a different %s key; it signed or sealed what is stored there, so it is kept", name)
	}
	return nil
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
