package scan

import (
	"database/sql"
	"errors"
	"time"

	"folio/app"
)

// InvitationCols are the columns Invitation reads: the invitation, its
// team's name and its inviter, from InvitationFrom.
const InvitationCols = `i.id, i.team_id, t.name, i.email, i.role, i.status, i.invited_by, COALESCE(u.name, ''), COALESCE(u.email, ''),
	i.expires_at, i.created_at`

// InvitationFrom joins what InvitationCols names.
const InvitationFrom = ` FROM invitations i JOIN teams t ON t.id = i.team_id LEFT JOIN users u ON u.id = i.invited_by `

// Invitation reads one row of InvitationCols as it reads at now.
func Invitation(row Row, now time.Time) (*app.Invitation, error) {
	var inv app.Invitation
	var by app.ActivityUser
	var expires, created int64
	err := row.Scan(&inv.ID, &inv.TeamID, &inv.TeamName, &inv.Email, &inv.Role, &inv.Status, &inv.InvitedByID, &by.Name, &by.Email,
		&expires, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound(app.ECodeInvitationNotFound, "invitation")
	} else if err != nil {
		return nil, err
	}
	by.ID = inv.InvitedByID
	inv.InvitedBy = &by
	inv.ExpiresAt, inv.CreatedAt = FromMS(expires), FromMS(created)
	inv.Normalize(now)
	return &inv, nil
}

// InvitationAt is Invitation as rows read at now, for List.
func InvitationAt(now time.Time) func(Row) (*app.Invitation, error) {
	return func(row Row) (*app.Invitation, error) { return Invitation(row, now) }
}
