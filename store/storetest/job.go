package storetest

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"folio/app"
)

var jobCases = []Case{
	{"JobsAreTeamScoped", jobsAreTeamScoped},
	{"JobListPagesAndCursors", jobListPagesAndCursors},
	{"StartJobCountsCrashes", startJobCountsCrashes},
	{"FinishJobOnceConcurrently", finishJobOnceConcurrently},
	{"UnfinishedJobIDs", unfinishedJobIDs},
	{"ExportJobsOldestFirst", exportJobsOldestFirst},
	{"QueueCounts", queueCounts},
	{"QueueTotals", queueTotals},
	{"JobFilesAndExpiry", jobFilesAndExpiry},
	{"PurgeJobs", purgeJobs},
}

// newJob is a pending job of team created at at.
func newJob(team, id string, at time.Time) *app.Job {
	return &app.Job{ID: id, TeamID: team, TemplateID: "tpl_1", Status: app.StatusPending, Format: "pdf", Priority: 1, CreatedAt: at}
}

// mustJobs creates jobs without a charge.
func mustJobs(t *testing.T, s Store, jobs ...*app.Job) {
	t.Helper()
	if err := s.CreateJobs(ctx, nil, jobs...); err != nil {
		t.Fatal(err)
	}
}

// mustEnd starts and finishes a job with status at at.
func mustEnd(t *testing.T, s Store, id, status string, at time.Time, durationMS int64) app.FinishOutcome {
	t.Helper()
	if _, ok, err := s.StartJob(ctx, id, at); !ok || err != nil {
		t.Fatalf("start %s: %v %v", id, ok, err)
	}
	out, err := s.FinishJob(ctx, id, app.JobResult{Status: status, CompletedAt: at, DurationMS: durationMS}, nil)
	if err != nil || !out.Ended {
		t.Fatalf("finish %s: %+v %v", id, out, err)
	}
	return out
}

func jobIDs(jobs []*app.Job) []string {
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	return ids
}

// jobsAreTeamScoped: team B never sees, lists, exports, counts or deletes
// team A's jobs and batches; a worker finds a job by id alone.
func jobsAreTeamScoped(t *testing.T, s Store) {
	a := mustUser(t, s, "a@example.com").PersonalTeamID
	b := mustUser(t, s, "b@example.com").PersonalTeamID
	j := newJob(a, "job_a", t0)
	j.Metadata, j.Variables = []byte(`{"ref":"A-1"}`), []byte(`{"n":1}`)
	v := 3
	j.TemplateVersion, j.Locale, j.PDFOptions, j.RequestID, j.APIKeyID = &v, "de-DE", []byte(`{"pdfa":"2b"}`), "req_1", "key_1"
	mustJobs(t, s, j)
	batch := &app.Batch{ID: "bat_a", TeamID: a, TemplateID: "tpl_1", Format: "pdf", Status: app.StatusProcessing, Total: 1, CreatedAt: t0}
	if err := s.CreateBatch(ctx, nil, batch, []*app.Job{{ID: "job_ab", TeamID: a, TemplateID: "tpl_1", BatchID: batch.ID, Status: app.StatusPending,
		Format: "pdf", Priority: 5, CreatedAt: t0}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.FindJobByID(ctx, a, "job_a")
	if err != nil || string(got.Metadata) != `{"ref":"A-1"}` || string(got.Variables) != `{"n":1}` || *got.TemplateVersion != 3 || got.Locale != "de-DE" ||
		string(got.PDFOptions) != `{"pdfa":"2b"}` || got.RequestID != "req_1" || got.APIKeyID != "key_1" || !got.CreatedAt.Equal(t0) || got.StartedAt != nil {
		t.Fatalf("job read back: %+v, %v", got, err)
	}
	_, err = s.FindJobByID(ctx, b, "job_a")
	wantCode(t, "another team's job", err, app.ECodeJobNotFound)
	if w, err := s.FindJobForWorker(ctx, "job_a"); err != nil || w.TeamID != a {
		t.Fatalf("worker lookup: %+v, %v", w, err)
	}
	_, err = s.FindJobForWorker(ctx, "job_none")
	wantCode(t, "a missing job", err, app.ECodeJobNotFound)
	if list, info, err := s.FindJobs(ctx, app.JobFilter{TeamID: b, Page: app.Page{Page: 1, Limit: 10}}); err != nil || len(list) != 0 || info.Total != 0 {
		t.Fatalf("team B's list: %v %+v %v", jobIDs(list), info, err)
	}
	_, err = s.FindBatchByID(ctx, b, batch.ID)
	wantCode(t, "another team's batch", err, app.ECodeBatchNotFound)
	n := 0
	if err := s.ExportJobs(ctx, app.ExportFilter{TeamID: b}, func(*app.Job) error { n++; return nil }); err != nil || n != 0 {
		t.Fatalf("team B exports %d jobs, %v", n, err)
	}
	if st, err := s.QueueCounts(ctx, b, t0); err != nil || st.Pending != 0 {
		t.Fatalf("team B's queue: %+v, %v", st, err)
	}
	out, err := s.DeleteJobs(ctx, b, []string{"job_a", "job_ab"}, t0, nil)
	if err != nil || len(out.Jobs) != 0 || len(out.Batches) != 0 {
		t.Fatalf("team B deletes A's jobs: %+v, %v", out, err)
	}
	if list, info, err := s.FindJobs(ctx, app.JobFilter{TeamID: a, Page: app.Page{Page: 1, Limit: 10}}); err != nil || len(list) != 2 || info.Total != 2 {
		t.Fatalf("team A's list: %v %+v %v", jobIDs(list), info, err)
	}
}

// jobListPagesAndCursors: newest first, equal creation times (a batch) in
// reverse insertion order; pages by offset and by cursor give the same
// rows; filters by status and template; totals; a bad cursor is refused.
func jobListPagesAndCursors(t *testing.T, s Store) {
	team := mustUser(t, s, "l@example.com").PersonalTeamID
	var want []string // newest first
	for i := range 25 {
		at := t0.Add(time.Duration(i/5) * time.Minute) // five jobs an instant
		j := newJob(team, fmt.Sprintf("job_%02d", i), at)
		if i%3 == 0 {
			j.TemplateID = "tpl_2"
		}
		mustJobs(t, s, j)
		want = append([]string{j.ID}, want...)
	}
	for _, id := range []string{"job_03", "job_07", "job_12"} {
		mustEnd(t, s, id, app.StatusCompleted, t0.Add(time.Hour), 1)
	}
	f := app.JobFilter{TeamID: team, Page: app.Page{Page: 1, Limit: 10}}
	var byCursor, byOffset []string
	for page := 1; ; page++ {
		list, info, err := s.FindJobs(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if info.Total != 25 && !info.FromCursor {
			t.Fatalf("page %d: total %d", page, info.Total)
		}
		byCursor = append(byCursor, jobIDs(list)...)
		off, _, err := s.FindJobs(ctx, app.JobFilter{TeamID: team, Page: app.Page{Page: page, Limit: 10}})
		if err != nil {
			t.Fatal(err)
		}
		byOffset = append(byOffset, jobIDs(off)...)
		if !info.More {
			if info.Next != "" || page != 3 {
				t.Fatalf("last page %d: %+v", page, info)
			}
			break
		}
		f.Cursor = info.Next
	}
	if !slices.Equal(byCursor, want) || !slices.Equal(byOffset, want) {
		t.Fatalf("by cursor %v\nby offset %v\nwant %v", byCursor, byOffset, want)
	}
	// Filters keep the order.
	var wantTpl, wantDone []string
	for _, id := range want {
		var i int
		fmt.Sscanf(id, "job_%d", &i)
		if i%3 == 0 {
			wantTpl = append(wantTpl, id)
		}
		if id == "job_03" || id == "job_07" || id == "job_12" {
			wantDone = append(wantDone, id)
		}
	}
	list, info, err := s.FindJobs(ctx, app.JobFilter{TeamID: team, TemplateID: "tpl_2", Page: app.Page{Page: 1, Limit: 50}})
	if err != nil || !slices.Equal(jobIDs(list), wantTpl) || info.Total != len(wantTpl) || info.More {
		t.Fatalf("by template: %v %+v %v; want %v", jobIDs(list), info, err, wantTpl)
	}
	list, info, err = s.FindJobs(ctx, app.JobFilter{TeamID: team, Status: app.StatusCompleted, Page: app.Page{Page: 2, Limit: 2}})
	if err != nil || !slices.Equal(jobIDs(list), wantDone[2:]) || info.Total != 3 {
		t.Fatalf("completed, page 2: %v %+v %v; want %v", jobIDs(list), info, err, wantDone[2:])
	}
	list, _, err = s.FindJobs(ctx, app.JobFilter{TeamID: team, Status: app.StatusCompleted, TemplateID: "tpl_2", Page: app.Page{Page: 1, Limit: 5}})
	if err != nil || !slices.Equal(jobIDs(list), []string{"job_12", "job_03"}) {
		t.Fatalf("completed of tpl_2: %v %v", jobIDs(list), err)
	}
	// Lists leave out variables and error details.
	if list[0].Variables != nil || list[0].ErrorInfo != nil {
		t.Fatalf("a listed job carries %s %v", list[0].Variables, list[0].ErrorInfo)
	}
	_, _, err = s.FindJobs(ctx, app.JobFilter{TeamID: team, Page: app.Page{Page: 1, Limit: 10}, Cursor: "nonsense"})
	wantCode(t, "a bad cursor", err, app.ECodeInvalidField)
}

// startJobCountsCrashes: starting a job found processing counts a crash
// (its previous run never ended); a run that shutdown released does not;
// an ended job does not start.
func startJobCountsCrashes(t *testing.T, s Store) {
	team := mustUser(t, s, "c@example.com").PersonalTeamID
	mustJobs(t, s, newJob(team, "job_c", t0))
	start := func(want int) {
		t.Helper()
		got, ok, err := s.StartJob(ctx, "job_c", t0.Add(time.Second))
		if err != nil || !ok || got.Crashes != want || got.Status != app.StatusProcessing || !got.StartedAt.Equal(t0.Add(time.Second)) {
			t.Fatalf("StartJob: %+v %v %v; want %d crashes", got, ok, err, want)
		}
	}
	start(0)
	start(1) // the first run never ended
	if err := s.ReleaseJob(ctx, "job_c"); err != nil {
		t.Fatal(err)
	}
	start(1) // released by a shutdown: no crash
	start(2)
	if _, err := s.FinishJob(ctx, "job_c", app.JobResult{Status: app.StatusFailed, CompletedAt: t0}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.ReleaseJob(ctx, "job_c"); err != nil {
		t.Fatal(err)
	}
	if j, ok, err := s.StartJob(ctx, "job_c", t0); ok || err != nil || j != nil {
		t.Fatalf("start of an ended job: %+v %v %v", j, ok, err)
	}
	if got, _ := s.FindJobForWorker(ctx, "job_c"); got.Status != app.StatusFailed || got.Crashes != 2 || got.Attempts != 4 {
		t.Fatalf("after the end: %s, %d crashes, %d attempts", got.Status, got.Crashes, got.Attempts)
	}
	if j, ok, err := s.StartJob(ctx, "job_none", t0); ok || err != nil || j != nil {
		t.Fatalf("start of a missing job: %+v %v %v", j, ok, err)
	}
}

// finishJobOnceConcurrently: eight workers (on any replica) record the end
// of one job at once: one records it, the others learn it had ended.
func finishJobOnceConcurrently(t *testing.T, s Store) {
	team := mustUser(t, s, "f@example.com").PersonalTeamID
	mustJobs(t, s, newJob(team, "job_f", t0))
	if _, ok, err := s.StartJob(ctx, "job_f", t0); !ok || err != nil {
		t.Fatal(ok, err)
	}
	outs := make([]app.FinishOutcome, 8)
	errs := concurrently(8, func(i int) error {
		var err error
		outs[i], err = s.FinishJob(ctx, "job_f", app.JobResult{Status: app.StatusCompleted, FilePath: fmt.Sprintf("f/%d.pdf", i), CompletedAt: t0,
			DurationMS: int64(i)}, nil)
		return err
	})
	winner := -1
	for i, err := range errs {
		if err != nil {
			t.Fatalf("finisher %d: %v", i, err)
		}
		if outs[i].Ended {
			if winner >= 0 {
				t.Fatalf("finishers %d and %d both recorded the end", winner, i)
			}
			winner = i
		}
	}
	if winner < 0 {
		t.Fatal("no finisher recorded the end")
	}
	j, err := s.FindJobForWorker(ctx, "job_f")
	if err != nil || j.FilePath != fmt.Sprintf("f/%d.pdf", winner) || *j.DurationMS != int64(winner) || j.Status != app.StatusCompleted {
		t.Fatalf("job after the race: %+v, %v (winner %d)", j, err, winner)
	}
	// Counted once in the roll-ups.
	hours, err := s.HourCounts(ctx, team, t0, t0.Add(time.Hour))
	if err != nil || len(hours) != 1 || hours[0].Count != 1 {
		t.Fatalf("hour counts %+v, %v", hours, err)
	}
}

// unfinishedJobIDs lists pending and processing jobs, oldest first, all or
// those created before a time.
func unfinishedJobIDs(t *testing.T, s Store) {
	team := mustUser(t, s, "u@example.com").PersonalTeamID
	old, run, done := newJob(team, "job_old", t0.Add(-time.Hour)), newJob(team, "job_run", t0.Add(-30*time.Minute)), newJob(team, "job_done", t0.Add(-time.Hour))
	run.Status, done.Status = app.StatusProcessing, app.StatusCompleted
	mustJobs(t, s, newJob(team, "job_new", t0), run, old, done)
	if ids, err := s.UnfinishedJobIDs(ctx, time.Time{}); err != nil || !slices.Equal(ids, []string{"job_old", "job_run", "job_new"}) {
		t.Fatalf("all unfinished: %v %v", ids, err)
	}
	if ids, err := s.UnfinishedJobIDs(ctx, t0.Add(-time.Minute)); err != nil || !slices.Equal(ids, []string{"job_old", "job_run"}) {
		t.Fatalf("unfinished before a minute ago: %v %v", ids, err)
	}
}

// exportJobsOldestFirst streams a team's jobs oldest first (ties in
// insertion order), filtered by status and creation time.
func exportJobsOldestFirst(t *testing.T, s Store) {
	team := mustUser(t, s, "e@example.com").PersonalTeamID
	other := mustUser(t, s, "e2@example.com").PersonalTeamID
	mustJobs(t, s, newJob(team, "job_3", t0.Add(2*time.Minute)), newJob(team, "job_1", t0), newJob(team, "job_2", t0),
		newJob(team, "job_0", t0.Add(-time.Minute)), newJob(other, "job_x", t0))
	mustEnd(t, s, "job_2", app.StatusCompleted, t0, 1)
	export := func(f app.ExportFilter) []string {
		t.Helper()
		var ids []string
		if err := s.ExportJobs(ctx, f, func(j *app.Job) error {
			if j.Variables != nil {
				t.Errorf("exported job %s carries its variables", j.ID)
			}
			ids = append(ids, j.ID)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return ids
	}
	if got := export(app.ExportFilter{TeamID: team}); !slices.Equal(got, []string{"job_0", "job_1", "job_2", "job_3"}) {
		t.Fatalf("export: %v", got)
	}
	from, to := t0, t0.Add(2*time.Minute)
	if got := export(app.ExportFilter{TeamID: team, From: &from, To: &to}); !slices.Equal(got, []string{"job_1", "job_2"}) {
		t.Fatalf("export of [t0, t0+2m): %v", got)
	}
	if got := export(app.ExportFilter{TeamID: team, Status: app.StatusPending}); !slices.Equal(got, []string{"job_0", "job_1", "job_3"}) {
		t.Fatalf("export of pending jobs: %v", got)
	}
	stop := fmt.Errorf("stop")
	n := 0
	if err := s.ExportJobs(ctx, app.ExportFilter{TeamID: team}, func(*app.Job) error { n++; return stop }); err != stop || n != 1 {
		t.Fatalf("an export stopped by its callback: %v after %d", err, n)
	}
}

// queueCounts: a team's pending and processing jobs, those that ended in
// the last hour, and the age of its oldest pending one.
func queueCounts(t *testing.T, s Store) {
	team := mustUser(t, s, "q@example.com").PersonalTeamID
	now := t0.Add(2 * time.Hour)
	mustJobs(t, s, newJob(team, "job_p1", t0), newJob(team, "job_p2", t0.Add(time.Hour)), newJob(team, "job_r", t0),
		newJob(team, "job_c", t0), newJob(team, "job_f", t0), newJob(team, "job_old", t0))
	if _, ok, err := s.StartJob(ctx, "job_r", now); !ok || err != nil {
		t.Fatal(ok, err)
	}
	mustEnd(t, s, "job_c", app.StatusCompleted, now.Add(-time.Minute), 1)
	mustEnd(t, s, "job_f", app.StatusFailed, now.Add(-59*time.Minute), 1)
	mustEnd(t, s, "job_old", app.StatusCompleted, now.Add(-61*time.Minute), 1)
	st, err := s.QueueCounts(ctx, team, now)
	if err != nil || st.Pending != 2 || st.Processing != 1 || st.CompletedLastHour != 1 || st.FailedLastHour != 1 || st.OldestPendingAgeSeconds != 7200 {
		t.Fatalf("queue counts %+v, %v", st, err)
	}
}

// queueTotals: /metrics' server-wide figures count pending and processing
// jobs of every team and the age of the oldest pending one; with none
// pending the age is zero.
func queueTotals(t *testing.T, s Store) {
	now := t0.Add(2 * time.Hour)
	if got, err := s.QueueTotals(ctx, now); err != nil || *got != (app.QueueTotals{}) {
		t.Fatalf("empty store: totals %+v, %v", got, err)
	}
	a := mustUser(t, s, "a@example.com").PersonalTeamID
	b := mustUser(t, s, "b@example.com").PersonalTeamID
	mustJobs(t, s, newJob(a, "job_p1", now.Add(-90*time.Second)), newJob(b, "job_p2", now.Add(-89*time.Second)), newJob(a, "job_r", t0),
		newJob(b, "job_c", t0))
	if _, ok, err := s.StartJob(ctx, "job_r", now); !ok || err != nil {
		t.Fatal(ok, err)
	}
	mustEnd(t, s, "job_c", app.StatusCompleted, now, 1)
	got, err := s.QueueTotals(ctx, now)
	if err != nil || got.Pending != 2 || got.Processing != 1 || got.OldestPendingAge != 90*time.Second || got.PendingDeliveries != 0 {
		t.Fatalf("totals %+v, %v", got, err)
	}
}

// jobFilesAndExpiry: a document kept in the database is read back, goes
// with ClearFile and with its job; files past their expiry are listed.
func jobFilesAndExpiry(t *testing.T, s Store) {
	team := mustUser(t, s, "j@example.com").PersonalTeamID
	doc := []byte("%PDF-1.7 a whole document %%EOF")
	exp, later := t0.Add(time.Hour), t0.Add(48*time.Hour)
	mustJobs(t, s, newJob(team, "job_a", t0), newJob(team, "job_b", t0), newJob(team, "job_c", t0))
	for _, c := range []struct {
		id      string
		expires time.Time
		output  []byte
	}{{"job_a", exp, doc}, {"job_b", later, doc}, {"job_c", exp, nil}} {
		if _, ok, err := s.StartJob(ctx, c.id, t0); !ok || err != nil {
			t.Fatal(ok, err)
		}
		if _, err := s.FinishJob(ctx, c.id, app.JobResult{Status: app.StatusCompleted, FilePath: team + "/" + c.id + ".pdf", FileSize: int64(len(doc)),
			CompletedAt: t0, ExpiresAt: &c.expires, Output: c.output}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.FindJobFile(ctx, "job_a"); err != nil || !bytes.Equal(got, doc) {
		t.Fatalf("document %q, %v", got, err)
	}
	_, err := s.FindJobFile(ctx, "job_c")
	wantCode(t, "a document kept as a file", err, app.ECodeFileGone)
	expired, err := s.ExpiredFiles(ctx, t0.Add(2*time.Hour), 10)
	ids := jobIDs(expired)
	slices.Sort(ids)
	if err != nil || !slices.Equal(ids, []string{"job_a", "job_c"}) {
		t.Fatalf("expired files %v, %v", ids, err)
	}
	if err := s.ClearFile(ctx, "job_a"); err != nil {
		t.Fatal(err)
	}
	_, err = s.FindJobFile(ctx, "job_a")
	wantCode(t, "a cleared document", err, app.ECodeFileGone)
	if j, _ := s.FindJobForWorker(ctx, "job_a"); j.FilePath != "" || j.FileSize != 0 || j.Status != app.StatusCompleted {
		t.Fatalf("cleared job %+v", j)
	}
	if expired, _ := s.ExpiredFiles(ctx, t0.Add(2*time.Hour), 10); len(expired) != 1 || expired[0].ID != "job_c" {
		t.Fatalf("expired after the clear: %v", jobIDs(expired))
	}
	if _, err := s.DeleteJobs(ctx, team, []string{"job_b"}, t0, nil); err != nil {
		t.Fatal(err)
	}
	_, err = s.FindJobFile(ctx, "job_b")
	wantCode(t, "the document of a deleted job", err, app.ECodeFileGone)
}

// purgeJobs deletes completed and failed jobs by their own retention
// (their documents with them), keeps unfinished ones, and ended batches
// once their jobs are gone.
func purgeJobs(t *testing.T, s Store) {
	team := mustUser(t, s, "p@example.com").PersonalTeamID
	mustJobs(t, s, newJob(team, "job_c_old", t0), newJob(team, "job_c_new", t0), newJob(team, "job_f_old", t0),
		newJob(team, "job_f_new", t0), newJob(team, "job_pending", t0.Add(-100*time.Hour)))
	for _, c := range []struct {
		id, status string
		at         time.Time
	}{{"job_c_old", app.StatusCompleted, t0}, {"job_c_new", app.StatusCompleted, t0.Add(2 * time.Hour)},
		{"job_f_old", app.StatusFailed, t0}, {"job_f_new", app.StatusFailed, t0.Add(2 * time.Hour)}} {
		if _, ok, err := s.StartJob(ctx, c.id, c.at); !ok || err != nil {
			t.Fatal(ok, err)
		}
		if _, err := s.FinishJob(ctx, c.id, app.JobResult{Status: c.status, CompletedAt: c.at, Output: []byte("doc")}, nil); err != nil {
			t.Fatal(err)
		}
	}
	b := &app.Batch{ID: "bat_p", TeamID: team, TemplateID: "tpl_1", Format: "pdf", Status: app.StatusProcessing, Total: 1, CreatedAt: t0}
	if err := s.CreateBatch(ctx, nil, b, []*app.Job{{ID: "job_b", TeamID: team, TemplateID: "tpl_1", BatchID: b.ID, Status: app.StatusPending,
		Format: "pdf", Priority: 5, CreatedAt: t0}}); err != nil {
		t.Fatal(err)
	}
	if out := mustEnd(t, s, "job_b", app.StatusCompleted, t0, 1); out.Batch == nil {
		t.Fatal("the batch did not end with its job")
	}
	st, err := s.PurgeJobs(ctx, t0.Add(time.Hour), t0.Add(time.Minute))
	if err != nil || st.Deleted["jobs"] != 3 || st.Deleted["batches"] != 1 {
		t.Fatalf("purge: %+v, %v", st, err)
	}
	var left []string
	if err := s.ExportJobs(ctx, app.ExportFilter{TeamID: team}, func(j *app.Job) error { left = append(left, j.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(left)
	if !slices.Equal(left, []string{"job_c_new", "job_f_new", "job_pending"}) {
		t.Fatalf("left after the purge: %v", left)
	}
	_, err = s.FindJobFile(ctx, "job_c_old")
	wantCode(t, "a purged job's document", err, app.ECodeFileGone)
	_, err = s.FindBatchByID(ctx, team, b.ID)
	wantCode(t, "a purged batch", err, app.ECodeBatchNotFound)
	if st, err := s.PurgeJobs(ctx, t0.Add(time.Hour), t0.Add(time.Minute)); err != nil || st.Total() != 0 {
		t.Fatalf("a second purge: %+v, %v", st, err)
	}
}
