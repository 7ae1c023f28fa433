package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base32"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"image"
	"image/png"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skip2/go-qrcode"
)

// fakeClock is a settable clock for Main.Now. Every reading moves it on by a
// microsecond, so mail files written "at the same time" still sort in order.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	// Start one second into a 30-second TOTP step so short tests stay in it.
	return &fakeClock{t: time.Now().UTC().Truncate(30 * time.Second).Add(time.Second)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Microsecond)
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// startClocked starts a server whose clock the test controls.
func startClocked(t *testing.T, opts ...func(*Config)) (*testServer, *fakeClock) {
	t.Helper()
	clock := newFakeClock()
	return startMain(t, &Main{Now: clock.Now}, opts...), clock
}

// totpCode is RFC 6238 written out here (HMAC-SHA1, 30-second steps, six
// digits), independent of the library the server uses.
func totpCode(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	key, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ToUpper(strings.TrimRight(secret, "=")))
	if err != nil {
		t.Fatalf("secret %q is not base32: %v", secret, err)
	}
	return hotp(key, uint64(at.Unix()/30), 6)
}

func hotp(key []byte, counter uint64, digits int) string {
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], counter)
	mac := hmac.New(sha1.New, key)
	mac.Write(msg[:])
	sum := mac.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	bin := uint32(sum[off]&0x7f)<<24 | uint32(sum[off+1])<<16 | uint32(sum[off+2])<<8 | uint32(sum[off+3])
	mod := uint32(1)
	for range digits {
		mod *= 10
	}
	return fmt.Sprintf("%0*d", digits, bin%mod)
}

func TestTOTPReferenceVectors(t *testing.T) {
	// RFC 6238 appendix B, SHA-1 rows.
	key := []byte("12345678901234567890")
	for at, want := range map[int64]string{59: "94287082", 1111111109: "07081804", 1234567890: "89005924", 2000000000: "69279037"} {
		if got := hotp(key, uint64(at/30), 8); got != want {
			t.Fatalf("T=%d: %s, want %s", at, got, want)
		}
	}
}

func TestTwoFactorSetupLoginReplayAndBackupCodes(t *testing.T) {
	s, clock := startClocked(t)
	u := s.signup("Secure")
	login := func(code string) resp {
		body := map[string]any{"email": u.email, "password": u.password}
		if code != "" {
			body["code"] = code
		}
		return s.do("POST", "/api/auth/login", "", body)
	}

	st := s.must(200, "GET", "/api/users/me/2fa/status", u.token, nil)
	if st.str("enabled") != "false" || st.str("backupCodesRemaining") != "0" {
		t.Fatalf("status = %s", st.raw)
	}
	s.wantError(s.do("POST", "/api/users/me/2fa/verify", u.token, map[string]any{"code": "123456"}), 400, "ERR_AUTH_014")

	en := s.must(200, "POST", "/api/users/me/2fa/enable", u.token, nil)
	secret := en.str("secret")
	qr := en.str("qrCode")
	if !strings.HasPrefix(qr, "data:image/png;base64,") {
		t.Fatalf("qrCode = %.60s", qr)
	}
	pngBytes, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(qr, "data:image/png;base64,"))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(pngBytes))
	if err != nil || img.Bounds().Dx() < 100 {
		t.Fatalf("qrCode is not a PNG image: %v", err)
	}
	otpURL, err := url.Parse(en.str("otpauthUrl"))
	if err != nil || otpURL.Scheme != "otpauth" || otpURL.Host != "totp" || otpURL.Query().Get("secret") != secret || !strings.Contains(otpURL.Path, u.email) {
		t.Fatalf("otpauthUrl = %q", en.str("otpauthUrl"))
	}
	wantQRContent(t, img, en.str("otpauthUrl"))
	codes, _ := en.get("backupCodes").([]any)
	if len(codes) != 10 {
		t.Fatalf("backupCodes = %v", en.get("backupCodes"))
	}
	// Stored hashed: no code is in any data file, as shown or as typed without the dash.
	for _, c := range codes {
		code := c.(string)
		if len(code) != 11 || code[5] != '-' {
			t.Fatalf("backup code %q is not xxxxx-xxxxx", code)
		}
		assertNotInFiles(t, s.Config.Data, code)
		assertNotInFiles(t, s.Config.Data, strings.ReplaceAll(code, "-", ""))
	}

	// Not on until verified: login needs no code yet.
	s.must(200, "POST", "/api/auth/login", "", map[string]any{"email": u.email, "password": u.password})
	if st := s.must(200, "GET", "/api/users/me/2fa/status", u.token, nil); st.str("enabled") != "false" {
		t.Fatalf("enabled before verification: %s", st.raw)
	}
	s.wantError(s.do("POST", "/api/users/me/2fa/verify", u.token, map[string]any{}), 400, "ERR_VALID_005")
	s.wantError(s.do("POST", "/api/users/me/2fa/verify", u.token, map[string]any{"code": "12345"}), 400, "ERR_VALID_003")
	now := clock.Now()
	wrong := totpCode(t, secret, now.Add(-5*time.Minute))
	s.wantError(s.do("POST", "/api/users/me/2fa/verify", u.token, map[string]any{"code": wrong}), 401, "ERR_AUTH_012")
	code0 := totpCode(t, secret, now)
	if v := s.must(200, "POST", "/api/users/me/2fa/verify", u.token, map[string]any{"code": code0}); v.str("success") != "true" {
		t.Fatalf("verify = %s", v.raw)
	}
	st = s.must(200, "GET", "/api/users/me/2fa/status", u.token, nil)
	if st.str("enabled") != "true" || st.str("backupCodesRemaining") != "10" {
		t.Fatalf("status = %s", st.raw)
	}
	if me := s.must(200, "GET", "/api/users/me", u.token, nil); me.str("twoFactorEnabled") != "true" {
		t.Fatalf("me = %s", me.raw)
	}
	s.wantError(s.do("POST", "/api/users/me/2fa/enable", u.token, nil), 400, "ERR_AUTH_013")

	// Login now needs a code; each time step's code works once.
	s.wantError(login(""), 401, "ERR_AUTH_011")
	s.wantError(login(wrong), 401, "ERR_AUTH_012")
	s.wantError(login(code0), 401, "ERR_AUTH_012") // spent by the verification
	clock.Advance(30 * time.Second)
	code1 := totpCode(t, secret, clock.Now())
	if r := login(code1); r.status != 200 || r.str("accessToken") == "" {
		t.Fatalf("login with code: %d %s", r.status, r.raw)
	}
	s.wantError(login(code1), 401, "ERR_AUTH_012")
	// The previous step's code is still inside the ±1 step window, but a
	// newer step was used: accepting it would be a replay.
	s.wantError(login(code0), 401, "ERR_AUTH_012")
	// A wrong password still says wrong password, code or not.
	s.wantError(s.do("POST", "/api/auth/login", "", map[string]any{"email": u.email, "password": "bad password", "code": code1}), 401, "ERR_AUTH_001")

	// Backup codes: single use, typed with or without the dash, any case.
	clock.Advance(31 * time.Minute) // past the login throttle windows
	backup := codes[3].(string)
	s.must(200, "POST", "/api/auth/login", "", map[string]any{"email": u.email, "password": u.password, "code": strings.ToUpper(strings.ReplaceAll(backup, "-", ""))})
	s.wantError(login(backup), 401, "ERR_AUTH_012")
	u.token = s.login2FA(u, totpCode(t, secret, clock.Now()))
	if st := s.must(200, "GET", "/api/users/me/2fa/status", u.token, nil); st.str("backupCodesRemaining") != "9" {
		t.Fatalf("after one backup code: %s", st.raw)
	}

	// Regenerating invalidates every earlier code.
	s.wantError(s.do("POST", "/api/users/me/2fa/backup-codes", u.token, map[string]any{"password": "wrong password"}), 400, "ERR_AUTH_002")
	s.wantError(s.do("POST", "/api/users/me/2fa/backup-codes", u.token, map[string]any{}), 400, "ERR_VALID_005")
	regen := s.must(200, "POST", "/api/users/me/2fa/backup-codes", u.token, map[string]any{"password": u.password})
	fresh, _ := regen.get("backupCodes").([]any)
	if len(fresh) != 10 || fresh[0] == codes[0] {
		t.Fatalf("regenerated = %s", regen.raw)
	}
	s.wantError(login(codes[5].(string)), 401, "ERR_AUTH_012")
	s.must(200, "POST", "/api/auth/login", "", map[string]any{"email": u.email, "password": u.password, "code": fresh[0]})

	// Disable needs the password; afterwards login needs no code.
	clock.Advance(31 * time.Minute)
	s.wantError(s.do("POST", "/api/users/me/2fa/disable", u.token, map[string]any{"password": "wrong password"}), 400, "ERR_AUTH_002")
	if d := s.must(200, "POST", "/api/users/me/2fa/disable", u.token, map[string]any{"password": u.password}); d.str("success") != "true" {
		t.Fatalf("disable = %s", d.raw)
	}
	s.must(200, "POST", "/api/auth/login", "", map[string]any{"email": u.email, "password": u.password})
	st = s.must(200, "GET", "/api/users/me/2fa/status", u.token, nil)
	if st.str("enabled") != "false" || st.str("backupCodesRemaining") != "0" {
		t.Fatalf("status after disable = %s", st.raw)
	}
	s.wantError(s.do("POST", "/api/users/me/2fa/disable", u.token, map[string]any{"password": u.password}), 400, "ERR_AUTH_014")
	s.wantError(s.do("POST", "/api/users/me/2fa/backup-codes", u.token, map[string]any{"password": u.password}), 400, "ERR_AUTH_014")
}

// login2FA logs u in with a two-factor code and returns the access token.
func (s *testServer) login2FA(u user, code string) string {
	s.t.Helper()
	return s.must(200, "POST", "/api/auth/login", "", map[string]any{"email": u.email, "password": u.password, "code": code}).str("accessToken")
}

func TestTwoFactorRestoreAndAPIKeysUnaffected(t *testing.T) {
	s, clock := startClocked(t)
	u := s.signup("Guarded")
	key := s.createKey(u.token, nil)
	secret := s.must(200, "POST", "/api/users/me/2fa/enable", u.token, nil).str("secret")
	s.must(200, "POST", "/api/users/me/2fa/verify", u.token, map[string]any{"code": totpCode(t, secret, clock.Now())})
	// API keys do not use two-factor.
	s.must(200, "GET", "/api/v1/templates", key, nil)

	// Restoring a deleted account asks for the second factor too.
	s.must(200, "DELETE", "/api/users/me", u.token, map[string]any{"password": u.password})
	s.wantError(s.do("POST", "/api/auth/restore", "", map[string]any{"email": u.email, "password": u.password}), 401, "ERR_AUTH_011")
	clock.Advance(30 * time.Second)
	r := s.must(200, "POST", "/api/auth/restore", "", map[string]any{"email": u.email, "password": u.password, "code": totpCode(t, secret, clock.Now())})
	s.must(200, "GET", "/api/users/me", r.str("accessToken"), nil)
}

// wantQRContent checks that img is a QR code of text: it reads img's module
// grid (the symbol, with its quiet zone, spread over the whole image) and
// compares it with the symbol of text at each error-correction level, so it
// fails for any other text.
func wantQRContent(t *testing.T, img image.Image, text string) {
	t.Helper()
	b := img.Bounds()
	for _, level := range []qrcode.RecoveryLevel{qrcode.Low, qrcode.Medium, qrcode.High, qrcode.Highest} {
		q, err := qrcode.New(text, level)
		if err != nil {
			t.Fatal(err)
		}
		want := q.Bitmap()
		n := len(want)
		same := true
		for y := 0; y < n && same; y++ {
			for x := 0; x < n; x++ {
				// The centre pixel of module (x, y).
				px := b.Min.X + int((float64(x)+0.5)*float64(b.Dx())/float64(n))
				py := b.Min.Y + int((float64(y)+0.5)*float64(b.Dy())/float64(n))
				r, g, bl, _ := img.At(px, py).RGBA()
				dark := (r+g+bl)/3 < 0x8000
				if dark != want[y][x] {
					same = false
					break
				}
			}
		}
		if same {
			return
		}
	}
	t.Fatalf("the QR code does not encode %q", text)
}
