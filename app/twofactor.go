package app

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base32"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
	"github.com/skip2/go-qrcode"
)

// Two-factor settings: RFC 6238 TOTP with SHA-1, 30-second steps and six
// digits (what every authenticator app speaks), one step of clock skew either
// way, and ten single-use backup codes.
const (
	totpPeriod      = 30
	totpSkew        = 1
	BackupCodeCount = 10
)

// Two-factor error codes Folio adds (docs/decisions.md).
const (
	ECodeTwoFactorOn  = "ERR_AUTH_013"
	ECodeTwoFactorOff = "ERR_AUTH_014"
)

// TwoFactor is a user's two-factor state. A Secret without Enabled is a
// setup waiting for its first code.
type TwoFactor struct {
	UserID               string
	Secret               string
	Enabled              bool
	LastStep             int64
	BackupCodesRemaining int
}

// TwoFactorStore keeps TOTP secrets and hashed backup codes.
type TwoFactorStore interface {
	// FindTwoFactor returns the state; a user who never started setup gets a
	// zero TwoFactor.
	FindTwoFactor(ctx context.Context, userID string) (*TwoFactor, error)
	// StartTwoFactor stores a new pending secret and backup codes, replacing
	// an unfinished setup; ERR_AUTH_013 when two-factor is already on.
	StartTwoFactor(ctx context.Context, userID, secret string, codeHashes []string, now time.Time) error
	// EnableTwoFactor completes setup with the time step of the code used;
	// codeHashes, when not nil, replace the backup codes in the same step.
	EnableTwoFactor(ctx context.Context, userID string, step int64, codeHashes []string, now time.Time) error
	// UseTOTPStep records a step as used; a step not after the last used one
	// is a replay and gets ERR_AUTH_012.
	UseTOTPStep(ctx context.Context, userID string, step int64, now time.Time) error
	// UseBackupCode spends an unused code; ERR_AUTH_012 otherwise.
	UseBackupCode(ctx context.Context, userID, hash string, now time.Time) error
	ReplaceBackupCodes(ctx context.Context, userID string, codeHashes []string, now time.Time) error
	DisableTwoFactor(ctx context.Context, userID string, now time.Time) error
}

var totpOpts = totp.ValidateOpts{Period: totpPeriod, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

func errBadCode() *Error { return &Error{Code: ECodeBadTwoFactor, Message: "invalid two-factor code"} }

// matchTOTP returns the time step (within the skew) whose code is code.
func matchTOTP(secret, code string, now time.Time) (int64, bool) {
	if len(code) != 6 || strings.Trim(code, "0123456789") != "" {
		return 0, false
	}
	cur := now.Unix() / totpPeriod
	for _, step := range []int64{cur, cur - totpSkew, cur + totpSkew} {
		want, err := totp.GenerateCodeCustom(secret, time.Unix(step*totpPeriod, 0), totpOpts)
		if err == nil && subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return step, true
		}
	}
	return 0, false
}

// backupAlphabet avoids look-alike characters (0/o, 1/l/i).
const backupAlphabet = "23456789abcdefghjkmnpqrstuvwxyz"

// newBackupCodes returns codes shown as "xxxxx-xxxxx" and their hashes.
func newBackupCodes() (codes, hashes []string) {
	for range BackupCodeCount {
		b := make([]byte, 10)
		if _, err := rand.Read(b); err != nil {
			panic("crypto/rand failed: " + err.Error())
		}
		for i := range b {
			// 248 = 8*31: rejection keeps every character equally likely.
			for b[i] >= 248 {
				var one [1]byte
				if _, err := rand.Read(one[:]); err != nil {
					panic("crypto/rand failed: " + err.Error())
				}
				b[i] = one[0]
			}
			b[i] = backupAlphabet[int(b[i])%len(backupAlphabet)]
		}
		codes = append(codes, string(b[:5])+"-"+string(b[5:]))
		hashes = append(hashes, HashToken(string(b)))
	}
	return codes, hashes
}

// normalizeBackupCode lets users type a code with or without the dash, in
// any case, with stray spaces.
func normalizeBackupCode(code string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == ' ' {
			return -1
		}
		return r
	}, strings.ToLower(code))
}

// checkSecondFactor checks a login's code for a user with two-factor on: a
// TOTP code (each time step accepted once) or an unused backup code.
func checkSecondFactor(ctx context.Context, store TwoFactorStore, userID, code string, now time.Time) error {
	code = strings.TrimSpace(code)
	if code == "" {
		return &Error{Code: ECodeTwoFactorRequired, Message: "two-factor code required: send code with a 6-digit code from your authenticator app or a backup code"}
	}
	tf, err := store.FindTwoFactor(ctx, userID)
	if err != nil {
		return err
	}
	if !tf.Enabled {
		return nil
	}
	if step, ok := matchTOTP(tf.Secret, code, now); ok {
		return store.UseTOTPStep(ctx, userID, step, now)
	}
	if len(code) == 6 {
		return errBadCode()
	}
	return store.UseBackupCode(ctx, userID, HashToken(normalizeBackupCode(code)), now)
}

// TwoFactorStatus is the answer of GET /api/users/me/2fa/status. Pending
// reports a setup waiting for its first code: its secret stays until a
// code confirms it or enable is called again.
type TwoFactorStatus struct {
	Enabled              bool `json:"enabled"`
	BackupCodesRemaining int  `json:"backupCodesRemaining"`
	Pending              bool `json:"pending"`
}

// TwoFactorSetup is what enabling answers: the secret, as text and as a QR
// code of its otpauth:// URL, and the backup codes (shown this once).
type TwoFactorSetup struct {
	QRCode      string   `json:"qrCode"`
	Secret      string   `json:"secret"`
	OTPAuthURL  string   `json:"otpauthUrl"`
	BackupCodes []string `json:"backupCodes"`
}

// TwoFactorStatus reports whether two-factor is on and how many backup codes are left.
func (s *AccountService) TwoFactorStatus(ctx context.Context) (*TwoFactorStatus, error) {
	u, err := s.me(ctx)
	if err != nil {
		return nil, err
	}
	tf, err := s.TwoFactor.FindTwoFactor(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	st := &TwoFactorStatus{Enabled: tf.Enabled, Pending: !tf.Enabled && tf.Secret != ""}
	if tf.Enabled {
		st.BackupCodesRemaining = tf.BackupCodesRemaining
	}
	return st, nil
}

// PendingTwoFactor returns the setup waiting for its first code, the same
// secret and QR code as when it started (an authenticator that scanned it
// keeps working), without backup codes: those are stored only as hashes.
// ERR_AUTH_014 when no setup is waiting.
func (s *AccountService) PendingTwoFactor(ctx context.Context) (*TwoFactorSetup, error) {
	u, err := s.me(ctx)
	if err != nil {
		return nil, err
	}
	tf, err := s.TwoFactor.FindTwoFactor(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	if tf.Enabled || tf.Secret == "" {
		return nil, &Error{Code: ECodeTwoFactorOff, Message: "no two-factor setup is waiting for a code"}
	}
	raw, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ToUpper(strings.TrimRight(tf.Secret, "=")))
	if err != nil {
		return nil, fmt.Errorf("stored two-factor secret: %w", err)
	}
	return twoFactorSetup(u, raw)
}

// twoFactorSetup makes the otpauth:// URL and QR code of a secret (a new
// random one when secret is nil).
func twoFactorSetup(u *User, secret []byte) (*TwoFactorSetup, error) {
	key, err := totp.Generate(totp.GenerateOpts{Issuer: "Folio", AccountName: u.Email, Period: totpPeriod, Digits: otp.DigitsSix,
		Algorithm: otp.AlgorithmSHA1, Secret: secret})
	if err != nil {
		return nil, err
	}
	png, err := qrcode.Encode(key.URL(), qrcode.Medium, 256)
	if err != nil {
		return nil, err
	}
	return &TwoFactorSetup{QRCode: "data:image/png;base64," + base64.StdEncoding.EncodeToString(png), Secret: key.Secret(),
		OTPAuthURL: key.URL()}, nil
}

// EnableTwoFactor starts setup: a new secret and backup codes, replacing a
// setup still waiting for its code. Two-factor is on only once
// VerifyTwoFactor accepts a code from the authenticator.
func (s *AccountService) EnableTwoFactor(ctx context.Context) (*TwoFactorSetup, error) {
	u, err := s.me(ctx)
	if err != nil {
		return nil, err
	}
	if u.TwoFactorEnabled {
		return nil, &Error{Code: ECodeTwoFactorOn, Message: "two-factor authentication is already enabled; disable it first to set it up again"}
	}
	setup, err := twoFactorSetup(u, nil)
	if err != nil {
		return nil, err
	}
	codes, hashes := newBackupCodes()
	if err := s.TwoFactor.StartTwoFactor(ctx, u.ID, setup.Secret, hashes, s.Now().UTC()); err != nil {
		return nil, err
	}
	setup.BackupCodes = codes
	return setup, nil
}

// VerifyTwoFactor completes setup with a code from the authenticator app.
// A wrong code changes nothing: the pending secret stays.
func (s *AccountService) VerifyTwoFactor(ctx context.Context, code string) error {
	return s.confirmTwoFactor(ctx, code, nil)
}

// ConfirmTwoFactor completes setup like VerifyTwoFactor and issues new
// backup codes in the same step, returned to be shown once: the dashboard
// shows codes when two-factor turns on, not while a setup may still be
// started over (the codes of the start are kept only as hashes).
func (s *AccountService) ConfirmTwoFactor(ctx context.Context, code string) ([]string, error) {
	codes, hashes := newBackupCodes()
	if err := s.confirmTwoFactor(ctx, code, hashes); err != nil {
		return nil, err
	}
	return codes, nil
}

func (s *AccountService) confirmTwoFactor(ctx context.Context, code string, codeHashes []string) error {
	u, err := s.me(ctx)
	if err != nil {
		return err
	}
	code = strings.TrimSpace(code)
	if code == "" {
		return ErrRequired("code")
	}
	if len(code) != 6 || strings.Trim(code, "0123456789") != "" {
		return ErrInvalid("code", "code must be 6 digits")
	}
	tf, err := s.TwoFactor.FindTwoFactor(ctx, u.ID)
	if err != nil {
		return err
	}
	if tf.Enabled {
		return &Error{Code: ECodeTwoFactorOn, Message: "two-factor authentication is already enabled"}
	}
	if tf.Secret == "" {
		return &Error{Code: ECodeTwoFactorOff, Message: "two-factor setup has not started; call POST /api/users/me/2fa/enable first"}
	}
	now := s.Now()
	if err := Throttle(ctx, s.Limiter, "2fa-verify:"+u.ID, 10, loginWindow, now); err != nil {
		return err
	}
	step, ok := matchTOTP(tf.Secret, code, now)
	if !ok {
		return errBadCode()
	}
	return s.TwoFactor.EnableTwoFactor(ctx, u.ID, step, codeHashes, now.UTC())
}

// PasswordInput is a body holding only the password.
type PasswordInput struct {
	Password string `json:"password"`
}

// DisableTwoFactor turns two-factor off and forgets the secret and codes.
func (s *AccountService) DisableTwoFactor(ctx context.Context, in PasswordInput) error {
	u, err := s.me(ctx)
	if err != nil {
		return err
	}
	if err := s.checkPassword(ctx, u, "password", in.Password); err != nil {
		return err
	}
	if !u.TwoFactorEnabled {
		return &Error{Code: ECodeTwoFactorOff, Message: "two-factor authentication is not enabled"}
	}
	return s.TwoFactor.DisableTwoFactor(ctx, u.ID, s.Now().UTC())
}

// RegenerateBackupCodes replaces every backup code; the old ones stop working.
func (s *AccountService) RegenerateBackupCodes(ctx context.Context, in PasswordInput) ([]string, error) {
	u, err := s.me(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.checkPassword(ctx, u, "password", in.Password); err != nil {
		return nil, err
	}
	if !u.TwoFactorEnabled {
		return nil, &Error{Code: ECodeTwoFactorOff, Message: "two-factor authentication is not enabled"}
	}
	codes, hashes := newBackupCodes()
	if err := s.TwoFactor.ReplaceBackupCodes(ctx, u.ID, hashes, s.Now().UTC()); err != nil {
		return nil, err
	}
	return codes, nil
}
