package scan

import (
	"database/sql"
	"errors"

	"folio/app"
)

// SessionCols are the columns of a dashboard session, as Session reads them.
const SessionCols = `id, hash, user_id, team_id, pending_2fa, user_agent, ip, created_at, last_seen_at, expires_at`

// Session reads one row of SessionCols; no row is an unauthenticated caller.
func Session(row Row) (*app.WebSession, error) {
	var s app.WebSession
	var created, seen, expires int64
	err := row.Scan(&s.ID, &s.Hash, &s.UserID, &s.TeamID, &s.Pending2FA, &s.UserAgent, &s.IP, &created, &seen, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &app.Error{Code: app.ECodeUnauthenticated, Message: "no such session"}
	} else if err != nil {
		return nil, err
	}
	s.CreatedAt, s.LastSeenAt, s.ExpiresAt = FromMS(created), FromMS(seen), FromMS(expires)
	return &s, nil
}
