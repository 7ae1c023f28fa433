package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"debug/elf"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"folio/web"
	"folio/web/client"
)

// opsClient is a web/client.Client for an in-process test server.
func opsClient(t *testing.T, s *testServer) *client.Client {
	t.Helper()
	ca, err := os.ReadFile(filepath.Join(s.Config.Data, "tls", "cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(s.URL(), "", ca)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestHealthzAndReadyz(t *testing.T) {
	// Rate limits on (60 unauthenticated requests a minute per IP): probes
	// must never be refused, however often they come.
	s := startServer(t, func(c *Config) { c.RateLimits = "" })
	c := opsClient(t, s)
	ctx := context.Background()
	for i := 0; i < 80; i++ {
		if err := c.Healthy(ctx); err != nil {
			t.Fatalf("probe %d: %v", i, err)
		}
	}
	r, err := c.Ready(ctx)
	if err != nil || !r.Ready || r.Status != "ready" {
		t.Fatalf("readyz: %+v %v", r, err)
	}
	for _, name := range []string{"sqlite", "bbolt", "dataDir", "disk", "workers"} {
		if r.Checks[name].Status != "ok" {
			t.Errorf("check %s: %+v", name, r.Checks[name])
		}
	}
	if h := s.do("GET", "/healthz", "", nil); h.header.Get("X-RateLimit-Limit") != "" || h.header.Get("X-Request-Id") == "" {
		t.Fatalf("healthz headers: %v", h.header)
	}
}

// TestReadyzFailsOnReadOnlyDataDir makes the data directory read-only under
// a running server. As root (where permissions do not stop writes) that is a
// read-only bind mount over the directory, the same thing a disk remounted
// read-only after errors looks like; otherwise a chmod. The server's open
// database files keep working; new files cannot be made, so it is not ready.
func TestReadyzFailsOnReadOnlyDataDir(t *testing.T) {
	s := startServer(t)
	c := opsClient(t, s)
	ctx := context.Background()
	if r, _ := c.Ready(ctx); r == nil || !r.Ready {
		t.Fatalf("not ready at start: %+v", r)
	}
	undo := makeReadOnly(t, s.Config.Data)
	r, err := c.Ready(ctx)
	if err != nil || r.Ready || r.Status != "not ready" {
		t.Fatalf("readyz on a read-only data dir: %+v %v", r, err)
	}
	if d := r.Checks["dataDir"]; d.Status != "fail" || !strings.Contains(d.Error, "not writable") {
		t.Fatalf("dataDir check: %+v", d)
	}
	if r.Checks["sqlite"].Status != "ok" || r.Checks["workers"].Status != "ok" {
		t.Fatalf("other checks should pass: %+v", r.Checks)
	}
	undo()
	if r, _ := c.Ready(ctx); r == nil || !r.Ready {
		t.Fatalf("not ready again after the directory became writable: %+v", r)
	}
}

// makeReadOnly makes dir read-only and returns the undo (also run at cleanup).
func makeReadOnly(t *testing.T, dir string) func() {
	t.Helper()
	var once sync.Once
	var undo func()
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		undo = func() { os.Chmod(dir, 0o750) }
	} else {
		if out, err := exec.Command("mount", "--bind", dir, dir).CombinedOutput(); err != nil {
			t.Skipf("running as root without permission to mount (%v: %s); the check itself is covered by store.TestCheckWritable", err, out)
		}
		if out, err := exec.Command("mount", "-o", "remount,bind,ro", dir).CombinedOutput(); err != nil {
			exec.Command("umount", dir).Run()
			t.Skipf("cannot remount read-only (%v: %s)", err, out)
		}
		undo = func() {
			if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
				t.Errorf("umount %s: %v %s", dir, err, out)
			}
		}
	}
	u := func() { once.Do(undo) }
	t.Cleanup(u)
	return u
}

func TestReadyzFailsWithoutDiskRoom(t *testing.T) {
	s := startServer(t, func(c *Config) { c.MinFreeMB = 1 << 40 }) // an exabyte
	r := s.do("GET", "/readyz", "", nil)
	if r.status != http.StatusServiceUnavailable || r.str("status") != "not ready" {
		t.Fatalf("readyz: %d %s", r.status, r.raw)
	}
	if d := r.get("checks.disk").(map[string]any); d["status"] != "fail" || !strings.Contains(d["error"].(string), "MB free") {
		t.Fatalf("disk check: %v", d)
	}
}

// TestMetricsCountDocuments checks that /metrics changes as documents are
// generated and fail, webhooks are attempted and requests are refused.
func TestMetricsCountDocuments(t *testing.T) {
	rcv := startReceiver(t, false)
	rcv.failFirst = 1
	s := webhookServer(t, rcv, "0s,100ms")
	c := opsClient(t, s)
	ctx := context.Background()
	u := s.verifiedUser("Metered")
	key := s.createKey(u.token, nil)
	s.must(200, "POST", "/api/v1/webhook-subscriptions", key, map[string]any{"url": rcv.url, "events": []string{"document.generated"}})
	tpl := s.createTemplate(u.token, "Both", map[string]any{"outputFormats": []string{"pdf", "xlsx"}, "schema": invoiceTemplate["schema"], "variables": invoiceTemplate["variables"]})
	failing := s.createTemplate(u.token, "Loop", map[string]any{"outputFormats": []string{"pdf"},
		"schema":    map[string]any{"sections": []any{map[string]any{"id": "b", "components": []any{map[string]any{"type": "text", "each": "items", "props": map[string]any{"content": "x"}}}}}},
		"variables": []any{map[string]any{"name": "items", "type": "array", "required": true}}})

	before, err := c.Metrics(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]any{"number": "1", "customer": "c"}
	for _, f := range []string{"pdf", "pdf", "xlsx"} {
		s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": f, "variables": vars})
	}
	s.wantError(s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": failing.str("id"), "format": "pdf",
		"variables": map[string]any{"items": make([]int, 1001)}}), 400, "ERR_LIMIT_007")
	for i := 0; i < 12; i++ { // login throttling: 10 attempts per email
		s.do("POST", "/api/auth/login", "", map[string]any{"email": u.email, "password": "wrong password"})
	}
	s.do("GET", "/api/no-such-route-4f2a", "", nil)
	rcv.waitFor(4, 10*time.Second) // 3 documents; the first attempt fails and is retried

	after, err := c.Metrics(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	delta := func(name string, labels ...string) float64 {
		return after.Sum(name, labels...) - before.Sum(name, labels...)
	}
	for _, want := range []struct {
		name   string
		labels []string
		min    float64
	}{
		{"folio_documents_total", []string{`format="pdf"`, `status="completed"`}, 2},
		{"folio_documents_total", []string{`format="xlsx"`, `status="completed"`}, 1},
		{"folio_documents_total", []string{`format="pdf"`, `status="failed"`}, 1},
		{"folio_render_duration_seconds_count", []string{`format="pdf"`}, 3},
		{"folio_render_duration_seconds_count", []string{`format="xlsx"`}, 1},
		{"folio_http_requests_total", []string{`route="POST /api/v1/documents/generate"`, `status="200"`}, 3},
		{"folio_http_requests_total", []string{`route="POST /api/v1/documents/generate"`, `status="400"`}, 1},
		{"folio_http_request_duration_seconds_count", []string{`route="POST /api/v1/documents/generate"`}, 4},
		{"folio_http_requests_total", []string{`route="unmatched"`}, 1},
		{"folio_rate_limited_requests_total", []string{`route="POST /api/auth/login"`}, 1},
		{"folio_webhook_attempts_total", []string{`outcome="http_error"`}, 1},
		{"folio_webhook_attempts_total", []string{`outcome="success"`}, 3},
	} {
		if got := delta(want.name, want.labels...); got < want.min {
			t.Errorf("%s%v grew by %v, want at least %v", want.name, want.labels, got, want.min)
		}
	}
	if got := delta("folio_documents_total", `format="pdf"`, `status="completed"`); got != 2 {
		t.Errorf("pdf completed grew by %v, want exactly 2", got)
	}
	for _, series := range []string{`folio_queue_jobs{state="pending"}`, `folio_queue_jobs{state="processing"}`, "folio_queue_oldest_pending_age_seconds",
		"folio_webhook_deliveries_pending", "process_start_time_seconds", "go_goroutines"} {
		if _, ok := after[series]; !ok {
			t.Errorf("series %s missing", series)
		}
	}
	if after["folio_workers"] != 2 || after.Sum("folio_build_info", `version="dev"`) != 1 {
		t.Errorf("folio_workers %v, folio_build_info %v", after["folio_workers"], after.Sum("folio_build_info"))
	}
	for series := range after {
		if strings.Contains(series, "no-such-route") {
			t.Fatalf("an unknown path became a series: %s", series)
		}
	}
}

func TestMetricsProtection(t *testing.T) {
	const token = "metrics-token-for-tests-7c1e"
	s := startServer(t, func(c *Config) { c.MetricsToken = token })
	for _, path := range []string{"/metrics", "/debug/pprof/", "/debug/pprof/goroutine?debug=1"} {
		s.wantError(s.do("GET", path, "", nil), 401, "ERR_AUTH_003")
		s.wantError(s.do("GET", path, "wrong-token", nil), 401, "ERR_AUTH_003")
		if r := s.do("GET", path, token, nil); r.status != 200 || len(r.raw) == 0 {
			t.Fatalf("%s with the token: %d", path, r.status)
		}
	}
	r := s.do("GET", "/metrics", token, nil)
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") || !bytes.Contains(r.raw, []byte("# TYPE folio_http_requests_total counter")) {
		t.Fatalf("metrics: %s\n%s", ct, truncate(r.raw, 300))
	}
	// API credentials are not metrics credentials.
	u := s.signup("NotOps")
	s.wantError(s.do("GET", "/metrics", u.token, nil), 401, "ERR_AUTH_003")
}

// TestGracefulShutdown sends SIGTERM to a server working through a batch
// with a synchronous request in flight: the process exits on its own, the
// request gets its answer, the running job finishes, no new job starts, and
// the next start completes the rest, each job exactly once.
func TestGracefulShutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	data, addr := t.TempDir(), freeAddr(t)
	p1 := startProc(t, data, addr, "run1.log", "--workers", "1")
	c := procClient(t, data, addr)
	u := c.signup("Drain")
	key := c.createKey(u.token, nil)
	tpl := c.createTemplate(u.token, "Heavy", heavyTemplate(1))
	var docs []any
	for i := 0; i < 30; i++ {
		docs = append(docs, map[string]any{"variables": map[string]any{"title": fmt.Sprintf("DOC-%02d", i)}})
	}
	batchID := c.must(200, "POST", "/api/v1/documents/generate/batch", key, map[string]any{"templateId": tpl.str("id"), "format": "xlsx", "documents": docs}).str("batchId")
	waitFor(t, 60*time.Second, func() bool {
		return c.must(200, "GET", "/api/v1/documents/batches/"+batchID, key, nil).str("completedDocuments") != "0"
	})

	// A synchronous generate in flight when the signal comes.
	type answer struct {
		status int
		body   string
		err    error
	}
	inflight := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest("POST", c.URL()+"/api/v1/documents/generate",
			strings.NewReader(fmt.Sprintf(`{"templateId":%q,"format":"xlsx","variables":{"title":"SYNC"}}`, tpl.str("id"))))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("X-Request-Id", "req-inflight-1")
		res, err := c.client.Do(req)
		if err != nil {
			inflight <- answer{err: err}
			return
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		inflight <- answer{status: res.StatusCode, body: string(b)}
	}()
	time.Sleep(50 * time.Millisecond) // the request arrives; its job queues behind the running one
	signalAt := time.Now()
	if err := p1.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- p1.cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("folio exited with %v after SIGTERM:\n%s", err, readFile(t, p1.log))
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("folio did not exit within the grace period:\n%s", readFile(t, p1.log))
	}
	t.Logf("exited %s after SIGTERM", time.Since(signalAt).Round(time.Millisecond))
	a := <-inflight
	if a.err != nil || a.status != 200 || !regexp.MustCompile(`"status":"(completed|pending|processing)"`).MatchString(a.body) {
		t.Fatalf("in-flight request: %d %v %s", a.status, a.err, a.body)
	}
	syncJob := regexp.MustCompile(`"jobId":"(job_[^"]+)"`).FindStringSubmatch(a.body)[1]

	// After the signal at most the one running job ended; nothing new started.
	log1 := readFile(t, p1.log)
	i := strings.Index(log1, `msg="shutting down"`)
	if i < 0 || !strings.Contains(log1, `msg="stopped serving and working"`) {
		t.Fatalf("no orderly shutdown in the log:\n%s", log1)
	}
	if n := strings.Count(log1[i:], `msg="job ended"`); n > 1 {
		t.Fatalf("%d jobs ended after SIGTERM with one worker: new jobs were started", n)
	}
	if strings.Contains(log1, "interrupted by shutdown") {
		t.Fatal("a job was interrupted although the grace period was long enough")
	}

	p2 := startProc(t, data, addr, "run2.log", "--workers", "2")
	done := c.waitBatch(key, batchID)
	if done.str("status") != "completed" || done.str("completedDocuments") != "30" {
		t.Fatalf("after restart: %s", done.raw)
	}
	if j := c.waitJob(key, syncJob); j.str("status") != "completed" {
		t.Fatalf("in-flight job after restart: %s", j.raw)
	}
	ended := endedJobs(t, p1.log, p2.log)
	ids := []string{syncJob}
	for _, d := range done.get("documents").([]any) {
		ids = append(ids, d.(map[string]any)["jobId"].(string))
	}
	for _, id := range ids {
		if ended[id] != 1 {
			t.Errorf("job %s ended %d times", id, ended[id])
		}
	}
	if n := len(endedJobs(t, p2.log)); n == 0 {
		t.Fatal("the second run had nothing to do: the batch ended before the signal")
	}
}

// TestShutdownGraceInterruptsJob gives a job that cannot finish within the
// grace period: the process still exits at once, the job is not recorded
// as failed, and the next start runs it to completion, once.
func TestShutdownGraceInterruptsJob(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	data, addr := t.TempDir(), freeAddr(t)
	p1 := startProc(t, data, addr, "run1.log", "--workers", "1", "--shutdown-grace", "1ms")
	c := procClient(t, data, addr)
	u := c.signup("Cut")
	key := c.createKey(u.token, nil)
	tpl := c.createTemplate(u.token, "Heavy", heavyTemplate(10))
	var jobID string
	for attempt := 0; attempt < 5 && jobID == ""; attempt++ {
		id := c.must(200, "POST", "/api/v1/documents/generate?async=true", key, map[string]any{"templateId": tpl.str("id"), "format": "xlsx", "variables": map[string]any{"title": "T"}}).str("jobId")
		// Signal while it renders.
		waitFor(t, 20*time.Second, func() bool {
			st := c.must(200, "GET", "/api/v1/documents/jobs/"+id, key, nil).str("status")
			return st != "pending"
		})
		if c.must(200, "GET", "/api/v1/documents/jobs/"+id, key, nil).str("status") == "processing" {
			jobID = id
		}
	}
	if jobID == "" {
		t.Fatal("the job never was seen processing: make it heavier")
	}
	p1.cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan error, 1)
	go func() { exited <- p1.cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, readFile(t, p1.log))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a 1 ms grace period did not end the process promptly")
	}
	log1 := readFile(t, p1.log)
	if endedJobs(t, p1.log)[jobID] != 0 {
		// It finished just before the signal took effect; nothing to test.
		t.Skip("the job ended before the grace period ran out")
	}
	if !strings.Contains(log1, "job interrupted by shutdown") || !strings.Contains(log1, jobID) {
		t.Fatalf("no interruption logged:\n%s", log1)
	}
	p2 := startProc(t, data, addr, "run2.log", "--workers", "1")
	_ = p2
	if j := c.waitJob(key, jobID); j.str("status") != "completed" {
		t.Fatalf("interrupted job after restart: %s", j.raw)
	}
	if n := endedJobs(t, p1.log, p2.log)[jobID]; n != 1 {
		t.Fatalf("job ended %d times", n)
	}
}

// TestSIGHUPReloadsCertificate replaces --tls-cert/--tls-key under a running
// server and sends SIGHUP: new connections get the new certificate; a broken
// pair is refused and the working one stays.
func TestSIGHUPReloadsCertificate(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	dir := t.TempDir()
	pair := func(name string) (cert, key []byte) {
		c, k, err := web.SelfSigned(filepath.Join(dir, name), "127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		cb, _ := os.ReadFile(c)
		kb, _ := os.ReadFile(k)
		return cb, kb
	}
	certA, keyA := pair("a")
	certB, keyB := pair("b")
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	install := func(cert, key []byte) {
		for _, f := range []struct {
			path string
			b    []byte
		}{{keyFile, key}, {certFile, cert}} {
			if err := os.WriteFile(f.path+".tmp", f.b, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(f.path+".tmp", f.path); err != nil {
				t.Fatal(err)
			}
		}
	}
	install(certA, keyA)
	addr := freeAddr(t)
	p := startProc(t, t.TempDir(), addr, "hup.log", "--tls-cert", certFile, "--tls-key", keyFile)
	served := func() []byte {
		conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) // only reading the certificate
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return pemCert(conn.ConnectionState().PeerCertificates[0].Raw)
	}
	if !bytes.Equal(served(), certA) {
		t.Fatal("not serving the --tls-cert certificate")
	}
	install(certB, keyB)
	p.cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, 5*time.Second, func() bool { return bytes.Equal(served(), certB) })

	os.WriteFile(certFile, []byte("not a certificate"), 0o600)
	p.cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, 5*time.Second, func() bool { return strings.Contains(readFile(t, p.log), "certificate reload failed") })
	if !bytes.Equal(served(), certB) {
		t.Fatal("a failed reload replaced the working certificate")
	}
	if !strings.Contains(readFile(t, p.log), `msg="certificate reloaded"`) {
		t.Fatal("reload not logged")
	}
}

// heavyTemplate renders a workbook of 9,000 rows and 4*n columns from one
// short variable: a document that keeps a worker busy (about 15 ms per n
// here), for the shutdown tests.
func heavyTemplate(n int) map[string]any {
	var cols []any
	for i := 0; i < n; i++ {
		cols = append(cols, map[string]any{"header": fmt.Sprintf("N%d", i), "value": "{{row}}"}, map[string]any{"header": fmt.Sprintf("Square%d", i), "value": "{{row * row}}"},
			map[string]any{"header": fmt.Sprintf("Text%d", i), "value": "row {{row}} of the heavy workbook"}, map[string]any{"header": fmt.Sprintf("Half%d", i), "value": "{{row / 2}}"})
	}
	return map[string]any{"outputFormats": []string{"xlsx"},
		"schema": map[string]any{"sections": []any{map[string]any{"id": "s", "components": []any{
			map[string]any{"type": "heading", "props": map[string]any{"content": "{{title}}"}},
			map[string]any{"type": "table", "props": map[string]any{"rows": "1..9000", "columns": cols}}}}}},
		"variables": []any{map[string]any{"name": "title", "type": "string", "required": true}}}
}

func pemCert(der []byte) []byte {
	return []byte("-----BEGIN CERTIFICATE-----\n" + wrap64(base64.StdEncoding.EncodeToString(der)) + "-----END CERTIFICATE-----\n")
}

func wrap64(s string) string {
	var b strings.Builder
	for len(s) > 64 {
		b.WriteString(s[:64] + "\n")
		s = s[64:]
	}
	b.WriteString(s + "\n")
	return b.String()
}

// syncBuffer collects log output written from many goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLogsCarryRequestIDsAndNoSecrets runs a session touching every kind of
// secret (passwords, access and refresh tokens, API keys, TOTP secrets and
// backup codes, mail tokens, webhook secrets, download signatures, variable
// values) and then reads the whole log: the request id of the generate call
// is on its access line, its job's end and its webhook attempt, and none of
// the secrets appears anywhere, in either log format.
func TestLogsCarryRequestIDsAndNoSecrets(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			var logs syncBuffer
			var h slog.Handler = slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})
			if format == "json" {
				h = slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})
			}
			rcv := startReceiver(t, false)
			s := startMain(t, &Main{Logger: slog.New(h)}, func(c *Config) {
				c.WebhookAllowPrivate, c.WebhookCA, c.LogFormat = true, rcv.caFile, format
			})
			secrets, teamID := scriptedSession(t, s, rcv)
			text := logs.String()
			const reqID = "req-logs-0001"
			for _, msg := range []string{"request", "job ended", "webhook attempt"} {
				if !logLineHas(text, msg, reqID) {
					t.Errorf("no %q log line carries request id %s", msg, reqID)
				}
			}
			// The generate call's one access line: method, path, status,
			// duration and the team it acted for.
			var access []map[string]string
			for _, l := range logLines(t, text, format) {
				if l["msg"] == "request" && l["request_id"] == reqID {
					access = append(access, l)
				}
			}
			if len(access) != 1 {
				t.Fatalf("%d access lines for request %s, want 1", len(access), reqID)
			}
			a := access[0]
			if a["method"] != "POST" || a["path"] != "/api/v1/documents/generate" || a["status"] != "200" || a["team"] != teamID {
				t.Errorf("access line %v, want POST /api/v1/documents/generate 200 team %s", a, teamID)
			}
			if d, err := strconv.ParseFloat(a["duration_ms"], 64); err != nil || d < 0 {
				t.Errorf("access line duration_ms %q", a["duration_ms"])
			}
			jwtKey, _ := os.ReadFile(filepath.Join(s.Config.Data, "keys", "jwt.key"))
			dlKey, _ := os.ReadFile(filepath.Join(s.Config.Data, "keys", "download.key"))
			for _, k := range [][]byte{jwtKey, dlKey} {
				secrets = append(secrets, hex.EncodeToString(k), base64.StdEncoding.EncodeToString(k), base64.RawURLEncoding.EncodeToString(k))
			}
			for _, sec := range secrets {
				if len(sec) < 6 {
					t.Fatalf("secret %q too short to search for", sec)
				}
				if strings.Contains(text, sec) {
					t.Errorf("log contains a secret %q:\n%s", sec, lineWith(text, sec))
				}
			}
			if os.Getenv("FOLIO_SHOW_LOGS") != "" {
				t.Log(text)
			}
			if testing.Verbose() {
				t.Logf("%d log lines checked for %d secrets", strings.Count(text, "\n"), len(secrets))
			}
		})
	}
}

// scriptedSession exercises the API and returns every secret it saw and the
// id of the team it generated a document for.
func scriptedSession(t *testing.T, s *testServer, rcv *receiver) (secrets []string, teamID string) {
	t.Helper()
	const pw1, pw2, wrong = "Sup3r-Secret-Passw0rd!", "An0ther-Secret-Passw0rd?", "Wr0ng-Passw0rd-Guess"
	const email = "secrets@example.com"
	keep := func(v string) string {
		if v == "" {
			t.Fatal("expected a secret, got nothing")
		}
		secrets = append(secrets, v)
		return v
	}
	keep(pw1)
	keep(pw2)
	keep(wrong)
	r := s.must(200, "POST", "/api/auth/signup", "", map[string]any{"email": email, "password": pw1, "name": "Secretive"})
	keep(r.str("accessToken"))
	keep(r.str("refreshToken"))
	for _, m := range s.mails(email) {
		if tok := mailToken.FindStringSubmatch(m); tok != nil {
			keep(tok[1])
			s.must(200, "POST", "/api/auth/verify-email", "", map[string]any{"token": tok[1]})
		}
	}
	s.do("POST", "/api/auth/login", "", map[string]any{"email": email, "password": wrong})
	login := s.must(200, "POST", "/api/auth/login", "", map[string]any{"email": email, "password": pw1})
	token := keep(login.str("accessToken"))
	refreshed := s.must(200, "POST", "/api/auth/refresh", "", map[string]any{"refreshToken": keep(login.str("refreshToken"))})
	keep(refreshed.str("refreshToken"))
	s.do("POST", "/api/auth/refresh", "", map[string]any{"refreshToken": login.str("refreshToken")}) // reuse: refused
	s.do("GET", "/api/users/me", "garbage-bearer-token-abc", nil)

	tf := s.must(200, "POST", "/api/users/me/2fa/enable", token, nil)
	secret := keep(tf.str("secret"))
	for _, c := range tf.get("backupCodes").([]any) {
		keep(c.(string))
	}
	s.must(200, "POST", "/api/users/me/2fa/verify", token, map[string]any{"code": totpCode(t, secret, time.Now())})
	pwc := s.must(200, "POST", "/api/users/me/change-password", token, map[string]any{"currentPassword": pw1, "newPassword": pw2})
	token = keep(pwc.str("accessToken"))
	keep(pwc.str("refreshToken"))

	keyResp := s.must(200, "POST", "/api/api-keys", token, map[string]any{"name": "secret key"})
	key := keep(keyResp.str("plainKey"))
	sub := s.must(200, "POST", "/api/v1/webhook-subscriptions", key, map[string]any{"url": rcv.url, "events": []string{"document.generated"}})
	keep(sub.str("secret"))
	tpl := s.createTemplate(token, "Invoice", invoiceTemplate)
	job := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf",
		"variables": map[string]any{"number": keep("VARIABLE-VALUE-7f3a"), "customer": keep("Customer-Secret-9b2c"), "note": keep("note-secret-e41d")}},
		"X-Request-Id", "req-logs-0001")
	if job.header.Get("X-Request-Id") != "req-logs-0001" {
		t.Fatalf("X-Request-Id not echoed: %v", job.header)
	}
	link := job.str("downloadUrl")
	keep(regexp.MustCompile(`signature=([0-9a-f]+)`).FindStringSubmatch(link)[1])
	if st, _, _ := s.download(link); st != 200 {
		t.Fatalf("download: %d", st)
	}
	// A variable error names the variable, never its value.
	s.wantError(s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf",
		"variables": map[string]any{"number": []string{keep("bad-type-value-93ad")}, "customer": "c"}}), 400, "ERR_VALID_002")
	rcv.waitFor(1, 10*time.Second)
	time.Sleep(100 * time.Millisecond) // the attempt's log line follows its answer
	return secrets, keyResp.str("teamId")
}

// logLines parses a text or JSON slog output into one map of attribute
// values (as text) per line.
func logLines(t *testing.T, logs, format string) []map[string]string {
	t.Helper()
	var out []map[string]string
	for _, l := range strings.Split(strings.TrimSpace(logs), "\n") {
		m := map[string]string{}
		if format == "json" {
			var v map[string]any
			if err := json.Unmarshal([]byte(l), &v); err != nil {
				t.Fatalf("log line %q: %v", l, err)
			}
			for k, x := range v {
				m[k] = fmt.Sprint(x)
			}
		} else {
			for _, kv := range textAttr.FindAllStringSubmatch(l, -1) {
				val := kv[2]
				if uq, err := strconv.Unquote(val); err == nil {
					val = uq
				}
				m[kv[1]] = val
			}
		}
		out = append(out, m)
	}
	return out
}

// textAttr is one key=value of slog's text format (value quoted when needed).
var textAttr = regexp.MustCompile(`(?:^| )([\w.]+)=("(?:[^"\\]|\\.)*"|\S*)`)

// logLineHas reports whether a log line with message msg also holds want.
func logLineHas(logs, msg, want string) bool {
	for _, l := range strings.Split(logs, "\n") {
		if (strings.Contains(l, `msg="`+msg+`"`) || strings.Contains(l, `msg=`+msg+` `) || strings.Contains(l, `"msg":"`+msg+`"`)) && strings.Contains(l, want) {
			return true
		}
	}
	return false
}

func lineWith(logs, s string) string {
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func waitFor(t *testing.T, d time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestVersionFromLdflags checks what `go build -ldflags "-X main.version=...
// -X main.commit=... -X main.date=..."` sets is what `folio version` prints.
func TestVersionFromLdflags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "folio")
	ldflags := "-X main.version=1.4.2 -X main.commit=3f9c2ab -X main.date=2026-03-01T12:00:00Z"
	build := exec.Command("go", "build", "-ldflags", ldflags, "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "folio 1.4.2 (commit 3f9c2ab, built 2026-03-01T12:00:00Z, go") {
		t.Fatalf("version: %v %q", err, out)
	}
	// CGO_ENABLED=0 gives one static binary: no dynamic loader, no libraries.
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	libs, _ := f.ImportedLibraries()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Fatalf("the binary is dynamically linked (%v, libraries %v)", p.Type, libs)
		}
	}
}

// TestTrustedProxies checks --trusted-proxies: behind a proxy on loopback,
// a forwarded client is not a loopback client (so /metrics stays closed to
// it), while without the flag X-Forwarded-For is ignored.
func TestTrustedProxies(t *testing.T) {
	// Without the flag the header is ignored: the peer (loopback) is the client.
	s := startServer(t)
	if r := s.do("GET", "/metrics", "", nil, "X-Forwarded-For", "203.0.113.9"); r.status != 200 {
		t.Fatalf("untrusted X-Forwarded-For changed the client: %d", r.status)
	}
	// Behind a trusted proxy on loopback, the forwarded client is the client.
	s = startServer(t, func(c *Config) { c.TrustedProxies = "127.0.0.1, ::1" })
	s.wantError(s.do("GET", "/metrics", "", nil, "X-Forwarded-For", "203.0.113.9"), 403, "ERR_AUTH_005")
	// A client cannot forge its way in: the right-most untrusted entry counts.
	s.wantError(s.do("GET", "/metrics", "", nil, "X-Forwarded-For", "127.0.0.1, 203.0.113.9"), 403, "ERR_AUTH_005")
	// The proxy's own requests (no header) are still loopback.
	if r := s.do("GET", "/metrics", "", nil); r.status != 200 {
		t.Fatalf("the proxy itself: %d", r.status)
	}
}

// TestReadyzFailsWhenAStoreOrTheWorkersStop takes away, one at a time on a
// running server, what /readyz checks for real: the SQLite database, the
// bbolt queue and the document workers. Each makes it answer 503 naming
// the failed check, while /healthz (the process is up) stays 200.
func TestReadyzFailsWhenAStoreOrTheWorkersStop(t *testing.T) {
	for _, tt := range []struct {
		check string
		stop  func(m *Main)
	}{
		{"sqlite", func(m *Main) { m.DB.Close() }},
		{"bbolt", func(m *Main) { m.Bolt.Close() }},
		{"workers", func(m *Main) { m.stopWorkers(context.Background()) }},
	} {
		t.Run(tt.check, func(t *testing.T) {
			s := startServer(t)
			c := opsClient(t, s)
			if r, err := c.Ready(context.Background()); err != nil || !r.Ready {
				t.Fatalf("before: %+v %v", r, err)
			}
			tt.stop(s.Main)
			r := s.do("GET", "/readyz", "", nil)
			var body struct {
				Status string `json:"status"`
				Checks map[string]struct {
					Status, Error string
				} `json:"checks"`
			}
			if err := json.Unmarshal(r.raw, &body); err != nil || r.status != 503 {
				t.Fatalf("readyz after stopping %s: %d %s", tt.check, r.status, r.raw)
			}
			if got := body.Checks[tt.check]; got.Status != "fail" || got.Error == "" {
				t.Fatalf("check %s: %+v\n%s", tt.check, got, r.raw)
			}
			if h := s.do("GET", "/healthz", "", nil); h.status != 200 {
				t.Fatalf("healthz: %d", h.status)
			}
		})
	}
}
