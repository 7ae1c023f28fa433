package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"folio/app"
	"folio/store/internal/scan"
)

var _ app.AnalyticsStore = (*DB)(nil)

// JobAnalytics groups a team's ended jobs by UTC day, status and format,
// from the daily counters for the whole days of the period and the hourly
// ones for its partial first and last day (statsUnion): those of the whole
// team (a few rows an hour) unless a template is asked for or their
// backfill is not done (rollup.go), those by template otherwise.
func (db *DB) JobAnalytics(ctx context.Context, f app.AnalyticsFilter) ([]app.AnalyticsRow, error) {
	if err := db.flush(ctx); err != nil {
		return nil, err
	}
	src := scan.TemplateStats
	if f.TemplateID == "" && db.readyJobs.Load() {
		src = scan.TeamStats
	}
	u, args := statsUnion(src, f.TeamID, f.TemplateID, f.From, f.To)
	rows, err := db.read.QueryContext(ctx, `SELECT day, status, format, SUM(count), SUM(duration_sum), SUM(duration_count)
		FROM (`+u+`) GROUP BY day, status, format`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scan.List(rows, scan.AnalyticsRow)
}

// statsUnion is scan.StatsUnion with SQLite's placeholders.
func statsUnion(src scan.StatsTables, teamID, templateID string, from, to time.Time) (string, []any) {
	var args []any
	q := scan.StatsUnion(src, teamID, templateID, from, to, func(v any) string {
		args = append(args, v)
		return "?"
	})
	return q, args
}

func slotOf(t time.Time) int64   { return scan.Slot(t) }
func slotCeil(t time.Time) int64 { return scan.SlotCeil(t) }

// countJob adds an ended job to the hourly and daily counters, by
// template and of the whole team, to the hour totals and, for a completed
// job made with an API key, to the key's count (inside FinishJob and
// RecordJob). It only notes the job in the transaction: the writer adds
// up the jobs of the calls a group keeps and writes them once, before
// the commit (writeCounts); a call rolled back takes its notes with it.
func countJob(tx *Tx, j *app.Job) {
	if tx.counts == nil {
		tx.counts = jobCounts{}
	}
	tx.counts.add(j)
}

// countKey is what the counters of an ended job are kept by (the API key
// for its document count).
type countKey struct {
	team     string
	slot     int64
	template string
	status   string
	format   string
	apiKey   string
}

// countSum is how many jobs of a countKey ended, and their durations.
type countSum struct{ n, durationSum, durationCount int64 }

// jobCounts adds up ended jobs by countKey, for one insert per key.
type jobCounts map[countKey]countSum

func (c jobCounts) add(j *app.Job) {
	k := countKey{team: j.TeamID, slot: scan.Slot(j.CreatedAt), template: j.TemplateID, status: j.Status, format: j.Format, apiKey: j.APIKeyID}
	s := c[k]
	s.n++
	if j.DurationMS != nil {
		s.durationSum += *j.DurationMS
		s.durationCount++
	}
	c[k] = s
}

// merge adds from's sums to c.
func (c jobCounts) merge(from jobCounts) {
	for k, v := range from {
		c.addSum(k, v)
	}
}

// addSum adds v to k's sums.
func (c jobCounts) addSum(k countKey, v countSum) {
	s := c[k]
	s.n, s.durationSum, s.durationCount = s.n+v.n, s.durationSum+v.durationSum, s.durationCount+v.durationCount
	c[k] = s
}

// writeCounts writes counts into the roll-ups: one insert into the view
// job_count per key, whose trigger runs the seven upserts and counts the
// key's documents (migrations 0026, 0029, 0030), in key order.
func writeCounts(ctx context.Context, tx *Tx, c jobCounts) error {
	keys := make([]countKey, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	if len(keys) > 1 {
		slices.SortFunc(keys, func(a, b countKey) int {
			return cmp.Or(strings.Compare(a.team, b.team), cmp.Compare(a.slot, b.slot), strings.Compare(a.template, b.template),
				strings.Compare(a.status, b.status), strings.Compare(a.format, b.format), strings.Compare(a.apiKey, b.apiKey))
		})
	}
	for _, k := range keys {
		s := c[k]
		if _, err := tx.ExecContext(ctx, `INSERT INTO job_count (team_id, slot, template_id, status, format, count, duration_sum, duration_count, api_key_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, k.team, k.slot, k.template, k.status, k.format, s.n, s.durationSum, s.durationCount, k.apiKey); err != nil {
			return err
		}
	}
	return nil
}

// A group's counts wait in job_count_pending (migration 0032): one row
// per group, written in the transaction that ends its jobs, so they are as
// durable as the jobs; the writer folds them into the roll-ups when
// countFold has passed since the last fold, when maxPendingCounts rows
// wait, or when a reader asks (DB.flush). The eight upserts a group cost
// (the roll-ups' pages in every commit) happen once per fold instead.
var countFold = time.Second

const maxPendingCounts = 512

// loadPending finds, at Open, whether counts wait in job_count_pending.
func (db *DB) loadPending(ctx context.Context) error {
	var tables, pending int
	err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = 'job_count_pending'`).Scan(&tables)
	if err == nil && tables == 1 {
		err = db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM job_count_pending`).Scan(&pending)
	}
	// Set before any write that counts: the writer reads them from here on.
	db.pendTable = tables == 1
	db.pendingRows = pending
	db.countsPending.Store(pending > 0)
	return err
}

// pendingCount is one key's counts in a job_count_pending row.
type pendingCount struct {
	Team          string `json:"t"`
	Slot          int64  `json:"h"`
	Template      string `json:"p"`
	Status        string `json:"s"`
	Format        string `json:"f"`
	APIKey        string `json:"k,omitempty"`
	N             int64  `json:"n"`
	DurationSum   int64  `json:"ds,omitempty"`
	DurationCount int64  `json:"dc,omitempty"`
}

// pendCounts keeps a group's counts in job_count_pending.
func pendCounts(ctx context.Context, tx *Tx, c jobCounts) error {
	rows := make([]pendingCount, 0, len(c))
	for k, s := range c {
		rows = append(rows, pendingCount{k.team, k.slot, k.template, k.status, k.format, k.apiKey, s.n, s.durationSum, s.durationCount})
	}
	b, err := json.Marshal(rows)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO job_count_pending (counts) VALUES (?)`, string(b))
	return err
}

// foldCounts writes the pending counts and c into the roll-ups and empties
// job_count_pending.
func foldCounts(ctx context.Context, tx *Tx, c jobCounts) error {
	all := jobCounts{}
	all.merge(c)
	rows, err := tx.QueryContext(ctx, `SELECT id, counts FROM job_count_pending`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var pending []pendingCount
		var id int64
		var raw string
		if err := rows.Scan(&id, &raw); err != nil {
			rows.Close()
			return err
		}
		if err := json.Unmarshal([]byte(raw), &pending); err != nil {
			rows.Close()
			return fmt.Errorf("job_count_pending row %d: %w", id, err)
		}
		for _, p := range pending {
			all.addSum(countKey{team: p.Team, slot: p.Slot, template: p.Template, status: p.Status, format: p.Format, apiKey: p.APIKey},
				countSum{p.N, p.DurationSum, p.DurationCount})
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	if err := writeCounts(ctx, tx, all); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM job_count_pending`)
	return err
}

// flush writes what waits to be written before a read that must see it:
// the keys' usage counts kept in memory (TouchAPIKey) and the pending job
// counts (pendCounts), in one transaction. Without either it writes
// nothing.
func (db *DB) flush(ctx context.Context) error {
	if !db.touches.any() && !db.countsPending.Load() {
		return nil
	}
	return db.send(&writeReq{ctx: ctx, fn: func(*Tx) error { return nil }, done: make(chan writeResult, 1), flush: true})
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
	if err := db.flush(ctx); err != nil {
		return nil, err
	}
	var u string
	var args []any
	if db.readyTemplates.Load() {
		u, args = statsUnion(scan.TemplateTotals, teamID, "", from, to)
	} else {
		u, args = statsUnion(scan.TemplateStats, teamID, "", from, to)
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
	return scan.List(rows, scan.TemplateStat)
}

// HourCounts counts a team's ended jobs in [from, to) by hour of the day (UTC).
func (db *DB) HourCounts(ctx context.Context, teamID string, from, to time.Time) ([]app.HourCount, error) {
	if err := db.flush(ctx); err != nil {
		return nil, err
	}
	rows, err := db.read.QueryContext(ctx, `SELECT slot % 24, SUM(count) FROM job_hours
		WHERE team_id = ? AND slot >= ? AND slot < ? GROUP BY 1`, teamID, slotOf(from), slotCeil(to))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scan.List(rows, scan.HourCount)
}
