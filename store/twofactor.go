package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"folio/app"
	"folio/store/internal/scan"
)

var _ app.TwoFactorStore = (*DB)(nil)

// FindTwoFactor returns a user's two-factor state and unused backup codes.
func (db *DB) FindTwoFactor(ctx context.Context, userID string) (*app.TwoFactor, error) {
	return scan.TwoFactor(db.read.QueryRowContext(ctx, `SELECT `+scan.TwoFactorCols+` FROM two_factor WHERE user_id = ?`, userID), userID)
}

// StartTwoFactor stores a pending secret with new backup codes.
func (db *DB) StartTwoFactor(ctx context.Context, userID, secret string, codeHashes []string, now time.Time) error {
	return db.tx(ctx, func(tx *Tx) error {
		var enabled bool
		err := tx.QueryRowContext(ctx, `SELECT enabled FROM two_factor WHERE user_id = ?`, userID).Scan(&enabled)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if enabled {
			return &app.Error{Code: app.ECodeTwoFactorOn, Message: "two-factor authentication is already enabled"}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO two_factor (user_id, secret, enabled, last_step, created_at, updated_at)
			VALUES (?, ?, 0, 0, ?, ?) ON CONFLICT (user_id) DO UPDATE SET secret = excluded.secret, last_step = 0, updated_at = excluded.updated_at`,
			userID, secret, ms(now), ms(now)); err != nil {
			return err
		}
		return replaceBackupCodes(ctx, tx, userID, codeHashes, now)
	})
}

func replaceBackupCodes(ctx context.Context, tx *Tx, userID string, codeHashes []string, now time.Time) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM backup_codes WHERE user_id = ?`, userID); err != nil {
		return err
	}
	for _, h := range codeHashes {
		if _, err := tx.ExecContext(ctx, `INSERT INTO backup_codes (user_id, hash, created_at) VALUES (?, ?, ?)`, userID, h, ms(now)); err != nil {
			return err
		}
	}
	return nil
}

// EnableTwoFactor turns two-factor on, recording the step of the code used,
// and replaces the backup codes when codeHashes is not nil.
func (db *DB) EnableTwoFactor(ctx context.Context, userID string, step int64, codeHashes []string, now time.Time) error {
	return db.tx(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE two_factor SET enabled = 1, last_step = ?, updated_at = ?
			WHERE user_id = ? AND enabled = 0 AND last_step < ?`, step, ms(now), userID, step)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return &app.Error{Code: app.ECodeBadTwoFactor, Message: "invalid two-factor code"}
		}
		if _, err = tx.ExecContext(ctx, `UPDATE users SET two_factor_enabled = 1, updated_at = ? WHERE id = ?`, ms(now), userID); err != nil {
			return err
		}
		if codeHashes != nil {
			return replaceBackupCodes(ctx, tx, userID, codeHashes, now)
		}
		return nil
	})
}

// UseTOTPStep records a time step as used, refusing any step not after the
// last one used (a replayed or older code).
func (db *DB) UseTOTPStep(ctx context.Context, userID string, step int64, now time.Time) error {
	res, err := db.write.ExecContext(ctx, `UPDATE two_factor SET last_step = ?, updated_at = ?
		WHERE user_id = ? AND enabled = 1 AND last_step < ?`, step, ms(now), userID, step)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return &app.Error{Code: app.ECodeBadTwoFactor, Message: "invalid two-factor code: this code was already used; wait for the next one"}
	}
	return nil
}

// UseBackupCode spends an unused backup code.
func (db *DB) UseBackupCode(ctx context.Context, userID, hash string, now time.Time) error {
	res, err := db.write.ExecContext(ctx, `UPDATE backup_codes SET used_at = ? WHERE user_id = ? AND hash = ? AND used_at IS NULL`,
		ms(now), userID, hash)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return &app.Error{Code: app.ECodeBadTwoFactor, Message: "invalid two-factor code"}
	}
	return nil
}

// ReplaceBackupCodes discards every backup code and stores new ones.
func (db *DB) ReplaceBackupCodes(ctx context.Context, userID string, codeHashes []string, now time.Time) error {
	return db.tx(ctx, func(tx *Tx) error { return replaceBackupCodes(ctx, tx, userID, codeHashes, now) })
}

// DisableTwoFactor turns two-factor off and forgets the secret and codes.
func (db *DB) DisableTwoFactor(ctx context.Context, userID string, now time.Time) error {
	return db.tx(ctx, func(tx *Tx) error {
		for _, q := range []string{`DELETE FROM two_factor WHERE user_id = ?`, `DELETE FROM backup_codes WHERE user_id = ?`} {
			if _, err := tx.ExecContext(ctx, q, userID); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `UPDATE users SET two_factor_enabled = 0, updated_at = ? WHERE id = ?`, ms(now), userID)
		return err
	})
}
