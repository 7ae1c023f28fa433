package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"folio/app"
	"folio/store/internal/scan"
)

var _ app.AccountStore = (*DB)(nil)

// FindAccountByEmail finds a user by email, pending deletion included.
func (db *DB) FindAccountByEmail(ctx context.Context, email string) (*app.User, error) {
	return scan.User(db.pool.QueryRow(ctx, `SELECT `+scan.UserReadCols+` FROM users WHERE email = $1 AND purged_at IS NULL`, email))
}

// UpdateUserProfile sets the fields given and returns the user.
func (db *DB) UpdateUserProfile(ctx context.Context, id string, upd app.ProfileUpdate, now time.Time) (*app.User, error) {
	var u *app.User
	err := db.metaTx(ctx, func(tx pgx.Tx) error {
		var err error
		u, err = scan.User(tx.QueryRow(ctx, `UPDATE users SET name = COALESCE($1, name), timezone = COALESCE($2, timezone),
			pending_email = COALESCE($3, pending_email), updated_at = $4 WHERE id = $5 AND deleted_at IS NULL RETURNING `+scan.UserReadCols,
			upd.Name, upd.Timezone, upd.PendingEmail, ms(now), id))
		return err
	})
	return u, err
}

// ConfirmEmailChange makes the pending address the user's verified email.
func (db *DB) ConfirmEmailChange(ctx context.Context, id, email string, now time.Time) error {
	n, err := db.metaExec(ctx, `UPDATE users SET email = $1, email_verified = true, pending_email = '', updated_at = $2
		WHERE id = $3 AND pending_email = $1 AND deleted_at IS NULL`, email, ms(now), id)
	if isUnique(err, "users_email") {
		return app.ErrEmailInUse()
	} else if err != nil {
		return err
	}
	if n == 0 {
		// A later change request replaced this address.
		return &app.Error{Code: app.ECodeBadEmailToken, Message: "invalid or expired token"}
	}
	return nil
}

// ChangeUserPassword sets the hash and ends every existing session.
func (db *DB) ChangeUserPassword(ctx context.Context, id, hash string, now time.Time) error {
	return db.metaTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE users SET password_hash = $1, sessions_valid_from = $2, updated_at = $2
			WHERE id = $3 AND deleted_at IS NULL`, hash, ms(now), id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return app.ErrNotFound(app.ECodeUserNotFound, "user")
		}
		return revokeRefreshTokens(ctx, tx, id, now)
	})
}

func revokeRefreshTokens(ctx context.Context, tx pgx.Tx, userID string, now time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE refresh_tokens SET revoked_at = $1 WHERE user_id = $2 AND revoked_at IS NULL`, ms(now), userID)
	return err
}

// FindEmailPreferences returns a user's mail opt-ins.
func (db *DB) FindEmailPreferences(ctx context.Context, id string) (*app.EmailPreferences, error) {
	return scan.Preferences(db.pool.QueryRow(ctx, `SELECT `+scan.PreferenceCols+`
		FROM users WHERE id = $1 AND deleted_at IS NULL`, id))
}

// UpdateEmailPreferences sets the flags given and returns all three.
func (db *DB) UpdateEmailPreferences(ctx context.Context, id string, in app.EmailPreferencesInput, now time.Time) (*app.EmailPreferences, error) {
	var p *app.EmailPreferences
	err := db.metaTx(ctx, func(tx pgx.Tx) error {
		var err error
		p, err = scan.Preferences(tx.QueryRow(ctx, `UPDATE users SET marketing_emails = COALESCE($1, marketing_emails),
			product_updates = COALESCE($2, product_updates), weekly_digest = COALESCE($3, weekly_digest), updated_at = $4
			WHERE id = $5 AND deleted_at IS NULL RETURNING `+scan.PreferenceCols,
			in.MarketingEmails, in.ProductUpdates, in.WeeklyDigest, ms(now), id))
		return err
	})
	return p, err
}

// SetUserAvatar sets (or, with "", clears) the profile picture URL.
func (db *DB) SetUserAvatar(ctx context.Context, id, url string, now time.Time) error {
	return db.updateUser(ctx, `UPDATE users SET profile_picture_url = $1, updated_at = $2 WHERE id = $3 AND deleted_at IS NULL`, url, ms(now), id)
}

// RequestUserDeletion marks the account pending deletion, revokes its
// refresh tokens and deactivates every API key it created.
func (db *DB) RequestUserDeletion(ctx context.Context, id, reason, reasonText string, now time.Time) error {
	return db.metaTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE users SET deleted_at = $1, deletion_reason = $2, deletion_reason_text = $3, updated_at = $1
			WHERE id = $4 AND deleted_at IS NULL`, ms(now), reason, reasonText, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return &app.Error{Code: app.ECodeDeletionRunning, Message: "account deletion is already in progress"}
		}
		if err := revokeRefreshTokens(ctx, tx, id, now); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE api_keys SET is_active = false, updated_at = $1 WHERE is_active AND created_by = $2`, ms(now), id)
		return err
	})
}

// RestoreUser ends pending deletion.
func (db *DB) RestoreUser(ctx context.Context, id string, now time.Time) error {
	n, err := db.metaExec(ctx, `UPDATE users SET deleted_at = NULL, deletion_reason = '', deletion_reason_text = '', updated_at = $1
		WHERE id = $2 AND deleted_at IS NOT NULL AND purged_at IS NULL`, ms(now), id)
	if err != nil {
		return err
	}
	if n == 0 {
		return &app.Error{Code: app.ECodeRestoreFailed, Message: "failed to restore the account"}
	}
	return nil
}

// FindUsersToPurge lists accounts pending deletion since before t.
func (db *DB) FindUsersToPurge(ctx context.Context, before time.Time) ([]string, error) {
	rows, err := db.pool.Query(ctx, `SELECT id FROM users WHERE deleted_at IS NOT NULL AND purged_at IS NULL AND deleted_at <= $1
		ORDER BY deleted_at, seq LIMIT 1000`, ms(before))
	if err != nil {
		return nil, err
	}
	return scanStrings(rows)
}

// PurgeUser erases an account whose deletion was requested before the given
// time (an account restored meanwhile is left alone). The user row stays as
// a tombstone without personal data, so records that name the user keep a
// valid reference; the address is freed. The user's row is locked first:
// two replicas' janitors purging at once purge once.
func (db *DB) PurgeUser(ctx context.Context, id string, before, now time.Time) error {
	return db.metaTx(ctx, func(tx pgx.Tx) error {
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM users WHERE id = $1 AND deleted_at IS NOT NULL AND deleted_at <= $2 AND purged_at IS NULL FOR UPDATE`,
			id, ms(before)).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		} else if err != nil {
			return err
		}
		if err := leaveTeams(ctx, tx, id, now); err != nil {
			return err
		}
		for _, q := range []string{
			`DELETE FROM members WHERE user_id = $1`,
			`DELETE FROM refresh_tokens WHERE user_id = $1`,
			`DELETE FROM email_tokens WHERE user_id = $1`,
			`DELETE FROM backup_codes WHERE user_id = $1`,
			`DELETE FROM two_factor WHERE user_id = $1`,
		} {
			if _, err := tx.Exec(ctx, q, id); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, `UPDATE users SET email = 'deleted+' || id || '@deleted.invalid', name = 'Deleted user',
			password_hash = '', profile_picture_url = '', timezone = '', pending_email = '', email_verified = false,
			two_factor_enabled = false, deletion_reason_text = '', marketing_emails = false, product_updates = false, weekly_digest = false,
			purged_at = $1, updated_at = $1 WHERE id = $2`, ms(now), id)
		return err
	})
}

// leaveTeams takes a purged user out of their live teams: the personal team
// is deleted; a team they own passes to the longest-standing admin (else
// member, else viewer) whose account is live, or is deleted when nobody is
// left; the feed of every shared team records member_left.
func leaveTeams(ctx context.Context, tx pgx.Tx, userID string, now time.Time) error {
	rows, err := tx.Query(ctx, `SELECT `+scan.MembershipCols+scan.MembershipFrom+`
		WHERE m.user_id = $1 AND t.deleted_at IS NULL ORDER BY m.seq`, userID)
	if err != nil {
		return err
	}
	list, err := scan.List(rows, scan.ReadMembership)
	rows.Close()
	if err != nil {
		return err
	}
	for _, m := range list {
		if m.Personal {
			if err := deleteTeam(ctx, tx, m.TeamID, now); err != nil {
				return err
			}
			continue
		}
		if m.Role == app.RoleOwner {
			var heir, heirRole string
			err := tx.QueryRow(ctx, `SELECT m.user_id, m.role FROM members m JOIN users u ON u.id = m.user_id
				WHERE m.team_id = $1 AND m.user_id != $2 AND u.deleted_at IS NULL
				ORDER BY CASE m.role WHEN 'admin' THEN 0 WHEN 'member' THEN 1 ELSE 2 END, m.joined_at, m.seq LIMIT 1`, m.TeamID, userID).Scan(&heir, &heirRole)
			if errors.Is(err, pgx.ErrNoRows) {
				if err := deleteTeam(ctx, tx, m.TeamID, now); err != nil {
					return err
				}
				continue
			} else if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE members SET role = 'owner' WHERE team_id = $1 AND user_id = $2`, m.TeamID, heir); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE teams SET owner_id = $1, updated_at = $2 WHERE id = $3`, heir, ms(now), m.TeamID); err != nil {
				return err
			}
			if err := insertActivity(ctx, tx, app.OwnerSucceededActivity(m.TeamID, userID, heir, heirRole, now)); err != nil {
				return err
			}
		}
		if err := insertActivity(ctx, tx, app.DeletedMemberLeftActivity(m.TeamID, userID, now)); err != nil {
			return err
		}
	}
	return nil
}
