package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"folio/app"
)

// TestBatchStates follows a batch's version and states (migration 0017)
// through every change a job goes through: start, release, finish
// (completed and failed), deletion and retention. Each change raises the
// version once, in its own transaction; the states say each document's
// state in request order, and FindBatchDocs reads the jobs they point at.
func TestBatchStates(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	team := mustUser(t, db, "s@example.com").PersonalTeamID
	now := time.Now().UTC()
	b := &app.Batch{ID: "bat_s", TeamID: team, TemplateID: "tpl_1", Format: "pdf", Status: "processing", Total: 5, CreatedAt: now}
	ids := []string{"job_0", "job_1", "job_2", "job_3", "job_4"}
	var jobs []*app.Job
	for _, id := range ids {
		jobs = append(jobs, &app.Job{ID: id, TeamID: team, TemplateID: "tpl_1", BatchID: b.ID, Status: app.StatusPending, Format: "pdf", Priority: 5, CreatedAt: now})
	}
	if err := db.CreateBatch(ctx, nil, b, jobs); err != nil {
		t.Fatal(err)
	}
	version := int64(-1)
	want := func(states string, completed, failed int, status string) {
		t.Helper()
		got, err := db.FindBatchByID(ctx, team, b.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.States != states || got.Completed != completed || got.Failed != failed || got.Status != status {
			t.Fatalf("batch = states %q, %d completed, %d failed, %s; want %q, %d, %d, %s", got.States, got.Completed, got.Failed, got.Status, states, completed, failed, status)
		}
		if got.Version != version+1 && version >= 0 {
			t.Fatalf("version %d after %d: want one more", got.Version, version)
		}
		version = got.Version
	}
	start := func(id string) {
		t.Helper()
		if _, ok, err := db.StartJob(ctx, id, now); !ok || err != nil {
			t.Fatal(id, ok, err)
		}
	}
	finish := func(id, status string) {
		t.Helper()
		exp := now.Add(time.Hour)
		if out, err := db.FinishJob(ctx, id, app.JobResult{Status: status, Error: map[bool]string{true: "boom"}[status == app.StatusFailed], CompletedAt: now, ExpiresAt: &exp}, nil); err != nil || !out.Ended {
			t.Fatal(id, out, err)
		}
	}
	want("ppppp", 0, 0, "processing")
	start("job_1")
	want("prppp", 0, 0, "processing")
	finish("job_1", app.StatusCompleted)
	want("pcppp", 1, 0, "processing")
	start("job_3")
	want("pcprp", 1, 0, "processing")
	if err := db.ReleaseJob(ctx, "job_3"); err != nil { // shutdown
		t.Fatal(err)
	}
	want("pcppp", 1, 0, "processing")
	start("job_3")
	want("pcprp", 1, 0, "processing")
	// A second start of a processing job (a crash recovered) changes no state.
	start("job_3")
	if got, _ := db.FindBatchByID(ctx, team, b.ID); got.Version != version || got.States != "pcprp" {
		t.Fatalf("restart of a processing job: version %d, states %q", got.Version, got.States)
	}
	finish("job_3", app.StatusFailed)
	want("pcpfp", 1, 1, "processing")
	// Deleting a pending job (a cancel) counts it failed; deleting an
	// ended one keeps the counts; both leave the list.
	if _, err := db.DeleteJobs(ctx, team, []string{"job_0"}, now, nil); err != nil {
		t.Fatal(err)
	}
	want("-cpfp", 1, 2, "processing")
	if _, err := db.DeleteJobs(ctx, team, []string{"job_1"}, now, nil); err != nil {
		t.Fatal(err)
	}
	want("--pfp", 1, 2, "processing")

	docs, err := db.FindBatchDocs(ctx, b.ID, nil)
	if err != nil || len(docs) != 3 {
		t.Fatalf("docs = %+v, %v", docs, err)
	}
	for i, d := range docs {
		if wantID := ids[2+i]; d.JobID != wantID || d.Seq != 2+i {
			t.Fatalf("doc %d = %+v, want %s at %d", i, d, wantID, 2+i)
		}
	}
	if d := docs[1]; d.Status != app.StatusFailed || d.Error != "boom" {
		t.Fatalf("failed doc = %+v", d)
	}
	some, err := db.FindBatchDocs(ctx, b.ID, []string{"job_3", "job_0", "job_x"})
	if err != nil || len(some) != 1 || some[0].JobID != "job_3" || some[0].Seq != 3 {
		t.Fatalf("docs by id = %+v, %v", some, err)
	}

	// The batch ends with its last job, in the same version.
	start("job_2")
	want("--rfp", 1, 2, "processing")
	finish("job_2", app.StatusCompleted)
	want("--cfp", 2, 2, "processing")
	start("job_4")
	want("--cfr", 2, 2, "processing")
	finish("job_4", app.StatusCompleted)
	want("--cfc", 3, 2, app.StatusCompleted)
	if d, _ := db.FindBatchDocs(ctx, b.ID, []string{"job_4"}); len(d) != 1 || d[0].ExpiresAt == nil || !d[0].ExpiresAt.Equal(now.Add(time.Hour).Truncate(time.Millisecond)) {
		t.Fatalf("completed doc = %+v", d)
	}

	// Retention deletes the completed jobs (the failed one stays longer).
	if _, err := db.PurgeJobs(ctx, now.Add(time.Minute), now.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	got, err := db.FindBatchByID(ctx, team, b.ID)
	if err != nil || got.States != "---f-" || got.Version != version+2 {
		t.Fatalf("after retention: %+v, %v (version was %d)", got, err, version)
	}
}

// TestBatchWithoutStates reads a batch made before migration 0017: no
// states, no batch_seq, yet its version rises with each change and its
// documents are read in request order.
func TestBatchWithoutStates(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "folio.db")
	old, err := open(ctx, path, "migrations/0016_meta_generation.sql")
	if err != nil {
		t.Fatal(err)
	}
	team := mustUser(t, old, "o@example.com").PersonalTeamID
	now := time.Now().UTC()
	if _, err := old.write.ExecContext(ctx, `INSERT INTO batches (`+batchCols+`) VALUES ('bat_o', ?, 'tpl_1', 'pdf', 'processing', 2, 0, 0, ?, NULL)`, team, ms(now)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"job_o1", "job_o2"} {
		if _, err := old.write.ExecContext(ctx, `INSERT INTO jobs (id, team_id, template_id, batch_id, status, format, priority, created_at) VALUES (?, ?, 'tpl_1', 'bat_o', 'pending', 'pdf', 5, ?)`, id, team, ms(now)); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b, err := db.FindBatchByID(ctx, team, "bat_o")
	if err != nil || b.States != "" || b.Version != 0 {
		t.Fatalf("migrated batch = %+v, %v", b, err)
	}
	if _, ok, err := db.StartJob(ctx, "job_o2", now); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if b, err = db.FindBatchByID(ctx, team, "bat_o"); err != nil || b.States != "" || b.Version != 1 {
		t.Fatalf("after a start = %+v, %v", b, err)
	}
	docs, err := db.FindBatchDocs(ctx, "bat_o", nil)
	if err != nil || len(docs) != 2 || docs[0].JobID != "job_o1" || docs[1].Status != app.StatusProcessing || docs[0].Seq != -1 {
		t.Fatalf("docs = %+v, %v", docs, err)
	}
}
