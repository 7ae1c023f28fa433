package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"folio/app"
	"folio/store"
	"folio/store/postgres"
)

// records is every store the services are wired to: app's storage
// interfaces, which store.DB (SQLite) and postgres.DB both implement.
type records interface {
	app.UserStore
	app.TokenStore
	app.SessionStore
	app.TeamStore
	app.InvitationStore
	app.KeyStore
	app.AccountStore
	app.TwoFactorStore
	app.ActivityStore
	app.TemplateStore
	app.AssetStore
	app.JobStore
	app.BatchStore
	app.UsageStore
	app.AnalyticsStore
	app.DashboardStore
	app.WebhookStore
	app.MetaGenerations
	app.SigningCertificateStore
	Ping(context.Context) error
}

// backend is where one server keeps its state: the embedded set (SQLite,
// bbolt, key files in --data) or the shared one (PostgreSQL for all of
// it, so any number of replicas serve the same teams). Open wires the
// services to it the same way in both modes.
type backend struct {
	name     string // readiness check: "sqlite" or "postgres"
	records  records
	queue    app.Queue
	schedule app.WebhookSchedule
	// queueTotals feeds the queue gauges of /metrics (nil: none).
	queueTotals func(ctx context.Context) (*app.QueueTotals, error)
	// trimIdle gives back what the store kept for a load (nil: nothing to
	// do).
	trimIdle func()
	// authRates and apiRates keep the embedded login throttles' and API
	// rate limits' windows across restarts (unused when Main.RateWindows
	// is set).
	authRates, apiRates app.RateStore
}

// openBackend opens the embedded stores (m.DB, m.Bolt) or, with
// --database-url, PostgreSQL (m.PG).
func (m *Main) openBackend(ctx context.Context) (*backend, error) {
	c := &m.Config
	if c.DatabaseURL != "" {
		return m.openPostgres(ctx)
	}
	var err error
	if m.DB, err = store.Open(ctx, filepath.Join(c.Data, "folio.db")); err != nil {
		return nil, err
	}
	if m.Bolt, err = store.OpenBolt(filepath.Join(c.Data, "queue.db")); err != nil {
		return nil, err
	}
	m.backfillRollups(ctx)
	return &backend{
		name: "sqlite", records: m.DB, queue: m.Bolt, schedule: m.Bolt,
		queueTotals: func(ctx context.Context) (*app.QueueTotals, error) { return m.DB.QueueTotals(ctx, m.Now()) },
		trimIdle:    m.trimSQLite,
		authRates:   m.Bolt.AuthLimits(),
		apiRates:    m.Bolt,
	}, nil
}

// trimSQLite is the idle trim's hook for the embedded store. It waits for
// the writer connection at most trimWait: a maintenance step holding it
// longer means the server is not idle, and the next load's end trims again.
func (m *Main) trimSQLite() {
	ctx, cancel := context.WithTimeout(context.Background(), trimWait)
	defer cancel()
	if err := m.DB.TrimIdle(ctx); err != nil {
		m.Logger.Warn("idle trim: SQLite's memory not returned", "err", err)
	}
}

// trimWait bounds trimSQLite's wait for the writer.
const trimWait = 5 * time.Second

// openPostgres connects to --database-url (migrating it, once however
// many replicas start together) and checks that the backend provides
// every part the server wires; validate refused earlier when it does not.
func (m *Main) openPostgres(ctx context.Context) (*backend, error) {
	var err error
	if m.PG, err = postgres.Open(ctx, m.Config.DatabaseURL); err != nil {
		return nil, fmt.Errorf("--database-url: %w", err)
	}
	b := &backend{name: "postgres", queue: m.PG}
	var ok bool
	if b.records, ok = any(m.PG).(records); !ok {
		return nil, fmt.Errorf("--database-url: the PostgreSQL backend lacks a store (postgres.Missing)")
	}
	if b.schedule, ok = any(m.PG).(app.WebhookSchedule); !ok {
		return nil, fmt.Errorf("--database-url: the PostgreSQL backend lacks the webhook schedule")
	}
	// The keys, the rate-limit windows and the janitor's turn are the
	// database's too, so that every replica signs, counts and sweeps as one.
	if m.Secrets, ok = any(m.PG).(app.Secrets); !ok {
		return nil, fmt.Errorf("--database-url: the PostgreSQL backend does not keep the keys")
	}
	if m.RateWindows, ok = any(m.PG).(app.RateWindows); !ok {
		return nil, fmt.Errorf("--database-url: the PostgreSQL backend does not keep the rate-limit windows")
	}
	if m.Tasks, ok = any(m.PG).(app.TaskLock); !ok {
		return nil, fmt.Errorf("--database-url: the PostgreSQL backend has no task lock for the janitor")
	}
	if q, ok := any(m.PG).(interface {
		QueueTotals(context.Context, time.Time) (*app.QueueTotals, error)
	}); ok {
		b.queueTotals = func(ctx context.Context) (*app.QueueTotals, error) { return q.QueueTotals(ctx, m.Now()) }
	}
	return b, nil
}
