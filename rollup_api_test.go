package main

import (
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"folio/store"
)

// TestAnalyticsAfterRollupBackfill: a database from before migration 0019
// (its roll-ups not there) gets them filled after start-up, and the
// analytics and dashboard figures and deep pages of the jobs list are the
// same before, during and after the backfill as on the database that had
// them all along, and the same as the rows they count.
func TestAnalyticsAfterRollupBackfill(t *testing.T) {
	if testing.Short() {
		t.Skip("grows 20,000 jobs")
	}
	now := time.Now().UTC().Truncate(time.Second)
	data := t.TempDir()
	db, err := store.Open(t.Context(), filepath.Join(data, "folio.db"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := store.Grow(t.Context(), db, store.GrowOptions{Jobs: 20_000, Teams: 5, Days: 40, Seed: 3, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	paths := []string{"/api/v1/documents/analytics", "/api/dashboard/analytics/health", "/api/dashboard/analytics/insights",
		"/api/v1/documents/analytics?startDate=" + now.Add(-39*24*time.Hour).Format(time.RFC3339) + "&endDate=" + now.Format(time.RFC3339),
		"/api/v1/documents/jobs?page=40&limit=100", "/api/v1/documents/jobs?page=3&limit=7"}
	read := func(s *testServer) []string {
		t.Helper()
		tok := s.must(200, "POST", "/api/auth/login", "", map[string]any{"email": g.OwnerEmail, "password": g.Password}).str("accessToken")
		var out []string
		for _, p := range paths {
			raw := s.must(200, "GET", p, tok, nil, "X-Team-Id", g.BigTeamID).raw
			if strings.Contains(p, "/documents/jobs") { // the jobs, not their links (with the server's port)
				var page struct {
					Data []struct {
						ID string `json:"jobId"`
					}
				}
				json.Unmarshal(raw, &page)
				raw, _ = json.Marshal(page.Data)
			}
			out = append(out, string(raw))
		}
		return out
	}
	start := func(logs *syncBuffer) *testServer {
		m := &Main{Config: Config{Data: data}, Now: func() time.Time { return now }, Logger: slog.New(slog.NewTextHandler(logs, nil))}
		return startMain(t, m, func(c *Config) { c.NoJanitor = true })
	}

	// The grown database has its roll-ups: the figures as they always were.
	var logs syncBuffer
	s := start(&logs)
	want := read(s)
	s.Close()

	// The rows agree: the month's documents, and the deliveries of the
	// last 24 hours.
	sq := openSQL(t, data)
	var docs, dlv int
	sq.QueryRow(`SELECT SUM(count) FROM job_stats WHERE team_id = ? AND slot >= ? AND slot < ?`, g.BigTeamID,
		now.Add(-30*24*time.Hour).UnixMilli()/3600000, (now.UnixMilli()+3599999)/3600000).Scan(&docs)
	sq.QueryRow(`SELECT COUNT(*) FROM webhook_deliveries WHERE team_id = ? AND attempted_at >= ? AND status IN ('success', 'failed')`, g.BigTeamID,
		now.Add(-24*time.Hour).UnixMilli()).Scan(&dlv)
	var a struct{ TotalDocuments int }
	var h struct{ WebhookDeliveries24h, Documents24h int }
	json.Unmarshal([]byte(want[0]), &a)
	json.Unmarshal([]byte(want[1]), &h)
	if a.TotalDocuments != docs || docs == 0 || h.WebhookDeliveries24h != dlv || dlv == 0 || h.Documents24h == 0 {
		t.Fatalf("documents %d (rows: %d), deliveries in 24 h %d (rows: %d), documents in 24 h %d", a.TotalDocuments, docs, h.WebhookDeliveries24h, dlv, h.Documents24h)
	}
	var page []struct {
		ID string `json:"jobId"`
	}
	json.Unmarshal([]byte(want[4]), &page)
	var id string
	sq.QueryRow(`SELECT id FROM jobs WHERE team_id = ? ORDER BY created_at DESC, rowid DESC LIMIT 1 OFFSET 3900`, g.BigTeamID).Scan(&id)
	if len(page) != 100 || page[0].ID != id {
		t.Fatalf("page 40 of 100 starts with %v, the rows with %s", page[:min(1, len(page))], id)
	}

	// As before 0019 (and 0022, which changes its triggers and adds the
	// roll-ups by template).
	for _, q := range []string{`DROP TABLE job_team_hours`, `DROP TABLE job_team_days`, `DROP TABLE delivery_hours`, `DROP TABLE rollup_backfill`,
		`DROP TRIGGER jobs_list_insert`, `DROP TRIGGER jobs_list_delete`, `DROP TABLE job_list_hours`,
		`DROP TABLE job_template_hours`, `DROP TABLE job_template_days`, `DROP TABLE step_bookkeeping`,
		`DELETE FROM migrations WHERE name IN ('migrations/0019_rollups.sql', 'migrations/0022_steps_and_template_rollups.sql')`} {
		if _, err := sq.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	sq.Close()

	logs = syncBuffer{}
	s = start(&logs)
	if got := read(s); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("during the backfill:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(logs.String(), "msg=\"rollup backfill\"") {
		if time.Now().After(deadline) {
			t.Fatalf("no backfill logged: %s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	line := logs.String()[strings.Index(logs.String(), "msg=\"rollup backfill\""):]
	line = line[:strings.Index(line, "\n")]
	t.Log(line)
	for _, f := range []string{"transactions=", "duration_ms=", "read_job_stats=", "job_team_hours=", "delivery_hours=", "job_list_hours=",
		"job_template_days=", "job_template_hours=", "longest_ms="} {
		if !strings.Contains(line, f) || strings.Contains(line, f+"0 ") {
			t.Fatalf("backfill line without %s: %s", f, line)
		}
	}
	if got := read(s); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after the backfill:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	s.Close()
	// A restart finds it done: nothing more to fill, nothing logged.
	logs = syncBuffer{}
	s = start(&logs)
	if got := read(s); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after a restart:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if strings.Contains(logs.String(), "rollup backfill") {
		t.Fatalf("a second backfill: %s", logs.String())
	}
}
