package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestDashboardFirstHour walks a newcomer's first hour in Chromium, at a
// laptop's size (1280×800) and a phone's (390×844): sign up and verify,
// a template from each example (an empty name first: the message shows on
// the page), the invoice in the code editor (typed with the keyboard, the
// preview of the unsaved text beside it, a problem marked at its line, the
// sample values saved with the template, the XLSX as a table), publish, an
// API key, a document generated with curl, the job and its download in the
// dashboard, a webhook to a local receiver, an invitation followed by the
// invitee from the mail to the team, and two-factor set up with a wrong
// code first. Any console error or warning, JavaScript exception, CSP
// violation or dialog fails it.
func TestDashboardFirstHour(t *testing.T) {
	chromiumPath(t)
	for _, size := range []struct {
		name string
		w, h int64
	}{{"desktop", 1280, 800}, {"phone", 390, 844}} {
		t.Run(size.name, func(t *testing.T) { firstHour(t, size.w, size.h) })
	}
}

// console records what the page said on the console and what it threw.
type console struct {
	mu   sync.Mutex
	said []string
	// expected are failed loads a step provokes on purpose (a form answered
	// with its error and status 400), by URL: each excuses one entry.
	expected []string
}

// expect excuses one "Failed to load resource" entry for a page the next
// step answers with an error status on purpose.
func (c *console) expect(url string) {
	c.mu.Lock()
	c.expected = append(c.expected, url)
	c.mu.Unlock()
}

// watchConsole records console errors and warnings, browser log entries of
// those levels (failed loads, CSP) and uncaught exceptions.
func watchConsole(b *browser) *console {
	c := &console{}
	msgs := chromedp.Console(b.ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			switch m.Type {
			case chromedp.ConsoleError, chromedp.ConsoleWarning, chromedp.ConsoleException:
				c.mu.Lock()
				if i := slices.Index(c.expected, m.URL); i >= 0 && m.Source == "network" && strings.HasPrefix(m.Text, "Failed to load resource") {
					c.expected = slices.Delete(c.expected, i, i+1)
				} else {
					c.said = append(c.said, m.String()+" ("+m.URL+")")
				}
				c.mu.Unlock()
			}
		}
	}()
	return c
}

func (c *console) check(t *testing.T, when string) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.said) > 0 {
		t.Fatalf("the browser console %s:\n  %s", when, strings.Join(c.said, "\n  "))
	}
}

// cm runs JavaScript with the schema's CodeMirror as cm.
func cmJS(field, body string) string {
	return fmt.Sprintf(`(() => { const cm = document.querySelector(".cm-%s").CodeMirror; %s })()`, field, body)
}

// selectText selects the first occurrence of text after the first of
// after in a code field, and gives it the focus: what is typed next
// replaces it.
func selectText(field, after, text string) chromedp.Action[chromedp.Void] {
	a, _ := json.Marshal(after)
	x, _ := json.Marshal(text)
	return chromedp.Evaluate[chromedp.Void](cmJS(field, fmt.Sprintf(`const v = cm.getValue(); const i = v.indexOf(%s, v.indexOf(%s));
		if (i < 0) throw new Error("not in the editor: " + %s);
		cm.setSelection(cm.posFromIndex(i), cm.posFromIndex(i + %s.length)); cm.scrollIntoView(cm.posFromIndex(i), 120); cm.focus();`, x, a, x, x)))
}

// lintLines returns the lines (from 0) a code field marks with severity
// ("error" or "warning").
func lintLines(b *browser, field, severity string) []int {
	b.t.Helper()
	return get(b, "lint marks", chromedp.Evaluate[[]int](cmJS(field, fmt.Sprintf(`return cm.getAllMarks().filter((m) => (m.className || "").includes("CodeMirror-lint-mark-%s")).map((m) => m.find().from.line);`, severity))))
}

func firstHour(t *testing.T, w, h int64) {
	rcv := startReceiver(t, false)
	s := startServer(t, func(c *Config) { c.WebhookAllowPrivate = true; c.WebhookCA = rcv.caFile })
	b := newBrowser(t, s)
	b.t = t
	con := watchConsole(b)
	b.do("screen size", chromedp.EmulateViewport(w, h))
	desktop := w >= 1100

	// Sign up, and verify with the mail's link.
	email := b.signup("Ada")
	verify := regexp.MustCompile(`https://\S+/verify-email\?token=\S+`).FindString(strings.Join(s.mails(email), "\n"))
	link, _ := url.Parse(verify)
	b.open(link.RequestURI())
	if got := b.text("#verified"); !strings.Contains(got, "verified") {
		t.Fatalf("verify page: %q", got)
	}

	// New template: the placeholder is an example, an empty name is
	// answered on the page (no browser bubble), then one from each example.
	b.open("/app/templates/new")
	if ph := get(b, "placeholder", chromedp.AttributeValue(chromedp.ID("template-name"), "placeholder")).Value; !strings.HasPrefix(ph, "e.g. ") {
		t.Fatalf("name placeholder %q", ph)
	}
	con.expect(s.URL() + "/app/templates") // the form comes back with its message and status 400
	b.submit("#create-template")
	b.waitJS("the name's message", `document.querySelector("#name-error") && document.querySelector("#name-error").textContent.includes("Give the template a name")`)
	ids := map[string]string{}
	for _, ex := range []struct{ id, name, sample string }{
		{"blank", "Welcome letter", "Ada Lovelace"}, {"monthly-report", "Sales report", ""}, {"invoice", "Invoice", "INV-2026-0042"},
	} {
		b.open("/app/templates/new")
		b.do("pick "+ex.id, chromedp.Click(chromedp.CSS(`input[name=example][value="`+ex.id+`"]`)),
			chromedp.SendKeys(chromedp.ID("template-name"), ex.name))
		b.submit("#create-template")
		b.waitJS("the editor of "+ex.name, `document.querySelector(".cm-schema") && document.querySelector("#schema-status .ok") &&
			document.querySelector("#preview-status .ok")`)
		if got := b.text("#preview-status"); strings.Contains(got, "required") {
			t.Fatalf("%s previews with %q", ex.name, got)
		}
		if ex.sample != "" {
			if vals := get(b, "sample values", chromedp.Evaluate[string](`Array.from(document.querySelectorAll("[name^='var.']"), (i) => i.value).join("|")`)); !strings.Contains(vals, ex.sample) {
				t.Fatalf("%s: sample values %q lack %q", ex.name, vals, ex.sample)
			}
		}
		ids[ex.id] = regexp.MustCompile(`tpl_[A-Za-z0-9]+`).FindString(b.location())
	}
	tplID := ids["invoice"]
	token := s.must(200, "POST", "/api/auth/login", "", map[string]any{"email": email, "password": "correct horse"}).str("accessToken")

	// The editor: CodeMirror replaced the schema's textarea, the preview is
	// beside it on a laptop and below it on a phone, and stays in view
	// while the schema scrolls on a laptop.
	rect := func(sel string) []float64 {
		return get(b, "rect of "+sel, chromedp.Evaluate[[]float64](fmt.Sprintf(`(() => { const r = document.querySelector(%q).getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })()`, sel)))
	}
	code, pane := rect(".cm-schema"), rect("#preview-pane")
	if desktop && (pane[0] < code[2] || pane[1] > float64(h)/2) {
		t.Fatalf("the preview pane %v is not beside the schema %v", pane, code)
	}
	if !desktop && pane[1] < code[3] {
		t.Fatalf("on a phone the preview %v should follow the schema %v", pane, code)
	}
	if desktop {
		b.do("scroll", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 900)`))
		if p := rect("#preview-pane"); p[1] < 0 || p[1] > 40 {
			t.Fatalf("after scrolling, the preview pane is at %v", p)
		}
		b.do("scroll back", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	}
	if width := get(b, "page width", chromedp.Evaluate[[]int](`[document.scrollingElement.scrollWidth, window.innerWidth]`)); width[0] > width[1] {
		t.Fatalf("the editor is %d px wide on a %d px screen", width[0], width[1])
	}

	// Typing in the code editor: the pane renders the unsaved text, and
	// nothing is saved for it.
	mark := b.netMark()
	b.do("type a new heading", selectText("schema", `"content": "Invoice {{`, "Invoice"), chromedp.KeyEvent("Statement"))
	preview := b.waitRequest("the preview of the typed text", mark, "POST", "/preview", func(r netRequest) bool {
		return r.Status == 200 && strings.Contains(string(r.Body), "Statement {{ invoiceNumber }}") && len(r.Response) > 0
	})
	if txt := pdfText(t, preview.Response); !strings.Contains(txt, "Statement INV-2026-0042") {
		t.Fatalf("the preview does not show the typed heading:\n%s", txt)
	}
	b.waitJS("the unsaved badge", `!document.querySelector("#unsaved-badge").hidden`)
	if stored := s.must(200, "GET", "/api/templates/"+tplID, token, nil); strings.Contains(string(stored.raw), "Statement") {
		t.Fatal("typing saved the template")
	}

	// A problem is marked at its line: an unknown component type.
	b.do("an unknown component", selectText("schema", `"Statement {{`, `heading`), chromedp.KeyEvent(`sparkline`))
	b.waitJS("the problem listed", `document.querySelector("#schema-status").textContent.includes("unknown component type")`)
	want := get(b, "the line of the problem", chromedp.Evaluate[int](cmJS("schema", `const v = cm.getValue(); return cm.posFromIndex(v.indexOf('sparkline')).line;`)))
	b.waitJS("the mark", cmJS("schema", `return cm.getAllMarks().some((m) => (m.className || "").includes("CodeMirror-lint-mark-error"));`))
	if got := lintLines(b, "schema", "error"); len(got) != 1 || got[0] != want {
		t.Fatalf("marked lines %v, want the line of the type, %d", got, want)
	}
	if n := get(b, "gutter markers", chromedp.Evaluate[int](`document.querySelectorAll(".cm-schema .CodeMirror-lint-marker-error").length`)); n != 1 {
		t.Fatalf("%d gutter markers, want 1", n)
	}
	b.do("undo", chromedp.KeyEvent("z", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	b.waitJS("the schema valid again", `document.querySelector("#schema-status .ok")`)
	b.waitJS("no marks", cmJS("schema", `return !cm.getAllMarks().some((m) => (m.className || "").includes("CodeMirror-lint-mark"));`))
	// A name nothing declares is a warning, as Save and a dry run answer
	// it: listed with its path, marked at its line, and the schema stays
	// valid (the preview renders).
	b.do("a typo in a name", selectText("schema", `"Statement {{`, "invoiceNumber"), chromedp.KeyEvent("invoiceNumbr"))
	b.waitJS("the warning listed", `document.querySelector("#schema-status .ok") &&
		Array.from(document.querySelectorAll("#schema-status ul.warning li"), (li) => li.textContent).some((t) =>
			t.startsWith("schema.sections[") && t.includes('"invoiceNumbr" is not a declared variable') && t.includes("did you mean invoiceNumber?"))`)
	want = get(b, "the line of the typo", chromedp.Evaluate[int](cmJS("schema", `const v = cm.getValue(); return cm.posFromIndex(v.indexOf('invoiceNumbr')).line;`)))
	b.waitJS("the warning mark", cmJS("schema", `return cm.getAllMarks().some((m) => (m.className || "").includes("CodeMirror-lint-mark-warning"));`))
	if got := lintLines(b, "schema", "warning"); len(got) != 1 || got[0] != want {
		t.Fatalf("warnings marked at lines %v, want the line of the typo, %d", got, want)
	}
	if got := lintLines(b, "schema", "error"); len(got) != 0 {
		t.Fatalf("a warning marked as an error at lines %v", got)
	}
	b.do("undo", chromedp.KeyEvent("z", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	b.waitJS("no warnings", `document.querySelector("#schema-status .ok") && !document.querySelector("#schema-status ul.warning")`)
	b.waitJS("no marks", cmJS("schema", `return !cm.getAllMarks().some((m) => (m.className || "").includes("CodeMirror-lint-mark"));`))
	// Declarations the server cannot read (constants that are a list) are
	// the variables' problem alone: the schema is still checked.
	consts := get(b, "the constants", chromedp.Evaluate[string](`document.querySelector("#constants").value`))
	// (both checks answer 400: the browser logs the failed loads)
	con.expect(s.URL() + "/app/templates/validate-schema")
	con.expect(s.URL() + "/app/templates/validate-variables")
	b.do("unreadable constants", typeInto("#constants", `[1]`))
	b.waitJS("the variables' problem", `document.querySelector("#variables-status .bad") && document.querySelector("#schema-status .ok")`)
	b.do("the constants back", typeInto("#constants", consts))
	b.waitJS("the variables valid again", `document.querySelector("#variables-status .ok") && document.querySelector("#schema-status .ok")`)
	// Text that is not JSON is marked where it breaks.
	b.do("break the JSON", chromedp.Evaluate[chromedp.Void](cmJS("schema", `cm.setCursor(cm.posFromIndex(cm.getValue().indexOf('"sections"'))); cm.focus();`)), chromedp.KeyEvent("x"))
	b.waitJS("the JSON error", `(document.querySelector("#schema-status .bad") || {}).textContent?.includes("not valid JSON")`)
	wantLine := get(b, "the broken line", chromedp.Evaluate[int](cmJS("schema", `return cm.getCursor().line;`)))
	b.waitJS("the JSON mark", cmJS("schema", `return cm.getAllMarks().some((m) => (m.className || "").includes("CodeMirror-lint-mark-error"));`))
	if got := lintLines(b, "schema", "error"); len(got) != 1 || got[0] != wantLine {
		t.Fatalf("JSON error marked at %v, want line %d", got, wantLine)
	}
	b.do("undo", chromedp.KeyEvent("z", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	b.waitJS("the schema valid again", `document.querySelector("#schema-status .ok")`)

	// A sample value typed in the form reaches the preview; Save stores the
	// text and the values.
	mark = b.netMark()
	b.do("a sample value", chromedp.Evaluate[chromedp.Void](`document.querySelector('[name="var.notes"]').value = ""`), chromedp.SendKeys(chromedp.CSS(`[name="var.notes"]`), "Paid with thanks."))
	b.waitRequest("the preview with the new value", mark, "POST", "/preview", func(r netRequest) bool {
		return r.Status == 200 && strings.Contains(string(r.Body), "Paid with thanks.")
	})
	b.submit("#save")
	b.flashSays("Saved.")
	stored := s.must(200, "GET", "/api/templates/"+tplID, token, nil)
	if !strings.Contains(string(stored.raw), "Statement {{ invoiceNumber }}") || stored.str("sampleData.notes") != "Paid with thanks." ||
		stored.str("sampleData.invoiceNumber") != "INV-2026-0042" {
		t.Fatalf("saved template: %s", stored.raw)
	}
	b.waitJS("the editor after saving", `document.querySelector("#preview-status .ok") && document.querySelector("#unsaved-badge").hidden`)

	// The XLSX preview is a table in the page.
	b.do("XLSX", chromedp.SetValue(chromedp.CSS("#format"), "xlsx"), chromedp.Evaluate[chromedp.Void](`document.querySelector("#format").dispatchEvent(new Event("change"))`))
	b.waitJS("the sheet as a table", `document.querySelector("#xlsx-table") && !document.querySelector("#preview-table").hidden &&
		document.querySelector("#xlsx-table").textContent.includes("Statement INV-2026-0042")`)
	if width := get(b, "page width", chromedp.Evaluate[[]int](`[document.scrollingElement.scrollWidth, window.innerWidth]`)); width[0] > width[1] {
		t.Fatalf("with the XLSX table the editor is %d px wide on a %d px screen", width[0], width[1])
	}
	b.do("PDF", chromedp.SetValue(chromedp.CSS("#format"), "pdf"), chromedp.Evaluate[chromedp.Void](`document.querySelector("#format").dispatchEvent(new Event("change"))`))
	b.waitJS("the PDF again", `!document.querySelector("#preview-frame").hidden && document.querySelector("#preview-table").hidden && document.querySelector("#preview-status .ok")`)

	// Publish.
	b.do("release notes", chromedp.SendKeys(chromedp.CSS(`#publish-form textarea`), "First release"))
	b.submit("#publish")
	b.flashSays("Published version 1")

	// An API key, and a document generated with curl.
	b.open("/app/keys")
	b.do("name the key", chromedp.SendKeys(chromedp.ID("key-name"), "billing"))
	b.submit("#create-key")
	key := get(b, "the new key", chromedp.Value(chromedp.ID("plain-key")))
	gen := curlJSON(t, s, key, "/api/v1/documents/generate", `{"templateId":"invoice","format":"pdf","variables":{"invoiceNumber":"INV-7","issueDate":"2026-11-02","dueDate":"2026-12-02",
		"customer":{"name":"Curl GmbH","street":"Weg 1","postalCode":"10115","city":"Berlin","country":"Germany"},"items":[{"description":"Setup","quantity":1,"unitPrice":100}]}}`)
	jobID, _ := gen["jobId"].(string)
	if gen["status"] != "completed" || jobID == "" {
		t.Fatalf("generate with curl: %v", gen)
	}

	// The job in the dashboard, and its download.
	b.open("/app/jobs")
	b.waitJS("the completed job", fmt.Sprintf(`document.querySelector('tr[data-job=%q][data-status="completed"] a.download')`, jobID))
	href := get(b, "download link", chromedp.AttributeValue(chromedp.CSS(fmt.Sprintf(`tr[data-job=%q] a.download`, jobID)), "href")).Value
	status, _, pdf := s.download(href)
	if status != 200 || !strings.Contains(pdfText(t, pdf), "Statement INV-7") {
		t.Fatalf("download %s: %d", href, status)
	}
	b.open("/app/jobs/" + jobID)
	if got := get(b, "job download", chromedp.AttributeValue(chromedp.ID("download"), "href")).Value; got != href {
		t.Fatalf("the job's page links %q, the list %q", got, href)
	}

	// A webhook to a local receiver: its test event arrives.
	b.open("/app/webhooks")
	b.do("the webhook URL", chromedp.SendKeys(chromedp.CSS(`#webhook-form input[name=url]`), rcv.url))
	b.submit(`#webhook-form button[type=submit]`)
	if secret := get(b, "the secret", chromedp.Value(chromedp.ID("webhook-secret"))); !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("webhook secret %q", secret)
	}
	b.open(get(b, "the subscription", chromedp.AttributeValue(chromedp.CSS(`#webhooks a`), "href")).Value)
	b.submit(`form[action$="/test"] button`)
	b.flashSays("")
	if got := rcv.waitFor(1, 20*time.Second); len(got) == 0 || !strings.Contains(string(got[0].body), "test") {
		t.Fatalf("the receiver got %d requests", len(got))
	}

	// A team, and an invitation: the invitee follows the mail, signs up,
	// verifies and lands back on the invitation, then joins.
	b.open("/app/team")
	b.do("create a team", chromedp.SendKeys(chromedp.CSS(`form[action="/app/teams"] input[name=name]`), "Acme Docs"))
	b.submit(`form[action="/app/teams"] button`)
	invitee := fmt.Sprintf("ben-%d@example.com", userSeq.Add(1))
	b.do("invite", chromedp.SendKeys(chromedp.CSS(`#invite-form input[name=email]`), invitee))
	b.submit(`#invite-form button[type=submit]`)
	b.flashSays("Invitation sent to " + invitee + ".")
	b.logout()
	invLink := regexp.MustCompile(`https://\S+/invitations/inv_[A-Za-z0-9]+/accept`).FindString(strings.Join(s.mails(invitee), "\n"))
	il, _ := url.Parse(invLink)
	b.open(il.RequestURI())
	b.waitJS("the login", `location.pathname === "/app/login"`)
	b.submit(`a[href^="/app/signup"]`)
	b.do("sign up as the invitee", chromedp.SendKeys(chromedp.ID("name"), "Ben"), chromedp.SendKeys(chromedp.ID("email"), invitee),
		chromedp.SendKeys(chromedp.ID("password"), "correct horse"))
	b.submit("#signup-submit")
	b.waitJS("the invitation, to verify first", `location.pathname.startsWith("/invitations/") && document.querySelector("#verify-first")`)
	vl := regexp.MustCompile(`https://\S+/verify-email\?token=\S+`).FindString(strings.Join(s.mails(invitee), "\n"))
	v, _ := url.Parse(vl)
	b.open(v.RequestURI())
	b.waitJS("back on the invitation", `location.pathname === `+fmt.Sprintf("%q", il.Path)+` && document.querySelector("#flash")`)
	b.submit(`form[action$="/accept"] button`)
	b.chipSays("Acme Docs")
	b.logout()
	b.login(email, "correct horse")

	// Two-factor, with a wrong code first: the QR code stays the same.
	b.open("/app/account")
	b.submit("#enable-2fa")
	b.waitJS("the QR code", `document.querySelector("#qr") && document.querySelector("#qr").naturalWidth > 0`)
	secret := b.text("#totp-secret")
	b.do("a wrong code", chromedp.SendKeys(chromedp.ID("totp-code"), "000000"))
	b.submit(`#verify-2fa button`)
	b.waitJS("the error", `document.querySelector("#flash") && document.querySelector("#flash").textContent.includes("ERR_AUTH_012")`)
	if got := b.text("#totp-secret"); got != secret {
		t.Fatalf("after a wrong code the secret is %s, want %s", got, secret)
	}
	b.open("/app/templates")
	b.open("/app/account")
	if got := b.text("#totp-secret"); got != secret {
		t.Fatalf("after leaving the page the secret is %s, want %s", got, secret)
	}
	b.do("the right code", chromedp.SendKeys(chromedp.ID("totp-code"), totpCode(t, secret, time.Now())))
	b.submit(`#verify-2fa button`)
	b.waitJS("the backup codes", `document.querySelector("#backup-codes") && document.querySelector("#download-codes")`)
	b.do("copy the codes", chromedp.Click(chromedp.ID("copy-codes")))
	b.waitJS("copied", `document.querySelector("#copy-codes").textContent === "Copied"`)

	con.check(t, "during the first hour")
	b.checkClean()
}

// curlJSON posts a JSON body with curl (as the README's quick start does),
// trusting the test server's certificate, and decodes the answer.
func curlJSON(t *testing.T, s *testServer, key, path, body string) map[string]any {
	t.Helper()
	curl, err := exec.LookPath("curl")
	if err != nil {
		r := s.must(200, "POST", path, key, body)
		return r.body
	}
	out, err := exec.Command(curl, "-sS", "--fail-with-body", "--cacert", filepath.Join(s.Config.Data, "tls", "cert.pem"),
		"-H", "Authorization: Bearer "+key, "-H", "Content-Type: application/json", "-d", body, s.URL()+path).Output()
	if err != nil {
		t.Fatalf("curl %s: %v\n%s", path, err, out)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("curl %s: %v\n%s", path, err, out)
	}
	return m
}
