package storetest

import (
	"fmt"
	"maps"
	"math"
	"testing"
	"time"

	"folio/app"
)

var analyticsCases = []Case{
	{"AnalyticsFromRollups", analyticsFromRollups},
}

// analyticsFromRollups ends jobs over five days and reads them back by
// day, status and format, by template, by hour of the day, and as a count
// of documents, over periods of whole and partial days: each figure equals
// the one counted from the jobs themselves, survives retention, and team B
// sees none of A's.
func analyticsFromRollups(t *testing.T, s Store) {
	u := mustUser(t, s, "a@example.com")
	team := u.PersonalTeamID
	other := mustUser(t, s, "b@example.com").PersonalTeamID
	named := mustTemplate(t, s, team, u.ID, "Invoice", "invoice", t0, nil)
	tpls := []string{named.ID, "tpl_gone"}
	start := t0.Add(-5 * 24 * time.Hour).Truncate(24 * time.Hour)
	type rec struct {
		at            time.Time
		tpl, st, fmt_ string
		dur           int64
	}
	var jobs []rec
	for i := range 70 {
		r := rec{at: start.Add(time.Duration(i*113) * time.Minute), tpl: tpls[i%2], st: app.StatusCompleted, fmt_: "pdf", dur: int64(10 + i)}
		if i%4 == 0 {
			r.st = app.StatusFailed
		}
		if i%3 == 0 {
			r.fmt_ = "xlsx"
		}
		j := newJob(team, fmt.Sprintf("job_%02d", i), r.at)
		j.TemplateID, j.Format = r.tpl, r.fmt_
		if _, err := s.RecordJob(ctx, nil, j, app.JobResult{Status: r.st, CompletedAt: r.at.Add(time.Second), DurationMS: r.dur}, nil); err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, r)
	}
	// One job of team B, in the same hours.
	if _, err := s.RecordJob(ctx, nil, newJob(other, "job_b", start.Add(time.Hour)), app.JobResult{Status: app.StatusCompleted, CompletedAt: start.Add(time.Hour)}, nil); err != nil {
		t.Fatal(err)
	}
	end := jobs[len(jobs)-1].at.Add(time.Hour)
	periods := [][2]time.Time{
		{start, end}, // all
		{start.Add(90 * time.Minute), start.Add(50 * time.Hour)},         // partial, whole, partial
		{start.Add(24 * time.Hour), start.Add(72 * time.Hour)},           // whole days
		{start.Add(20 * time.Hour), start.Add(26 * time.Hour)},           // across a midnight, no whole day
		{start.Add(3*time.Hour + time.Minute), start.Add(5 * time.Hour)}, // hours only, from within an hour
	}
	check := func(when string) {
		t.Helper()
		for _, p := range periods {
			from, to := p[0], p[1]
			// The roll-ups count by hour: a period takes the hours it touches.
			in := func(r rec) bool {
				slot := r.at.UnixMilli() / 3600000
				return slot >= from.UnixMilli()/3600000 && slot < (to.UnixMilli()+3599999)/3600000
			}
			wantRows := map[app.AnalyticsRow]int{}
			wantTpl := map[string]app.TemplateStat{}
			wantHours := map[int]int{}
			wantDocs := int64(0)
			for _, r := range jobs {
				if !r.at.Before(from) && r.at.Before(to) && r.st == app.StatusCompleted {
					wantDocs++
				}
				if !in(r) {
					continue
				}
				wantRows[app.AnalyticsRow{Date: r.at.Format(time.DateOnly), Status: r.st, Format: r.fmt_}]++
				ts := wantTpl[r.tpl]
				ts.TemplateID, ts.Count = r.tpl, ts.Count+1
				if r.st == app.StatusFailed {
					ts.Failed++
				}
				ts.AvgGenerationTimeMs += float64(r.dur)
				wantTpl[r.tpl] = ts
				wantHours[r.at.Hour()]++
			}
			rows, err := s.JobAnalytics(ctx, app.AnalyticsFilter{TeamID: team, From: from, To: to})
			if err != nil {
				t.Fatal(err)
			}
			got := map[app.AnalyticsRow]int{}
			for _, r := range rows {
				if r.DurationCount != r.Count {
					t.Errorf("%s %v-%v: row %+v", when, from, to, r)
				}
				got[app.AnalyticsRow{Date: r.Date, Status: r.Status, Format: r.Format}] += r.Count
			}
			if !maps.Equal(got, wantRows) {
				t.Errorf("%s %v-%v: analytics %v, want %v", when, from, to, got, wantRows)
			}
			rows, err = s.JobAnalytics(ctx, app.AnalyticsFilter{TeamID: team, TemplateID: named.ID, From: from, To: to})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, r := range rows {
				n += r.Count
			}
			if n != wantTpl[named.ID].Count {
				t.Errorf("%s %v-%v: %d jobs of the template, want %d", when, from, to, n, wantTpl[named.ID].Count)
			}
			stats, err := s.TemplateStats(ctx, team, from, to)
			if err != nil || len(stats) != len(wantTpl) {
				t.Fatalf("%s %v-%v: template stats %+v, %v; want %v", when, from, to, stats, err, wantTpl)
			}
			for i, st := range stats {
				w := wantTpl[st.TemplateID]
				w.AvgGenerationTimeMs /= float64(w.Count)
				if st.TemplateID == named.ID {
					w.Name = "Invoice"
				}
				if i > 0 && stats[i-1].TemplateID >= st.TemplateID {
					t.Errorf("%s: template stats out of order: %+v", when, stats)
				}
				if st.Count != w.Count || st.Failed != w.Failed || st.Name != w.Name || math.Abs(st.AvgGenerationTimeMs-w.AvgGenerationTimeMs) > 1e-9 {
					t.Errorf("%s %v-%v: template stat %+v, want %+v", when, from, to, st, w)
				}
			}
			hours, err := s.HourCounts(ctx, team, from, to)
			if err != nil {
				t.Fatal(err)
			}
			gotHours := map[int]int{}
			for _, h := range hours {
				gotHours[h.Hour] += h.Count
			}
			if !maps.Equal(gotHours, wantHours) {
				t.Errorf("%s %v-%v: hour counts %v, want %v", when, from, to, gotHours, wantHours)
			}
			if when == "before retention" {
				if n, err := s.CountDocuments(ctx, team, from, to); err != nil || n != wantDocs {
					t.Errorf("%s %v-%v: %d documents, %v; want %d", when, from, to, n, err, wantDocs)
				}
			}
		}
		// Team B sees its own job only.
		rows, err := s.JobAnalytics(ctx, app.AnalyticsFilter{TeamID: other, From: start, To: end})
		if err != nil || len(rows) != 1 || rows[0].Count != 1 {
			t.Errorf("%s: team B's analytics %+v, %v", when, rows, err)
		}
		if stats, err := s.TemplateStats(ctx, other, start, end); err != nil || len(stats) != 1 || stats[0].TemplateID != "tpl_1" || stats[0].Name != "" {
			t.Errorf("%s: team B's template stats %+v, %v", when, stats, err)
		}
		if stats, err := s.TemplateStats(ctx, other, end, end.Add(time.Hour)); err != nil || stats == nil || len(stats) != 0 {
			t.Errorf("%s: an empty period's template stats %#v, %v", when, stats, err)
		}
	}
	check("before retention")
	if _, err := s.PurgeJobs(ctx, end, end); err != nil {
		t.Fatal(err)
	}
	if n, err := s.CountDocuments(ctx, team, start, end); err != nil || n != 0 {
		t.Fatalf("documents left after retention: %d, %v", n, err)
	}
	check("after retention")
}
