package main

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"net/http"
	"strings"
	"testing"
	"time"

	"folio/app"
)

func TestProfileUpdate(t *testing.T) {
	s := startServer(t)
	u, other := s.signup("Nina"), s.signup("Other")

	p := s.must(200, "PATCH", "/api/users/me", u.token, map[string]any{"name": "  Nina Simone ", "timezone": "Europe/Paris"})
	if p.str("name") != "Nina Simone" || p.str("timezone") != "Europe/Paris" || p.str("email") != u.email {
		t.Fatalf("patch = %s", p.raw)
	}
	for _, tz := range []string{"Mars/Olympus_Mons", "Local", "../../etc/passwd", "Europe/"} {
		r := s.do("PATCH", "/api/users/me", u.token, map[string]any{"timezone": tz})
		s.wantError(r, 400, "ERR_VALID_003")
		if r.str("relatedInfo.field") != "timezone" {
			t.Fatalf("timezone %q: %s", tz, r.raw)
		}
	}
	s.must(200, "PATCH", "/api/users/me", u.token, map[string]any{"timezone": "America/Argentina/Buenos_Aires"})
	s.wantError(s.do("PATCH", "/api/users/me", u.token, map[string]any{"name": " "}), 400, "ERR_VALID_003")
	s.wantError(s.do("PATCH", "/api/users/me", u.token, map[string]any{"email": "nope"}), 400, "ERR_USER_003")
	s.wantError(s.do("PATCH", "/api/users/me", u.token, map[string]any{"email": other.email}), 400, "ERR_USER_002")

	// An email change takes effect only once the new address confirms it.
	first := "nina-first@example.com"
	s.must(200, "PATCH", "/api/users/me", u.token, map[string]any{"email": first})
	newEmail := "nina-new@example.com"
	r := s.must(200, "PATCH", "/api/users/me", u.token, map[string]any{"email": newEmail})
	if r.str("email") != u.email || r.str("pendingEmail") != newEmail {
		t.Fatalf("after email change request: %s", r.raw)
	}
	if notices := s.mails(u.email); !strings.Contains(notices[len(notices)-1], newEmail) {
		t.Fatalf("no notice to the old address")
	}
	s.must(200, "POST", "/api/auth/login", "", map[string]any{"email": u.email, "password": u.password})
	s.wantError(s.do("POST", "/api/auth/login", "", map[string]any{"email": newEmail, "password": u.password}), 401, "ERR_AUTH_001")
	// The superseded request's token no longer works.
	oldTok := mailToken.FindStringSubmatch(s.mails(first)[0])[1]
	s.wantError(s.do("POST", "/api/auth/verify-email", "", map[string]any{"token": oldTok}), 400, "ERR_AUTH_007")

	mails := s.mails(newEmail)
	if len(mails) != 1 || !strings.Contains(mails[0], "Subject: Confirm your new email address") {
		t.Fatalf("mails to new address: %v", mails)
	}
	s.must(200, "POST", "/api/auth/verify-email", "", map[string]any{"token": mailToken.FindStringSubmatch(mails[0])[1]})
	me := s.must(200, "GET", "/api/users/me", u.token, nil)
	if me.str("email") != newEmail || me.str("emailVerified") != "true" || me.get("pendingEmail") != nil {
		t.Fatalf("after confirming: %s", me.raw)
	}
	s.must(200, "POST", "/api/auth/login", "", map[string]any{"email": newEmail, "password": u.password})
	s.wantError(s.do("POST", "/api/auth/login", "", map[string]any{"email": u.email, "password": u.password}), 401, "ERR_AUTH_001")

	// An address taken by someone else between the request and the
	// confirmation: the confirmation is refused and the email stays.
	contested := "nina-contested@example.com"
	s.must(200, "PATCH", "/api/users/me", u.token, map[string]any{"email": contested})
	s.must(200, "POST", "/api/auth/signup", "", map[string]any{"email": contested, "password": "other password", "name": "Quick"})
	var confirm string
	for _, m := range s.mails(contested) {
		if strings.Contains(m, "Subject: Confirm your new email address") {
			confirm = mailToken.FindStringSubmatch(m)[1]
		}
	}
	if confirm == "" {
		t.Fatal("no confirmation mail to the contested address")
	}
	s.wantError(s.do("POST", "/api/auth/verify-email", "", map[string]any{"token": confirm}), 400, "ERR_USER_002")
	if me := s.must(200, "GET", "/api/users/me", u.token, nil); me.str("email") != newEmail {
		t.Fatalf("after a refused confirmation: %s", me.raw)
	}
	s.must(200, "POST", "/api/auth/login", "", map[string]any{"email": contested, "password": "other password"})

	key := s.createKey(u.token, nil)
	s.wantError(s.do("PATCH", "/api/users/me", key, map[string]any{"name": "x"}), 403, "ERR_AUTH_004")
}

func TestChangePassword(t *testing.T) {
	s, clock := startClocked(t)
	u := s.signup("Pat")
	other := s.must(200, "POST", "/api/auth/login", "", map[string]any{"email": u.email, "password": u.password})
	clock.Advance(2 * time.Second) // sessions are refused by issue time, at second precision

	for _, c := range []struct {
		body   map[string]any
		status int
		code   string
	}{
		{map[string]any{"newPassword": "new password"}, 400, "ERR_VALID_005"},
		{map[string]any{"currentPassword": u.password}, 400, "ERR_VALID_005"},
		{map[string]any{"currentPassword": "wrong password", "newPassword": "new password"}, 400, "ERR_AUTH_002"},
		{map[string]any{"currentPassword": u.password, "newPassword": "short"}, 400, "ERR_VALID_003"},
	} {
		s.wantError(s.do("POST", "/api/users/me/change-password", u.token, c.body), c.status, c.code)
	}
	r := s.must(200, "POST", "/api/users/me/change-password", u.token, map[string]any{"currentPassword": u.password, "newPassword": "new password"})
	if r.str("message") == "" || r.str("accessToken") == "" || r.str("refreshToken") == "" {
		t.Fatalf("change = %s", r.raw)
	}
	// Every earlier session is over: refresh tokens and access tokens alike.
	s.wantError(s.do("POST", "/api/auth/refresh", "", map[string]any{"refreshToken": other.str("refreshToken")}), 401, "ERR_AUTH_008")
	s.wantError(s.do("POST", "/api/auth/refresh", "", map[string]any{"refreshToken": u.refresh}), 401, "ERR_AUTH_008")
	s.wantError(s.do("GET", "/api/users/me", other.str("accessToken"), nil), 401, "ERR_AUTH_003")
	s.wantError(s.do("GET", "/api/users/me", u.token, nil), 401, "ERR_AUTH_003")
	// The session handed back keeps working.
	s.must(200, "GET", "/api/users/me", r.str("accessToken"), nil)
	s.must(200, "POST", "/api/auth/refresh", "", map[string]any{"refreshToken": r.str("refreshToken")})
	s.wantError(s.do("POST", "/api/auth/login", "", map[string]any{"email": u.email, "password": u.password}), 401, "ERR_AUTH_001")
	s.must(200, "POST", "/api/auth/login", "", map[string]any{"email": u.email, "password": "new password"})
	if m := s.mails(u.email); !strings.Contains(m[len(m)-1], "Subject: Your password was changed") {
		t.Fatal("no password change notice")
	}
}

func TestEmailPreferences(t *testing.T) {
	s := startServer(t)
	u := s.signup("Prefs")
	g := s.must(200, "GET", "/api/users/me/email-preferences", u.token, nil)
	if g.str("preferences.marketingEmails") != "false" || g.str("preferences.productUpdates") != "true" || g.str("preferences.weeklyDigest") != "false" {
		t.Fatalf("defaults = %s", g.raw)
	}
	p := s.must(200, "PATCH", "/api/users/me/email-preferences", u.token, map[string]any{"marketingEmails": true, "productUpdates": false})
	if p.str("message") == "" || p.str("preferences.marketingEmails") != "true" || p.str("preferences.productUpdates") != "false" || p.str("preferences.weeklyDigest") != "false" {
		t.Fatalf("patch = %s", p.raw)
	}
	p = s.must(200, "PATCH", "/api/users/me/email-preferences", u.token, map[string]any{"weeklyDigest": true})
	if p.str("preferences.marketingEmails") != "true" || p.str("preferences.weeklyDigest") != "true" {
		t.Fatalf("second patch = %s", p.raw)
	}
	s.wantError(s.do("PATCH", "/api/users/me/email-preferences", u.token, map[string]any{"weeklyDigest": "yes"}), 400, "ERR_VALID_003")
}

func encodePNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := 0; x < w; x++ {
		img.Set(x, 0, color.RGBA{200, 30, 30, 255})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// tinyWebP is a 1x1 lossy WebP (encoded elsewhere; the standard library has no WebP encoder).
const tinyWebP = "UklGRiIAAABXRUJQVlA4IBYAAAAwAQCdASoBAAEADsD+JaQAA3AAAAAA"

func TestAvatar(t *testing.T) {
	s := startServer(t)
	u := s.signup("Avery")
	b64 := base64.StdEncoding.EncodeToString

	var jpg bytes.Buffer
	if err := jpeg.Encode(&jpg, image.NewGray(image.Rect(0, 0, 40, 30)), nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, data string
		w, h       int
	}{
		{"png", b64(encodePNG(t, 64, 48)), 64, 48},
		{"jpeg as data URI", "data:image/jpeg;base64," + b64(jpg.Bytes()), 40, 30},
		{"webp", tinyWebP, 1, 1},
	} {
		r := s.must(200, "POST", "/api/users/me/avatar", u.token, map[string]any{"imageData": c.data})
		url := r.str("avatarUrl")
		if !strings.HasPrefix(url, s.URL()+"/api/users/"+u.id+"/avatar") || r.str("message") == "" {
			t.Fatalf("%s: %s", c.name, r.raw)
		}
		if me := s.must(200, "GET", "/api/users/me", u.token, nil); me.str("profilePictureUrl") != url {
			t.Fatalf("%s: profilePictureUrl %q, want %q", c.name, me.str("profilePictureUrl"), url)
		}
		status, h, body := s.download(url) // public
		if status != 200 || h.Get("Content-Type") != "image/png" || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("%s: GET avatar %d %v", c.name, status, h)
		}
		img, err := png.Decode(bytes.NewReader(body))
		if err != nil || img.Bounds().Dx() != c.w || img.Bounds().Dy() != c.h {
			t.Fatalf("%s: served avatar: %v %v", c.name, err, img)
		}
	}

	huge := make([]byte, 2<<20+10)
	copy(huge, encodePNG(t, 1, 1))
	gif := []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")
	for _, c := range []struct{ name, data string }{
		{"gif", b64(gif)},
		{"html", b64([]byte("<html><script>alert(1)</script></html>"))},
		{"svg", b64([]byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`))},
		{"not base64", "%%%not-base64%%%"},
		{"truncated png", b64(encodePNG(t, 10, 10)[:40])},
		{"too wide", b64(encodePNG(t, 4097, 1))},
		{"over 2 MB", b64(huge)},
		{"data URI without base64", "data:image/png,abc"},
	} {
		r := s.do("POST", "/api/users/me/avatar", u.token, map[string]any{"imageData": c.data})
		s.wantError(r, 400, "ERR_VALID_003")
		if r.str("relatedInfo.field") != "imageData" {
			t.Fatalf("%s: %s", c.name, r.raw)
		}
	}
	s.wantError(s.do("POST", "/api/users/me/avatar", u.token, map[string]any{}), 400, "ERR_VALID_005")

	url := s.must(200, "GET", "/api/users/me", u.token, nil).str("profilePictureUrl")
	s.must(200, "DELETE", "/api/users/me/avatar", u.token, nil)
	if me := s.must(200, "GET", "/api/users/me", u.token, nil); me.str("profilePictureUrl") != "" {
		t.Fatalf("after delete: %s", me.raw)
	}
	if status, _, _ := s.download(url); status != http.StatusNotFound {
		t.Fatalf("deleted avatar still served: %d", status)
	}
	if status, _, _ := s.download(s.URL() + "/api/users/usr_nobody/avatar"); status != http.StatusNotFound {
		t.Fatalf("unknown user's avatar: %d", status)
	}
}

func TestDataExport(t *testing.T) {
	s := startServer(t)
	u := s.signup("Exporter")
	s.createTemplate(u.token, "Invoice", invoiceTemplate)
	plain := s.createKey(u.token, nil)
	s.newTeam(u, "Side project")

	e := s.must(200, "GET", "/api/users/me/export", u.token, nil)
	if e.str("format") != "JSON" || e.str("personal.id") != u.id || e.str("personal.email") != u.email || e.str("personal.name") != "Exporter" || e.get("personal.createdAt") == nil {
		t.Fatalf("export = %s", e.raw)
	}
	if _, err := time.Parse(time.RFC3339, e.str("exportedAt")); err != nil {
		t.Fatalf("exportedAt %q", e.str("exportedAt"))
	}
	if teams, _ := e.get("teams").([]any); len(teams) != 2 {
		t.Fatalf("teams = %v", e.get("teams"))
	}
	if tpls, _ := e.get("templates").([]any); len(tpls) != 1 || tpls[0].(map[string]any)["name"] != "Invoice" || tpls[0].(map[string]any)["schema"] == nil {
		t.Fatalf("templates = %v", e.get("templates"))
	}
	if keys, _ := e.get("apiKeys").([]any); len(keys) != 1 {
		t.Fatalf("apiKeys = %v", e.get("apiKeys"))
	}
	if strings.Contains(string(e.raw), plain) || strings.Contains(string(e.raw), "password") {
		t.Fatalf("export leaks a secret: %s", e.raw)
	}
	if e.get("preferences") == nil && e.get("emailPreferences") == nil {
		t.Fatalf("no preferences: %s", e.raw)
	}
}

func TestAccountDeletionAndRestore(t *testing.T) {
	s, clock := startClocked(t)
	u, heir := s.verifiedUser("Leaving"), s.verifiedUser("Heir")
	team := s.newTeam(u, "Shared")
	s.join(u, team, heir, "admin")
	key := s.createKey(u.token, nil)
	s.must(200, "POST", "/api/users/me/avatar", u.token, map[string]any{"imageData": base64.StdEncoding.EncodeToString(encodePNG(t, 8, 8))})

	s.wantError(s.do("DELETE", "/api/users/me", u.token, map[string]any{}), 400, "ERR_VALID_005")
	s.wantError(s.do("DELETE", "/api/users/me", u.token, map[string]any{"password": "wrong password"}), 400, "ERR_AUTH_002")
	d := s.must(200, "DELETE", "/api/users/me", u.token, map[string]any{"password": u.password, "reason": "too_expensive", "reasonText": "bye"})
	if d.str("message") == "" || d.get("purgeAt") == nil {
		t.Fatalf("delete = %s", d.raw)
	}
	// The account stops working at once.
	s.wantError(s.do("GET", "/api/users/me", u.token, nil), 401, "ERR_AUTH_003")
	s.wantError(s.do("POST", "/api/auth/refresh", "", map[string]any{"refreshToken": u.refresh}), 401, "ERR_AUTH_008")
	s.wantError(s.do("GET", "/api/v1/templates", key, nil), 401, "ERR_AKEY_003")
	s.wantError(s.do("POST", "/api/auth/login", "", map[string]any{"email": u.email, "password": "wrong password"}), 401, "ERR_AUTH_001")
	l := s.do("POST", "/api/auth/login", "", map[string]any{"email": u.email, "password": u.password})
	s.wantError(l, 403, "ERR_USER_004")
	if l.get("relatedInfo.purgeAt") == nil || !strings.HasSuffix(l.str("relatedInfo.restoreUrl"), "/api/auth/restore") {
		t.Fatalf("pending deletion login = %s", l.raw)
	}
	s.wantError(s.do("POST", "/api/auth/signup", "", map[string]any{"email": u.email, "password": "x long password", "name": "Again"}), 400, "ERR_USER_002")

	// Restore within the grace period.
	clock.Advance(29 * 24 * time.Hour)
	s.wantError(s.do("POST", "/api/auth/restore", "", map[string]any{"email": u.email, "password": "wrong password"}), 401, "ERR_AUTH_001")
	r := s.must(200, "POST", "/api/auth/restore", "", map[string]any{"email": u.email, "password": u.password})
	if r.str("message") == "" || r.str("user.id") != u.id || r.str("accessToken") == "" {
		t.Fatalf("restore = %s", r.raw)
	}
	u.token = r.str("accessToken")
	s.must(200, "GET", "/api/users/me", u.token, nil)
	s.must(200, "GET", "/api/teams/members", u.token, nil, "X-Team-Id", team)
	s.wantError(s.do("POST", "/api/auth/restore", "", map[string]any{"email": u.email, "password": u.password}), 400, "ERR_USER_007")
	// Keys deactivated by the deletion stay off until reactivated.
	s.wantError(s.do("GET", "/api/v1/templates", key, nil), 401, "ERR_AKEY_003")

	// Delete again and let the grace period run out.
	s.must(200, "DELETE", "/api/users/me", u.token, map[string]any{"password": u.password})
	accounts := s.Server.Accounts
	clock.Advance(29 * 24 * time.Hour)
	if n, err := accounts.PurgeDeleted(t.Context(), clock.Now()); err != nil || n != 0 {
		t.Fatalf("purge before the grace period ended: %d %v", n, err)
	}
	clock.Advance(2 * 24 * time.Hour)
	s.wantError(s.do("POST", "/api/auth/login", "", map[string]any{"email": u.email, "password": u.password}), 403, "ERR_USER_005")
	s.wantError(s.do("POST", "/api/auth/restore", "", map[string]any{"email": u.email, "password": u.password}), 400, "ERR_USER_006")
	if n, err := accounts.PurgeDeleted(t.Context(), clock.Now()); err != nil || n != 1 {
		t.Fatalf("purge: %d %v", n, err)
	}
	// After the purge the account is gone and its address free.
	s.wantError(s.do("POST", "/api/auth/login", "", map[string]any{"email": u.email, "password": u.password}), 401, "ERR_AUTH_001")
	s.wantError(s.do("POST", "/api/auth/restore", "", map[string]any{"email": u.email, "password": u.password}), 401, "ERR_AUTH_001")
	if status, _, _ := s.download(s.URL() + "/api/users/" + u.id + "/avatar"); status != 404 {
		t.Fatalf("purged avatar: %d", status)
	}
	s.must(200, "POST", "/api/auth/signup", "", map[string]any{"email": u.email, "password": "x long password", "name": "Again"})

	// The shared team passed to its admin, and its feed says so.
	heir.token = s.login(heir)
	teams := dataList(t, s.must(200, "GET", "/api/teams", heir.token, nil))
	if len(teams) != 2 || teams[1]["id"] != team || teams[1]["role"] != "owner" || teams[1]["memberCount"] != 1.0 {
		t.Fatalf("heir's teams = %v", teams)
	}
	feed := dataList(t, s.must(200, "GET", "/api/teams/activity", heir.token, nil, "X-Team-Id", team))
	left := feed[0]
	if left["type"] != "member_left" || left["user"].(map[string]any)["name"] != "Deleted user" || left["user"].(map[string]any)["email"] != nil {
		t.Fatalf("feed after purge = %v", feed)
	}
	if feed[1]["type"] != "role_changed" || feed[1]["details"].(map[string]any)["to"] != "owner" {
		t.Fatalf("feed after purge = %v", feed)
	}
	s.must(200, "PUT", "/api/teams/"+team, heir.token, map[string]any{"name": "Mine now"})
	// Purging is idempotent.
	if n, err := accounts.PurgeDeleted(t.Context(), clock.Now()); err != nil || n != 0 {
		t.Fatalf("second purge: %d %v", n, err)
	}
}

// TestJanitorPurgesDeletedAccounts checks that the running server's janitor
// purges accounts whose grace period is over (the purge itself is tested in
// TestAccountDeletionAndRestore). The janitor sweeps when the server starts
// and every ten minutes after, so the test restarts the server at a later
// clock rather than waiting.
func TestJanitorPurgesDeletedAccounts(t *testing.T) {
	data := t.TempDir()
	clock := newFakeClock()
	s := startMain(t, &Main{Now: clock.Now, Config: Config{Data: data}})
	gone, kept := s.verifiedUser("Gone"), s.verifiedUser("Kept")
	s.must(200, "DELETE", "/api/users/me", gone.token, map[string]any{"password": gone.password})
	clock.Advance(app.DeletionGrace + time.Hour)
	s.wantError(s.do("POST", "/api/auth/login", "", map[string]any{"email": gone.email, "password": gone.password}), 403, "ERR_USER_005")
	s.Close()

	s = startMain(t, &Main{Now: clock.Now, Config: Config{Data: data}})
	login := func() resp {
		return s.do("POST", "/api/auth/login", "", map[string]any{"email": gone.email, "password": gone.password})
	}
	// Poll the database, not the login (failed logins are throttled).
	waitFor(t, 30*time.Second, func() bool {
		_, err := s.DB.FindAccountByEmail(t.Context(), gone.email)
		return app.ErrorCode(err) == app.ECodeUserNotFound
	})
	s.wantError(login(), 401, "ERR_AUTH_001")
	// The address is free again; the other account is untouched.
	s.must(200, "POST", "/api/auth/signup", "", map[string]any{"email": gone.email, "password": "x long password", "name": "Again"})
	s.login(kept)
}
