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

// MembershipCols are read by Membership: a user's memberships of live
// teams, from MembershipFrom.
const MembershipCols = `m.team_id, m.role, t.is_personal`

// MembershipFrom joins what MembershipCols names.
const MembershipFrom = ` FROM members m JOIN teams t ON t.id = m.team_id `

// Membership is one of a user's teams, as a purge leaves it.
type Membership struct {
	TeamID, Role string
	Personal     bool
}

// ReadMembership reads one row of MembershipCols.
func ReadMembership(row Row) (Membership, error) {
	var m Membership
	err := row.Scan(&m.TeamID, &m.Role, &m.Personal)
	return m, err
}
