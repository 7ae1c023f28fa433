package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"folio/app"
)

// fullDisk is a FileStore whose disk fills up on demand.
type fullDisk struct {
	app.FileStore
	full atomic.Bool
}

func (f *fullDisk) WriteFile(name string, write func(w io.Writer) error) (int64, error) {
	if f.full.Load() {
		return 0, fmt.Errorf("write %s: %w", name, syscall.ENOSPC)
	}
	return f.FileStore.WriteFile(name, write)
}

func TestDiskFullFailsTheJobAndServiceGoesOn(t *testing.T) {
	s := startServer(t)
	disk := &fullDisk{FileStore: s.Server.Documents.Files}
	s.Server.Documents.Files, s.Server.Documents.InlineMax = disk, -1 // every document a file
	u := s.signup("Disk")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	body := map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": map[string]any{"number": "1", "customer": "c"}}

	disk.full.Store(true)
	r := s.do("POST", "/api/v1/documents/generate", key, body)
	s.wantError(r, 500, "ERR_JOB_007")
	if !strings.Contains(r.str("message"), "disk is full") || r.str("relatedInfo.jobId") == "" {
		t.Fatalf("disk full: %s", r.raw)
	}
	j := s.must(200, "GET", "/api/v1/documents/jobs/"+r.str("relatedInfo.jobId"), key, nil)
	if j.str("status") != "failed" || j.get("downloadUrl") != nil {
		t.Fatalf("job after disk full: %s", j.raw)
	}
	if tmp, _ := filepath.Glob(filepath.Join(s.Config.Data, "files", "*", "*")); len(tmp) != 0 {
		t.Fatalf("files left behind: %v", tmp)
	}
	// The disk is freed: the service serves and the retry works.
	disk.full.Store(false)
	s.must(200, "POST", "/api/v1/documents/generate", key, body)
	rt := s.must(200, "POST", "/api/v1/documents/jobs/"+j.str("jobId")+"/retry", key, nil)
	deadline := time.Now().Add(10 * time.Second)
	for s.must(200, "GET", "/api/v1/documents/jobs/"+rt.str("jobId"), key, nil).str("status") != "completed" {
		if time.Now().After(deadline) {
			t.Fatal("retry did not complete")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The failed document was refunded: 2 documents count, not 3.
	if use := s.must(200, "GET", "/api/v1/analytics/usage", key, nil); use.str("documentsGenerated") != "2" {
		t.Fatalf("usage: %s", use.raw)
	}
}

// badReceiver serves HTTPS with behaviours chosen by path.
func badReceiver(t *testing.T) (base, caFile string) {
	t.Helper()
	caPEM, leaf := newCA(t, false)
	caFile = filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(caFile, caPEM, 0o600)
	mux := http.NewServeMux()
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	mux.HandleFunc("/reset", func(w http.ResponseWriter, r *http.Request) {
		c, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			c.Close()
		}
	})
	mux.HandleFunc("/flood", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		chunk := make([]byte, 64<<10)
		for i := 0; i < 160; i++ { // 10 MB
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{leaf}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "https://" + ln.Addr().String(), caFile
}

func TestWebhookReceiverHangsResetsOrFloods(t *testing.T) {
	base, ca := badReceiver(t)
	s := startServer(t, func(c *Config) { c.WebhookAllowPrivate = true; c.WebhookCA = ca })
	s.Server.Webhooks.Deliverer.Timeout = 500 * time.Millisecond
	u := s.verifiedUser("Hooks")
	key := s.createKey(u.token, nil)
	for _, tc := range []struct{ path, want string }{{"/hang", "timeout"}, {"/reset", "request failed"}, {"/flood", ""}} {
		sub := s.must(200, "POST", "/api/v1/webhook-subscriptions", key, map[string]any{"url": base + tc.path})
		start := time.Now()
		r := s.must(200, "POST", "/api/v1/webhook-subscriptions/"+sub.str("id")+"/test", key, nil)
		took := time.Since(start)
		if tc.want == "" {
			if r.str("success") != "true" || took > 3*time.Second {
				t.Fatalf("%s: %s after %v", tc.path, r.raw, took)
			}
			continue
		}
		if r.str("success") != "false" || !strings.Contains(r.str("error"), tc.want) || took > 3*time.Second {
			t.Fatalf("%s: %s after %v", tc.path, r.raw, took)
		}
	}
	// Document generation went on regardless.
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": map[string]any{"number": "1", "customer": "c"}})
}

// rawTLS opens a TLS connection to the test server.
func (s *testServer) rawTLS(t *testing.T) *tls.Conn {
	t.Helper()
	pem, _ := os.ReadFile(filepath.Join(s.Config.Data, "tls", "cert.pem"))
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	c, err := tls.Dial("tcp", strings.TrimPrefix(s.URL(), "https://"), &tls.Config{RootCAs: pool})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedWithin reports whether the server ends the connection within d.
func closedWithin(c *tls.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.ReadAll(c)
	return err == nil // EOF: the server closed it; a timeout means still open
}

func TestSlowClientsAreCutOff(t *testing.T) {
	s := startServer(t, func(c *Config) { c.ReadHeaderTimeout = 500 * time.Millisecond; c.ReadTimeout = time.Second })
	// Headers a byte at a time (slowloris).
	c := s.rawTLS(t)
	go func() {
		for _, b := range []byte("GET /api/users/me HTTP/1.1\r\nHost: folio\r\nX-Slow: ") {
			if _, err := c.Write([]byte{b}); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	if !closedWithin(c, 4*time.Second) {
		t.Fatal("a client trickling its headers was not cut off")
	}
	// A body a byte at a time.
	c2 := s.rawTLS(t)
	fmt.Fprintf(c2, "POST /api/auth/login HTTP/1.1\r\nHost: folio\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
	go func() {
		for i := 0; i < 40; i++ {
			if _, err := c2.Write([]byte(" ")); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	if !closedWithin(c2, 5*time.Second) {
		t.Fatal("a client trickling its body was not cut off")
	}
	// Everyone else is served.
	s.wantError(s.do("GET", "/api/users/me", "", nil), 401, "ERR_AUTH_003")
}

func TestClientDisconnectDuringGenerateLosesNothing(t *testing.T) {
	s := startServer(t, func(c *Config) { c.Workers = 1 })
	u := s.signup("Quitter")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Long", longTemplate())
	body := `{"templateId":"` + tpl.str("id") + `","format":"pdf","variables":{"body":"` + strings.Repeat("Long text. ", 900) + `"}}`
	// The whole request goes in; the client hangs up while the server waits
	// for the job to end.
	c := s.rawTLS(t)
	fmt.Fprintf(c, "POST /api/v1/documents/generate HTTP/1.1\r\nHost: folio\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", key, len(body), body)
	// Hang up once the server has accepted it (the job is recorded): a
	// fixed sleep raced the server's reading of the body on a loaded machine.
	waitUntil(t, 15*time.Second, "the request was accepted", func() bool {
		return len(s.must(200, "GET", "/api/v1/documents/jobs", key, nil).get("data").([]any)) > 0
	})
	c.Close()
	deadline := time.Now().Add(15 * time.Second)
	for {
		l := s.must(200, "GET", "/api/v1/documents/jobs", key, nil)
		data := l.get("data").([]any)
		if len(data) == 1 && data[0].(map[string]any)["status"] == "completed" {
			break
		}
		if len(data) > 1 || time.Now().After(deadline) {
			t.Fatalf("the accepted job was not completed exactly once: %s", l.raw)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A half-sent body is refused and the server goes on.
	c2 := s.rawTLS(t)
	fmt.Fprintf(c2, "POST /api/auth/login HTTP/1.1\r\nHost: folio\r\nContent-Length: 500\r\n\r\n{\"email\":")
	c2.Close()
	s.must(200, "GET", "/api/v1/documents/jobs", key, nil)
}

func TestConcurrentWritersNeverSeeLocked(t *testing.T) {
	s := startServer(t)
	u := s.signup("Busy")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	teamID := s.must(200, "GET", "/api/api-keys", u.token, nil).get("data").([]any)[0].(map[string]any)["teamId"].(string)
	var wg sync.WaitGroup
	var bad atomic.Int64
	var first atomic.Value
	stop := make(chan struct{})
	// A second process-like writer: the admin command opens its own SQLite handle.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if code, _, errOut := runCLI(t, "admin", "add-credits", "--data", s.Config.Data, "--team", teamID, "--documents", "1"); code != 0 {
				bad.Add(1)
				first.CompareAndSwap(nil, "admin: "+errOut)
			}
		}
	}()
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for k := 0; k < 8; k++ {
				var r resp
				switch k % 3 {
				case 0:
					r = s.do("POST", "/api/v1/documents/generate?async=true", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": map[string]any{"number": "1", "customer": "c"}})
				case 1:
					r = s.do("POST", "/api/api-keys/"+"key_x"+"/revoke", u.token, nil) // a write that finds nothing
					if r.status == 404 {
						r.status = 200
					}
				default:
					r = s.do("PATCH", "/api/users/me", u.token, map[string]any{"name": fmt.Sprintf("Busy %d-%d", i, k)})
				}
				if r.status != 200 || strings.Contains(string(r.raw), "locked") {
					bad.Add(1)
					first.CompareAndSwap(nil, string(r.raw))
				}
			}
		}(i)
	}
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()
	if n := bad.Load(); n > 0 {
		t.Fatalf("%d failed writes, first: %v", n, first.Load())
	}
}
