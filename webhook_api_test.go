package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// receiver is an HTTPS webhook endpoint with its own CA. It answers fail
// (default 500) to the first failFirst requests and 200 afterwards.
type receiver struct {
	t      *testing.T
	url    string
	caFile string
	srv    *http.Server
	ln     net.Listener

	mu        sync.Mutex
	got       []received
	failFirst int
	failWith  int
}

type received struct {
	at     time.Time
	header http.Header
	body   []byte
}

// newCA makes a CA and a leaf for 127.0.0.1 signed by it (or a self-signed
// leaf when selfSigned).
func newCA(t *testing.T, selfSigned bool) (caPEM []byte, leaf tls.Certificate) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Test Receiver CA"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	leafKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "receiver"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	parent, signer := caCert, any(caKey)
	if selfSigned {
		parent, signer = tmpl, leafKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &leafKey.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	if selfSigned {
		caDER = der
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), tls.Certificate{Certificate: [][]byte{der}, PrivateKey: leafKey}
}

func startReceiver(t *testing.T, selfSigned bool) *receiver {
	t.Helper()
	caPEM, leaf := newCA(t, selfSigned)
	r := &receiver{t: t, failWith: 500}
	r.caFile = filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(r.caFile, caPEM, 0o600)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{leaf}})
	if err != nil {
		t.Fatal(err)
	}
	r.ln = ln
	r.url = "https://" + ln.Addr().String() + "/hooks"
	r.srv = &http.Server{Handler: r, ErrorLog: nil}
	go r.srv.Serve(ln)
	t.Cleanup(func() { r.srv.Close() })
	return r
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.got = append(r.got, received{at: time.Now(), header: req.Header.Clone(), body: body})
	fail := len(r.got) <= r.failFirst
	code := r.failWith
	r.mu.Unlock()
	if fail {
		if code == http.StatusFound {
			w.Header().Set("Location", "https://example.com/")
		}
		w.WriteHeader(code)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// waitFor polls until n requests arrived.
func (r *receiver) waitFor(n int, within time.Duration) []received {
	r.t.Helper()
	deadline := time.Now().Add(within)
	for {
		got := r.requests()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("receiver got %d requests, want %d", len(got), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// verify checks a delivery the way a receiver would, with its own HMAC code:
// v1=hex(HMAC-SHA256(secret, ts + "." + body)) and a timestamp within 300 s.
func verify(t *testing.T, secret string, r received) {
	t.Helper()
	ts := r.header.Get("X-Service-Timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(sec, 0)).Abs() > 300*time.Second {
		t.Fatalf("timestamp %q", ts)
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "."))
	mac.Write(r.body)
	want := "v1=" + hex.EncodeToString(mac.Sum(nil))
	if !hmac.Equal([]byte(r.header.Get("X-Service-Signature")), []byte(want)) {
		t.Fatalf("signature %q does not verify (want %q)", r.header.Get("X-Service-Signature"), want)
	}
	if r.header.Get("Content-Type") != "application/json" || !strings.HasPrefix(r.header.Get("X-Service-Event-Id"), "evt_") {
		t.Fatalf("headers %v", r.header)
	}
}

type event struct {
	Event     string         `json:"event"`
	Timestamp time.Time      `json:"timestamp"`
	Data      map[string]any `json:"data"`
}

func decodeEvent(t *testing.T, r received) event {
	t.Helper()
	var e event
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatalf("body %s: %v", r.body, err)
	}
	if e.Event != r.header.Get("X-Service-Event-Type") {
		t.Fatalf("event %q vs header %q", e.Event, r.header.Get("X-Service-Event-Type"))
	}
	return e
}

func webhookServer(t *testing.T, rcv *receiver, schedule string) *testServer {
	return startServer(t, func(c *Config) {
		c.WebhookAllowPrivate = true
		c.WebhookCA = rcv.caFile
		c.WebhookRetrySchedule = schedule
	})
}

func TestWebhookSubscriptions(t *testing.T) {
	rcv := startReceiver(t, false)
	s := webhookServer(t, rcv, "0s,100ms,200ms,300ms")
	u := s.verifiedUser("Hooker")
	key := s.createKey(u.token, nil)
	base := "/api/v1/webhook-subscriptions"

	c := s.must(200, "POST", base, key, map[string]any{"url": rcv.url, "events": []string{"document.generated", "batch.completed"}, "description": "prod"})
	id, secret := c.str("id"), c.str("secret")
	if !strings.HasPrefix(id, "whk_") || len(secret) < 32 || c.str("enabled") != "true" || c.get("createdAt") == nil || c.str("url") != rcv.url {
		t.Fatalf("create = %s", c.raw)
	}
	l := s.must(200, "GET", base, key, nil)
	if strings.Contains(string(l.raw), secret) || len(l.get("data").([]any)) != 1 {
		t.Fatalf("list = %s", l.raw)
	}
	g := s.must(200, "GET", base+"/"+id, u.token, nil)
	if strings.Contains(string(g.raw), secret) || g.str("description") != "prod" {
		t.Fatalf("get = %s", g.raw)
	}
	p := s.must(200, "PATCH", base+"/"+id, key, map[string]any{"events": []string{"document.failed"}, "enabled": false, "description": "off"})
	if p.str("enabled") != "false" || fmt.Sprint(p.get("events")) != "[document.failed]" || strings.Contains(string(p.raw), secret) {
		t.Fatalf("patch = %s", p.raw)
	}
	for _, bad := range []map[string]any{
		{"url": "http://example.com/hook"}, {"url": "not a url"}, {"url": rcv.url, "events": []string{"document.exploded"}},
		{"url": rcv.url, "events": []string{}},
	} {
		s.wantError(s.do("POST", base, key, bad), 400, "ERR_VALID_003")
	}
	s.wantError(s.do("POST", base, key, map[string]any{}), 400, "ERR_VALID_005")

	// Another team sees nothing; a key without webhooks:write is refused; an
	// unverified account cannot subscribe.
	o := s.verifiedUser("Other")
	okey := s.createKey(o.token, nil)
	s.wantError(s.do("GET", base+"/"+id, okey, nil), 404, "ERR_WHK_001")
	s.wantError(s.do("PATCH", base+"/"+id, okey, map[string]any{"enabled": true}), 404, "ERR_WHK_001")
	s.wantError(s.do("DELETE", base+"/"+id, okey, nil), 404, "ERR_WHK_001")
	s.wantError(s.do("GET", base+"/"+id+"/deliveries", okey, nil), 404, "ERR_WHK_001")
	noHooks := s.createKey(u.token, map[string]bool{"send_emails": false})
	r := s.do("GET", base, noHooks, nil)
	s.wantError(r, 403, "ERR_AUTH_005")
	if r.str("relatedInfo.required") != "webhooks:write" {
		t.Fatalf("relatedInfo = %v", r.get("relatedInfo"))
	}
	unverified := s.signup("Unverified")
	s.wantError(s.do("POST", base, unverified.token, map[string]any{"url": rcv.url}), 403, "ERR_AUTH_006")
	s.wantError(s.do("POST", base, s.createKey(unverified.token, nil), map[string]any{"url": rcv.url}), 403, "ERR_AUTH_006")

	if d := s.do("DELETE", base+"/"+id, key, nil); d.status != 204 {
		t.Fatalf("delete: %d", d.status)
	}
	s.wantError(s.do("GET", base+"/"+id, key, nil), 404, "ERR_WHK_001")
}

func TestWebhookDeliveryRetriesAndHistory(t *testing.T) {
	rcv := startReceiver(t, false)
	rcv.failFirst = 2
	s := webhookServer(t, rcv, "0s,300ms,600ms,900ms")
	u := s.verifiedUser("Hooked")
	key := s.createKey(u.token, nil)
	sub := s.must(200, "POST", "/api/v1/webhook-subscriptions", key, map[string]any{"url": rcv.url, "events": []string{"document.generated"}})
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf",
		"variables": map[string]any{"number": "W-1", "customer": "Hook Inc"}, "metadata": map[string]any{"order": "A-7"}})

	got := rcv.waitFor(3, 10*time.Second)
	ids := map[string]bool{}
	for i, r := range got {
		verify(t, sub.str("secret"), r)
		ids[r.header.Get("X-Service-Event-Id")] = true
		if i > 0 && string(r.body) != string(got[0].body) {
			t.Fatal("redelivery changed the body")
		}
	}
	if len(ids) != 1 {
		t.Fatalf("event id changed across attempts: %v", ids)
	}
	// Attempt spacing follows the schedule: 300 ms, then 600 ms.
	if d := got[1].at.Sub(got[0].at); d < 280*time.Millisecond {
		t.Fatalf("second attempt after %v", d)
	}
	if d := got[2].at.Sub(got[1].at); d < 580*time.Millisecond {
		t.Fatalf("third attempt after %v", d)
	}
	e := decodeEvent(t, got[2])
	if e.Event != "document.generated" || time.Since(e.Timestamp) > time.Minute {
		t.Fatalf("event = %+v", e)
	}
	want := []string{"jobId", "templateId", "format", "status", "downloadUrl", "expiresAt", "generatedAt", "metadata"}
	for _, f := range want {
		if _, ok := e.Data[f]; !ok {
			t.Fatalf("data lacks %s: %v", f, e.Data)
		}
	}
	if e.Data["jobId"] != g.str("jobId") || e.Data["status"] != "completed" || e.Data["downloadUrl"] != g.str("downloadUrl") ||
		e.Data["metadata"].(map[string]any)["order"] != "A-7" {
		t.Fatalf("data = %v", e.Data)
	}

	// History: one delivery, success after 3 attempts.
	time.Sleep(50 * time.Millisecond)
	h := s.must(200, "GET", "/api/v1/webhook-subscriptions/"+sub.str("id")+"/deliveries", key, nil)
	dels := h.get("deliveries").([]any)
	if len(dels) != 1 {
		t.Fatalf("deliveries = %s", h.raw)
	}
	d := dels[0].(map[string]any)
	if d["status"] != "success" || d["attempts"] != 3.0 || d["statusCode"] != 204.0 || d["event"] != "document.generated" ||
		d["nextRetryAt"] != nil || d["attemptedAt"] == nil || d["responseTime"] == nil || !strings.HasPrefix(d["id"].(string), "dlv_") {
		t.Fatalf("delivery = %v", d)
	}
}

func TestWebhookFailsAfterFourAttemptsThenManualRetry(t *testing.T) {
	rcv := startReceiver(t, false)
	rcv.failFirst = 4
	rcv.failWith = http.StatusFound // redirects are not followed: a failure
	s := webhookServer(t, rcv, "0s,50ms,50ms,50ms")
	u := s.verifiedUser("Retrier")
	key := s.createKey(u.token, nil)
	sub := s.must(200, "POST", "/api/v1/webhook-subscriptions", key, map[string]any{"url": rcv.url})
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": map[string]any{"number": "1", "customer": "c"}})
	rcv.waitFor(4, 10*time.Second)

	hist := "/api/v1/webhook-subscriptions/" + sub.str("id") + "/deliveries"
	var d map[string]any
	deadline := time.Now().Add(5 * time.Second)
	for {
		d = s.must(200, "GET", hist, key, nil).get("deliveries").([]any)[0].(map[string]any)
		if d["status"] == "failed" || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if d["status"] != "failed" || d["attempts"] != 4.0 || d["nextRetryAt"] != nil || !strings.Contains(fmt.Sprint(d["error"]), "redirect") || d["statusCode"] != 302.0 {
		t.Fatalf("after 4 failures: %v", d)
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(rcv.requests()); n != 4 {
		t.Fatalf("%d attempts, want exactly 4", n)
	}
	// Manual retry: one more attempt, which now succeeds.
	rt := s.must(200, "POST", hist+"/"+d["id"].(string)+"/retry", key, nil)
	if rt.str("success") != "true" {
		t.Fatalf("retry = %s", rt.raw)
	}
	got := rcv.waitFor(5, 5*time.Second)
	verify(t, sub.str("secret"), got[4])
	deadline = time.Now().Add(5 * time.Second)
	for {
		d = s.must(200, "GET", hist, key, nil).get("deliveries").([]any)[0].(map[string]any)
		if d["status"] == "success" || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if d["status"] != "success" || d["attempts"] != 5.0 {
		t.Fatalf("after manual retry: %v", d)
	}
	s.wantError(s.do("POST", hist+"/"+d["id"].(string)+"/retry", key, nil), 400, "ERR_WHK_003")
	s.wantError(s.do("POST", hist+"/dlv_nope/retry", key, nil), 404, "ERR_WHK_002")
}

func TestWebhookTestEventDisabledAndBatchEvents(t *testing.T) {
	rcv := startReceiver(t, false)
	s := webhookServer(t, rcv, "0s,50ms")
	u := s.verifiedUser("Batcher")
	key := s.createKey(u.token, nil)
	sub := s.must(200, "POST", "/api/v1/webhook-subscriptions", key, map[string]any{"url": rcv.url})
	base := "/api/v1/webhook-subscriptions/" + sub.str("id")

	tr := s.must(200, "POST", base+"/test", key, nil)
	if tr.str("success") != "true" || tr.str("statusCode") != "204" {
		t.Fatalf("test = %s", tr.raw)
	}
	got := rcv.waitFor(1, 5*time.Second)
	verify(t, sub.str("secret"), got[0])
	if e := decodeEvent(t, got[0]); e.Event != "document.generated" || e.Data["jobId"] == nil {
		t.Fatalf("test event = %+v", e)
	}

	// Disabled: no delivery for new events.
	s.must(200, "PATCH", base, key, map[string]any{"enabled": false})
	tpl := s.createTemplate(u.token, "Long", longTemplate())
	s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": map[string]any{"body": "x"}})
	time.Sleep(300 * time.Millisecond)
	if n := len(rcv.requests()); n != 1 {
		t.Fatalf("disabled subscription received %d requests", n)
	}
	s.must(200, "PATCH", base, key, map[string]any{"enabled": true})

	// A batch with one failing document: two document events and one batch.completed.
	b := s.must(200, "POST", "/api/v1/documents/generate/batch", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf",
		"documents": []any{map[string]any{"variables": map[string]any{"body": "fine"}}, map[string]any{"variables": map[string]any{"body": longText}}}})
	got = rcv.waitFor(4, 10*time.Second)
	time.Sleep(200 * time.Millisecond)
	got = rcv.requests()
	byType := map[string][]event{}
	for _, r := range got[1:] {
		verify(t, sub.str("secret"), r)
		e := decodeEvent(t, r)
		byType[e.Event] = append(byType[e.Event], e)
	}
	if len(byType["document.generated"]) != 1 || len(byType["document.failed"]) != 1 || len(byType["batch.completed"]) != 1 || len(byType["batch.failed"]) != 0 {
		t.Fatalf("events: %v", byType)
	}
	f := byType["document.failed"][0].Data
	if f["errorCode"] != "ERR_LIMIT_001" || f["status"] != "failed" || f["error"] == "" || f["failedAt"] == nil || f["metadata"] == nil {
		t.Fatalf("document.failed = %v", f)
	}
	bc := byType["batch.completed"][0].Data
	docs := bc["documents"].([]any)
	if bc["batchId"] != b.str("batchId") || bc["totalDocuments"] != 2.0 || bc["completedDocuments"] != 1.0 || bc["failedDocuments"] != 1.0 ||
		len(docs) != 2 || docs[0].(map[string]any)["downloadUrl"] == nil || docs[1].(map[string]any)["error"] == nil || bc["completedAt"] == nil {
		t.Fatalf("batch.completed = %v", bc)
	}

	// All failing: batch.failed.
	s.must(200, "POST", "/api/v1/documents/generate/batch", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf",
		"documents": []any{map[string]any{"variables": map[string]any{"body": longText}}}})
	deadline := time.Now().Add(10 * time.Second)
	for {
		var found map[string]any
		for _, r := range rcv.requests() {
			if e := decodeEvent(t, r); e.Event == "batch.failed" {
				found = e.Data
			}
		}
		if found != nil {
			if found["status"] != "failed" || found["errorCode"] != "ERR_LIMIT_001" || found["error"] == "" || found["failedAt"] == nil {
				t.Fatalf("batch.failed = %v", found)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no batch.failed")
		}
		time.Sleep(20 * time.Millisecond)
	}

	// A payload over 256 KB fails with a clear error and is not retried.
	s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf",
		"variables": map[string]any{"body": "x"}, "metadata": map[string]any{"blob": strings.Repeat("m", 300<<10)}})
	deadline = time.Now().Add(5 * time.Second)
	for {
		dels := s.must(200, "GET", base+"/deliveries", key, nil).get("deliveries").([]any)
		d := dels[0].(map[string]any)
		if d["status"] == "failed" && strings.Contains(fmt.Sprint(d["error"]), "256 KB") && d["attempts"] == 1.0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("oversized delivery = %v", d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestWebhookSSRFAndTLS(t *testing.T) {
	s := startServer(t) // private targets refused (the default)
	u := s.verifiedUser("Attacker")
	key := s.createKey(u.token, nil)
	for _, target := range []string{"https://127.0.0.1/x", "https://[::1]/x", "https://10.1.2.3/x", "https://169.254.169.254/latest/meta-data",
		"https://localhost:8443/x", "https://192.168.0.10/x", "https://[fd00::1]/x", "https://0.0.0.0/x"} {
		r := s.do("POST", "/api/v1/webhook-subscriptions", key, map[string]any{"url": target})
		s.wantError(r, 400, "ERR_VALID_003")
		if !strings.Contains(r.str("message"), "non-public") {
			t.Fatalf("%s: %s", target, r.raw)
		}
	}

	// A receiver with a self-signed leaf fails even when its certificate is
	// handed over as a CA.
	rcv := startReceiver(t, true)
	s2 := webhookServer(t, rcv, "0s")
	u2 := s2.verifiedUser("Selfie")
	key2 := s2.createKey(u2.token, nil)
	sub := s2.must(200, "POST", "/api/v1/webhook-subscriptions", key2, map[string]any{"url": rcv.url})
	tr := s2.must(200, "POST", "/api/v1/webhook-subscriptions/"+sub.str("id")+"/test", key2, nil)
	if tr.str("success") != "false" || !strings.Contains(tr.str("error"), "TLS") || len(rcv.requests()) != 0 {
		t.Fatalf("self-signed receiver: %s", tr.raw)
	}

	// A receiver whose CA is not trusted fails too.
	other := startReceiver(t, false)
	sub = s2.must(200, "POST", "/api/v1/webhook-subscriptions", key2, map[string]any{"url": other.url})
	tr = s2.must(200, "POST", "/api/v1/webhook-subscriptions/"+sub.str("id")+"/test", key2, nil)
	if tr.str("success") != "false" || !strings.Contains(tr.str("error"), "TLS") {
		t.Fatalf("untrusted CA: %s", tr.raw)
	}
}
