package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"
)

// DeletionGrace is how long a deleted account can be restored before the
// janitor purges it.
const DeletionGrace = 30 * 24 * time.Hour

// Account error codes (SPEC.md, Errors).
const (
	ECodePendingDeletion  = "ERR_USER_004"
	ECodeDeletionRunning  = "ERR_USER_005"
	ECodeRestoreFailed    = "ERR_USER_006"
	ECodeAccountNotDelete = "ERR_USER_007"
)

// Email token purpose of an address change.
const PurposeChangeEmail = "change_email"

// EmailPreferences are the user's mail opt-ins.
type EmailPreferences struct {
	MarketingEmails bool `json:"marketingEmails"`
	ProductUpdates  bool `json:"productUpdates"`
	WeeklyDigest    bool `json:"weeklyDigest"`
}

// EmailPreferencesInput is the body of PATCH /api/users/me/email-preferences.
type EmailPreferencesInput struct {
	MarketingEmails *bool `json:"marketingEmails"`
	ProductUpdates  *bool `json:"productUpdates"`
	WeeklyDigest    *bool `json:"weeklyDigest"`
}

// ProfileUpdate holds the profile fields to change.
type ProfileUpdate struct {
	Name         *string
	Timezone     *string
	PendingEmail *string
}

// AccountStore keeps what an account owns beyond its login record.
type AccountStore interface {
	// FindAccountByEmail finds a user by email, pending deletion included
	// (DeletedAt set), purged accounts excluded.
	FindAccountByEmail(ctx context.Context, email string) (*User, error)
	UpdateUserProfile(ctx context.Context, id string, upd ProfileUpdate, now time.Time) (*User, error)
	// ConfirmEmailChange makes email the user's verified address if it is
	// still the pending one (else ERR_AUTH_007); ERR_USER_002 when taken.
	ConfirmEmailChange(ctx context.Context, id, email string, now time.Time) error
	// ChangeUserPassword sets the hash, revokes every refresh token and
	// refuses access tokens issued before now.
	ChangeUserPassword(ctx context.Context, id, hash string, now time.Time) error
	FindEmailPreferences(ctx context.Context, id string) (*EmailPreferences, error)
	UpdateEmailPreferences(ctx context.Context, id string, in EmailPreferencesInput, now time.Time) (*EmailPreferences, error)
	SetUserAvatar(ctx context.Context, id, url string, now time.Time) error
	// RequestUserDeletion puts the account in pending deletion, revokes its
	// refresh tokens and deactivates the API keys it created.
	RequestUserDeletion(ctx context.Context, id, reason, reasonText string, now time.Time) error
	// RestoreUser ends pending deletion; ERR_USER_006 if the account is gone.
	RestoreUser(ctx context.Context, id string, now time.Time) error
	// FindUsersToPurge lists accounts whose deletion was requested before t.
	FindUsersToPurge(ctx context.Context, before time.Time) ([]string, error)
	// PurgeUser erases an account's personal data and memberships; teams it
	// owned pass to the longest-standing admin (else member, else viewer) or,
	// with nobody left, are deleted.
	// Accounts restored meanwhile, or deleted again after before, are left alone.
	PurgeUser(ctx context.Context, id string, before, now time.Time) error
}

// AccountService is the user's own account: profile, password, mail
// preferences, avatar, export, deletion and two-factor authentication.
type AccountService struct {
	Users     UserStore
	Accounts  AccountStore
	TwoFactor TwoFactorStore
	Teams     TeamStore
	Keys      KeyStore
	Templates TemplateStore
	Activity  *ActivityLog
	Auth      *AuthService // issues the new session after a password change
	Mailer    Mailer
	Files     FileStore
	Memory    MemoryGate // avatar decodes wait for memory here
	Limiter   Limiter
	BaseURL   string
	Logger    *slog.Logger
	Now       func() time.Time
}

// RequireVerified returns ERR_AUTH_006 unless the caller's email is verified.
// It guards inviting members, sharing templates and webhook subscriptions.
func RequireVerified(p *Principal) error {
	if p.Verified {
		return nil
	}
	return errNotVerified("verify your email address first (POST /api/auth/resend-verification sends a new link)")
}

func errNotVerified(msg string) *Error {
	return &Error{Code: ECodeEmailNotVerified, Message: "email not verified: " + msg}
}

func (s *AccountService) me(ctx context.Context) (*User, error) {
	p, err := jwtAdmin(ctx)
	if err != nil {
		return nil, err
	}
	return s.Users.FindUserByID(ctx, p.UserID)
}

// Me returns the calling user.
func (s *AccountService) Me(ctx context.Context) (*User, error) { return s.me(ctx) }

// ProfileInput is the body of PATCH /api/users/me.
type ProfileInput struct {
	Name     *string `json:"name"`
	Email    *string `json:"email"`
	Timezone *string `json:"timezone"`
}

// CheckTimezone accepts "" (none) or an IANA zone name known to the binary.
func CheckTimezone(tz string) error {
	if tz == "" {
		return nil
	}
	if tz == "Local" || len(tz) > 64 {
		return ErrInvalid("timezone", "timezone must be an IANA time zone name such as Europe/Paris")
	}
	if _, err := time.LoadLocation(tz); err != nil {
		return ErrInvalid("timezone", "unknown time zone %q; use an IANA name such as Europe/Paris", tz)
	}
	return nil
}

// UpdateProfile changes name and timezone at once; a new email address only
// replaces the current one after it is verified by mail.
func (s *AccountService) UpdateProfile(ctx context.Context, in ProfileInput) (*User, error) {
	u, err := s.me(ctx)
	if err != nil {
		return nil, err
	}
	var upd ProfileUpdate
	if in.Name != nil {
		name := strings.TrimSpace(*in.Name)
		if name == "" {
			return nil, ErrInvalid("name", "name cannot be empty")
		}
		if utf8.RuneCountInString(name) > 255 {
			return nil, ErrInvalid("name", "name must be at most 255 characters")
		}
		upd.Name = &name
	}
	if in.Timezone != nil {
		tz := strings.TrimSpace(*in.Timezone)
		if err := CheckTimezone(tz); err != nil {
			return nil, err
		}
		upd.Timezone = &tz
	}
	var newEmail string
	if in.Email != nil {
		email, err := NormalizeEmail(*in.Email)
		if err != nil {
			return nil, err
		}
		if email != u.Email {
			if _, err := s.Accounts.FindAccountByEmail(ctx, email); err == nil {
				return nil, (&Error{Code: ECodeEmailInUse, Message: "email already in use"}).WithInfo("field", "email")
			} else if ErrorCode(err) != ECodeUserNotFound {
				return nil, err
			}
			if err := Throttle(ctx, s.Limiter, "email-change:"+u.ID, 5, time.Hour, s.Now()); err != nil {
				return nil, err
			}
			newEmail = email
		}
		// Asking for the current address again cancels a pending change.
		upd.PendingEmail = &newEmail
	}
	now := s.Now().UTC()
	updated, err := s.Accounts.UpdateUserProfile(ctx, u.ID, upd, now)
	if err != nil {
		return nil, err
	}
	if newEmail != "" {
		if err := s.sendEmailChange(ctx, updated, newEmail, now); err != nil {
			return nil, err
		}
	}
	return updated, nil
}

func (s *AccountService) sendEmailChange(ctx context.Context, u *User, email string, now time.Time) error {
	raw := RandomString(40)
	t := &EmailToken{Hash: HashToken(raw), UserID: u.ID, Purpose: PurposeChangeEmail, Email: email, ExpiresAt: now.Add(VerifyTokenTTL), CreatedAt: now}
	if err := s.Auth.Tokens.CreateEmailToken(ctx, t); err != nil {
		return err
	}
	base := strings.TrimRight(s.BaseURL, "/")
	body := fmt.Sprintf("Hello %s,\r\n\r\nConfirm %s as the new email address of your Folio account by opening this link:\r\n\r\n%s/verify-email?token=%s\r\n\r\nor by sending this token to POST /api/auth/verify-email:\r\n\r\n%s\r\n\r\nUntil then your address stays %s. The link expires in 48 hours.\r\n",
		u.Name, email, base, raw, raw, u.Email)
	if err := s.Mailer.Send(ctx, Mail{To: email, Subject: "Confirm your new email address", Body: body}); err != nil {
		return err
	}
	notice := fmt.Sprintf("Hello %s,\r\n\r\nSomeone (hopefully you) asked to change the email address of your Folio account to %s.\r\nNothing changes until that address is confirmed. If this was not you, change your password.\r\n", u.Name, email)
	return s.Mailer.Send(ctx, Mail{To: u.Email, Subject: "Email change requested", Body: notice})
}

// checkPassword compares the caller's password, throttled per user.
func (s *AccountService) checkPassword(ctx context.Context, u *User, field, password string) error {
	if password == "" {
		return ErrRequired(field)
	}
	if err := Throttle(ctx, s.Limiter, "password:"+u.ID, 10, loginWindow, s.Now()); err != nil {
		return err
	}
	if bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte(password)) != nil {
		return (&Error{Code: ECodeBadPassword, Message: "invalid current password"}).WithInfo("field", field)
	}
	return nil
}

// ChangePasswordInput is the body of POST /api/users/me/change-password.
type ChangePasswordInput struct {
	CurrentPassword string `json:"currentPassword"`
	NewPassword     string `json:"newPassword"`
}

// ChangePassword replaces the password, signs every other session out
// (refresh tokens revoked, older access tokens refused) and returns a fresh
// session for the caller.
func (s *AccountService) ChangePassword(ctx context.Context, in ChangePasswordInput) (*Session, error) {
	u, err := s.me(ctx)
	if err != nil {
		return nil, err
	}
	if in.CurrentPassword == "" {
		return nil, ErrRequired("currentPassword")
	}
	if in.NewPassword == "" {
		return nil, ErrRequired("newPassword")
	}
	if err := checkPassword("newPassword", in.NewPassword); err != nil {
		return nil, err
	}
	if err := s.checkPassword(ctx, u, "currentPassword", in.CurrentPassword); err != nil {
		return nil, err
	}
	hash, err := s.Auth.hashPassword(in.NewPassword)
	if err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	if err := s.Accounts.ChangeUserPassword(ctx, u.ID, hash, now); err != nil {
		return nil, err
	}
	body := fmt.Sprintf("Hello %s,\r\n\r\nThe password of your Folio account was changed on %s and every other session was signed out.\r\nIf this was not you, reset your password and contact your administrator.\r\n", u.Name, now.Format(time.RFC1123))
	if err := s.Mailer.Send(ctx, Mail{To: u.Email, Subject: "Your password was changed", Body: body}); err != nil {
		s.Logger.Warn("password change notice", "user", u.ID, "err", err)
	}
	return s.Auth.newSession(ctx, u, "")
}

// EmailPreferences returns the caller's mail opt-ins.
func (s *AccountService) EmailPreferences(ctx context.Context) (*EmailPreferences, error) {
	u, err := s.me(ctx)
	if err != nil {
		return nil, err
	}
	return s.Accounts.FindEmailPreferences(ctx, u.ID)
}

// UpdateEmailPreferences changes the flags given and keeps the others.
func (s *AccountService) UpdateEmailPreferences(ctx context.Context, in EmailPreferencesInput) (*EmailPreferences, error) {
	u, err := s.me(ctx)
	if err != nil {
		return nil, err
	}
	return s.Accounts.UpdateEmailPreferences(ctx, u.ID, in, s.Now().UTC())
}

// DeleteAccountInput is the body of DELETE /api/users/me.
type DeleteAccountInput struct {
	Password   string `json:"password"`
	Reason     string `json:"reason"`
	ReasonText string `json:"reasonText"`
}

// Deletion describes a scheduled account deletion.
type Deletion struct {
	Message     string    `json:"message"`
	RequestedAt time.Time `json:"deletionRequestedAt"`
	PurgeAt     time.Time `json:"purgeAt"`
}

// DeleteAccount puts the caller's account in pending deletion: it can no
// longer be used, logging in offers a restore, and after DeletionGrace the
// janitor purges it.
func (s *AccountService) DeleteAccount(ctx context.Context, in DeleteAccountInput) (*Deletion, error) {
	u, err := s.me(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.checkPassword(ctx, u, "password", in.Password); err != nil {
		return nil, err
	}
	if utf8.RuneCountInString(in.Reason) > 100 {
		return nil, ErrInvalid("reason", "reason must be at most 100 characters")
	}
	if utf8.RuneCountInString(in.ReasonText) > 2000 {
		return nil, ErrInvalid("reasonText", "reasonText must be at most 2000 characters")
	}
	now := s.Now().UTC()
	if err := s.Accounts.RequestUserDeletion(ctx, u.ID, strings.TrimSpace(in.Reason), strings.TrimSpace(in.ReasonText), now); err != nil {
		return nil, err
	}
	purge := now.Add(DeletionGrace)
	body := fmt.Sprintf("Hello %s,\r\n\r\nYour Folio account is scheduled for deletion on %s. Until then you can restore it with your email and password\r\n(POST %s/api/auth/restore). After that date its data is erased for good.\r\n",
		u.Name, purge.Format(time.RFC1123), strings.TrimRight(s.BaseURL, "/"))
	if err := s.Mailer.Send(ctx, Mail{To: u.Email, Subject: "Your account is scheduled for deletion", Body: body}); err != nil {
		s.Logger.Warn("deletion notice", "user", u.ID, "err", err)
	}
	return &Deletion{Message: "account scheduled for deletion on " + purge.Format(time.RFC3339) + "; log in before then to restore it",
		RequestedAt: now, PurgeAt: purge}, nil
}

// PurgeDeleted erases every account whose grace period ended before now and
// returns how many. The janitor calls it.
func (s *AccountService) PurgeDeleted(ctx context.Context, now time.Time) (int, error) {
	before := now.Add(-DeletionGrace)
	ids, err := s.Accounts.FindUsersToPurge(ctx, before)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, id := range ids {
		// One account that cannot be purged must not hold up the others.
		if err := s.Accounts.PurgeUser(ctx, id, before, now.UTC()); err != nil {
			errs = append(errs, fmt.Errorf("purge user %s: %w", id, err))
			continue
		}
		if err := s.Files.RemoveFile(avatarFile(id)); err != nil {
			s.Logger.Warn("purge avatar", "user", id, "err", err)
		}
		n++
	}
	if n > 0 {
		s.Logger.Info("janitor purged deleted accounts", "count", n)
	}
	return n, errors.Join(errs...)
}

// Sweep is the janitor task for account deletion.
func (s *AccountService) Sweep(ctx context.Context) error {
	_, err := s.PurgeDeleted(ctx, s.Now())
	return err
}

// Export is the data export of GET /api/users/me/export.
type Export struct {
	Personal         ExportPersonal    `json:"personal"`
	EmailPreferences *EmailPreferences `json:"emailPreferences"`
	Teams            []*Team           `json:"teams"`
	APIKeys          []*APIKey         `json:"apiKeys"`
	Templates        []*Template       `json:"templates"`
	ExportedAt       time.Time         `json:"exportedAt"`
	Format           string            `json:"format"`
}

// ExportPersonal is the personal part of an export.
type ExportPersonal struct {
	ID                string    `json:"id"`
	Email             string    `json:"email"`
	Name              string    `json:"name"`
	Timezone          string    `json:"timezone"`
	ProfilePictureURL string    `json:"profilePictureUrl"`
	EmailVerified     bool      `json:"emailVerified"`
	TwoFactorEnabled  bool      `json:"twoFactorEnabled"`
	CreatedAt         time.Time `json:"createdAt"`
}

// Export returns everything the caller owns: profile, preferences, team
// memberships, and the personal team's API keys (never their secrets) and
// templates.
func (s *AccountService) Export(ctx context.Context) (*Export, error) {
	u, err := s.me(ctx)
	if err != nil {
		return nil, err
	}
	prefs, err := s.Accounts.FindEmailPreferences(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	out := &Export{
		Personal: ExportPersonal{ID: u.ID, Email: u.Email, Name: u.Name, Timezone: u.Timezone, ProfilePictureURL: u.ProfilePictureURL,
			EmailVerified: u.EmailVerified, TwoFactorEnabled: u.TwoFactorEnabled, CreatedAt: u.CreatedAt},
		EmailPreferences: prefs, Teams: []*Team{}, APIKeys: []*APIKey{}, Templates: []*Template{},
		ExportedAt: s.Now().UTC(), Format: "JSON",
	}
	for pg := (Page{Page: 1, Limit: MaxLimit}); ; pg.Page++ {
		teams, total, err := s.Teams.FindTeamsForUser(ctx, u.ID, pg)
		if err != nil {
			return nil, err
		}
		out.Teams = append(out.Teams, teams...)
		if len(teams) == 0 || len(out.Teams) >= total {
			break
		}
	}
	for pg := (Page{Page: 1, Limit: MaxLimit}); ; pg.Page++ {
		keys, total, err := s.Keys.FindAPIKeys(ctx, KeyFilter{TeamID: u.PersonalTeamID, SortBy: "createdAt", SortOrder: "asc", Page: pg})
		if err != nil {
			return nil, err
		}
		out.APIKeys = append(out.APIKeys, keys...)
		if len(keys) == 0 || len(out.APIKeys) >= total {
			break
		}
	}
	for pg := (Page{Page: 1, Limit: MaxLimit}); ; pg.Page++ {
		tpls, total, err := s.Templates.FindTemplates(ctx, TemplateFilter{TeamID: u.PersonalTeamID, Page: pg})
		if err != nil {
			return nil, err
		}
		out.Templates = append(out.Templates, tpls...)
		if len(tpls) == 0 || len(out.Templates) >= total {
			break
		}
	}
	return out, nil
}
