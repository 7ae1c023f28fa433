package store

import (
	"context"
	"time"

	"folio/app"
	"folio/store/internal/scan"
)

var _ app.SessionStore = (*DB)(nil)

// CreateSession stores a dashboard session (its token's hash only).
func (db *DB) CreateSession(ctx context.Context, s *app.WebSession) error {
	_, err := db.write.ExecContext(ctx, `INSERT INTO sessions (`+scan.SessionCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.Hash, s.UserID, s.TeamID, s.Pending2FA, s.UserAgent, s.IP, ms(s.CreatedAt), ms(s.LastSeenAt), ms(s.ExpiresAt))
	return err
}

// FindSessionByHash returns the session whose token hashes to hash.
func (db *DB) FindSessionByHash(ctx context.Context, hash string) (*app.WebSession, error) {
	return scan.Session(db.read.QueryRowContext(ctx, `SELECT `+scan.SessionCols+` FROM sessions WHERE hash = ?`, hash))
}

// TouchSession records a request and the session's current team.
func (db *DB) TouchSession(ctx context.Context, id, teamID string, now time.Time) error {
	_, err := db.write.ExecContext(ctx, `UPDATE sessions SET team_id = ?, last_seen_at = ? WHERE id = ?`, teamID, ms(now), id)
	return err
}

// DeleteSession ends one session.
func (db *DB) DeleteSession(ctx context.Context, id string) error {
	_, err := db.write.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id)
	return err
}

// DeleteUserSessions ends every session of a user except keepID.
func (db *DB) DeleteUserSessions(ctx context.Context, userID, keepID string) error {
	_, err := db.write.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ? AND id != ?`, userID, keepID)
	return err
}

// DeleteExpiredSessions removes sessions past their absolute end or idle for
// longer than app.SessionIdle.
func (db *DB) DeleteExpiredSessions(ctx context.Context, now time.Time) (int, error) {
	res, err := db.write.ExecContext(ctx, `DELETE FROM sessions WHERE expires_at <= ? OR last_seen_at <= ?`,
		ms(now), ms(now.Add(-app.SessionIdle)))
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
