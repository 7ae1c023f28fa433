package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"folio/app"
	"folio/store/internal/scan"
)

var _ app.TokenStore = (*DB)(nil)

// CreateRefreshToken stores a refresh token's hash.
func (db *DB) CreateRefreshToken(ctx context.Context, t *app.RefreshToken) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO refresh_tokens (id, user_id, hash, family, expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		t.ID, t.UserID, t.Hash, t.Family, ms(t.ExpiresAt), ms(t.CreatedAt))
	return err
}

// UseRefreshToken spends a live token. Presenting a spent token again means
// it leaked: the whole family is revoked. The token's row is locked, so of
// two replicas spending it at once one wins and the other sees it spent.
func (db *DB) UseRefreshToken(ctx context.Context, hash string, now time.Time) (*app.RefreshToken, error) {
	bad := &app.Error{Code: app.ECodeBadRefreshToken, Message: "invalid or expired refresh token"}
	var out *app.RefreshToken
	var reused bool
	err := db.tx(ctx, func(tx pgx.Tx) error {
		t, used, revoked, err := scan.RefreshToken(tx.QueryRow(ctx, `SELECT `+scan.RefreshTokenCols+` FROM refresh_tokens
			WHERE hash = $1 FOR UPDATE`, hash))
		if errors.Is(err, pgx.ErrNoRows) {
			return bad
		} else if err != nil {
			return err
		}
		switch t.Presented(now, used, revoked) {
		case app.RefreshRefused:
			return bad
		case app.RefreshReused:
			reused = true
			_, err := tx.Exec(ctx, `UPDATE refresh_tokens SET revoked_at = $1 WHERE family = $2 AND revoked_at IS NULL`, ms(now), t.Family)
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE refresh_tokens SET used_at = $1 WHERE id = $2`, ms(now), t.ID); err != nil {
			return err
		}
		out = t
		return nil
	})
	if err != nil {
		return nil, err
	}
	if reused {
		return nil, bad
	}
	return out, nil
}

// RevokeRefreshToken revokes a token and its family (logout).
func (db *DB) RevokeRefreshToken(ctx context.Context, hash string, now time.Time) error {
	_, err := db.pool.Exec(ctx, `UPDATE refresh_tokens SET revoked_at = $1
		WHERE family = (SELECT family FROM refresh_tokens WHERE hash = $2) AND revoked_at IS NULL`, ms(now), hash)
	return err
}

// CreateEmailToken stores a mail token's hash.
func (db *DB) CreateEmailToken(ctx context.Context, t *app.EmailToken) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO email_tokens (hash, user_id, purpose, email, expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		t.Hash, t.UserID, t.Purpose, t.Email, ms(t.ExpiresAt), ms(t.CreatedAt))
	return err
}

// ConsumeEmailToken spends a live token of the given purpose; the UPDATE's
// row lock makes a second concurrent spend find it used.
func (db *DB) ConsumeEmailToken(ctx context.Context, hash, purpose string, now time.Time) (*app.EmailToken, error) {
	return scan.EmailToken(db.pool.QueryRow(ctx, `UPDATE email_tokens SET used_at = $1
		WHERE hash = $2 AND purpose = $3 AND used_at IS NULL AND expires_at > $1
		RETURNING `+scan.EmailTokenCols, ms(now), hash, purpose))
}
