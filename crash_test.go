package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
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
)

// TestMain lets the test binary act as the folio binary: a crash test
// re-executes it with FOLIO_TEST_EXEC set, so `kill -9` hits a real process.
func TestMain(m *testing.M) {
	if args := os.Getenv("FOLIO_TEST_EXEC"); args != "" {
		os.Exit(run(context.Background(), strings.Fields(args), os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
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
	logPath := filepath.Join(t.TempDir(), logName)
	lf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"serve", "--addr", addr, "--data", data, "--default-plan", "scale", "--rate-limits", "off"}, extra...)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FOLIO_TEST_EXEC="+strings.Join(args, " "))
	cmd.Stdout, cmd.Stderr = lf, lf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, log: logPath}
	t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
			c.Close()
			return p
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logPath)
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
	// did real work (the kill landed mid-batch).
	ended := endedJobs(t, p1.log, p2.log)
	for id := range ids {
		if ended[id] != 1 {
			t.Fatalf("job %s ended %d times", id, ended[id])
		}
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

// TestKill9DuringWebhookRetryWindow kills the server after a delivery's
// first attempt failed and before its retry is due; after restart the retry
// happens once, with the same event id.
func TestKill9DuringWebhookRetryWindow(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test starts real processes")
	}
	rcv := startReceiver(t, false)
	rcv.failFirst = 1
	data, addr := t.TempDir(), freeAddr(t)
	flags := []string{"--webhook-allow-private", "--webhook-ca", rcv.caFile, "--webhook-retry-schedule", "0s,3s,3s,3s"}
	p1 := startProc(t, data, addr, "run1.log", flags...)
	c := procClient(t, data, addr)
	u := c.signup("Durable")
	var out, errb strings.Builder
	if run(context.Background(), []string{"admin", "verify-email", "--data", data, "--email", u.email}, &out, &errb) != 0 {
		t.Fatal(errb.String())
	}
	key := c.createKey(u.token, nil)
	sub := c.must(200, "POST", "/api/v1/webhook-subscriptions", key, map[string]any{"url": rcv.url, "events": []string{"document.generated"}})
	tpl := c.createTemplate(u.token, "Invoice", invoiceTemplate)
	c.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": map[string]any{"number": "1", "customer": "c"}})
	first := rcv.waitFor(1, 10*time.Second)
	p1.kill9(t)
	if time.Since(first[0].at) > 2*time.Second {
		t.Fatal("kill came after the retry was due; the test proves nothing")
	}

	startProc(t, data, addr, "run2.log", flags...)
	got := rcv.waitFor(2, 15*time.Second)
	time.Sleep(3500 * time.Millisecond) // a duplicate would show up by now
	got = rcv.requests()
	if len(got) != 2 {
		t.Fatalf("%d requests, want 2 (one failure, one retry)", len(got))
	}
	if got[0].header.Get("X-Service-Event-Id") != got[1].header.Get("X-Service-Event-Id") {
		t.Fatal("event id changed across the restart")
	}
	verify(t, sub.str("secret"), got[1])
	d := c.must(200, "GET", "/api/v1/webhook-subscriptions/"+sub.str("id")+"/deliveries", key, nil).get("deliveries").([]any)[0].(map[string]any)
	if d["status"] != "success" || d["attempts"] != 2.0 {
		t.Fatalf("delivery after restart = %v", d)
	}
}

// TestKill9DuringMigration kills the server while a migration (the job_stats
// backfill over 500,000 jobs) runs; the next start applies it once and the
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
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, "folio.db")+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	var team string
	if err := db.QueryRow(`SELECT personal_team_id FROM users WHERE id = ?`, u.id).Scan(&team); err != nil {
		t.Fatal(err)
	}
	tx, _ := db.Begin()
	tx.Exec(`DROP TABLE job_stats`)
	tx.Exec(`DELETE FROM migrations WHERE name = 'migrations/0008_job_stats.sql'`)
	stmt, _ := tx.Prepare(`INSERT INTO jobs (id, team_id, template_id, status, format, priority, created_at, completed_at, duration_ms) VALUES (?, ?, 'tpl_x', ?, 'pdf', 1, ?, ?, 7)`)
	now := time.Now().UnixMilli()
	const n = 500_000
	for i := 0; i < n; i++ {
		status := "completed"
		if i%10 == 0 {
			status = "failed"
		}
		if _, err := stmt.Exec(fmt.Sprintf("job_m%07d", i), team, status, now-int64(i)*60_000, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	migrated := func() bool {
		var k int
		db.QueryRow(`SELECT COUNT(*) FROM migrations WHERE name = 'migrations/0008_job_stats.sql'`).Scan(&k)
		return k == 1
	}

	// Start, and kill while the backfill runs.
	killed := false
	var delay time.Duration
	for attempt := 0; attempt < 5 && !killed; attempt++ {
		lf, _ := os.Create(filepath.Join(t.TempDir(), "mig.log"))
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "FOLIO_TEST_EXEC=serve --addr "+addr+" --data "+data+" --rate-limits off")
		cmd.Stdout, cmd.Stderr = lf, lf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		delay = time.Duration(150+100*attempt) * time.Millisecond
		time.Sleep(delay)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if migrated() {
			t.Fatalf("the migration finished before the kill (attempt %d); it must be slower for this test", attempt)
		}
		var exists int
		db.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE name = 'job_stats'`).Scan(&exists)
		if exists != 0 {
			t.Fatal("a killed migration left its table behind: migrations must be atomic")
		}
		killed = true
	}
	// Restart: the migration runs once, completely. Reaching readiness takes
	// well over the kill delay, so the kill did land while it ran.
	start := time.Now()
	startProc(t, data, addr, "after.log")
	if took := time.Since(start); took < 2*delay {
		t.Fatalf("start-up with the migration took %v, not clearly longer than the kill delay %v: the kill may have come before the migration", took, delay)
	}
	if !migrated() {
		t.Fatal("migration not applied after restart")
	}
	var total, failed int
	db.QueryRow(`SELECT SUM(count), SUM(CASE WHEN status = 'failed' THEN count ELSE 0 END) FROM job_stats WHERE team_id = ?`, team).Scan(&total, &failed)
	if total != n || failed != n/10 {
		t.Fatalf("job_stats after the interrupted migration: %d jobs, %d failed; want %d, %d", total, failed, n, n/10)
	}
	db.Close()
}
