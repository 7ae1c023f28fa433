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
	ctx := context.Background()
	now := time.Now()
	for done := 0; done < n; {
		err := db.tx(ctx, func(tx *Tx) error {
			stmt, err := tx.PrepareContext(ctx, `INSERT INTO jobs (id, team_id, template_id, status, format, priority, created_at, completed_at, duration_ms)
				VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?)`)
			if err != nil {
				return err
			}
			defer stmt.Close()
			for i := 0; i < 50000 && done < n; i, done = i+1, done+1 {
				status, format := "completed", "pdf"
				if done%20 == 0 {
					status = "failed"
				}
				if done%3 == 0 {
					format = "xlsx"
				}
				at := now.Add(-time.Duration(done%(90*24*60)) * time.Minute)
				if _, err := stmt.ExecContext(ctx, fmt.Sprintf("job_%09d", done), teamID, fmt.Sprintf("tpl_%d", done%25), status, format,
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
		FROM jobs WHERE status IN ('completed', 'failed') GROUP BY 1, 2, 3, 4, 5`); err != nil {
		tb.Fatal(err)
	}
}

func TestAnalyticsAggregates(t *testing.T) {
	db := mustDB(t)
	u := mustUser(t, db, "a@example.com")
	seedJobs(t, db, u.PersonalTeamID, 2000)
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
	if total != 2000 || failed != 100 {
		t.Fatalf("total %d failed %d", total, failed)
	}
}

func TestFinishedJobsAreCountedAndOutliveTheirRecords(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	u := mustUser(t, db, "c@example.com")
	for i, status := range []string{app.StatusCompleted, app.StatusCompleted, app.StatusFailed} {
		j := &app.Job{ID: fmt.Sprintf("job_%d", i), TeamID: u.PersonalTeamID, TemplateID: "tpl_a", Status: app.StatusPending, Format: "pdf", Priority: 1, CreatedAt: time.Now()}
		if err := db.CreateJobs(ctx, nil, j); err != nil {
			t.Fatal(err)
		}
		db.StartJob(ctx, j.ID, time.Now())
		if _, err := db.FinishJob(ctx, j.ID, app.JobResult{Status: status, CompletedAt: time.Now(), DurationMS: 10}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.PurgeJobs(ctx, time.Now().Add(time.Hour), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	rows, _ := db.JobAnalytics(ctx, app.AnalyticsFilter{TeamID: u.PersonalTeamID, From: time.Now().Add(-time.Hour), To: time.Now().Add(time.Hour)})
	got := map[string]int{}
	for _, r := range rows {
		got[r.Status] += r.Count
	}
	if got["completed"] != 2 || got["failed"] != 1 {
		t.Fatalf("after purging the records, analytics = %v", got)
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
