package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"folio/app"
)

// seedJobs inserts n ended jobs of one team, one a minute back from now
// over 25 templates, with one SQL statement, and fills the roll-ups from
// them as count_job would have.
func seedJobs(tb testing.TB, db *DB, teamID string, n int) {
	tb.Helper()
	ctx := context.Background()
	now := time.Now().UnixMilli()
	if _, err := db.pool.Exec(ctx, `INSERT INTO jobs (id, team_id, template_id, status, format, priority, created_at, completed_at, duration_ms)
		SELECT 'job_' || lpad(i::text, 9, '0'), $1, 'tpl_' || (i % 25), CASE WHEN i % 20 = 0 THEN 'failed' ELSE 'completed' END,
			CASE WHEN i % 3 = 0 THEN 'xlsx' ELSE 'pdf' END, 1, $2::bigint - i * 60000, $2::bigint - i * 60000 + 5, 5 + i % 40
		FROM generate_series(0::bigint, $3::bigint - 1) AS i`, teamID, now, n); err != nil {
		tb.Fatal(err)
	}
	if _, err := db.pool.Exec(ctx, `SELECT count_job(team_id, created_at / 3600000, template_id, status, format, duration_ms, 1) FROM jobs
		WHERE team_id = $1`, teamID); err != nil {
		tb.Fatal(err)
	}
	if _, err := db.pool.Exec(ctx, `VACUUM ANALYZE jobs`); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkJobReads measures, on a team with 100,000 jobs (about 70 days
// at one a minute), the reads that could grow with a team's history:
// the first and a deep page of the list, a cursor page, the 30-day
// analytics from the roll-ups (and, for comparison, grouped from the job
// rows themselves, which retention would empty anyway), insights and the
// queue figures:
//
//	FOLIO_REQUIRE_POSTGRES=1 go test ./store/postgres -run '^$' -bench JobReads -benchtime 50x
func BenchmarkJobReads(b *testing.B) {
	ctx := context.Background()
	db := mustDB(b)
	u := mustTestUser(b, db)
	seedJobs(b, db, u, 100_000)
	now := time.Now()
	first, info, err := db.FindJobs(ctx, app.JobFilter{TeamID: u, Page: app.Page{Page: 1, Limit: 100}})
	if err != nil || len(first) != 100 || !info.Estimate {
		b.Fatal(len(first), info, err)
	}
	month := app.AnalyticsFilter{TeamID: u, From: now.Add(-30 * 24 * time.Hour), To: now}
	for _, c := range []struct {
		name string
		fn   func() error
	}{
		{"list/page1", func() error {
			_, _, err := db.FindJobs(ctx, app.JobFilter{TeamID: u, Page: app.Page{Page: 1, Limit: 100}})
			return err
		}},
		{"list/page900", func() error {
			_, _, err := db.FindJobs(ctx, app.JobFilter{TeamID: u, Page: app.Page{Page: 900, Limit: 100}})
			return err
		}},
		{"list/cursor", func() error {
			_, _, err := db.FindJobs(ctx, app.JobFilter{TeamID: u, Page: app.Page{Page: 1, Limit: 100}, Cursor: info.Next})
			return err
		}},
		{"list/status-page500", func() error {
			_, _, err := db.FindJobs(ctx, app.JobFilter{TeamID: u, Status: app.StatusCompleted, Page: app.Page{Page: 500, Limit: 100}})
			return err
		}},
		{"analytics30d/rollups", func() error {
			_, err := db.JobAnalytics(ctx, month)
			return err
		}},
		{"analytics30d/jobs", func() error {
			rows, err := db.pool.Query(ctx, `SELECT created_at / 86400000, status, format, COUNT(*), SUM(duration_ms), COUNT(duration_ms)
				FROM jobs WHERE team_id = $1 AND created_at >= $2 AND created_at < $3 AND status IN ('completed', 'failed') GROUP BY 1, 2, 3`,
				u, ms(month.From), ms(month.To))
			if err != nil {
				return err
			}
			rows.Close()
			return rows.Err()
		}},
		{"templateStats30d", func() error {
			_, err := db.TemplateStats(ctx, u, month.From, month.To)
			return err
		}},
		{"hourCounts30d", func() error {
			_, err := db.HourCounts(ctx, u, month.From, month.To)
			return err
		}},
		{"queueCounts", func() error {
			_, err := db.QueueCounts(ctx, u, now)
			return err
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if err := c.fn(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFinishJob measures recording a job's end (FinishJob with its
// roll-ups) from 4 concurrent workers (2 a core) on one team, the roll-up rows of the
// hour shared by all of them:
//
//	FOLIO_REQUIRE_POSTGRES=1 go test ./store/postgres -run '^$' -bench FinishJob -benchtime 2000x
func BenchmarkFinishJob(b *testing.B) {
	ctx := context.Background()
	db := mustDB(b)
	u := mustTestUser(b, db)
	now := time.Now()
	jobs := make([]*app.Job, b.N)
	for i := range jobs {
		jobs[i] = &app.Job{ID: fmt.Sprintf("job_%d", i), TeamID: u, TemplateID: "tpl_1", Status: app.StatusProcessing, Format: "pdf", Priority: 1, CreatedAt: now}
	}
	for i := 0; i < len(jobs); i += 1000 {
		if err := db.CreateJobs(ctx, nil, jobs[i:min(i+1000, len(jobs))]...); err != nil {
			b.Fatal(err)
		}
	}
	next := make(chan string, len(jobs))
	for _, j := range jobs {
		next <- j.ID
	}
	close(next)
	b.SetParallelism(2)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id := <-next
			if _, err := db.FinishJob(ctx, id, app.JobResult{Status: app.StatusCompleted, CompletedAt: now, DurationMS: 3}, nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// mustTestUser creates a user and returns its personal team.
func mustTestUser(tb testing.TB, db *DB) string {
	tb.Helper()
	at := time.Now()
	u := &app.User{ID: app.NewID("usr"), Email: app.NewID("e") + "@example.com", Name: "Bench", PasswordHash: "x", CreatedAt: at, UpdatedAt: at}
	team := &app.Team{ID: app.NewID("team"), Name: "Personal", Slug: app.NewID("s"), IsPersonal: true, Plan: "free", OwnerID: u.ID, CreatedAt: at, UpdatedAt: at}
	u.PersonalTeamID = team.ID
	if err := db.CreateUser(context.Background(), u, team); err != nil {
		tb.Fatal(err)
	}
	return team.ID
}
