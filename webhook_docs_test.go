package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"folio/app"
)

// docBlock returns the first fenced block of the given language after a
// heading of docs/webhooks.md.
func docBlock(t *testing.T, heading, lang string) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("docs", "webhooks.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("docs/webhooks.md has no %q", heading)
	}
	_, rest, ok = strings.Cut(rest, "```"+lang+"\n")
	block, _, closed := strings.Cut(rest, "\n```")
	if !ok || !closed {
		t.Fatalf("no ```%s block under %q", lang, heading)
	}
	return block + "\n"
}

// signedEvent is a real event body with Folio's signature at ts.
func signedEvent(t *testing.T, secret string, at time.Time) (body []byte, ts, sig string) {
	t.Helper()
	e, err := app.NewEvent("team_x", app.EventDocumentGenerated, at, map[string]any{"jobId": "job_1", "templateId": "tpl_1", "format": "pdf",
		"status": "completed", "downloadUrl": "https://folio.example/d", "expiresAt": at.Add(time.Hour), "generatedAt": at, "metadata": map[string]any{"n": 1}})
	if err != nil {
		t.Fatal(err)
	}
	ts = strconv.FormatInt(at.Unix(), 10)
	return e.Payload, ts, app.Sign(secret, ts, e.Payload)
}

// TestWebhookDocsGoReceiver builds the Go receiver of docs/webhooks.md, as
// printed there, in a module of its own and runs its handler on deliveries
// signed by Folio's signing code: a good one is accepted; a changed body, a
// wrong signature and a stale timestamp are refused.
func TestWebhookDocsGoReceiver(t *testing.T) {
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		if goTool, err = exec.LookPath("go"); err != nil {
			t.Skip("no go tool to build the documentation's receiver with")
		}
	}
	const secret = "whsec_docsExampleSecret0123456789abcdefghij"
	code := docBlock(t, "## Verifying a delivery (Go)", "go")
	const placeholder = `const secret = "whsec_..."`
	if !strings.Contains(code, placeholder) {
		t.Fatalf("the example no longer declares %s", placeholder)
	}
	code = strings.Replace(code, placeholder, fmt.Sprintf("const secret = %q", secret), 1)

	now := time.Now()
	body, ts, sig := signedEvent(t, secret, now)
	staleBody, staleTS, staleSig := signedEvent(t, secret, now.Add(-10*time.Minute))
	caseTest := fmt.Sprintf(`package main

import (
	"net/http/httptest"
	"strings"
	"testing"
)

func TestDocsReceiver(t *testing.T) {
	for _, c := range []struct {
		name, body, ts, sig string
		want                int
	}{
		{"signed by Folio", %[1]q, %[2]q, %[3]q, 204},
		{"body changed", strings.Replace(%[1]q, "job_1", "job_2", 1), %[2]q, %[3]q, 401},
		{"wrong signature", %[1]q, %[2]q, "v1=" + strings.Repeat("0", 64), 401},
		{"stale timestamp", %[4]q, %[5]q, %[6]q, 400},
	} {
		r := httptest.NewRequest("POST", "/folio", strings.NewReader(c.body))
		r.Header.Set("X-Service-Timestamp", c.ts)
		r.Header.Set("X-Service-Signature", c.sig)
		w := httptest.NewRecorder()
		folio(w, r)
		if w.Code != c.want {
			t.Errorf("%%s: status %%d, want %%d", c.name, w.Code, c.want)
		}
	}
}
`, body, ts, sig, staleBody, staleTS, staleSig)

	dir := t.TempDir()
	for name, content := range map[string]string{"go.mod": "module receiver\n\ngo 1.22\n", "main.go": code, "main_test.go": caseTest} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(goTool, "test", "-count=1", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOWORK=off", "GOFLAGS=", "GOPROXY=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the documentation's Go receiver: %v\n%s\n--- main.go ---\n%s", err, out, code)
	}
}

// TestWebhookDocsOpenSSL runs the shell one-liner of docs/webhooks.md and
// compares its output with the signature Folio sends.
func TestWebhookDocsOpenSSL(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl is not installed: the documentation's shell one-liner is not checked")
	}
	line := docBlock(t, "## Verifying with a shell one-liner", "sh")
	const secret = "whsec_shellExampleSecret"
	body, ts, sig := signedEvent(t, secret, time.Now())
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "body.json"), body, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TS="+ts, "SECRET="+secret)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	if got := strings.TrimSpace(string(out)); got != sig {
		t.Fatalf("the one-liner prints %q; Folio sends %q", got, sig)
	}
}
