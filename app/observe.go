package app

import (
	"context"
	"runtime"
	"strconv"
	"sync"
	"time"

	"folio/app/metrics"
)

// Metrics are Folio's operational measurements, served at /metrics. A nil
// *Metrics records nothing, so services and tests need not set one.
type Metrics struct {
	Registry *metrics.Registry

	requests    *metrics.Counter
	latency     *metrics.Histogram
	rateLimited *metrics.Counter
	documents   *metrics.Counter
	render      *metrics.Histogram
	webhooks    *metrics.Counter
}

// Webhook attempt outcomes (the label of folio_webhook_attempts_total).
const (
	WebhookSuccess   = "success"    // 2xx
	WebhookHTTPError = "http_error" // the receiver answered, not 2xx
	WebhookNetError  = "error"      // timeout, refused, TLS, non-public address
	WebhookSkipped   = "skipped"    // not sent: subscription disabled, payload too large
)

// NewMetrics registers Folio's series in a new registry. Gauges that need
// the stores (queue depth) are added by the caller.
func NewMetrics() *Metrics {
	r := metrics.NewRegistry()
	latency := []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}
	renders := []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120}
	return &Metrics{
		Registry: r,
		requests: r.NewCounter("folio_http_requests_total",
			"HTTP requests by route pattern and status; unmatched paths count as route \"unmatched\".", "route", "status"),
		latency: r.NewHistogram("folio_http_request_duration_seconds",
			"Time from the request's arrival to the end of its response, by route pattern.", latency, "route"),
		rateLimited: r.NewCounter("folio_rate_limited_requests_total",
			"Requests refused with ERR_QUOTA_003 (rate limits and login throttling), by route pattern.", "route"),
		documents: r.NewCounter("folio_documents_total",
			"Documents that ended, by format and status (completed or failed).", "format", "status"),
		render: r.NewHistogram("folio_render_duration_seconds",
			"Time a worker spent on a document (template load, render, file write), by format.", renders, "format"),
		webhooks: r.NewCounter("folio_webhook_attempts_total",
			"Webhook delivery attempts by outcome: success, http_error, error (network, TLS, timeout) or skipped.", "outcome"),
	}
}

// Request records one finished HTTP request.
func (m *Metrics) Request(route string, status int, d time.Duration) {
	if m == nil {
		return
	}
	m.requests.Inc(route, strconv.Itoa(status))
	m.latency.Observe(d.Seconds(), route)
}

// EachRequest calls fn with every route pattern and status answered so far
// ("unmatched" for paths no route matched). The API tests compare these with
// the statuses web/openapi.json declares.
func (m *Metrics) EachRequest(fn func(route string, status int)) {
	if m == nil {
		return
	}
	m.requests.Each(func(v []string, _ uint64) {
		status, _ := strconv.Atoi(v[1])
		fn(v[0], status)
	})
}

// RateLimited records a request refused by a rate limit.
func (m *Metrics) RateLimited(route string) {
	if m == nil {
		return
	}
	m.rateLimited.Inc(route)
}

// DocumentEnded records a job's end and how long the worker spent on it.
func (m *Metrics) DocumentEnded(format, status string, d time.Duration) {
	if m == nil {
		return
	}
	m.documents.Inc(format, status)
	m.render.Observe(d.Seconds(), format)
}

// WebhookAttempt records one delivery attempt's outcome.
func (m *Metrics) WebhookAttempt(outcome string) {
	if m == nil {
		return
	}
	m.webhooks.Inc(outcome)
}

// Documents returns the count of ended documents of a format and status.
func (m *Metrics) Documents(format, status string) uint64 { return m.documents.Value(format, status) }

// ObserveProcess registers the gauges describing the running binary: its
// version, commit and build date, its start time and its goroutines.
func (m *Metrics) ObserveProcess(version, commit, date string, started time.Time) {
	reg := m.Registry
	start := float64(started.Unix())
	reg.NewGaugeFunc("folio_build_info", "The running binary's version, commit and build date (always 1).",
		[]string{"version", "commit", "date", "goversion"}, func(set func(float64, ...string)) {
			set(1, version, commit, date, runtime.Version())
		})
	reg.NewGaugeFunc("process_start_time_seconds", "Start time of the process since the Unix epoch.", nil,
		func(set func(float64, ...string)) { set(start) })
	reg.NewGaugeFunc("go_goroutines", "Goroutines that currently exist.", nil,
		func(set func(float64, ...string)) { set(float64(runtime.NumGoroutine())) })
}

// QueueTotals are the server-wide queue figures of /metrics.
type QueueTotals struct {
	Pending, Processing int
	// OldestPendingAge is how long the oldest pending job has waited (0: none).
	OldestPendingAge  time.Duration
	PendingDeliveries int
}

// ObserveQueue registers the gauges of the running document workers, the
// unfinished jobs and the pending webhook deliveries. The queue figures are
// read by totals at most once a second (three gauges share a reading); when
// a reading fails, its series are absent from that scrape.
func (m *Metrics) ObserveQueue(workers func() int, totals func(context.Context) (*QueueTotals, error)) {
	reg := m.Registry
	q := &queueReader{read: totals}
	reg.NewGaugeFunc("folio_workers", "Document workers taking jobs.", nil,
		func(set func(float64, ...string)) { set(float64(workers())) })
	reg.NewGaugeFunc("folio_queue_jobs", "Unfinished jobs of all teams by state (pending: queued, processing: being rendered).",
		[]string{"state"}, func(set func(float64, ...string)) {
			if t := q.get(); t != nil {
				set(float64(t.Pending), "pending")
				set(float64(t.Processing), "processing")
			}
		})
	reg.NewGaugeFunc("folio_queue_oldest_pending_age_seconds", "How long the oldest pending job has waited (0 when none waits).", nil,
		func(set func(float64, ...string)) {
			if t := q.get(); t != nil {
				set(t.OldestPendingAge.Seconds())
			}
		})
	reg.NewGaugeFunc("folio_webhook_deliveries_pending", "Webhook deliveries with attempts still to make.", nil,
		func(set func(float64, ...string)) {
			if t := q.get(); t != nil {
				set(float64(t.PendingDeliveries))
			}
		})
}

// queueReader reads the queue figures once per scrape and at most once a
// second.
type queueReader struct {
	read func(context.Context) (*QueueTotals, error)

	mu   sync.Mutex
	at   time.Time
	last *QueueTotals
}

func (q *queueReader) get() *QueueTotals {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.last != nil && time.Since(q.at) < time.Second {
		return q.last
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	t, err := q.read(ctx)
	if err != nil {
		return nil
	}
	q.at, q.last = time.Now(), t
	return t
}

type requestIDKey struct{}

// WithRequestID returns a context carrying the id of the HTTP request that
// caused the work, so jobs and webhook deliveries can log it.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestIDFrom returns the request id in ctx, or "".
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}
