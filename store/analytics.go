package store

import (
	"context"
	"database/sql"
	"time"

	"folio/app"
)

var _ app.AnalyticsStore = (*DB)(nil)

// JobAnalytics groups a team's ended jobs by UTC day, status and format,
// from the daily counters for the whole days of the period and the hourly
// ones for its partial first and last day (statsUnion): those of the whole
// team (a few rows an hour) unless a template is asked for or their
// backfill is not done (rollup.go), those by template otherwise.
func (db *DB) JobAnalytics(ctx context.Context, f app.AnalyticsFilter) ([]app.AnalyticsRow, error) {
	src := templateStats
	if f.TemplateID == "" && db.readyJobs.Load() {
		src = teamStats
	}
	u, args := statsUnion(src, f.TeamID, f.TemplateID, f.From, f.To)
	rows, err := db.read.QueryContext(ctx, `SELECT date(day * 86400, 'unixepoch'), status, format, SUM(count), SUM(duration_sum), SUM(duration_count)
		FROM (`+u+`) GROUP BY day, status, format`, args...)
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

// statsTables are an hourly and a daily counter table and the columns
// statsUnion selects from them besides the day.
type statsTables struct{ hours, days, cols string }

var (
	// templateStats count by template (job_stats, job_stats_daily).
	templateStats = statsTables{"job_stats", "job_stats_daily", "template_id, status, format, count, duration_sum, duration_count"}
	// teamStats count a whole team (0019: job_team_hours, job_team_days).
	teamStats = statsTables{"job_team_hours", "job_team_days", "status, format, count, duration_sum, duration_count"}
	// templateTotals count by template alone (0022: job_template_hours,
	// job_template_days).
	templateTotals = statsTables{"job_template_hours", "job_template_days", "template_id, count, failed, duration_sum, duration_count"}
)

// statsUnion selects the counters of a team's jobs created in [from, to)
// as rows (day, src.cols...): whole UTC days from the daily table, the
// hours before the first and after the last whole day from the hourly
// one. Reading hours alone, a year was 8,760 rows per template, status
// and format. templateID ("": all) needs templateStats.
func statsUnion(src statsTables, teamID, templateID string, from, to time.Time) (string, []any) {
	s0, s1 := slotOf(from), slotCeil(to)
	d0, d1 := (s0+23)/24, s1/24 // the whole days
	if d0 >= d1 {
		d0, d1 = s1/24, s1/24 // none: hours only
	}
	tpl := ""
	if templateID != "" {
		tpl = ` AND template_id = ?`
	}
	hours := `SELECT slot / 24 AS day, ` + src.cols + ` FROM ` + src.hours + `
		WHERE team_id = ? AND slot >= ? AND slot < ?` + tpl
	q := hours + ` UNION ALL ` + hours + ` UNION ALL SELECT day, ` + src.cols + `
		FROM ` + src.days + ` WHERE team_id = ? AND day >= ? AND day < ?` + tpl
	var args []any
	for _, r := range [][2]int64{{s0, min(d0*24, s1)}, {max(d1*24, s0), s1}} {
		args = append(args, teamID, r[0], r[1])
		if templateID != "" {
			args = append(args, templateID)
		}
	}
	args = append(args, teamID, d0, d1)
	if templateID != "" {
		args = append(args, templateID)
	}
	return q, args
}

func slotOf(t time.Time) int64   { return t.UnixMilli() / 3600000 }
func slotCeil(t time.Time) int64 { return (t.UnixMilli() + 3599999) / 3600000 }

// countJob adds an ended job to the hourly and daily counters, by
// template and of the whole team, and to the hour totals (inside
// FinishJob and RecordJob): one insert into the view job_count, whose
// trigger runs the seven upserts (migration 0026; the two by template
// alone are 0022's, for dashboard insights) and, for a completed job made
// with an API key, counts it on the key (0029).
func countJob(ctx context.Context, tx *Tx, j *app.Job) error {
	var dur int64
	var n int
	if j.DurationMS != nil {
		dur, n = *j.DurationMS, 1
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO job_count (team_id, slot, template_id, status, format, duration_sum, duration_count, api_key_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, j.TeamID, slotOf(j.CreatedAt), j.TemplateID, j.Status, j.Format, dur, n, j.APIKeyID)
	return err
}

// CountDocuments counts a team's completed documents created in [from, to).
func (db *DB) CountDocuments(ctx context.Context, teamID string, from, to time.Time) (int64, error) {
	var n sql.NullInt64
	err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM jobs WHERE team_id = ? AND status = 'completed' AND created_at >= ? AND created_at < ?`,
		teamID, ms(from), ms(to)).Scan(&n)
	return n.Int64, err
}

var _ app.DashboardStore = (*DB)(nil)

// TemplateStats groups a team's ended jobs in [from, to) by template:
// from the roll-ups by template alone (0022, a row per template a day or
// hour) once backfilled, else from the counters by template, status and
// format; grouped before the templates' names are joined.
func (db *DB) TemplateStats(ctx context.Context, teamID string, from, to time.Time) ([]app.TemplateStat, error) {
	var u string
	var args []any
	if db.readyTemplates.Load() {
		u, args = statsUnion(templateTotals, teamID, "", from, to)
	} else {
		u, args = statsUnion(templateStats, teamID, "", from, to)
		u = `SELECT day, template_id, count, CASE WHEN status = 'failed' THEN count ELSE 0 END AS failed, duration_sum, duration_count FROM (` + u + `)`
	}
	rows, err := db.read.QueryContext(ctx, `SELECT g.template_id, COALESCE(t.name, ''), g.count, g.failed, g.avg FROM (
			SELECT template_id, SUM(count) AS count, SUM(failed) AS failed,
				COALESCE(SUM(duration_sum) * 1.0 / NULLIF(SUM(duration_count), 0), 0) AS avg
			FROM (`+u+`) GROUP BY template_id) g
		LEFT JOIN templates t ON t.id = g.template_id ORDER BY g.template_id`, args...)
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

// HourCounts counts a team's ended jobs in [from, to) by hour of the day (UTC).
func (db *DB) HourCounts(ctx context.Context, teamID string, from, to time.Time) ([]app.HourCount, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT slot % 24, SUM(count) FROM job_hours
		WHERE team_id = ? AND slot >= ? AND slot < ? GROUP BY 1`, teamID, slotOf(from), slotCeil(to))
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
