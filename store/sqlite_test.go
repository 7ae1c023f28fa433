package store

import (
	"context"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"folio/app"
)

func mustDB(tb testing.TB) *DB {
	tb.Helper()
	db, err := Open(context.Background(), filepath.Join(tb.TempDir(), "folio.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func mustUser(tb testing.TB, db *DB, email string) *app.User {
	tb.Helper()
	now := time.Now().UTC()
	u := &app.User{ID: app.NewID("usr"), Email: email, Name: "N", PasswordHash: "x", CreatedAt: now, UpdatedAt: now}
	team := &app.Team{ID: app.NewID("team"), Name: "T", Slug: app.NewID("s"), IsPersonal: true, Plan: "free", OwnerID: u.ID, CreatedAt: now, UpdatedAt: now}
	u.PersonalTeamID = team.ID
	if err := db.CreateUser(context.Background(), u, team); err != nil {
		tb.Fatal(err)
	}
	return u
}

func TestMigrationsAreIdempotent(t *testing.T) {
	names, _ := fs.Glob(migrations, "migrations/*.sql")
	last := names[len(names)-1]
	path := filepath.Join(t.TempDir(), "folio.db")
	for i := 0; i < 2; i++ {
		db, err := Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		v, err := db.Version(context.Background())
		if err != nil || v != last {
			t.Fatalf("version %q %v", v, err)
		}
		db.Close()
	}
}

func TestCreateUserDuplicateEmail(t *testing.T) {
	db := mustDB(t)
	mustUser(t, db, "a@example.com")
	now := time.Now()
	u := &app.User{ID: app.NewID("usr"), Email: "a@example.com", Name: "N", PasswordHash: "x", PersonalTeamID: "team_x", CreatedAt: now, UpdatedAt: now}
	err := db.CreateUser(context.Background(), u, &app.Team{ID: "team_x", Slug: "x", OwnerID: u.ID, Plan: "free", CreatedAt: now, UpdatedAt: now})
	if app.ErrorCode(err) != app.ECodeEmailInUse {
		t.Fatalf("duplicate email: %v", err)
	}
	// The failed signup left no team behind.
	if _, err := db.FindTeam(context.Background(), "team_x"); app.ErrorCode(err) != app.ECodeTeamNotFound {
		t.Fatalf("orphan team: %v", err)
	}
}

func TestRefreshTokenReuseRevokesFamily(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	u := mustUser(t, db, "r@example.com")
	now := time.Now()
	mk := func(hash string) {
		if err := db.CreateRefreshToken(ctx, &app.RefreshToken{ID: app.NewID("rt"), UserID: u.ID, Hash: hash, Family: "f1", ExpiresAt: now.Add(time.Hour), CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	mk("h1")
	if _, err := db.UseRefreshToken(ctx, "h1", now); err != nil {
		t.Fatal(err)
	}
	mk("h2")
	if _, err := db.UseRefreshToken(ctx, "h1", now); app.ErrorCode(err) != app.ECodeBadRefreshToken {
		t.Fatalf("reuse: %v", err)
	}
	if _, err := db.UseRefreshToken(ctx, "h2", now); app.ErrorCode(err) != app.ECodeBadRefreshToken {
		t.Fatalf("family member after reuse: %v", err)
	}
	mk("h3")
	if _, err := db.UseRefreshToken(ctx, "h3", now.Add(2*time.Hour)); app.ErrorCode(err) != app.ECodeBadRefreshToken {
		t.Fatalf("expired token: %v", err)
	}
}

func TestJobStartsAndFinishesOnce(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	u := mustUser(t, db, "j@example.com")
	j := &app.Job{ID: "job_1", TeamID: u.PersonalTeamID, TemplateID: "tpl_1", Status: app.StatusPending, Format: "pdf", Priority: 1, CreatedAt: time.Now()}
	if err := db.CreateJobs(ctx, nil, j); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := db.StartJob(ctx, "job_1", time.Now()); !ok || err != nil {
		t.Fatalf("start: %v %v", ok, err)
	}
	res := app.JobResult{Status: app.StatusCompleted, CompletedAt: time.Now()}
	if out, err := db.FinishJob(ctx, "job_1", res, nil); !out.Ended || err != nil {
		t.Fatalf("finish: %v %v", out, err)
	}
	if out, _ := db.FinishJob(ctx, "job_1", app.JobResult{Status: app.StatusFailed, CompletedAt: time.Now()}, nil); out.Ended {
		t.Fatal("a job finished twice")
	}
	if _, ok, _ := db.StartJob(ctx, "job_1", time.Now()); ok {
		t.Fatal("an ended job started again")
	}
	if _, err := db.FindJobByID(ctx, "team_other", "job_1"); app.ErrorCode(err) != app.ECodeJobNotFound {
		t.Fatalf("other team reads the job: %v", err)
	}
	got, _ := db.FindJobByID(ctx, u.PersonalTeamID, "job_1")
	if got.Status != app.StatusCompleted || got.Attempts != 1 {
		t.Fatalf("job = %+v", got)
	}
}
