package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"folio/web/dashboard"
)

// The dashboard's forms and action routes over plain HTTP: every form that
// posts carries the CSRF token, every action refuses a request without it,
// long lists page, and the usage page shows the wallet's figures.

// postForm is a form on a page that posts: where to, and the CSRF token it carries.
type postForm struct {
	action string
	tokens []string // values of its hidden csrf inputs
}

// postForms parses a page and returns its forms with method="post", and
// the other actions of their buttons (formaction, inside the form or tied
// to it by form="id"), which post the same form with its token.
func postForms(t *testing.T, page string) []postForm {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var out []postForm
	var inForm func(n *html.Node, f *postForm)
	inForm = func(n *html.Node, f *postForm) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && c.Data == "input" && attr(c, "name") == "csrf" && attr(c, "type") == "hidden" {
				f.tokens = append(f.tokens, attr(c, "value"))
			}
			inForm(c, f)
		}
	}
	byID := map[string]*postForm{}
	type button struct {
		action, form string
		owner        *postForm
	}
	var buttons []button
	var walk func(n *html.Node, in *postForm)
	walk = func(n *html.Node, in *postForm) {
		if n.Type == html.ElementNode && n.Data == "form" {
			if strings.EqualFold(attr(n, "method"), "post") {
				f := &postForm{action: attr(n, "action")}
				inForm(n, f)
				if id := attr(n, "id"); id != "" {
					byID[id] = f
				}
				out = append(out, *f)
				in = f
			}
		}
		if n.Type == html.ElementNode && (n.Data == "button" || n.Data == "input") && attr(n, "formaction") != "" {
			buttons = append(buttons, button{action: attr(n, "formaction"), form: attr(n, "form"), owner: in})
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, in)
		}
	}
	walk(doc, nil)
	for _, b := range buttons {
		f := b.owner
		if b.form != "" {
			f = byID[b.form]
		}
		if f != nil {
			out = append(out, postForm{action: b.action, tokens: f.tokens})
		}
	}
	return out
}

func attr(n *html.Node, name string) string {
	for _, a := range n.Attr {
		if a.Key == name {
			return a.Val
		}
	}
	return ""
}

// elementText returns the text inside the element with the given id.
func elementText(t *testing.T, page, id string) string {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var found *html.Node
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if found != nil {
			return
		}
		if n.Type == html.ElementNode && attr(n, "id") == id {
			found = n
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if found == nil {
		t.Fatalf("no element #%s on the page", id)
	}
	var b strings.Builder
	var text func(n *html.Node)
	text = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			text(c)
		}
	}
	text(found)
	return strings.Join(strings.Fields(b.String()), " ")
}

// routePath turns a route pattern into a regular expression of its paths.
func routePath(pattern string) *regexp.Regexp {
	_, p, ok := strings.Cut(pattern, " ")
	if !ok {
		p = pattern
	}
	p = strings.TrimSuffix(p, "{$}")
	re := regexp.MustCompile(`\\\{[^}]+\\\}`).ReplaceAllString(regexp.QuoteMeta(p), `[^/]+`)
	return regexp.MustCompile("^" + re + "$")
}

// scriptOnly are the action routes only the editor's script calls (with the
// token in the X-CSRF-Token header); no form posts to them.
var scriptOnly = map[string]bool{
	"POST /app/templates/{id}/preview":       true,
	"POST /app/templates/validate-schema":    true,
	"POST /app/templates/validate-variables": true,
}

// TestDashboardFormsCarryCSRF visits every dashboard page, as the people
// who see its forms (an owner with a team, members and invitations, a
// member, an invitee, an unverified user, one with two-factor on), and
// checks that every form that posts carries this browser's CSRF token, and
// that every action route was seen in such a form.
func TestDashboardFormsCarryCSRF(t *testing.T) {
	s := startServer(t, func(c *Config) { c.WebhookAllowPrivate = true; c.WebhookRetrySchedule = "0s" })

	// Olga owns "Print Shop" with Bob as member and an invitation to Carol.
	olga := s.verifiedUser("Olga")
	team := s.newTeam(olga, "Print Shop")
	bob, carol := s.verifiedUser("Bob"), s.verifiedUser("Carol")
	s.join(olga, team, bob, "member")
	s.must(200, "POST", "/api/teams/members/invite", olga.token, map[string]any{"email": carol.email, "role": "viewer"}, "X-Team-Id", team)
	invitation := s.lastInvitationID(carol.email)
	// In her personal team: a published template, a failed job, an active
	// and a revoked key.
	tpl := s.createTemplate(olga.token, "Invoice", invoiceTemplate).str("id")
	s.must(200, "POST", "/api/templates/"+tpl+"/publish", olga.token, map[string]any{"releaseNotes": "first"})
	key := s.createKey(olga.token, nil)
	long := s.createTemplate(olga.token, "Long", longTemplate())
	failed := s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": long.str("id"), "format": "pdf", "variables": map[string]any{"body": longText}}).str("relatedInfo.jobId")
	if failed == "" {
		t.Fatal("no failed job")
	}
	asset := s.must(200, "POST", "/api/assets", olga.token, map[string]any{"name": "logo", "contentBase64": examplePNG}).str("id")
	revoked := s.must(200, "POST", "/api/api-keys", olga.token, map[string]any{"name": "old"}).str("id")
	s.must(200, "POST", "/api/api-keys/"+revoked+"/revoke", olga.token, nil)

	// seen checks the forms of one page and records where they post.
	var actions []string
	pages := 0
	seen := func(c *dashHTTP, who, path, page string) {
		t.Helper()
		pages++
		want := c.csrf()
		if want == "" {
			t.Fatalf("%s: no CSRF cookie", who)
		}
		for _, f := range postForms(t, page) {
			if len(f.tokens) != 1 || f.tokens[0] != want {
				t.Errorf("%s, %s: the form posting to %s carries CSRF %q, want this browser's token", who, path, f.action, f.tokens)
			}
			actions = append(actions, f.action)
		}
	}
	visit := func(c *dashHTTP, who, path string) {
		t.Helper()
		res, err := c.c.Get(s.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		body := readBody(res)
		if res.StatusCode == http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			return // a redirect, a script or a stylesheet
		}
		if res.StatusCode != 200 && res.StatusCode != 400 && res.StatusCode != 404 {
			t.Fatalf("%s, GET %s: %d\n%s", who, path, res.StatusCode, body)
		}
		seen(c, who, path, body)
	}

	anon := dashClient(t, s)
	anon.token("/app/login")
	o := dashClient(t, s)
	o.login(olga)
	// Pages answering a POST: a new key, a new webhook (whose test event
	// fails, leaving a delivery to retry), two-factor setup.
	for _, step := range []struct {
		path string
		form url.Values
	}{
		{"/app/keys", url.Values{"name": {"ci"}}},
		{"/app/webhooks", url.Values{"url": {"https://127.0.0.1:9/folio"}, "events": {"document.generated"}}},
		{"/app/account/2fa/enable", nil},
	} {
		if step.form == nil {
			step.form = url.Values{}
		}
		step.form.Set("csrf", o.csrf())
		res := o.post(step.path, step.form)
		if res.StatusCode != 200 {
			t.Fatalf("POST %s: %d", step.path, res.StatusCode)
		}
		seen(o, "Olga", "POST "+step.path, readBody(res))
	}
	keyID := regexp.MustCompile(`href="/app/keys/(key_[A-Za-z0-9]+)"`).FindStringSubmatch(o.page("/app/keys"))[1]
	sub := regexp.MustCompile(`href="/app/webhooks/(whk_[A-Za-z0-9]+)"`).FindStringSubmatch(o.page("/app/webhooks"))[1]
	o.flash(o.post("/app/webhooks/"+sub+"/test", url.Values{"csrf": {o.csrf()}}))

	// Every page, by route; a new page fails here until it is visited.
	olgaPages := map[string]string{
		"GET /app/static/{file...}":        "/app/static/app.css",
		"GET /{$}":                         "/",
		"/app/":                            "/app/nowhere",
		"GET /app/{$}":                     "/app/",
		"GET /app/templates":               "/app/templates",
		"GET /app/templates/new":           "/app/templates/new",
		"GET /app/templates/{id}":          "/app/templates/" + tpl,
		"GET /app/templates/{id}/versions": "/app/templates/" + tpl + "/versions",
		"GET /app/jobs":                    "/app/jobs",
		"GET /app/jobs/{id}":               "/app/jobs/" + failed,
		"GET /app/keys":                    "/app/keys",
		"GET /app/keys/{id}":               "/app/keys/" + keyID,
		"GET /app/webhooks":                "/app/webhooks",
		"GET /app/webhooks/{id}":           "/app/webhooks/" + sub,
		"GET /app/account":                 "/app/account",
		"GET /app/usage":                   "/app/usage",
		"GET /app/assets":                  "/app/assets",
		"GET /app/assets/{id}/content":     "/app/assets/" + asset + "/content",
		"GET /app/team":                    "", // below, in the team
		"GET /app/login":                   "", // signed out
		"GET /app/signup":                  "",
		"GET /verify-email":                "",
		"GET /invitations/{id}/accept":     "", // as the invitee
	}
	for _, p := range dashboard.Routes() {
		if strings.HasPrefix(p, "POST ") {
			continue
		}
		path, ok := olgaPages[p]
		if !ok {
			t.Errorf("no visit for the page %q: add it to this test", p)
		} else if path != "" {
			visit(o, "Olga", path)
		}
	}
	visit(anon, "signed out", "/app/login")
	visit(anon, "signed out", "/app/signup")
	visit(anon, "signed out", "/verify-email?token=nope")

	// The team, as its owner: members, invitations, rename, delete.
	o.flash(o.post("/app/team/switch", url.Values{"csrf": {o.csrf()}, "team": {team}}))
	visit(o, "Olga", "/app/team")
	// Bob's session starts in his personal team; in Print Shop he may leave.
	bc := dashClient(t, s)
	bc.login(bob)
	bc.flash(bc.post("/app/team/switch", url.Values{"csrf": {bc.csrf()}, "team": {team}}))
	visit(bc, "Bob", "/app/team")
	// Carol has an invitation: on the team page and at the mail's link.
	cc := dashClient(t, s)
	cc.login(carol)
	visit(cc, "Carol", "/app/team")
	visit(cc, "Carol", "/invitations/"+invitation+"/accept")
	// An unverified address gets the banner with "send the link again".
	ec := dashClient(t, s)
	ec.login(s.signup("Eve"))
	visit(ec, "Eve", "/app/")
	// Two-factor on: the code step of the login, then turning it off or new codes.
	dora := s.verifiedUser("Dora")
	secret := s.must(200, "POST", "/api/users/me/2fa/enable", dora.token, nil).str("secret")
	s.must(200, "POST", "/api/users/me/2fa/verify", dora.token, map[string]string{"code": totpCode(t, secret, time.Now().Add(-30*time.Second))})
	dc := dashClient(t, s)
	res := dc.post("/app/login", url.Values{"csrf": {dc.token("/app/login")}, "email": {dora.email}, "password": {dora.password}})
	if res.StatusCode != 200 {
		t.Fatalf("login with two-factor: %d", res.StatusCode)
	}
	seen(dc, "Dora", "POST /app/login", readBody(res))
	if res := dc.post("/app/login/2fa", url.Values{"csrf": {dc.csrf()}, "code": {totpCode(t, secret, time.Now())}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("code step: %d", res.StatusCode)
	}
	visit(dc, "Dora", "/app/account")

	// Every action has a form among those seen, except the script's.
	for _, p := range dashboard.Routes() {
		if !strings.HasPrefix(p, "POST ") || scriptOnly[p] {
			continue
		}
		re := routePath(p)
		found := false
		for _, a := range actions {
			if re.MatchString(a) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("no form posting to %q on any page visited", p)
		}
	}
	t.Logf("%d forms on %d pages", len(actions), pages)
}

// TestDashboardCSRFEveryRoute sends every dashboard route that is not a
// GET, signed in, without the CSRF token: a form post gets the 403 page;
// a script's request (JSON, or with a wrong X-CSRF-Token header) gets the
// JSON error ERR_CSRF_001. A route registered without the check fails here.
func TestDashboardCSRFEveryRoute(t *testing.T) {
	s := startServer(t)
	u := s.verifiedUser("Rita")
	c := dashClient(t, s)
	c.login(u)
	n := 0
	for _, p := range dashboard.Routes() {
		method, path, ok := strings.Cut(p, " ")
		if !ok {
			method, path = "POST", p+"nowhere" // a pattern without a method answers POST too
		}
		if method == "GET" {
			continue
		}
		path = regexp.MustCompile(`\{[^}]+\}`).ReplaceAllStringFunc(path, func(v string) string { return "x" + strings.Trim(v, "{}") })
		n++
		res := c.post(path, url.Values{"name": {"probe"}})
		if body := readBody(res); res.StatusCode != 403 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") ||
			!strings.Contains(body, "did not come from this dashboard") {
			t.Errorf("%s without a token: %d %s, want the 403 page", p, res.StatusCode, res.Header.Get("Content-Type"))
		}
		for _, headers := range [][]string{
			{"Content-Type", "application/json"},
			{"X-CSRF-Token", strings.Repeat("w", 43)},
		} {
			res := c.post(path, nil, headers...)
			var e struct{ Code string }
			body := readBody(res)
			if res.StatusCode != 403 || json.Unmarshal([]byte(body), &e) != nil || e.Code != "ERR_CSRF_001" {
				t.Errorf("%s from a script (%s): %d %s, want 403 ERR_CSRF_001", p, headers[0], res.StatusCode, body)
			}
		}
	}
	if n < 40 {
		t.Fatalf("only %d action routes", n)
	}
	// Nothing was done: still signed in (logout was refused too).
	if res := c.get("/app/account"); res.StatusCode != 200 {
		t.Fatalf("after the refused requests: %d", res.StatusCode)
	}
}

// TestDashboardLongLists pages the jobs list (25 a page, the status filter
// kept), the team's invitations, the invitations to me, and the team
// switcher (100 teams a page).
func TestDashboardLongLists(t *testing.T) {
	s := startServer(t)
	u := s.verifiedUser("Paula")
	c := dashClient(t, s)
	c.login(u)

	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Note", invoiceTemplate).str("id")
	var jobs []string
	for i := 0; i < 26; i++ {
		r := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl, "format": "pdf",
			"variables": map[string]any{"number": fmt.Sprint(i), "customer": "C"}})
		jobs = append(jobs, r.str("jobId"))
	}
	rows := regexp.MustCompile(`<tr data-job="(job_[A-Za-z0-9]+)"`)
	next := regexp.MustCompile(`<a href="([^"]+)" rel="next">`)
	page := c.page("/app/jobs?status=completed")
	if got := len(rows.FindAllString(page, -1)); got != 25 || !strings.Contains(page, "Page 1 of 2 · 26 in all") {
		t.Fatalf("jobs page 1: %d rows\n%s", got, page)
	}
	link := next.FindStringSubmatch(page)
	if link == nil {
		t.Fatal("no link to the next page of jobs")
	}
	href := html.UnescapeString(link[1])
	if q, _ := url.Parse(href); q.Query().Get("status") != "completed" || q.Query().Get("page") != "2" {
		t.Fatalf("next page link %q", href)
	}
	page = c.page(href)
	if got := rows.FindAllStringSubmatch(page, -1); len(got) != 1 || got[0][1] != jobs[0] {
		t.Fatalf("jobs page 2: %q, want the oldest job %s", got, jobs[0])
	}
	// The part the page's script refreshes itself with.
	res, err := c.c.Get(s.URL() + href + "&fragment=1")
	if err != nil {
		t.Fatal(err)
	}
	frag := readBody(res)
	if res.Header.Get("X-Folio-Fragment") != "jobtable" || strings.Contains(frag, "<html") || !strings.Contains(frag, jobs[0]) {
		t.Fatalf("fragment: %q\n%s", res.Header.Get("X-Folio-Fragment"), frag)
	}

	// 100 more teams; Max is invited to 21 of them; one has 21 invitations.
	var teams []string
	for i := 0; i < 100; i++ {
		teams = append(teams, s.newTeam(u, fmt.Sprintf("Team %03d", i)))
	}
	maxi := s.verifiedUser("Max")
	for i := 0; i < 21; i++ {
		s.must(200, "POST", "/api/teams/members/invite", u.token, map[string]any{"email": maxi.email}, "X-Team-Id", teams[i])
	}
	for i := 0; i < 20; i++ {
		s.must(200, "POST", "/api/teams/members/invite", u.token, map[string]any{"email": fmt.Sprintf("guest-%02d@example.com", i)}, "X-Team-Id", teams[0])
	}

	c.flash(c.post("/app/team/switch", url.Values{"csrf": {c.csrf()}, "team": {teams[0]}}))
	invRows := regexp.MustCompile(`<tr data-email="([^"]+)"`)
	page = c.page("/app/team")
	if got := len(invRows.FindAllString(page, -1)); got != 20 || !strings.Contains(page, `href="/app/team?invitations=2#invitations"`) {
		t.Fatalf("team invitations page 1: %d rows\n%s", got, page)
	}
	if page := c.page("/app/team?invitations=2"); len(invRows.FindAllString(page, -1)) != 1 || !strings.Contains(page, "Page 2 of 2 · 21 in all") {
		t.Fatalf("team invitations page 2:\n%s", page)
	}
	// The switcher: 101 teams, 100 a page; the current team is always in it.
	options := regexp.MustCompile(`<option value="(team_[A-Za-z0-9]+)" (selected)?`)
	if got := options.FindAllStringSubmatch(page, -1); len(got) != 100 || !strings.Contains(page, `href="/app/team?teams=2#switch-team"`) {
		t.Fatalf("switcher page 1: %d teams", len(got))
	}
	page = c.page("/app/team?teams=2")
	got := options.FindAllStringSubmatch(page, -1)
	if len(got) != 2 || got[0][1] != teams[0] || got[0][2] != "selected" || !strings.Contains(page, "Page 2 of 2 · 101 in all") {
		t.Fatalf("switcher page 2: %q", got)
	}

	mc := dashClient(t, s)
	mc.login(maxi)
	mine := regexp.MustCompile(`<li class="row" data-invitation="inv_`)
	page = mc.page("/app/team")
	if got := len(mine.FindAllString(page, -1)); got != 20 || !strings.Contains(page, `href="/app/team?mine=2#my-invitations"`) {
		t.Fatalf("my invitations page 1: %d", got)
	}
	if page := mc.page("/app/team?mine=2"); len(mine.FindAllString(page, -1)) != 1 {
		t.Fatal("my invitations page 2 does not have the 21st")
	}
}

// TestDashboardUsage checks the usage page's figures against what was set
// and used: the plan and its limits, the quota used and left, the credits.
func TestDashboardUsage(t *testing.T) {
	s := startServer(t, func(c *Config) { c.DefaultPlan = "starter" })
	u := s.verifiedUser("Una")
	teamID := s.personalTeam(u)
	c := dashClient(t, s)
	c.login(u)

	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Note", invoiceTemplate).str("id")
	for i := 0; i < 3; i++ {
		s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl, "format": "pdf", "variables": map[string]any{"number": "1", "customer": "C"}})
	}
	if code, _, errOut := runCLI(t, "admin", "add-credits", "--data", s.Config.Data, "--team", teamID, "--documents", "1250"); code != 0 {
		t.Fatalf("add-credits: %s", errOut)
	}
	want := func(page, id string, parts ...string) {
		t.Helper()
		got := elementText(t, page, id)
		for _, p := range parts {
			if !strings.Contains(got, p) {
				t.Errorf("#%s says %q, want %q", id, got, p)
			}
		}
	}
	page := c.page("/app/usage")
	want(page, "plan", "Plan: starter", "500 documents a month", "5 templates", "3 API keys", "3 members", "batches of 100")
	want(page, "quota", "3 / 500", "497 left in "+time.Now().UTC().Format("2006-01"))
	want(page, "credits", "1,250", "0 used this month", "1,747 documents available in all")

	// The operator changes the plan: the page follows.
	if code, _, errOut := runCLI(t, "admin", "set-plan", "--data", s.Config.Data, "--team", teamID, "--plan", "growth"); code != 0 {
		t.Fatalf("set-plan: %s", errOut)
	}
	page = c.page("/app/usage")
	want(page, "plan", "Plan: growth", "2,500 documents a month", "20 templates", "10 API keys")
	want(page, "quota", "3 / 2,500", "2,497 left")
	want(page, "credits", "1,250", "3,747 documents available in all")
}
