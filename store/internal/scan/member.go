package scan

import (
	"database/sql"
	"errors"

	"folio/app"
)

// MemberCols are read by Member, from MemberFrom.
const MemberCols = `m.team_id, m.user_id, u.email, u.name, m.role, m.joined_at`

// MemberFrom joins what MemberCols names.
const MemberFrom = ` FROM members m JOIN users u ON u.id = m.user_id `

// Member reads one row of MemberCols.
func Member(row Row) (*app.Member, error) {
	var m app.Member
	var joined int64
	err := row.Scan(&m.TeamID, &m.UserID, &m.Email, &m.Name, &m.Role, &joined)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound(app.ECodeMemberNotFound, "team member")
	} else if err != nil {
		return nil, err
	}
	m.JoinedAt = FromMS(joined)
	return &m, nil
}
