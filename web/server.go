// Package web is Folio's HTTP layer: the JSON API, its middleware and the
// dashboard, served over HTTPS.
package web

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"folio/app"
)

// Server serves the API over HTTPS.
type Server struct {
	Auth      *app.AuthService
	Keys      *app.KeyService
	Templates *app.TemplateService
	Documents *app.DocumentService
	Analytics *app.AnalyticsService
	Webhooks  *app.WebhookService
	Teams     *app.TeamService
	Accounts  *app.AccountService
	Assets    *app.AssetService
	Signing   *app.SigningService
	Logger    *slog.Logger
	// Rates is nil when rate limiting is off.
	Rates *RateLimits
	// Unavailable reports whether a store's error means the database
	// cannot be reached (PostgreSQL down or restarting): the request is
	// answered 503 ERR_STORAGE_002, not 500 (nil: no error means that).
	Unavailable func(error) bool
	// ReadHeaderTimeout and ReadTimeout bound slow clients (defaults 10 s and
	// 60 s): a client sending its headers or body a byte at a time is cut off.
	ReadHeaderTimeout, ReadTimeout time.Duration
	// Metrics records requests (nil: none); Checks are the readiness
	// checks of /readyz; MetricsToken guards /metrics and /debug/pprof
	// ("": loopback clients only). See web/ops.go.
	Metrics      *app.Metrics
	Checks       []Check
	MetricsToken string
	// TrustedProxies are the peers whose X-Forwarded-For names the client
	// (--trusted-proxies); none by default.
	TrustedProxies []netip.Prefix
	// Dashboard serves the HTML dashboard (web/dashboard) on its patterns
	// (dashboard.Patterns: /, /app/..., the mail links); nil: API only.
	Dashboard http.Handler

	mux     *http.ServeMux
	handler http.Handler
	build   sync.Once // builds mux and handler; Serve and Routes may race
	srvMu   sync.Mutex
	srv     *http.Server // under srvMu
	stopped bool         // under srvMu: Shutdown or Close ran, Serve must not start

	patterns []string // every route, for Routes
}

// Handler builds (once) and returns the full middleware stack and routes.
func (s *Server) Handler() http.Handler {
	s.build.Do(func() {
		s.mux = http.NewServeMux()
		s.routes()
		var h http.Handler = http.HandlerFunc(s.dispatch)
		h = templatePaths(h) // typed template paths -> canonical, before routing
		h = s.limitRequestSize(h)
		h = securityHeaders(h)
		h = recoverPanics(s.Logger, h)
		h = s.countRequests(h)
		h = logRequests(s.Logger, s.Unavailable, h)
		h = realClientIP(s.TrustedProxies, h)
		s.handler = h
	})
	return s.handler
}

// dispatch routes a request; unknown paths and wrong methods get the error
// envelope instead of the mux's plain-text answers.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) {
	if _, pattern := s.mux.Handler(r); pattern != "" {
		s.mux.ServeHTTP(w, r)
		return
	}
	if err := s.Rates.limitByIP(w, r, app.ClassOther); err != nil {
		writeError(w, r, s.Logger, err)
		return
	}
	rec := &headerOnly{header: http.Header{}}
	h, _ := s.mux.Handler(r)
	h.ServeHTTP(rec, r)
	switch rec.status {
	case http.StatusMethodNotAllowed:
		w.Header().Set("Allow", rec.header.Get("Allow"))
		writeError(w, r, s.Logger, (&app.Error{Code: app.ECodeMethodNotAllowed,
			Message: r.Method + " is not supported on " + r.URL.Path}).WithInfo("allowed", rec.header.Get("Allow")))
	case http.StatusMovedPermanently, http.StatusPermanentRedirect, http.StatusTemporaryRedirect:
		s.mux.ServeHTTP(w, r)
	default:
		writeError(w, r, s.Logger, &app.Error{Code: app.ECodeRouteNotFound, Message: "no route for " + r.Method + " " + r.URL.Path})
	}
}

// headerOnly records what the mux's fallback handler would answer.
type headerOnly struct {
	header http.Header
	status int
}

func (h *headerOnly) Header() http.Header         { return h.header }
func (h *headerOnly) Write(b []byte) (int, error) { return len(b), nil }
func (h *headerOnly) WriteHeader(code int)        { h.status = code }

// handlerFunc is a handler that returns its error for one adapter to write.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle registers a route with its access level.
func (s *Server) handle(pattern string, level access, fn handlerFunc) {
	s.patterns = append(s.patterns, pattern)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := fn(w, r); err != nil {
			writeError(w, r, s.Logger, err)
		}
	})
	authed := s.authenticate(level, classOf(pattern), h)
	s.mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info(r.Context()).route = pattern // for the metrics, also when authentication fails
		authed.ServeHTTP(w, r)
	}))
}

// Serve serves HTTPS on ln until Shutdown. certs supplies the certificate.
func (s *Server) Serve(ln net.Listener, cert func(*tls.ClientHelloInfo) (*tls.Certificate, error)) error {
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: or(s.ReadHeaderTimeout, 10*time.Second),
		ReadTimeout:       or(s.ReadTimeout, 60*time.Second),
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    MaxHeaderRead,
		ErrorLog:          slog.NewLogLogger(s.Logger.Handler(), slog.LevelWarn),
		TLSConfig: &tls.Config{
			MinVersion:     tls.VersionTLS12,
			GetCertificate: cert,
		},
	}
	s.srvMu.Lock()
	if s.stopped { // stopped before it started
		s.srvMu.Unlock()
		ln.Close()
		return nil
	}
	s.srv = srv
	s.srvMu.Unlock()
	err := srv.ServeTLS(ln, "", "")
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// stop marks the server stopped and returns the running http.Server, if any.
func (s *Server) stop() *http.Server {
	s.srvMu.Lock()
	defer s.srvMu.Unlock()
	s.stopped = true
	return s.srv
}

func or(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Shutdown stops accepting and waits for in-flight requests until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	srv := s.stop()
	if srv == nil {
		return nil
	}
	return srv.Shutdown(ctx)
}

// Close closes every connection at once, for when Shutdown's grace ran out.
func (s *Server) Close() error {
	srv := s.stop()
	if srv == nil {
		return nil
	}
	return srv.Close()
}
