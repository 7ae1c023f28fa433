package web

import (
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"folio/app"
)

func TestClassOf(t *testing.T) {
	for pattern, want := range map[string]string{
		"POST /api/v1/documents/generate":              app.ClassGenerate,
		"POST /api/v1/documents/generate/batch":        app.ClassBatch,
		"GET /api/v1/documents/jobs":                   app.ClassRead,
		"GET /api/v1/documents/jobs/{jobId}":           app.ClassRead,
		"GET /api/templates":                           app.ClassRead,
		"GET /api/templates/{id}/versions":             app.ClassRead,
		"GET /api/v1/templates/{id}":                   app.ClassRead,
		"GET /api/v1/documents/jobs/{jobId}/download":  app.ClassDownload,
		"GET /api/v1/documents/batches/{batchId}":      app.ClassOther,
		"GET /api/v1/documents/jobs/export":            app.ClassOther,
		"POST /api/v1/documents/jobs/{jobId}/retry":    app.ClassOther,
		"POST /api/templates":                          app.ClassOther,
		"POST /api/templates/{id}/preview":             app.ClassOther,
		"DELETE /api/v1/documents/jobs/{jobId}":        app.ClassOther,
		"GET /api/users/me":                            app.ClassOther,
		"POST /api/v1/webhook-subscriptions/{id}/test": app.ClassOther,
	} {
		if got := classOf(pattern); got != want {
			t.Errorf("classOf(%q) = %s, want %s", pattern, got, want)
		}
	}
}

// TestLimitTeamSet2 checks each class × authentication kind of Set 2 through
// the middleware's check: the limit in the headers, the last admitted call,
// the refused one; and that every key (or member) of a team shares a count.
func TestLimitTeamSet2(t *testing.T) {
	now := time.Date(2026, 3, 10, 9, 15, 0, 0, time.UTC)
	want := map[string]map[string]int{
		app.ClassGenerate: {app.AuthKey: 100, app.AuthJWT: 100},
		app.ClassBatch:    {app.AuthKey: 10, app.AuthJWT: 10},
		app.ClassRead:     {app.AuthKey: 300, app.AuthJWT: 300},
		app.ClassOther:    {app.AuthKey: 1000, app.AuthJWT: 500},
	}
	for class, kinds := range want {
		for kind, limit := range kinds {
			rl := &RateLimits{Table: app.DefaultRateTable(), Limiter: &app.RateLimiter{Windows: app.NewMemoryLimiter(), CountRefused: true}, Now: func() time.Time { return now }}
			// Two callers of one team: two keys, or two members.
			a := &app.Principal{Kind: kind, TeamID: "team_a", UserID: "usr_1", KeyID: "key_1"}
			b := &app.Principal{Kind: kind, TeamID: "team_a", UserID: "usr_2", KeyID: "key_2"}
			for i := 1; i <= limit; i++ {
				p := a
				if i%2 == 0 {
					p = b
				}
				w := httptest.NewRecorder()
				if err := rl.limitTeam(w, httptest.NewRequest("GET", "/", nil), p, class); err != nil {
					t.Fatalf("%s/%s: call %d refused: %v", class, kind, i, err)
				}
				if i == 1 || i == limit {
					if w.Header().Get("X-RateLimit-Limit") != strconv.Itoa(limit) || w.Header().Get("X-RateLimit-Remaining") != strconv.Itoa(limit-i) ||
						w.Header().Get("X-RateLimit-Reset") != strconv.FormatInt(now.Add(time.Minute).Unix(), 10) {
						t.Fatalf("%s/%s: call %d headers %v", class, kind, i, w.Header())
					}
				}
			}
			w := httptest.NewRecorder()
			err := rl.limitTeam(w, httptest.NewRequest("GET", "/", nil), b, class)
			if app.ErrorCode(err) != app.ECodeRateLimited || w.Header().Get("Retry-After") == "" {
				t.Fatalf("%s/%s: call %d: %v, headers %v", class, kind, limit+1, err, w.Header())
			}
			// Another team, and the other kind, have their own counts.
			if err := rl.limitTeam(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil), &app.Principal{Kind: kind, TeamID: "team_b"}, class); err != nil {
				t.Fatalf("%s/%s: another team was limited: %v", class, kind, err)
			}
			other := app.AuthJWT
			if kind == app.AuthJWT {
				other = app.AuthKey
			}
			if err := rl.limitTeam(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil), &app.Principal{Kind: other, TeamID: "team_a"}, class); err != nil {
				t.Fatalf("%s/%s: the %s column was limited too: %v", class, kind, other, err)
			}
		}
	}
}

func TestRateLimitsOff(t *testing.T) {
	var rl *RateLimits // --rate-limits off
	w := httptest.NewRecorder()
	for i := 0; i < 100; i++ {
		if err := rl.limitTeam(w, httptest.NewRequest("GET", "/", nil), &app.Principal{Kind: app.AuthKey, TeamID: "t"}, app.ClassBatch); err != nil {
			t.Fatal(err)
		}
		if err := rl.limitByIP(w, httptest.NewRequest("GET", "/", nil), app.ClassOther); err != nil {
			t.Fatal(err)
		}
	}
	if len(w.Header()) != 0 {
		t.Fatalf("headers with limits off: %v", w.Header())
	}
}
