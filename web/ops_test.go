package web

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"folio/app"
)

func opsServer(token string, checks ...Check) *Server {
	return &Server{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: app.NewMetrics(), MetricsToken: token, Checks: checks}
}

func serve(s *Server, method, path, remote, auth string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, nil)
	req.RemoteAddr = remote
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	return rec
}

// TestOperatorEndpointsLoopbackOnly: without --metrics-token, /metrics and
// /debug/pprof answer loopback clients only.
func TestOperatorEndpointsLoopbackOnly(t *testing.T) {
	s := opsServer("")
	for _, c := range []struct {
		remote string
		want   int
	}{{"127.0.0.1:5000", 200}, {"[::1]:5000", 200}, {"203.0.113.7:5000", 403}, {"10.0.0.8:5000", 403}} {
		for _, path := range []string{"/metrics", "/debug/pprof/"} {
			if rec := serve(s, "GET", path, c.remote, ""); rec.Code != c.want {
				t.Errorf("%s from %s: %d, want %d", path, c.remote, rec.Code, c.want)
			}
		}
	}
	// With a token, where the client is does not matter; the token does.
	s = opsServer("tok-123456")
	if rec := serve(s, "GET", "/metrics", "203.0.113.7:5000", "tok-123456"); rec.Code != 200 {
		t.Fatalf("remote with token: %d", rec.Code)
	}
	if rec := serve(s, "GET", "/metrics", "127.0.0.1:5000", ""); rec.Code != 401 {
		t.Fatalf("loopback without token when one is set: %d", rec.Code)
	}
}

func TestReadyzReportsEachCheck(t *testing.T) {
	s := opsServer("",
		Check{Name: "good", Run: func(context.Context) error { return nil }},
		Check{Name: "bad", Run: func(context.Context) error { return errors.New("disk on fire") }})
	rec := serve(s, "GET", "/readyz", "192.0.2.1:1", "")
	var body struct {
		Status string
		Checks map[string]checkResult
	}
	json.Unmarshal(rec.Body.Bytes(), &body)
	if rec.Code != http.StatusServiceUnavailable || body.Status != "not ready" || body.Checks["good"].Status != "ok" ||
		body.Checks["bad"].Status != "fail" || body.Checks["bad"].Error != "disk on fire" {
		t.Fatalf("readyz = %d %s", rec.Code, rec.Body)
	}
	if rec := serve(opsServer(""), "GET", "/readyz", "192.0.2.1:1", ""); rec.Code != 200 || !strings.Contains(rec.Body.String(), `"status":"ready"`) {
		t.Fatalf("no checks: %d %s", rec.Code, rec.Body)
	}
}

// TestRequestMetricsUseRoutePatterns: series are per route pattern, never
// per path, and paths without a route share one series.
func TestRequestMetricsUseRoutePatterns(t *testing.T) {
	s := opsServer("")
	serve(s, "GET", "/healthz", "192.0.2.1:1", "")
	serve(s, "GET", "/api/v1/documents/jobs/job_abc", "192.0.2.1:1", "") // 401: no token
	serve(s, "GET", "/api/v1/documents/jobs/job_def", "192.0.2.1:1", "")
	serve(s, "GET", "/api/what-is-this", "192.0.2.1:1", "")
	var b strings.Builder
	s.Metrics.Registry.WriteText(&b)
	out := b.String()
	for _, want := range []string{
		`folio_http_requests_total{route="GET /healthz",status="200"} 1`,
		`folio_http_requests_total{route="GET /api/v1/documents/jobs/{jobId}",status="401"} 2`,
		`folio_http_requests_total{route="unmatched",status="404"} 1`,
		`folio_http_request_duration_seconds_count{route="GET /healthz"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s in\n%s", want, out)
		}
	}
	if strings.Contains(out, "job_abc") || strings.Contains(out, "what-is-this") {
		t.Fatal("a path leaked into the metrics")
	}
}
