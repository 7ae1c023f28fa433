package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"folio/app"
)

func migrationNames(t *testing.T) []string {
	t.Helper()
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil || len(names) < 2 {
		t.Fatalf("migrations: %v %v", names, err)
	}
	sort.Strings(names)
	return names
}

// reservedMigrations are numbers handed to work on other branches: until
// it lands, a later number may follow the gap. Drop an entry once its file
// is in.
// 0011 was handed out and never used: the branches of 2026-11-25 landed
// 0012 and 0013, so it stays a gap.
// 0022-0025 were handed out beside 0026 (issue 24's second pass) to
// branches of 2026-11-26 that land in any order; a number that exists is
// checked as any other.
// 0027 and 0028 were handed out beside 0029 (issue 24's CPU pass) to
// branches of the same day.
var reservedMigrations = map[string]bool{"0011": true, "0024": true, "0025": true, "0027": true, "0028": true}

// TestMigrationNumbering keeps the files NNNN_name.sql, numbered 1, 2, 3...
// without gaps (other than reserved numbers) or duplicates (two branches
// adding the same number would otherwise both be applied in name order, or
// one skipped by a later one).
func TestMigrationNumbering(t *testing.T) {
	re := regexp.MustCompile(`^migrations/(\d{4})_[a-z0-9_]+\.sql$`)
	next := 1
	for _, name := range migrationNames(t) {
		m := re.FindStringSubmatch(name)
		if m == nil {
			t.Fatalf("%s: want migrations/NNNN_name.sql", name)
		}
		for m[1] > fmt.Sprintf("%04d", next) && reservedMigrations[fmt.Sprintf("%04d", next)] {
			next++
		}
		if want := fmt.Sprintf("%04d", next); m[1] != want {
			t.Fatalf("%s: number %s, want %s (gap or duplicate)", name, m[1], want)
		}
		next++
	}
}

// TestMigrateFromEmpty applies every migration to a new file.
func TestMigrateFromEmpty(t *testing.T) {
	names := migrationNames(t)
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "folio.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var applied int
	db.read.QueryRow(`SELECT COUNT(*) FROM migrations`).Scan(&applied)
	if applied != len(names) {
		t.Fatalf("%d migrations recorded, want %d", applied, len(names))
	}
	if _, err := db.QueueTotals(context.Background(), time.Now()); err != nil {
		t.Fatalf("schema incomplete: %v", err)
	}
}

// TestMigrateFromPreviousVersion builds a database at the schema of the
// last release, writes the records a running server has (an account,
// a template, a queued and a finished job, a webhook delivery), then opens
// it with every migration: the upgrade keeps every record readable through
// the current code, and the queued job still runs.
func TestMigrateFromPreviousVersion(t *testing.T) {
	ctx := context.Background()
	names := migrationNames(t)
	// The schema of the last release (the session of 2026-11-25 added
	// 0010, 0012 and 0013 at once; their backfills must run on real rows).
	prev := "migrations/0009_request_ids.sql"
	path := filepath.Join(t.TempDir(), "folio.db")
	old, err := open(ctx, path, prev)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := old.Version(ctx); v != prev {
		t.Fatalf("old schema at %s, want %s", v, prev)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	ms := now.UnixMilli()
	// Columns as of the first migrations: whatever came later must have
	// defaults, or this upgrade (and every real one) breaks.
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO users (id, email, name, password_hash, personal_team_id, created_at, updated_at) VALUES ('usr_1', 'old@example.com', 'Old', 'x', 'team_1', ?, ?)`, []any{ms, ms}},
		{`INSERT INTO teams (id, name, slug, is_personal, owner_id, plan, created_at, updated_at) VALUES ('team_1', 'Old', 'old', 1, 'usr_1', 'growth', ?, ?)`, []any{ms, ms}},
		{`INSERT INTO members (team_id, user_id, role, joined_at) VALUES ('team_1', 'usr_1', 'owner', ?)`, []any{ms}},
		{`INSERT INTO templates (id, team_id, short_id, slug, name, template_type, output_formats, schema, variables, constants, calculated_variables, created_by, created_at, updated_at)
			VALUES ('tpl_1', 'team_1', 'etpl_1', 'old', 'Old', 'attachment', '["pdf"]', '{"sections":[]}', '[]', '{}', '[]', 'usr_1', ?, ?)`, []any{ms, ms}},
		{`INSERT INTO jobs (id, team_id, template_id, status, format, priority, variables, created_at) VALUES ('job_queued', 'team_1', 'tpl_1', 'pending', 'pdf', 1, '{"a":1}', ?)`, []any{ms}},
		{`INSERT INTO jobs (id, team_id, template_id, status, format, priority, file_path, file_size, created_at, completed_at, expires_at, api_key_id)
			VALUES ('job_done', 'team_1', 'tpl_1', 'completed', 'pdf', 1, 'team_1/job_done.pdf', 10, ?, ?, ?, 'key_1')`, []any{ms, ms, ms + 3600_000}},
		{`INSERT INTO api_keys (id, team_id, name, key_type, key_prefix, hash, permissions, is_active, created_by, created_at, updated_at)
			VALUES ('key_1', 'team_1', 'Old', 'secret', 'svc_sk_x...', 'h', '[]', 1, 'usr_1', ?, ?)`, []any{ms, ms}},
		{`INSERT INTO job_stats (team_id, slot, template_id, status, format, count, duration_sum, duration_count) VALUES ('team_1', ?, 'tpl_1', 'completed', 'pdf', 1, 5, 1)`,
			[]any{ms / 3600_000}},
		{`INSERT INTO webhook_subscriptions (id, team_id, url, events, enabled, secret, created_at, updated_at) VALUES ('whk_1', 'team_1', 'https://example.com/h', '["document.generated"]', 1, 's', ?, ?)`, []any{ms, ms}},
		{`INSERT INTO webhook_deliveries (id, subscription_id, team_id, event_id, event, payload, status, max_attempts, created_at)
			VALUES ('dlv_1', 'whk_1', 'team_1', 'evt_1', 'document.generated', '{}', 'pending', 4, ?)`, []any{ms}},
	} {
		if _, err := old.write.ExecContext(ctx, q.sql, q.args...); err != nil {
			t.Fatalf("old schema: %v\n%s", err, q.sql)
		}
	}
	old.Close()

	db, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("upgrade from %s: %v", prev, err)
	}
	defer db.Close()
	if v, _ := db.Version(ctx); v != names[len(names)-1] {
		t.Fatalf("upgraded to %s, want %s", v, names[len(names)-1])
	}
	u, err := db.FindUserByEmail(ctx, "old@example.com")
	if err != nil || u.ID != "usr_1" {
		t.Fatalf("user after upgrade: %v %v", u, err)
	}
	if tpl, err := db.FindTemplate(ctx, "team_1", "tpl_1"); err != nil || tpl.Name != "Old" {
		t.Fatalf("template after upgrade: %v %v", tpl, err)
	}
	done, err := db.FindJobByID(ctx, "team_1", "job_done")
	if err != nil || done.Status != app.StatusCompleted || done.FileSize != 10 || done.RequestID != "" {
		t.Fatalf("finished job after upgrade: %+v %v", done, err)
	}
	if n, err := db.CountKeyDocuments(ctx, "team_1", "key_1"); err != nil || n != 1 {
		t.Fatalf("documents of the key after upgrade: %d %v", n, err)
	}
	analytics := func() int {
		rows, err := db.JobAnalytics(ctx, app.AnalyticsFilter{TeamID: "team_1", From: now.Add(-72 * time.Hour), To: now.Add(time.Hour)})
		n := 0
		for _, r := range rows {
			n += r.Count
		}
		if hours, _ := db.HourCounts(ctx, "team_1", now.Add(-72*time.Hour), now.Add(time.Hour)); len(hours) != 1 || hours[0].Count != n || err != nil {
			t.Fatalf("hour counts %+v for %d jobs, %v", hours, n, err)
		}
		return n
	}
	if n := analytics(); n != 1 {
		t.Fatalf("analytics after upgrade: %d jobs, want 1", n)
	}
	if ids, err := db.UnfinishedJobIDs(ctx, time.Time{}); err != nil || len(ids) != 1 || ids[0] != "job_queued" {
		t.Fatalf("unfinished jobs after upgrade: %v %v", ids, err)
	}
	j, ok, err := db.StartJob(ctx, "job_queued", now)
	if err != nil || !ok {
		t.Fatalf("queued job cannot start after upgrade: %v %v", ok, err)
	}
	if out, err := db.FinishJob(ctx, j.ID, app.JobResult{Status: app.StatusCompleted, CompletedAt: now}, nil); err != nil || !out.Ended {
		t.Fatalf("queued job cannot finish after upgrade: %+v %v", out, err)
	}
	if n := analytics(); n != 2 {
		t.Fatalf("analytics after a job ended: %d jobs, want 2", n)
	}
	if d, err := db.FindDelivery(ctx, "dlv_1"); err != nil || d.Status != app.DeliveryPending {
		t.Fatalf("delivery after upgrade: %+v %v", d, err)
	}
	// New rows use the new columns.
	n := &app.Job{ID: "job_new", TeamID: "team_1", TemplateID: "tpl_1", Status: app.StatusPending, Format: "pdf", Priority: 1, CreatedAt: now, RequestID: "req-1"}
	if err := db.CreateJobs(ctx, nil, n); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.FindJobForWorker(ctx, "job_new"); got.RequestID != "req-1" {
		t.Fatalf("request id not stored: %q", got.RequestID)
	}
}

// TestRefuseNewerSchema checks that migrations only move forward: a binary
// opening a database that a newer binary migrated refuses to start rather
// than run against tables it does not understand.
func TestRefuseNewerSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "folio.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.write.ExecContext(ctx, `INSERT INTO migrations (name, applied_at) VALUES ('migrations/9999_from_the_future.sql', 0)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = Open(ctx, path)
	if !errors.Is(err, ErrSchemaNewer) || !strings.Contains(err.Error(), "9999_from_the_future.sql") {
		t.Fatalf("Open on a newer schema: %v, want ErrSchemaNewer naming the migration", err)
	}
}
