package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"folio/app"
	"folio/store/internal/scan"
)

var _ app.UserStore = (*DB)(nil)

// CreateUser inserts the user, the personal team and the owner membership.
func (db *DB) CreateUser(ctx context.Context, u *app.User, team *app.Team) error {
	return db.metaTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO users (`+scan.UserCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
			u.ID, u.Email, u.Name, u.PasswordHash, u.ProfilePictureURL, u.EmailVerified, u.TwoFactorEnabled,
			u.Timezone, u.PersonalTeamID, ms(u.CreatedAt), ms(u.UpdatedAt))
		if isUnique(err, "users_email") {
			return app.ErrEmailInUse()
		} else if err != nil {
			return err
		}
		if err := insertTeam(ctx, tx, team); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO members (team_id, user_id, role, joined_at) VALUES ($1, $2, $3, $4)`,
			team.ID, u.ID, app.RoleOwner, ms(u.CreatedAt))
		return err
	})
}

// FindUserByID returns a live user.
func (db *DB) FindUserByID(ctx context.Context, id string) (*app.User, error) {
	return scan.User(db.pool.QueryRow(ctx, `SELECT `+scan.UserReadCols+` FROM users WHERE id = $1 AND deleted_at IS NULL`, id))
}

// FindUserByEmail returns a live user by normalized email.
func (db *DB) FindUserByEmail(ctx context.Context, email string) (*app.User, error) {
	return scan.User(db.pool.QueryRow(ctx, `SELECT `+scan.UserReadCols+` FROM users WHERE email = $1 AND deleted_at IS NULL`, email))
}

// SetUserVerified marks the user's email verified.
func (db *DB) SetUserVerified(ctx context.Context, id string, now time.Time) error {
	return db.updateUser(ctx, `UPDATE users SET email_verified = true, updated_at = $1 WHERE id = $2 AND deleted_at IS NULL`, ms(now), id)
}

// SetUserPassword replaces the password hash.
func (db *DB) SetUserPassword(ctx context.Context, id, hash string, now time.Time) error {
	return db.updateUser(ctx, `UPDATE users SET password_hash = $1, updated_at = $2 WHERE id = $3 AND deleted_at IS NULL`, hash, ms(now), id)
}

func (db *DB) updateUser(ctx context.Context, query string, args ...any) error {
	n, err := db.metaExec(ctx, query, args...)
	if err != nil {
		return err
	}
	if n == 0 {
		return app.ErrNotFound(app.ECodeUserNotFound, "user")
	}
	return nil
}
