package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"folio/app"
	"folio/store/internal/scan"
)

var _ app.TwoFactorStore = (*DB)(nil)

// FindTwoFactor returns a user's two-factor state and unused backup codes.
func (db *DB) FindTwoFactor(ctx context.Context, userID string) (*app.TwoFactor, error) {
	return scan.TwoFactor(db.pool.QueryRow(ctx, `SELECT `+scan.TwoFactorCols+` FROM two_factor WHERE user_id = $1`, userID), userID)
}

// StartTwoFactor stores a pending secret with new backup codes.
func (db *DB) StartTwoFactor(ctx context.Context, userID, secret string, codeHashes []string, now time.Time) error {
	return db.tx(ctx, func(tx pgx.Tx) error {
		var enabled bool
		err := tx.QueryRow(ctx, `SELECT enabled FROM two_factor WHERE user_id = $1 FOR UPDATE`, userID).Scan(&enabled)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if enabled {
			return &app.Error{Code: app.ECodeTwoFactorOn, Message: "two-factor authentication is already enabled"}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO two_factor (user_id, secret, enabled, last_step, created_at, updated_at)
			VALUES ($1, $2, false, 0, $3, $3) ON CONFLICT (user_id) DO UPDATE SET secret = excluded.secret, last_step = 0, updated_at = excluded.updated_at`,
			userID, secret, ms(now)); err != nil {
			return err
		}
		return replaceBackupCodes(ctx, tx, userID, codeHashes, now)
	})
}

func replaceBackupCodes(ctx context.Context, tx pgx.Tx, userID string, codeHashes []string, now time.Time) error {
	if _, err := tx.Exec(ctx, `DELETE FROM backup_codes WHERE user_id = $1`, userID); err != nil {
		return err
	}
	if len(codeHashes) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `INSERT INTO backup_codes (user_id, hash, created_at) SELECT $1, h, $3 FROM unnest($2::text[]) AS h`,
		userID, codeHashes, ms(now))
	return err
}

// EnableTwoFactor turns two-factor on, recording the step of the code used,
// and replaces the backup codes when codeHashes is not nil.
func (db *DB) EnableTwoFactor(ctx context.Context, userID string, step int64, codeHashes []string, now time.Time) error {
	return db.metaTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE two_factor SET enabled = true, last_step = $1, updated_at = $2
			WHERE user_id = $3 AND NOT enabled AND last_step < $1`, step, ms(now), userID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return &app.Error{Code: app.ECodeBadTwoFactor, Message: "invalid two-factor code"}
		}
		if _, err = tx.Exec(ctx, `UPDATE users SET two_factor_enabled = true, updated_at = $1 WHERE id = $2`, ms(now), userID); err != nil {
			return err
		}
		if codeHashes != nil {
			return replaceBackupCodes(ctx, tx, userID, codeHashes, now)
		}
		return nil
	})
}

// UseTOTPStep records a time step as used, refusing any step not after the
// last one used (a replayed or older code) — on every replica: the row's
// lock makes a second use of one step wait, then find it used.
func (db *DB) UseTOTPStep(ctx context.Context, userID string, step int64, now time.Time) error {
	tag, err := db.pool.Exec(ctx, `UPDATE two_factor SET last_step = $1, updated_at = $2
		WHERE user_id = $3 AND enabled AND last_step < $1`, step, ms(now), userID)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return &app.Error{Code: app.ECodeBadTwoFactor, Message: "invalid two-factor code: this code was already used; wait for the next one"}
	}
	return nil
}

// UseBackupCode spends an unused backup code.
func (db *DB) UseBackupCode(ctx context.Context, userID, hash string, now time.Time) error {
	tag, err := db.pool.Exec(ctx, `UPDATE backup_codes SET used_at = $1 WHERE user_id = $2 AND hash = $3 AND used_at IS NULL`,
		ms(now), userID, hash)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return &app.Error{Code: app.ECodeBadTwoFactor, Message: "invalid two-factor code"}
	}
	return nil
}

// ReplaceBackupCodes discards every backup code and stores new ones.
func (db *DB) ReplaceBackupCodes(ctx context.Context, userID string, codeHashes []string, now time.Time) error {
	return db.tx(ctx, func(tx pgx.Tx) error { return replaceBackupCodes(ctx, tx, userID, codeHashes, now) })
}

// DisableTwoFactor turns two-factor off and forgets the secret and codes.
func (db *DB) DisableTwoFactor(ctx context.Context, userID string, now time.Time) error {
	return db.metaTx(ctx, func(tx pgx.Tx) error {
		for _, q := range []string{`DELETE FROM two_factor WHERE user_id = $1`, `DELETE FROM backup_codes WHERE user_id = $1`} {
			if _, err := tx.Exec(ctx, q, userID); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `UPDATE users SET two_factor_enabled = false, updated_at = $1 WHERE id = $2`, ms(now), userID)
		return err
	})
}
