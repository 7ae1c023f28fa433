package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"folio/app"
)

// endedJob is what the model keeps of a job that ended: analytics count it
// for as long as the roll-ups live, after retention deleted its row too.
type endedJob struct {
	team, template, status, format string
	created                        time.Time
	duration                       int64
}

// history writes random jobs and webhook deliveries through the store, as
// the services do, around several UTC midnights, and keeps the model of
// the ended jobs.
type history struct {
	t     *testing.T
	db    *DB
	rng   *rand.Rand
	base  time.Time // a UTC midnight; times fall within two days of it
	teams []string
	subs  map[string][]string // team -> subscriptions
	dlvs  map[string][]string // team -> deliveries
	mu    sync.Mutex
	ended []endedJob
	n     int
}

func newHistory(t *testing.T, db *DB, seed uint64) *history {
	h := &history{t: t, db: db, rng: rand.New(rand.NewPCG(seed, seed)), base: time.Now().UTC().Truncate(24 * time.Hour).Add(-24 * time.Hour),
		subs: map[string][]string{}, dlvs: map[string][]string{}}
	for i := range 3 {
		h.teams = append(h.teams, mustUser(t, db, fmt.Sprintf("r%d-%d@example.com", seed, i)).PersonalTeamID)
	}
	return h
}

// at is a random time within two days of base, often right by an hour or
// a midnight.
func (h *history) at() time.Time {
	t := h.base.Add(time.Duration(h.rng.Int64N(int64(96*time.Hour))) - 48*time.Hour)
	if h.rng.IntN(4) == 0 {
		t = t.Truncate(time.Hour).Add(time.Duration(h.rng.IntN(3)-1) * time.Millisecond)
	}
	return t
}

// jobs creates n jobs, some of them in batches of 2 to 5; most end,
// completed or failed, a few stay pending; now and then a request deletes
// an ended one (the delete triggers, outside retention's steps).
func (h *history) jobs(n int) {
	ctx := context.Background()
	var batch []*app.Job // the rest of the batch being ended
	for range n {
		h.mu.Lock()
		h.n++
		team := h.teams[h.rng.IntN(len(h.teams))]
		j := &app.Job{ID: fmt.Sprintf("job_%s_%d", team, h.n), TeamID: team, TemplateID: fmt.Sprintf("tpl_%d", h.rng.IntN(3)), Status: app.StatusPending,
			Format: []string{"pdf", "xlsx"}[h.rng.IntN(2)], Priority: 1, CreatedAt: h.at().Truncate(time.Millisecond)}
		status := []string{app.StatusCompleted, app.StatusCompleted, app.StatusFailed, ""}[h.rng.IntN(4)]
		dur := h.rng.Int64N(500)
		newBatch := len(batch) == 0 && h.rng.IntN(8) == 0
		h.mu.Unlock()
		switch {
		case len(batch) > 0: // the next job of a batch
			j = batch[0]
			batch = batch[1:]
		case newBatch:
			b := &app.Batch{ID: fmt.Sprintf("bat_%d", h.n), TeamID: team, TemplateID: j.TemplateID, Format: j.Format, Status: "processing",
				CreatedAt: j.CreatedAt}
			for i := range 2 + h.rng.IntN(4) {
				batch = append(batch, &app.Job{ID: fmt.Sprintf("%s_%d", j.ID, i), TeamID: team, TemplateID: j.TemplateID, BatchID: b.ID,
					Status: app.StatusPending, Format: j.Format, Priority: 5, CreatedAt: j.CreatedAt})
			}
			b.Total = len(batch)
			if err := h.db.CreateBatch(ctx, nil, b, batch); err != nil {
				h.t.Fatal(err)
			}
			j = batch[0]
			batch = batch[1:]
		default:
			if err := h.db.CreateJobs(ctx, nil, j); err != nil {
				h.t.Fatal(err)
			}
		}
		if status == "" {
			continue
		}
		if _, _, err := h.db.StartJob(ctx, j.ID, j.CreatedAt); err != nil {
			h.t.Fatal(err)
		}
		if _, err := h.db.FinishJob(ctx, j.ID, app.JobResult{Status: status, CompletedAt: j.CreatedAt.Add(time.Duration(dur) * time.Millisecond), DurationMS: dur}, nil); err != nil {
			h.t.Fatal(err)
		}
		h.mu.Lock()
		h.ended = append(h.ended, endedJob{j.TeamID, j.TemplateID, status, j.Format, j.CreatedAt, dur})
		del := h.rng.IntN(10) == 0
		h.mu.Unlock()
		if del {
			if _, err := h.db.DeleteJobs(ctx, j.TeamID, []string{j.ID}, j.CreatedAt, nil); err != nil {
				h.t.Fatal(err)
			}
		}
	}
}

// batchStates returns each batch's version and the states its jobs' rows
// say (the status of each seq, '-' for a row gone).
func batchStates(tb testing.TB, db *DB) map[string]string {
	tb.Helper()
	rows, err := db.read.QueryContext(context.Background(), `SELECT b.id, b.version, b.states, COALESCE((SELECT group_concat(j.batch_seq || ':' || j.status)
		FROM jobs j WHERE j.batch_id = b.id AND j.batch_id != ''), '') FROM batches b`)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, states, jobs string
		var version int
		if err := rows.Scan(&id, &version, &states, &jobs); err != nil {
			tb.Fatal(err)
		}
		want := []byte(strings.Repeat("-", len(states)))
		for _, js := range strings.Split(jobs, ",") {
			if seq, status, ok := strings.Cut(js, ":"); ok {
				i, _ := strconv.Atoi(seq)
				want[i] = map[string]byte{app.StatusPending: 'p', app.StatusProcessing: 'r', app.StatusCompleted: 'c', app.StatusFailed: 'f'}[status]
			}
		}
		if string(want) != states {
			tb.Fatalf("batch %s: states %q, its rows say %q", id, states, want)
		}
		out[id] = fmt.Sprintf("%d %s", version, states)
	}
	return out
}

// deliveries creates n deliveries and makes random attempts, retries and
// cancellations; sometimes a subscription goes with its deliveries.
func (h *history) deliveries(n int) {
	ctx := context.Background()
	now := time.Now().UTC()
	for _, team := range h.teams {
		for len(h.subs[team]) < 2 {
			s := &app.Subscription{ID: app.NewID("whk"), TeamID: team, URL: "https://example.com/h", Events: []string{app.EventDocumentGenerated},
				Enabled: true, Secret: "s", CreatedAt: now, UpdatedAt: now}
			if err := h.db.CreateSubscription(ctx, s); err != nil {
				h.t.Fatal(err)
			}
			h.subs[team] = append(h.subs[team], s.ID)
		}
	}
	for range n {
		team := h.teams[h.rng.IntN(len(h.teams))]
		subs := h.subs[team]
		switch op := h.rng.IntN(20); {
		case op == 0: // cancel a subscription's pending deliveries
			if _, err := h.db.CancelPendingDeliveries(ctx, team, subs[h.rng.IntN(len(subs))], "disabled", now); err != nil {
				h.t.Fatal(err)
			}
		case op == 1 && h.rng.IntN(4) == 0: // delete a subscription and its deliveries
			i := h.rng.IntN(len(subs))
			if err := h.db.DeleteSubscription(ctx, team, subs[i]); err != nil {
				h.t.Fatal(err)
			}
			h.subs[team] = append(subs[:i:i], subs[i+1:]...)
			h.deliveries(0) // a new one in its place
		case op < 8 || len(h.dlvs[team]) == 0: // a new delivery
			d := &app.Delivery{ID: app.NewID("dlv"), EventID: app.NewID("evt"), Event: app.EventDocumentGenerated, Status: app.DeliveryPending,
				MaxAttempts: 3, CreatedAt: h.at(), SubscriptionID: subs[h.rng.IntN(len(subs))], TeamID: team, Payload: []byte(`{}`)}
			if err := h.db.CreateDelivery(ctx, d); err != nil {
				h.t.Fatal(err)
			}
			h.dlvs[team] = append(h.dlvs[team], d.ID)
		default: // an attempt, or a retry of a failed one
			id := h.dlvs[team][h.rng.IntN(len(h.dlvs[team]))]
			d, err := h.db.FindDelivery(ctx, id)
			if app.ErrorCode(err) == app.ECodeDeliveryNotFound {
				continue // its subscription went
			} else if err != nil {
				h.t.Fatal(err)
			}
			if d.Status == app.DeliveryFailed && h.rng.IntN(2) == 0 {
				if _, err := h.db.RetryDelivery(ctx, team, d.SubscriptionID, id, now); err != nil {
					h.t.Fatal(err)
				}
				continue
			}
			a := app.Attempt{Number: d.Attempts + 1, At: h.at(), Success: h.rng.IntN(2) == 0}
			if !a.Success && h.rng.IntN(2) == 0 {
				next := a.At.Add(time.Minute)
				a.NextRetryAt = &next
			}
			if _, err := h.db.RecordAttempt(ctx, id, a); err != nil {
				h.t.Fatal(err)
			}
		}
	}
}

// check compares the analytics and delivery counts the store reads with
// the model and the delivery rows, over periods with every kind of edge.
func (h *history) check(what string) {
	h.t.Helper()
	ctx := context.Background()
	h.mu.Lock()
	defer h.mu.Unlock()
	periods := [][2]time.Time{
		{h.base.Add(-72 * time.Hour), h.base.Add(72 * time.Hour)},
		{h.base.Add(-24 * time.Hour), h.base.Add(24 * time.Hour)},
		{h.base.Add(-90 * time.Minute), h.base.Add(25 * time.Hour)},
	}
	for range 8 {
		a, b := h.at(), h.at()
		if b.Before(a) {
			a, b = b, a
		}
		periods = append(periods, [2]time.Time{a, b.Add(time.Millisecond)})
	}
	type key struct{ date, status, format string }
	type sums struct{ count, dur, timed int }
	for _, team := range h.teams {
		for _, tpl := range []string{"", "tpl_1"} {
			for _, p := range periods {
				want := map[key]sums{}
				for _, j := range h.ended {
					// Analytics count by hour: the hours the period touches.
					if s := slotOf(j.created); j.team == team && (tpl == "" || j.template == tpl) && s >= slotOf(p[0]) && s < slotCeil(p[1]) {
						k := key{j.created.Format(time.DateOnly), j.status, j.format}
						s := want[k]
						s.count, s.dur, s.timed = s.count+1, s.dur+int(j.duration), s.timed+1
						want[k] = s
					}
				}
				rows, err := h.db.JobAnalytics(ctx, app.AnalyticsFilter{TeamID: team, TemplateID: tpl, From: p[0], To: p[1]})
				if err != nil {
					h.t.Fatal(err)
				}
				got := map[key]sums{}
				for _, r := range rows {
					got[key{r.Date, r.Status, r.Format}] = sums{r.Count, int(r.DurationSumMS), r.DurationCount}
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					h.t.Fatalf("%s: analytics of %s, template %q, %v to %v:\n got %v\nwant %v", what, team, tpl, p[0], p[1], got, want)
				}
			}
		}
		// Insights' templates: count, failed and average duration by template.
		for _, p := range periods {
			type tsum struct{ count, failed, dur, timed int }
			want := map[string]tsum{}
			for _, j := range h.ended {
				if s := slotOf(j.created); j.team == team && s >= slotOf(p[0]) && s < slotCeil(p[1]) {
					w := want[j.template]
					w.count++
					w.dur += int(j.duration)
					w.timed++
					if j.status == app.StatusFailed {
						w.failed++
					}
					want[j.template] = w
				}
			}
			stats, err := h.db.TemplateStats(ctx, team, p[0], p[1])
			if err != nil {
				h.t.Fatal(err)
			}
			got := map[string]string{}
			for _, st := range stats {
				got[st.TemplateID] = fmt.Sprintf("%d %d %.6f", st.Count, st.Failed, st.AvgGenerationTimeMs)
			}
			wantS := map[string]string{}
			for tpl, w := range want {
				wantS[tpl] = fmt.Sprintf("%d %d %.6f", w.count, w.failed, float64(w.dur)/float64(w.timed))
			}
			if fmt.Sprint(got) != fmt.Sprint(wantS) {
				h.t.Fatalf("%s: template stats of %s, %v to %v:\n got %v\nwant %v", what, team, p[0], p[1], got, wantS)
			}
		}
		// Every page of the jobs list is the rows of the plain query.
		for _, limit := range []int{1, 7, 20} {
			for page := 1; page <= 80/limit+1; page++ {
				jobs, _, err := h.db.FindJobs(ctx, app.JobFilter{TeamID: team, Page: app.Page{Page: page, Limit: limit}})
				if err != nil {
					h.t.Fatal(err)
				}
				rows, err := h.db.read.QueryContext(ctx, `SELECT id FROM jobs WHERE team_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?`,
					team, limit, (page-1)*limit)
				if err != nil {
					h.t.Fatal(err)
				}
				want, _ := scanStrings(rows)
				got := []string{}
				for _, j := range jobs {
					got = append(got, j.ID)
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					h.t.Fatalf("%s: jobs of %s, page %d of %d:\n got %v\nwant %v", what, team, page, limit, got, want)
				}
			}
		}
		for _, p := range periods {
			var ok, bad int
			if err := h.db.read.QueryRowContext(ctx, `SELECT COALESCE(SUM(status = 'success'), 0), COALESCE(SUM(status = 'failed'), 0)
				FROM webhook_deliveries WHERE team_id = ? AND attempted_at >= ?`, team, ms(p[0])).Scan(&ok, &bad); err != nil {
				h.t.Fatal(err)
			}
			gotOK, gotBad, err := h.db.DeliveryCounts(ctx, team, p[0])
			if err != nil {
				h.t.Fatal(err)
			}
			if gotOK != ok || gotBad != bad {
				h.t.Fatalf("%s: deliveries of %s since %v: %d succeeded, %d failed; the rows say %d, %d", what, team, p[0], gotOK, gotBad, ok, bad)
			}
		}
	}
}

// forgetRollups makes db a database from before migration 0019: its
// roll-ups empty, their backfill not begun, the reads on the older tables.
func forgetRollups(tb testing.TB, db *DB) {
	tb.Helper()
	// A database from before 0019 has no counts pending either.
	mustFlush(tb, db)
	if _, err := db.write.ExecContext(context.Background(), `DELETE FROM job_team_hours; DELETE FROM job_team_days; DELETE FROM delivery_hours;
		DELETE FROM job_list_hours; DELETE FROM job_template_hours; DELETE FROM job_template_days;
		UPDATE rollup_backfill SET team_id = '', slot = -1, rows = 0, done = 0`); err != nil {
		tb.Fatal(err)
	}
	db.readyTemplates.Store(false)
	db.readyJobs.Store(false)
	db.readyDeliveries.Store(false)
	db.readyList.Store(false)
}

// mustFlush folds the pending counts into the roll-ups (and writes the
// keys' counts), as every store read of them does first, for tests that
// read the tables themselves.
func mustFlush(tb testing.TB, db *DB) {
	tb.Helper()
	if err := db.flush(context.Background()); err != nil {
		tb.Fatal(err)
	}
}

// TestRollupsEqualTheRows: over random histories of jobs and deliveries
// across midnights and hours, the roll-ups read the same figures as the
// rows they count, and every page of the jobs list is the same: kept in the writes, after retention deleted the job
// rows, and after a backfill that ran while jobs ended and deliveries were
// attempted.
func TestRollupsEqualTheRows(t *testing.T) {
	ctx := context.Background()
	defer func(n int) { backfillChunk = n }(backfillChunk)
	defer func(n int) { testStepRows = n }(testStepRows)
	seeds := uint64(3)
	if raceEnabled {
		// One history, the one with the smallest steps and chunks (the
		// most interleavings of the backfill with the writes): the three
		// took 150 s of the store's race step at load 10, the random
		// histories are what differs between them, and the run without
		// -race checks all three.
		seeds = 1
	}
	for seed := range seeds {
		testStepRows = 3 + int(seed)*4
		db := mustDB(t)
		h := newHistory(t, db, seed)
		h.jobs(150)
		h.deliveries(300)
		h.check("kept by the writes")

		// Retention deletes job rows, not what analytics count; it does the
		// delete triggers' bookkeeping once a step (0022): the list's hours
		// and the batches' states and versions are what a row at a time
		// makes them. Steps of a few rows, so there are many.
		before := batchStates(t, db)
		var inBatch map[string]int
		countInBatches := func() map[string]int {
			m := map[string]int{}
			rows, _ := db.read.QueryContext(ctx, `SELECT batch_id, COUNT(*) FROM jobs WHERE batch_id != '' GROUP BY 1`)
			defer rows.Close()
			for rows.Next() {
				var b string
				var n int
				rows.Scan(&b, &n)
				m[b] = n
			}
			return m
		}
		inBatch = countInBatches()
		pst, err := db.PurgeJobs(ctx, h.base, h.base.Add(12*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		var left int
		db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM jobs`).Scan(&left)
		if left >= 150 || pst.Transactions < 2 {
			t.Fatalf("retention deleted nothing (%d jobs left) or in one step (%+v)", left, pst)
		}
		h.check("after retention")
		after, left1 := batchStates(t, db), countInBatches()
		changed := 0
		for id, was := range before {
			var v0, v1 int
			fmt.Sscan(was, &v0)
			if now, ok := after[id]; ok {
				fmt.Sscan(now, &v1)
				if gone := inBatch[id] - left1[id]; v1-v0 != gone {
					t.Fatalf("batch %s: version %d -> %d, %d of its jobs deleted", id, v0, v1, gone)
				} else if gone > 1 {
					changed++
				}
			}
		}
		if changed == 0 {
			t.Fatal("retention deleted no two jobs of one batch")
		}

		// A database from before 0019: the reads use the older tables until
		// the backfill, which runs in chunks of a few rows while writes go on.
		forgetRollups(t, db)
		h.check("before the backfill")
		backfillChunk = 1 + int(seed)*3
		var wg sync.WaitGroup
		wg.Add(1)
		var st BackfillStats

		go func() {
			defer wg.Done()
			st, err = db.BackfillRollups(ctx)
		}()
		h.jobs(60)
		h.deliveries(100)
		wg.Wait()
		if err != nil {
			t.Fatal(err)
		}
		if !db.readyJobs.Load() || !db.readyDeliveries.Load() || !db.readyList.Load() || !db.readyTemplates.Load() || st.Transactions < 10 ||
			st.Rows["job_team_hours"] == 0 || st.Rows["delivery_hours"] == 0 || st.Rows["job_list_hours"] == 0 ||
			st.Rows["job_template_days"] == 0 || st.Rows["job_template_hours"] == 0 {
			t.Fatalf("backfill: %+v", st)
		}
		h.check("after the backfill")
		h.jobs(30)
		h.deliveries(50)
		h.check("after the backfill and more writes")

		// The team roll-ups are the sums of the counters by template, and
		// the list's hours count the rows.
		for _, q := range []string{
			`SELECT team_id, created_at / 3600000, COUNT(*) FROM jobs GROUP BY 1, 2 EXCEPT SELECT team_id, slot, n FROM job_list_hours`,
			`SELECT team_id, slot, n FROM job_list_hours EXCEPT SELECT team_id, created_at / 3600000, COUNT(*) FROM jobs GROUP BY 1, 2`,
			`SELECT team_id, slot, status, format, SUM(count), SUM(duration_sum), SUM(duration_count) FROM job_stats GROUP BY 1, 2, 3, 4
			EXCEPT SELECT team_id, slot, status, format, count, duration_sum, duration_count FROM job_team_hours`,
			`SELECT team_id, day, status, format, count, duration_sum, duration_count FROM job_team_days
			EXCEPT SELECT team_id, day, status, format, SUM(count), SUM(duration_sum), SUM(duration_count) FROM job_stats_daily GROUP BY 1, 2, 3, 4`,
			`SELECT team_id, slot, template_id, SUM(count), SUM(CASE WHEN status = 'failed' THEN count ELSE 0 END), SUM(duration_sum), SUM(duration_count)
				FROM job_stats GROUP BY 1, 2, 3
			EXCEPT SELECT team_id, slot, template_id, count, failed, duration_sum, duration_count FROM job_template_hours`,
			`SELECT team_id, day, template_id, count, failed, duration_sum, duration_count FROM job_template_days
			EXCEPT SELECT team_id, day, template_id, SUM(count), SUM(CASE WHEN status = 'failed' THEN count ELSE 0 END), SUM(duration_sum), SUM(duration_count)
				FROM job_stats_daily GROUP BY 1, 2, 3`,
		} {
			var n int
			db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM (`+q+`)`).Scan(&n)
			if n != 0 {
				t.Fatalf("%d roll-up rows differ: %s", n, q)
			}
		}
	}
}

// TestBackfillStopsAndGoesOn: a backfill stopped by its context keeps its
// cursor; the next run finishes from there, and the reads wait for it.
func TestBackfillStopsAndGoesOn(t *testing.T) {
	ctx := context.Background()
	defer func(n int) { backfillChunk = n }(backfillChunk)
	backfillChunk = 2
	db := mustDB(t)
	h := newHistory(t, db, 7)
	h.jobs(100)
	h.deliveries(200)
	forgetRollups(t, db)
	stop, cancel := context.WithCancel(ctx)
	n := 0
	testHookBackfill = func() {
		if n++; n == 5 {
			cancel()
		}
	}
	defer func() { testHookBackfill = nil }()
	if _, err := db.BackfillRollups(stop); err == nil || db.readyJobs.Load() {
		t.Fatalf("stopped backfill: err %v, ready %v", err, db.readyJobs.Load())
	}
	var slot int64
	db.read.QueryRowContext(ctx, `SELECT slot FROM rollup_backfill WHERE name = 'jobs'`).Scan(&slot)
	if slot < 0 {
		t.Fatal("the stopped backfill kept no cursor")
	}
	h.check("after a stopped backfill")
	st, err := db.BackfillRollups(ctx)
	if err != nil || !db.readyJobs.Load() || !db.readyDeliveries.Load() || !db.readyList.Load() || !db.readyTemplates.Load() {
		t.Fatalf("second run: %+v %v", st, err)
	}
	h.check("after the second run")
}
