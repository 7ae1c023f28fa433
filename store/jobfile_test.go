package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"folio/app"
)

// TestRecordJob records synchronous jobs in one call each: a completed one
// with its charge and its document, a failed one without either, and one
// the quota no longer covers, which leaves nothing. The document goes with
// ClearFile and with its job.
func TestRecordJob(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	team := mustUser(t, db, "r@example.com").PersonalTeamID
	now := time.Now().UTC()
	charge := &app.Charge{TeamID: team, Month: app.Month(now), Quota: 1}
	job := func(id string) *app.Job {
		return &app.Job{ID: id, TeamID: team, TemplateID: "tpl_1", Status: app.StatusPending, Format: "pdf", Priority: 1, CreatedAt: now}
	}
	doc := []byte("%PDF-1.7 a whole document %%EOF")
	exp := now.Add(time.Hour)
	done := app.JobResult{Status: app.StatusCompleted, FilePath: team + "/job_a.pdf", FileSize: int64(len(doc)), CompletedAt: now, ExpiresAt: &exp, Output: doc}
	events := 0
	builder := func(j *app.Job, b *app.Batch, _ []*app.Job) ([]*app.Event, error) {
		events++
		return nil, nil
	}

	if err := db.CheckQuota(ctx, charge, 1); err != nil {
		t.Fatal(err)
	}
	// Events are built only for a team with a subscription.
	other := mustUser(t, db, "r2@example.com").PersonalTeamID
	j0 := job("job_0")
	j0.TeamID = other
	if out, err := db.RecordJob(ctx, &app.Charge{TeamID: other, Month: charge.Month, Quota: 1}, j0, done, builder); err != nil || !out.Ended || events != 0 {
		t.Fatalf("record without a subscription: %+v, %v, %d events built", out, err, events)
	}
	sub := &app.Subscription{ID: app.NewID("whk"), TeamID: team, URL: "https://93.184.215.14/h", Events: []string{app.EventDocumentGenerated},
		Enabled: true, Secret: "s", CreatedAt: now, UpdatedAt: now}
	if err := db.CreateSubscription(ctx, sub); err != nil {
		t.Fatal(err)
	}
	out, err := db.RecordJob(ctx, charge, job("job_a"), done, builder)
	if err != nil || !out.Ended || out.Job.Status != app.StatusCompleted || out.Job.CompletedAt == nil || events != 1 {
		t.Fatalf("record completed: %+v, %v, %d events", out, err, events)
	}
	got, err := db.FindJobFile(ctx, "job_a")
	if err != nil || !bytes.Equal(got, doc) {
		t.Fatalf("document %q, %v", got, err)
	}
	if j, err := db.FindJobForWorker(ctx, "job_a"); err != nil || j.Status != app.StatusCompleted || j.FilePath != done.FilePath || j.Attempts != 1 {
		t.Fatalf("job row %+v, %v", j, err)
	}
	if u, _ := db.FindUsage(ctx, team, charge.Month); u.Documents != 1 {
		t.Fatalf("usage %+v, want 1 document", u)
	}

	// A failed job is recorded, neither charged nor given a document.
	failed := app.JobResult{Status: app.StatusFailed, ErrorCode: "ERR_RENDER_001", Error: "boom", CompletedAt: now}
	if out, err := db.RecordJob(ctx, charge, job("job_b"), failed, nil); err != nil || out.Job.Status != app.StatusFailed {
		t.Fatalf("record failed: %+v, %v", out, err)
	}
	if _, err := db.FindJobFile(ctx, "job_b"); app.ErrorCode(err) != app.ECodeFileGone {
		t.Fatalf("a failed job's document: %v", err)
	}

	// The quota (1) is spent: checked and recorded, it refuses; nothing is left.
	if err := db.CheckQuota(ctx, charge, 1); app.ErrorCode(err) != app.ECodeQuotaExceeded {
		t.Fatalf("check over quota: %v", err)
	}
	if _, err := db.RecordJob(ctx, charge, job("job_c"), done, nil); app.ErrorCode(err) != app.ECodeQuotaExceeded {
		t.Fatalf("record over quota: %v", err)
	}
	if _, err := db.FindJobForWorker(ctx, "job_c"); app.ErrorCode(err) != app.ECodeJobNotFound {
		t.Fatalf("a refused job was recorded: %v", err)
	}
	if u, _ := db.FindUsage(ctx, team, charge.Month); u.Documents != 1 {
		t.Fatalf("usage after the refusal %+v, want 1 document", u)
	}

	// A credit pays when the quota is spent; the row says how it was paid.
	if err := db.AddTeamCredits(ctx, team, 1, now); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RecordJob(ctx, charge, job("job_e"), done, nil); err != nil {
		t.Fatal(err)
	}
	paid := map[string]string{}
	for _, id := range []string{"job_a", "job_b", "job_e"} {
		var how string
		if err := db.read.QueryRowContext(ctx, `SELECT charged FROM jobs WHERE id = ?`, id).Scan(&how); err != nil {
			t.Fatal(err)
		}
		paid[id] = how
	}
	if paid["job_a"] != "quota" || paid["job_b"] != "" || paid["job_e"] != "credits" {
		t.Fatalf("charged: %v; want job_a quota, job_b nothing, job_e credits", paid)
	}
	if u, _ := db.FindUsage(ctx, team, charge.Month); u.Documents != 1 || u.CreditsUsed != 1 {
		t.Fatalf("usage %+v, want 1 document and 1 credit", u)
	}
	if tm, _ := db.FindTeam(ctx, team); tm.Credits != 0 {
		t.Fatalf("team credits %d, want 0", tm.Credits)
	}

	// Retention clears the document; a delete takes it with the job.
	if err := db.ClearFile(ctx, "job_a"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FindJobFile(ctx, "job_a"); app.ErrorCode(err) != app.ECodeFileGone {
		t.Fatalf("document after ClearFile: %v", err)
	}
	charge.Quota = app.NoQuota
	if _, err := db.RecordJob(ctx, charge, job("job_d"), done, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DeleteJobs(ctx, team, []string{"job_d"}, now, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FindJobFile(ctx, "job_d"); app.ErrorCode(err) != app.ECodeFileGone {
		t.Fatalf("document after its job's delete: %v", err)
	}
}

// BenchmarkKeepDocument compares the two ways a finished document is kept,
// by size, from concurrent workers: a row of job_files in a grouped SQLite
// transaction, or a file (temp file, fsync, rename, directory fsync).
//
//	go test ./store -run '^$' -bench KeepDocument -benchtime 2000x
func BenchmarkKeepDocument(b *testing.B) {
	for _, size := range []int{16 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10, 1 << 20} {
		doc := bytes.Repeat([]byte("0123456789abcdef"), size/16)
		b.Run(fmt.Sprintf("db/%dKB", size>>10), func(b *testing.B) {
			db := mustDB(b)
			team := mustUser(b, db, "k@example.com").PersonalTeamID
			var n atomic.Int64
			b.SetParallelism(4)
			b.SetBytes(int64(size))
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					id := fmt.Sprintf("job_%d", n.Add(1))
					ref, done, err := db.keepDoc(app.StatusCompleted, doc) // a segment, as RecordJob writes it
					if err != nil {
						b.Error(err)
						return
					}
					err = db.tx(context.Background(), func(tx *Tx) error {
						if err := insertJobs(context.Background(), tx, jobRows([]*app.Job{{ID: id, TeamID: team, TemplateID: "t", Status: "completed",
							Format: "pdf", Priority: 1, CreatedAt: time.Now()}})); err != nil {
							return err
						}
						return insertJobFile(context.Background(), tx, id, doc, ref)
					})
					done()
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		b.Run(fmt.Sprintf("file/%dKB", size>>10), func(b *testing.B) {
			db := mustDB(b)
			team := mustUser(b, db, "k@example.com").PersonalTeamID
			files := &Files{Root: filepath.Join(b.TempDir(), "files")}
			var n atomic.Int64
			b.SetParallelism(4)
			b.SetBytes(int64(size))
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					id := fmt.Sprintf("job_%d", n.Add(1))
					if _, err := files.WriteFile(team+"/"+id+".pdf", func(w io.Writer) error { _, err := w.Write(doc); return err }); err != nil {
						b.Error(err)
						return
					}
					err := db.tx(context.Background(), func(tx *Tx) error {
						return insertJobs(context.Background(), tx, jobRows([]*app.Job{{ID: id, TeamID: team, TemplateID: "t", Status: "completed",
							Format: "pdf", Priority: 1, CreatedAt: time.Now(), FilePath: team + "/" + id + ".pdf"}}))
					})
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkRecordJob measures the one write of a synchronous generate:
// RecordJob of a completed job with its charge, counters, an 11 KB
// document (the example invoice's size) and events (none stored: the team
// has no subscription), from 8 concurrent workers whose calls the writer
// groups. allocs/op counts the store's side only.
//
//	go test ./store -run '^$' -bench RecordJob -benchmem -benchtime 3000x
func BenchmarkRecordJob(b *testing.B) { benchRecordJob(b, app.NoQuota) }

// BenchmarkRecordJobQuota is BenchmarkRecordJob for a team whose plan has
// a quota (with room left): the charge's path of a metered plan.
func BenchmarkRecordJobQuota(b *testing.B) { benchRecordJob(b, 1<<40) }

func benchRecordJob(b *testing.B, quota int64) {
	ctx := context.Background()
	db := mustDB(b)
	team := mustUser(b, db, "rec@example.com").PersonalTeamID
	doc := bytes.Repeat([]byte("0123456789abcdef"), 11<<10/16)
	now := time.Now().UTC()
	charge := &app.Charge{TeamID: team, Month: app.Month(now), Quota: quota}
	builder := func(j *app.Job, _ *app.Batch, _ []*app.Job) ([]*app.Event, error) {
		e, err := app.NewEvent(j.TeamID, app.EventDocumentGenerated, now, map[string]any{"jobId": j.ID, "status": j.Status})
		return []*app.Event{e}, err
	}
	var n atomic.Int64
	b.SetParallelism(4)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id := fmt.Sprintf("job_%d", n.Add(1))
			exp := now.Add(time.Hour)
			j := &app.Job{ID: id, TeamID: team, TemplateID: "tpl_1", Status: app.StatusPending, Format: "pdf", Priority: 1, CreatedAt: now,
				APIKeyID: "key_1", Variables: []byte(`{"number":"2026-001"}`)}
			r := app.JobResult{Status: app.StatusCompleted, FilePath: team + "/" + id + ".pdf", FileSize: int64(len(doc)), CompletedAt: now,
				ExpiresAt: &exp, Output: doc, DurationMS: 3}
			if _, err := db.RecordJob(ctx, charge, j, r, builder); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// TestGroupCountsOnlyKeptCalls: the counters of a write group are added up
// in memory and written once before its commit (writeCounts); a call that
// fails after noting its job (here: its events cannot be built) is rolled
// back with its counts, between calls that are kept, on RecordJob's and
// on FinishJob's path. Every roll-up and the key's count then say exactly
// what the job rows say.
func TestGroupCountsOnlyKeptCalls(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	u := mustUser(t, db, "groups@example.com")
	team := u.PersonalTeamID
	now := time.Now().UTC()
	key := &app.APIKey{ID: app.NewID("key"), TeamID: team, Name: "k", KeyType: "live", KeyPrefix: "p", Hash: "hg",
		Permissions: []string{}, IsActive: true, CreatedBy: u.ID, CreatedAt: now, UpdatedAt: now}
	if err := db.CreateAPIKey(ctx, key); err != nil {
		t.Fatal(err)
	}
	sub := &app.Subscription{ID: app.NewID("whk"), TeamID: team, URL: "https://93.184.215.14/h", Events: []string{app.EventDocumentGenerated},
		Enabled: true, Secret: "s", CreatedAt: now, UpdatedAt: now}
	if err := db.CreateSubscription(ctx, sub); err != nil {
		t.Fatal(err)
	}
	charge := &app.Charge{TeamID: team, Month: app.Month(now), Quota: app.NoQuota}
	job := func(id, tpl string) *app.Job {
		return &app.Job{ID: id, TeamID: team, TemplateID: tpl, Status: app.StatusPending, Format: "pdf", Priority: 1, CreatedAt: now, APIKeyID: key.ID}
	}
	result := func(status string, ms int64) app.JobResult {
		return app.JobResult{Status: status, CompletedAt: now, DurationMS: ms}
	}
	errEvents := errors.New("no events")
	good := func(*app.Job, *app.Batch, []*app.Job) ([]*app.Event, error) { return nil, nil }
	bad := func(*app.Job, *app.Batch, []*app.Job) ([]*app.Event, error) { return nil, errEvents }
	// Two queued jobs, processing, for FinishJob.
	for _, id := range []string{"job_q1", "job_q2"} {
		if err := db.CreateJobs(ctx, nil, job(id, "tpl_q")); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := db.StartJob(ctx, id, now); !ok || err != nil {
			t.Fatalf("start %s: %v %v", id, ok, err)
		}
	}

	var sizes []int
	testHookGroup = func(g []*writeReq) { sizes = append(sizes, len(g)) }
	defer func() { testHookGroup = nil }()
	release := holdWriter(t, db)
	calls := []struct {
		name string
		run  func() error
		ok   bool
	}{
		{"record a", func() error {
			_, err := db.RecordJob(ctx, charge, job("job_a", "tpl_1"), result(app.StatusCompleted, 10), good)
			return err
		}, true},
		{"record b, fails", func() error {
			_, err := db.RecordJob(ctx, charge, job("job_b", "tpl_1"), result(app.StatusCompleted, 100), bad)
			return err
		}, false},
		{"finish q1, fails", func() error {
			_, err := db.FinishJob(ctx, "job_q1", result(app.StatusCompleted, 1000), bad)
			return err
		}, false},
		{"record c", func() error {
			_, err := db.RecordJob(ctx, charge, job("job_c", "tpl_1"), result(app.StatusCompleted, 20), good)
			return err
		}, true},
		{"record d, failed job", func() error {
			_, err := db.RecordJob(ctx, charge, job("job_d", "tpl_2"), result(app.StatusFailed, 5), good)
			return err
		}, true},
		{"finish q2", func() error {
			_, err := db.FinishJob(ctx, "job_q2", result(app.StatusCompleted, 7), good)
			return err
		}, true},
	}
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = c.run() }()
		time.Sleep(5 * time.Millisecond) // queue in this order
	}
	release()
	wg.Wait()
	for i, c := range calls {
		if (errs[i] == nil) != c.ok || (!c.ok && !errors.Is(errs[i], errEvents)) {
			t.Errorf("%s: %v", c.name, errs[i])
		}
	}
	if len(sizes) < 2 || sizes[len(sizes)-1] != len(calls) {
		t.Fatalf("groups %v: the calls did not run in one group", sizes)
	}

	// The rows: a, c and q2 completed, d failed; b is not recorded and q1
	// still processing.
	var jobs string
	db.read.QueryRowContext(ctx, `SELECT group_concat(id || ':' || status, ',') FROM (SELECT id, status FROM jobs ORDER BY id)`).Scan(&jobs)
	if jobs != "job_a:completed,job_c:completed,job_d:failed,job_q1:processing,job_q2:completed" {
		t.Fatalf("jobs: %s", jobs)
	}
	slot := now.UnixMilli() / 3600000
	mustFlush(t, db)
	check := func(what, q string, args []any, want string) {
		t.Helper()
		var got string
		if err := db.read.QueryRowContext(ctx, q, args...).Scan(&got); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got != want {
			t.Errorf("%s: %s, want %s", what, got, want)
		}
	}
	rows := func(table, cols string) string {
		return `SELECT group_concat(r, ' ') FROM (SELECT ` + cols + ` AS r FROM ` + table + ` WHERE team_id = ? ORDER BY 1)`
	}
	args := []any{team}
	check("job_stats", rows("job_stats", `template_id || '/' || status || '/' || format || '=' || count || ',' || duration_sum || ',' || duration_count || '@' || (slot - `+fmt.Sprint(slot)+`)`), args,
		"tpl_1/completed/pdf=2,30,2@0 tpl_2/failed/pdf=1,5,1@0 tpl_q/completed/pdf=1,7,1@0")
	check("job_stats_daily", rows("job_stats_daily", `template_id || '/' || status || '=' || count || ',' || duration_sum || ',' || duration_count`), args,
		"tpl_1/completed=2,30,2 tpl_2/failed=1,5,1 tpl_q/completed=1,7,1")
	check("job_team_hours", rows("job_team_hours", `status || '/' || format || '=' || count || ',' || duration_sum || ',' || duration_count`), args,
		"completed/pdf=3,37,3 failed/pdf=1,5,1")
	check("job_team_days", rows("job_team_days", `status || '/' || format || '=' || count || ',' || duration_sum || ',' || duration_count`), args,
		"completed/pdf=3,37,3 failed/pdf=1,5,1")
	check("job_hours", rows("job_hours", `(slot - `+fmt.Sprint(slot)+`) || '=' || count`), args, "0=4")
	check("job_template_hours", rows("job_template_hours", `template_id || '=' || count || ',' || failed || ',' || duration_sum || ',' || duration_count`), args,
		"tpl_1=2,0,30,2 tpl_2=1,1,5,1 tpl_q=1,0,7,1")
	check("job_template_days", rows("job_template_days", `template_id || '=' || count || ',' || failed || ',' || duration_sum || ',' || duration_count`), args,
		"tpl_1=2,0,30,2 tpl_2=1,1,5,1 tpl_q=1,0,7,1")
	if n, err := db.CountKeyDocuments(ctx, team, key.ID); err != nil || n != 3 {
		t.Errorf("the key's documents: %d, %v; want 3 (a, c, q2)", n, err)
	}
	var used int64
	db.read.QueryRowContext(ctx, `SELECT documents FROM usage WHERE team_id = ?`, team).Scan(&used)
	if used != 2 {
		t.Errorf("usage: %d documents charged, want 2 (a, c; a failed job is not charged)", used)
	}
}

// TestCheckQuotaFromCharges: once this process has charged a month, a
// check the quota still covers needs no read; a check past what the
// quota leaves (where credits may still pay) reads and answers as ever,
// and a refund never lets more through than the read would.
func TestCheckQuotaFromCharges(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	team := mustUser(t, db, "quota@example.com").PersonalTeamID
	now := time.Now().UTC()
	charge := &app.Charge{TeamID: team, Month: app.Month(now), Quota: 3}
	reads := 0
	check := func(n int64) error {
		t.Helper()
		var mu sync.Mutex
		before := reads
		stop := TraceQueries(func(q string, _ int) { mu.Lock(); reads++; mu.Unlock() })
		err := db.CheckQuota(ctx, charge, n)
		stop()
		t.Logf("check %d: %v, %d reads", n, err, reads-before)
		return err
	}
	record := func(id string, status string) {
		t.Helper()
		j := &app.Job{ID: id, TeamID: team, TemplateID: "tpl_1", Status: app.StatusPending, Format: "pdf", Priority: 1, CreatedAt: now}
		if _, err := db.RecordJob(ctx, charge, j, app.JobResult{Status: status, CompletedAt: now}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := check(3); err != nil || reads != 1 {
		t.Fatalf("a month not charged yet: %v, %d reads; want a read", err, reads)
	}
	record("job_1", app.StatusCompleted)
	if err := check(2); err != nil || reads != 1 {
		t.Fatalf("2 more after 1 of 3: %v, %d reads; want no read", err, reads)
	}
	refused := func(err error) bool {
		return app.ErrorCode(err) == app.ECodeQuotaExceeded || app.ErrorCode(err) == app.ECodeNoCredits
	}
	if err := check(3); !refused(err) || reads != 2 {
		t.Fatalf("3 more after 1 of 3: %v, %d reads; want the read's refusal", err, reads)
	}
	// Credits pay past the quota: only the read knows them.
	if err := db.AddTeamCredits(ctx, team, 1, now); err != nil {
		t.Fatal(err)
	}
	if err := check(3); err != nil || reads != 3 {
		t.Fatalf("3 more with a credit: %v, %d reads", err, reads)
	}
	// A job charged then deleted unfinished is refunded: the usage goes
	// down, what is kept does not, so the check reads again sooner, never
	// later.
	j := &app.Job{ID: "job_q", TeamID: team, TemplateID: "tpl_1", Status: app.StatusPending, Format: "pdf", Priority: 1, CreatedAt: now}
	if err := db.CreateJobs(ctx, charge, j); err != nil {
		t.Fatal(err)
	}
	record("job_2", app.StatusCompleted)
	if err := check(1); err != nil || reads != 4 {
		t.Fatalf("1 more after 3 of 3 and a credit: %v, %d reads; want a read", err, reads)
	}
	if _, err := db.DeleteJobs(ctx, team, []string{"job_q"}, now, nil); err != nil {
		t.Fatal(err)
	}
	if u, _ := db.FindUsage(ctx, team, charge.Month); u.Documents != 2 {
		t.Fatalf("usage after the refund: %+v", u)
	}
	if err := check(1); err != nil || reads != 5 {
		t.Fatalf("1 more after the refund: %v, %d reads; want a read", err, reads)
	}
	record("job_3", app.StatusCompleted)
	record("job_4", app.StatusCompleted) // the credit
	if err := check(1); !refused(err) || reads != 6 {
		t.Fatalf("all spent: %v, %d reads; want the read's refusal", err, reads)
	}
}

// TestChargeFromKeptUsage: a RecordJob whose month this process has
// charged, with room left in the quota, charges it without reading the
// usage; the charge that would pass the quota reads, and credits pay or
// the job is refused exactly as before. The usage row counts every
// document, and each job says what paid for it.
func TestChargeFromKeptUsage(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	team := mustUser(t, db, "kept@example.com").PersonalTeamID
	now := time.Now().UTC()
	charge := &app.Charge{TeamID: team, Month: app.Month(now), Quota: 2}
	if err := db.AddTeamCredits(ctx, team, 1, now); err != nil {
		t.Fatal(err)
	}
	record := func(id string) (reads int, err error) {
		t.Helper()
		var mu sync.Mutex
		stop := TraceQueries(func(q string, _ int) {
			if strings.Contains(q, "FROM teams") {
				mu.Lock()
				reads++
				mu.Unlock()
			}
		})
		defer stop()
		j := &app.Job{ID: id, TeamID: team, TemplateID: "tpl_1", Status: app.StatusPending, Format: "pdf", Priority: 1, CreatedAt: now}
		_, err = db.RecordJob(ctx, charge, j, app.JobResult{Status: app.StatusCompleted, CompletedAt: now}, nil)
		return reads, err
	}
	for i, want := range []struct {
		reads   int
		refused bool
	}{{1, false}, {0, false}, {1, false}, {1, true}} {
		reads, err := record(fmt.Sprintf("job_k%d", i))
		if reads != want.reads || (err != nil) != want.refused {
			t.Fatalf("charge %d: %d reads, %v; want %d reads, refused %v", i, reads, err, want.reads, want.refused)
		}
		if want.refused && app.ErrorCode(err) != app.ECodeQuotaExceeded && app.ErrorCode(err) != app.ECodeNoCredits {
			t.Fatalf("charge %d: %v, want the quota's refusal", i, err)
		}
	}
	if u, err := db.FindUsage(ctx, team, charge.Month); err != nil || u.Documents != 2 || u.CreditsUsed != 1 {
		t.Fatalf("usage %+v, %v; want 2 documents from the quota, 1 credit", u, err)
	}
	var how []string
	rows, err := db.read.QueryContext(ctx, `SELECT charged FROM jobs WHERE team_id = ? ORDER BY id`, team)
	if err != nil {
		t.Fatal(err)
	}
	if how, err = scanStrings(rows); err != nil || strings.Join(how, ",") != "quota,quota,credits" {
		t.Fatalf("charged %v, %v; want quota,quota,credits", how, err)
	}
	var credits int64
	if err := db.read.QueryRowContext(ctx, `SELECT credits FROM teams WHERE id = ?`, team).Scan(&credits); err != nil || credits != 0 {
		t.Fatalf("credits left %d, %v; want 0", credits, err)
	}
}
