package postgres

import (
	"context"
	"encoding/json"

	"folio/app"
)

var _ app.ActivityStore = (*DB)(nil)

// CreateActivity appends an event to a team's feed.
func (db *DB) CreateActivity(ctx context.Context, a *app.Activity) error {
	return insertActivity(ctx, db.pool, a)
}

func insertActivity(ctx context.Context, q querier, a *app.Activity) error {
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
			return err
		}
		s := string(b)
		details = &s
	}
	_, err := q.Exec(ctx, `INSERT INTO activity (id, team_id, type, user_id, target_id, target_email, template_id, template_name, details, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		a.ID, a.TeamID, a.Type, a.User.ID, target.ID, target.Email, tpl.ID, tpl.Name, details, ms(a.Timestamp))
	return err
}

// countUpTo counts the rows of query, up to app.MaxCount: past it the
// count is MaxCount and an estimate.
func countUpTo(ctx context.Context, q querier, query string, args []any, limitParam string) (n int, estimate bool, err error) {
	err = q.QueryRow(ctx, `SELECT COUNT(*) FROM (`+query+` LIMIT `+limitParam+`) c`, append(args, app.MaxCount+1)...).Scan(&n)
	if n > app.MaxCount {
		return app.MaxCount, true, err
	}
	return n, false, err
}

// FindActivities lists a team's feed, newest first, with the current names
// and addresses of the people involved.
func (db *DB) FindActivities(ctx context.Context, teamID string, pg app.Page) ([]*app.Activity, app.ListInfo, error) {
	var info app.ListInfo
	var err error
	if info.Total, info.Estimate, err = countUpTo(ctx, db.pool, `SELECT 1 FROM activity WHERE team_id = $1`, []any{teamID}, "$2"); err != nil {
		return nil, info, err
	}
	// A purged account keeps its "Deleted user" name; its placeholder address is not shown.
	rows, err := db.pool.Query(ctx, `SELECT a.id, a.team_id, a.type, a.user_id, COALESCE(u.name, ''),
			CASE WHEN u.purged_at IS NULL THEN COALESCE(u.email, '') ELSE '' END,
			a.target_id, COALESCE(t.name, ''), CASE WHEN t.purged_at IS NULL THEN COALESCE(t.email, a.target_email) ELSE '' END,
			a.template_id, a.template_name, a.details, a.created_at
		FROM activity a LEFT JOIN users u ON u.id = a.user_id LEFT JOIN users t ON t.id = a.target_id AND a.target_id != ''
		WHERE a.team_id = $1 ORDER BY a.created_at DESC, a.seq DESC LIMIT $2 OFFSET $3`, teamID, pg.Limit+1, pg.Offset())
	if err != nil {
		return nil, info, err
	}
	defer rows.Close()
	out := []*app.Activity{}
	for rows.Next() {
		if len(out) == pg.Limit {
			info.More = true
			break
		}
		var a app.Activity
		var target app.ActivityUser
		var tpl app.ActivityTemplate
		var details *string
		var created int64
		if err := rows.Scan(&a.ID, &a.TeamID, &a.Type, &a.User.ID, &a.User.Name, &a.User.Email,
			&target.ID, &target.Name, &target.Email, &tpl.ID, &tpl.Name, &details, &created); err != nil {
			return nil, info, err
		}
		if target.ID != "" || target.Email != "" {
			a.Target = &target
		}
		if tpl.ID != "" {
			a.Template = &tpl
		}
		if details != nil {
			if err := json.Unmarshal([]byte(*details), &a.Details); err != nil {
				return nil, info, err
			}
		}
		a.Timestamp = fromMS(created)
		out = append(out, &a)
	}
	if info.Estimate {
		more := 0
		if info.More {
			more = 1
		}
		info.Total = max(info.Total, pg.Offset()+len(out)+more)
	}
	return out, info, rows.Err()
}
