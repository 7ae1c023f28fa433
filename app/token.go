package app

import (
	"context"
	"time"
)

// RefreshToken is an opaque, rotating token stored only as a hash. Tokens
// rotated from one login share a Family; reusing a spent token revokes the
// whole family.
type RefreshToken struct {
	ID        string
	UserID    string
	Hash      string
	Family    string
	ExpiresAt time.Time
	CreatedAt time.Time
}

// EmailToken is a single-use token sent by mail (verification, invitations).
type EmailToken struct {
	Hash      string
	UserID    string
	Purpose   string
	Email     string
	ExpiresAt time.Time
	CreatedAt time.Time
}

// Email token purposes.
const PurposeVerifyEmail = "verify_email"

// TokenStore keeps refresh and mail tokens.
type TokenStore interface {
	CreateRefreshToken(ctx context.Context, t *RefreshToken) error
	// UseRefreshToken spends a live token and returns it. A token already
	// spent revokes its family and returns ERR_AUTH_008.
	UseRefreshToken(ctx context.Context, hash string, now time.Time) (*RefreshToken, error)
	RevokeRefreshToken(ctx context.Context, hash string, now time.Time) error
	CreateEmailToken(ctx context.Context, t *EmailToken) error
	// ConsumeEmailToken spends a live token of the purpose, or ERR_AUTH_007.
	ConsumeEmailToken(ctx context.Context, hash, purpose string, now time.Time) (*EmailToken, error)
}

// Refresh is what presenting a refresh token does.
type Refresh int

const (
	// RefreshRefused: revoked or expired; nothing changes.
	RefreshRefused Refresh = iota
	// RefreshReused: spent before, so it leaked; its family is revoked.
	RefreshReused
	// RefreshSpent: live; it is marked spent and a new pair is issued.
	RefreshSpent
)

// Presented is what presenting t at now does, given whether it was spent
// and revoked.
func (t *RefreshToken) Presented(now time.Time, used, revoked bool) Refresh {
	switch {
	case revoked || !now.Before(t.ExpiresAt):
		return RefreshRefused
	case used:
		return RefreshReused
	}
	return RefreshSpent
}
