package web

import (
	"context"
	"crypto/subtle"
	_ "embed"
	"net"
	"net/http"
	"net/http/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"folio/app"
	"folio/app/metrics"
)

// OpenAPI is the API description served at /api/openapi.json, kept beside
// the routes it describes (openapi_test.go in the repository root checks
// that both list the same operations).
//
//go:embed openapi.json
var OpenAPI []byte

// Check is one readiness check of /readyz; Run returns nil when the part it
// checks can serve.
type Check struct {
	Name string
	Run  func(ctx context.Context) error
}

// checkTimeout bounds each readiness check: a probe that hangs is a failure.
const checkTimeout = 2 * time.Second

// Routes returns the pattern of every registered route, in registration order.
func (s *Server) Routes() []string {
	s.Handler()
	return slices.Clone(s.patterns)
}

// handleHealthz serves GET /healthz: the process is up and serving HTTP.
func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// checkResult is one check's entry in the /readyz answer.
type checkResult struct {
	Status     string  `json:"status"` // ok or fail
	Error      string  `json:"error,omitempty"`
	DurationMS float64 `json:"durationMs"`
}

// handleReadyz serves GET /readyz: 200 when every check passes, else 503
// (a probe endpoint, not the API: load balancers and orchestrators read 503
// as "take out of rotation"). Checks run concurrently, each within 2 s.
func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) error {
	results := make(map[string]checkResult, len(s.Checks))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, c := range s.Checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(r.Context(), checkTimeout)
			defer cancel()
			start := time.Now()
			err := runCheck(ctx, c)
			res := checkResult{Status: "ok", DurationMS: float64(time.Since(start).Microseconds()) / 1000}
			if err != nil {
				res.Status, res.Error = "fail", err.Error()
			}
			mu.Lock()
			results[c.Name] = res
			mu.Unlock()
		}()
	}
	wg.Wait()
	status, code := "ready", http.StatusOK
	for _, res := range results {
		if res.Status != "ok" {
			status, code = "not ready", http.StatusServiceUnavailable
		}
	}
	if code != http.StatusOK {
		s.Logger.Warn("not ready", "checks", results, "request_id", requestID(r.Context()))
	}
	writeJSON(w, code, map[string]any{"status": status, "checks": results})
	return nil
}

// runCheck runs c, giving up when ctx ends even if the check does not.
func runCheck(ctx context.Context, c Check) error {
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// handleMetrics serves GET /metrics in the Prometheus text format.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", metrics.ContentType)
	w.Header().Set("Cache-Control", "no-store")
	if s.Metrics == nil {
		return nil
	}
	return s.Metrics.Registry.WriteText(w)
}

// handlePprof serves GET /debug/pprof/ and the runtime profiles under it.
func (s *Server) handlePprof(w http.ResponseWriter, r *http.Request) error {
	switch strings.TrimPrefix(r.URL.Path, "/debug/pprof/") {
	case "cmdline":
		pprof.Cmdline(w, r)
	case "profile":
		pprof.Profile(w, r)
	case "symbol":
		pprof.Symbol(w, r)
	case "trace":
		pprof.Trace(w, r)
	default:
		pprof.Index(w, r)
	}
	return nil
}

// handleOpenAPI serves GET /api/openapi.json.
func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(OpenAPI)
	return nil
}

// operatorOnly guards /metrics and /debug/pprof: with --metrics-token the
// request must carry it as a Bearer token; without one only loopback clients
// are served (behind a reverse proxy on the same host every client looks
// local: set the token or block the paths at the proxy, docs/deploy.md).
func (s *Server) operatorOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.MetricsToken != "" {
			if subtle.ConstantTimeCompare([]byte(bearer(r)), []byte(s.MetricsToken)) != 1 {
				writeError(w, r, s.Logger, &app.Error{Code: app.ECodeUnauthenticated, Message: "this endpoint needs Authorization: Bearer <metrics token>"})
				return
			}
		} else if ip := net.ParseIP(clientIP(r)); ip == nil || !ip.IsLoopback() {
			writeError(w, r, s.Logger, &app.Error{Code: app.ECodeForbidden, Message: "this endpoint answers loopback clients only unless --metrics-token is set"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// countRequests records every request's route, status and duration, and
// rate-limit refusals, in the metrics.
func (s *Server) countRequests(next http.Handler) http.Handler {
	if s.Metrics == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		ri := info(r.Context())
		route := ri.route
		if route == "" {
			route = "unmatched" // unknown paths must not create a series each
		}
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		s.Metrics.Request(route, status, time.Since(start))
		if ri.code == app.ECodeRateLimited {
			s.Metrics.RateLimited(route)
		}
	})
}
