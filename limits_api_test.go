package main

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func rateFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "rates.json")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRateLimitSet2ReadClass(t *testing.T) {
	// Half-way through a minute, on a clock that only moves by
	// microseconds: all 301 calls fall in one window.
	s, _ := startAt(t, time.Date(2026, 3, 10, 9, 15, 30, 0, time.UTC), func(c *Config) { c.RateLimits = "" }) // Set 2, the default
	windowEnd := time.Date(2026, 3, 10, 9, 16, 0, 0, time.UTC).Unix()
	u := s.signup("Reader")
	key := s.createKey(u.token, nil)
	for i := 1; i <= 300; i++ {
		r := s.must(200, "GET", "/api/v1/documents/jobs", key, nil)
		if i == 1 || i == 300 {
			if r.header.Get("X-RateLimit-Limit") != "300" || r.header.Get("X-RateLimit-Remaining") != strconv.Itoa(300-i) {
				t.Fatalf("request %d headers: %v", i, r.header)
			}
			if r.header.Get("X-RateLimit-Reset") != strconv.FormatInt(windowEnd, 10) {
				t.Fatalf("X-RateLimit-Reset %q, want %d", r.header.Get("X-RateLimit-Reset"), windowEnd)
			}
		}
	}
	r := s.do("GET", "/api/v1/documents/jobs/job_x", key, nil) // same class: jobs/:id
	s.wantError(r, http.StatusTooManyRequests, "ERR_QUOTA_003")
	// 301 calls in this window (the refused one too) weigh 301·(1 − x) in the
	// next; that leaves room for one at x = 2/301 of it, 30.4 s from now.
	if r.header.Get("Retry-After") != "31" || r.header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("429 headers: %v", r.header)
	}
	for _, f := range []string{"limit", "windowSeconds", "resetAt", "retryAfterSeconds"} {
		if r.get("relatedInfo."+f) == nil {
			t.Fatalf("relatedInfo lacks %s: %s", f, r.raw)
		}
	}
	if r.str("relatedInfo.limit") != "300" || r.str("relatedInfo.windowSeconds") != "60" || r.str("relatedInfo.retryAfterSeconds") != "31" ||
		r.get("relatedInfo.resetAt") != float64(windowEnd) || r.str("retryAfter") != "31" || !strings.Contains(r.str("message"), "31 seconds") {
		t.Fatalf("429 body: %s", r.raw)
	}
	// Templates reads share the class; other endpoints have their own budget.
	s.wantError(s.do("GET", "/api/v1/templates", key, nil), 429, "ERR_QUOTA_003")
	s.must(200, "GET", "/api/v1/documents/queue/stats", key, nil)
	// The JWT has its own column (per kind), and other teams are untouched.
	s.must(200, "GET", "/api/v1/documents/jobs", u.token, nil)
	v := s.signup("Neighbour")
	s.must(200, "GET", "/api/v1/documents/jobs", s.createKey(v.token, nil), nil)
}

func TestRateLimitConcurrentAdmission(t *testing.T) {
	file := rateFile(t, `{"classes": {"generate": {"key": 10}}}`)
	s := startServer(t, func(c *Config) { c.RateLimits = file })
	u := s.signup("Burst")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := s.do("POST", "/api/v1/documents/generate?async=true", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf",
				"variables": map[string]any{"number": "1", "customer": "c"}})
			mu.Lock()
			codes[r.status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if codes[200] != 10 || codes[429] != 40 {
		t.Fatalf("50 concurrent against a limit of 10: %v", codes)
	}
}

func TestRateLimitUnauthenticated(t *testing.T) {
	file := rateFile(t, `{"unauthenticated": 5}`)
	s := startServer(t, func(c *Config) { c.RateLimits = file })
	for i := 0; i < 5; i++ {
		r := s.do("GET", "/api/users/me", "", nil)
		s.wantError(r, 401, "ERR_AUTH_003")
		if r.header.Get("X-RateLimit-Limit") != "5" {
			t.Fatalf("unauthenticated headers: %v", r.header)
		}
	}
	// Failed and unknown requests count too: the 6th is refused.
	s.wantError(s.do("GET", "/api/no-such-route", "", nil), 429, "ERR_QUOTA_003")
	s.wantError(s.do("POST", "/api/auth/login", "", map[string]any{"email": "a@b.co", "password": "xxxxxxxx"}), 429, "ERR_QUOTA_003")
}

func TestRateLimitTeamBudgetSurvivesRestart(t *testing.T) {
	file := rateFile(t, `{"classes": {"other": {"jwt": 3}}}`)
	data := t.TempDir()
	s := startServerIn(t, data, func(c *Config) { c.RateLimits = file })
	u := s.signup("Keeper")
	for i := 0; i < 3; i++ {
		s.must(200, "GET", "/api/users/me", u.token, nil)
	}
	s.wantError(s.do("GET", "/api/users/me", u.token, nil), 429, "ERR_QUOTA_003")
	s.Close()
	s2 := startServerIn(t, data, func(c *Config) { c.RateLimits = file })
	s2.wantError(s2.do("GET", "/api/users/me", u.token, nil), 429, "ERR_QUOTA_003")
}

func TestRateLimitsFileErrors(t *testing.T) {
	for body, want := range map[string]string{
		`{"classes": {"nope": {"key": 1}}}`:       `unknown class "nope"`,
		`{"classes": {"read": {"robot": 1}}}`:     `unknown kind "robot"`,
		`not json`:                                "invalid character",
		`{"unauthenticted": 5}`:                   `unknown field "unauthenticted"`,
		`{"classes": {"read": {"key": 0}}}`:       "classes.read.key is 0",
		`{"classes": {"generate": {"jwt": -5}}}`:  "classes.generate.jwt is -5",
		`{"windowSeconds": -60}`:                  "windowSeconds is -60",
		`{"unauthenticated": 0, "download": 300}`: "unauthenticated is 0",
	} {
		file := rateFile(t, body)
		c := Config{DefaultPlan: "free", Signup: "open", LogFormat: "text", RateLimits: file}
		if err := c.validate(); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), file) {
			t.Errorf("%s: %v, want an error naming the file and saying %q", body, err, want)
		}
	}
	// `folio serve` stops at start-up with that message.
	code, _, errOut := runCLI(t, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--rate-limits", rateFile(t, `{"clases": {}}`))
	if code != 1 || !strings.Contains(errOut, `unknown field "clases"`) {
		t.Fatalf("serve with a bad --rate-limits: exit %d, %q", code, errOut)
	}
}

func TestPayloadLimits(t *testing.T) {
	// Rate limits on (Set 2, 4 unauthenticated calls), on a clock that does
	// not cross a minute.
	file := rateFile(t, `{"unauthenticated": 4}`)
	s, _ := startAt(t, time.Date(2026, 3, 10, 9, 15, 0, 0, time.UTC), func(c *Config) { c.RateLimits = file })
	u := s.signup("Big") // the first call from this IP without authentication
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)

	// An over-long URL or header block is refused before authentication, so
	// it counts against the client IP, with that budget's headers.
	longURL := "/api/v1/documents/jobs?x=" + strings.Repeat("a", 8<<10)
	r := s.do("GET", longURL, key, nil)
	s.wantError(r, 400, "ERR_LIMIT_011")
	if r.header.Get("X-RateLimit-Limit") != "4" || r.header.Get("X-RateLimit-Remaining") != "2" || r.header.Get("X-RateLimit-Reset") == "" {
		t.Fatalf("URL refusal headers: %v", r.header)
	}
	r = s.do("GET", "/api/v1/documents/jobs", key, nil, "X-Padding", strings.Repeat("h", 17<<10))
	s.wantError(r, 400, "ERR_LIMIT_012")
	if r.header.Get("X-RateLimit-Limit") != "4" || r.header.Get("X-RateLimit-Remaining") != "1" {
		t.Fatalf("header refusal headers: %v", r.header)
	}
	s.wantError(s.do("GET", longURL, "", nil), 400, "ERR_LIMIT_011")
	r = s.do("GET", longURL, "", nil)
	s.wantError(r, 429, "ERR_QUOTA_003")
	if r.header.Get("Retry-After") == "" || r.header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("429 headers: %v", r.header)
	}
	s.wantError(s.do("POST", "/api/auth/login", "", map[string]any{"email": u.email, "password": u.password}), 429, "ERR_QUOTA_003")
	// Authenticated calls are counted per team, apart from the IP's budget.
	big := `{"templateId":"` + tpl.str("id") + `","format":"pdf","variables":{"number":"1","customer":"` + strings.Repeat("x", 11<<20) + `"}}`
	s.wantError(s.do("POST", "/api/v1/documents/generate", key, big), 400, "ERR_LIMIT_010")
	vars := map[string]any{"number": "1", "customer": strings.Repeat("y", 1<<20)}
	s.wantError(s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": vars}), 400, "ERR_LIMIT_013")
	good := map[string]any{"variables": map[string]any{"number": "1", "customer": "c"}}
	docs := make([]any, 101)
	for i := range docs {
		docs[i] = good
	}
	r = s.do("POST", "/api/v1/documents/generate/batch", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "documents": docs})
	s.wantError(r, 400, "ERR_LIMIT_014")
	if r.str("relatedInfo.max") != "100" || r.str("relatedInfo.actual") != "101" {
		t.Fatalf("batch limit info: %s", r.raw)
	}
	heavy := map[string]any{"variables": map[string]any{"number": "1", "customer": strings.Repeat("z", 101<<10)}}
	r = s.do("POST", "/api/v1/documents/generate/batch", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "documents": []any{good, heavy}})
	s.wantError(r, 400, "ERR_LIMIT_015")
	if r.str("relatedInfo.index") != "1" {
		t.Fatalf("batch document limit info: %s", r.raw)
	}
	if l := s.must(200, "GET", "/api/v1/documents/jobs", key, nil); l.str("meta.total") != "0" {
		t.Fatalf("refused requests left jobs: %s", l.raw)
	}
}

func TestQuotaCreditsAndMonths(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := startMain(t, &Main{Now: clock}, func(c *Config) { c.DefaultPlan = "free" })
	u := s.signup("Thrifty")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	teamID := s.must(200, "GET", "/api/api-keys", u.token, nil).get("data").([]any)[0].(map[string]any)["teamId"].(string)
	batch := func(n int) resp {
		docs := make([]any, n)
		for i := range docs {
			docs[i] = map[string]any{"variables": map[string]any{"number": fmt.Sprint(i), "customer": "c"}}
		}
		return s.do("POST", "/api/v1/documents/generate/batch", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "documents": docs})
	}
	// The free plan's batch size is 10.
	s.wantError(batch(11), 400, "ERR_PLAN_002")
	for i := 0; i < 5; i++ {
		r := batch(10)
		if r.status != 200 {
			t.Fatalf("batch %d: %s", i, r.raw)
		}
		s.waitBatch(key, r.str("batchId"))
	}
	use := s.must(200, "GET", "/api/v1/analytics/usage", key, nil)
	if use.str("documentsGenerated") != "50" || use.str("quota") != "50" || use.str("creditsRemaining") != "0" || use.str("period") != "2026-11" {
		t.Fatalf("usage at quota: %s", use.raw)
	}
	r := s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": map[string]any{"number": "x", "customer": "c"}})
	s.wantError(r, 429, "ERR_QUOTA_008")

	// Credits come after the quota; a request needing more than is left is refused whole.
	runCLI(t, "admin", "add-credits", "--data", s.Config.Data, "--team", teamID, "--documents", "3")
	r = batch(5)
	s.wantError(r, 429, "ERR_QUOTA_011")
	if r.str("relatedInfo.available") != "3" || r.str("relatedInfo.requested") != "5" {
		t.Fatalf("credits refusal: %s", r.raw)
	}
	s.waitBatch(key, batch(3).str("batchId"))
	use = s.must(200, "GET", "/api/v1/analytics/usage", key, nil)
	if use.str("documentsGenerated") != "53" || use.str("creditsUsed") != "3" || use.str("creditsRemaining") != "0" {
		t.Fatalf("usage after credits: %s", use.raw)
	}
	w := s.must(200, "GET", "/api/dashboard/analytics/wallet", u.token, nil)
	if w.str("plan") != "free" || w.str("quota.limit") != "50" || w.str("quota.used") != "50" || w.str("quota.remaining") != "0" ||
		w.str("credits.remaining") != "0" || w.str("credits.usedThisPeriod") != "3" || !strings.HasPrefix(w.str("resetsAt"), "2026-12-01T00:00:00") {
		t.Fatalf("wallet: %s", w.raw)
	}

	// Credits bought in November are still there in December.
	runCLI(t, "admin", "add-credits", "--data", s.Config.Data, "--team", teamID, "--documents", "4")

	// A new month resets the quota; failed documents are refunded.
	mu.Lock()
	now = time.Date(2026, 12, 1, 0, 0, 1, 0, time.UTC)
	mu.Unlock()
	u.token = s.login(u) // the old access token expired with the jump
	long := s.createTemplate(u.token, "Long", longTemplate())
	s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": long.str("id"), "format": "pdf", "variables": map[string]any{"body": longText}})
	s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": map[string]any{"number": "d", "customer": "c"}})
	use = s.must(200, "GET", "/api/v1/analytics/usage", key, nil)
	if use.str("period") != "2026-12" || use.str("documentsGenerated") != "1" || use.str("creditsRemaining") != "4" || use.str("creditsUsed") != "0" {
		t.Fatalf("new month usage (the failed document is refunded, credits kept): %s", use.raw)
	}
	// The month's quota is spent before any credit...
	for _, n := range []int{10, 10, 10, 10, 9} {
		r := batch(n)
		if r.status != 200 {
			t.Fatalf("December batch of %d: %s", n, r.raw)
		}
		s.waitBatch(key, r.str("batchId"))
	}
	use = s.must(200, "GET", "/api/v1/analytics/usage", key, nil)
	if use.str("documentsGenerated") != "50" || use.str("creditsUsed") != "0" || use.str("creditsRemaining") != "4" {
		t.Fatalf("December quota spent: %s", use.raw)
	}
	// ...then the credits carried over from November.
	s.waitBatch(key, batch(2).str("batchId"))
	use = s.must(200, "GET", "/api/v1/analytics/usage", key, nil)
	if use.str("documentsGenerated") != "52" || use.str("creditsUsed") != "2" || use.str("creditsRemaining") != "2" {
		t.Fatalf("December credits: %s", use.raw)
	}
	w = s.must(200, "GET", "/api/dashboard/analytics/wallet", u.token, nil)
	if w.str("period") != "2026-12" || w.str("quota.used") != "50" || w.str("credits.remaining") != "2" || w.str("credits.usedThisPeriod") != "2" ||
		w.str("documentsAvailable") != "2" || !strings.HasPrefix(w.str("resetsAt"), "2027-01-01T00:00:00") {
		t.Fatalf("December wallet: %s", w.raw)
	}
	s.wantError(batch(3), 429, "ERR_QUOTA_011")
}

func TestConcurrentBatchesCannotOverspend(t *testing.T) {
	s := startServer(t, func(c *Config) { c.DefaultPlan = "free" })
	u := s.signup("Racer")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	docs := make([]any, 10)
	for i := range docs {
		docs[i] = map[string]any{"variables": map[string]any{"number": fmt.Sprint(i), "customer": "c"}}
	}
	var mu sync.Mutex
	codes := map[string]int{}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := s.do("POST", "/api/v1/documents/generate/batch", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "documents": docs})
			mu.Lock()
			codes[fmt.Sprint(r.status, r.str("code"))]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if codes["200"] != 5 || codes["429ERR_QUOTA_008"] != 3 {
		t.Fatalf("8 concurrent batches of 10 against a quota of 50: %v", codes)
	}
	if l := s.must(200, "GET", "/api/v1/documents/jobs", key, nil); l.str("meta.total") != "50" {
		t.Fatalf("jobs recorded: %s", l.str("meta.total"))
	}
}

func TestDashboardAnalytics(t *testing.T) {
	rcv := startReceiver(t, false)
	rcv.failFirst = 1
	s, clock := startAt(t, time.Date(2026, 3, 10, 9, 15, 0, 0, time.UTC), func(c *Config) {
		c.WebhookAllowPrivate, c.WebhookCA, c.WebhookRetrySchedule = true, rcv.caFile, "0s" // one attempt: the first delivery fails
	})
	u := s.verifiedUser("Dash")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	long := s.createTemplate(u.token, "Long", longTemplate())
	gen := func(id string, vars map[string]any) resp {
		return s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "pdf", "variables": vars})
	}
	invoice := map[string]any{"number": "1", "customer": "c"}
	for i := 0; i < 3; i++ { // 09:15 UTC
		if r := gen(tpl.str("id"), invoice); r.status != 200 {
			t.Fatalf("generate: %s", r.raw)
		}
	}
	h := s.must(200, "GET", "/api/dashboard/analytics/health", u.token, nil)
	if h.str("documents24h") != "3" || h.str("failureRate") != "0" || h.str("webhookFailureRate") != "0" || h.str("status") != "healthy" || h.str("queueDepth") != "0" {
		t.Fatalf("health: %s", h.raw)
	}

	// At 14:40 one document fails and one succeeds; of their two webhook
	// deliveries the first fails.
	s.must(200, "POST", "/api/v1/webhook-subscriptions", key, map[string]any{"url": rcv.url, "events": []string{"document.generated", "document.failed"}})
	clock.Set(time.Date(2026, 3, 10, 14, 40, 0, 0, time.UTC))
	if r := gen(long.str("id"), map[string]any{"body": longText}); r.status == 200 {
		t.Fatalf("the long document did not fail: %s", r.raw)
	}
	if r := gen(tpl.str("id"), invoice); r.status != 200 {
		t.Fatalf("generate: %s", r.raw)
	}
	rcv.waitFor(2, 10*time.Second)
	token := s.login(u) // the 09:15 token expired
	deadline := time.Now().Add(10 * time.Second)
	for h.str("webhookDeliveries24h") != "2" && time.Now().Before(deadline) { // the outcome is stored after the receiver answers
		time.Sleep(20 * time.Millisecond)
		h = s.must(200, "GET", "/api/dashboard/analytics/health", token, nil)
	}
	if h.str("documents24h") != "5" || h.str("failureRate") != "20" || h.str("webhookDeliveries24h") != "2" || h.str("webhookFailureRate") != "50" ||
		h.str("status") != "degraded" {
		t.Fatalf("health after failures: %s", h.raw)
	}

	in := s.must(200, "GET", "/api/dashboard/analytics/insights", token, nil)
	top := in.get("topTemplates").([]any)
	if len(top) != 2 || top[0].(map[string]any)["name"] != "Invoice" || top[0].(map[string]any)["count"] != 4.0 || top[0].(map[string]any)["failed"] != 0.0 ||
		top[1].(map[string]any)["name"] != "Long" || top[1].(map[string]any)["count"] != 1.0 || top[1].(map[string]any)["failed"] != 1.0 {
		t.Fatalf("topTemplates: %s", in.raw)
	}
	hours := in.get("busiestHours").([]any)
	if len(hours) != 2 || hours[0].(map[string]any)["hour"] != 9.0 || hours[0].(map[string]any)["count"] != 3.0 ||
		hours[1].(map[string]any)["hour"] != 14.0 || hours[1].(map[string]any)["count"] != 2.0 {
		t.Fatalf("busiestHours: %s", in.raw)
	}
	// slowestTemplates: each template's mean of its jobs' durationMs, as the
	// job export reports them, slowest first.
	ex := s.must(200, "GET", "/api/v1/documents/jobs/export?format=json", key, nil)
	sum, n := map[string]float64{}, map[string]float64{}
	var rows []any
	if err := json.Unmarshal(ex.raw, &rows); err != nil || len(rows) != 5 {
		t.Fatalf("job export: %s", ex.raw)
	}
	for _, row := range rows {
		j := row.(map[string]any)
		if ms, ok := j["durationMs"].(float64); ok {
			sum[j["templateId"].(string)] += ms
			n[j["templateId"].(string)]++
		}
	}
	slow := in.get("slowestTemplates").([]any)
	if len(slow) != 2 {
		t.Fatalf("slowestTemplates: %s", in.raw)
	}
	prev := math.Inf(1)
	for _, x := range slow {
		st := x.(map[string]any)
		id := st["templateId"].(string)
		want := sum[id] / n[id]
		if n[id] == 0 || math.Abs(st["avgGenerationTimeMs"].(float64)-want) > 1e-6 || want > prev {
			t.Fatalf("slowestTemplates %s: %v, want avg %v (from %v ms over %v jobs), slowest first\n%s", id, st["avgGenerationTimeMs"], want, sum[id], n[id], in.raw)
		}
		prev = want
	}

	r := s.do("GET", "/api/dashboard/analytics/export?startDate=2026-03-09&endDate=2026-03-10", token, nil)
	lines := strings.Split(strings.TrimSpace(string(r.raw)), "\n")
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/csv") || len(lines) != 3 || lines[0] != "date,total,completed,failed,pdf,xlsx" ||
		lines[1] != "2026-03-09,0,0,0,0,0" || lines[2] != "2026-03-10,5,4,1,5,0" {
		t.Fatalf("export: %d %q", r.status, lines)
	}
	s.wantError(s.do("GET", "/api/dashboard/analytics/wallet", key, nil), 403, "ERR_AUTH_004")
}

func TestAdminBackupWhileServing(t *testing.T) {
	s := startServer(t)
	u := s.signup("Backed")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": map[string]any{"number": "1", "customer": "c"}})
	out := filepath.Join(t.TempDir(), "backup.tar.gz")
	code, stdout, stderr := runCLI(t, "admin", "backup", "--data", s.Config.Data, "--out", out)
	if code != 0 || !strings.Contains(stdout, "running server") {
		t.Fatalf("backup: %d %q %q", code, stdout, stderr)
	}
	// The server reports the copy's progress over the socket as it goes.
	if !strings.Contains(stderr, "backup: folio.db 100% copied") {
		t.Fatalf("backup progress: %q", stderr)
	}
	// Restore into an empty directory and serve from it.
	restored := t.TempDir()
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	names := map[string]bool{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		names[h.Name] = true
		p := filepath.Join(restored, h.Name)
		os.MkdirAll(filepath.Dir(p), 0o700)
		b, _ := io.ReadAll(tr)
		os.WriteFile(p, b, 0o600)
	}
	f.Close()
	for _, want := range []string{"folio.db", "queue.db", "keys/jwt.key", "keys/download.key", "tls/cert.pem"} {
		if !names[want] {
			t.Fatalf("backup lacks %s: %v", want, names)
		}
	}
	s.Close()
	r := startServerIn(t, restored)
	login := r.must(200, "POST", "/api/auth/login", "", map[string]any{"email": u.email, "password": u.password})
	if l := r.must(200, "GET", "/api/v1/documents/jobs", login.str("accessToken"), nil); l.str("meta.total") != "1" {
		t.Fatalf("restored jobs: %s", l.raw)
	}
	// Without a server, the command reads the files itself.
	code, stdout, stderr = runCLI(t, "admin", "backup", "--data", s.Config.Data, "--out", filepath.Join(t.TempDir(), "b2.tar.gz"))
	if code != 0 || !strings.Contains(stdout, "no server running") || !strings.Contains(stderr, "backup: folio.db 100% copied") {
		t.Fatalf("offline backup: %d %q %q", code, stdout, stderr)
	}
	if code, _, errOut := runCLI(t, "admin", "backup", "--data", s.Config.Data); code != 1 || !strings.Contains(errOut, "--out") {
		t.Fatalf("backup without --out: %q", errOut)
	}
}
