package app

import (
	"context"
	"strconv"
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
