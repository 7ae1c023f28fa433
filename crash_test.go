package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"folio/app"
	"folio/internal/pgtest"
	"folio/store"
)

// TestMain lets the test binary act as the folio binary: a crash test
// re-executes it with FOLIO_TEST_EXEC set, so `kill -9` hits a real process.
// After a full, passing run it checks that web/openapi.json declares every
// status the tests saw (openapi_status_test.go).
func TestMain(m *testing.M) {
	if args := os.Getenv("FOLIO_TEST_EXEC"); args != "" {
		switch os.Getenv("FOLIO_TEST_CRASH") {
		case "before-dispatch":
			// Die like kill -9 the moment the first event is about to be
			// dispatched: its job's end and the event are committed, no
			// delivery exists yet.
			testHookDeliverer = func(d *app.Deliverer) { d.Store = crashBeforeDispatch{d.Store} }
		case "retry-scheduled":
			// Die the moment a failed attempt 1 has put attempt 2 in bbolt.
			testHookDeliverer = func(d *app.Deliverer) { d.Queue = crashWhenRetryScheduled{d.Queue} }
		case "poison":
			// Die like a fatal runtime error (a stack overflow, which
			// recover cannot catch) while rendering any job whose
			// variables hold "poison".
			testHookDocuments = func(s *app.DocumentService) { s.Jobs = crashOnPoison{s.Jobs} }
		case "before-record":
			// Die like kill -9 after a document is rendered, before its
			// one write: RecordJob (synchronous) or FinishJob (queued).
			testHookDocuments = func(s *app.DocumentService) { s.Jobs = crashBeforeRecord{s.Jobs} }
		case "after-append":
			// Die like kill -9 once a synchronous generate's document is
			// in its segment, before the transaction that names it.
			store.TestHookDocWritten = func() { syscall.Kill(os.Getpid(), syscall.SIGKILL); select {} }
		case "hold-writes":
			// Not a crash: every document's write takes two minutes, so a
			// drain waits for the job running (signal_test.go).
			testHookDocuments = func(s *app.DocumentService) { s.Files, s.InlineMax = slowWrites{s.Files}, -1 }
		}
		os.Exit(run(context.Background(), strings.Fields(args), os.Stdout, os.Stderr))
	}
	code := runCheckingPlans(m) // plans_test.go: no query scans a large table
	pgtest.Stop()               // the private PostgreSQL of the tests that started one
	if code == 0 && fullRun() {
		code = checkObservedStatuses(os.Stderr) // openapi_status_test.go
	}
	os.Exit(code)
}

type crashBeforeDispatch struct{ app.WebhookStore }

func (crashBeforeDispatch) DispatchEvent(context.Context, *app.Event, int, time.Time) ([]*app.Delivery, error) {
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

type crashOnPoison struct{ app.JobStore }

func (c crashOnPoison) StartJob(ctx context.Context, id string, now time.Time) (*app.Job, bool, error) {
	j, ok, err := c.JobStore.StartJob(ctx, id, now)
	if ok && j.Crashes < app.MaxJobCrashes && strings.Contains(string(j.Variables), "poison") {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	return j, ok, err
}

type crashWhenRetryScheduled struct{ app.WebhookSchedule }

func (c crashWhenRetryScheduled) ReplaceAttempt(ctx context.Context, e, next *app.ScheduleEntry) error {
	err := c.WebhookSchedule.ReplaceAttempt(ctx, e, next)
	if err == nil && next != nil && next.Attempt == 2 {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	return err
}

// waitKilled waits until the child process killed itself with SIGKILL.
func (p *proc) waitKilled(t *testing.T) {
	t.Helper()
	exited := make(chan error, 1)
	go func() { exited <- p.cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(scaled(60 * time.Second)):
		t.Fatal("the server did not reach its crash point")
	}
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the server ended with %v, not SIGKILL", p.cmd.ProcessState)
	}
}

// generateAsync asks a child server for a document without waiting for
// the answer, which a crash inside the request may cut off.
func generateAsync(c *testServer, key, tplID string) {
	body := `{"templateId":"` + tplID + `","format":"pdf","variables":{"number":"1","customer":"c"}}`
	req, _ := http.NewRequest("POST", c.URL()+"/api/v1/documents/generate", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	go func() {
		if res, err := c.client.Do(req); err == nil {
			res.Body.Close()
		}
	}()
}

// proc is a folio server running as a child process.
type proc struct {
	cmd *exec.Cmd
	log string
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startProc runs `folio serve` in a child process and waits until it answers.
func startProc(t *testing.T, data, addr, logName string, extra ...string) *proc {
	t.Helper()
	return startProcEnv(t, nil, data, addr, logName, extra...)
}

// startProcEnv is startProc with extra environment variables.
func startProcEnv(t *testing.T, env []string, data, addr, logName string, extra ...string) *proc {
	t.Helper()
	p := spawnProc(t, env, data, addr, logName, extra...)
	p.waitListening(t, addr)
	return p
}

// spawnProc starts `folio serve` in a child process without waiting for it.
func spawnProc(t *testing.T, env []string, data, addr, logName string, extra ...string) *proc {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), logName)
	lf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"serve", "--addr", addr, "--data", data, "--default-plan", "scale", "--rate-limits", "off"}, extra...)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "FOLIO_TEST_EXEC="+strings.Join(args, " ")), env...)
	cmd.Stdout, cmd.Stderr = lf, lf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, log: logPath}
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		p.cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("%s:\n%s", logName, b[max(0, len(b)-4000):])
		}
	})
	return p
}

// scaled stretches a deadline for the race detector's build. Deadlines
// here only bound a failure: a passing run waits for what it waits for,
// never for a fixed time.
func scaled(d time.Duration) time.Duration {
	if raceEnabled {
		return 10 * d
	}
	return d
}

// waitListening waits until the child accepts connections on addr.
func (p *proc) waitListening(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(scaled(20 * time.Second))
	for {
		if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(p.log)
			t.Fatalf("server did not start:\n%s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill9 sends SIGKILL: no shutdown code runs.
func (p *proc) kill9(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()
}

// client returns a testServer-like client for a child process's address.
func procClient(t *testing.T, data, addr string) *testServer {
	t.Helper()
	pem, err := os.ReadFile(filepath.Join(data, "tls", "cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	m := &Main{Config: Config{BaseURL: "https://" + addr, Data: data}}
	return &testServer{Main: m, t: t, client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}}
}

var jobEnded = regexp.MustCompile(`msg="job ended" job=(job_\S+)`)

func endedJobs(t *testing.T, logs ...string) map[string]int {
	t.Helper()
	count := map[string]int{}
	for _, l := range logs {
		f, err := os.Open(l)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if m := jobEnded.FindStringSubmatch(sc.Text()); m != nil {
				count[m[1]]++
			}
		}
		f.Close()
	}
	return count
}

// TestKill9MidBatch accepts a 100-document batch, kills the server with
// SIGKILL part-way, restarts it on the same data directory and checks that
// every document was completed exactly once with an intact file.
func TestKill9MidBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test starts real processes")
	}
	data, addr := t.TempDir(), freeAddr(t)
	p1 := startProc(t, data, addr, "run1.log", "--workers", "1")
	c := procClient(t, data, addr)
	u := c.signup("Crash")
	key := c.createKey(u.token, nil)
	tpl := c.createTemplate(u.token, "Long", longTemplate())
	body := strings.Repeat("Durable documents survive crashes. ", 230) // ~8 KB x 10 components: about 20 pages
	var docs []any
	for i := 0; i < 100; i++ {
		docs = append(docs, map[string]any{"variables": map[string]any{"body": fmt.Sprintf("MARK-%03d ", i) + body}})
	}
	b := c.must(200, "POST", "/api/v1/documents/generate/batch", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "documents": docs})
	batchID := b.str("batchId")

	// Kill once some, not all, documents are done.
	deadline := time.Now().Add(60 * time.Second)
	for {
		st := c.must(200, "GET", "/api/v1/documents/batches/"+batchID, key, nil)
		if n := st.str("completedDocuments"); n != "0" {
			if st.str("status") != "processing" {
				t.Fatalf("batch finished before the kill; make documents heavier: %s", st.str("completedDocuments"))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no document completed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	p1.kill9(t)

	p2 := startProc(t, data, addr, "run2.log", "--workers", "2")
	_ = p2
	done := c.waitBatch(key, batchID)
	if done.str("status") != "completed" || done.str("completedDocuments") != "100" || done.str("failedDocuments") != "0" {
		t.Fatalf("after restart: %s %s/%s", done.str("status"), done.str("completedDocuments"), done.str("failedDocuments"))
	}
	entries := done.get("documents").([]any)
	ids := map[string]bool{}
	for i, e := range entries {
		d := e.(map[string]any)
		id := d["jobId"].(string)
		if ids[id] || d["status"] != "completed" {
			t.Fatalf("entry %d: %v", i, d)
		}
		ids[id] = true
		st, _, pdf := c.download(d["downloadUrl"].(string))
		if st != 200 || !strings.HasPrefix(string(pdf), "%PDF-") || !strings.Contains(string(pdf[max(0, len(pdf)-64):]), "%%EOF") {
			t.Fatalf("document %d: status %d, %d bytes, not a whole PDF", i, st, len(pdf))
		}
		if want := fmt.Sprintf("MARK-%03d", i); !strings.Contains(pdfText(t, pdf), want) {
			t.Fatalf("document %d lacks %s", i, want)
		}
	}
	if len(ids) != 100 {
		t.Fatalf("%d distinct job ids", len(ids))
	}
	// Exactly once: each job ended once across both runs, and the second run
	// did real work (the kill landed mid-batch). A job's "job ended" line is
	// logged just after its end is committed, so the batch can read
	// completed a moment before the second run's last line is written;
	// and the one job that run 1's single worker was finishing when the
	// kill landed may have its end committed without its line.
	var ended map[string]int
	missing := func() int {
		n := 0
		for id := range ids {
			if ended[id] == 0 {
				n++
			}
		}
		return n
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if ended = endedJobs(t, p1.log, p2.log); missing() == 0 || time.Now().After(deadline) {
			break
		}
	}
	for id := range ids {
		if ended[id] > 1 {
			t.Fatalf("job %s ended %d times", id, ended[id])
		}
	}
	if n := missing(); n > 1 {
		t.Fatalf("%d jobs never logged their end", n)
	}
	if n := len(endedJobs(t, p2.log)); n == 0 || n == 100 {
		t.Fatalf("second run ended %d jobs; the kill did not land mid-batch", n)
	}
	// No temp files left behind: the restart removes those of the write the
	// kill interrupted, and no write runs now.
	tmp, _ := filepath.Glob(filepath.Join(data, "files", "*", ".tmp-*"))
	if len(tmp) > 0 {
		t.Fatalf("temp files left after the restart: %v", tmp)
	}
}

// hookProc sets up, on a child server, a verified user with a key, a
// subscription of document.generated to url and a template.
func hookProc(t *testing.T, c *testServer, data, url string) (key string, sub, tpl resp) {
	t.Helper()
	u := c.signup("Durable")
	var out, errb strings.Builder
	if run(context.Background(), []string{"admin", "verify-email", "--data", data, "--email", u.email}, &out, &errb) != 0 {
		t.Fatal(errb.String())
	}
	key = c.createKey(u.token, nil)
	sub = c.must(200, "POST", "/api/v1/webhook-subscriptions", key, map[string]any{"url": url, "events": []string{"document.generated"}})
	return key, sub, c.createTemplate(u.token, "Invoice", invoiceTemplate)
}

func openSQL(t *testing.T, data string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, "folio.db")+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// waitDelivered waits until the subscription's only delivery succeeded.
func waitDelivered(t *testing.T, c *testServer, key, subID string) map[string]any {
	t.Helper()
	var d map[string]any
	waitUntil(t, 30*time.Second, "the delivery succeeded", func() bool {
		dels := c.must(200, "GET", "/api/v1/webhook-subscriptions/"+subID+"/deliveries", key, nil).get("deliveries").([]any)
		if len(dels) != 1 {
			return false
		}
		d = dels[0].(map[string]any)
		return d["status"] == "success"
	})
	return d
}

// TestKill9BeforeWebhookDispatch kills the server (SIGKILL, from inside, at
// that exact point) after a job's end and its event were committed and
// before the event was dispatched. After restart the event is delivered
// exactly once.
func TestKill9BeforeWebhookDispatch(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test starts real processes")
	}
	rcv := startReceiver(t, false)
	data, addr := t.TempDir(), freeAddr(t)
	flags := []string{"--webhook-allow-private", "--webhook-ca", rcv.caFile}
	p1 := startProcEnv(t, []string{"FOLIO_TEST_CRASH=before-dispatch"}, data, addr, "run1.log", flags...)
	c := procClient(t, data, addr)
	key, sub, tpl := hookProc(t, c, data, rcv.url)
	generateAsync(c, key, tpl.str("id"))
	p1.waitKilled(t)

	// The state the kill left: job ended, event stored, nothing dispatched.
	db := openSQL(t, data)
	var job, status, eventID string
	var dispatched, deliveries int
	if err := db.QueryRow(`SELECT id, status FROM jobs`).Scan(&job, &status); err != nil || status != "completed" {
		t.Fatalf("job %s: %q, %v", job, status, err)
	}
	if err := db.QueryRow(`SELECT id, dispatched FROM events`).Scan(&eventID, &dispatched); err != nil || dispatched != 0 {
		t.Fatalf("event: %v, dispatched %d", err, dispatched)
	}
	db.QueryRow(`SELECT COUNT(*) FROM webhook_deliveries`).Scan(&deliveries)
	if deliveries != 0 || len(rcv.requests()) != 0 {
		t.Fatalf("%d deliveries, %d requests before the restart", deliveries, len(rcv.requests()))
	}

	startProc(t, data, addr, "run2.log", flags...)
	d := waitDelivered(t, c, key, sub.str("id"))
	got := rcv.requests()
	if len(got) != 1 || d["attempts"] != 1.0 || got[0].header.Get("X-Service-Event-Id") != eventID {
		t.Fatalf("%d requests (event %s), delivery %v; want the stored event %s once", len(got), got[0].header.Get("X-Service-Event-Id"), d, eventID)
	}
	verify(t, sub.str("secret"), got[0])
	if e := decodeEvent(t, got[0]); e.Data["jobId"] != job {
		t.Fatalf("event = %+v", e)
	}
}

// TestKill9DuringWebhookAttempt kills the server while the receiver holds
// attempt 1 (its lease held, its outcome unrecorded). After restart the
// attempt is sent again with the same event id and body and recorded once:
// the documented at-least-once.
func TestKill9DuringWebhookAttempt(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test starts real processes")
	}
	rcv := startReceiver(t, false)
	rcv.hold = make(chan struct{})
	data, addr := t.TempDir(), freeAddr(t)
	flags := []string{"--webhook-allow-private", "--webhook-ca", rcv.caFile}
	p1 := startProc(t, data, addr, "run1.log", flags...)
	c := procClient(t, data, addr)
	key, sub, tpl := hookProc(t, c, data, rcv.url)
	c.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": map[string]any{"number": "1", "customer": "c"}})
	rcv.waitFor(1, 30*time.Second)
	if rcv.holding() != 1 {
		t.Fatal("attempt 1 is not in flight")
	}
	p1.kill9(t)
	rcv.release()

	startProc(t, data, addr, "run2.log", flags...)
	d := waitDelivered(t, c, key, sub.str("id"))
	got := rcv.requests()
	if len(got) != 2 || d["attempts"] != 1.0 {
		t.Fatalf("%d requests, delivery %v; want attempt 1 sent twice and recorded once", len(got), d)
	}
	if got[0].header.Get("X-Service-Event-Id") != got[1].header.Get("X-Service-Event-Id") || string(got[0].body) != string(got[1].body) {
		t.Fatal("the resent attempt changed its event id or body")
	}
	verify(t, sub.str("secret"), got[1])
}

// TestKill9DuringWebhookRetryWindow kills the server (SIGKILL, from inside)
// right after a delivery's failed first attempt put its retry in bbolt,
// before the retry is due. To show that this schedule, not SQLite's next_retry_at, drives the
// retry, the test moves next_retry_at an hour ahead while the server is
// down. After restart the retry happens once, when bbolt says, with the
// same event id.
func TestKill9DuringWebhookRetryWindow(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test starts real processes")
	}
	rcv := startReceiver(t, false)
	rcv.failFirst = 1
	data, addr := t.TempDir(), freeAddr(t)
	flags := []string{"--webhook-allow-private", "--webhook-ca", rcv.caFile, "--webhook-retry-schedule", "0s,3s,3s,3s"}
	p1 := startProcEnv(t, []string{"FOLIO_TEST_CRASH=retry-scheduled"}, data, addr, "run1.log", flags...)
	c := procClient(t, data, addr)
	key, sub, tpl := hookProc(t, c, data, rcv.url)
	generateAsync(c, key, tpl.str("id"))
	p1.waitKilled(t)

	// What the kill left: in SQLite, attempt 1 recorded and a retry planned;
	// in bbolt, exactly one entry, for attempt 2, due then.
	db := openSQL(t, data)
	var id string
	var attempts int
	var next sql.NullInt64
	if err := db.QueryRow(`SELECT id, attempts, next_retry_at FROM webhook_deliveries`).Scan(&id, &attempts, &next); err != nil {
		t.Fatal(err)
	}
	del := map[string]any{"id": id}
	if attempts != 1 || !next.Valid || len(rcv.requests()) != 1 {
		t.Fatalf("state after the kill: attempts %d, next %v, %d requests", attempts, next, len(rcv.requests()))
	}
	q, err := store.OpenBolt(filepath.Join(data, "queue.db"))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := q.ScheduledAttempts(context.Background())
	q.Close()
	if err != nil || len(entries) != 1 || entries[0].DeliveryID != del["id"] || entries[0].Attempt != 2 || entries[0].Due.UnixMilli() != next.Int64 {
		t.Fatalf("bbolt schedule = %+v, %v; want attempt 2 of %s at %d", entries, err, del["id"], next.Int64)
	}
	if _, err := db.Exec(`UPDATE webhook_deliveries SET next_retry_at = next_retry_at + 3600000 WHERE id = ?`, del["id"]); err != nil {
		t.Fatal(err)
	}

	startProc(t, data, addr, "run2.log", flags...)
	d := waitDelivered(t, c, key, sub.str("id"))
	got := rcv.requests()
	if len(got) != 2 || d["attempts"] != 2.0 {
		t.Fatalf("%d requests, delivery %v; want one failure and one retry", len(got), d)
	}
	if got[0].header.Get("X-Service-Event-Id") != got[1].header.Get("X-Service-Event-Id") {
		t.Fatal("event id changed across the restart")
	}
	verify(t, sub.str("secret"), got[1])
}

// TestKill9DuringMigration kills the server while a migration (the job_stats
// backfill over 100,000 jobs) runs; the next start applies it once and the
// data is whole.
func TestKill9DuringMigration(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test starts real processes")
	}
	data, addr := t.TempDir(), freeAddr(t)
	// A database at the version before 0008_job_stats, full of jobs.
	p := startProc(t, data, addr, "setup.log")
	c := procClient(t, data, addr)
	u := c.signup("Migrator")
	p.cmd.Process.Signal(os.Interrupt)
	p.cmd.Wait()
	db := openSQL(t, data)
	var team string
	if err := db.QueryRow(`SELECT personal_team_id FROM users WHERE id = ?`, u.id).Scan(&team); err != nil {
		t.Fatal(err)
	}
	const n = 100_000
	// The fixture goes in with one statement and without the jobs
	// indexes, which the backfill reads past: inserts one by one through
	// database/sql, or indexes kept up or rebuilt, take minutes under the
	// race detector. The kill needs the backfill to run for a moment
	// only (below), not for long.
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	stmts := []string{`DROP TABLE job_stats`, `DELETE FROM migrations WHERE name = 'migrations/0008_job_stats.sql'`}
	rows, err := tx.Query(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'jobs' AND sql IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var index string
		if err := rows.Scan(&index); err != nil {
			t.Fatal(err)
		}
		stmts = append(stmts, `DROP INDEX `+index)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	for _, q := range stmts {
		if _, err := tx.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UnixMilli()
	if _, err := tx.Exec(`WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i < ? - 1)
		INSERT INTO jobs (id, team_id, template_id, status, format, priority, created_at, completed_at, duration_ms)
		SELECT printf('job_m%07d', i), ?, 'tpl_x', CASE WHEN i % 10 = 0 THEN 'failed' ELSE 'completed' END, 'pdf', 1, ? - i * 60000, ?, 7 FROM seq`,
		n, team, now, now); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	migrated := func() bool {
		var k int
		db.QueryRow(`SELECT COUNT(*) FROM migrations WHERE name = 'migrations/0008_job_stats.sql'`).Scan(&k)
		return k == 1
	}

	// Start, and kill while the backfill runs: once the server has held
	// SQLite's write lock without a break for a while. Before the backfill
	// start-up takes it only for moments (each migration already applied
	// is checked in a write transaction of its own), so no fixed delay is
	// needed, which a slower machine or the race build would outrun.
	lock := newWriteLockProbe(t, data)
	p = spawnProc(t, nil, data, addr, "killed.log")
	if !lock.waitHeld(t, 50*time.Millisecond, scaled(60*time.Second)) {
		t.Fatal("the server never held the write lock for 50 ms: the migration did not run")
	}
	p.kill9(t)
	if migrated() {
		t.Fatal("the migration finished before the kill; it must be slower for this test")
	}
	var exists int
	db.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE name = 'job_stats'`).Scan(&exists)
	if exists != 0 {
		t.Fatal("a killed migration left its table behind: migrations must be atomic")
	}

	// Restart: the migration runs once, completely.
	startProc(t, data, addr, "after.log")
	if !migrated() {
		t.Fatal("migration not applied after restart")
	}
	var total, failed int
	db.QueryRow(`SELECT SUM(count), SUM(CASE WHEN status = 'failed' THEN count ELSE 0 END) FROM job_stats WHERE team_id = ?`, team).Scan(&total, &failed)
	if total != n || failed != n/10 {
		t.Fatalf("job_stats after the interrupted migration: %d jobs, %d failed; want %d, %d", total, failed, n, n/10)
	}
}

// writeLockProbe tells whether another process holds a database's write
// lock, by trying to take it without waiting.
type writeLockProbe struct{ conn *sql.Conn }

func newWriteLockProbe(t *testing.T, data string) *writeLockProbe {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, "folio.db")+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &writeLockProbe{conn}
}

// held reports whether the write lock is held elsewhere now.
func (p *writeLockProbe) held(t *testing.T) bool {
	t.Helper()
	ctx := context.Background()
	_, err := p.conn.ExecContext(ctx, `BEGIN IMMEDIATE`)
	if err == nil {
		if _, err := p.conn.ExecContext(ctx, `ROLLBACK`); err != nil {
			t.Fatal(err)
		}
		return false
	}
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY {
		return true
	}
	t.Fatal(err)
	return false
}

// waitHeld waits until the lock has been held without a break for at
// least d (and over ten probes in a row), or gives up after within.
func (p *writeLockProbe) waitHeld(t *testing.T, d, within time.Duration) bool {
	t.Helper()
	var since time.Time
	probes := 0
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if !p.held(t) {
			since, probes = time.Time{}, 0
			continue
		}
		if probes++; since.IsZero() {
			since = time.Now()
		}
		if probes >= 10 && time.Since(since) >= d {
			return true
		}
	}
	return false
}

// TestPoisonJobIsQuarantined: a job that kills the process while it
// renders (here from inside, with SIGKILL, as a stack overflow would) is
// re-queued at every start from its row. Its first run and two retries
// die; at the third restart it fails with ERR_JOB_009 and a
// document.failed event instead of running again, and the server keeps
// serving.
func TestPoisonJobIsQuarantined(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test starts real processes")
	}
	rcv := startReceiver(t, false)
	data, addr := t.TempDir(), freeAddr(t)
	env := []string{"FOLIO_TEST_CRASH=poison"}
	flags := []string{"--workers", "1", "--webhook-allow-private", "--webhook-ca", rcv.caFile}
	p := startProcEnv(t, env, data, addr, "run0.log", flags...)
	c := procClient(t, data, addr)
	key, _, tpl := hookProc(t, c, data, rcv.url)
	c.must(200, "POST", "/api/v1/webhook-subscriptions", key, map[string]any{"url": rcv.url, "events": []string{"document.failed"}})
	// The worker may kill the process before the answer is written.
	body := `{"templateId":"` + tpl.str("id") + `","format":"pdf","variables":{"number":"poison","customer":"c"}}`
	req, _ := http.NewRequest("POST", c.URL()+"/api/v1/documents/generate?async=true", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	if res, err := c.client.Do(req); err == nil {
		res.Body.Close()
	}
	p.waitKilled(t)
	var jobID string
	if err := openSQL(t, data).QueryRow(`SELECT id FROM jobs`).Scan(&jobID); err != nil {
		t.Fatal(err)
	}
	job := resp{body: map[string]any{"jobId": jobID}}
	for run := 1; run <= 2; run++ {
		p = spawnProc(t, env, data, addr, fmt.Sprintf("run%d.log", run), flags...)
		p.waitKilled(t) // the retry dies too, perhaps before it listens
	}
	var crashes int
	if err := openSQL(t, data).QueryRow(`SELECT crashes FROM jobs WHERE id = ?`, job.str("jobId")).Scan(&crashes); err != nil || crashes != 2 {
		t.Fatalf("crashes recorded before the last restart: %d, %v; want 2 (the third is found at the next start)", crashes, err)
	}
	p = startProcEnv(t, env, data, addr, "run3.log", flags...)
	var st resp
	waitUntil(t, 30*time.Second, "the poison job failed", func() bool {
		st = c.must(200, "GET", "/api/v1/documents/jobs/"+job.str("jobId"), key, nil)
		return st.str("status") == "failed"
	})
	if st.str("errorCode") != "ERR_JOB_009" || !strings.Contains(st.str("error"), "crashed the renderer 3 times") {
		t.Fatalf("quarantined job: %s %q", st.str("errorCode"), st.str("error"))
	}
	// The receiver gets document.failed, once.
	var failed []map[string]any
	waitUntil(t, 30*time.Second, "document.failed was delivered", func() bool {
		failed = nil
		for _, r := range rcv.requests() {
			var ev map[string]any
			if json.Unmarshal(r.body, &ev) == nil && ev["event"] == "document.failed" {
				failed = append(failed, ev)
			}
		}
		return len(failed) > 0
	})
	if data, _ := failed[0]["data"].(map[string]any); len(failed) != 1 || data["jobId"] != job.str("jobId") || data["errorCode"] != "ERR_JOB_009" {
		t.Fatalf("document.failed deliveries: %v", failed)
	}
	// The server is still up and renders other documents.
	ok := c.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf",
		"variables": map[string]any{"number": "INV-1", "customer": "c"}})
	if ok.str("status") != "completed" {
		t.Fatalf("next document: %s", ok.str("status"))
	}
	// And it stops cleanly.
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("graceful stop: %v", err)
	}
}
