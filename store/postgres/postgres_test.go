package postgres

import (
	"context"
	"os"
	"testing"

	"folio/app"
	"folio/internal/pgtest"
	"folio/store/storetest"
)

// TestMain stops the package's private PostgreSQL cluster (pgtest) after
// the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

// mustDB opens a fresh database, a copy of one migrated once.
func mustDB(tb testing.TB) *DB {
	tb.Helper()
	url := pgtest.NewDatabaseFrom(tb, "folio_migrated", func(url string) error {
		db, err := Open(context.Background(), url)
		if err != nil {
			return err
		}
		return db.Close()
	})
	db, err := Open(context.Background(), url)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// TestContract runs the backend-independent store cases (package
// storetest) on PostgreSQL; package store runs the same table on SQLite.
func TestContract(t *testing.T) {
	storetest.Run(t, func(tb testing.TB) storetest.Store { return mustDB(tb) })
}

// TestQueueContract runs the queue cases on the PostgreSQL queue.
func TestQueueContract(t *testing.T) {
	storetest.RunQueue(t, func(tb testing.TB) app.Queue { return mustDB(tb) })
}

// TestScheduleContract runs the webhook schedule cases on PostgreSQL.
func TestScheduleContract(t *testing.T) {
	storetest.RunSchedule(t, func(tb testing.TB) app.WebhookSchedule { return mustDB(tb) })
}

// TestRateContract runs the rate-limit window cases on the windows every
// replica shares.
func TestRateContract(t *testing.T) {
	storetest.RunRate(t, func(tb testing.TB) app.RateWindows { return mustDB(tb) })
}

// TestSecretsContract runs the key cases on the secrets table.
func TestSecretsContract(t *testing.T) {
	storetest.RunSecrets(t, func(tb testing.TB) app.Secrets { return mustDB(tb) })
}
