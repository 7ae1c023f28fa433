package web

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"folio/app"
)

// RateLimits applies the rate-limit table. A nil *RateLimits (--rate-limits
// off) limits nothing and sets no headers.
type RateLimits struct {
	Table   *app.RateTable
	Limiter app.Limiter
	Now     func() time.Time
}

// classOf maps a route pattern to its rate-limit class.
func classOf(pattern string) string {
	method, path, _ := strings.Cut(pattern, " ")
	switch {
	case pattern == "POST /api/v1/documents/generate":
		return app.ClassGenerate
	case pattern == "POST /api/v1/documents/generate/batch":
		return app.ClassBatch
	case pattern == "GET /api/v1/documents/jobs/{jobId}/download":
		return app.ClassDownload
	case method == "GET" && (path == "/api/v1/documents/jobs" || path == "/api/v1/documents/jobs/{jobId}" ||
		strings.HasPrefix(path, "/api/templates") || strings.HasPrefix(path, "/api/v1/templates")):
		return app.ClassRead
	}
	return app.ClassOther
}

// check counts one request for key and writes the rate-limit headers; it
// returns ERR_QUOTA_003 when the request is over the limit.
func (rl *RateLimits) check(w http.ResponseWriter, r *http.Request, key string, limit int) error {
	if rl == nil {
		return nil
	}
	d, err := rl.Limiter.Allow(r.Context(), key, limit, rl.Table.Window(), rl.Now())
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(d.Limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(d.Remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(d.ResetAt.Unix(), 10))
	if !d.Allowed {
		err := app.ErrRateLimited(d)
		// Set here too, for the dashboard's pages (the API's envelope sets it as well).
		h.Set("Retry-After", strconv.Itoa(err.Info["retryAfterSeconds"].(int)))
		return err
	}
	return nil
}

// limitByIP counts a request that has no (valid) authentication.
func (rl *RateLimits) limitByIP(w http.ResponseWriter, r *http.Request, class string) error {
	if rl == nil {
		return nil
	}
	if class == app.ClassDownload {
		return rl.check(w, r, "ip:"+clientIP(r)+":download", rl.Table.Download)
	}
	return rl.check(w, r, "ip:"+clientIP(r), rl.Table.Unauthenticated)
}

// limitTeam counts an authenticated request against its team's shared
// budget for the class and authentication kind: every key of a team shares
// the key column, every member (API JWT or dashboard session) the JWT one.
func (rl *RateLimits) limitTeam(w http.ResponseWriter, r *http.Request, p *app.Principal, class string) error {
	if rl == nil {
		return nil
	}
	kind := app.KindJWT
	if p.Kind == app.AuthKey {
		kind = app.KindKey
	}
	return rl.check(w, r, "team:"+p.TeamID+":"+kind+":"+class, rl.Table.Limit(class, kind))
}
