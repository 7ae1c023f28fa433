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

var _ app.DashboardStore = (*DB)(nil)

// TemplateStats groups a team's jobs in [from, to) by template.
func (db *DB) TemplateStats(ctx context.Context, teamID string, from, to time.Time) ([]app.TemplateStat, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT j.template_id, COALESCE(t.name, ''), COUNT(*), SUM(j.status = 'failed'), COALESCE(AVG(j.duration_ms), 0)
		FROM jobs j LEFT JOIN templates t ON t.id = j.template_id
		WHERE j.team_id = ? AND j.created_at >= ? AND j.created_at < ? GROUP BY j.template_id`, teamID, ms(from), ms(to))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []app.TemplateStat{}
	for rows.Next() {
		var s app.TemplateStat
		if err := rows.Scan(&s.TemplateID, &s.Name, &s.Count, &s.Failed, &s.AvgGenerationTimeMs); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// HourCounts counts a team's jobs in [from, to) by hour of the day (UTC).
func (db *DB) HourCounts(ctx context.Context, teamID string, from, to time.Time) ([]app.HourCount, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT CAST(strftime('%H', created_at / 1000, 'unixepoch') AS INTEGER), COUNT(*)
		FROM jobs WHERE team_id = ? AND created_at >= ? AND created_at < ? GROUP BY 1`, teamID, ms(from), ms(to))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []app.HourCount{}
	for rows.Next() {
		var h app.HourCount
		if err := rows.Scan(&h.Hour, &h.Count); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// DeliveryCounts counts a team's deliveries that ended since a time.
func (db *DB) DeliveryCounts(ctx context.Context, teamID string, since time.Time) (int, int, error) {
	var ok, bad sql.NullInt64
	err := db.read.QueryRowContext(ctx, `SELECT SUM(status = 'success'), SUM(status = 'failed') FROM webhook_deliveries
		WHERE team_id = ? AND attempted_at >= ?`, teamID, ms(since)).Scan(&ok, &bad)
	return int(ok.Int64), int(bad.Int64), err
}
