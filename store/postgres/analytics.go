package postgres

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"folio/app"
	"folio/store/internal/scan"
)

// DashboardStore: TemplateStats and HourCounts are here; DeliveryCounts
// comes with the webhook store.
var _ app.AnalyticsStore = (*DB)(nil)

// Roll-ups (docs/decisions.md, "PostgreSQL: jobs, batches, usage and
// analytics"): the seven tables of SQLite's roll-ups, counted by
// count_job in the transaction that ends a job, so they are exact at
// every moment and outlive retention. A PostgreSQL database starts with
// them (no backfill): the reads always use them.

// statsUnion is scan.StatsUnion with PostgreSQL's placeholders, after
// the args already given.
func statsUnion(src scan.StatsTables, teamID, templateID string, from, to time.Time, args []any) (string, []any) {
	q := scan.StatsUnion(src, teamID, templateID, from, to, func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	})
	return q, args
}

// countJob adds an ended job to the roll-ups: one call of count_job.
func countJob(ctx context.Context, tx pgx.Tx, j *app.Job) error {
	_, err := tx.Exec(ctx, `SELECT count_job($1, $2, $3, $4, $5, $6, $7)`, scan.CountArgs(j)...)
	return err
}

// JobAnalytics groups a team's ended jobs by UTC day, status and format:
// from the team's roll-ups, or those by template when one is asked for.
func (db *DB) JobAnalytics(ctx context.Context, f app.AnalyticsFilter) ([]app.AnalyticsRow, error) {
	src := scan.TemplateStats
	if f.TemplateID == "" {
		src = scan.TeamStats
	}
	u, args := statsUnion(src, f.TeamID, f.TemplateID, f.From, f.To, nil)
	rows, err := db.pool.Query(ctx, `SELECT day, status, format, SUM(count)::bigint, SUM(duration_sum)::bigint, SUM(duration_count)::bigint
		FROM (`+u+`) u GROUP BY day, status, format`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scan.List(rows, scan.AnalyticsRow)
}

// CountDocuments counts a team's completed documents created in [from, to).
func (db *DB) CountDocuments(ctx context.Context, teamID string, from, to time.Time) (int64, error) {
	var n int64
	err := db.pool.QueryRow(ctx, `SELECT COUNT(*) FROM jobs WHERE team_id = $1 AND status = 'completed' AND created_at >= $2 AND created_at < $3`,
		teamID, ms(from), ms(to)).Scan(&n)
	return n, err
}

// TemplateStats groups a team's ended jobs in [from, to) by template,
// from the roll-ups by template alone, grouped before the templates'
// names are joined; ordered by template id.
func (db *DB) TemplateStats(ctx context.Context, teamID string, from, to time.Time) ([]app.TemplateStat, error) {
	u, args := statsUnion(scan.TemplateTotals, teamID, "", from, to, nil)
	rows, err := db.pool.Query(ctx, `SELECT g.template_id, COALESCE(t.name, ''), g.count, g.failed, g.avg FROM (
			SELECT template_id, SUM(count)::bigint AS count, SUM(failed)::bigint AS failed,
				COALESCE(SUM(duration_sum)::float8 / NULLIF(SUM(duration_count), 0), 0) AS avg
			FROM (`+u+`) u GROUP BY template_id) g
		LEFT JOIN templates t ON t.id = g.template_id ORDER BY g.template_id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scan.List(rows, scan.TemplateStat)
}

// HourCounts counts a team's ended jobs in [from, to) by hour of the day (UTC).
func (db *DB) HourCounts(ctx context.Context, teamID string, from, to time.Time) ([]app.HourCount, error) {
	rows, err := db.pool.Query(ctx, `SELECT (slot % 24)::int, SUM(count)::bigint FROM job_hours
		WHERE team_id = $1 AND slot >= $2 AND slot < $3 GROUP BY 1`, teamID, scan.Slot(from), scan.SlotCeil(to))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scan.List(rows, scan.HourCount)
}
