package scan

import (
	"database/sql"
	"errors"

	"folio/app"
)

// ShareSelect reads shares of live templates with live target teams
// (alias s), as Share reads them.
const ShareSelect = `SELECT s.id, s.template_id, s.owner_team_id, s.target_team_id, tm.name, s.permission, s.created_by,
	s.created_at, s.updated_at FROM template_shares s
	JOIN teams tm ON tm.id = s.target_team_id AND tm.deleted_at IS NULL
	JOIN templates t ON t.id = s.template_id AND t.deleted_at IS NULL`

// Share reads one row of ShareSelect.
func Share(row Row) (*app.TemplateShare, error) {
	var sh app.TemplateShare
	var created, updated int64
	err := row.Scan(&sh.ID, &sh.TemplateID, &sh.OwnerTeamID, &sh.TargetTeamID, &sh.TargetTeamName, &sh.Permission, &sh.CreatedBy, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound(app.ECodeShareNotFound, "share")
	} else if err != nil {
		return nil, err
	}
	sh.CreatedAt, sh.UpdatedAt = FromMS(created), FromMS(updated)
	return &sh, nil
}

// SharedSelect reads the live templates of live teams shared with a team
// (alias s for the share), as Shared reads them.
const SharedSelect = `SELECT t.id, t.short_id, t.name, t.template_type, o.id, o.name, s.permission, s.created_at
	FROM template_shares s
	JOIN templates t ON t.id = s.template_id AND t.deleted_at IS NULL
	JOIN teams o ON o.id = t.team_id AND o.deleted_at IS NULL`

// Shared reads one row of SharedSelect.
func Shared(row Row) (*app.SharedTemplate, error) {
	var st app.SharedTemplate
	var at int64
	if err := row.Scan(&st.ID, &st.ShortID, &st.Name, &st.TemplateType, &st.OwnerTeamID, &st.OwnerTeamName, &st.Permission, &at); err != nil {
		return nil, err
	}
	st.SharedAt = FromMS(at)
	return &st, nil
}
