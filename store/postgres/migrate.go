package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrations embed.FS

// migrateLock is the key of the session advisory lock the migration
// runner holds: replicas starting at once run it one after another, and
// each one after the first finds every migration recorded.
const migrateLock int64 = 0x466f6c696f4d6967 // "FolioMig"

// migrate applies, under the advisory lock, every migration of fsys not
// recorded in schema_migrations, each in its own transaction with its
// record. Migrations only move forward and are never edited once landed.
func migrate(ctx context.Context, pool *pgxpool.Pool, fsys fs.FS) error {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	// A session lock: held until unlocked or the connection ends, so a
	// runner that dies mid-way frees it with its connection.
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrateLock); err != nil {
		return fmt.Errorf("wait for the migration lock: %w", err)
	}
	defer func() {
		if _, err := conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, migrateLock); err != nil {
			conn.Conn().Close(context.Background()) // the lock goes with the connection
		}
	}()
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)`); err != nil {
		return err
	}
	applied, err := appliedMigrations(ctx, conn.Conn())
	if err != nil {
		return err
	}
	var unknown []string
	for _, name := range applied {
		if _, found := slices.BinarySearch(names, name); !found {
			unknown = append(unknown, strings.TrimPrefix(name, "migrations/"))
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("%w: the database has migrations this binary does not know (%s); run the newer folio",
			ErrSchemaNewer, strings.Join(unknown, ", "))
	}
	for _, name := range names {
		if slices.Contains(applied, name) {
			continue
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, string(body)); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (name, applied_at) VALUES ($1, $2)`, name, time.Now().UnixMilli())
			return err
		})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func appliedMigrations(ctx context.Context, conn *pgx.Conn) ([]string, error) {
	rows, err := conn.Query(ctx, `SELECT name FROM schema_migrations ORDER BY name`)
	if err != nil {
		return nil, err
	}
	return scanStrings(rows)
}

// ErrSchemaNewer reports a database migrated by a newer Folio.
var ErrSchemaNewer = errors.New("database schema is newer than this binary")

// Version returns the name of the last applied migration.
func (db *DB) Version(ctx context.Context) (string, error) {
	var v *string
	if err := db.pool.QueryRow(ctx, `SELECT MAX(name) FROM schema_migrations`).Scan(&v); err != nil || v == nil {
		return "", err
	}
	return *v, nil
}
