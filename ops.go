package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
	"time"

	"folio/app"
	"folio/store"
	"folio/web"
)

// Operations defaults (docs/deploy.md).
const (
	defaultShutdownGrace = 30 * time.Second
	defaultMinFreeMB     = 100
)

// openOps gives the server its metrics, readiness checks and metrics token,
// and registers the gauges read from the stores at scrape time.
func (m *Main) openOps(docs *app.DocumentService) {
	c := &m.Config
	m.Server.Metrics = m.Metrics
	m.Server.MetricsToken = c.MetricsToken
	m.Server.TrustedProxies, _ = web.ParseTrustedProxies(c.TrustedProxies) // checked by validate
	minFree := uint64(max(c.MinFreeMB, 0)) << 20
	m.Server.Checks = []web.Check{
		{Name: "sqlite", Run: m.DB.Ping},
		{Name: "bbolt", Run: func(context.Context) error { return m.Bolt.Ping() }},
		{Name: "dataDir", Run: func(context.Context) error { return store.CheckWritable(c.Data) }},
		{Name: "disk", Run: func(context.Context) error { return store.CheckFreeSpace(c.Data, minFree) }},
		{Name: "workers", Run: func(context.Context) error {
			if docs.WorkersRunning() == 0 {
				return errors.New("no document worker is running")
			}
			return nil
		}},
	}

	reg := m.Metrics.Registry
	started := float64(time.Now().Unix())
	reg.NewGaugeFunc("folio_build_info", "The running binary's version, commit and build date (always 1).",
		[]string{"version", "commit", "date", "goversion"}, func(set func(float64, ...string)) {
			set(1, version, commit, date, runtime.Version())
		})
	reg.NewGaugeFunc("process_start_time_seconds", "Start time of the process since the Unix epoch.", nil,
		func(set func(float64, ...string)) { set(started) })
	reg.NewGaugeFunc("go_goroutines", "Goroutines that currently exist.", nil,
		func(set func(float64, ...string)) { set(float64(runtime.NumGoroutine())) })
	reg.NewGaugeFunc("folio_workers", "Document workers taking jobs.", nil,
		func(set func(float64, ...string)) { set(float64(docs.WorkersRunning())) })
	totals := &queueTotals{db: m.DB, now: m.Now}
	reg.NewGaugeFunc("folio_queue_jobs", "Unfinished jobs of all teams by state (pending: queued, processing: being rendered).",
		[]string{"state"}, func(set func(float64, ...string)) {
			if t := totals.get(); t != nil {
				set(float64(t.Pending), "pending")
				set(float64(t.Processing), "processing")
			}
		})
	reg.NewGaugeFunc("folio_queue_oldest_pending_age_seconds", "How long the oldest pending job has waited (0 when none waits).", nil,
		func(set func(float64, ...string)) {
			if t := totals.get(); t != nil {
				set(t.OldestPendingAge.Seconds())
			}
		})
	reg.NewGaugeFunc("folio_webhook_deliveries_pending", "Webhook deliveries with attempts still to make.", nil,
		func(set func(float64, ...string)) {
			if t := totals.get(); t != nil {
				set(float64(t.PendingDeliveries))
			}
		})
}

// queueTotals reads the queue figures once per scrape (three gauges share
// them) and at most once a second.
type queueTotals struct {
	db  *store.DB
	now func() time.Time

	mu   sync.Mutex
	at   time.Time
	last *store.QueueTotals
}

func (q *queueTotals) get() *store.QueueTotals {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.last != nil && time.Since(q.at) < time.Second {
		return q.last
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	t, err := q.db.QueueTotals(ctx, q.now())
	if err != nil {
		return nil // the series are absent from this scrape
	}
	q.at, q.last = time.Now(), t
	return t
}

// drain stops accepting connections and gives in-flight requests, running
// jobs and webhook attempts one shared grace period (--shutdown-grace) to
// end. Requests still open then are cut off; jobs and attempts still running
// are left queued for the next start.
func (m *Main) drain() {
	grace := m.Config.ShutdownGrace
	if grace <= 0 {
		grace = defaultShutdownGrace
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	switch {
	case m.Server != nil && m.served != nil:
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := m.Server.Shutdown(ctx); err != nil {
				m.Logger.Warn("shutdown grace over: closing connections still open", "grace", grace.String())
				m.Server.Close()
			}
		}()
	case m.ln != nil:
		m.ln.Close() // never served
	}
	for _, stop := range []func(context.Context){m.stopWorkers, m.stopDeliverer} {
		if stop != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				stop(ctx)
			}()
		}
	}
	wg.Wait()
	if m.Logger != nil && m.served != nil {
		m.Logger.Info("stopped serving and working", "duration_ms", time.Since(start).Milliseconds(), "grace_exceeded", ctx.Err() != nil)
	}
}

// reloadOnHangup reloads the TLS certificate and key files on SIGHUP, so a
// renewed certificate is served without a restart. On error the previous
// certificate stays. The returned function stops listening for the signal.
func reloadOnHangup(m *Main) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-hup:
				if err := m.Certs.Load(); err != nil {
					m.Logger.Error("certificate reload failed; the previous certificate stays", "cert", m.Certs.CertFile, "err", err)
				} else {
					m.Logger.Info("certificate reloaded", "cert", m.Certs.CertFile)
				}
			}
		}
	}()
	return func() { signal.Stop(hup); close(done) }
}
