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
	"database/sql"
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
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"folio/app"
)

// receiver is an HTTPS webhook endpoint with its own CA. It answers fail
// (default 500) to the first failFirst requests and 204 afterwards. While
// hold is set, each request waits until it is closed before answering.
type receiver struct {
	t      *testing.T
	url    string
	caFile string
	leaf   tls.Certificate
	srv    *http.Server
	ln     net.Listener

	mu        sync.Mutex
	got       []received
	failFirst int
	failWith  int
	hold      chan struct{}
	held      int // requests waiting on hold now
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
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(caFile, caPEM, 0o600)
	return listenReceiver(t, caFile, leaf)
}

// sibling starts another receiver with the same CA and certificate, so one
// --webhook-ca trusts both.
func (r *receiver) sibling() *receiver {
	r.t.Helper()
	return listenReceiver(r.t, r.caFile, r.leaf)
}

func listenReceiver(t *testing.T, caFile string, leaf tls.Certificate) *receiver {
	t.Helper()
	r := &receiver{t: t, failWith: 500, caFile: caFile, leaf: leaf}
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
	hold := r.hold
	if hold != nil {
		r.held++
	}
	r.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-req.Context().Done():
		}
		r.mu.Lock()
		r.held--
		r.mu.Unlock()
	}
	if fail {
		if code == http.StatusFound {
			w.Header().Set("Location", "https://example.com/")
		}
		w.WriteHeader(code)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// holding returns how many requests wait on hold now.
func (r *receiver) holding() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held
}

// release lets held requests (and later ones) through.
func (r *receiver) release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hold != nil {
		close(r.hold)
		r.hold = nil
	}
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

// wantData checks that an event's data has exactly want's keys (SPEC.md's
// event table), each with want's value: a time.Time must be the same
// instant, a func(any) bool must accept it, anything else must equal it
// once through JSON.
func wantData(t *testing.T, e event, want map[string]any) {
	t.Helper()
	var got, keys []string
	for k := range e.Data {
		got = append(got, k)
	}
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(got)
	sort.Strings(keys)
	if !slices.Equal(got, keys) {
		t.Fatalf("%s data keys = %v, want exactly %v", e.Event, got, keys)
	}
	for k, w := range want {
		g := e.Data[k]
		switch w := w.(type) {
		case time.Time:
			s, _ := g.(string)
			if at, err := time.Parse(time.RFC3339Nano, s); err != nil || !at.Equal(w) {
				t.Fatalf("%s %s = %v, want %v", e.Event, k, g, w)
			}
		case func(any) bool:
			if !w(g) {
				t.Fatalf("%s %s = %v", e.Event, k, g)
			}
		default:
			b, _ := json.Marshal(w)
			var norm any
			json.Unmarshal(b, &norm)
			if !reflect.DeepEqual(g, norm) {
				t.Fatalf("%s %s = %v, want %v", e.Event, k, g, norm)
			}
		}
	}
}

// timeField parses a timestamp field of an API answer.
func timeField(t *testing.T, r resp, field string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, r.str(field))
	if err != nil {
		t.Fatalf("%s = %q in %s", field, r.str(field), r.raw)
	}
	return at
}

func nonEmpty(v any) bool { s, ok := v.(string); return ok && s != "" }

// setDelivererHook adjusts the deliverer of servers started during the test.
func setDelivererHook(t *testing.T, hook func(*app.Deliverer)) {
	testHookDeliverer = hook
	t.Cleanup(func() { testHookDeliverer = nil })
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

// TestWebhookChangesNeedVerifiedEmail: creating, changing, deleting,
// testing and retrying need a verified email, for a member's token and for a
// key that member created; reading does not. No API path makes a team member
// unverified today (accepting an invitation needs a verified email), so the
// test clears the flag in the database, as a later path might.
func TestWebhookChangesNeedVerifiedEmail(t *testing.T) {
	rcv := startReceiver(t, false)
	rcv.failFirst = 1
	s := webhookServer(t, rcv, "0s")
	owner := s.verifiedUser("Owner")
	team := s.newTeam(owner, "Hooks Inc")
	ht := []string{"X-Team-Id", team}
	sub := s.must(200, "POST", "/api/v1/webhook-subscriptions", owner.token, map[string]any{"url": rcv.url}, ht...)
	base := "/api/v1/webhook-subscriptions/" + sub.str("id")
	failed := s.must(200, "POST", base+"/test", owner.token, nil, ht...) // the receiver fails it: retryable by hand
	if failed.str("success") != "false" {
		t.Fatalf("first test = %s", failed.raw)
	}

	member := s.verifiedUser("Member")
	s.join(owner, team, member, "admin")
	memberKey := s.must(200, "POST", "/api/api-keys", member.token, map[string]any{"name": "k"}, ht...).str("plainKey")
	db, err := sql.Open("sqlite", "file:"+filepath.Join(s.Config.Data, "folio.db")+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	setVerified := func(v int) {
		t.Helper()
		if _, err := db.Exec(`UPDATE users SET email_verified = ? WHERE id = ?`, v, member.id); err != nil {
			t.Fatal(err)
		}
	}
	setVerified(0)
	for _, who := range []struct {
		name, token string
		headers     []string
	}{{"token", member.token, ht}, {"key", memberKey, nil}} {
		for _, c := range []struct {
			method, path string
			body         any
		}{
			{"POST", "/api/v1/webhook-subscriptions", map[string]any{"url": rcv.url}},
			{"PATCH", base, map[string]any{"url": "https://evil.example/x"}},
			{"PATCH", base, map[string]any{"enabled": false}},
			{"POST", base + "/test", nil},
			{"POST", base + "/deliveries/" + failed.str("deliveryId") + "/retry", nil},
			{"DELETE", base, nil},
		} {
			s.wantError(s.do(c.method, c.path, who.token, c.body, who.headers...), 403, "ERR_AUTH_006")
		}
		s.must(200, "GET", "/api/v1/webhook-subscriptions", who.token, nil, who.headers...)
		s.must(200, "GET", base, who.token, nil, who.headers...)
		s.must(200, "GET", base+"/deliveries", who.token, nil, who.headers...)
	}
	if n := len(rcv.requests()); n != 1 {
		t.Fatalf("the receiver got %d requests; the unverified member's must all have been refused", n)
	}
	g := s.must(200, "GET", base, owner.token, nil, ht...)
	if g.str("url") != rcv.url || g.str("enabled") != "true" {
		t.Fatalf("subscription changed: %s", g.raw)
	}

	// Verified again, the same member may.
	setVerified(1)
	s.must(200, "POST", base+"/deliveries/"+failed.str("deliveryId")+"/retry", member.token, nil, ht...)
	rcv.waitFor(2, 10*time.Second)
	s.must(200, "PATCH", base, memberKey, map[string]any{"enabled": false})
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
	job := s.waitJob(key, g.str("jobId"))
	wantData(t, e, map[string]any{"jobId": g.str("jobId"), "templateId": tpl.str("id"), "format": "pdf", "status": "completed",
		"downloadUrl": job.str("downloadUrl"), "expiresAt": timeField(t, job, "expiresAt"), "generatedAt": timeField(t, job, "completedAt"),
		"metadata": map[string]any{"order": "A-7"}})

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
	e := decodeEvent(t, got[0])
	if e.Event != "document.generated" || tr.str("eventId") != got[0].header.Get("X-Service-Event-Id") {
		t.Fatalf("test event = %+v", e)
	}
	wantData(t, e, map[string]any{"jobId": "job_test", "templateId": "tpl_test", "format": "pdf", "status": "completed",
		"downloadUrl": nonEmpty, "expiresAt": nonEmpty, "generatedAt": nonEmpty, "metadata": map[string]any{"test": true}})

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
	// Each event carries exactly SPEC.md's fields, with the values the API
	// shows for the same job or batch (no batchId on document events).
	bv := s.waitBatch(key, b.str("batchId"))
	entries := bv.get("documents").([]any)
	okJob := s.must(200, "GET", "/api/v1/documents/jobs/"+entries[0].(map[string]any)["jobId"].(string), key, nil)
	badJob := s.must(200, "GET", "/api/v1/documents/jobs/"+entries[1].(map[string]any)["jobId"].(string), key, nil)
	if okJob.str("status") != "completed" || badJob.str("status") != "failed" || badJob.str("error") == "" {
		t.Fatalf("batch jobs: %s / %s", okJob.raw, badJob.raw)
	}
	wantData(t, byType["document.generated"][0], map[string]any{"jobId": okJob.str("jobId"), "templateId": tpl.str("id"), "format": "pdf",
		"status": "completed", "downloadUrl": okJob.str("downloadUrl"), "expiresAt": timeField(t, okJob, "expiresAt"),
		"generatedAt": timeField(t, okJob, "completedAt"), "metadata": map[string]any{}})
	wantData(t, byType["document.failed"][0], map[string]any{"jobId": badJob.str("jobId"), "templateId": tpl.str("id"), "format": "pdf",
		"status": "failed", "error": badJob.str("error"), "errorCode": "ERR_LIMIT_001", "failedAt": timeField(t, badJob, "completedAt"),
		"metadata": map[string]any{}})
	wantData(t, byType["batch.completed"][0], map[string]any{"batchId": b.str("batchId"), "templateId": tpl.str("id"), "format": "pdf",
		"status": "completed", "totalDocuments": 2, "completedDocuments": 1, "failedDocuments": 1,
		"completedAt": timeField(t, bv, "completedAt"), "documents": entries})

	// All failing: batch.failed.
	fb := s.must(200, "POST", "/api/v1/documents/generate/batch", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf",
		"documents": []any{map[string]any{"variables": map[string]any{"body": longText}}}})
	fbv := s.waitBatch(key, fb.str("batchId"))
	deadline := time.Now().Add(10 * time.Second)
	for {
		var found *event
		for _, r := range rcv.requests() {
			if e := decodeEvent(t, r); e.Event == "batch.failed" {
				found = &e
			}
		}
		if found != nil {
			wantData(t, *found, map[string]any{"batchId": fb.str("batchId"), "templateId": tpl.str("id"), "format": "pdf", "status": "failed",
				"error":     func(v any) bool { s, _ := v.(string); return strings.Contains(s, "all 1 documents failed") },
				"errorCode": "ERR_LIMIT_001", "failedAt": timeField(t, fbv, "completedAt")})
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
	// Changing the URL of an existing subscription is checked the same way,
	// and a refused change leaves the URL as it was.
	public := "https://93.184.215.14/hook" // a public address literal: no DNS needed
	sub0 := s.must(200, "POST", "/api/v1/webhook-subscriptions", key, map[string]any{"url": public})
	for _, target := range []string{"https://127.0.0.1/x", "https://[::1]/x", "https://10.0.0.1/x", "https://169.254.169.254/latest/meta-data",
		"https://localhost/x", "https://[::ffff:127.0.0.1]/x"} {
		r := s.do("PATCH", "/api/v1/webhook-subscriptions/"+sub0.str("id"), key, map[string]any{"url": target})
		s.wantError(r, 400, "ERR_VALID_003")
		if !strings.Contains(r.str("message"), "non-public") {
			t.Fatalf("PATCH %s: %s", target, r.raw)
		}
	}
	if g := s.must(200, "GET", "/api/v1/webhook-subscriptions/"+sub0.str("id"), key, nil); g.str("url") != public {
		t.Fatalf("url after refused changes = %s", g.str("url"))
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

// TestWebhookRefusesIPv4InsideIPv6: IPv6 spellings that reach an IPv4
// address through a translator or relay (IPv4-translated, IPv4-compatible,
// 6to4, NAT64, Teredo) and the other special-purpose IPv6 blocks are
// refused like the private IPv4 address they stand for, with the message
// naming the flag that allows them; with --webhook-allow-private the same
// URLs are accepted.
func TestWebhookRefusesIPv4InsideIPv6(t *testing.T) {
	targets := []string{
		"https://[::ffff:0:127.0.0.1]/",                   // IPv4-translated loopback
		"https://[2002:7f00:1::]/",                        // 6to4 of 127.0.0.1
		"https://[::127.0.0.1]/",                          // IPv4-compatible loopback
		"https://[64:ff9b:1::a9fe:a9fe]/",                 // NAT64 local-use, cloud metadata
		"https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", // Teredo, client 127.0.0.1
		"https://[fec0::1]/",                              // site-local
		"https://[2001:2::1]/",                            // benchmarking
	}
	s := startServer(t) // private targets refused (the default)
	u := s.verifiedUser("Prober")
	key := s.createKey(u.token, nil)
	for _, target := range targets {
		r := s.do("POST", "/api/v1/webhook-subscriptions", key, map[string]any{"url": target, "events": []string{"document.generated"}})
		s.wantError(r, 400, "ERR_VALID_003")
		if msg := r.str("message"); !strings.Contains(msg, "non-public") || !strings.Contains(msg, "--webhook-allow-private") {
			t.Errorf("%s: message %q should say the address is non-public and name --webhook-allow-private", target, msg)
		}
	}
	if l := s.must(200, "GET", "/api/v1/webhook-subscriptions", key, nil); strings.Contains(string(l.raw), "whk_") {
		t.Fatalf("a refused URL was stored: %s", l.raw)
	}
	// A public IPv6 literal is still accepted.
	s.must(200, "POST", "/api/v1/webhook-subscriptions", key, map[string]any{"url": "https://[2606:4700::1111]/hook", "events": []string{"document.generated"}})

	open := startServer(t, func(c *Config) { c.WebhookAllowPrivate = true })
	ou := open.verifiedUser("Operator")
	okey := open.createKey(ou.token, nil)
	for _, target := range targets {
		open.must(200, "POST", "/api/v1/webhook-subscriptions", okey, map[string]any{"url": target, "events": []string{"document.generated"}})
	}
}

// TestWebhookRetryScheduleFlag: the serve default is SPEC.md's schedule
// (0, 1 min, 5 min, 30 min), and a schedule that would delay the first
// attempt is refused at start rather than silently ignored.
func TestWebhookRetryScheduleFlag(t *testing.T) {
	var c Config
	fs := newFlagSet()
	c.flags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	got, err := app.ParseRetrySchedule(c.WebhookRetrySchedule)
	want := []time.Duration{0, time.Minute, 5 * time.Minute, 30 * time.Minute}
	if err != nil || !slices.Equal(got, want) || !slices.Equal(app.DefaultRetrySchedule, want) {
		t.Fatalf("default schedule %q = %v, %v; want %v", c.WebhookRetrySchedule, got, err, want)
	}
	if c.WebhookWorkers != app.DefaultWebhookWorkers || c.WebhookWorkers <= 4 {
		t.Fatalf("--webhook-workers default = %d", c.WebhookWorkers)
	}
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	c.WebhookRetrySchedule = "5s,1m"
	if err := c.validate(); err == nil || !strings.Contains(err.Error(), "first delay must be 0s") {
		t.Fatalf("validate(5s,1m) = %v", err)
	}
}
