package store

import (
	"context"
	"database/sql"
	"time"

	"folio/app"
)

var _ app.AnalyticsStore = (*DB)(nil)

// JobAnalytics groups a team's jobs by UTC day, status and format, reading
// only the covering index jobs_team_analytics.
func (db *DB) JobAnalytics(ctx context.Context, f app.AnalyticsFilter) ([]app.AnalyticsRow, error) {
	q := `SELECT date(created_at / 1000, 'unixepoch'), status, format, COUNT(*), COALESCE(SUM(duration_ms), 0), COUNT(duration_ms)
		FROM jobs WHERE team_id = ? AND created_at >= ? AND created_at < ?`
	args := []any{f.TeamID, ms(f.From), ms(f.To)}
	if f.TemplateID != "" {
		q += ` AND template_id = ?`
		args = append(args, f.TemplateID)
	}
	rows, err := db.read.QueryContext(ctx, q+` GROUP BY 1, 2, 3`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []app.AnalyticsRow
	for rows.Next() {
		var r app.AnalyticsRow
		if err := rows.Scan(&r.Date, &r.Status, &r.Format, &r.Count, &r.DurationSumMS, &r.DurationCount); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// CountDocuments counts a team's completed documents created in [from, to).
func (db *DB) CountDocuments(ctx context.Context, teamID string, from, to time.Time) (int64, error) {
	var n sql.NullInt64
	err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM jobs WHERE team_id = ? AND status = 'completed' AND created_at >= ? AND created_at < ?`,
		teamID, ms(from), ms(to)).Scan(&n)
	return n.Int64, err
}
