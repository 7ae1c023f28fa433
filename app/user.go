package app

import (
	"context"
	"net/mail"
	"strings"
	"time"
)

// User is an account that logs in to the dashboard and the JWT API.
type User struct {
	ID                string `json:"id"`
	Email             string `json:"email"`
	Name              string `json:"name"`
	ProfilePictureURL string `json:"profilePictureUrl"`
	EmailVerified     bool   `json:"emailVerified"`
	TwoFactorEnabled  bool   `json:"twoFactorEnabled"`
	Timezone          string `json:"timezone,omitempty"`
	// PendingEmail is an address the user asked to change to; it replaces
	// Email once verified by mail.
	PendingEmail string    `json:"pendingEmail,omitempty"`
	CreatedAt    time.Time `json:"createdAt"`
	UpdatedAt    time.Time `json:"updatedAt"`

	PasswordHash   string `json:"-"`
	PersonalTeamID string `json:"-"`
	// DeletedAt is when the user asked to delete the account (pending deletion).
	DeletedAt *time.Time `json:"-"`
	// SessionsValidFrom: access tokens issued before it are refused.
	SessionsValidFrom time.Time `json:"-"`
}

// UserStore keeps users. CreateUser also creates the personal team and the
// owner membership in the same transaction.
type UserStore interface {
	CreateUser(ctx context.Context, u *User, personal *Team) error
	FindUserByID(ctx context.Context, id string) (*User, error)
	FindUserByEmail(ctx context.Context, email string) (*User, error)
	SetUserVerified(ctx context.Context, id string, now time.Time) error
	SetUserPassword(ctx context.Context, id, hash string, now time.Time) error
}

// NormalizeEmail lower-cases and trims an address and checks its form.
func NormalizeEmail(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || !strings.Contains(s[strings.LastIndexByte(s, '@')+1:], ".") {
		return "", &Error{Code: ECodeEmailInvalid, Message: "invalid email format", Info: map[string]any{"field": "email"}}
	}
	return s, nil
}

// ErrEmailInUse refuses an address another account has.
func ErrEmailInUse() error {
	return (&Error{Code: ECodeEmailInUse, Message: "email already in use"}).WithInfo("field", "email")
}
