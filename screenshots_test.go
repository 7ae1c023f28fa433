package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The README's pictures of the dashboard (docs/screenshots/*.png) come from
// TestScreenshots, and only from it:
//
//	go test -run TestScreenshots -screenshots .
var screenshots = flag.Bool("screenshots", false, "TestScreenshots: rewrite the README's pictures in docs/screenshots")

// TestScreenshots takes the README's pictures of the dashboard at a
// laptop's size (1280×800) and a phone's (390×844), of a team with a
// week of use: a template from each example, published; API keys; members
// and an invitation; a webhook that received every event; jobs over the
// last six days, one of them failed. The clock of the server is set back
// for the week's history and then runs to now. It checks what it shows
// (each page loads, the editor renders its preview, no console errors),
// and runs only with -screenshots: it is how the pictures are made, not a
// test of its own.
func TestScreenshots(t *testing.T) {
	if !*screenshots {
		t.Skip("writes docs/screenshots; run with -screenshots")
	}
	chromiumPath(t)
	var offset atomic.Int64 // how far the server's clock is behind
	// setClock sets the server's clock to at, from where it runs on; a time
	// later than a few minutes ago is moved back to then.
	started := time.Now()
	today := started.UTC().Truncate(24 * time.Hour)
	late := started.Add(-30 * time.Minute)
	setClock := func(at time.Time) time.Time {
		if at.After(late) {
			at, late = late, late.Add(3*time.Minute)
		}
		offset.Store(int64(time.Since(at)))
		return at
	}
	rcv := startReceiver(t, false)
	s := startMain(t, &Main{Now: func() time.Time { return time.Now().Add(-time.Duration(offset.Load())) }}, func(c *Config) {
		c.DefaultPlan = "unlimited" // what a self-hosted server gives
		c.WebhookAllowPrivate = true
		c.WebhookCA = rcv.caFile
	})
	b := newBrowser(t, s)
	con := watchConsole(b)
	b.do("laptop", chromedp.EmulateViewport(1280, 800))

	// Six days ago: Ada signs up, creates her team and its templates.
	setClock(today.AddDate(0, 0, -6).Add(8 * time.Hour))
	const email, password = "ada@northwind.example", "correct horse battery"
	b.open("/app/signup")
	b.do("fill signup", chromedp.SendKeys(chromedp.ID("name"), "Ada Lovelace"), chromedp.SendKeys(chromedp.ID("email"), email),
		chromedp.SendKeys(chromedp.ID("password"), password))
	b.viewShot("signup")
	b.submit("#signup-submit")
	b.waitJS("the templates page after signup", `location.pathname === "/app/templates" && document.querySelector("#flash")`)
	b.viewShot("templates-empty")
	verify := regexp.MustCompile(`https://\S+/verify-email\?token=\S+`).FindString(strings.Join(s.mails(email), "\n"))
	link, _ := url.Parse(verify)
	b.open(link.RequestURI())
	b.waitJS("verified", `document.querySelector("#verified")`)

	b.open("/app/team")
	b.do("name the team", chromedp.SendKeys(chromedp.CSS(`form[action="/app/teams"] input[name=name]`), "Northwind Trading"))
	b.submit(`form[action="/app/teams"] button`)
	b.chipSays("Northwind Trading")
	ids := map[string]string{}
	for _, ex := range []struct{ id, name string }{{"blank", "Order confirmation"}, {"monthly-report", "Monthly sales report"}, {"invoice", "Invoice"}} {
		b.open("/app/templates/new")
		b.do("pick "+ex.id, chromedp.Click(chromedp.CSS(`input[name=example][value="`+ex.id+`"]`)),
			chromedp.SendKeys(chromedp.ID("template-name"), ex.name))
		if ex.id == "invoice" {
			b.viewShot("template-new")
		}
		b.submit("#create-template")
		b.waitJS("the editor of "+ex.name, `document.querySelector(".cm-schema") && document.querySelector("#preview-status .ok")`)
		ids[ex.id] = regexp.MustCompile(`tpl_[A-Za-z0-9]+`).FindString(b.location())
	}

	// Through the API: publish, keys, members, an invitation, a webhook.
	token := s.must(200, "POST", "/api/auth/login", "", map[string]any{"email": email, "password": password}).str("accessToken")
	var team string
	for _, tm := range dataList(t, s.must(200, "GET", "/api/teams", token, nil)) {
		if tm["name"] == "Northwind Trading" {
			team, _ = tm["id"].(string)
		}
	}
	as := func(want int, method, path string, body any) resp {
		t.Helper()
		return s.must(want, method, path, token, body, "X-Team-Id", team)
	}
	for _, id := range ids {
		as(200, "POST", "/api/templates/"+id+"/publish", map[string]any{"releaseNotes": "First version, from the example"})
	}
	billing := as(200, "POST", "/api/api-keys", map[string]any{"name": "billing-service"}).str("plainKey")
	reports := as(200, "POST", "/api/api-keys", map[string]any{"name": "reporting-cron"}).str("plainKey")
	for _, m := range []struct{ name, email, role string }{{"Ben Okafor", "ben@northwind.example", "member"}, {"Chloé Dubois", "chloe@northwind.example", "viewer"}} {
		u := s.must(200, "POST", "/api/auth/signup", "", map[string]any{"email": m.email, "password": password, "name": m.name})
		mu := user{email: m.email, password: password, token: u.str("accessToken")}
		s.verify(mu)
		as(200, "POST", "/api/teams/members/invite", map[string]any{"email": m.email, "role": m.role})
		s.must(200, "POST", "/api/teams/invitations/"+s.lastInvitationID(m.email)+"/accept", mu.token, nil)
	}
	as(200, "POST", "/api/teams/members/invite", map[string]any{"email": "dmitri@northwind.example", "role": "member"})
	sub := as(200, "POST", "/api/v1/webhook-subscriptions", map[string]any{"url": rcv.url + "/folio", "description": "ERP: marks invoices as sent",
		"events": []string{"document.generated", "document.failed"}}).str("id")

	// A week of documents: invoices and letters from the billing service,
	// the monthly report from a scheduled job; one invoice fails (its
	// number does not fit the barcode).
	var invoiceVars, letterVars, reportVars map[string]any
	readJSON(t, filepath.Join("web", "dashboard", "examples", "invoice.vars.json"), &invoiceVars)
	readJSON(t, filepath.Join("web", "dashboard", "examples", "blank.vars.json"), &letterVars)
	readJSON(t, filepath.Join("web", "dashboard", "examples", "monthly-report.vars.json"), &reportVars)
	customers := []map[string]any{
		{"number": "C-1012", "name": "Analytical Engines B.V.", "street": "Keizersgracht 123", "postalCode": "1015 CJ", "city": "Amsterdam", "country": "Netherlands"},
		{"number": "C-1031", "name": "Hopper & Partners GmbH", "street": "Torstraße 49", "postalCode": "10119", "city": "Berlin", "country": "Germany"},
		{"number": "C-1007", "name": "Ωμέγα Trading Ltd.", "street": "Тверская ул. 1", "postalCode": "125009", "city": "Москва", "country": "Russia"},
		{"number": "C-1044", "name": "Babbage Instruments Ltd", "street": "12 Dorset Street", "postalCode": "W1U 6QS", "city": "London", "country": "United Kingdom"},
		{"number": "C-1050", "name": "Lamarr Wireless S.A.", "street": "Rue du Rhône 30", "postalCode": "1204", "city": "Genève", "country": "Switzerland"},
	}
	invoiceNo := 50
	invoice := func(c map[string]any, when time.Time, number string) map[string]any {
		v := clone(t, invoiceVars)
		if number == "" {
			invoiceNo++
			number = fmt.Sprintf("INV-2026-%04d", invoiceNo)
		}
		v["invoiceNumber"] = number
		v["issueDate"] = when.Format("2006-01-02")
		v["dueDate"] = when.AddDate(0, 0, 30).Format("2006-01-02")
		v["customer"] = c
		items := v["items"].([]any)
		v["items"] = items[:1+invoiceNo%len(items)]
		return v
	}
	generate := func(key, tpl, format string, vars map[string]any, filename string) resp {
		t.Helper()
		body := map[string]any{"templateId": tpl, "format": format, "variables": vars}
		if filename != "" {
			body["filename"] = filename
		}
		return s.do("POST", "/api/v1/documents/generate", key, body)
	}
	events := 0
	// delivered waits until every event so far is delivered and its
	// delivery recorded: the clock moves on only then.
	delivered := func() {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			done := 0
			for _, d := range s.must(200, "GET", "/api/v1/webhook-subscriptions/"+sub+"/deliveries", billing, nil).get("deliveries").([]any) {
				if d.(map[string]any)["status"] == "success" {
					done++
				}
			}
			if done == events {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d webhook deliveries succeeded", done, events)
			}
		}
	}
	var lastInvoice string
	for d := 6; d >= 0; d-- {
		morning := today.AddDate(0, 0, -d).Add(9 * time.Hour)
		n := []int{2, 2, 3, 0, 2, 2, 1}[6-d]
		for i := 0; i < n; i++ {
			when := setClock(morning.Add(time.Duration(i*2) * time.Hour))
			c := customers[(d+i)%len(customers)]
			v := invoice(c, when, "")
			r := generate(billing, ids["invoice"], "pdf", v, fmt.Sprintf("Invoice %s", v["invoiceNumber"]))
			if r.status != 200 || r.str("status") != "completed" {
				t.Fatalf("invoice: %d %s", r.status, r.raw)
			}
			lastInvoice = r.str("jobId")
			events++
			delivered()
		}
		switch d {
		case 5, 1: // an order confirmation
			when := setClock(morning.Add(7*time.Hour + 20*time.Minute))
			v := clone(t, letterVars)
			v["date"] = when.Format("2006-01-02")
			c := customers[d%len(customers)]
			v["recipient"] = map[string]any{"company": c["name"], "street": c["street"], "postalCode": c["postalCode"], "city": c["city"], "country": c["country"]}
			if r := generate(billing, ids["blank"], "pdf", v, ""); r.str("status") != "completed" {
				t.Fatalf("letter: %d %s", r.status, r.raw)
			}
			events++
			delivered()
		case 3: // the monthly report, as a workbook and a PDF
			setClock(morning.Add(-3 * time.Hour))
			for _, f := range []string{"xlsx", "pdf"} {
				if r := generate(reports, ids["monthly-report"], f, reportVars, "Sales report November 2026"); r.str("status") != "completed" {
					t.Fatalf("report %s: %d %s", f, r.status, r.raw)
				}
				events++
				delivered()
			}
		case 2: // a number the barcode cannot hold
			when := setClock(morning.Add(5*time.Hour + 40*time.Minute))
			r := generate(billing, ids["invoice"], "pdf", invoice(customers[4], when, "INV-2026-0063-Ä"), "")
			if r.status != 400 || r.str("relatedInfo.jobId") == "" {
				t.Fatalf("the failing invoice: %d %s", r.status, r.raw)
			}
			events++
			delivered()
		}
	}
	offset.Store(0)

	// Now: the pages, each as a person sees it.
	b.open("/app/")
	if strings.HasPrefix(b.location(), b.base+"/app/login") {
		b.login(email, password)
	}
	b.chipSays("Northwind Trading")
	b.open("/app/")
	b.viewShot("overview")

	// The editor: an unsaved change, the preview of it beside the text.
	b.open("/app/templates/" + ids["invoice"])
	b.waitJS("the editor", `document.querySelector(".cm-schema") && document.querySelector("#preview-status .ok")`)
	mark := b.netMark()
	b.do("edit the heading", selectText("schema", `"content": "Invoice {{`, "Invoice"), chromedp.KeyEvent("Tax invoice"))
	b.waitRequest("the preview of the edit", mark, "POST", "/preview", func(r netRequest) bool {
		return r.Status == 200 && strings.Contains(string(r.Body), "Tax invoice {{ invoiceNumber }}")
	})
	b.waitJS("the new preview shown", `document.querySelector("#preview-status .ok") && !document.querySelector("#unsaved-badge").hidden`)
	b.do("the edited line in view", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`),
		chromedp.Evaluate[chromedp.Void](cmJS("schema", `const l = cm.posFromIndex(cm.getValue().indexOf("Tax invoice")).line; cm.scrollTo(null, cm.heightAtLine(Math.max(0, l - 5), "local"));`)))
	time.Sleep(2 * time.Second) // the PDF viewer draws the page
	b.viewShot("template-editor")

	// A problem marked at its line.
	b.do("an unknown component", selectText("schema", `"Tax invoice {{`, "heading"), chromedp.KeyEvent("sparkline"))
	b.waitJS("the problem", `document.querySelector("#schema-status").textContent.includes("unknown component type") &&
		document.querySelector(".cm-schema .CodeMirror-lint-marker-error")`)
	b.do("show the line", scrollTo(".cm-schema", 120),
		chromedp.Evaluate[chromedp.Void](cmJS("schema", `const l = cm.posFromIndex(cm.getValue().indexOf("sparkline")).line; cm.scrollTo(null, cm.heightAtLine(Math.max(0, l - 8), "local"));`)))
	time.Sleep(300 * time.Millisecond)
	b.viewShot("template-editor-problem")
	b.do("undo", chromedp.KeyEvent("z", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	b.waitJS("valid again", `document.querySelector("#schema-status .ok")`)

	// The XLSX preview, as a table of the first sheet.
	b.do("XLSX", chromedp.SetValue(chromedp.CSS("#format"), "xlsx"), chromedp.Evaluate[chromedp.Void](`document.querySelector("#format").dispatchEvent(new Event("change"))`))
	b.waitJS("the sheet", `document.querySelector("#xlsx-table") && !document.querySelector("#preview-table").hidden && document.querySelector("#preview-status .ok")`)
	b.do("the edited line in view", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`),
		chromedp.Evaluate[chromedp.Void](cmJS("schema", `const at = cm.posFromIndex(cm.getValue().indexOf("Tax invoice")); cm.setCursor(at); cm.scrollTo(null, cm.heightAtLine(Math.max(0, at.line - 5), "local"));`)))
	b.viewShot("template-editor-xlsx")

	// An API key, shown once.
	b.open("/app/keys")
	b.do("name the key", chromedp.SendKeys(chromedp.ID("key-name"), "zapier"))
	b.submit("#create-key")
	b.waitJS("the key", `document.querySelector("#plain-key") && document.querySelector("#plain-key").value.startsWith("svc_sk_")`)
	b.viewShot("api-keys")

	b.open("/app/jobs")
	b.waitJS("the jobs", `document.querySelectorAll("tr[data-job]").length >= 10 && document.querySelector('tr[data-status="failed"]')`)
	b.viewShot("jobs")
	b.open("/app/jobs/" + lastInvoice)
	b.waitJS("the download", `document.querySelector("#download") && document.querySelector("#job-key").textContent.includes("billing-service")`)
	b.viewShot("job-detail")

	b.open("/app/webhooks")
	b.waitJS("the subscription", `document.querySelector("#webhooks a")`)
	b.open(get(b, "the subscription", chromedp.AttributeValue(chromedp.CSS(`#webhooks a`), "href")).Value)
	b.viewShot("webhooks")

	b.open("/app/team")
	b.waitJS("the members", `document.body.textContent.includes("Chloé Dubois") && document.body.textContent.includes("dmitri@northwind.example")`)
	b.viewShot("team")

	b.open("/app/usage")
	b.waitJS("the chart", `document.querySelectorAll("#chart rect.bar").length === 30`)
	b.viewShot("usage")

	b.open("/app/account")
	b.submit("#enable-2fa")
	b.waitJS("the QR code", `document.querySelector("#qr") && document.querySelector("#qr").naturalWidth > 0`)
	b.do("show the setup", scrollTo("#qr", 80))
	b.viewShot("account-2fa")

	// A phone.
	b.do("phone", chromedp.EmulateViewport(390, 844))
	b.open("/app/jobs")
	b.waitJS("the jobs", `document.querySelectorAll("tr[data-job]").length >= 10`)
	b.viewShot("phone-jobs")
	b.open("/app/templates/" + ids["invoice"])
	b.waitJS("the editor", `document.querySelector(".cm-schema") && document.querySelector("#preview-status .ok") && document.querySelector("#preview-frame").src.startsWith("blob:")`)
	b.do("the schema", scrollTo(".cm-schema", 90))
	b.viewShot("template-editor-phone")
	b.do("the preview", scrollTo("#preview-pane", 8))
	time.Sleep(2 * time.Second)
	b.viewShot("template-editor-phone-preview")

	b.do("laptop", chromedp.EmulateViewport(1280, 800))
	b.open("/app/")
	b.logout()
	b.open("/app/login")
	b.do("the email", chromedp.SendKeys(chromedp.ID("email"), email))
	b.viewShot("login")

	con.check(t, "while taking the screenshots")
}

// clone deep-copies decoded JSON.
func clone(t *testing.T, v map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// scrollTo scrolls the page until the element is margin pixels below the
// top of the screen.
func scrollTo(sel string, margin int) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`window.scrollTo(0, document.querySelector(%q).getBoundingClientRect().top + scrollY - %d)`, sel, margin))
}

// viewShot saves a screenshot of what the screen shows (not the whole page).
func (b *browser) viewShot(name string) {
	b.t.Helper()
	png := get(b, "screenshot "+name, chromedp.CaptureScreenshot())
	if err := os.MkdirAll(filepath.Join("docs", "screenshots"), 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("docs", "screenshots", name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}
