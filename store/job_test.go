package store

import (
	"context"
	"testing"

	"folio/app"
)

// TestJobListPastTheCount: a team with more jobs than app.MaxCount gets a
// lower bound for a total, said so, and exact pages whether found by
// offset (deep ones too) or by cursor; the cursor walk sees every job once, newest first,
// batches (equal creation times) included.
func TestJobListPastTheCount(t *testing.T) {
	if raceEnabled {
		// It needs more jobs than app.MaxCount and starts no goroutine:
		// growing them took minutes under -race, and the run without it
		// checks the same pages.
		t.Skip("grows 12,000 jobs; run without -race")
	}
	ctx := context.Background()
	db, res := mustGrow(t, 12_000, 2)
	var want int
	db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM jobs WHERE team_id = ?`, res.BigTeamID).Scan(&want)
	if want <= app.MaxCount {
		t.Fatalf("the big team has %d jobs, want more than %d", want, app.MaxCount)
	}
	f := app.JobFilter{TeamID: res.BigTeamID, Page: app.Page{Page: 1, Limit: 100}}
	first, info, err := db.FindJobs(ctx, f)
	if err != nil || len(first) != 100 || info.Total != app.MaxCount || !info.Estimate || !info.More || info.Next == "" {
		t.Fatalf("first page: %d jobs, %+v, %v", len(first), info, err)
	}
	if m := info.Meta(f.Page); m.Total != app.MaxCount || !m.TotalIsEstimate || m.TotalPages != 100 || !m.HasNextPage || m.HasPreviousPage {
		t.Fatalf("first page meta %+v", m)
	}
	// Past the count, the total grows with the pages seen.
	f.Page.Page = 105
	_, info, err = db.FindJobs(ctx, f)
	if err != nil || info.Total != 10_501 || !info.Estimate {
		t.Fatalf("page 105: %+v, %v", info, err)
	}
	// Walk by cursor: every job once, in the offset pages' order.
	seen := map[string]bool{}
	var prev *app.Job
	f.Page.Page = 1
	for page := 1; ; page++ {
		jobs, info, err := db.FindJobs(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if page <= 3 || page%10 == 0 { // deep pages skip index entries only (FindJobs)
			byOffset, _, _ := db.FindJobs(ctx, app.JobFilter{TeamID: f.TeamID, Page: app.Page{Page: page, Limit: 100}})
			if len(byOffset) != len(jobs) {
				t.Fatalf("page %d: %d jobs by cursor, %d by offset", page, len(jobs), len(byOffset))
			}
			for i := range jobs {
				if jobs[i].ID != byOffset[i].ID {
					t.Fatalf("page %d row %d: %s by cursor, %s by offset", page, i, jobs[i].ID, byOffset[i].ID)
				}
			}
		}
		for _, j := range jobs {
			if seen[j.ID] {
				t.Fatalf("job %s twice", j.ID)
			}
			if prev != nil && j.CreatedAt.After(prev.CreatedAt) {
				t.Fatalf("job %s newer than the one before it", j.ID)
			}
			seen[j.ID], prev = true, j
		}
		if !info.More {
			break
		}
		f.Cursor = info.Next
	}
	if len(seen) != want {
		t.Fatalf("the cursor walk saw %d of %d jobs", len(seen), want)
	}
	if _, _, err := db.FindJobs(ctx, app.JobFilter{TeamID: res.BigTeamID, Page: app.Page{Page: 1, Limit: 10}, Cursor: "nonsense"}); app.ErrorCode(err) != app.ECodeInvalidField {
		t.Fatalf("bad cursor: %v", err)
	}
	// Deep pages of each filter: the rows of the plain query.
	tpl := res.TemplateIDs[0]
	for _, c := range []app.JobFilter{{Status: app.StatusCompleted}, {TemplateID: tpl}, {Status: app.StatusCompleted, TemplateID: tpl}} {
		c.TeamID, c.Page = res.BigTeamID, app.Page{Page: 7, Limit: 50}
		jobs, _, err := db.FindJobs(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		rows, _ := db.read.QueryContext(ctx, `SELECT id FROM jobs WHERE team_id = ?3 AND (status = ?1 OR ?1 = '') AND (template_id = ?2 OR ?2 = '')
			ORDER BY created_at DESC, rowid DESC LIMIT 50 OFFSET 300`, c.Status, c.TemplateID, c.TeamID)
		want, _ := scanStrings(rows)
		if len(jobs) != 50 || len(want) != 50 {
			t.Fatalf("%+v: %d jobs, want %d", c, len(jobs), len(want))
		}
		for i := range want {
			if jobs[i].ID != want[i] {
				t.Fatalf("%+v row %d: %s, want %s", c, i, jobs[i].ID, want[i])
			}
		}
	}
	// A filter under the count is exact, as before.
	_, info, err = db.FindJobs(ctx, app.JobFilter{TeamID: res.BigTeamID, Status: app.StatusFailed, Page: app.Page{Page: 1, Limit: 20}})
	var failed int
	db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM jobs WHERE team_id = ? AND status = 'failed'`, res.BigTeamID).Scan(&failed)
	if err != nil || info.Total != failed || info.Estimate {
		t.Fatalf("failed jobs: %+v, %v; want total %d", info, err, failed)
	}
}
