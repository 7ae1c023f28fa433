package main

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// TestDashboardInvitationNewcomer follows an invitation to someone without
// an account: the mail's link leads through the login to the signup, which
// comes back to the invitation; the verification mail's link carries the
// invitation as next and, opened, lands on it ready to accept. A next that
// leaves the site is dropped.
func TestDashboardInvitationNewcomer(t *testing.T) {
	s := startServer(t)
	owner := s.verifiedUser("Owner")
	team := s.newTeam(owner, "Print Shop")
	email := strings.ToLower("newcomer-" + owner.id + "@example.com")
	s.must(200, "POST", "/api/teams/members/invite", owner.token, map[string]any{"email": email, "role": "member"}, "X-Team-Id", team)
	inv := s.lastInvitationID(email)
	link := "/invitations/" + inv + "/accept"

	c := dashClient(t, s)
	res := c.get(link)
	login := "/app/login?next=" + url.QueryEscape(link)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != login {
		t.Fatalf("signed out: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	signupLink := regexp.MustCompile(`href="(/app/signup\?next=[^"]+)"`).FindStringSubmatch(c.page(login))
	if signupLink == nil || !strings.EqualFold(signupLink[1], "/app/signup?next="+url.QueryEscape(link)) {
		t.Fatalf("the login page's signup link does not carry the invitation: %v", signupLink)
	}
	page := c.page(strings.ReplaceAll(signupLink[1], "&amp;", "&"))
	if !strings.Contains(page, `name="next" value="`+link+`"`) {
		t.Fatal("the signup form does not carry the invitation")
	}
	res = c.post("/app/signup", url.Values{"csrf": {c.csrf()}, "name": {"Newcomer"}, "email": {email}, "password": {"correct horse"}, "next": {link}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != link {
		t.Fatalf("signup: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	// Not verified yet: the invitation says what to do, and offers no accept.
	page = c.page(link)
	if !strings.Contains(page, `id="verify-first"`) || strings.Contains(page, "Accept and join") || strings.Contains(page, `class="flash error"`) {
		t.Fatalf("invitation before verifying:\n%s", page)
	}

	// The verification mail's link carries the invitation...
	mails := s.mails(email)
	var verify string
	for _, m := range mails {
		if v := regexp.MustCompile(`https://\S+/verify-email\?token=\S+`).FindString(m); v != "" {
			verify = v
		}
	}
	u, err := url.Parse(verify)
	if err != nil || u.Query().Get("next") != link {
		t.Fatalf("verification link %q lacks next=%s", verify, link)
	}
	// ...and opening it lands on the invitation, ready to accept.
	res = c.get(u.RequestURI())
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != link {
		t.Fatalf("verify: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if flash := c.flash(res); !strings.Contains(flash, "verified") {
		t.Fatalf("flash after verifying: %q", flash)
	}
	if page := c.page(link); !strings.Contains(page, "Accept and join") || !strings.Contains(page, "Print Shop") {
		t.Fatalf("invitation after verifying:\n%s", page)
	}

	// "Send the link again" from the invitation page comes back here too.
	c2 := dashClient(t, s)
	other := s.signup("Later")
	c2.login(other)
	c2.page("/app/")
	c2.post("/app/account/resend-verification", url.Values{"csrf": {c2.csrf()}, "back": {link}})
	last := s.mails(other.email)
	if !strings.Contains(last[len(last)-1], "next="+url.QueryEscape(link)) {
		t.Fatalf("resent link lacks next:\n%s", last[len(last)-1])
	}

	// A next that leaves the site is dropped: the page stays here.
	tok := regexp.MustCompile(`token=([A-Za-z0-9]+)`).FindStringSubmatch(last[len(last)-1])[1]
	res = c2.get("/verify-email?token=" + tok + "&next=" + url.QueryEscape("//evil.example"))
	if res.StatusCode != 200 {
		t.Fatalf("verify with a foreign next: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	// Signed out, the page's login button leads to next.
	anon := dashClient(t, s)
	third := s.signup("Third")
	m := s.mails(third.email)
	tok = regexp.MustCompile(`token=([A-Za-z0-9]+)`).FindStringSubmatch(m[len(m)-1])[1]
	if page := anon.page("/verify-email?token=" + tok + "&next=" + url.QueryEscape(link)); !strings.Contains(strings.ToLower(page), strings.ToLower(`href="/app/login?next=`+url.QueryEscape(link)+`"`)) {
		t.Fatalf("signed-out verify page:\n%s", page)
	}
}
