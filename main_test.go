package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"folio/internal/pgtest"
	"folio/internal/s3test"
)

// testServer is a real Folio server on a loopback port with a temp data dir.
type testServer struct {
	*Main
	t      testing.TB
	client *http.Client
}

var logToStderr = os.Getenv("FOLIO_TEST_LOG") != ""

// startServer boots Main like `folio serve` does and returns a TLS client
// that trusts its self-signed certificate.
func startServer(t testing.TB, opts ...func(*Config)) *testServer {
	t.Helper()
	return startServerIn(t, t.TempDir(), opts...)
}

func startServerIn(t testing.TB, data string, opts ...func(*Config)) *testServer {
	t.Helper()
	return startMain(t, &Main{Config: Config{Data: data}}, opts...)
}

// startMain opens m (with test defaults for unset config) and registers its close.
func startMain(t testing.TB, m *Main, opts ...func(*Config)) *testServer {
	t.Helper()
	data := m.Config.Data
	if data == "" {
		data = t.TempDir()
	}
	// Rate limits are off by default in tests (polling loops would trip
	// them); the rate-limit tests turn them on.
	m.Config = Config{Addr: "127.0.0.1:0", Data: data, Workers: 2, DefaultPlan: "scale", Signup: "open", LogFormat: "text", RateLimits: "off"}
	for _, o := range opts {
		o(&m.Config)
	}
	clusterBackend(t, &m.Config)
	if m.Logger == nil { // a test may capture the logs
		m.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		if logToStderr {
			m.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
		}
	}
	if err := m.Open(context.Background()); err != nil {
		t.Fatalf("open server: %v", err)
	}
	t.Cleanup(func() {
		m.Close()
		recordStatuses(m.Metrics) // for the check against web/openapi.json in TestMain
	})
	pem, err := os.ReadFile(filepath.Join(data, "tls", "cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	return &testServer{Main: m, t: t, client: client}
}

// resp is a decoded JSON response.
type resp struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

// str walks a dotted path ("relatedInfo.field") and returns it as text.
func (r resp) get(path string) any {
	var cur any = r.body
	for _, p := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

func (r resp) str(path string) string {
	v := r.get(path)
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// do sends a request with an optional bearer token and JSON body (a string
// is sent as is, anything else is marshalled).
func (s *testServer) do(method, path, token string, body any, headers ...string) resp {
	s.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	url := path
	if !strings.HasPrefix(path, "https://") {
		url = s.URL() + path
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := s.client.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	r := resp{status: res.StatusCode, header: res.Header, raw: raw}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") && !bytes.HasPrefix(raw, []byte("[")) {
		if err := json.Unmarshal(raw, &r.body); err != nil {
			s.t.Fatalf("%s %s: response is not a JSON object: %v\n%s", method, path, err, raw)
		}
	}
	return r
}

// must asserts the status and returns the response.
func (s *testServer) must(want int, method, path, token string, body any, headers ...string) resp {
	s.t.Helper()
	r := s.do(method, path, token, body, headers...)
	if r.status != want {
		s.t.Fatalf("%s %s: status %d, want %d\n%s", method, path, r.status, want, r.raw)
	}
	return r
}

// wantError asserts the spec's error envelope with status and code.
func (s *testServer) wantError(r resp, status int, code string) {
	s.t.Helper()
	if r.status != status || r.str("code") != code {
		s.t.Fatalf("got %d %s, want %d %s\n%s", r.status, r.str("code"), status, code, r.raw)
	}
	for _, f := range []string{"statusCode", "code", "message", "timestamp", "path"} {
		if r.get(f) == nil {
			s.t.Fatalf("error envelope lacks %q: %s", f, r.raw)
		}
	}
	if int(r.get("statusCode").(float64)) != status {
		s.t.Fatalf("statusCode %v, want %d", r.get("statusCode"), status)
	}
	if _, err := time.Parse(time.RFC3339Nano, r.str("timestamp")); err != nil {
		s.t.Fatalf("timestamp %q is not ISO 8601", r.str("timestamp"))
	}
}

var userSeq atomic.Int64

// user is a signed-up account with its tokens.
type user struct {
	email, password, token, refresh, id string
}

// signup creates a fresh account.
func (s *testServer) signup(name string) user {
	s.t.Helper()
	email := fmt.Sprintf("%s-%d@example.com", strings.ToLower(name), userSeq.Add(1))
	r := s.must(200, "POST", "/api/auth/signup", "", map[string]any{"email": email, "password": "correct horse", "name": name})
	return user{email: email, password: "correct horse", token: r.str("accessToken"), refresh: r.str("refreshToken"), id: r.str("user.id")}
}

// createKey makes an API key for the caller's team and returns its text.
func (s *testServer) createKey(token string, perms map[string]bool) string {
	s.t.Helper()
	body := map[string]any{"name": "test key"}
	if perms != nil {
		body["permissions"] = perms
	}
	r := s.must(200, "POST", "/api/api-keys", token, body)
	return r.str("plainKey")
}

var invoiceTemplate = map[string]any{
	"name":          "Invoice",
	"outputFormats": []string{"pdf"},
	"schema": map[string]any{
		"format": "pdf", "pageSize": "A4",
		"sections": []any{map[string]any{"id": "body", "components": []any{
			map[string]any{"type": "heading", "props": map[string]any{"content": "Invoice {{number}}", "level": 1}},
			map[string]any{"type": "text", "props": map[string]any{"content": "Bill to: {{customer}}"}},
			map[string]any{"type": "text", "props": map[string]any{"content": "Note: {{note}}"}},
		}}},
	},
	"variables": []any{
		map[string]any{"name": "number", "type": "string", "required": true},
		map[string]any{"name": "customer", "type": "string", "required": true},
		map[string]any{"name": "note", "type": "string", "required": false, "defaultValue": "Thank you"},
	},
}

// createTemplate stores a template (a copy of tpl with the given name).
func (s *testServer) createTemplate(token, name string, tpl map[string]any) resp {
	s.t.Helper()
	body := map[string]any{}
	for k, v := range tpl {
		body[k] = v
	}
	body["name"] = name
	return s.must(200, "POST", "/api/templates", token, body)
}

// download fetches a URL without authentication.
func (s *testServer) download(url string) (int, http.Header, []byte) {
	s.t.Helper()
	res, err := s.client.Get(url)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, b
}

// mails returns the outbox messages sent to addr, oldest first.
func (s *testServer) mails(addr string) []string {
	s.t.Helper()
	files, _ := filepath.Glob(filepath.Join(s.Config.Data, "mail", "*.eml"))
	sort.Strings(files)
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			s.t.Fatal(err)
		}
		if strings.Contains(string(b), "\r\nTo: "+addr+"\r\n") {
			out = append(out, string(b))
		}
	}
	return out
}

var mailToken = regexp.MustCompile(`token=([A-Za-z0-9]+)`)

// pdfText extracts a PDF's text with poppler's pdftotext, an independent reader.
func pdfText(t testing.TB, pdf []byte) string {
	t.Helper()
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Fatalf("pdftotext is needed (apt-get install poppler-utils): %v", err)
	}
	cmd := exec.Command("pdftotext", "-layout", "-", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	return string(out)
}

// clusterBackend puts a test server on PostgreSQL and S3 when
// FOLIO_TEST_BACKEND=cluster (.ci/run runs the API tests that way too): a
// fresh database of the tests' private PostgreSQL and a fresh bucket of
// their versitygw per data directory (a server restarted on the same
// directory finds its records again), unless the test chose its own
// backends. Tests of what only the embedded mode has are skipped, each
// with its reason (embeddedOnly).
func clusterBackend(t testing.TB, c *Config) {
	if os.Getenv("FOLIO_TEST_BACKEND") != "cluster" || c.DatabaseURL != "" {
		return
	}
	for prefix, why := range embeddedOnly {
		if t.Name() == prefix || strings.HasPrefix(t.Name(), prefix+"/") {
			t.Skip("embedded mode only: " + why)
		}
	}
	srv := s3test.Shared(t)
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": s3test.AccessKey, "AWS_SECRET_ACCESS_KEY": s3test.SecretKey} {
		os.Setenv(k, v) // the whole test binary runs on this backend; no test sets other credentials
	}
	clusterMu.Lock()
	defer clusterMu.Unlock()
	b, ok := clusterBackends[c.Data]
	if !ok {
		b = [2]string{pgtest.NewDatabase(t), srv.URL(srv.NewBucket(t), "folio")}
		clusterBackends[c.Data] = b
	}
	c.DatabaseURL = b[0]
	if c.FilesURL == "" {
		c.FilesURL = b[1]
	}
}

var (
	clusterMu       sync.Mutex
	clusterBackends = map[string][2]string{} // data directory -> database URL, files URL
)

// embeddedOnly are the API tests that test what the embedded mode alone
// has (FOLIO_TEST_BACKEND=cluster skips them, saying why).
var embeddedOnly = map[string]string{
	"TestAssetBackupRestore":                    "folio admin backup and restore of --data (PostgreSQL: pg_dump)",
	"TestAdminBackupWhileServing":               "folio admin backup of --data",
	"TestAdminCommandsBesideRunningServer":      "folio admin commands on --data's SQLite",
	"TestAdminCreateUserDefaultPlan":            "folio admin commands on --data's SQLite",
	"TestAdminSetPlanAndCreditsBySlug":          "folio admin commands on --data's SQLite",
	"TestDashboardUsage":                        "it adds credits with folio admin on --data",
	"TestQuotaCreditsAndMonths":                 "it adds credits with folio admin on --data",
	"TestConcurrentWritersNeverSeeLocked":       "SQLite's single writer beside folio admin",
	"TestGenerateAndDownloadPDF":                "it signs links with keys/download.key from --data",
	"TestDeniedDownloadSaysHowToGetAFreshLink":  "it signs links with keys/download.key from --data",
	"TestRouteIsolationMatrix":                  "it mints tokens with keys/jwt.key from --data",
	"TestBatchPollETag":                         "it mints tokens with keys/jwt.key from --data",
	"TestJobListExportDelete":                   "it checks the documents' files in --data",
	"TestRetentionJanitor":                      "it checks the documents' files in --data",
	"TestShutdownDuringRetention":               "it times SQLite's retention steps",
	"TestCachedGenerateStatements":              "it counts SQLite statements",
	"TestCachedPlanChangedAtOnce":               "it changes the plan with folio admin on --data",
	"TestHealthzAndReadyz":                      "readyz names the sqlite and bbolt checks",
	"TestReadyzFailsOnReadOnlyDataDir":          "a read-only --data",
	"TestReadyzFailsWhenAStoreOrTheWorkersStop": "it closes the SQLite store under the server",
	"TestLogsCarryRequestIDsAndNoSecrets":       "it reads the keys from --data to search the logs for them",
	"TestAnalyticsAfterRollupBackfill":          "SQLite's roll-up backfill",
	"TestJanitorPurgesDeletedAccounts":          "it reads the SQLite store under the server",
	"TestJobQueuedTwiceRunsOnce":                "it drives bbolt's queue under the server (PostgreSQL's: store/postgres queue tests)",
	"TestOrphanedJobIsQueuedAgain":              "it drives bbolt's queue under the server",
	"TestPriorities":                            "it drives bbolt's queue under the server",
	"TestRunningJobKeepsItsLease":               "it drives bbolt's queue under the server",
	"TestStartQueuesJobsWithoutQueueEntry":      "it drives bbolt's queue under the server",
	"TestKill9MidBatch":                         "kill -9 of an embedded server (on PostgreSQL: internal/cluster)",
	"TestKill9BeforeWebhookDispatch":            "kill -9 of an embedded server (on PostgreSQL: internal/cluster)",
	"TestKill9DuringWebhookAttempt":             "kill -9 of an embedded server (on PostgreSQL: internal/cluster)",
	"TestKill9DuringWebhookRetryWindow":         "kill -9 of an embedded server (on PostgreSQL: internal/cluster)",
	"TestKill9DuringMigration":                  "kill -9 during a SQLite migration",
	"TestKill9BetweenRenderAndWrite":            "kill -9 of an embedded server (on PostgreSQL: internal/cluster)",
	"TestPermDataDirIsPrivate":                  "the modes of --data's database files",
	"TestPermServeUmask":                        "the modes of --data's database files",
	"TestSharedStateAcrossServers":              "it wires PostgreSQL's shared state into two embedded servers itself",
	"TestSignaturesThroughAPI":                  "it checks keys/signing.key's mode in --data",
	"TestTemplateRoles":                         "it edits rows in --data's SQLite",
	"TestWebhookChangesNeedVerifiedEmail":       "it edits rows in --data's SQLite",
	"TestWebhookHistoryRetention":               "it ages rows in --data's SQLite",
	"TestMemberPlanLimit":                       "it changes the plan with folio admin on --data",
	"TestAdminBackupHangingServer":              "folio admin backup of --data",
	"TestInlineDocumentBackupRestore":           "folio admin backup and restore of --data",
	"TestWebhookDisableCancelsPendingRetry":     "it reads bbolt's webhook schedule under the server",
	"TestWebhookRateLimitEndToEnd":              "it reads bbolt's webhook schedule under the server",
	"TestWebhookSweepRecoversFromErrors":        "it reads bbolt's webhook schedule under the server",
	"TestInlineDocument":                        "it reads job_files in --data's SQLite",
	"TestLargeDocumentIsAFile":                  "it reads job_files in --data's SQLite",
	"TestInlineDocumentRetention":               "it reads job_files in --data's SQLite",
	"TestDamagedSegmentDownloadIsGone":          "it damages a segment in --data's docs/ (PostgreSQL keeps documents in rows)",
	"TestPDFOptionsAfterRestart":                "it edits a job in --data's SQLite (restarts on PostgreSQL: internal/cluster)",
	"TestMigrateEmbeddedToCluster":              "it migrates an embedded install itself",
}
