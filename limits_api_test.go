package main

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
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
	s := startServer(t, func(c *Config) { c.RateLimits = "" }) // Set 2, the default
	u := s.signup("Reader")
	key := s.createKey(u.token, nil)
	for i := 1; i <= 300; i++ {
		r := s.must(200, "GET", "/api/v1/documents/jobs", key, nil)
		if i == 1 || i == 300 {
			if r.header.Get("X-RateLimit-Limit") != "300" || r.header.Get("X-RateLimit-Remaining") != strconv.Itoa(300-i) {
				t.Fatalf("request %d headers: %v", i, r.header)
			}
			reset, err := strconv.ParseInt(r.header.Get("X-RateLimit-Reset"), 10, 64)
			if err != nil || reset < time.Now().Unix() || reset > time.Now().Add(61*time.Second).Unix() {
				t.Fatalf("X-RateLimit-Reset %q", r.header.Get("X-RateLimit-Reset"))
			}
		}
	}
	r := s.do("GET", "/api/v1/documents/jobs/job_x", key, nil) // same class: jobs/:id
	s.wantError(r, http.StatusTooManyRequests, "ERR_QUOTA_003")
	ra, _ := strconv.Atoi(r.header.Get("Retry-After"))
	if ra < 1 || ra > 60 || r.header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("429 headers: %v", r.header)
	}
	for _, f := range []string{"limit", "windowSeconds", "resetAt", "retryAfterSeconds"} {
		if r.get("relatedInfo."+f) == nil {
			t.Fatalf("relatedInfo lacks %s: %s", f, r.raw)
		}
	}
	if r.str("relatedInfo.limit") != "300" || r.str("relatedInfo.windowSeconds") != "60" || r.get("retryAfter") == nil {
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
	for _, body := range []string{`{"classes": {"nope": {"key": 1}}}`, `{"classes": {"read": {"robot": 1}}}`, `not json`} {
		c := Config{DefaultPlan: "free", Signup: "open", LogFormat: "text", RateLimits: rateFile(t, body)}
		if err := c.validate(); err == nil {
			t.Fatalf("%s accepted", body)
		}
	}
}

func TestPayloadLimits(t *testing.T) {
	s := startServer(t)
	u := s.signup("Big")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)

	s.wantError(s.do("GET", "/api/v1/documents/jobs?x="+strings.Repeat("a", 8<<10), key, nil), 400, "ERR_LIMIT_011")
	s.wantError(s.do("GET", "/api/v1/documents/jobs", key, nil, "X-Padding", strings.Repeat("h", 17<<10)), 400, "ERR_LIMIT_012")
	big := `{"templateId":"` + tpl.str("id") + `","format":"pdf","variables":{"number":"1","customer":"` + strings.Repeat("x", 11<<20) + `"}}`
	s.wantError(s.do("POST", "/api/v1/documents/generate", key, big), 400, "ERR_LIMIT_010")
	vars := map[string]any{"number": "1", "customer": strings.Repeat("y", 1<<20)}
	s.wantError(s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": vars}), 400, "ERR_LIMIT_013")
	good := map[string]any{"variables": map[string]any{"number": "1", "customer": "c"}}
	docs := make([]any, 101)
	for i := range docs {
		docs[i] = good
	}
	r := s.do("POST", "/api/v1/documents/generate/batch", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "documents": docs})
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

	// A new month resets the quota; failed documents are refunded.
	mu.Lock()
	now = time.Date(2026, 12, 1, 0, 0, 1, 0, time.UTC)
	mu.Unlock()
	u.token = s.login(u) // the old access token expired with the jump
	long := s.createTemplate(u.token, "Long", longTemplate())
	s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": long.str("id"), "format": "pdf", "variables": map[string]any{"body": longText}})
	s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": map[string]any{"number": "d", "customer": "c"}})
	use = s.must(200, "GET", "/api/v1/analytics/usage", key, nil)
	if use.str("period") != "2026-12" || use.str("documentsGenerated") != "1" {
		t.Fatalf("new month usage (the failed document is refunded): %s", use.raw)
	}
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
	s := startServer(t)
	u := s.signup("Dash")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	for i := 0; i < 3; i++ {
		s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": map[string]any{"number": "1", "customer": "c"}})
	}
	h := s.must(200, "GET", "/api/dashboard/analytics/health", u.token, nil)
	if h.str("documents24h") != "3" || h.str("failureRate") != "0" || h.str("status") != "healthy" || h.get("webhookFailureRate") == nil || h.get("queueDepth") == nil {
		t.Fatalf("health: %s", h.raw)
	}
	in := s.must(200, "GET", "/api/dashboard/analytics/insights", u.token, nil)
	top := in.get("topTemplates").([]any)
	if len(top) != 1 || top[0].(map[string]any)["name"] != "Invoice" || top[0].(map[string]any)["count"] != 3.0 || len(in.get("busiestHours").([]any)) != 1 {
		t.Fatalf("insights: %s", in.raw)
	}
	r := s.do("GET", "/api/dashboard/analytics/export", u.token, nil)
	lines := strings.Split(strings.TrimSpace(string(r.raw)), "\n")
	today := time.Now().UTC().Format("2006-01-02")
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/csv") || lines[0] != "date,total,completed,failed,pdf,xlsx" ||
		lines[len(lines)-1] != today+",3,3,0,3,0" {
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
	code, stdout, _ = runCLI(t, "admin", "backup", "--data", s.Config.Data, "--out", filepath.Join(t.TempDir(), "b2.tar.gz"))
	if code != 0 || !strings.Contains(stdout, "no server running") {
		t.Fatalf("offline backup: %d %q", code, stdout)
	}
	if code, _, errOut := runCLI(t, "admin", "backup", "--data", s.Config.Data); code != 1 || !strings.Contains(errOut, "--out") {
		t.Fatalf("backup without --out: %q", errOut)
	}
}
