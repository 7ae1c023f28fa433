package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"folio/app"
)

func TestPanicBecomes500Envelope(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	h := logRequests(logger, nil, recoverPanics(logger, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("boom")
	})))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/x", nil))
	var env map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil {
		t.Fatalf("body %q: %v", rec.Body, err)
	}
	if rec.Code != 500 || env["code"] != app.ECodeInternal || env["statusCode"] != 500.0 || env["path"] != "/api/x" {
		t.Fatalf("got %d %v", rec.Code, env)
	}
	if strings.Contains(rec.Body.String(), "boom") {
		t.Fatal("panic value leaked to the client")
	}
	if !strings.Contains(logs.String(), "boom") || !strings.Contains(logs.String(), "status=500") {
		t.Fatalf("panic not logged: %s", logs.String())
	}
}

// TestPanicThroughServerHandler makes a real route panic (its service is
// nil) behind the whole middleware stack of Server.Handler, served over TLS:
// the client gets the 500 envelope and the log has the panic with its stack
// and the request's access line. Without recoverPanics net/http would drop
// the connection instead.
func TestPanicThroughServerHandler(t *testing.T) {
	var logs syncBuffer
	s := &Server{Logger: slog.New(slog.NewJSONHandler(&logs, nil))}
	ts := httptest.NewTLSServer(s.Handler())
	defer ts.Close()

	res, err := ts.Client().Post(ts.URL+"/api/auth/login", "application/json",
		strings.NewReader(`{"email":"ann@example.com","password":"a password"}`))
	if err != nil {
		t.Fatalf("no response to a panicking handler: %v", err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var env map[string]any
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatalf("body %q: %v", body, err)
	}
	if res.StatusCode != 500 || env["statusCode"] != 500.0 || env["code"] != app.ECodeInternal || env["path"] != "/api/auth/login" ||
		env["message"] == "" || env["timestamp"] == nil {
		t.Fatalf("got %d %s", res.StatusCode, body)
	}
	if strings.Contains(string(body), "nil pointer") || res.Header.Get("X-Request-Id") == "" {
		t.Fatalf("panic leaked or no request id: %s %v", body, res.Header)
	}

	var panicLine, accessLine map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var l map[string]any
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		switch l["msg"] {
		case "panic":
			panicLine = l
		case "request":
			accessLine = l
		}
	}
	if panicLine == nil || panicLine["level"] != "ERROR" || !strings.Contains(fmt.Sprint(panicLine["panic"]), "nil pointer") ||
		!strings.Contains(fmt.Sprint(panicLine["stack"]), "handleLogin") || panicLine["request_id"] != res.Header.Get("X-Request-Id") {
		t.Fatalf("panic not logged with its cause, stack and request id: %s", logs.String())
	}
	if accessLine == nil || accessLine["status"] != 500.0 || accessLine["path"] != "/api/auth/login" {
		t.Fatalf("access line: %v", accessLine)
	}
}

// syncBuffer is a bytes.Buffer the server's goroutines and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestUnknownErrorIsInternal(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	rec := httptest.NewRecorder()
	writeError(rec, httptest.NewRequest("GET", "/p", nil), logger, errSecret{})
	if rec.Code != 500 || strings.Contains(rec.Body.String(), "db password") || !strings.Contains(logs.String(), "db password") {
		t.Fatalf("got %d %s / log %s", rec.Code, rec.Body, logs.String())
	}
}

type errSecret struct{}

func (errSecret) Error() string { return "db password is hunter2" }

func TestStatusTable(t *testing.T) {
	for code, want := range map[string]int{
		"ERR_AKEY_002": 401, "ERR_AKEY_003": 401, "ERR_AUTH_005": 403, "ERR_VALID_002": 400, "ERR_VALID_005": 400,
		"ERR_QUOTA_003": 429, "ERR_QUOTA_008": 429, "ERR_QUOTA_011": 429, "ERR_LIMIT_001": 400, "ERR_TMPL_001": 404,
		"ERR_TMPL_002": 404, "ERR_TMPL_008": 400, "ERR_JOB_003": 403, "": 500,
	} {
		if got := statusOf(code); got != want {
			t.Errorf("statusOf(%q) = %d, want %d", code, got, want)
		}
	}
}

func TestDecodeLimitsBody(t *testing.T) {
	big := strings.NewReader(`{"name":"` + strings.Repeat("a", MaxBody) + `"}`)
	var v struct{ Name string }
	err := decode(httptest.NewRequest("POST", "/", big), &v)
	if app.ErrorCode(err) == "" || !strings.Contains(err.Error(), "10 MB") {
		t.Fatalf("oversized body: %v", err)
	}
}
