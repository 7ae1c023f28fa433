package transfer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5/pgxpool"

	"folio/app"
	"folio/store/postgres"
)

// keyNames are the server's secrets: the files <data>/keys/NAME.key of an
// embedded install, the rows of PostgreSQL's secrets table named NAME.
var keyNames = []string{app.SecretJWT, app.SecretDownload, app.SecretSigning}

// copyKeys moves the server's keys into the database (postgres.DB.ImportSecret).
// Without them a cluster would make new ones: sessions and links signed
// by the embedded server would stop working, and the teams' signing keys,
// sealed with signing.key, would not open. A key the database already
// holds with other bytes (a replica started on it before the copy and made
// its own) is a problem, never overwritten: links and certificates may
// depend on it by then.
func copyKeys(ctx context.Context, o Options, db *postgres.DB, pool *pgxpool.Pool, r *Report) error {
	dir := filepath.Join(o.Data, "keys")
	t := Table{Name: "secrets", From: "keys"}
	before, err := countPG(ctx, pool, "secrets")
	if err != nil {
		return err
	}
	for _, name := range keyNames {
		path := filepath.Join(dir, name+".key")
		key, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		t.Source++
		switch err := db.ImportSecret(ctx, name, key); {
		case err == nil:
			t.Target++
		case ctx.Err() != nil:
			return ctx.Err()
		case differs(ctx, db, name, key):
			r.problem("%s.key: %v (a replica started on the database before the copy made its own); "+
				"if no replica has served yet, delete it (DELETE FROM secrets WHERE name = '%s') and run the copy again", name, err, name)
		default:
			r.problem("%s: %v", path, err)
		}
	}
	if t.Source == 0 {
		r.note("keys: none in %s (the install never started a server)", dir)
		return nil
	}
	after, err := countPG(ctx, pool, "secrets")
	if err != nil {
		return err
	}
	t.Copied = after - before
	r.Tables = append(r.Tables, t)
	fmt.Fprintf(o.Log, "secrets: %d keys, %d copied by this run\n", t.Source, t.Copied)
	return nil
}

// differs reports whether the database holds another key of that name.
func differs(ctx context.Context, db *postgres.DB, name string, key []byte) bool {
	v, err := db.Secret(ctx, name)
	return err == nil && !bytes.Equal(v, key)
}
