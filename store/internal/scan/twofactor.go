package scan

import (
	"database/sql"
	"errors"

	"folio/app"
)

// TwoFactorCols are what TwoFactor reads from two_factor, the count of
// unused backup codes last; the backends bind the user to the subquery.
const TwoFactorCols = `secret, enabled, last_step, (SELECT COUNT(*) FROM backup_codes WHERE user_id = two_factor.user_id AND used_at IS NULL)`

// TwoFactor reads a user's row of TwoFactorCols; a user without one has
// two-factor off.
func TwoFactor(row Row, userID string) (*app.TwoFactor, error) {
	tf := &app.TwoFactor{UserID: userID}
	err := row.Scan(&tf.Secret, &tf.Enabled, &tf.LastStep, &tf.BackupCodesRemaining)
	if errors.Is(err, sql.ErrNoRows) {
		return tf, nil
	} else if err != nil {
		return nil, err
	}
	return tf, nil
}
