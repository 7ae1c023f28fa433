package scan

import (
	"database/sql"
	"errors"

	"folio/app"
)

// UserCols are the columns a new user sets.
const UserCols = `id, email, name, password_hash, profile_picture_url, email_verified, two_factor_enabled, timezone, personal_team_id, created_at, updated_at`

// UserReadCols are UserCols plus the columns of later migrations, as User
// reads them.
const UserReadCols = UserCols + `, pending_email, deleted_at, sessions_valid_from`

// User reads one row of UserReadCols. Flags scan into bool from SQLite's
// 0/1 integers (database/sql converts them) and PostgreSQL's BOOLEAN alike.
func User(row Row) (*app.User, error) {
	var u app.User
	var created, updated, validFrom int64
	var deleted sql.NullInt64
	err := row.Scan(&u.ID, &u.Email, &u.Name, &u.PasswordHash, &u.ProfilePictureURL, &u.EmailVerified, &u.TwoFactorEnabled, &u.Timezone,
		&u.PersonalTeamID, &created, &updated, &u.PendingEmail, &deleted, &validFrom)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound(app.ECodeUserNotFound, "user")
	} else if err != nil {
		return nil, err
	}
	u.CreatedAt, u.UpdatedAt = FromMS(created), FromMS(updated)
	u.DeletedAt, u.SessionsValidFrom = FromNullMS(deleted), FromMS(validFrom)
	return &u, nil
}

// PreferenceCols are the mail opt-ins Preferences reads.
const PreferenceCols = `marketing_emails, product_updates, weekly_digest`

// Preferences reads one row of PreferenceCols.
func Preferences(row Row) (*app.EmailPreferences, error) {
	var p app.EmailPreferences
	err := row.Scan(&p.MarketingEmails, &p.ProductUpdates, &p.WeeklyDigest)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound(app.ECodeUserNotFound, "user")
	} else if err != nil {
		return nil, err
	}
	return &p, nil
}
