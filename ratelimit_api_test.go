package main

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// stepClock is a clock for Main.Now that the test sets; each reading moves
// it on by a microsecond (as time does), so files written in one test step
// still sort in order.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Microsecond)
	return c.t
}

func (c *stepClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func (c *stepClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// startAt starts a server whose clock starts at t.
func startAt(t *testing.T, at time.Time, opts ...func(*Config)) (*testServer, *stepClock) {
	t.Helper()
	clock := &stepClock{t: at}
	return startMain(t, &Main{Now: clock.Now}, opts...), clock
}

// TestRateLimitRefusedCallsCount: refused calls count too, so a client that
// keeps calling while limited stays limited into the next window; and a
// client that waits exactly Retry-After is admitted.
func TestRateLimitRefusedCallsCount(t *testing.T) {
	file := rateFile(t, `{"classes": {"other": {"jwt": 3}}}`)
	s, clock := startAt(t, time.Date(2026, 3, 10, 9, 15, 0, 0, time.UTC), func(c *Config) { c.RateLimits = file })
	u := s.signup("Persistent")
	for i := 0; i < 3; i++ {
		s.must(200, "GET", "/api/users/me", u.token, nil)
	}
	for i := 0; i < 3; i++ {
		s.wantError(s.do("GET", "/api/users/me", u.token, nil), 429, "ERR_QUOTA_003")
	}
	// Half-way through the next minute the last one weighs half: 6 calls
	// (3 of them refused) give 3 + 1 > 3. Counting only admitted calls
	// would give 1.5 + 1 and admit this one.
	clock.Set(time.Date(2026, 3, 10, 9, 16, 30, 0, time.UTC))
	r := s.do("GET", "/api/users/me", u.token, nil)
	s.wantError(r, 429, "ERR_QUOTA_003")
	// This refusal counts as well: 6·(1 − x) + 1 ≤ 2 at x = 5/6, 20 s on.
	ra, _ := strconv.Atoi(r.header.Get("Retry-After"))
	if ra != 20 || r.str("relatedInfo.retryAfterSeconds") != "20" || r.str("retryAfter") != "20" ||
		r.get("relatedInfo.resetAt") != float64(time.Date(2026, 3, 10, 9, 17, 0, 0, time.UTC).Unix()) {
		t.Fatalf("Retry-After %q, body %s", r.header.Get("Retry-After"), r.raw)
	}
	clock.Add(time.Duration(ra) * time.Second)
	r = s.must(200, "GET", "/api/users/me", u.token, nil)
	if r.header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("after Retry-After: %v", r.header)
	}
}

// TestRateLimitSharedByTeam: all keys of a team share one count, and so do
// all its members' JWTs (X-Team-Id); the caller's other teams are apart.
func TestRateLimitSharedByTeam(t *testing.T) {
	file := rateFile(t, `{"classes": {"read": {"key": 4, "jwt": 4}}}`)
	s, _ := startAt(t, time.Date(2026, 3, 10, 9, 15, 0, 0, time.UTC), func(c *Config) { c.RateLimits = file })
	owner, member := s.verifiedUser("Owner"), s.verifiedUser("Member")
	team := s.newTeam(owner, "Shared")
	s.join(owner, team, member, "member")
	hdr := []string{"X-Team-Id", team}
	mkKey := func() string {
		return s.must(200, "POST", "/api/api-keys", owner.token, map[string]any{"name": "k"}, hdr...).str("plainKey")
	}
	k1, k2 := mkKey(), mkKey()
	const jobs = "/api/v1/documents/jobs"
	s.must(200, "GET", jobs, k1, nil)
	s.must(200, "GET", jobs, k2, nil)
	s.must(200, "GET", jobs, k1, nil)
	if r := s.must(200, "GET", jobs, k2, nil); r.header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("the second key has its own count: %v", r.header)
	}
	s.wantError(s.do("GET", jobs, k1, nil), 429, "ERR_QUOTA_003")

	s.must(200, "GET", jobs, owner.token, nil, hdr...)
	s.must(200, "GET", jobs, member.token, nil, hdr...)
	s.must(200, "GET", jobs, owner.token, nil, hdr...)
	if r := s.must(200, "GET", jobs, member.token, nil, hdr...); r.header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("the member has their own count: %v", r.header)
	}
	s.wantError(s.do("GET", jobs, owner.token, nil, hdr...), 429, "ERR_QUOTA_003")
	// The owner's personal team is another team.
	s.must(200, "GET", jobs, owner.token, nil)
}

// TestRateLimitsOff: --rate-limits off refuses nothing and sets no headers.
func TestRateLimitsOff(t *testing.T) {
	s := startServer(t, func(c *Config) { c.RateLimits = "off" })
	u := s.signup("Free")
	for i := 0; i < 70; i++ { // Set 2 allows 60 unauthenticated calls a minute
		r := s.do("GET", "/api/users/me", "", nil)
		s.wantError(r, 401, "ERR_AUTH_003")
		for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"} {
			if r.header.Get(h) != "" {
				t.Fatalf("%s set with rate limits off: %v", h, r.header)
			}
		}
	}
	r := s.must(200, "GET", "/api/users/me", u.token, nil)
	if r.header.Get("X-RateLimit-Limit") != "" {
		t.Fatalf("authenticated call has rate-limit headers: %v", r.header)
	}
	r = s.do("GET", "/api/users/me?x="+strings.Repeat("a", 8<<10), "", nil)
	if r.status != 400 || r.header.Get("X-RateLimit-Limit") != "" {
		t.Fatalf("over-long URL with rate limits off: %d %v", r.status, r.header)
	}
}

// TestRateLimitDashboardSessions: the dashboard's signed-in requests count
// against the team's JWT budget like API calls, in the same classes, and
// carry the headers.
func TestRateLimitDashboardSessions(t *testing.T) {
	file := rateFile(t, `{"classes": {"generate": {"jwt": 2}, "read": {"jwt": 50}, "other": {"jwt": 40}}}`)
	s, _ := startAt(t, time.Date(2026, 3, 10, 9, 15, 0, 0, time.UTC), func(c *Config) { c.RateLimits = file })
	u := s.signup("Clicker")
	tpl := s.createTemplate(u.token, "Letter", invoiceTemplate)
	c := dashClient(t, s)
	c.login(u)

	home := c.get("/app/")
	if home.StatusCode != 200 || home.Header.Get("X-RateLimit-Limit") != "40" || home.Header.Get("X-RateLimit-Remaining") == "" || home.Header.Get("X-RateLimit-Reset") == "" {
		t.Fatalf("home page: %d %v", home.StatusCode, home.Header)
	}
	list := c.get("/app/templates")
	if list.Header.Get("X-RateLimit-Limit") != "50" || list.Header.Get("X-RateLimit-Remaining") != "49" {
		t.Fatalf("template list (read class): %v", list.Header)
	}

	// One generate through the API with a JWT, one in the dashboard: the
	// team's two are spent, so the dashboard's second is refused.
	s.must(200, "POST", "/api/v1/documents/generate?async=true", u.token, map[string]any{"templateId": tpl.str("id"), "format": "pdf",
		"variables": map[string]any{"number": "1", "customer": "api"}})
	gen := "/app/templates/" + tpl.str("id") + "/generate"
	form := url.Values{"csrf": {c.csrf()}, "var.number": {"2"}, "var.customer": {"dashboard"}, "format": {"pdf"}}
	res := c.post(gen, form)
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/app/jobs/") ||
		res.Header.Get("X-RateLimit-Limit") != "2" || res.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("dashboard generate: %d %v", res.StatusCode, res.Header)
	}
	res = c.post(gen, form)
	body := readBody(res)
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" || !strings.Contains(body, "Rate limit exceeded, retry in 100 seconds") {
		t.Fatalf("third generate: %d %v\n%s", res.StatusCode, res.Header, body)
	}
	s.wantError(s.do("POST", "/api/v1/documents/generate?async=true", u.token, map[string]any{"templateId": tpl.str("id"), "format": "pdf",
		"variables": map[string]any{"number": "3", "customer": "api"}}), 429, "ERR_QUOTA_003")
	if l := s.must(200, "GET", "/api/v1/documents/jobs", u.token, nil); l.str("meta.total") != "2" {
		t.Fatalf("jobs after refusals: %s", l.raw)
	}
	// An API key has its own column.
	s.must(200, "POST", "/api/v1/documents/generate?async=true", s.createKey(u.token, nil), map[string]any{"templateId": tpl.str("id"), "format": "pdf",
		"variables": map[string]any{"number": "4", "customer": "key"}})
}

// TestLoginThrottleSurvivesRestart: the per-email login throttle is kept in
// bbolt, so restarting the server does not give an attacker fresh attempts.
func TestLoginThrottleSurvivesRestart(t *testing.T) {
	data := t.TempDir()
	clock := &stepClock{t: time.Date(2026, 3, 10, 9, 15, 0, 0, time.UTC)}
	s := startMain(t, &Main{Config: Config{Data: data}, Now: clock.Now}) // --rate-limits off: the login throttle is separate
	u := s.signup("Target")
	for i := 0; i < 10; i++ {
		s.wantError(s.do("POST", "/api/auth/login", "", map[string]any{"email": u.email, "password": "wrong guess"}), 401, "ERR_AUTH_001")
	}
	s.wantError(s.do("POST", "/api/auth/login", "", map[string]any{"email": u.email, "password": u.password}), 429, "ERR_QUOTA_003")
	s.Close()

	s2 := startMain(t, &Main{Config: Config{Data: data}, Now: clock.Now})
	r := s2.do("POST", "/api/auth/login", "", map[string]any{"email": u.email, "password": u.password})
	s2.wantError(r, 429, "ERR_QUOTA_003")
	if r.header.Get("Retry-After") == "" {
		t.Fatalf("429 without Retry-After: %v", r.header)
	}
	// The throttle ends with its window, restart or not.
	clock.Add(30 * time.Minute)
	s2.must(200, "POST", "/api/auth/login", "", map[string]any{"email": u.email, "password": u.password})
}
