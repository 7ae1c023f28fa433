package storetest

import (
	"fmt"
	"testing"
	"time"

	"folio/app"
)

var usageCases = []Case{
	{"ChargesStopAtTheQuotaConcurrently", chargesStopAtTheQuotaConcurrently},
	{"RecordJobChargesWhatCompleted", recordJobChargesWhatCompleted},
	{"DeleteRefundsUnfinishedJobs", deleteRefundsUnfinishedJobs},
	{"DeleteAndFinishRace", deleteAndFinishRace},
}

// wantUsage fails unless team's usage of month and credits are as given.
func wantUsage(t *testing.T, s Store, team, month string, docs, creditsUsed, credits int64) {
	t.Helper()
	u, err := s.FindUsage(ctx, team, month)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := s.FindTeam(ctx, team)
	if err != nil {
		t.Fatal(err)
	}
	if u.Documents != docs || u.CreditsUsed != creditsUsed || tm.Credits != credits {
		t.Fatalf("usage %+v, team credits %d; want %d documents, %d credits used, %d left", u, tm.Credits, docs, creditsUsed, credits)
	}
}

// chargesStopAtTheQuotaConcurrently: twelve single-job requests at once (on
// any replica) against a quota of 5 and 2 credits: exactly 7 are recorded,
// the quota first, and the rest are refused without a trace; CheckQuota
// says so beforehand without charging.
func chargesStopAtTheQuotaConcurrently(t *testing.T, s Store) {
	team := mustUser(t, s, "q@example.com").PersonalTeamID
	if err := s.AddTeamCredits(ctx, team, 2, t0); err != nil {
		t.Fatal(err)
	}
	month := app.Month(t0)
	charge := &app.Charge{TeamID: team, Month: month, Quota: 5}
	if err := s.CheckQuota(ctx, charge, 7); err != nil {
		t.Fatal(err)
	}
	err := s.CheckQuota(ctx, charge, 8)
	wantCode(t, "a check past quota and credits", err, app.ECodeNoCredits)
	if err := s.CheckQuota(ctx, nil, 1000); err != nil {
		t.Fatal(err)
	}
	if u, _ := s.FindUsage(ctx, team, month); u != (app.UsageCounts{}) {
		t.Fatalf("a check charged %+v", u)
	}
	errs := concurrently(12, func(i int) error {
		j := newJob(team, fmt.Sprintf("job_%02d", i), t0)
		if i%2 == 0 {
			return s.CreateJobs(ctx, charge, j)
		}
		done := app.JobResult{Status: app.StatusCompleted, CompletedAt: t0}
		_, err := s.RecordJob(ctx, charge, j, done, nil)
		return err
	})
	ok := 0
	for i, err := range errs {
		switch app.ErrorCode(err) {
		case "":
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			ok++
		case app.ECodeQuotaExceeded:
			if _, err := s.FindJobForWorker(ctx, fmt.Sprintf("job_%02d", i)); app.ErrorCode(err) != app.ECodeJobNotFound {
				t.Fatalf("refused request %d left its job: %v", i, err)
			}
		default:
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if ok != 7 {
		t.Fatalf("%d requests charged, want 7", ok)
	}
	wantUsage(t, s, team, month, 5, 2, 0)
	err = s.CheckQuota(ctx, charge, 1)
	wantCode(t, "a check once all is spent", err, app.ECodeQuotaExceeded)
	// Another month starts over; a plan without a quota is never refused.
	next := &app.Charge{TeamID: team, Month: app.Month(t0.AddDate(0, 1, 0)), Quota: 1}
	if err := s.CreateJobs(ctx, next, newJob(team, "job_next", t0)); err != nil {
		t.Fatal(err)
	}
	free := &app.Charge{TeamID: team, Month: month, Quota: app.NoQuota}
	if err := s.CheckQuota(ctx, free, 1000); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateJobs(ctx, free, newJob(team, "job_u1", t0), newJob(team, "job_u2", t0)); err != nil {
		t.Fatal(err)
	}
	wantUsage(t, s, team, month, 7, 2, 0)
	// Team B's usage is its own.
	other := mustUser(t, s, "q2@example.com").PersonalTeamID
	wantUsage(t, s, other, month, 0, 0, 0)
}

// recordJobChargesWhatCompleted: a synchronous job is recorded in one call:
// a completed one is charged (a credit once the quota is spent), a failed
// one is not, one the quota no longer covers leaves nothing.
func recordJobChargesWhatCompleted(t *testing.T, s Store) {
	team := mustUser(t, s, "r@example.com").PersonalTeamID
	month := app.Month(t0)
	charge := &app.Charge{TeamID: team, Month: month, Quota: 1}
	doc := []byte("%PDF-1.7 a whole document %%EOF")
	exp := t0.Add(time.Hour)
	done := app.JobResult{Status: app.StatusCompleted, FilePath: team + "/job_a.pdf", FileSize: int64(len(doc)), CompletedAt: t0.Add(time.Second),
		ExpiresAt: &exp, Output: doc, DurationMS: 7}
	built := 0
	builder := func(j *app.Job, b *app.Batch, _ []*app.Job) ([]*app.Event, error) {
		built++
		return nil, nil
	}
	j := newJob(team, "job_a", t0.Add(time.Nanosecond)) // stored to the millisecond
	out, err := s.RecordJob(ctx, charge, j, done, builder)
	if err != nil || !out.Ended || out.Job.Status != app.StatusCompleted || out.Job.Attempts != 1 || !out.Job.CreatedAt.Equal(t0) ||
		!out.Job.StartedAt.Equal(t0.Add(time.Second)) || out.Events != nil || built != 0 {
		t.Fatalf("record completed: %+v, %v; %d events built without a subscription", out, err, built)
	}
	got, err := s.FindJobForWorker(ctx, "job_a")
	if err != nil || got.Status != app.StatusCompleted || got.FilePath != done.FilePath || *got.DurationMS != 7 || !got.CompletedAt.Equal(*out.Job.CompletedAt) ||
		!got.CreatedAt.Equal(out.Job.CreatedAt) || !got.StartedAt.Equal(*out.Job.StartedAt) {
		t.Fatalf("job row %+v, %v; recorded as %+v", got, err, out.Job)
	}
	wantUsage(t, s, team, month, 1, 0, 0)
	failed := app.JobResult{Status: app.StatusFailed, ErrorCode: "ERR_RENDER_001", Error: "boom", ErrorInfo: map[string]any{"line": 3.0}, CompletedAt: t0}
	if out, err := s.RecordJob(ctx, charge, newJob(team, "job_b", t0), failed, nil); err != nil || out.Job.Status != app.StatusFailed {
		t.Fatalf("record failed: %+v, %v", out, err)
	}
	if got, err := s.FindJobByID(ctx, team, "job_b"); err != nil || got.ErrorInfo["line"] != 3.0 || got.ErrorCode != "ERR_RENDER_001" {
		t.Fatalf("failed job %+v, %v", got, err)
	}
	_, err = s.FindJobFile(ctx, "job_b")
	wantCode(t, "a failed job's document", err, app.ECodeFileGone)
	_, err = s.RecordJob(ctx, charge, newJob(team, "job_c", t0), done, nil)
	wantCode(t, "a record past the quota", err, app.ECodeQuotaExceeded)
	_, err = s.FindJobForWorker(ctx, "job_c")
	wantCode(t, "a refused record", err, app.ECodeJobNotFound)
	wantUsage(t, s, team, month, 1, 0, 0)
	if err := s.AddTeamCredits(ctx, team, 1, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordJob(ctx, charge, newJob(team, "job_e", t0), done, nil); err != nil {
		t.Fatal(err)
	}
	wantUsage(t, s, team, month, 1, 1, 0)
	// Deleting ended jobs refunds nothing.
	if out, err := s.DeleteJobs(ctx, team, []string{"job_a", "job_e", "job_b"}, t0, nil); err != nil || len(out.Jobs) != 3 {
		t.Fatalf("delete: %+v, %v", out, err)
	}
	wantUsage(t, s, team, month, 1, 1, 0)
}

// deleteRefundsUnfinishedJobs deletes a batch's pending and processing
// jobs: each is refunded where it was charged and counts as failed, and
// the batch ends with the last of them, its event built exactly once,
// while the worker that was running a deleted job records nothing.
func deleteRefundsUnfinishedJobs(t *testing.T, s Store) {
	team := mustUser(t, s, "d@example.com").PersonalTeamID
	if err := s.AddTeamCredits(ctx, team, 5, t0); err != nil {
		t.Fatal(err)
	}
	month := app.Month(t0)
	// Quota 3: jobs 0..2 from the quota, job 3 from a credit.
	ids := mustBatch(t, s, &app.Charge{TeamID: team, Month: month, Quota: 3}, team, "bat_1", 4)
	wantUsage(t, s, team, month, 3, 1, 4)
	events := 0
	builder := func(b *app.Batch, jobs []*app.Job) (*app.Event, error) {
		events++
		if len(jobs) != 0 {
			t.Errorf("the batch event gets %d jobs, want none left", len(jobs))
		}
		return app.NewEvent(b.TeamID, app.EventBatchCompleted, t0, map[string]any{"batchId": b.ID})
	}
	mustEnd(t, s, ids[0], app.StatusCompleted, t0, 1)
	if _, ok, err := s.StartJob(ctx, ids[1], t0); !ok || err != nil {
		t.Fatal(ok, err)
	}
	// Deleting the pending job 3 refunds its credit; the batch goes on.
	out, err := s.DeleteJobs(ctx, team, []string{ids[3]}, t0, builder)
	if err != nil || len(out.Jobs) != 1 || len(out.Batches) != 0 || len(out.Events) != 0 {
		t.Fatalf("delete job 3: %+v %v", out, err)
	}
	wantUsage(t, s, team, month, 3, 0, 5)
	if got, _ := s.FindBatchByID(ctx, team, "bat_1"); got.Status != app.StatusProcessing || got.Failed != 1 || got.Completed != 1 {
		t.Fatalf("batch after one delete = %+v", got)
	}
	// Deleting the completed job 0 keeps its charge and the counts.
	if out, err := s.DeleteJobs(ctx, team, []string{ids[0]}, t0, builder); err != nil || len(out.Jobs) != 1 || len(out.Batches) != 0 {
		t.Fatalf("delete job 0: %+v %v", out, err)
	}
	wantUsage(t, s, team, month, 3, 0, 5)
	// Deleting the running job 1 and pending job 2 (named twice) ends the batch, once.
	later := t0.Add(time.Minute)
	out, err = s.DeleteJobs(ctx, team, []string{ids[1], ids[2], ids[2]}, later, builder)
	if err != nil || len(out.Jobs) != 2 || len(out.Batches) != 1 || len(out.Events) != 1 || events != 1 {
		t.Fatalf("delete jobs 1, 2: %+v %v (builder called %d times)", out, err, events)
	}
	ended := out.Batches[0]
	if ended.Status != app.StatusCompleted || ended.Completed != 1 || ended.Failed != 3 || ended.Total != 4 || ended.CompletedAt == nil || !ended.CompletedAt.Equal(later) {
		t.Fatalf("ended batch = %+v", ended)
	}
	wantUsage(t, s, team, month, 1, 0, 5)
	// The worker running job 1 finishes afterwards: nothing is recorded.
	if out, err := s.FinishJob(ctx, ids[1], app.JobResult{Status: app.StatusCompleted, CompletedAt: later}, nil); err != nil || out.Ended || out.Batch != nil {
		t.Fatalf("finish of a deleted job: %+v %v", out, err)
	}
	if got, _ := s.FindBatchByID(ctx, team, "bat_1"); got.Status != app.StatusCompleted || got.Completed != 1 || got.Failed != 3 {
		t.Fatalf("batch after the late finish = %+v", got)
	}
	wantUsage(t, s, team, month, 1, 0, 5)
	// A failed job is refunded when it ends.
	if err := s.CreateJobs(ctx, &app.Charge{TeamID: team, Month: month, Quota: 3}, newJob(team, "job_f", t0)); err != nil {
		t.Fatal(err)
	}
	wantUsage(t, s, team, month, 2, 0, 5)
	mustEnd(t, s, "job_f", app.StatusFailed, t0, 1)
	wantUsage(t, s, team, month, 1, 0, 5)

	// A batch whose every job is deleted unfinished ends failed.
	ids2 := mustBatch(t, s, nil, team, "bat_2", 1)
	if out, err := s.DeleteJobs(ctx, team, ids2, later, nil); err != nil || len(out.Batches) != 1 || out.Batches[0].Status != app.StatusFailed || out.Events != nil {
		t.Fatalf("delete the only job: %+v %v", out, err)
	}
	// Ended batches are purged with their last job.
	if _, err := s.PurgeJobs(ctx, later.Add(time.Hour), later.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"bat_1", "bat_2"} {
		_, err := s.FindBatchByID(ctx, team, id)
		wantCode(t, "a purged batch", err, app.ECodeBatchNotFound)
	}
}

// deleteAndFinishRace deletes a running job of a batch while its worker
// finishes it and the batch's other job ends: either the delete came first
// (the job is refunded and counted failed, the finish records nothing) or
// the finish did (the job completed and stays charged); the batch ends
// exactly once either way, with all its jobs counted.
func deleteAndFinishRace(t *testing.T, s Store) {
	team := mustUser(t, s, "race@example.com").PersonalTeamID
	month := app.Month(t0)
	for round := range 6 {
		id := fmt.Sprintf("bat_%d", round)
		ids := mustBatch(t, s, &app.Charge{TeamID: team, Month: month, Quota: app.NoQuota}, team, id, 2)
		for _, j := range ids {
			if _, ok, err := s.StartJob(ctx, j, t0); !ok || err != nil {
				t.Fatal(ok, err)
			}
		}
		before, _ := s.FindUsage(ctx, team, month)
		var del app.DeleteOutcome
		var fin [2]app.FinishOutcome
		errs := concurrently(3, func(i int) error {
			var err error
			switch i {
			case 0:
				del, err = s.DeleteJobs(ctx, team, []string{ids[0]}, t0, nil)
			default:
				fin[i-1], err = s.FinishJob(ctx, ids[i-1], app.JobResult{Status: app.StatusCompleted, CompletedAt: t0}, nil)
			}
			return err
		})
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, call %d: %v", round, i, err)
			}
		}
		if len(del.Jobs) != 1 || !fin[1].Ended {
			t.Fatalf("round %d: delete %+v, finish of the other job %+v", round, del, fin[1])
		}
		ends := len(del.Batches)
		for _, f := range fin {
			if f.Batch != nil {
				ends++
			}
		}
		b, err := s.FindBatchByID(ctx, team, id)
		if err != nil || ends != 1 || b.Status != app.StatusCompleted || b.Completed+b.Failed != 2 {
			t.Fatalf("round %d: the batch ended %d times: %+v, %v", round, ends, b, err)
		}
		after, _ := s.FindUsage(ctx, team, month)
		if fin[0].Ended { // the finish came first: charged, completed
			if b.Completed != 2 || after.Documents != before.Documents {
				t.Fatalf("round %d, finish first: batch %+v, usage %+v -> %+v", round, b, before, after)
			}
		} else if b.Failed != 1 || after.Documents != before.Documents-1 {
			t.Fatalf("round %d, delete first: batch %+v, usage %+v -> %+v", round, b, before, after)
		}
	}
}
