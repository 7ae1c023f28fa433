package scan

import (
	"database/sql"
	"errors"

	"folio/app"
)

// RefreshTokenCols are what RefreshToken reads.
const RefreshTokenCols = `id, user_id, hash, family, expires_at, created_at, used_at, revoked_at`

// RefreshToken reads one row of RefreshTokenCols and whether the token was
// spent and revoked; no row is nil with sql.ErrNoRows.
func RefreshToken(row Row) (t *app.RefreshToken, used, revoked bool, err error) {
	t = &app.RefreshToken{}
	var expires, created int64
	var usedAt, revokedAt sql.NullInt64
	if err := row.Scan(&t.ID, &t.UserID, &t.Hash, &t.Family, &expires, &created, &usedAt, &revokedAt); err != nil {
		return nil, false, false, err
	}
	t.ExpiresAt, t.CreatedAt = FromMS(expires), FromMS(created)
	return t, usedAt.Valid, revokedAt.Valid, nil
}

// EmailTokenCols are what EmailToken reads.
const EmailTokenCols = `hash, user_id, purpose, email, expires_at, created_at`

// EmailToken reads one row of EmailTokenCols; no row is an invalid token.
func EmailToken(row Row) (*app.EmailToken, error) {
	var t app.EmailToken
	var expires, created int64
	err := row.Scan(&t.Hash, &t.UserID, &t.Purpose, &t.Email, &expires, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &app.Error{Code: app.ECodeBadEmailToken, Message: "invalid or expired token"}
	} else if err != nil {
		return nil, err
	}
	t.ExpiresAt, t.CreatedAt = FromMS(expires), FromMS(created)
	return &t, nil
}
