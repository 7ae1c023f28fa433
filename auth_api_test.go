package main

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
)

func TestSignupLoginRefreshLogout(t *testing.T) {
	s := startServer(t)
	u := s.signup("Ada")
	if !strings.HasPrefix(u.id, "usr_") || u.token == "" || u.refresh == "" {
		t.Fatalf("signup answered id %q token %q refresh %q", u.id, u.token, u.refresh)
	}
	me := s.must(200, "GET", "/api/users/me", u.token, nil)
	if me.str("email") != u.email || me.str("emailVerified") != "false" || me.str("twoFactorEnabled") != "false" {
		t.Fatalf("me = %s", me.raw)
	}
	if strings.Contains(string(me.raw), "password") {
		t.Fatalf("me leaks the password hash: %s", me.raw)
	}

	s.wantError(s.do("POST", "/api/auth/signup", "", map[string]any{"email": u.email, "password": "another pass", "name": "X"}), 400, "ERR_USER_002")
	s.wantError(s.do("POST", "/api/auth/signup", "", map[string]any{"email": "not-an-email", "password": "another pass", "name": "X"}), 400, "ERR_USER_003")
	short := s.do("POST", "/api/auth/signup", "", map[string]any{"email": "short@example.com", "password": "1234567", "name": "X"})
	s.wantError(short, 400, "ERR_VALID_003")
	if short.str("relatedInfo.field") != "password" {
		t.Fatalf("short password relatedInfo = %v", short.get("relatedInfo"))
	}

	s.wantError(s.do("POST", "/api/auth/login", "", map[string]any{"email": u.email, "password": "wrong password"}), 401, "ERR_AUTH_001")
	s.wantError(s.do("POST", "/api/auth/login", "", map[string]any{"email": "nobody@example.com", "password": "wrong password"}), 401, "ERR_AUTH_001")
	login := s.must(200, "POST", "/api/auth/login", "", map[string]any{"email": strings.ToUpper(u.email), "password": u.password})
	if login.str("user.id") != u.id || login.str("expiresIn") != "3600" {
		t.Fatalf("login = %s", login.raw)
	}

	// Refresh tokens rotate; presenting a spent one revokes its whole family.
	r1 := s.must(200, "POST", "/api/auth/refresh", "", map[string]any{"refreshToken": login.str("refreshToken")})
	if r1.str("refreshToken") == login.str("refreshToken") {
		t.Fatal("refresh token did not rotate")
	}
	s.must(200, "GET", "/api/users/me", r1.str("accessToken"), nil)
	s.wantError(s.do("POST", "/api/auth/refresh", "", map[string]any{"refreshToken": login.str("refreshToken")}), 401, "ERR_AUTH_008")
	s.wantError(s.do("POST", "/api/auth/refresh", "", map[string]any{"refreshToken": r1.str("refreshToken")}), 401, "ERR_AUTH_008")

	// Logout revokes the signup session's refresh token.
	s.must(200, "POST", "/api/auth/logout", "", map[string]any{"refreshToken": u.refresh})
	s.wantError(s.do("POST", "/api/auth/refresh", "", map[string]any{"refreshToken": u.refresh}), 401, "ERR_AUTH_008")
	s.wantError(s.do("POST", "/api/auth/refresh", "", map[string]any{}), 400, "ERR_VALID_005")

	// The password and every refresh token, spent or live, are stored only
	// as hashes: none of them is in any file of the data directory.
	for _, secret := range []string{u.password, u.refresh, login.str("refreshToken"), r1.str("refreshToken")} {
		assertNotInFiles(t, s.Config.Data, secret)
	}
}

func TestAccessTokenChecks(t *testing.T) {
	s := startServer(t)
	u := s.signup("Grace")
	s.wantError(s.do("GET", "/api/users/me", "", nil), 401, "ERR_AUTH_003")
	s.wantError(s.do("GET", "/api/users/me", "not.a.jwt", nil), 401, "ERR_AUTH_003")
	// Tampered signature.
	tampered := u.token[:len(u.token)-2] + "xx"
	s.wantError(s.do("GET", "/api/users/me", tampered, nil), 401, "ERR_AUTH_003")
	// alg:none with the same claims.
	parts := strings.Split(u.token, ".")
	none := "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + parts[1] + "."
	s.wantError(s.do("GET", "/api/users/me", none, nil), 401, "ERR_AUTH_003")
	// A team the caller is not a member of.
	s.wantError(s.do("GET", "/api/users/me", u.token, nil, "X-Team-Id", "team_doesnotexist"), 404, "ERR_TEAM_001")
}

func TestVerifyEmail(t *testing.T) {
	s := startServer(t)
	u := s.signup("Linus")
	mails := s.mails(u.email)
	if len(mails) != 1 || !strings.Contains(mails[0], "Subject: Verify your email address") {
		t.Fatalf("want one verification mail to %s, got %d", u.email, len(mails))
	}
	m := mailToken.FindStringSubmatch(mails[0])
	if m == nil {
		t.Fatalf("no token in mail:\n%s", mails[0])
	}
	s.wantError(s.do("POST", "/api/auth/verify-email", "", map[string]any{"token": "wrong"}), 400, "ERR_AUTH_007")
	s.must(200, "POST", "/api/auth/verify-email", "", map[string]any{"token": m[1]})
	if me := s.must(200, "GET", "/api/users/me", u.token, nil); me.str("emailVerified") != "true" {
		t.Fatalf("after verification: %s", me.raw)
	}
	s.wantError(s.do("POST", "/api/auth/verify-email", "", map[string]any{"token": m[1]}), 400, "ERR_AUTH_007")
	s.wantError(s.do("POST", "/api/auth/resend-verification", u.token, nil), 400, "ERR_VALID_003")

	v := s.signup("Ken")
	s.must(200, "POST", "/api/auth/resend-verification", v.token, nil)
	if n := len(s.mails(v.email)); n != 2 {
		t.Fatalf("after resend: %d mails, want 2", n)
	}
}

func TestLoginIsRateLimited(t *testing.T) {
	s := startServer(t)
	u := s.signup("Target")
	for i := 0; i < 10; i++ {
		s.wantError(s.do("POST", "/api/auth/login", "", map[string]any{"email": u.email, "password": "guess guess"}), 401, "ERR_AUTH_001")
	}
	r := s.do("POST", "/api/auth/login", "", map[string]any{"email": u.email, "password": u.password})
	s.wantError(r, http.StatusTooManyRequests, "ERR_QUOTA_003")
	if r.header.Get("Retry-After") == "" || r.get("relatedInfo.retryAfterSeconds") == nil || r.get("retryAfter") == nil {
		t.Fatalf("429 without Retry-After details: %v %s", r.header, r.raw)
	}
	// Other accounts are not locked out by it.
	other := s.signup("Bystander")
	s.must(200, "POST", "/api/auth/login", "", map[string]any{"email": other.email, "password": other.password})
}

// TestLoginIsRateLimitedPerIP spreads failed logins over many addresses, so
// no per-email limit trips, until the client's IP has spent its 50 attempts
// of the window: then even a right password from that IP is refused, while
// the same account still signs in from another address.
func TestLoginIsRateLimitedPerIP(t *testing.T) {
	s := startServer(t)
	victim := s.signup("Victim")
	for i := range 50 {
		email := fmt.Sprintf("spray-%d@example.com", i)
		s.wantError(s.do("POST", "/api/auth/login", "", map[string]any{"email": email, "password": "guess guess"}), 401, "ERR_AUTH_001")
	}
	r := s.do("POST", "/api/auth/login", "", map[string]any{"email": victim.email, "password": victim.password})
	s.wantError(r, http.StatusTooManyRequests, "ERR_QUOTA_003")
	if r.header.Get("Retry-After") == "" {
		t.Fatalf("429 without Retry-After: %v", r.header)
	}

	other := *s
	other.client = clientFrom(t, s.client, "127.0.0.2")
	other.must(200, "POST", "/api/auth/login", "", map[string]any{"email": victim.email, "password": victim.password})
}

// clientFrom returns a copy of c whose connections leave from the loopback
// address ip, so the server sees another client IP.
func clientFrom(t *testing.T, c *http.Client, ip string) *http.Client {
	t.Helper()
	tr := c.Transport.(*http.Transport).Clone()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	tr.DialContext = d.DialContext
	return &http.Client{Timeout: c.Timeout, Transport: tr}
}

func TestSignupClosed(t *testing.T) {
	s := startServer(t, func(c *Config) { c.Signup = "closed" })
	s.wantError(s.do("POST", "/api/auth/signup", "", map[string]any{"email": "a@example.com", "password": "long enough", "name": "A"}), 403, "ERR_AUTH_009")
}
