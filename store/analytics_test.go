package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"folio/app"
)

// seedJobs inserts n ended jobs for one team spread over the last 90 days,
// in large transactions.
func seedJobs(tb testing.TB, db *DB, teamID string, n int) {
	tb.Helper()
	seedJobsEvery(tb, db, teamID, n, time.Minute)
}

// seedJobsEvery is seedJobs with a job every step (wrapping at 90 days).
func seedJobsEvery(tb testing.TB, db *DB, teamID string, n int, step time.Duration) {
	tb.Helper()
	ctx := context.Background()
	now := time.Now()
	for done := 0; done < n; {
		err := db.tx(ctx, func(tx *Tx) error {
			// Prepared once: the writer keeps its statements (wconn.go).
			const insert = `INSERT INTO jobs (id, team_id, template_id, status, format, priority, created_at, completed_at, duration_ms)
				VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?)`
			for i := 0; i < 50000 && done < n; i, done = i+1, done+1 {
				status, format := "completed", "pdf"
				if done%20 == 0 {
					status = "failed"
				}
				if done%3 == 0 {
					format = "xlsx"
				}
				at := now.Add(-time.Duration(done%int(90*24*time.Hour/step)) * step)
				if _, err := tx.ExecContext(ctx, insert, fmt.Sprintf("job_%09d", done), teamID, fmt.Sprintf("tpl_%d", done%25), status, format,
					ms(at), ms(at.Add(5*time.Millisecond)), 5+done%40); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	// Rebuild the counters the way migration 0008 backfills them.
	if _, err := db.write.ExecContext(ctx, `DELETE FROM job_stats; INSERT INTO job_stats (team_id, slot, template_id, status, format, count, duration_sum, duration_count)
		SELECT team_id, created_at / 3600000, template_id, status, format, COUNT(*), COALESCE(SUM(duration_ms), 0), COUNT(duration_ms)
		FROM jobs WHERE status IN ('completed', 'failed') GROUP BY 1, 2, 3, 4, 5;
		DELETE FROM job_stats_daily; INSERT INTO job_stats_daily (team_id, day, template_id, status, format, count, duration_sum, duration_count)
		SELECT team_id, slot / 24, template_id, status, format, SUM(count), SUM(duration_sum), SUM(duration_count) FROM job_stats GROUP BY 1, 2, 3, 4, 5;
		DELETE FROM job_hours; INSERT INTO job_hours (team_id, slot, count) SELECT team_id, slot, SUM(count) FROM job_stats GROUP BY 1, 2`); err != nil {
		tb.Fatal(err)
	}
	// and the team roll-ups the way 0019 does after start-up.
	forgetRollups(tb, db)
	if _, err := db.BackfillRollups(ctx); err != nil {
		tb.Fatal(err)
	}
}

func TestAnalyticsAggregates(t *testing.T) {
	db := mustDB(t)
	u := mustUser(t, db, "a@example.com")
	n := 2000
	if raceEnabled {
		n = 400 // -race slows SQLite tenfold
	}
	seedJobs(t, db, u.PersonalTeamID, n)
	rows, err := db.JobAnalytics(context.Background(), app.AnalyticsFilter{TeamID: u.PersonalTeamID, From: time.Now().Add(-91 * 24 * time.Hour), To: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	total, failed := 0, 0
	for _, r := range rows {
		total += r.Count
		if r.Status == "failed" {
			failed += r.Count
		}
	}
	if total != n || failed != n/20 {
		t.Fatalf("total %d failed %d", total, failed)
	}
}

// BenchmarkAnalyticsMillionJobs measures the 30-day analytics query of a team
// with a million job records (seeding takes a while):
//
//	go test ./store -run '^$' -bench AnalyticsMillionJobs -benchtime 20x
func BenchmarkAnalyticsMillionJobs(b *testing.B) {
	db := mustDB(b)
	u := mustUser(b, db, "m@example.com")
	seedJobs(b, db, u.PersonalTeamID, 1_000_000)
	ctx := context.Background()
	f := app.AnalyticsFilter{TeamID: u.PersonalTeamID, From: time.Now().Add(-30 * 24 * time.Hour), To: time.Now()}
	b.ResetTimer()
	for b.Loop() {
		if _, err := db.JobAnalytics(ctx, f); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAnalyticsAcrossDaysAndHours: a period's whole days come from the
// daily counters and its partial first and last days from the hourly
// ones; every split counts each job once, as reading hours alone does.
func TestAnalyticsAcrossDaysAndHours(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	u := mustUser(t, db, "d@example.com")
	n, step := 5000, time.Minute // one a minute over the last 5,000 minutes
	if raceEnabled {
		// The same span, a job every 200 s (every window below still
		// holds jobs of tpl_3, one in 25, 83 minutes apart): -race slows
		// SQLite tenfold, and the test starts no goroutine of its own.
		n, step = 1500, 200*time.Second
	}
	seedJobsEvery(t, db, u.PersonalTeamID, n, step)
	hoursOnly := func(from, to time.Time, tpl string) int {
		var n int
		q, args := `SELECT COALESCE(SUM(count), 0) FROM job_stats WHERE team_id = ? AND slot >= ? AND slot < ?`, []any{u.PersonalTeamID, slotOf(from), slotCeil(to)}
		if tpl != "" {
			q, args = q+` AND template_id = ?`, append(args, tpl)
		}
		db.read.QueryRowContext(ctx, q, args...).Scan(&n)
		return n
	}
	now := time.Now().UTC()
	for _, c := range []struct{ from, to time.Time }{
		{now.Add(-90 * time.Minute), now.Add(time.Minute)},                                // hours only
		{now.Add(-50 * time.Hour), now},                                                   // partial, whole, partial
		{now.Add(-100 * time.Hour).Truncate(24 * time.Hour), now},                         // from a midnight
		{now.Add(-200 * time.Hour), now.Truncate(24 * time.Hour)},                         // to a midnight
		{now.Add(-26 * time.Hour), now.Add(-20 * time.Hour)},                              // across one midnight, no whole day
		{now.Add(-30 * 24 * time.Hour), now.Add(time.Hour)},                               // all
		{now.Truncate(24 * time.Hour).Add(-48 * time.Hour), now.Truncate(24 * time.Hour)}, // two whole days
	} {
		for _, tpl := range []string{"", "tpl_3"} {
			rows, err := db.JobAnalytics(ctx, app.AnalyticsFilter{TeamID: u.PersonalTeamID, TemplateID: tpl, From: c.from, To: c.to})
			if err != nil {
				t.Fatal(err)
			}
			got := 0
			for _, r := range rows {
				got += r.Count
			}
			if want := hoursOnly(c.from, c.to, tpl); got != want || want == 0 {
				t.Errorf("%v to %v, template %q: %d jobs, want %d", c.from, c.to, tpl, got, want)
			}
		}
		stats, err := db.TemplateStats(ctx, u.PersonalTeamID, c.from, c.to)
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for _, s := range stats {
			got += s.Count
		}
		if want := hoursOnly(c.from, c.to, ""); got != want {
			t.Errorf("template stats %v to %v: %d jobs, want %d", c.from, c.to, got, want)
		}
		hours, _ := db.HourCounts(ctx, u.PersonalTeamID, c.from, c.to)
		got = 0
		for _, h := range hours {
			got += h.Count
		}
		if want := hoursOnly(c.from, c.to, ""); got != want {
			t.Errorf("hour counts %v to %v: %d jobs, want %d", c.from, c.to, got, want)
		}
	}
	// FinishJob counts in all five.
	j := &app.Job{ID: "job_new", TeamID: u.PersonalTeamID, TemplateID: "tpl_3", Status: app.StatusPending, Format: "pdf", Priority: 1, CreatedAt: now.Add(-49 * time.Hour)}
	if err := db.CreateJobs(ctx, nil, j); err != nil {
		t.Fatal(err)
	}
	db.StartJob(ctx, j.ID, now)
	if _, err := db.FinishJob(ctx, j.ID, app.JobResult{Status: app.StatusCompleted, CompletedAt: now, DurationMS: 10}, nil); err != nil {
		t.Fatal(err)
	}
	mustFlush(t, db)
	for _, q := range []string{
		`SELECT SUM(count) FROM job_stats WHERE team_id = ?`, `SELECT SUM(count) FROM job_stats_daily WHERE team_id = ?`, `SELECT SUM(count) FROM job_hours WHERE team_id = ?`,
		`SELECT SUM(count) FROM job_team_hours WHERE team_id = ?`, `SELECT SUM(count) FROM job_team_days WHERE team_id = ?`,
	} {
		var got int
		db.read.QueryRowContext(ctx, q, u.PersonalTeamID).Scan(&got)
		if got != n+1 {
			t.Errorf("%s: %d, want %d", q, got, n+1)
		}
	}
}
