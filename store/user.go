package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"folio/app"
)

var _ app.UserStore = (*DB)(nil)

const userCols = `id, email, name, password_hash, profile_picture_url, email_verified, two_factor_enabled, timezone, personal_team_id, created_at, updated_at`

// userReadCols are userCols plus the columns of later migrations, as scanUser reads them.
const userReadCols = userCols + `, pending_email, deleted_at, sessions_valid_from`

// CreateUser inserts the user, the personal team and the owner membership.
func (db *DB) CreateUser(ctx context.Context, u *app.User, team *app.Team) error {
	return db.tx(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO users (`+userCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			u.ID, u.Email, u.Name, u.PasswordHash, u.ProfilePictureURL, boolInt(u.EmailVerified), boolInt(u.TwoFactorEnabled),
			u.Timezone, u.PersonalTeamID, ms(u.CreatedAt), ms(u.UpdatedAt))
		if isUnique(err, "email") {
			return (&app.Error{Code: app.ECodeEmailInUse, Message: "email already in use"}).WithInfo("field", "email")
		} else if err != nil {
			return err
		}
		if err := insertTeam(ctx, tx, team); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO members (team_id, user_id, role, joined_at) VALUES (?, ?, ?, ?)`,
			team.ID, u.ID, app.RoleOwner, ms(u.CreatedAt))
		return err
	})
}

func scanUser(row scanner) (*app.User, error) {
	var u app.User
	var verified, tfa int
	var created, updated, validFrom int64
	var deleted sql.NullInt64
	err := row.Scan(&u.ID, &u.Email, &u.Name, &u.PasswordHash, &u.ProfilePictureURL, &verified, &tfa, &u.Timezone,
		&u.PersonalTeamID, &created, &updated, &u.PendingEmail, &deleted, &validFrom)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound(app.ECodeUserNotFound, "user")
	} else if err != nil {
		return nil, err
	}
	u.EmailVerified, u.TwoFactorEnabled = verified == 1, tfa == 1
	u.CreatedAt, u.UpdatedAt = fromMS(created), fromMS(updated)
	u.DeletedAt, u.SessionsValidFrom = fromNullMS(deleted), fromMS(validFrom)
	return &u, nil
}

// FindUserByID returns a live user.
func (db *DB) FindUserByID(ctx context.Context, id string) (*app.User, error) {
	return scanUser(db.read.QueryRowContext(ctx, `SELECT `+userReadCols+` FROM users WHERE id = ? AND deleted_at IS NULL`, id))
}

// FindUserByEmail returns a live user by normalized email.
func (db *DB) FindUserByEmail(ctx context.Context, email string) (*app.User, error) {
	return scanUser(db.read.QueryRowContext(ctx, `SELECT `+userReadCols+` FROM users WHERE email = ? AND deleted_at IS NULL`, email))
}

// SetUserVerified marks the user's email verified.
func (db *DB) SetUserVerified(ctx context.Context, id string, now time.Time) error {
	return db.updateUser(ctx, `UPDATE users SET email_verified = 1, updated_at = ? WHERE id = ? AND deleted_at IS NULL`, ms(now), id)
}

// SetUserPassword replaces the password hash.
func (db *DB) SetUserPassword(ctx context.Context, id, hash string, now time.Time) error {
	return db.updateUser(ctx, `UPDATE users SET password_hash = ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL`, hash, ms(now), id)
}

func (db *DB) updateUser(ctx context.Context, query string, args ...any) error {
	res, err := db.write.ExecContext(ctx, query, args...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return app.ErrNotFound(app.ECodeUserNotFound, "user")
	}
	return nil
}
