package main

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDashboardTwoFactorPending: a two-factor setup keeps its secret until
// a code confirms it or "Start over" replaces it. A wrong code, leaving the
// page, pressing "Set up" again or the API's status do not discard the QR
// code already scanned; the codes shown on confirmation work at login and
// come with copy and download buttons.
func TestDashboardTwoFactorPending(t *testing.T) {
	s := startServer(t)
	u := s.verifiedUser("Pat")
	c := dashClient(t, s)
	c.login(u)
	secretOf := func(page string) string {
		t.Helper()
		m := regexp.MustCompile(`id="totp-secret">([A-Z2-7]+)<`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("no pending setup on the page:\n%s", page)
		}
		return m[1]
	}
	c.page("/app/account")
	res := c.post("/app/account/2fa/enable", url.Values{"csrf": {c.csrf()}})
	first := secretOf(readBody(res))
	qr := regexp.MustCompile(`id="qr"`)

	// A wrong code: the same secret comes back, with the error.
	res = c.post("/app/account/2fa/verify", url.Values{"csrf": {c.csrf()}, "code": {"000000"}})
	if flash := c.flash(res); !strings.Contains(flash, "ERR_AUTH_012") {
		t.Fatalf("wrong code: %q", flash)
	}
	page := c.page("/app/account")
	if got := secretOf(page); got != first || !qr.MatchString(page) {
		t.Fatalf("after a wrong code the secret is %s, want %s", got, first)
	}
	// Leaving and coming back, or pressing "Set up" again: still the same.
	c.page("/app/templates")
	if got := secretOf(c.page("/app/account")); got != first {
		t.Fatalf("after leaving the page the secret is %s, want %s", got, first)
	}
	if got := secretOf(readBody(c.post("/app/account/2fa/enable", url.Values{"csrf": {c.csrf()}}))); got != first {
		t.Fatalf("set up again: secret %s, want %s", got, first)
	}
	if st := s.must(200, "GET", "/api/users/me/2fa/status", u.token, nil); st.str("pending") != "true" || st.str("enabled") != "false" {
		t.Fatalf("status while pending: %s", st.raw)
	}

	// Start over: a new secret; the first one no longer turns it on.
	second := secretOf(readBody(c.post("/app/account/2fa/enable", url.Values{"csrf": {c.csrf()}, "restart": {"1"}})))
	if second == first {
		t.Fatal("start over kept the secret")
	}
	if flash := c.flash(c.post("/app/account/2fa/verify", url.Values{"csrf": {c.csrf()}, "code": {totpCode(t, first, time.Now())}})); !strings.Contains(flash, "ERR_AUTH_012") {
		t.Fatalf("a code of the replaced secret: %q", flash)
	}
	// The right code: on, and the backup codes, once, with copy and download.
	res = c.post("/app/account/2fa/verify", url.Values{"csrf": {c.csrf()}, "code": {totpCode(t, second, time.Now())}})
	body := readBody(res)
	codes := regexp.MustCompile(`[2-9a-z]{5}-[2-9a-z]{5}`).FindAllString(elementText(t, body, "backup-codes"), -1)
	if res.StatusCode != 200 || !strings.Contains(body, "is on") || len(codes) != 10 || !strings.Contains(body, `data-copy="#backup-codes"`) {
		t.Fatalf("confirm: %d\n%s", res.StatusCode, body)
	}
	dl := regexp.MustCompile(`href="(data:text/plain;charset=utf-8,[^"]+)" download="folio-backup-codes.txt"`).FindStringSubmatch(body)
	if dl == nil {
		t.Fatalf("no download of the codes:\n%s", body)
	}
	file, err := url.PathUnescape(strings.TrimPrefix(strings.ReplaceAll(dl[1], "&amp;", "&"), "data:text/plain;charset=utf-8,"))
	if err != nil || !strings.Contains(file, strings.Join(codes, "\n")) {
		t.Fatalf("downloaded codes %q (%v), want %v", file, err, codes)
	}
	if strings.Contains(c.page("/app/account"), codes[0]) {
		t.Fatal("the backup codes show again")
	}
	// A code shown works once at login, in place of the app's.
	s.must(200, "POST", "/api/auth/login", "", map[string]any{"email": u.email, "password": u.password, "code": codes[3]})
	s.wantError(s.do("POST", "/api/auth/login", "", map[string]any{"email": u.email, "password": u.password, "code": codes[3]}), 401, "ERR_AUTH_012")
	if st := s.must(200, "GET", "/api/users/me/2fa/status", u.token, nil); st.str("enabled") != "true" || st.str("pending") != "false" || st.str("backupCodesRemaining") != "9" {
		t.Fatalf("status when on: %s", st.raw)
	}
}
