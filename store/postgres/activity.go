package postgres

import (
	"context"

	"folio/app"
	"folio/store/internal/scan"
)

var _ app.ActivityStore = (*DB)(nil)

// CreateActivity appends an event to a team's feed.
func (db *DB) CreateActivity(ctx context.Context, a *app.Activity) error {
	return insertActivity(ctx, db.pool, a)
}

func insertActivity(ctx context.Context, q querier, a *app.Activity) error {
	values, err := scan.ActivityValues(a)
	if err != nil {
		return err
	}
	_, err = q.Exec(ctx, `INSERT INTO activity (`+scan.ActivityInsertCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, values...)
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
	rows, err := db.pool.Query(ctx, `SELECT `+scan.ActivityCols+scan.ActivityFrom+`
		WHERE a.team_id = $1 ORDER BY a.created_at DESC, a.seq DESC LIMIT $2 OFFSET $3`, teamID, pg.Limit+1, pg.Offset())
	if err != nil {
		return nil, info, err
	}
	defer rows.Close()
	out, more, err := scan.ListUpTo(rows, pg.Limit, scan.Activity)
	if err != nil {
		return nil, info, err
	}
	info.More = more
	info.Counted(pg.Offset(), len(out))
	return out, info, nil
}
