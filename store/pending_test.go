package store

import (
	"context"
	"testing"
	"time"

	"folio/app"
)

// TestDamagedPendingCountsBlockNoWrite: a pending row that cannot be
// folded fails the reads that need the fold, with the cause, and nothing
// else: jobs still end and their counts wait; once the row is gone, the
// next read folds them all.
func TestDamagedPendingCountsBlockNoWrite(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	team := mustUser(t, db, "fold@example.com").PersonalTeamID
	now := time.Now().UTC()
	end := func(id string) {
		t.Helper()
		j := &app.Job{ID: id, TeamID: team, TemplateID: "tpl_1", Status: app.StatusPending, Format: "pdf", Priority: 1, CreatedAt: now}
		r := app.JobResult{Status: app.StatusCompleted, FilePath: team + "/" + id + ".pdf", FileSize: 9, CompletedAt: now, Output: []byte("%PDF-1.7\n")}
		if _, err := db.RecordJob(ctx, nil, j, r, nil); err != nil {
			t.Fatalf("record %s: %v", id, err)
		}
	}
	total := func() (int, error) {
		rows, err := db.JobAnalytics(ctx, app.AnalyticsFilter{TeamID: team, From: now.Add(-time.Hour), To: now.Add(time.Hour)})
		n := 0
		for _, r := range rows {
			n += r.Count
		}
		return n, err
	}
	end("job_1")
	if n, err := total(); err != nil || n != 1 {
		t.Fatalf("analytics: %d, %v; want 1", n, err)
	}
	end("job_2")
	if _, err := db.write.ExecContext(ctx, `INSERT INTO job_count_pending (counts) VALUES ('not json')`); err != nil {
		t.Fatal(err)
	}
	if n, err := total(); err == nil {
		t.Fatalf("analytics over a damaged pending row: %d, no error", n)
	}
	end("job_3") // the writes go on, the fold fails in the same groups
	if n, err := total(); err == nil {
		t.Fatalf("analytics: %d, no error", n)
	}
	var pending int
	db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM job_count_pending`).Scan(&pending)
	if pending < 3 {
		t.Fatalf("%d pending rows, want job_2's, job_3's and the damaged one", pending)
	}
	if _, err := db.write.ExecContext(ctx, `DELETE FROM job_count_pending WHERE counts = 'not json'`); err != nil {
		t.Fatal(err)
	}
	if n, err := total(); err != nil || n != 3 {
		t.Fatalf("analytics after the damaged row went: %d, %v; want 3", n, err)
	}
}
