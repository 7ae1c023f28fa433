package main

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestCountsReadAsEnglish: a count of one takes the singular, in the
// dashboard and in the API's messages ("1 API keys" and "1 members" were
// what the free plan showed).
func TestCountsReadAsEnglish(t *testing.T) {
	s := startServer(t, func(c *Config) { c.DefaultPlan = "free" })
	u := s.signup("Counter")
	s.createKey(u.token, nil)
	r := s.do("POST", "/api/api-keys", u.token, map[string]any{"name": "second"})
	s.wantError(r, 400, "ERR_PLAN_002")
	if msg := r.str("message"); msg != "the free plan allows 1 API key; delete one or change plan" {
		t.Errorf("plan limit message %q", msg)
	}

	c := dashClient(t, s)
	c.login(u)
	usage := c.page("/app/usage")
	for _, want := range []string{"2 templates", "1 API key<", "1 member ·", "50 documents a month", "batches of 10 documents"} {
		if !strings.Contains(usage, want) {
			t.Errorf("usage page lacks %q", want)
		}
	}
	for _, page := range []string{"/app/usage", "/app/", "/app/team", "/app/account"} {
		html := c.page(page)
		for _, wrong := range []string{"1 API keys", "1 members", "1 templates", "1 credits", "1 documents", "1 backup codes", " 1 webhook deliveries"} {
			if strings.Contains(html, wrong) {
				t.Errorf("%s says %q", page, wrong)
			}
		}
	}
}

// TestTeamChipKeepsKindAndRole: with a long team name, on a laptop and on
// a phone, the header's team chip cuts the name, never "(personal)" or the
// role, and its title holds the whole of it.
func TestTeamChipKeepsKindAndRole(t *testing.T) {
	chromiumPath(t)
	s := startServer(t)
	name := "Maximiliane Konstantinopoulou-Wittelsbach von Hohenzollern"
	email := "chip@example.com"
	s.must(200, "POST", "/api/auth/signup", "", map[string]any{"email": email, "password": "correct horse", "name": name})
	b := newBrowser(t, s)
	b.login(email, "correct horse")
	for _, width := range []int64{1280, 390} {
		b.do("viewport", chromedp.EmulateViewport(width, 844))
		b.open("/app/")
		// For each part: its box, and whether its text fits in it.
		parts := get(b, "the chip's parts", chromedp.Evaluate[map[string][]float64](`(() => {
			const chip = document.querySelector(".team-chip").getBoundingClientRect();
			const out = {chip: [chip.left, chip.right]};
			for (const sel of [".team-name", ".team-kind", ".team-role"]) {
				const el = document.querySelector(".team-chip " + sel);
				if (!el) continue;
				const r = el.getBoundingClientRect();
				out[sel] = [r.left, r.right, el.scrollWidth - el.clientWidth];
			}
			return out;
		})()`))
		chip := parts["chip"]
		for _, sel := range []string{".team-kind", ".team-role"} {
			p, ok := parts[sel]
			if !ok {
				t.Fatalf("%d px: the chip has no %s: %v", width, sel, parts)
			}
			if p[0] < chip[0]-0.5 || p[1] > chip[1]+0.5 || p[2] > 0 || p[1]-p[0] < 10 {
				t.Errorf("%d px: %s is cut or outside the chip: %v in %v", width, sel, p, chip)
			}
		}
		if got := b.text(".team-chip .team-role"); !strings.Contains(got, "owner") {
			t.Errorf("%d px: role %q", width, got)
		}
		title := get(b, "the chip's title", chromedp.AttributeValue(chromedp.CSS(".team-chip"), "title")).Value
		if !strings.Contains(title, name) || !strings.Contains(title, "(personal)") || !strings.Contains(title, "owner") {
			t.Errorf("%d px: title %q", width, title)
		}
	}
}

// TestMessagesStartAsSentences: the dashboard shows an API message as a
// sentence, with initialisms in capitals: "URL must use https", never
// "Url must use https".
func TestMessagesStartAsSentences(t *testing.T) {
	s := startServer(t)
	u := s.verifiedUser("Hooker")
	c := dashClient(t, s)
	c.login(u)
	res := c.post("/app/webhooks", url.Values{"csrf": {c.csrf()}, "url": {"http://example.com/hook"}, "events": {"document.generated"}})
	body := readBody(res)
	if !strings.Contains(body, "URL must use https") || strings.Contains(body, "Url ") {
		t.Errorf("the refusal should read \"URL must use https\":\n%s", body)
	}
}

// TestKeyPermissionsInWords: the key list and a key's page say what the key
// may do, with the spec's codes only in the title (a tooltip).
func TestKeyPermissionsInWords(t *testing.T) {
	s := startServer(t)
	u := s.signup("Keyholder")
	s.createKey(u.token, map[string]bool{"send_emails": true, "read_analytics": false, "manage_templates": true})
	c := dashClient(t, s)
	c.login(u)
	list := c.page("/app/keys")
	for _, want := range []string{
		`<li title="templates:read, attachments:read, emails:read">Read templates and jobs, download documents</li>`,
		`<li title="attachments:write, emails:write, webhooks:write">Generate documents and manage webhooks</li>`,
		`<li title="templates:write">Create, change and delete templates</li>`,
	} {
		if !strings.Contains(list, want) {
			t.Errorf("the key list lacks %s", want)
		}
	}
	if strings.Contains(list, "Read analytics</li>") {
		t.Error("the key list says the key reads analytics")
	}
	// Codes appear only inside attributes, never as the text people read.
	text := regexp.MustCompile(`<[^>]*>`).ReplaceAllString(list, " ")
	for _, code := range []string{"emails:write", "attachments:read", "templates:write"} {
		if strings.Contains(text, code) {
			t.Errorf("the key list shows %q as text", code)
		}
	}
	id := regexp.MustCompile(`href="/app/keys/(key_[A-Za-z0-9]+)"`).FindStringSubmatch(list)
	if id == nil {
		t.Fatal("no link to the key")
	}
	detail := c.page("/app/keys/" + id[1])
	if !strings.Contains(detail, `id="key-allows"`) || !strings.Contains(detail, ">Generate documents and manage webhooks</li>") {
		t.Errorf("the key's page does not say what it may do")
	}
}

// TestJobDetailTellsWhatHappened: a job's page gives the document's size
// and pages, how long rendering took, the API key that asked for it and
// the values it was asked with.
func TestJobDetailTellsWhatHappened(t *testing.T) {
	s := startServer(t)
	u := s.signup("Watcher")
	key := s.must(200, "POST", "/api/api-keys", u.token, map[string]any{"name": "Billing backend"}).str("plainKey")
	s.createTemplate(u.token, "Invoice", invoiceTemplate)
	g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": "invoice", "format": "pdf",
		"variables": map[string]any{"number": "2026-77", "customer": "Globex <Corp>"}})
	c := dashClient(t, s)
	c.login(u)
	page := c.page("/app/jobs/" + g.str("jobId"))
	for what, re := range map[string]string{
		"size and pages": `id="job-size">[0-9.]+ KB · 1 page</dd>`,
		"duration":       `id="job-duration">[0-9.]+ (ms|s)</dd>`,
		"API key":        `id="job-key">API key <a href="/app/keys/key_[A-Za-z0-9]+">Billing backend</a></dd>`,
		"variables":      `(?s)id="job-variables">.*&#34;customer&#34;: &#34;Globex &lt;Corp&gt;&#34;`,
	} {
		if !regexp.MustCompile(re).MatchString(page) {
			t.Errorf("the job page lacks its %s (%s)\n%s", what, re, page)
		}
	}
}

// TestLoginReturnsToTheLastTeam: a login, with the two-factor step or
// without, starts in the team the user last worked in on this browser;
// a team cookie naming a team the user is not in grants nothing.
func TestLoginReturnsToTheLastTeam(t *testing.T) {
	s := startServer(t)
	chip := regexp.MustCompile(`<span class="team-name">([^<]*)</span>`)
	current := func(c *dashHTTP) string {
		t.Helper()
		m := chip.FindStringSubmatch(c.page("/app/"))
		if m == nil {
			t.Fatal("no team chip")
		}
		return html.UnescapeString(m[1])
	}
	for _, twoFactor := range []bool{true, false} {
		u := s.signup("Returner")
		team := s.must(200, "POST", "/api/teams", u.token, map[string]any{"name": fmt.Sprintf("Acme %v", twoFactor)}).str("id")
		var secret string
		if twoFactor {
			secret = s.must(200, "POST", "/api/users/me/2fa/enable", u.token, nil).str("secret")
			s.must(200, "POST", "/api/users/me/2fa/verify", u.token, map[string]string{"code": totpCode(t, secret, time.Now().Add(-30*time.Second))})
		}
		c := dashClient(t, s)
		login := func(at time.Time) {
			t.Helper()
			res := c.post("/app/login", url.Values{"csrf": {c.token("/app/login")}, "email": {u.email}, "password": {u.password}})
			if twoFactor {
				if body := readBody(res); !strings.Contains(body, `action="/app/login/2fa"`) {
					t.Fatalf("no two-factor step: %d\n%s", res.StatusCode, body)
				}
				res = c.post("/app/login/2fa", url.Values{"csrf": {c.csrf()}, "code": {totpCode(t, secret, at)}})
			}
			if res.StatusCode != http.StatusSeeOther {
				t.Fatalf("login: %d %s", res.StatusCode, readBody(res))
			}
		}
		login(time.Now())
		if got := current(c); got != "Returner's team" {
			t.Fatalf("first login starts in %q, want the personal team", got)
		}
		if res := c.post("/app/team/switch", url.Values{"csrf": {c.csrf()}, "team": {team}}); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("switch: %d", res.StatusCode)
		}
		if got := current(c); got != fmt.Sprintf("Acme %v", twoFactor) {
			t.Fatalf("after the switch: %q", got)
		}
		c.post("/app/logout", url.Values{"csrf": {c.csrf()}})
		login(time.Now().Add(30 * time.Second)) // a code is accepted once: the next one
		if got := current(c); got != fmt.Sprintf("Acme %v", twoFactor) {
			t.Errorf("two-factor %v: the login starts in %q, want the last team", twoFactor, got)
		}

		// Someone else logging in on this browser, with the cookie edited to
		// name a team they are not in, starts in their personal team.
		other := s.signup("Stranger")
		d := dashClient(t, s)
		d.setCookie("__Host-folio_team", url.Values{other.id: {team}}.Encode())
		d.login(other)
		if got := current(d); got != "Stranger's team" {
			t.Errorf("a stranger's login starts in %q", got)
		}
	}
}
