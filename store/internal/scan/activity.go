package scan

import (
	"database/sql"
	"encoding/json"

	"folio/app"
)

// ActivityInsertCols are the columns ActivityValues gives.
const ActivityInsertCols = `id, team_id, type, user_id, target_id, target_email, template_id, template_name, details, created_at`

// ActivityValues are the values of ActivityInsertCols for a; details are
// NULL when there are none.
func ActivityValues(a *app.Activity) ([]any, error) {
	var target app.ActivityUser
	if a.Target != nil {
		target = *a.Target
	}
	var tpl app.ActivityTemplate
	if a.Template != nil {
		tpl = *a.Template
	}
	var details *string
	if len(a.Details) > 0 {
		b, err := json.Marshal(a.Details)
		if err != nil {
			return nil, err
		}
		s := string(b)
		details = &s
	}
	return []any{a.ID, a.TeamID, a.Type, a.User.ID, target.ID, target.Email, tpl.ID, tpl.Name, details, MS(a.Timestamp)}, nil
}

// ActivityCols are read by Activity, from ActivityFrom: the feed with the
// current names and addresses of the people involved. A purged account
// keeps its "Deleted user" name; its placeholder address is not shown.
const ActivityCols = `a.id, a.team_id, a.type, a.user_id, COALESCE(u.name, ''),
	CASE WHEN u.purged_at IS NULL THEN COALESCE(u.email, '') ELSE '' END,
	a.target_id, COALESCE(t.name, ''), CASE WHEN t.purged_at IS NULL THEN COALESCE(t.email, a.target_email) ELSE '' END,
	a.template_id, a.template_name, a.details, a.created_at`

// ActivityFrom joins what ActivityCols names.
const ActivityFrom = ` FROM activity a LEFT JOIN users u ON u.id = a.user_id LEFT JOIN users t ON t.id = a.target_id AND a.target_id != '' `

// Activity reads one row of ActivityCols.
func Activity(row Row) (*app.Activity, error) {
	var a app.Activity
	var target app.ActivityUser
	var tpl app.ActivityTemplate
	var details sql.NullString
	var created int64
	if err := row.Scan(&a.ID, &a.TeamID, &a.Type, &a.User.ID, &a.User.Name, &a.User.Email,
		&target.ID, &target.Name, &target.Email, &tpl.ID, &tpl.Name, &details, &created); err != nil {
		return nil, err
	}
	if target.ID != "" || target.Email != "" {
		a.Target = &target
	}
	if tpl.ID != "" {
		a.Template = &tpl
	}
	if details.Valid {
		if err := json.Unmarshal([]byte(details.String), &a.Details); err != nil {
			return nil, err
		}
	}
	a.Timestamp = FromMS(created)
	return &a, nil
}
