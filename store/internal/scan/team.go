package scan

import (
	"database/sql"
	"errors"

	"folio/app"
)

// TeamInsertCols are the columns a new team sets.
const TeamInsertCols = `id, name, slug, is_personal, owner_id, plan, credits, created_at, updated_at`

// TeamCols are read by Team (table teams, unaliased); the member count is
// computed.
const TeamCols = `teams.id, teams.name, teams.slug, teams.is_personal, teams.owner_id, teams.plan, teams.credits, teams.created_at, teams.updated_at,
	(SELECT COUNT(*) FROM members c WHERE c.team_id = teams.id)`

// Team reads one row of TeamCols and then extra.
func Team(row Row, extra ...any) (*app.Team, error) {
	var t app.Team
	var created, updated int64
	err := row.Scan(append([]any{&t.ID, &t.Name, &t.Slug, &t.IsPersonal, &t.OwnerID, &t.Plan, &t.Credits, &created, &updated, &t.MemberCount}, extra...)...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound(app.ECodeTeamNotFound, "team")
	} else if err != nil {
		return nil, err
	}
	t.CreatedAt, t.UpdatedAt = FromMS(created), FromMS(updated)
	return &t, nil
}

// TeamWithRole reads one row of TeamCols followed by the caller's role.
func TeamWithRole(row Row) (*app.Team, error) {
	var role string
	t, err := Team(row, &role)
	if err != nil {
		return nil, err
	}
	t.Role = role
	return t, nil
}
