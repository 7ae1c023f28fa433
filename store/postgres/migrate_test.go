package postgres

import (
	"context"
	"fmt"
	"io/fs"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5/pgxpool"

	"folio/internal/pgtest"
)

func mustPool(tb testing.TB, url string) *pgxpool.Pool {
	tb.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	return pool
}

// TestMigrationsRunOnceAcrossReplicas: eight replicas starting at once
// against one empty database each run the migration runner; every runner
// succeeds and each migration ran exactly once. The migrations of the
// test count their own runs into a table, and the second sleeps, so the
// runners overlap while one of them holds the advisory lock.
func TestMigrationsRunOnceAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	fsys := fstest.MapFS{
		"migrations/0001_a.sql": {Data: []byte(`CREATE TABLE runs (name TEXT NOT NULL); INSERT INTO runs VALUES ('0001');`)},
		"migrations/0002_b.sql": {Data: []byte(`SELECT pg_sleep(0.2); CREATE TABLE b (x INT); INSERT INTO runs VALUES ('0002');`)},
		"migrations/0003_c.sql": {Data: []byte(`INSERT INTO runs VALUES ('0003');`)},
	}
	const replicas = 8
	errs := make([]error, replicas)
	var wg sync.WaitGroup
	for i := range replicas {
		pool := mustPool(t, url) // each replica its own pool and connections
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = migrate(ctx, pool, fsys)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
	}
	pool := mustPool(t, url)
	rows, err := pool.Query(ctx, `SELECT name, COUNT(*) FROM runs GROUP BY name ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var name string
		var n int
		if err := rows.Scan(&name, &n); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s×%d", name, n))
	}
	if fmt.Sprint(got) != "[0001×1 0002×1 0003×1]" {
		t.Fatalf("migration runs %v, want each once", got)
	}
	var recorded int
	if err := pool.QueryRow(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&recorded); err != nil || recorded != 3 {
		t.Fatalf("schema_migrations holds %d rows (%v), want 3", recorded, err)
	}
	// The lock is free again: no session still holds it.
	var held int
	if err := pool.QueryRow(ctx, `SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory'`).Scan(&held); err != nil || held != 0 {
		t.Fatalf("%d advisory locks held after the runners (%v)", held, err)
	}
}

// TestOpenMigratesConcurrently: the real migrations, from replicas opening
// one database at once, all end recorded once and at this binary's last.
func TestOpenMigratesConcurrently(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	names, _ := fs.Glob(migrations, "migrations/*.sql")
	const replicas = 4
	dbs := make([]*DB, replicas)
	errs := make([]error, replicas)
	var wg sync.WaitGroup
	for i := range replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dbs[i], errs[i] = Open(ctx, url)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
		defer dbs[i].Close()
	}
	v, err := dbs[0].Version(ctx)
	if err != nil || v != names[len(names)-1] {
		t.Fatalf("version %q %v, want %s", v, err, names[len(names)-1])
	}
	var n int
	if err := dbs[0].pool.QueryRow(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&n); err != nil || n != len(names) {
		t.Fatalf("%d migrations recorded (%v), want %d", n, err, len(names))
	}
}

// TestRefuseNewerSchema: a database migrated by a newer Folio (a
// migration this binary lacks) is refused at start.
func TestRefuseNewerSchema(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	if _, err := db.pool.Exec(ctx, `INSERT INTO schema_migrations VALUES ('migrations/9999_future.sql', 0)`); err != nil {
		t.Fatal(err)
	}
	_, err := Open(ctx, db.pool.Config().ConnString())
	if err == nil || !errorsIs(err, ErrSchemaNewer) {
		t.Fatalf("open: %v, want ErrSchemaNewer", err)
	}
}
