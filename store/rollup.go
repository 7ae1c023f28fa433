package store

import (
	"context"
	"database/sql"
	"time"

	"folio/app"
)

// Roll-ups (migration 0019, docs/decisions.md "Roll-ups for dashboard
// health, insights and analytics"). A team's analytics without a template
// read job_team_hours and job_team_days; dashboard health's webhook
// figures read delivery_hours. The writes that change what they count
// change them in the same transaction (countJob, countDelivery), so they
// are exact at every moment, today's hour included.
//
// On a database that had rows before 0019, BackfillRollups fills them
// after start-up in short transactions; until it has finished, the reads
// use the tables they used before (readyJobs, readyDeliveries), which the
// writes keep up to date too.

// hourMS is an hour in milliseconds (delivery_hours counts by hour of
// attempted_at, a Unix millisecond time).
const hourMS = 3600000

// lastTeam is past every team id in the backfill's (team_id, slot) order:
// the end of the last chunk.
const lastTeam = "\U0010FFFF"

// loadRollupState reads whether the backfills are done (at open). A schema
// older than 0019 (migration tests) has no state: the old reads serve.
func (db *DB) loadRollupState(ctx context.Context) {
	rows, err := db.write.QueryContext(ctx, `SELECT name, done FROM rollup_backfill`)
	if err != nil {
		return
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var done bool
		if rows.Scan(&name, &done) != nil {
			return
		}
		switch name {
		case "jobs":
			db.readyJobs.Store(done)
		case "deliveries":
			db.readyDeliveries.Store(done)
		case "list":
			db.readyList.Store(done)
		case "templates":
			db.readyTemplates.Store(done)
		}
	}
}

// countDelivery adds delta to the hour of a delivery's last attempt for
// its status, when it counts (app.Delivery.Ended). Every statement that
// changes a delivery's status or attempt time calls it with -1 for the
// row before and +1 for the row after.
func countDelivery(ctx context.Context, tx *Tx, d *app.Delivery, delta int) error {
	if !d.Ended() {
		return nil
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO delivery_hours (team_id, slot, status, count) VALUES (?, ?, ?, ?)
		ON CONFLICT DO UPDATE SET count = count + excluded.count`, d.TeamID, ms(*d.AttemptedAt)/hourMS, d.Status, delta)
	return err
}

// DeliveryCounts counts a team's deliveries that ended since a time: the
// hours from the first whole one on from delivery_hours, the part of an
// hour before it from the deliveries themselves.
func (db *DB) DeliveryCounts(ctx context.Context, teamID string, since time.Time) (int, int, error) {
	var ok, bad sql.NullInt64
	if !db.readyDeliveries.Load() {
		err := db.read.QueryRowContext(ctx, `SELECT SUM(status = 'success'), SUM(status = 'failed') FROM webhook_deliveries
			WHERE team_id = ? AND attempted_at >= ?`, teamID, ms(since)).Scan(&ok, &bad)
		return int(ok.Int64), int(bad.Int64), err
	}
	h0 := (ms(since) + hourMS - 1) / hourMS
	err := db.read.QueryRowContext(ctx, `SELECT SUM(ok), SUM(bad) FROM (
		SELECT SUM(status = 'success') AS ok, SUM(status = 'failed') AS bad FROM webhook_deliveries
			WHERE team_id = ? AND attempted_at >= ? AND attempted_at < ?
		UNION ALL
		SELECT SUM(CASE WHEN status = 'success' THEN count ELSE 0 END), SUM(CASE WHEN status = 'failed' THEN count ELSE 0 END) FROM delivery_hours
			WHERE team_id = ? AND slot >= ?)`, teamID, ms(since), h0*hourMS, teamID, h0).Scan(&ok, &bad)
	return int(ok.Int64), int(bad.Int64), err
}

// BackfillStats describe a backfill run (logged at start-up).
type BackfillStats struct {
	Rows         map[string]int // roll-up rows written, by table
	Source       map[string]int // source rows the chunks covered, by table
	Transactions int
	Longest      time.Duration // the longest transaction
	Slow         int           // transactions over app.SlowStep
	Duration     time.Duration
}

func (s *BackfillStats) count(d time.Duration) {
	s.Transactions++
	s.Longest = max(s.Longest, d)
	if d > app.SlowStep {
		s.Slow++
	}
}

// backfill is one roll-up's backfill: pick finds, on a reader, the key
// (team_id, slot in its unit) some rows past the cursor; fill recomputes
// the roll-up rows of a key range from the source in the writer.
type backfill struct {
	name   string
	source string   // the table the chunks read, for the stats
	pick   string   // args: team, slot, offset; returns team, slot
	warm   string   // the source rows of [from, to), on a reader; args as fill's
	fill   []string // args: team0, slot0, team1, slot1
	tables []string // the table each fill statement writes (stats), "" for none
	ready  func(*DB)
}

var backfills = []backfill{
	{
		name:   "jobs",
		source: "job_stats",
		// Chunks of whole days: job_team_days from job_stats_daily, and
		// job_team_hours from job_stats, of the same (team, day) range.
		pick: `SELECT team_id, slot / 24 FROM job_stats WHERE (team_id, slot) >= (?1, ?2 * 24) ORDER BY team_id, slot LIMIT 1 OFFSET ?3`,
		warm: `SELECT COUNT(*) FROM job_stats WHERE (team_id, slot) >= (?1, ?2 * 24) AND (team_id, slot) < (?3, ?4 * 24)`,
		fill: []string{
			`DELETE FROM job_team_days WHERE (team_id, day) >= (?1, ?2) AND (team_id, day) < (?3, ?4)`,
			`INSERT INTO job_team_days (team_id, day, status, format, count, duration_sum, duration_count)
				SELECT team_id, day, status, format, SUM(count), SUM(duration_sum), SUM(duration_count) FROM job_stats_daily
				WHERE (team_id, day) >= (?1, ?2) AND (team_id, day) < (?3, ?4) GROUP BY team_id, day, status, format`,
			`DELETE FROM job_team_hours WHERE (team_id, slot) >= (?1, ?2 * 24) AND (team_id, slot) < (?3, ?4 * 24)`,
			`INSERT INTO job_team_hours (team_id, slot, status, format, count, duration_sum, duration_count)
				SELECT team_id, slot, status, format, SUM(count), SUM(duration_sum), SUM(duration_count) FROM job_stats
				WHERE (team_id, slot) >= (?1, ?2 * 24) AND (team_id, slot) < (?3, ?4 * 24) GROUP BY team_id, slot, status, format`,
		},
		tables: []string{"", "job_team_days", "", "job_team_hours"},
		ready:  func(db *DB) { db.readyJobs.Store(true) },
	},
	{
		name:   "deliveries",
		source: "webhook_deliveries",
		// Chunks of whole hours of attempted_at. A NULL attempted_at (never
		// attempted) counts nowhere; row values compare it as unknown only
		// within the same team, hence the IS NOT NULL.
		pick: `SELECT team_id, attempted_at / 3600000 FROM webhook_deliveries
			WHERE (team_id, attempted_at) >= (?1, ?2 * 3600000) AND attempted_at IS NOT NULL ORDER BY team_id, attempted_at LIMIT 1 OFFSET ?3`,
		warm: `SELECT COUNT(*) FROM webhook_deliveries WHERE (team_id, attempted_at) >= (?1, ?2 * 3600000) AND (team_id, attempted_at) < (?3, ?4 * 3600000)
			AND attempted_at IS NOT NULL`,
		fill: []string{
			`DELETE FROM delivery_hours WHERE (team_id, slot) >= (?1, ?2) AND (team_id, slot) < (?3, ?4)`,
			`INSERT INTO delivery_hours (team_id, slot, status, count)
				SELECT team_id, attempted_at / 3600000, status, COUNT(*) FROM webhook_deliveries
				WHERE (team_id, attempted_at) >= (?1, ?2 * 3600000) AND (team_id, attempted_at) < (?3, ?4 * 3600000)
				AND attempted_at IS NOT NULL AND status IN ('success', 'failed') GROUP BY 1, 2, 3`,
		},
		tables: []string{"", "delivery_hours"},
		ready:  func(db *DB) { db.readyDeliveries.Store(true) },
	},
	{
		name:   "list",
		source: "jobs",
		// Chunks of whole hours of created_at, through jobs_team_created.
		pick: `SELECT team_id, created_at / 3600000 FROM jobs WHERE (team_id, created_at) >= (?1, ?2 * 3600000)
			ORDER BY team_id, created_at LIMIT 1 OFFSET ?3`,
		warm: `SELECT COUNT(*) FROM jobs WHERE (team_id, created_at) >= (?1, ?2 * 3600000) AND (team_id, created_at) < (?3, ?4 * 3600000)`,
		fill: []string{
			`DELETE FROM job_list_hours WHERE (team_id, slot) >= (?1, ?2) AND (team_id, slot) < (?3, ?4)`,
			`INSERT INTO job_list_hours (team_id, slot, n)
				SELECT team_id, created_at / 3600000, COUNT(*) FROM jobs
				WHERE (team_id, created_at) >= (?1, ?2 * 3600000) AND (team_id, created_at) < (?3, ?4 * 3600000) GROUP BY 1, 2`,
		},
		tables: []string{"", "job_list_hours"},
		ready:  func(db *DB) { db.readyList.Store(true) },
	},
	{
		name:   "templates",
		source: "job_stats",
		// Migration 0022: chunks of whole days, as for "jobs": a template's
		// days from job_stats_daily, its hours from job_stats.
		pick: `SELECT team_id, slot / 24 FROM job_stats WHERE (team_id, slot) >= (?1, ?2 * 24) ORDER BY team_id, slot LIMIT 1 OFFSET ?3`,
		warm: `SELECT COUNT(*) FROM job_stats WHERE (team_id, slot) >= (?1, ?2 * 24) AND (team_id, slot) < (?3, ?4 * 24)`,
		fill: []string{
			`DELETE FROM job_template_days WHERE (team_id, day) >= (?1, ?2) AND (team_id, day) < (?3, ?4)`,
			`INSERT INTO job_template_days (team_id, day, template_id, count, failed, duration_sum, duration_count)
				SELECT team_id, day, template_id, SUM(count), SUM(CASE WHEN status = 'failed' THEN count ELSE 0 END), SUM(duration_sum), SUM(duration_count)
				FROM job_stats_daily WHERE (team_id, day) >= (?1, ?2) AND (team_id, day) < (?3, ?4) GROUP BY team_id, day, template_id`,
			`DELETE FROM job_template_hours WHERE (team_id, slot) >= (?1, ?2 * 24) AND (team_id, slot) < (?3, ?4 * 24)`,
			`INSERT INTO job_template_hours (team_id, slot, template_id, count, failed, duration_sum, duration_count)
				SELECT team_id, slot, template_id, SUM(count), SUM(CASE WHEN status = 'failed' THEN count ELSE 0 END), SUM(duration_sum), SUM(duration_count)
				FROM job_stats WHERE (team_id, slot) >= (?1, ?2 * 24) AND (team_id, slot) < (?3, ?4 * 24) GROUP BY team_id, slot, template_id`,
		},
		tables: []string{"", "job_template_days", "", "job_template_hours"},
		ready:  func(db *DB) { db.readyTemplates.Store(true) },
	},
}

// testHookBackfill, when set, is called after each chunk.
var testHookBackfill func()

// backfillChunk, when set (tests), is how many source rows every chunk
// covers, give or take the rest of its last day or hour. Otherwise a
// chunk starts at stepFirst rows and doubles or halves to take about
// stepTarget, as the maintenance steps do.
var backfillChunk = 0

// BackfillRollups fills the roll-ups of migration 0019 from the rows that
// existed before it, from where a previous run stopped, in transactions of
// a chunk each through the writer, so the writes of requests and jobs run
// between them; it returns when both are done or ctx ends (a later start
// goes on from the cursor). Each chunk replaces the roll-up rows of its
// key range with the sums of the source rows in the same transaction:
// the counts the writes made there meanwhile are in the source too.
func (db *DB) BackfillRollups(ctx context.Context) (BackfillStats, error) {
	start := time.Now()
	st := BackfillStats{Rows: map[string]int{}, Source: map[string]int{}}
	for _, b := range backfills {
		if err := db.backfill(ctx, b, &st); err != nil {
			st.Duration = time.Since(start)
			return st, err
		}
	}
	st.Duration = time.Since(start)
	return st, nil
}

func (db *DB) backfill(ctx context.Context, b backfill, st *BackfillStats) error {
	var team string
	var slot int64
	var done bool
	if err := db.read.QueryRowContext(ctx, `SELECT team_id, slot, done FROM rollup_backfill WHERE name = ?`, b.name).Scan(&team, &slot, &done); err != nil {
		return err
	}
	chunk := stepFirst
	for !done {
		if err := ctx.Err(); err != nil {
			return err
		}
		if backfillChunk > 0 {
			chunk = backfillChunk
		}
		var t1 string
		var s1 int64
		err := db.read.QueryRowContext(ctx, b.pick, team, slot, chunk).Scan(&t1, &s1)
		switch {
		case err == sql.ErrNoRows:
			t1, s1, done = lastTeam, 0, true
		case err != nil:
			return err
		case t1 == team && s1 <= slot:
			s1 = slot + 1 // one day or hour holds more than a chunk
		}
		args := []any{team, slot, t1, s1}
		var n int
		if err := db.read.QueryRowContext(ctx, b.warm, args...).Scan(&n); err != nil {
			return err
		}
		var t0, tEnd time.Time
		written := make([]int, len(b.fill))
		ended, err := db.txAlone(ctx, func(tx *Tx) error {
			t0 = time.Now()
			defer func() { tEnd = time.Now() }()
			for i, q := range b.fill {
				res, err := tx.ExecContext(ctx, q, args...)
				if err != nil {
					return err
				}
				k, _ := res.RowsAffected()
				written[i] = int(k)
			}
			_, err := tx.ExecContext(ctx, `UPDATE rollup_backfill SET team_id = ?, slot = ?, rows = rows + ?, done = ? WHERE name = ?`,
				t1, s1, n, done, b.name)
			return err
		})
		if err != nil {
			return err
		}
		d := ended.Sub(t0)
		st.count(d)
		observeStep(StepTime{Kind: "backfill", Rows: n, Held: d, Statements: tEnd.Sub(t0), Ended: ended})
		switch {
		case d < stepTarget/2 && n >= chunk:
			chunk = min(chunk*2, stepMax)
		case d > stepTarget*3/2:
			chunk = max(chunk/2, stepMin)
		}
		st.Source[b.source] += n
		for i, t := range b.tables {
			if t != "" {
				st.Rows[t] += written[i]
			}
		}
		db.checkpoint(ctx)
		team, slot = t1, s1
		if testHookBackfill != nil {
			testHookBackfill()
		}
	}
	b.ready(db)
	return nil
}
