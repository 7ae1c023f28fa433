package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// The dashboard's end-to-end tests drive a real headless Chromium (Debian's
// chromium; .ci/run installs it). Without one they skip. The README's
// pictures are TestScreenshots' (screenshots_test.go).

// chromiumPath finds the browser, or skips the test.
func chromiumPath(t testing.TB) string {
	t.Helper()
	for _, name := range []string{os.Getenv("FOLIO_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("dashboard browser tests need Chromium: apt-get install chromium (or set FOLIO_CHROMIUM to its path); .ci/run installs it")
	return ""
}

// browser is one headless Chromium with a fresh profile, pointed at a test server.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string

	mu      sync.Mutex
	dialogs []string // alert/confirm/prompt messages, in order
	csp     []string // Content-Security-Policy violations reported by the console
	net     []*netRequest
	netByID map[network.RequestID]*netRequest
}

func newBrowser(t *testing.T, s *testServer) *browser {
	t.Helper()
	exe := chromiumPath(t)
	dir, err := os.MkdirTemp("", "folio-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(dir), chromedp.WindowSize(1280, 900),
		// The test server's certificate is self-signed: trusted here only.
		chromedp.IgnoreCertErrors,
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
		os.RemoveAll(dir)
	})
	b := &browser{t: t, ctx: ctx, base: s.URL(), netByID: map[network.RequestID]*netRequest{}}
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	if err := chromedp.Listen(ctx, b.onNetwork); err != nil {
		t.Fatalf("listen to the network: %v", err)
	}
	if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*/preview", RequestStage: fetch.RequestStageResponse}}}); err != nil {
		t.Fatalf("intercept previews: %v", err)
	}
	// confirm() dialogs (delete, revoke) are accepted; every dialog is
	// recorded, so an alert() injected into a page would be seen.
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.dialogs = append(b.dialogs, string(ev.Type)+": "+ev.Message)
			b.mu.Unlock()
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	entries := chromedp.Events(ctx, log.EntryAdded)
	go func() {
		for ev, err := range entries {
			if err != nil {
				return
			}
			if ev.Entry != nil && strings.Contains(ev.Entry.Text, "Content Security Policy") {
				b.mu.Lock()
				b.csp = append(b.csp, ev.Entry.Text)
				b.mu.Unlock()
			}
		}
	}()
	return b
}

// do runs steps with a time limit, failing the test with a screenshot name on error.
func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v (page: %s)", what, err, b.location())
	}
}

// get runs one action that returns a value.
func get[T any](b *browser, what string, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.t.Fatalf("%s: %v (page: %s)", what, err, b.location())
	}
	return v
}

func (b *browser) location() string {
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
	defer cancel()
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	return loc
}

// open navigates to a dashboard path and waits for the page to load.
func (b *browser) open(path string) {
	b.t.Helper()
	b.do("open "+path, chromedp.Navigate(b.base+path), chromedp.WaitReady(chromedp.CSS("main")))
}

// submit clicks a submit button and waits for the next page.
func (b *browser) submit(sel string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
		b.t.Fatalf("submit %s: %v (page: %s)", sel, err, b.location())
	}
}

// text returns the text of the first element matching sel.
func (b *browser) text(sel string) string {
	b.t.Helper()
	return get(b, "text of "+sel, chromedp.Text(chromedp.CSS(sel)))
}

// waitJS waits until a JavaScript expression is truthy.
func (b *browser) waitJS(what, expr string) {
	b.t.Helper()
	if os.Getenv("FOLIO_DEBUG_DASH") != "" {
		ctx, cancel := context.WithTimeout(b.ctx, 16*time.Second)
		defer cancel()
		if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(15*time.Second))); err != nil {
			main, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.querySelector("main").innerText`))
			b.t.Fatalf("wait for %s: %v\n%s", what, err, main)
		}
		return
	}
	get(b, "wait for "+what, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(15*time.Second)))
}

// typeInto replaces a field's text: a textarea's value with an input event,
// or the text of the code editor (CodeMirror) that replaced it.
func typeInto(sel, text string) chromedp.Action[chromedp.Void] {
	js, _ := json.Marshal(text)
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
		const e = document.querySelector(%q), cm = e.nextElementSibling && e.nextElementSibling.CodeMirror;
		if (cm) { cm.setValue(%s); return; }
		e.value = %s; e.dispatchEvent(new Event("input"));
	})()`, sel, js, js))
}

// checkClean fails on any dialog or Content-Security-Policy violation so far.
func (b *browser) checkClean() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.dialogs) > 0 {
		b.t.Fatalf("unexpected dialogs: %q", b.dialogs)
	}
	if len(b.csp) > 0 {
		b.t.Fatalf("Content-Security-Policy violations: %q", b.csp)
	}
}

// signup creates an account through the signup page and returns its email.
func (b *browser) signup(name string) string {
	b.t.Helper()
	email := fmt.Sprintf("%s-%d@example.com", strings.ToLower(name), userSeq.Add(1))
	b.open("/app/signup")
	b.do("fill signup", chromedp.SendKeys(chromedp.ID("name"), name), chromedp.SendKeys(chromedp.ID("email"), email),
		chromedp.SendKeys(chromedp.ID("password"), "correct horse"))
	b.submit("#signup-submit")
	b.waitJS("the templates page after signup", `location.pathname === "/app/templates" && document.querySelector("#flash")`)
	return email
}

// TestDashboard runs the dashboard in Chromium: the main scenario (signup to
// a downloaded document), the XSS case, CSRF from the browser, and the
// other pages. One server and one browser keep it fast.
func TestDashboard(t *testing.T) {
	chromiumPath(t)
	// (webhooks to 127.0.0.1 are allowed so the one made here fails fast)
	s := startServer(t, func(c *Config) { c.DefaultPlan = "growth"; c.WebhookAllowPrivate = true })
	b := newBrowser(t, s)

	var ada scenarioResult
	t.Run("Scenario", func(t *testing.T) { ada = dashboardScenario(t, s, b) })
	if t.Failed() {
		return // the rest works in the scenario's account
	}
	t.Run("XSS", func(t *testing.T) { dashboardXSS(t, s, b) })
	t.Run("CSRFInBrowser", func(t *testing.T) { dashboardCSRFInBrowser(t, b) })
	t.Run("Pages", func(t *testing.T) { dashboardPages(t, s, b, ada) })
	t.Run("Team", func(t *testing.T) { dashboardTeam(t, s, b, ada) })
	t.Run("JobsRefresh", func(t *testing.T) { dashboardJobsRefresh(t, s, b, ada) })
}

// scenarioResult is what the scenario leaves for the other subtests: the
// signed-in account, its template and its API key.
type scenarioResult struct {
	email, password, tplID, key string
}

// dashboardScenario: sign up, create a template from the example, preview
// it, create an API key, generate a document through the API with that
// key, and find the completed job with a working download link.
func dashboardScenario(t *testing.T, s *testServer, b *browser) scenarioResult {
	b.t = t
	b.open("/app/signup")
	email := b.signup("Ada")

	// The verification link of the mail lands on a page that verifies.
	mails := s.mails(email)
	if len(mails) != 1 {
		t.Fatalf("got %d mails to %s", len(mails), email)
	}
	m := regexp.MustCompile(`https://[^\s]+/verify-email\?token=[A-Za-z0-9]+`).FindString(mails[0])
	if m == "" {
		t.Fatalf("no verification link in %s", mails[0])
	}
	link, _ := url.Parse(m)
	b.open(link.RequestURI())
	if got := b.text("#verified"); !strings.Contains(got, "verified") {
		t.Fatalf("verify page says %q", got)
	}

	// A template from the invoice example.
	b.open("/app/templates/new")
	b.do("pick the invoice", chromedp.Click(chromedp.CSS(`input[name=example][value=invoice]`)),
		chromedp.SendKeys(chromedp.ID("template-name"), "Invoice"))
	b.submit("#create-template")
	b.waitJS("the editor", `document.querySelector("#template-title") && document.querySelector("#schema-status .ok")`)
	if got := b.text("#template-title"); got != "Invoice" {
		t.Fatalf("editor title %q", got)
	}
	loc := b.location()
	id := regexp.MustCompile(`/app/templates/(tpl_[A-Za-z0-9]+)`).FindStringSubmatch(loc)
	if id == nil {
		t.Fatalf("editor URL %s", loc)
	}
	tplID := id[1]

	// Preview: the editor's text rendered with the example's sample values,
	// kept with the template.
	b.waitJS("the preview", `document.querySelector("#preview-status .ok") && document.querySelector("#preview-frame").src.startsWith("blob:")`)
	if got := b.text("#preview-status"); !strings.Contains(got, "1 page") {
		t.Fatalf("preview status %q", got)
	}
	// The preview is a real PDF: make the pane's request again from the page.
	head := get(b, "read the preview", chromedp.Evaluate[string](`(() => {
		const f = document.querySelector("#editor-form");
		const body = {schema: JSON.parse(document.querySelector("#schema").value), fields: {}, format: "pdf",
			variables: JSON.parse(document.querySelector("#variables").value), constants: JSON.parse(document.querySelector("#constants").value),
			calculatedVariables: JSON.parse(document.querySelector("#calculated").value)};
		document.querySelectorAll("[name^='var.']").forEach((i) => { body.fields[i.name.slice(4)] = i.value; });
		return fetch(f.dataset.preview, {method: "POST", body: JSON.stringify(body),
			headers: {"Content-Type": "application/json", "X-CSRF-Token": document.querySelector('meta[name="csrf-token"]').content}})
			.then(r => r.text()).then(t => t.slice(0, 5));
	})()`, chromedp.EvalAwaitPromise))
	if head != "%PDF-" {
		t.Fatalf("preview starts %q", head)
	}

	// Validation messages as you type.
	schema := get(b, "the schema", chromedp.Value(chromedp.ID("schema")))
	b.do("break the schema", typeInto("#schema", schema+"x"))
	b.waitJS("a JSON error", `(document.querySelector("#schema-status .bad") || {}).textContent?.includes("not valid JSON")`)
	b.do("an unknown component", typeInto("#schema", `{"sections":[{"id":"body","components":[{"type":"sparkline"}]}]}`))
	b.waitJS("the validation message", `document.querySelector("#schema-status").textContent.includes("unknown component type \"sparkline\"")`)
	b.do("restore the schema", typeInto("#schema", schema))
	b.waitJS("the schema valid again", `document.querySelector("#schema-status .ok")`)
	// The pane still shows this very text: its last render stays.
	b.waitJS("the pane showing it", `document.querySelector("#preview-status .ok")`)

	// Live preview: a heading changed in the editor reaches the pane without
	// pressing anything, and nothing is saved for it: the preview request
	// carries the text, the PDF the pane received shows it, and the stored
	// template still has the old heading until Save.
	const oldHeading, newHeading = `"Invoice {{ invoiceNumber }}"`, `"Statement {{ invoiceNumber }}"`
	if !strings.Contains(schema, oldHeading) {
		t.Fatalf("the invoice example has no heading %s", oldHeading)
	}
	before := get(b, "the pane's document", chromedp.Evaluate[string](`document.querySelector("#preview-frame").src`))
	mark := b.netMark()
	b.do("change the heading", typeInto("#schema", strings.Replace(schema, oldHeading, newHeading, 1)))
	b.waitJS("the pane re-rendered", fmt.Sprintf(`document.querySelector("#preview-frame").src !== %q && document.querySelector("#preview-status .ok")`, before))
	preview := b.waitRequest("the preview after the edit", mark, "POST", "/preview", func(r netRequest) bool { return r.Status == 200 })
	if n := len(b.requestsSince(mark, "POST", "/preview")); n != 1 {
		t.Fatalf("want one preview after the edit, got %d", n)
	}
	if !strings.Contains(string(preview.Body), "Statement {{ invoiceNumber }}") {
		t.Fatalf("the preview request lacks the new heading: %s", preview.Body)
	}
	if txt := pdfText(t, preview.Response); !strings.Contains(txt, "Statement INV-2026-0042") || strings.Contains(txt, "Invoice INV-2026-0042") {
		t.Fatalf("the live preview does not show the new heading:\n%s", txt)
	}
	if n := len(b.requestsSince(mark, "POST", "/app/templates/"+tplID)); n != 0 {
		t.Fatalf("the live preview saved the template %d times", n)
	}
	b.submit("#save")
	b.flashSays("Saved.")

	// Publish with release notes.
	b.do("release notes", chromedp.SendKeys(chromedp.CSS(`#publish-form textarea`), "First release"))
	b.submit(`#publish-form button[type=submit]`)
	if got := b.text("#flash"); !strings.Contains(got, "Published version 1") {
		t.Fatalf("publish says %q", got)
	}

	// An API key, shown once.
	b.open("/app/keys")
	b.do("name the key", chromedp.SendKeys(chromedp.ID("key-name"), "billing"))
	b.submit("#create-key")
	key := get(b, "the new key", chromedp.Value(chromedp.ID("plain-key")))
	if !keyText.MatchString(key) {
		t.Fatalf("plain key %q", key)
	}

	// A document through the API, with that key and a plain HTTP client.
	vars, err := os.ReadFile(filepath.Join("testdata", "templates", "invoice.vars.json"))
	if err != nil {
		t.Fatal(err)
	}
	gen := s.must(200, "POST", "/api/v1/documents/generate", key, fmt.Sprintf(`{"templateId":%q,"format":"pdf","variables":%s}`, tplID, vars))
	jobID := gen.str("jobId")
	if gen.str("status") != "completed" {
		t.Fatalf("generate: %s", gen.raw)
	}

	// The jobs page shows it completed, with a download link that works.
	b.open("/app/jobs")
	b.waitJS("the completed job", fmt.Sprintf(`document.querySelector('tr[data-job=%q][data-status="completed"] a.download')`, jobID))
	href := get(b, "download link", chromedp.AttributeValue(chromedp.CSS(fmt.Sprintf(`tr[data-job=%q] a.download`, jobID)), "href")).Value
	status, hdr, body := s.download(href)
	if status != 200 || !bytes.HasPrefix(body, []byte("%PDF-")) || hdr.Get("Content-Type") != "application/pdf" {
		t.Fatalf("download %s: %d %s %q", href, status, hdr.Get("Content-Type"), body[:min(len(body), 20)])
	}
	if txt := pdfText(t, body); !strings.Contains(txt, "INV-2026-0042") {
		t.Fatalf("downloaded PDF lacks the invoice number:\n%s", txt)
	}
	// The same link works from the page (same origin, no credentials needed).
	code := get(b, "download from the page", chromedp.Evaluate[int](fmt.Sprintf(`fetch(%q).then(r => r.status)`, href),
		chromedp.EvalAwaitPromise))
	if code != 200 {
		t.Fatalf("download from the page: %d", code)
	}

	// The job's page has the link too.
	b.open("/app/jobs/" + jobID)
	if got := get(b, "job download", chromedp.AttributeValue(chromedp.ID("download"), "href")).Value; got != href {
		t.Fatalf("job page link %q, jobs list %q", got, href)
	}
	b.checkClean()
	return scenarioResult{email: email, password: "correct horse", tplID: tplID, key: key}
}

// dashboardXSS: a template named <script>alert(1)</script> shows as text,
// in the list and in the editor, and nothing runs.
func dashboardXSS(t *testing.T, s *testServer, b *browser) {
	b.t = t
	const evil = `<script>alert(1)</script>`
	b.open("/app/templates/new")
	b.do("name it", chromedp.SendKeys(chromedp.ID("template-name"), evil))
	b.submit("#create-template")
	b.waitJS("the editor", `document.querySelector("#template-title")`)
	if got := b.text("#template-title"); got != evil {
		t.Fatalf("editor title %q, want the name as text", got)
	}
	b.open("/app/templates?search=" + url.QueryEscape("<script>"))
	names := get(b, "list names", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("a.tpl-name"), a => a.textContent)`))
	if len(names) != 1 || names[0] != evil {
		t.Fatalf("list shows %q", names)
	}
	inline := get(b, "inline scripts", chromedp.Evaluate[int](`document.querySelectorAll("script:not([src])").length`))
	if inline != 0 {
		t.Fatalf("%d inline script elements on the page", inline)
	}
	// The HTML on the wire has it escaped.
	html := get(b, "page HTML", chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	if !strings.Contains(html, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Fatalf("escaped name not in the page")
	}
	time.Sleep(200 * time.Millisecond) // an alert would have opened by now
	b.checkClean()
}

// dashboardCSRFInBrowser: with a valid session cookie, a POST without the
// token, or with a wrong one, is refused and changes nothing.
func dashboardCSRFInBrowser(t *testing.T, b *browser) {
	b.t = t
	b.open("/app/keys")
	post := func(body, header string) int {
		js := fmt.Sprintf(`fetch("/app/keys", {method: "POST", body: new URLSearchParams(%s)%s}).then(r => r.status)`, body, header)
		return get(b, "post", chromedp.Evaluate[int](js, chromedp.EvalAwaitPromise))
	}
	if got := post(`{name: "csrf-probe"}`, ""); got != http.StatusForbidden {
		t.Fatalf("POST without a token: %d, want 403", got)
	}
	if got := post(`{name: "csrf-probe", csrf: "wrong-token-wrong-token-wrong-token-wrong"}`, ""); got != http.StatusForbidden {
		t.Fatalf("POST with a wrong token: %d, want 403", got)
	}
	if got := post(`{name: "csrf-probe"}`, `, headers: {"X-CSRF-Token": "wrong-token-wrong-token-wrong-token-wrong"}`); got != http.StatusForbidden {
		t.Fatalf("POST with a wrong header token: %d, want 403", got)
	}
	b.open("/app/keys")
	if html := get(b, "keys page", chromedp.Evaluate[string](`document.body.textContent`)); strings.Contains(html, "csrf-probe") {
		t.Fatal("a refused POST created a key")
	}
	// The page's own token works (the control).
	if got := post(`{name: "csrf-probe", csrf: document.querySelector('meta[name="csrf-token"]').content}`, ""); got != http.StatusOK {
		t.Fatalf("POST with the page's token: %d, want 200", got)
	}
}

// dashboardPages visits the remaining pages: webhooks, team, account (2FA
// setup with the QR code), usage with its chart, and a phone width.
func dashboardPages(t *testing.T, s *testServer, b *browser, ada scenarioResult) {
	b.t = t
	b.open("/app/usage")
	bars := get(b, "chart bars", chromedp.Evaluate[int](`document.querySelectorAll("#chart rect.bar").length`))
	if bars != 30 {
		t.Fatalf("chart has %d bars, want 30", bars)
	}
	if got := get(b, "today's bar", chromedp.Evaluate[string](`document.querySelector("#chart rect.bar:last-of-type title").textContent`)); !strings.HasSuffix(got, ": 1") {
		t.Fatalf("today's bar says %q, want the one document", got)
	}

	b.open("/app/")
	// A webhook subscription: its secret shown once; disabled and enabled again.
	b.open("/app/webhooks")
	b.do("the webhook URL", chromedp.SendKeys(chromedp.CSS(`#webhook-form input[name=url]`), "https://127.0.0.1:9/folio"))
	b.submit(`#webhook-form button[type=submit]`)
	if secret := get(b, "the secret", chromedp.Value(chromedp.ID("webhook-secret"))); !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("webhook secret %q", secret)
	}
	webhookID := strings.TrimPrefix(get(b, "the subscription link", chromedp.AttributeValue(chromedp.CSS(`#webhooks a`), "href")).Value, "/app/webhooks/")
	for _, step := range []struct{ button, flash, badge string }{{"Disable", "disabled", "disabled"}, {"Enable", "Subscription enabled.", "enabled"}} {
		if got := b.text(`#webhooks form[action$="/enabled"] button`); got != step.button {
			t.Fatalf("the webhook's button says %q, want %q", got, step.button)
		}
		b.submit(`#webhooks form[action$="/enabled"] button`)
		b.flashSays(step.flash)
		if got := b.text(`#webhooks .badge`); got != step.badge {
			t.Fatalf("the webhook is %q, want %q", got, step.badge)
		}
	}

	b.checkPhone("/app/jobs", "/app/templates", "/app/keys", "/app/usage", "/app/templates/"+ada.tplID,
		"/app/account", "/app/webhooks", "/app/webhooks/"+webhookID, "/app/")

	b.open("/app/account")
	b.submit("#enable-2fa")
	b.waitJS("the QR code", `document.querySelector("#qr") && document.querySelector("#qr").naturalWidth > 0`)

	b.open("/app/team")
	b.do("create a team", chromedp.SendKeys(chromedp.CSS(`form[action="/app/teams"] input[name=name]`), "Acme Docs"))
	b.submit(`form[action="/app/teams"] button`)
	if got := b.text("#flash"); !strings.Contains(got, "Acme Docs") {
		t.Fatalf("create team says %q", got)
	}
	if got := b.text(".team-chip"); !strings.Contains(got, "Acme Docs") {
		t.Fatalf("current team %q after creating one", got)
	}
	b.checkClean()
}

// TestDashboardCSRF checks the CSRF and cross-origin refusals over plain
// HTTP, without a browser: no token, a wrong token, and a cross-site
// request carrying the right one.
func TestDashboardCSRF(t *testing.T) {
	s := startServer(t)
	c := dashClient(t, s)
	tok := c.token("/app/login")
	for _, tc := range []struct {
		name    string
		form    url.Values
		headers []string
		want    int
	}{
		{"no token", url.Values{"email": {"a@example.com"}, "password": {"x"}}, nil, 403},
		{"wrong token", url.Values{"csrf": {strings.Repeat("x", 43)}, "email": {"a@example.com"}, "password": {"x"}}, nil, 403},
		{"cross-site", url.Values{"csrf": {tok}, "email": {"a@example.com"}, "password": {"x"}}, []string{"Sec-Fetch-Site", "cross-site"}, 403},
		{"other origin", url.Values{"csrf": {tok}, "email": {"a@example.com"}, "password": {"x"}}, []string{"Origin", "https://evil.example"}, 403},
		{"right token", url.Values{"csrf": {tok}, "email": {"a@example.com"}, "password": {"wrong password"}}, nil, 401},
	} {
		res := c.post("/app/login", tc.form, tc.headers...)
		if res.StatusCode != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, res.StatusCode, tc.want)
		}
	}
	// A cookie from another browser does not help: the token must match this one's cookie.
	other := dashClient(t, s)
	other.token("/app/login")
	if res := other.post("/app/login", url.Values{"csrf": {tok}, "email": {"a@example.com"}, "password": {"x"}}); res.StatusCode != 403 {
		t.Fatalf("another browser's token: %d, want 403", res.StatusCode)
	}
}

// TestDashboardSession covers the session cookie and the security headers,
// login with two-factor, logout, and a password change ending other sessions.
func TestDashboardSession(t *testing.T) {
	s := startServer(t)
	u := s.signup("Grace")
	c := dashClient(t, s)

	// "/" is the dashboard; pages need a session and redirect to the login.
	if res := c.get("/"); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/app/" {
		t.Fatalf("GET /: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	res := c.get("/app/templates")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/app/login?next=%2Fapp%2Ftemplates") {
		t.Fatalf("signed out: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	res = c.get("/app/login")
	h := res.Header
	for k, want := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"} {
		if h.Get(k) != want {
			t.Errorf("%s = %q, want %q", k, h.Get(k), want)
		}
	}
	csp := h.Get("Content-Security-Policy")
	for _, d := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, d) {
			t.Errorf("CSP %q lacks %q", csp, d)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("CSP allows inline code: %q", csp)
	}

	// Two-factor on (through the API), then the dashboard login asks for a code.
	setup := s.must(200, "POST", "/api/users/me/2fa/enable", u.token, nil)
	secret := setup.str("secret")
	s.must(200, "POST", "/api/users/me/2fa/verify", u.token, map[string]string{"code": totpCode(t, secret, time.Now().Add(-30*time.Second))})
	res = c.post("/app/login", url.Values{"csrf": {c.token("/app/login")}, "email": {u.email}, "password": {u.password}})
	body := readBody(res)
	if res.StatusCode != 200 || !strings.Contains(body, `action="/app/login/2fa"`) {
		t.Fatalf("login with two-factor on: %d\n%s", res.StatusCode, body)
	}
	if c.cookie(sessionCookieName) != "" {
		t.Fatal("a session cookie before the second factor")
	}
	res = c.post("/app/login/2fa", url.Values{"csrf": {c.csrf()}, "code": {"000000"}})
	if body := readBody(res); res.StatusCode != 401 || !strings.Contains(body, "ERR_AUTH_012") {
		t.Fatalf("wrong code: %d %s", res.StatusCode, body)
	}
	res = c.post("/app/login/2fa", url.Values{"csrf": {c.csrf()}, "code": {totpCode(t, secret, time.Now())}, "next": {"/app/keys"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/app/keys" {
		t.Fatalf("right code: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	var sc *http.Cookie
	for _, ck := range res.Cookies() {
		if ck.Name == sessionCookieName {
			sc = ck
		}
	}
	if sc == nil || !sc.HttpOnly || !sc.Secure || sc.SameSite != http.SameSiteLaxMode || sc.Path != "/" {
		t.Fatalf("session cookie %+v", sc)
	}
	if strings.Count(sc.Value, ".") == 2 {
		t.Fatal("the session cookie looks like a JWT; it should be an opaque token")
	}
	if res := c.get("/app/keys"); res.StatusCode != 200 {
		t.Fatalf("keys page: %d", res.StatusCode)
	}
	// The cookie is not an API credential.
	s.must(401, "GET", "/api/users/me", sc.Value, nil)

	// A second browser; changing the password in the first ends the second.
	c2 := dashClient(t, s)
	// (second factor again: the replay guard needs the next time step)
	c2.post("/app/login", url.Values{"csrf": {c2.token("/app/login")}, "email": {u.email}, "password": {u.password}})
	c2.post("/app/login/2fa", url.Values{"csrf": {c2.csrf()}, "code": {totpCode(t, secret, time.Now().Add(30*time.Second))}})
	if res := c2.get("/app/account"); res.StatusCode != 200 {
		t.Fatalf("second browser: %d", res.StatusCode)
	}
	res = c.post("/app/account/password", url.Values{"csrf": {c.csrf()}, "currentPassword": {u.password}, "newPassword": {"a new password"}, "confirmPassword": {"a new password"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/app/account" {
		t.Fatalf("change password: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if res := c.get("/app/account"); res.StatusCode != 200 {
		t.Fatalf("first browser after the change: %d", res.StatusCode)
	}
	if res := c2.get("/app/account"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("second browser after the change: %d, want a redirect to the login", res.StatusCode)
	}
	// Logout ends the session on the server, not just the cookie.
	old := c.cookie(sessionCookieName)
	c.post("/app/logout", url.Values{"csrf": {c.csrf()}})
	c3 := dashClient(t, s)
	c3.setCookie(sessionCookieName, old)
	if res := c3.get("/app/account"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("old session after logout: %d", res.StatusCode)
	}
}

// TestDashboardInvitation follows the invitation mail's link: signed out it
// leads to the login and back; the page accepts with a POST, and the
// session then works in the new team.
func TestDashboardInvitation(t *testing.T) {
	s := startServer(t)
	owner := s.verifiedUser("Owner")
	team := s.newTeam(owner, "Print Shop")
	bob := s.verifiedUser("Bob")
	s.must(200, "POST", "/api/teams/members/invite", owner.token, map[string]any{"email": bob.email, "role": "admin"}, "X-Team-Id", team)
	inv := s.lastInvitationID(bob.email)
	link := "/invitations/" + inv + "/accept"

	c := dashClient(t, s)
	res := c.get(link)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/app/login?next="+url.QueryEscape(link) {
		t.Fatalf("signed out: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	res = c.post("/app/login", url.Values{"csrf": {c.token("/app/login")}, "email": {bob.email}, "password": {bob.password}, "next": {link}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != link {
		t.Fatalf("login: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	page := c.page(link)
	if !strings.Contains(page, "Print Shop") || !strings.Contains(page, "Accept and join") || !strings.Contains(page, "admin") {
		t.Fatalf("invitation page:\n%s", page)
	}
	res = c.post("/app/invitations/"+inv+"/accept", url.Values{"csrf": {c.csrf()}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/app/team" {
		t.Fatalf("accept: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if page := c.page("/app/team"); !strings.Contains(page, "<h1>Print Shop</h1>") || !strings.Contains(page, "you are admin") {
		t.Fatalf("team page after accepting:\n%s", page)
	}
	// Accepted: the link no longer offers it, and the API agrees.
	if page := c.page(link); strings.Contains(page, "Accept and join") {
		t.Fatal("an accepted invitation is offered again")
	}
	members := s.must(200, "GET", "/api/teams/members", owner.token, nil, "X-Team-Id", team)
	if !strings.Contains(string(members.raw), bob.email) {
		t.Fatalf("members: %s", members.raw)
	}
}

// TestDashboardLoginNextStaysOnSite sends hostile "next" values through the
// real login form: after the password the browser must land on this site.
// "/\t/evil.example" was the reported case: Location "/<TAB>/evil.example",
// which a browser cleans to "//evil.example", another host.
func TestDashboardLoginNextStaysOnSite(t *testing.T) {
	s := startServer(t)
	u := s.signup("Ned")
	for _, tc := range []struct{ next, want string }{
		{"/\t/evil.example", "/app/"},
		{"/%09/evil.example", "/app/"},
		{"//evil.example", "/app/"},
		{"/\\evil.example", "/app/"},
		{"https://evil.example", "/app/"},
		{"javascript:alert(1)", "/app/"},
		{"/app/keys?x=1", "/app/keys?x=1"}, // a local path is kept
	} {
		c := dashClient(t, s)
		// The login page carries only a safe value in its form...
		q := url.Values{"next": {tc.next}}.Encode()
		if page := c.page("/app/login?" + q); strings.Contains(page, "evil") || strings.Contains(page, "javascript") {
			t.Errorf("login page for next=%q offers it:\n%s", tc.next, page)
		}
		// ...and a form posted with a hostile one anyway redirects home.
		res := c.post("/app/login", url.Values{"csrf": {c.csrf()}, "email": {u.email}, "password": {u.password}, "next": {tc.next}})
		if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || loc != tc.want {
			t.Errorf("login with next=%q: %d Location %q, want %q", tc.next, res.StatusCode, loc, tc.want)
		}
		// Signed in, the login page redirects at once: the same rule.
		if loc := c.get("/app/login?" + q).Header.Get("Location"); loc != tc.want {
			t.Errorf("signed in, GET /app/login?%s: Location %q, want %q", q, loc, tc.want)
		}
	}
	// The exact request of the report, query string as sent.
	c := dashClient(t, s)
	c.login(u)
	if loc := c.get("/app/login?next=%2F%09%2Fevil.example").Header.Get("Location"); loc != "/app/" {
		t.Fatalf("next=%%2F%%09%%2Fevil.example: Location %q", loc)
	}
}

// TestDashboardTemplatesAndJobs drives the template and job pages over
// plain HTTP: create from an example, a save refused with the text kept,
// publish, versions and restore, a document from the sample form, a failed
// job with its error and retry, and a paginated list.
func TestDashboardTemplatesAndJobs(t *testing.T) {
	s := startServer(t)
	u := s.signup("Tess")
	c := dashClient(t, s)
	c.login(u)

	res := c.post("/app/templates", url.Values{"csrf": {c.csrf()}, "example": {"blank"}, "name": {"Letter"}})
	loc := res.Header.Get("Location")
	m := regexp.MustCompile(`^/app/templates/(tpl_[A-Za-z0-9]+)$`).FindStringSubmatch(loc)
	if res.StatusCode != http.StatusSeeOther || m == nil {
		t.Fatalf("create: %d %s", res.StatusCode, loc)
	}
	id := m[1]
	if page := c.page(loc); !strings.Contains(page, `value="Ada Lovelace"`) {
		t.Fatal("the sample form lacks the example's values (kept as the template's sampleData)")
	}
	edit := "/app/templates/" + id
	form := func(schema string) url.Values {
		return url.Values{"csrf": {c.csrf()}, "name": {"Letter"}, "outputFormats": {"pdf"}, "schema": {schema},
			"variables": {`[{"name":"name","type":"string","required":true}]`}}
	}
	res = c.post(edit, form(`{"sections": [`))
	if body := readBody(res); res.StatusCode != 400 || !strings.Contains(body, "Schema is not valid JSON") || !strings.Contains(body, `{&#34;sections&#34;: [`) {
		t.Fatalf("bad JSON: %d\n%s", res.StatusCode, body)
	}
	res = c.post(edit, form(`{"sections":[{"id":"b","components":[{"type":"sparkline"}]}]}`))
	if body := readBody(res); res.StatusCode != 400 || !strings.Contains(body, "ERR_TMPL_008") || !strings.Contains(body, "unknown component type") {
		t.Fatalf("invalid schema: %d\n%s", res.StatusCode, body)
	}
	heading := func(text string) string {
		return `{"sections":[{"id":"b","components":[{"type":"heading","props":{"content":"` + text + `"}}]}]}`
	}
	for i, text := range []string{"Dear {{ name }}", "Hello {{ name }}"} {
		if res := c.post(edit, form(heading(text))); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("save: %d %s", res.StatusCode, readBody(res))
		}
		res = c.post(edit+"/publish", url.Values{"csrf": {c.csrf()}, "releaseNotes": {fmt.Sprintf("notes %d", i+1)}})
		if flash := c.flash(res); !strings.Contains(flash, fmt.Sprintf("Published version %d", i+1)) {
			t.Fatalf("publish %d: %q", i+1, flash)
		}
	}
	res = c.post(edit+"/publish", url.Values{"csrf": {c.csrf()}})
	if flash := c.flash(res); !strings.Contains(flash, "ERR_TMPL_020") {
		t.Fatalf("publishing nothing: %q", flash)
	}
	res = c.post(edit+"/versions/1/restore", url.Values{"csrf": {c.csrf()}})
	if flash := c.flash(res); !strings.Contains(flash, "version 3") {
		t.Fatalf("restore: %q", flash)
	}
	if page := c.page(edit + "/versions"); !strings.Contains(page, "notes 2") || !strings.Contains(page, "restored from v1") {
		t.Fatalf("versions page:\n%s", page)
	}

	// A document from the sample form: the job page follows it to the download.
	res = c.post(edit+"/generate", url.Values{"csrf": {c.csrf()}, "var.name": {"Bob"}, "format": {"pdf"}})
	job := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(job, "/app/jobs/job_") {
		t.Fatalf("generate: %d %s", res.StatusCode, job)
	}
	var page string
	for deadline := time.Now().Add(15 * time.Second); ; {
		page = c.page(job)
		if strings.Contains(page, `id="download"`) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	dl := regexp.MustCompile(`<a href="([^"]+)" id="download"`).FindStringSubmatch(page)
	if dl == nil {
		t.Fatalf("no download link:\n%s", page)
	}
	status, _, pdf := s.download(strings.ReplaceAll(dl[1], "&amp;", "&"))
	if status != 200 || !strings.Contains(pdfText(t, pdf), "Dear Bob") {
		t.Fatalf("download %d", status)
	}

	// A failed job: its error on the list and its page, and a retry.
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Long", longTemplate())
	r := s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": map[string]any{"body": longText}})
	failed := r.str("relatedInfo.jobId")
	if list := c.page("/app/jobs?status=failed"); !strings.Contains(list, failed) || strings.Contains(list, job[len("/app/jobs/"):]) {
		t.Fatal("the failed filter does not show exactly the failed job")
	}
	if page := c.page("/app/jobs/" + failed); !strings.Contains(page, "ERR_LIMIT_001") || !strings.Contains(page, `id="retry"`) {
		t.Fatalf("failed job page:\n%s", page)
	}
	res = c.post("/app/jobs/"+failed+"/retry", url.Values{"csrf": {c.csrf()}})
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/app/jobs/job_") || strings.HasSuffix(loc, failed) {
		t.Fatalf("retry: %d %s", res.StatusCode, loc)
	}

	// Long lists paginate, and search narrows them.
	for i := 0; i < 20; i++ {
		s.createTemplate(u.token, fmt.Sprintf("Extra %02d", i), invoiceTemplate)
	}
	list := c.page("/app/templates")
	if !strings.Contains(list, "Page 1 of 2") || strings.Count(list, `class="tpl-name"`) != 20 {
		t.Fatalf("templates page 1:\n%s", list)
	}
	if list := c.page("/app/templates?page=2"); strings.Count(list, `class="tpl-name"`) != 2 {
		t.Fatalf("templates page 2 has %d rows", strings.Count(list, `class="tpl-name"`))
	}
	if list := c.page("/app/templates?search=extra+07"); strings.Count(list, `class="tpl-name"`) != 1 {
		t.Fatal("search does not narrow the list")
	}
}

// TestDashboardKeysAndWebhooks: keys are shown once, revoked, reactivated
// and deleted; a webhook's secret is shown once, it can be disabled, its
// test event and deliveries show, and a failed delivery can be retried.
func TestDashboardKeysAndWebhooks(t *testing.T) {
	s := startServer(t, func(c *Config) { c.WebhookAllowPrivate = true; c.WebhookRetrySchedule = "0s" })
	u := s.verifiedUser("Kim")
	c := dashClient(t, s)
	c.login(u)

	res := c.post("/app/keys", url.Values{"csrf": {c.csrf()}, "name": {"ci"}, "send_emails": {"1"}})
	body := readBody(res)
	key := regexp.MustCompile(`id="plain-key" value="(svc_sk_[A-Za-z0-9]+)"`).FindStringSubmatch(body)
	if res.StatusCode != 200 || key == nil {
		t.Fatalf("create key: %d\n%s", res.StatusCode, body)
	}
	if strings.Contains(c.page("/app/keys"), key[1]) {
		t.Fatal("the key list shows the plain key again")
	}
	s.must(200, "GET", "/api/v1/templates", key[1], nil)
	keyID := regexp.MustCompile(`href="/app/keys/(key_[A-Za-z0-9]+)"`).FindStringSubmatch(c.page("/app/keys"))[1]
	if page := c.page("/app/keys/" + keyID); !regexp.MustCompile(`Requests</h2><p class="big">1</p>`).MatchString(page) {
		t.Fatalf("key usage:\n%s", page)
	}
	c.flash(c.post("/app/keys/"+keyID+"/revoke", url.Values{"csrf": {c.csrf()}}))
	s.wantError(s.do("GET", "/api/v1/templates", key[1], nil), 401, "ERR_AKEY_003")
	c.flash(c.post("/app/keys/"+keyID+"/activate", url.Values{"csrf": {c.csrf()}}))
	s.must(200, "GET", "/api/v1/templates", key[1], nil)
	if flash := c.flash(c.post("/app/keys/"+keyID+"/delete", url.Values{"csrf": {c.csrf()}})); flash != "Key deleted." {
		t.Fatalf("delete key: %q", flash)
	}

	// Webhooks. Nothing listens on the URL, so deliveries fail.
	res = c.post("/app/webhooks", url.Values{"csrf": {c.csrf()}, "url": {"https://127.0.0.1:9/folio"}, "events": {"document.generated", "document.failed"}})
	body = readBody(res)
	if res.StatusCode != 200 || !regexp.MustCompile(`id="webhook-secret" value="whsec_[A-Za-z0-9]+"`).MatchString(body) {
		t.Fatalf("create webhook: %d\n%s", res.StatusCode, body)
	}
	subID := regexp.MustCompile(`href="/app/webhooks/(whk_[A-Za-z0-9]+)"`).FindStringSubmatch(body)[1]
	res = c.post("/app/webhooks", url.Values{"csrf": {c.csrf()}, "url": {"ftp://example.com"}})
	if body := readBody(res); !strings.Contains(body, `class="flash error"`) || !strings.Contains(body, `value="ftp://example.com"`) {
		t.Fatalf("a refused URL: %d\n%s", res.StatusCode, body)
	}
	if flash := c.flash(c.post("/app/webhooks/"+subID+"/test", url.Values{"csrf": {c.csrf()}})); !strings.Contains(flash, "not accepted") {
		t.Fatalf("test event: %q", flash)
	}
	page := c.page("/app/webhooks/" + subID)
	retry := regexp.MustCompile(`action="(/app/webhooks/` + subID + `/deliveries/dlv_[A-Za-z0-9]+/retry)"`).FindStringSubmatch(page)
	if retry == nil {
		t.Fatalf("no failed delivery with a retry button:\n%s", page)
	}
	if flash := c.flash(c.post(retry[1], url.Values{"csrf": {c.csrf()}})); flash != "Delivery scheduled again." {
		t.Fatalf("retry delivery: %q", flash)
	}
	if flash := c.flash(c.post("/app/webhooks/"+subID+"/enabled", url.Values{"csrf": {c.csrf()}, "enabled": {"false"}})); !strings.Contains(flash, "disabled") {
		t.Fatalf("disable: %q", flash)
	}
	if sub := s.must(200, "GET", "/api/v1/webhook-subscriptions/"+subID, u.token, nil); sub.str("enabled") != "false" {
		t.Fatalf("subscription after disabling: %s", sub.raw)
	}
}

// TestDashboardAccount: profile, two-factor set up from the account page,
// and deleting the account, which signs out and can be undone at login.
func TestDashboardAccount(t *testing.T) {
	s := startServer(t)
	u := s.verifiedUser("Lin")
	c := dashClient(t, s)
	c.login(u)

	if flash := c.flash(c.post("/app/account/profile", url.Values{"csrf": {c.csrf()}, "name": {"Lin Q."}, "email": {u.email}, "timezone": {"Europe/Berlin"}})); flash != "Profile saved." {
		t.Fatalf("profile: %q", flash)
	}
	if me := s.must(200, "GET", "/api/users/me", u.token, nil); me.str("name") != "Lin Q." || me.str("timezone") != "Europe/Berlin" {
		t.Fatalf("me: %s", me.raw)
	}
	if flash := c.flash(c.post("/app/account/profile", url.Values{"csrf": {c.csrf()}, "name": {"Lin"}, "email": {u.email}, "timezone": {"Mars/Olympus"}})); !strings.Contains(flash, "ERR_") {
		t.Fatalf("bad timezone: %q", flash)
	}

	res := c.post("/app/account/2fa/enable", url.Values{"csrf": {c.csrf()}})
	body := readBody(res)
	secret := regexp.MustCompile(`id="totp-secret">([A-Z2-7]+)<`).FindStringSubmatch(body)
	if res.StatusCode != 200 || secret == nil || !strings.Contains(body, `src="data:image/png;base64,`) {
		t.Fatalf("enable 2FA: %d\n%s", res.StatusCode, body)
	}
	if flash := c.flash(c.post("/app/account/2fa/verify", url.Values{"csrf": {c.csrf()}, "code": {"000000"}})); !strings.Contains(flash, "ERR_AUTH_012") {
		t.Fatalf("wrong code: %q", flash)
	}
	res = c.post("/app/account/2fa/verify", url.Values{"csrf": {c.csrf()}, "code": {totpCode(t, secret[1], time.Now())}})
	if body := readBody(res); res.StatusCode != 200 || !strings.Contains(body, "is on") || !strings.Contains(body, `id="backup-codes"`) {
		t.Fatalf("verify: %d\n%s", res.StatusCode, body)
	}

	res = c.post("/app/account/delete", url.Values{"csrf": {c.csrf()}, "password": {u.password}, "confirm": {"DELETE"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/app/login" {
		t.Fatalf("delete: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if res := c.get("/app/account"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("after deletion: %d", res.StatusCode)
	}
	res = c.post("/app/login", url.Values{"csrf": {c.csrf()}, "email": {u.email}, "password": {u.password}})
	if body := readBody(res); res.StatusCode != 403 || !strings.Contains(body, "ERR_USER_004") || !strings.Contains(body, `name="restore"`) {
		t.Fatalf("login while pending deletion: %d\n%s", res.StatusCode, body)
	}
	res = c.post("/app/login", url.Values{"csrf": {c.csrf()}, "email": {u.email}, "password": {u.password}, "restore": {"1"},
		"code": {totpCode(t, secret[1], time.Now().Add(30*time.Second))}})
	if flash := c.flash(res); !strings.Contains(flash, "restored") {
		t.Fatalf("restore: %q", flash)
	}
}

const sessionCookieName = "__Host-folio_session"

// dashClient is a cookie-keeping HTTP client that does not follow redirects.
type dashHTTP struct {
	t   *testing.T
	s   *testServer
	c   *http.Client
	jar *cookiejar.Jar
}

func dashClient(t *testing.T, s *testServer) *dashHTTP {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Transport: s.client.Transport, Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &dashHTTP{t: t, s: s, c: c, jar: jar}
}

func (d *dashHTTP) get(path string) *http.Response {
	d.t.Helper()
	res, err := d.c.Get(d.s.URL() + path)
	if err != nil {
		d.t.Fatal(err)
	}
	res.Body.Close()
	return res
}

// page GETs a page that must answer 200 and returns its HTML.
func (d *dashHTTP) page(path string) string {
	d.t.Helper()
	res, err := d.c.Get(d.s.URL() + path)
	if err != nil {
		d.t.Fatal(err)
	}
	body := readBody(res)
	if res.StatusCode != 200 {
		d.t.Fatalf("GET %s: %d\n%s", path, res.StatusCode, body)
	}
	return body
}

func (d *dashHTTP) post(path string, form url.Values, headers ...string) *http.Response {
	d.t.Helper()
	req, _ := http.NewRequest("POST", d.s.URL()+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := d.c.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(b))
	return res
}

var csrfMeta = regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`)

// token loads a page and returns the CSRF token it carries.
func (d *dashHTTP) token(path string) string {
	d.t.Helper()
	res, err := d.c.Get(d.s.URL() + path)
	if err != nil {
		d.t.Fatal(err)
	}
	m := csrfMeta.FindStringSubmatch(readBody(res))
	if m == nil {
		d.t.Fatalf("no CSRF token on %s", path)
	}
	return m[1]
}

// login signs u in through the login form.
func (d *dashHTTP) login(u user) {
	d.t.Helper()
	res := d.post("/app/login", url.Values{"csrf": {d.token("/app/login")}, "email": {u.email}, "password": {u.password}})
	if res.StatusCode != http.StatusSeeOther {
		d.t.Fatalf("login: %d %s", res.StatusCode, readBody(res))
	}
}

// flash follows a redirect and returns the one-time message it shows.
func (d *dashHTTP) flash(res *http.Response) string {
	d.t.Helper()
	if res.StatusCode != http.StatusSeeOther {
		d.t.Fatalf("want a redirect, got %d: %s", res.StatusCode, readBody(res))
	}
	m := regexp.MustCompile(`(?s)<div class="flash [a-z]+" role="status" id="flash">(.*?)</div>`).FindStringSubmatch(d.page(res.Header.Get("Location")))
	if m == nil {
		return ""
	}
	return m[1]
}

// csrf is the token of the current CSRF cookie (what a page would carry).
func (d *dashHTTP) csrf() string { return d.cookie("__Host-folio_csrf") }

func (d *dashHTTP) cookie(name string) string {
	u, _ := url.Parse(d.s.URL())
	for _, c := range d.jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

func (d *dashHTTP) setCookie(name, value string) {
	u, _ := url.Parse(d.s.URL())
	d.jar.SetCookies(u, []*http.Cookie{{Name: name, Value: value, Path: "/", Secure: true}})
}

func readBody(res *http.Response) string {
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return string(b)
}

// TestDashboardExamplesMatchTestdata keeps the dashboard's embedded example
// templates equal to testdata/templates, which the render tests check.
func TestDashboardExamplesMatchTestdata(t *testing.T) {
	for _, name := range []string{"invoice.json", "invoice.vars.json", "monthly-report.json", "monthly-report.vars.json"} {
		a, err := os.ReadFile(filepath.Join("testdata", "templates", name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join("web", "dashboard", "examples", name))
		if err != nil {
			t.Fatal(err)
		}
		var ja, jb any
		if json.Unmarshal(a, &ja) != nil || json.Unmarshal(b, &jb) != nil || fmt.Sprint(ja) != fmt.Sprint(jb) {
			t.Errorf("web/dashboard/examples/%s differs from testdata/templates/%s: copy it over", name, name)
		}
	}
}
