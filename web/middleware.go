package web

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"folio/app"
)

// reqInfo is filled in as a request passes through the middleware and read by
// the access log once it is done.
type reqInfo struct {
	id     string
	teamID string
	route  string // the matched route pattern ("" when none matched)
	code   string // the error code written, if any
	// isUnavailable is Server.Unavailable (nil: no error means that).
	isUnavailable func(error) bool
}

// unavailable reports whether err means the database cannot be reached.
func (ri *reqInfo) unavailable(err error) bool {
	return ri.isUnavailable != nil && ri.isUnavailable(err)
}

type reqInfoKey struct{}

func info(ctx context.Context) *reqInfo {
	ri, _ := ctx.Value(reqInfoKey{}).(*reqInfo)
	if ri == nil {
		return &reqInfo{}
	}
	return ri
}

func requestID(ctx context.Context) string { return info(ctx).id }

// statusWriter records the status and size of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// logRequests gives every request an id (X-Request-Id, kept when the client
// sends a sane one) and writes one log line when it ends.
func logRequests(logger *slog.Logger, unavailable func(error) bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if len(id) == 0 || len(id) > 64 || strings.ContainsFunc(id, func(c rune) bool { return c < 0x21 || c > 0x7e }) {
			id = app.RandomString(16)
		}
		ri := &reqInfo{id: id, isUnavailable: unavailable}
		w.Header().Set("X-Request-Id", id)
		sw := &statusWriter{ResponseWriter: w}
		ctx := app.WithRequestID(context.WithValue(r.Context(), reqInfoKey{}, ri), id) // jobs and webhooks log it too
		next.ServeHTTP(sw, r.WithContext(ctx))
		logger.Info("request", "method", r.Method, "path", r.URL.Path, "status", sw.status, "bytes", sw.bytes,
			"duration_ms", float64(time.Since(start).Microseconds())/1000, "team", ri.teamID, "request_id", id)
	})
}

// recoverPanics turns a handler panic into a logged 500 envelope.
func recoverPanics(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				logger.Error("panic", "method", r.Method, "path", r.URL.Path, "request_id", requestID(r.Context()),
					"panic", v, "stack", string(debug.Stack()))
				writeError(w, r, logger, &app.Error{Code: app.ECodeInternal, Message: "internal server error"})
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// Request size limits (SPEC.md, Payload limits). The server reads headers up
// to MaxHeaderRead so that requests a little over the limit still get the
// error envelope.
const (
	MaxURL        = 8 << 10
	MaxHeaders    = 16 << 10
	MaxHeaderRead = 64 << 10
)

// limitRequestSize refuses an over-long URL or header block before any work.
// Such a request is not authenticated (its headers are not trusted yet), so
// it counts against the client IP's budget, like other calls without valid
// authentication, and carries that budget's headers (429 once it is spent).
func (s *Server) limitRequestSize(next http.Handler) http.Handler {
	refuse := func(w http.ResponseWriter, r *http.Request, err error) {
		if lerr := s.Rates.limitByIP(w, r, app.ClassOther); lerr != nil {
			err = lerr
		}
		writeError(w, r, s.Logger, err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := len(r.RequestURI); n > MaxURL {
			refuse(w, r, (&app.Error{Code: app.ECodeURLTooLong, Message: "URL exceeds 8 KB"}).WithInfo("maxBytes", MaxURL, "actualBytes", n))
			return
		}
		n := 0
		for k, vs := range r.Header {
			for _, v := range vs {
				n += len(k) + len(v) + 4
			}
		}
		if n > MaxHeaders {
			refuse(w, r, (&app.Error{Code: app.ECodeHeadersTooLarge, Message: "request headers exceed 16 KB"}).WithInfo("maxBytes", MaxHeaders, "actualBytes", n))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// securityHeaders sets headers every response carries.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Strict-Transport-Security", "max-age=31536000")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}

// bearer returns the token of an Authorization: Bearer header.
func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// clientIP is the peer address; proxies are not trusted by default.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// access says who may call a route.
type access int

const (
	public  access = iota // no authentication
	jwtOnly               // dashboard login only
	anyAuth               // JWT or API key
	probe                 // health probes: no authentication, never rate limited
	opsOnly               // metrics and profiles: --metrics-token, else loopback clients (web/ops.go)
)

// authenticate resolves the caller for routes that need one and applies the
// rate limit: per team for authenticated calls, per client IP otherwise.
func (s *Server) authenticate(level access, class string, next http.Handler) http.Handler {
	switch level {
	case probe:
		return next
	case opsOnly:
		return s.operatorOnly(next)
	}
	if level == public {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := s.Rates.limitByIP(w, r, class); err != nil {
				writeError(w, r, s.Logger, err)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fail := func(err error) {
			if lerr := s.Rates.limitByIP(w, r, class); lerr != nil {
				err = lerr
			}
			writeError(w, r, s.Logger, err)
		}
		tok := bearer(r)
		if tok == "" {
			fail(&app.Error{Code: app.ECodeUnauthenticated, Message: "missing Authorization: Bearer header"})
			return
		}
		p, err := s.Auth.Authenticate(r.Context(), tok, r.Header.Get("X-Team-Id"))
		if err != nil {
			fail(err)
			return
		}
		info(r.Context()).teamID = p.TeamID
		if err := s.Rates.limitTeam(w, r, p, class); err != nil {
			writeError(w, r, s.Logger, err)
			return
		}
		if level == jwtOnly && p.Kind != app.AuthJWT {
			writeError(w, r, s.Logger, &app.Error{Code: app.ECodeJWTOnly, Message: "this endpoint needs a dashboard login (JWT); API keys cannot use it"})
			return
		}
		next.ServeHTTP(w, r.WithContext(app.WithPrincipal(r.Context(), p)))
	})
}
