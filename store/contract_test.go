package store

import (
	"context"
	"path/filepath"
	"testing"

	"folio/app"
	"folio/store/storetest"
)

// TestContract runs the backend-independent store cases (package
// storetest) on SQLite; store/postgres runs the same table on PostgreSQL.
func TestContract(t *testing.T) {
	storetest.Run(t, func(tb testing.TB) storetest.Store { return mustDB(tb) })
}

// TestQueueContract runs the queue cases on the bbolt queue.
func TestQueueContract(t *testing.T) {
	storetest.RunQueue(t, func(tb testing.TB) app.Queue { return mustBolt(tb, filepath.Join(tb.TempDir(), "q.db")) })
}

// TestScheduleContract runs the webhook schedule cases on bbolt.
func TestScheduleContract(t *testing.T) {
	storetest.RunSchedule(t, func(tb testing.TB) app.WebhookSchedule { return mustBolt(tb, filepath.Join(tb.TempDir(), "q.db")) })
}

// TestHookContract runs the webhook and signing certificate cases on
// SQLite; events enter the outbox as FinishJob stores them.
func TestHookContract(t *testing.T) {
	storetest.RunHooks(t, func(tb testing.TB) (storetest.HookStore, storetest.Outbox) {
		db := mustDB(tb)
		return db, func(ctx context.Context, events ...*app.Event) error {
			return db.tx(ctx, func(tx *Tx) error { return insertEvents(ctx, tx, events) })
		}
	})
}

// TestRateContract runs the rate-limit window cases on the embedded
// limiter's windows (memory, saved to bbolt by app.PersistLimiter).
func TestRateContract(t *testing.T) {
	storetest.RunRate(t, func(testing.TB) app.RateWindows { return app.NewMemoryLimiter() })
}

// TestSecretsContract runs the key cases on the files of <data>/keys.
func TestSecretsContract(t *testing.T) {
	storetest.RunSecrets(t, func(tb testing.TB) app.Secrets { return KeyDir(filepath.Join(tb.TempDir(), "keys")) })
}
