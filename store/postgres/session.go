package postgres

import (
	"context"
	"time"

	"folio/app"
	"folio/store/internal/scan"
)

var _ app.SessionStore = (*DB)(nil)

// CreateSession stores a dashboard session (its token's hash only).
func (db *DB) CreateSession(ctx context.Context, s *app.WebSession) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO sessions (`+scan.SessionCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		s.ID, s.Hash, s.UserID, s.TeamID, s.Pending2FA, s.UserAgent, s.IP, ms(s.CreatedAt), ms(s.LastSeenAt), ms(s.ExpiresAt))
	return err
}

// FindSessionByHash returns the session whose token hashes to hash.
func (db *DB) FindSessionByHash(ctx context.Context, hash string) (*app.WebSession, error) {
	return scan.Session(db.pool.QueryRow(ctx, `SELECT `+scan.SessionCols+` FROM sessions WHERE hash = $1`, hash))
}

// TouchSession records a request and the session's current team.
func (db *DB) TouchSession(ctx context.Context, id, teamID string, now time.Time) error {
	_, err := db.pool.Exec(ctx, `UPDATE sessions SET team_id = $1, last_seen_at = $2 WHERE id = $3`, teamID, ms(now), id)
	return err
}

// DeleteSession ends one session.
func (db *DB) DeleteSession(ctx context.Context, id string) error {
	_, err := db.pool.Exec(ctx, `DELETE FROM sessions WHERE id = $1`, id)
	return err
}

// DeleteUserSessions ends every session of a user except keepID.
func (db *DB) DeleteUserSessions(ctx context.Context, userID, keepID string) error {
	_, err := db.pool.Exec(ctx, `DELETE FROM sessions WHERE user_id = $1 AND id != $2`, userID, keepID)
	return err
}

// DeleteExpiredSessions removes sessions past their absolute end or idle for
// longer than app.SessionIdle, in statements of at most sessionSweepRows
// rows (short transactions beside the requests of every replica).
func (db *DB) DeleteExpiredSessions(ctx context.Context, now time.Time) (int, error) {
	n := 0
	for {
		tag, err := db.pool.Exec(ctx, `DELETE FROM sessions WHERE id = ANY(ARRAY(
			SELECT id FROM sessions WHERE expires_at <= $1 OR last_seen_at <= $2 LIMIT $3))`,
			ms(now), ms(now.Add(-app.SessionIdle)), sessionSweepRows)
		if err != nil {
			return n, err
		}
		n += int(tag.RowsAffected())
		if tag.RowsAffected() < sessionSweepRows {
			return n, nil
		}
	}
}

// sessionSweepRows bounds one statement of DeleteExpiredSessions.
const sessionSweepRows = 1000
