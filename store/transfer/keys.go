package transfer

import (
	"context"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5/pgxpool"
)

// keyFiles are the server's secrets in <data>/keys.
var keyFiles = []string{"jwt.key", "download.key", "signing.key"}

// copyKeys moves the server's keys. Without them a cluster would make
// new ones: sessions and links signed by the embedded server would stop
// working, and the teams' signing keys, sealed with signing.key, would
// not open.
func copyKeys(ctx context.Context, o Options, pool *pgxpool.Pool, r *Report) error {
	var present []string
	for _, k := range keyFiles {
		if _, err := os.Stat(filepath.Join(o.Data, "keys", k)); err == nil {
			present = append(present, k)
		}
	}
	if len(present) == 0 {
		r.note("keys: none in %s (the install never started a server)", filepath.Join(o.Data, "keys"))
		return nil
	}
	r.problem("keys (%v): the PostgreSQL schema has no place for the server's keys yet; they stay in %s", present, filepath.Join(o.Data, "keys"))
	return nil
}
