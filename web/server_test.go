package web

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"folio/app"
)

func TestPanicBecomes500Envelope(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	h := logRequests(logger, recoverPanics(logger, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
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
