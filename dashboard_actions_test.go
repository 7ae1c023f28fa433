package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// The rest of TestDashboard's subtests (team actions, the jobs list's
// auto-refresh) and the browser helpers they and the live-preview check use.

// netRequest is one HTTP request of the page as DevTools saw it: what the
// page's script sent and, for fetch() requests, what it got back.
type netRequest struct {
	Method, URL string
	Fetch       bool   // made by the page's script
	Body        []byte // what was sent
	Status      int
	Response    []byte // fetch() answers only
	Done        bool   // Response is complete (or the request failed)
}

// onNetwork records the page's requests. It runs in chromedp's reading
// loop, so bodies are fetched from another goroutine.
func (b *browser) onNetwork(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		r := &netRequest{Method: e.Request.Method, URL: e.Request.URL, Fetch: e.Type == network.ResourceTypeFetch}
		for _, d := range e.Request.PostDataEntries {
			r.Body = append(r.Body, d.Bytes...)
		}
		if e.Request.HasPostData && len(r.Body) == 0 {
			r.Body = nil // fetched with the response
		}
		b.net = append(b.net, r)
		b.netByID[e.RequestID] = r
	case *network.EventResponseReceived:
		if r := b.netByID[e.RequestID]; r != nil {
			r.Status = int(e.Response.Status)
		}
	case *network.EventLoadingFailed:
		if r := b.netByID[e.RequestID]; r != nil {
			r.Done = true
		}
	case *fetch.EventRequestPaused:
		// A preview, held at the response stage: DevTools keeps no copy of
		// a body the page reads as a blob, so it is taken here.
		r := b.netByID[e.NetworkID]
		go func(id fetch.RequestID) {
			body, _ := chromedp.Call(b.ctx, fetch.GetResponseBody, fetch.GetResponseBodyParams{RequestID: id})
			if r != nil {
				b.mu.Lock()
				r.Response = body.Body
				b.mu.Unlock()
			}
			chromedp.Call(b.ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: id})
		}(e.RequestID)
	case *network.EventLoadingFinished:
		r := b.netByID[e.RequestID]
		if r == nil {
			return
		}
		if !r.Fetch {
			r.Done = true
			return
		}
		go func(id network.RequestID) {
			body, _ := chromedp.Call(b.ctx, network.GetResponseBody, network.GetResponseBodyParams{RequestID: id})
			var sent []byte
			if r.Method == "POST" {
				if pd, err := chromedp.Call(b.ctx, network.GetRequestPostData, network.GetRequestPostDataParams{RequestID: id}); err == nil {
					sent = pd.PostData
				}
			}
			b.mu.Lock()
			defer b.mu.Unlock()
			if len(body.Body) > 0 { // else kept from the interception
				r.Response = body.Body
			}
			if len(sent) > len(r.Body) {
				r.Body = sent
			}
			r.Done = true
		}(e.RequestID)
	}
}

// netMark marks the requests made so far; requestsSince lists the later ones.
func (b *browser) netMark() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.net)
}

// requestsSince returns copies of the finished requests made after mark
// whose URL path ends with suffix, in order.
func (b *browser) requestsSince(mark int, method, suffix string) []netRequest {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []netRequest
	for _, r := range b.net[mark:] {
		u, err := url.Parse(r.URL)
		if err == nil && r.Done && r.Method == method && strings.HasSuffix(u.Path, suffix) {
			out = append(out, *r)
		}
	}
	return out
}

// waitRequest waits for a finished request after mark that satisfies ok
// and returns it (the newest such).
func (b *browser) waitRequest(what string, mark int, method, suffix string, ok func(netRequest) bool) netRequest {
	b.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; {
		reqs := b.requestsSince(mark, method, suffix)
		for i := len(reqs) - 1; i >= 0; i-- {
			if ok(reqs[i]) {
				return reqs[i]
			}
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("wait for %s: %d %s %s request(s) since the mark, none as expected (page: %s)", what, len(reqs), method, suffix, b.location())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkPhone opens each page at a phone's width (390 px) and fails when one
// is wider than the screen, which would make it scroll sideways.
func (b *browser) checkPhone(paths ...string) {
	b.t.Helper()
	b.do("phone", chromedp.EmulateViewport(390, 844))
	defer b.do("laptop", chromedp.EmulateViewport(1280, 900))
	for _, p := range paths {
		b.open(p)
		width := get(b, "page width", chromedp.Evaluate[[]int](`[document.scrollingElement.scrollWidth, window.innerWidth]`))
		if width[0] > width[1] {
			b.t.Errorf("%s is %d px wide on a %d px screen", p, width[0], width[1])
		}
	}
}

// login signs in through the login form and waits for the page it leads to.
func (b *browser) login(email, password string) {
	b.t.Helper()
	if !strings.HasPrefix(b.location(), b.base+"/app/login") {
		b.open("/app/login")
	}
	b.do("fill the login", chromedp.SendKeys(chromedp.ID("email"), email), chromedp.SendKeys(chromedp.ID("password"), password))
	b.submit("#login-submit")
	b.waitJS("the page after logging in", `!location.pathname.startsWith("/app/login") && document.querySelector(".team-chip")`)
}

// logout presses "Log out" in the header.
func (b *browser) logout() {
	b.t.Helper()
	b.submit(`form[action="/app/logout"] button`)
	b.waitJS("the login page", `location.pathname === "/app/login" && document.querySelector("#login-form")`)
}

// flashSays fails unless the page's one-time message contains want.
func (b *browser) flashSays(want string) {
	b.t.Helper()
	if got := b.text("#flash"); !strings.Contains(got, want) {
		b.t.Fatalf("the page says %q, want %q", got, want)
	}
}

// chipSays fails unless the current-team chip in the header contains all of want.
func (b *browser) chipSays(want ...string) {
	b.t.Helper()
	got := b.text(".team-chip")
	for _, w := range want {
		if !strings.Contains(got, w) {
			b.t.Fatalf("current team %q, want %q", got, w)
		}
	}
}

// waitNavigated waits until a JavaScript expression is true in a page the
// browser navigates to by itself (waitJS stops at a navigation).
func (b *browser) waitNavigated(what, expr string) {
	b.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; {
		ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("wait for %s: %v (page: %s)", what, err, b.location())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// teamOf finds one of u's teams by name through the API: id and u's role.
func (s *testServer) teamOf(u user, name string) (id, role string) {
	s.t.Helper()
	teams, _ := s.must(200, "GET", "/api/teams", u.token, nil).get("data").([]any)
	for _, v := range teams {
		if tm, _ := v.(map[string]any); tm["name"] == name {
			return tm["id"].(string), tm["role"].(string)
		}
	}
	return "", ""
}

// dashboardTeam: in the team the Pages subtest created, the owner invites
// a member and cancels another invitation; the invitee accepts under
// "Invitations for you" and switches back to their personal team; the owner
// switches to the team and makes them admin.
func dashboardTeam(t *testing.T, s *testServer, b *browser, ada scenarioResult) {
	b.t = t
	const team = "Acme Docs"
	bob := s.verifiedUser("Bob")
	carol := fmt.Sprintf("carol-%d@example.com", userSeq.Add(1))

	b.open("/app/team")
	b.chipSays(team, "owner")
	invite := func(email, role string) {
		b.do("invite "+email, chromedp.SendKeys(chromedp.CSS(`#invite-form input[name=email]`), email),
			chromedp.SetValue(chromedp.CSS(`#invite-form select[name=role]`), role))
		b.submit(`#invite-form button[type=submit]`)
		b.flashSays("Invitation sent to " + email + ".")
	}
	invite(bob.email, "member")
	invite(carol, "viewer")
	rows := get(b, "pending invitations", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#invitations tbody tr"), r => r.dataset.email + " " + r.cells[1].textContent)`))
	if strings.Join(rows, ", ") != carol+" viewer, "+bob.email+" member" && strings.Join(rows, ", ") != bob.email+" member, "+carol+" viewer" {
		t.Fatalf("pending invitations %q", rows)
	}
	b.submit(fmt.Sprintf(`#invitations tr[data-email=%q] button`, carol))
	b.flashSays("Invitation cancelled.")
	rows = get(b, "pending invitations", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#invitations tbody tr"), r => r.dataset.email)`))
	if len(rows) != 1 || rows[0] != bob.email {
		t.Fatalf("pending invitations after cancelling %s: %q", carol, rows)
	}

	// Bob, in the same browser: the invitation waits for him on the team page.
	b.logout()
	b.login(bob.email, bob.password)
	b.chipSays("(personal)")
	b.open("/app/team")
	inv := s.lastInvitationID(bob.email)
	offer := b.text(fmt.Sprintf(`#my-invitations li[data-invitation=%q]`, inv))
	if !strings.Contains(offer, team) || !strings.Contains(offer, "as member") {
		t.Fatalf("invitation for Bob says %q", offer)
	}
	b.submit(fmt.Sprintf(`#my-invitations li[data-invitation=%q] form[action$="/accept"] button`, inv))
	b.flashSays("Welcome to “" + team + "”: you joined as member.")
	b.chipSays(team, "member")
	if got := get(b, "invitations left", chromedp.Evaluate[int](`document.querySelectorAll("#my-invitations li").length`)); got != 0 {
		t.Fatalf("%d invitations still offered after accepting", got)
	}
	teamID, role := s.teamOf(bob, team)
	if role != "member" {
		t.Fatalf("the API says Bob is %q in %s", role, team)
	}

	// Switch back to the personal team.
	b.do("pick the personal team", chromedp.SetValue(chromedp.CSS(`#switch-team select`), s.personalTeam(bob)))
	b.submit(`#switch-team button[type=submit]`)
	b.flashSays("You are now working in")
	b.chipSays("(personal)", "owner")

	// Ada logs in back in the team she last worked in on this browser (she
	// created it last), switches to it anyway, and makes Bob admin.
	b.logout()
	b.login(ada.email, ada.password)
	b.chipSays(team, "owner")
	b.open("/app/team")
	b.do("pick the team", chromedp.SetValue(chromedp.CSS(`#switch-team select`), teamID))
	b.submit(`#switch-team button[type=submit]`)
	b.flashSays("You are now working in “" + team + "”.")
	b.chipSays(team, "owner")
	row := fmt.Sprintf(`#members tr[data-member=%q]`, bob.id)
	b.do("make Bob admin", chromedp.SetValue(chromedp.CSS(row+` select[name=role]`), "admin"))
	b.submit(row + ` form[action$="/role"] button`)
	b.flashSays("Bob is now admin.")
	if got := get(b, "Bob's role", chromedp.Value(chromedp.CSS(row+` select[name=role]`))); got != "admin" {
		t.Fatalf("Bob's role on the page after the change: %q", got)
	}
	if _, role := s.teamOf(bob, team); role != "admin" {
		t.Fatalf("the API says Bob is %q after the change", role)
	}
	b.checkPhone("/app/team")
	b.checkClean()
}

// dashboardJobsRefresh: a job made through the API after the jobs page was
// loaded shows up without a reload; when the session ends meanwhile, the
// refresh leads to the login page (not into the table) and back.
func dashboardJobsRefresh(t *testing.T, s *testServer, b *browser, ada scenarioResult) {
	b.t = t
	// Back to the personal team, whose key the scenario made.
	b.open("/app/team")
	personal := get(b, "the personal team", chromedp.Evaluate[string](`Array.from(document.querySelectorAll("#switch-team option")).find(o => o.textContent.includes("(personal)")).value`))
	b.do("pick the personal team", chromedp.SetValue(chromedp.CSS(`#switch-team select`), personal))
	b.submit(`#switch-team button[type=submit]`)
	b.chipSays("(personal)")

	b.open("/app/jobs")
	if !get(b, "auto-refresh box", chromedp.Evaluate[bool](`document.querySelector("#autorefresh").checked`)) {
		t.Fatal("auto-refresh is off")
	}
	// Anything set on the window is lost if the page reloads.
	b.do("mark the page", chromedp.Evaluate[chromedp.Void](`window.folioTestMark = "loaded once"`))
	vars, err := os.ReadFile(filepath.Join("testdata", "templates", "invoice.vars.json"))
	if err != nil {
		t.Fatal(err)
	}
	gen := s.must(200, "POST", "/api/v1/documents/generate", ada.key, fmt.Sprintf(`{"templateId":%q,"format":"pdf","variables":%s}`, ada.tplID, vars))
	jobID := gen.str("jobId")
	b.waitJS("the new job in the table", fmt.Sprintf(`document.querySelector('#jobs tr[data-job=%q][data-status="completed"] a.download')`, jobID))
	if mark := get(b, "the page mark", chromedp.Evaluate[string](`String(window.folioTestMark)`)); mark != "loaded once" {
		t.Fatalf("the page reloaded to show the job (mark %q)", mark)
	}

	// The session ends elsewhere: a password change from another browser
	// signs this one out.
	c := dashClient(t, s)
	c.login(user{email: ada.email, password: ada.password})
	const newPassword = "a brand new password"
	res := c.post("/app/account/password", url.Values{"csrf": {c.csrf()}, "currentPassword": {ada.password}, "newPassword": {newPassword}, "confirmPassword": {newPassword}})
	if res.StatusCode != 303 {
		t.Fatalf("change password: %d", res.StatusCode)
	}
	b.waitNavigated("the login page", `location.pathname === "/app/login" && !!document.querySelector("#login-form")`)
	if got := get(b, "jobs table on the login page", chromedp.Evaluate[int](`document.querySelectorAll("#jobs, #jobs-table").length`)); got != 0 {
		t.Fatal("the login page has the jobs table")
	}
	b.flashSays("Please log in to continue.")
	b.login(ada.email, newPassword)
	if loc := b.location(); loc != b.base+"/app/jobs" {
		t.Fatalf("after logging in again: %s, want the jobs page", loc)
	}
	b.waitJS("the job", fmt.Sprintf(`document.querySelector('#jobs tr[data-job=%q]')`, jobID))
	b.checkClean()
}
