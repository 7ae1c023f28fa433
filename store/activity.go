package store

import (
	"context"

	"folio/app"
	"folio/store/internal/scan"
)

var _ app.ActivityStore = (*DB)(nil)

// CreateActivity appends an event to a team's feed.
func (db *DB) CreateActivity(ctx context.Context, a *app.Activity) error {
	return db.tx(ctx, func(tx *Tx) error { return insertActivity(ctx, tx, a) })
}

func insertActivity(ctx context.Context, tx *Tx, a *app.Activity) error {
	values, err := scan.ActivityValues(a)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO activity (`+scan.ActivityInsertCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, values...)
	return err
}

// FindActivities lists a team's feed, newest first, with the current names
// and addresses of the people involved.
func (db *DB) FindActivities(ctx context.Context, teamID string, pg app.Page) ([]*app.Activity, app.ListInfo, error) {
	var info app.ListInfo
	var err error
	if info.Total, info.Estimate, err = db.countUpTo(ctx, `SELECT 1 FROM activity WHERE team_id = ?`, []any{teamID}); err != nil {
		return nil, info, err
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+scan.ActivityCols+scan.ActivityFrom+`
		WHERE a.team_id = ? ORDER BY a.created_at DESC, a.rowid DESC LIMIT ? OFFSET ?`, teamID, pg.Limit+1, pg.Offset())
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
