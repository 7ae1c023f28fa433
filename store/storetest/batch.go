package storetest

import (
	"fmt"
	"testing"
	"time"

	"folio/app"
)

var batchCases = []Case{
	{"BatchStatesFollowJobs", batchStatesFollowJobs},
	{"BatchEndsOnceWithItsLastJob", batchEndsOnceWithItsLastJob},
}

// mustBatch creates a batch of n pending jobs (ids prefix_0...) of team.
func mustBatch(t *testing.T, s Store, charge *app.Charge, team, id string, n int) []string {
	t.Helper()
	b := &app.Batch{ID: id, TeamID: team, TemplateID: "tpl_1", Format: "pdf", Status: app.StatusProcessing, Total: n, CreatedAt: t0}
	var jobs []*app.Job
	var ids []string
	for i := range n {
		j := &app.Job{ID: fmt.Sprintf("%s_%d", id, i), TeamID: team, TemplateID: "tpl_1", BatchID: id, Status: app.StatusPending, Format: "pdf",
			Priority: 5, CreatedAt: t0}
		jobs, ids = append(jobs, j), append(ids, j.ID)
	}
	if err := s.CreateBatch(ctx, charge, b, jobs); err != nil {
		t.Fatal(err)
	}
	if b.States != "pppppppppppppppppppppppppppppppppppppppppppppppp"[:n] {
		t.Fatalf("new batch's states %q", b.States)
	}
	return ids
}

// batchStatesFollowJobs follows a batch's version and states through
// every change a job goes through: start, release, finish (completed and
// failed), deletion and retention. Each change raises the version once;
// the states say each document's state in request order, and
// FindBatchDocs reads the jobs they point at.
func batchStatesFollowJobs(t *testing.T, s Store) {
	team := mustUser(t, s, "s@example.com").PersonalTeamID
	ids := mustBatch(t, s, nil, team, "bat_s", 5)
	version := int64(-1)
	want := func(states string, completed, failed int, status string) {
		t.Helper()
		got, err := s.FindBatchByID(ctx, team, "bat_s")
		if err != nil {
			t.Fatal(err)
		}
		if got.States != states || got.Completed != completed || got.Failed != failed || got.Status != status || got.Total != 5 || !got.CreatedAt.Equal(t0) {
			t.Fatalf("batch = %+v; want %q, %d, %d, %s", got, states, completed, failed, status)
		}
		if got.Version != version+1 && version >= 0 {
			t.Fatalf("version %d after %d: want one more", got.Version, version)
		}
		version = got.Version
	}
	start := func(id string) {
		t.Helper()
		if _, ok, err := s.StartJob(ctx, id, t0); !ok || err != nil {
			t.Fatal(id, ok, err)
		}
	}
	exp := t0.Add(time.Hour)
	finish := func(id, status string) {
		t.Helper()
		r := app.JobResult{Status: status, CompletedAt: t0.Add(time.Minute), ExpiresAt: &exp}
		if status == app.StatusFailed {
			r.Error = "boom"
		}
		if out, err := s.FinishJob(ctx, id, r, nil); err != nil || !out.Ended {
			t.Fatal(id, out, err)
		}
	}
	want("ppppp", 0, 0, app.StatusProcessing)
	start(ids[1])
	want("prppp", 0, 0, app.StatusProcessing)
	finish(ids[1], app.StatusCompleted)
	want("pcppp", 1, 0, app.StatusProcessing)
	start(ids[3])
	want("pcprp", 1, 0, app.StatusProcessing)
	if err := s.ReleaseJob(ctx, ids[3]); err != nil { // shutdown
		t.Fatal(err)
	}
	want("pcppp", 1, 0, app.StatusProcessing)
	start(ids[3])
	want("pcprp", 1, 0, app.StatusProcessing)
	// A second start of a processing job (a crash recovered) changes no state.
	start(ids[3])
	if got, _ := s.FindBatchByID(ctx, team, "bat_s"); got.Version != version || got.States != "pcprp" {
		t.Fatalf("restart of a processing job: version %d, states %q", got.Version, got.States)
	}
	finish(ids[3], app.StatusFailed)
	want("pcpfp", 1, 1, app.StatusProcessing)
	// Deleting a pending job (a cancel) counts it failed; deleting an
	// ended one keeps the counts; both leave the list.
	if _, err := s.DeleteJobs(ctx, team, []string{ids[0]}, t0, nil); err != nil {
		t.Fatal(err)
	}
	want("-cpfp", 1, 2, app.StatusProcessing)
	if _, err := s.DeleteJobs(ctx, team, []string{ids[1]}, t0, nil); err != nil {
		t.Fatal(err)
	}
	want("--pfp", 1, 2, app.StatusProcessing)

	docs, err := s.FindBatchDocs(ctx, "bat_s", nil)
	if err != nil || len(docs) != 3 {
		t.Fatalf("docs = %+v, %v", docs, err)
	}
	for i, d := range docs {
		if d.JobID != ids[2+i] || d.Seq != 2+i {
			t.Fatalf("doc %d = %+v, want %s at %d", i, d, ids[2+i], 2+i)
		}
	}
	if d := docs[1]; d.Status != app.StatusFailed || d.Error != "boom" {
		t.Fatalf("failed doc = %+v", d)
	}
	some, err := s.FindBatchDocs(ctx, "bat_s", []string{ids[3], ids[0], "job_x"})
	if err != nil || len(some) != 1 || some[0].JobID != ids[3] || some[0].Seq != 3 {
		t.Fatalf("docs by id = %+v, %v", some, err)
	}

	// The batch ends with its last job, in the same version.
	start(ids[2])
	want("--rfp", 1, 2, app.StatusProcessing)
	finish(ids[2], app.StatusCompleted)
	want("--cfp", 2, 2, app.StatusProcessing)
	start(ids[4])
	want("--cfr", 2, 2, app.StatusProcessing)
	finish(ids[4], app.StatusCompleted)
	want("--cfc", 3, 2, app.StatusCompleted)
	if got, _ := s.FindBatchByID(ctx, team, "bat_s"); got.CompletedAt == nil || !got.CompletedAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("ended batch %+v", got)
	}
	if d, _ := s.FindBatchDocs(ctx, "bat_s", []string{ids[4]}); len(d) != 1 || d[0].ExpiresAt == nil || !d[0].ExpiresAt.Equal(exp) {
		t.Fatalf("completed doc = %+v", d)
	}

	// Retention deletes the completed jobs (the failed one stays longer).
	if _, err := s.PurgeJobs(ctx, t0.Add(time.Hour), t0); err != nil {
		t.Fatal(err)
	}
	got, err := s.FindBatchByID(ctx, team, "bat_s")
	if err != nil || got.States != "---f-" || got.Version != version+2 {
		t.Fatalf("after retention: %+v, %v (version was %d)", got, err, version)
	}
}

// batchEndsOnceWithItsLastJob: every job of a batch is finished by two
// workers at once, all at the same time: each job's end is recorded once,
// and exactly one finisher ends the batch, with all its jobs.
func batchEndsOnceWithItsLastJob(t *testing.T, s Store) {
	team := mustUser(t, s, "o@example.com").PersonalTeamID
	ids := mustBatch(t, s, nil, team, "bat_o", 6)
	for _, id := range ids {
		if _, ok, err := s.StartJob(ctx, id, t0); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	outs := make([]app.FinishOutcome, 2*len(ids))
	errs := concurrently(len(outs), func(i int) error {
		status := app.StatusCompleted
		if i%len(ids) == 0 {
			status = app.StatusFailed
		}
		var err error
		outs[i], err = s.FinishJob(ctx, ids[i%len(ids)], app.JobResult{Status: status, CompletedAt: t0.Add(time.Minute)},
			func(j *app.Job, b *app.Batch, batchJobs []*app.Job) ([]*app.Event, error) { return nil, nil })
		return err
	})
	ended, endedBatch := map[string]int{}, 0
	for i, out := range outs {
		if errs[i] != nil {
			t.Fatalf("finisher %d: %v", i, errs[i])
		}
		if out.Ended {
			ended[out.Job.ID]++
		}
		if out.Batch != nil {
			endedBatch++
			if out.Batch.Status != app.StatusCompleted || out.Batch.Completed != 5 || out.Batch.Failed != 1 {
				t.Fatalf("the batch ended as %+v", out.Batch)
			}
		}
	}
	for _, id := range ids {
		if ended[id] != 1 {
			t.Fatalf("job %s ended %d times", id, ended[id])
		}
	}
	if endedBatch != 1 {
		t.Fatalf("the batch ended %d times", endedBatch)
	}
	b, err := s.FindBatchByID(ctx, team, "bat_o")
	if err != nil || b.States != "fccccc" || b.Completed != 5 || b.Failed != 1 || b.Status != app.StatusCompleted {
		t.Fatalf("batch after the race: %+v, %v", b, err)
	}
}
