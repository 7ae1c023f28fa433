package app

import (
	"context"
	"slices"
)

// Authentication kinds of a request.
const (
	AuthJWT = "jwt"
	AuthKey = "key"
)

// Principal is who is calling and for which team. The web layer builds it
// from a JWT (plus X-Team-Id) or an API key and puts it in the context.
type Principal struct {
	Kind        string // AuthJWT or AuthKey
	UserID      string // the user (for a key: its creator)
	TeamID      string // the team every query is scoped by
	Role        string // the user's role in TeamID (for a key: "member")
	KeyID       string
	Permissions []string // for keys only
	Verified    bool     // the user's email is verified

	metaGen int64 // the metadata generation the request was authenticated at (MetaCache.Pin)
}

// Can reports whether the principal holds a key permission; JWT callers are
// governed by their role instead and always pass.
func (p *Principal) Can(perm string) bool {
	return p.Kind != AuthKey || slices.Contains(p.Permissions, perm)
}

// Require returns ERR_AUTH_005 when the principal lacks perm.
func (p *Principal) Require(perm string) error {
	if p.Can(perm) {
		return nil
	}
	return ErrForbidden(perm, p.Permissions)
}

type principalKey struct{}

// WithPrincipal returns a context carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the caller, or ERR_AUTH_003 when there is none.
func PrincipalFrom(ctx context.Context) (*Principal, error) {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	if p == nil {
		return nil, &Error{Code: ECodeUnauthenticated, Message: "authentication required"}
	}
	return p, nil
}
