package transfer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// keyNames are the server's secrets: the files <data>/keys/NAME.key of an
// embedded install, the rows of secrets (PostgreSQL 0012) named NAME.
var keyNames = []string{"jwt", "download", "signing"}

// copyKeys moves the server's keys into the secrets table. Without them a
// cluster would make new ones: sessions and links signed by the embedded
// server would stop working, and the teams' signing keys, sealed with
// signing.key, would not open. A key the database already holds with
// other bytes (a replica started on it before the copy and made its own)
// is a problem, never overwritten: links and certificates may already
// depend on it.
func copyKeys(ctx context.Context, o Options, pool *pgxpool.Pool, r *Report) error {
	dir := filepath.Join(o.Data, "keys")
	var exists bool
	if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'secrets')`).Scan(&exists); err != nil {
		return err
	}
	t := Table{Name: "secrets", From: "keys"}
	for _, name := range keyNames {
		path := filepath.Join(dir, name+".key")
		key, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if len(key) != 32 {
			r.problem("%s: %d bytes, not a key (32)", path, len(key))
			continue
		}
		t.Source++
		if !exists {
			r.problem("%s.key: the PostgreSQL schema has no place for the server's keys yet; it stays in %s", name, dir)
			continue
		}
		tag, err := pool.Exec(ctx, `INSERT INTO secrets (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, name, key, time.Now().UnixMilli())
		if err != nil {
			return fmt.Errorf("copy %s.key: %w", name, err)
		}
		t.Copied += tag.RowsAffected()
		var stored []byte
		if err := pool.QueryRow(ctx, `SELECT value FROM secrets WHERE name = $1`, name).Scan(&stored); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if bytes.Equal(stored, key) {
			t.Target++
		} else {
			r.problem("%s.key: the database already holds another %s key (a replica started on it before the copy made its own); "+
				"if no replica has served yet, delete it (DELETE FROM secrets WHERE name = '%s') and run the copy again", name, name, name)
		}
	}
	if t.Source == 0 {
		r.note("keys: none in %s (the install never started a server)", dir)
		return nil
	}
	if exists {
		r.Tables = append(r.Tables, t)
		fmt.Fprintf(o.Log, "secrets: %d keys (%s), %d copied by this run\n", t.Source, strings.Join(keyNames, ", "), t.Copied)
	}
	return nil
}
