package store

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"folio/app"
)

// mustGrow grows a new database with n jobs across teams small teams.
func mustGrow(tb testing.TB, n, teams int) (*DB, *GrowResult) {
	tb.Helper()
	db := mustDB(tb)
	res, err := Grow(context.Background(), db, GrowOptions{Jobs: n, Teams: teams, Days: 90, Seed: 1})
	if err != nil {
		tb.Fatal(err)
	}
	return db, res
}

func TestGrowWritesAConsistentHistory(t *testing.T) {
	ctx := context.Background()
	n := int64(10_000)
	if raceEnabled {
		n = 2_000 // the same history, a fifth of the jobs: -race slows SQLite tenfold
	}
	db, res := mustGrow(t, int(n), 50)
	count := func(q string, args ...any) int64 {
		t.Helper()
		var n int64
		if err := db.read.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	for _, c := range []struct {
		what      string
		got, want int64
	}{
		{"jobs", count(`SELECT COUNT(*) FROM jobs`), n},
		{"jobs counted", res.Counts["jobs"], n},
		{"teams", count(`SELECT COUNT(*) FROM teams`), 1 + 50 + 6}, // big, small, personal teams of the big team's people
		{"jobs in batches", count(`SELECT COUNT(*) FROM jobs WHERE batch_id != ''`), count(`SELECT SUM(total) FROM batches`)},
		{"batch counts", count(`SELECT SUM(completed + failed) FROM batches`), count(`SELECT SUM(total) FROM batches`)},
		{"the 100-document batch", count(`SELECT COUNT(*) FROM jobs WHERE batch_id = ? AND batch_id != ''`, res.BatchID), 100},
		{"hourly statistics", count(`SELECT SUM(count) FROM job_stats`), n},
		{"monthly usage", count(`SELECT SUM(documents) FROM usage`), count(`SELECT COUNT(*) FROM jobs WHERE status = 'completed'`)},
		{"a delivery per event", count(`SELECT COUNT(*) FROM webhook_deliveries`), count(`SELECT COUNT(*) FROM events`)},
		{"unfinished jobs", count(`SELECT COUNT(*) FROM jobs WHERE status IN ('pending', 'processing')`), 0},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.what, c.got, c.want)
		}
	}
	// growBigShare (90 %) of the requests, some of them batches of up to 100.
	if b := count(`SELECT COUNT(*) FROM jobs WHERE team_id = ?`, res.BigTeamID); b < n*80/100 || b > n*97/100 {
		t.Errorf("the big team has %d of %d jobs, want about 90 %%", b, n)
	}
	if f := count(`SELECT COUNT(*) FROM jobs WHERE status = 'failed'`); f < n*3/100 || f > n*7/100 {
		t.Errorf("%d failed jobs of %d, want about 5 %%", f, n)
	}
	if d := count(`SELECT COUNT(*) FROM webhook_deliveries`); d < n/10 {
		t.Errorf("%d deliveries, want some for a quarter of the subscribed teams' jobs", d)
	}
	if n := count(`SELECT COUNT(*) FROM jobs WHERE file_path != '' AND expires_at < ?`, ms(time.Now())); n == 0 {
		t.Error("no expired file waits for the janitor")
	}
	// Rows written at volume have time-ordered IDs, as the server makes them
	// (app.NewTimeID): each ID begins with its row's creation time, so
	// insertion order is key order.
	for _, tbl := range []string{"jobs", "batches", "events", "webhook_deliveries", "activity"} {
		rows, err := db.read.QueryContext(ctx, `SELECT id, created_at FROM `+tbl)
		if err != nil {
			t.Fatal(err)
		}
		bad, all := 0, 0
		for rows.Next() {
			var id string
			var at int64
			if err := rows.Scan(&id, &at); err != nil {
				t.Fatal(err)
			}
			_, rest, _ := strings.Cut(id, "_")
			if len(rest) != 20 || rest[:app.IDTimeChars] != app.IDTime(time.UnixMilli(at)) {
				bad++
			}
			all++
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
		if bad != 0 || all == 0 {
			t.Errorf("%s: %d of %d IDs do not begin with their creation time", tbl, bad, all)
		}
		if out := count(`SELECT COUNT(*) FROM (SELECT id, LAG(id) OVER (ORDER BY rowid) AS prev, created_at, LAG(created_at) OVER (ORDER BY rowid) AS prevAt FROM ` + tbl + `)
			WHERE prevAt < created_at AND prev >= id`); out != 0 {
			t.Errorf("%s: %d rows created later than the row before have a smaller ID", tbl, out)
		}
	}
	// The result signs in: the key is the big team's, the job is its.
	k, err := db.FindAPIKeyByHash(ctx, app.HashToken(res.APIKey))
	if err != nil || k.TeamID != res.BigTeamID {
		t.Fatalf("API key: %+v, %v", k, err)
	}
	if _, err := db.FindJobByID(ctx, res.BigTeamID, res.JobID); err != nil {
		t.Fatalf("recent job: %v", err)
	}
	if _, err := db.FindSubscription(ctx, res.BigTeamID, res.SubscriptionID); err != nil {
		t.Fatalf("subscription: %v", err)
	}
	if len(res.TemplateIDs) != 20 {
		t.Fatalf("%d templates of the big team, want 20", len(res.TemplateIDs))
	}
	// Grow writes new data sets only.
	if _, err := Grow(ctx, db, GrowOptions{Jobs: 10}); err == nil {
		t.Fatal("grew a database that already held teams")
	}
	path := filepath.Join(t.TempDir(), GrowResultFile)
	if err := SaveGrowResult(path, res); err != nil {
		t.Fatal(err)
	}
	back, err := LoadGrowResult(path)
	if err != nil || back.APIKey != res.APIKey {
		t.Fatalf("LoadGrowResult: %+v, %v", back, err)
	}
}
