package postgres

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"folio/app"
)

// The state an embedded install keeps per process or in --data, shared
// by replicas here: rate-limit windows, login throttles and the 2FA
// replay check, the keys, the janitor's pass. Each test opens several
// DB handles on one database: the replicas.

// TestRateLimitAcrossReplicas: three replicas, each with four clients
// calling at once, share one limit of 25 per minute: exactly 25 of the
// 120 calls pass, not 25 per replica. The API's and the login limiter's
// windows are apart, and expired windows are swept.
func TestRateLimitAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	dbs := openReplicas(t, 3)
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	var admitted atomic.Int32
	perReplica := make([]atomic.Int32, len(dbs))
	var wg sync.WaitGroup
	for r, db := range dbs {
		l := &app.RateLimiter{Windows: db, Name: "api", CountRefused: true}
		for c := range 4 {
			wg.Go(func() {
				for i := range 10 {
					d, err := l.Allow(ctx, "team:t1:key:generate", 25, time.Minute, now.Add(time.Duration(r*40+c*10+i)*time.Millisecond))
					if err != nil {
						t.Error(err)
						return
					}
					if d.Allowed {
						admitted.Add(1)
						perReplica[r].Add(1)
					}
				}
			})
		}
	}
	wg.Wait()
	if n := admitted.Load(); n != 25 {
		t.Fatalf("%d of 120 calls admitted across 3 replicas, want 25", n)
	}
	t.Logf("admitted per replica: %d, %d, %d", perReplica[0].Load(), perReplica[1].Load(), perReplica[2].Load())
	// Every replica now refuses, with the same count behind it.
	for r, db := range dbs {
		d, err := (&app.RateLimiter{Windows: db, Name: "api", CountRefused: true}).Allow(ctx, "team:t1:key:generate", 25, time.Minute, now.Add(time.Second))
		if err != nil || d.Allowed || d.RetryAfter <= 0 {
			t.Fatalf("replica %d after the limit: %+v %v", r, d, err)
		}
	}
	// The login throttle's windows are another limiter's: same key, own count.
	d, err := (&app.RateLimiter{Windows: dbs[1], Name: "auth"}).Allow(ctx, "team:t1:key:generate", 1, time.Minute, now.Add(time.Second))
	if err != nil || !d.Allowed {
		t.Fatalf("the auth limiter saw the api limiter's count: %+v %v", d, err)
	}
	// Two windows after they began, the rows stop counting and are swept,
	// by one replica; a longer window still running is kept.
	if _, err := (&app.RateLimiter{Windows: dbs[2], Name: "auth"}).Allow(ctx, "login:email:a@example.com", 10, time.Hour, now); err != nil {
		t.Fatal(err)
	}
	n, err := dbs[0].SweepRateWindows(ctx, now.Add(2*time.Minute+time.Millisecond))
	if err != nil || n != 2 {
		t.Fatalf("swept %d windows (%v), want the two one-minute ones", n, err)
	}
	var left int
	if err := dbs[1].pool.QueryRow(ctx, `SELECT count(*) FROM rate_windows`).Scan(&left); err != nil || left != 1 {
		t.Fatalf("%d windows left (%v), want the hour's", left, err)
	}
}

// TestRateSweepInSteps: a flood of distinct keys (one row each) is swept
// in statements of rateSweepRows.
func TestRateSweepInSteps(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	if _, err := db.pool.Exec(ctx, `INSERT INTO rate_windows (limiter, key, start, calls, admitted, expires_at)
		SELECT 'auth', 'login:email:' || i || '@example.com', $1::bigint, 1, true, $1::bigint + 120000 FROM generate_series(1, 12001) AS i`, ms(now)); err != nil {
		t.Fatal(err)
	}
	if n, err := db.SweepRateWindows(ctx, now.Add(time.Minute)); err != nil || n != 0 {
		t.Fatalf("swept %d live windows (%v)", n, err)
	}
	if n, err := db.SweepRateWindows(ctx, now.Add(3*time.Minute)); err != nil || n != 12001 {
		t.Fatalf("swept %d of 12001 (%v)", n, err)
	}
}

// replica is one Folio process's authentication over its own DB handle:
// its keys and login throttles come from the database.
type replica struct {
	db   *DB
	auth *app.AuthService
}

type discardMail struct{}

func (discardMail) Send(context.Context, app.Mail) error { return nil }

func openAuthReplicas(t *testing.T, n int, now func() time.Time) []replica {
	t.Helper()
	var out []replica
	for _, db := range openReplicas(t, n) {
		key, err := db.Secret(context.Background(), app.SecretJWT)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, replica{db, &app.AuthService{Users: db, Teams: db, Tokens: db, Keys: db, Accounts: db, TwoFactor: db,
			Mailer: discardMail{}, Limiter: &app.RateLimiter{Windows: db, Name: "auth"},
			Config: app.AuthConfig{JWTKey: key, BaseURL: "https://folio.test", SignupOpen: true, DefaultPlan: app.PlanUnlimited}, Now: now}})
	}
	return out
}

// TestTwoFactorCodeOnceAcrossReplicas: a user logs in on two replicas at
// once with the same TOTP code: one login succeeds, the other is refused
// as a replay (ERR_AUTH_012); the access token the winner got is
// accepted by the other replica, whose key is the same.
func TestTwoFactorCodeOnceAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	now := time.Now().UTC()
	rs := openAuthReplicas(t, 2, func() time.Time { return now })
	u, err := rs[0].auth.CreateUser(ctx, app.CreateUserInput{SignupInput: app.SignupInput{Email: "twice@example.com", Password: "correct horse 1", Name: "Twice"}, Verified: true})
	if err != nil {
		t.Fatal(err)
	}
	const secret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
	if err := rs[1].db.StartTwoFactor(ctx, u.ID, secret, nil, now); err != nil {
		t.Fatal(err)
	}
	if err := rs[0].db.EnableTwoFactor(ctx, u.ID, now.Unix()/30-5, nil, now); err != nil {
		t.Fatal(err)
	}
	code, err := totp.GenerateCodeCustom(secret, now, totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	sessions := make([]*app.Session, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, r := range rs {
		wg.Go(func() {
			sessions[i], errs[i] = r.auth.Login(ctx, app.LoginInput{Email: "twice@example.com", Password: "correct horse 1", Code: code}, fmt.Sprintf("192.0.2.%d", i+1))
		})
	}
	wg.Wait()
	won := -1
	for i := range rs {
		switch {
		case errs[i] == nil:
			if won >= 0 {
				t.Fatal("the same TOTP code logged in on both replicas")
			}
			won = i
		case app.ErrorCode(errs[i]) != app.ECodeBadTwoFactor:
			t.Fatalf("replica %d: %v, want ERR_AUTH_012", i, errs[i])
		}
	}
	if won < 0 {
		t.Fatalf("neither login succeeded: %v", errs)
	}
	p, err := rs[1-won].auth.Authenticate(ctx, sessions[won].AccessToken, "")
	if err != nil || p.UserID != u.ID {
		t.Fatalf("the other replica refused the winner's token: %+v %v", p, err)
	}
}

// TestLoginThrottleAcrossReplicas: wrong passwords for one email, sent
// to two replicas in turn, are throttled after 10 in all (app's per-email
// login limit), not 10 per replica; signups are throttled by nothing here
// but the email's uniqueness, which the database holds.
func TestLoginThrottleAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	now := time.Now().UTC()
	rs := openAuthReplicas(t, 2, func() time.Time { return now })
	if _, err := rs[0].auth.CreateUser(ctx, app.CreateUserInput{SignupInput: app.SignupInput{Email: "guess@example.com", Password: "correct horse 1", Name: "G"}, Verified: true}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 11; i++ {
		_, err := rs[i%2].auth.Login(ctx, app.LoginInput{Email: "guess@example.com", Password: fmt.Sprintf("wrong %d", i)}, fmt.Sprintf("198.51.100.%d", i))
		want := app.ECodeBadCredentials
		if i == 11 {
			want = app.ECodeRateLimited
		}
		if app.ErrorCode(err) != want {
			t.Fatalf("attempt %d on replica %d: %v, want %s", i, i%2, err, want)
		}
	}
	// One signup per email, whichever replicas the two attempts reach.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, r := range rs {
		wg.Go(func() {
			_, errs[i] = r.auth.Signup(ctx, app.SignupInput{Email: "new@example.com", Password: "correct horse 2", Name: "N"})
		})
	}
	wg.Wait()
	if (errs[0] == nil) == (errs[1] == nil) || app.ErrorCode(errors1(errs)) != app.ECodeEmailInUse {
		t.Fatalf("two signups of one email: %v", errs)
	}
}

// errors1 is the one error of two.
func errors1(errs []error) error {
	if errs[0] != nil {
		return errs[0]
	}
	return errs[1]
}

// TestSecretsAcrossReplicas: six replicas starting at once each ask for
// the three keys: all get the same three, and a later replica too. An
// embedded install's key moves in with ImportSecret; a different one is
// refused.
func TestSecretsAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	dbs := openReplicas(t, 6)
	names := []string{app.SecretJWT, app.SecretDownload, app.SecretSigning}
	got := make([][][]byte, len(dbs))
	var wg sync.WaitGroup
	for r, db := range dbs {
		got[r] = make([][]byte, len(names))
		wg.Go(func() {
			for i, name := range names {
				k, err := db.Secret(ctx, name)
				if err != nil {
					t.Error(err)
					return
				}
				got[r][i] = k
			}
		})
	}
	wg.Wait()
	for r := range dbs {
		for i, name := range names {
			if !bytes.Equal(got[r][i], got[0][i]) || len(got[r][i]) != 32 {
				t.Fatalf("replica %d's %s key %x differs from replica 0's %x", r, name, got[r][i], got[0][i])
			}
		}
	}
	var rows int
	if err := dbs[0].pool.QueryRow(ctx, `SELECT count(*) FROM secrets`).Scan(&rows); err != nil || rows != 3 {
		t.Fatalf("%d keys stored (%v)", rows, err)
	}
	if err := dbs[1].ImportSecret(ctx, app.SecretJWT, got[0][0]); err != nil {
		t.Fatalf("importing the same key: %v", err)
	}
	if err := dbs[1].ImportSecret(ctx, app.SecretJWT, bytes.Repeat([]byte{7}, 32)); err == nil || !strings.Contains(err.Error(), "different jwt key") {
		t.Fatalf("importing another key: %v", err)
	}
	fresh := mustDB(t)
	old := bytes.Repeat([]byte{9}, 32)
	if err := fresh.ImportSecret(ctx, app.SecretSigning, old); err != nil {
		t.Fatal(err)
	}
	if k, err := fresh.Secret(ctx, app.SecretSigning); err != nil || !bytes.Equal(k, old) {
		t.Fatalf("after the import: %x %v", k, err)
	}
}

// TestTaskOneReplicaAtATime: replicas that try a task at once run it one
// at a time (never two in flight), and a pass that began less than the
// gap ago is not run again by another replica.
func TestTaskOneReplicaAtATime(t *testing.T) {
	ctx := context.Background()
	dbs := openReplicas(t, 2)
	var inFlight, most, runs atomic.Int32
	var wg sync.WaitGroup
	for _, db := range dbs {
		for range 3 {
			wg.Go(func() {
				for range 5 {
					ran, err := db.RunTask(ctx, "overlap", 0, time.Now(), func(context.Context) error {
						n := inFlight.Add(1)
						defer inFlight.Add(-1)
						for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
						}
						runs.Add(1)
						time.Sleep(20 * time.Millisecond)
						return nil
					})
					if err != nil {
						t.Error(err)
					}
					if !ran {
						time.Sleep(time.Millisecond)
					}
				}
			})
		}
	}
	wg.Wait()
	if most.Load() != 1 || runs.Load() == 0 {
		t.Fatalf("%d runs, at most %d at once", runs.Load(), most.Load())
	}
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	for _, step := range []struct {
		db  int
		at  time.Duration
		ran bool
	}{{0, 0, true}, {1, 5 * time.Minute, false}, {0, 8 * time.Minute, false}, {1, 9 * time.Minute, true}, {0, 9*time.Minute + time.Second, false}} {
		ran, err := dbs[step.db].RunTask(ctx, "janitor", 9*time.Minute, t0.Add(step.at), func(context.Context) error { return nil })
		if err != nil || ran != step.ran {
			t.Fatalf("replica %d at +%v: ran %v (%v), want %v", step.db, step.at, ran, err, step.ran)
		}
	}
}

// TestJanitorPassOnOneReplica: two replicas' janitors tick at once over
// expired sessions: one pass deletes them all, the other replica logs
// that it skipped; the pass logs its duration.
func TestJanitorPassOnOneReplica(t *testing.T) {
	ctx := context.Background()
	dbs := openReplicas(t, 2)
	now := time.Now().UTC()
	u := &app.User{ID: app.NewID("usr"), Email: "s@example.com", Name: "S", PasswordHash: "h", CreatedAt: now, UpdatedAt: now}
	team := &app.Team{ID: app.NewID("team"), Name: "P", Slug: app.NewID("s"), IsPersonal: true, Plan: "free", OwnerID: u.ID, CreatedAt: now, UpdatedAt: now}
	u.PersonalTeamID = team.ID
	if err := dbs[0].CreateUser(ctx, u, team); err != nil {
		t.Fatal(err)
	}
	old := now.Add(-30 * 24 * time.Hour)
	for i := range 2500 {
		s := &app.WebSession{ID: fmt.Sprintf("ses_%d", i), UserID: u.ID, TeamID: team.ID, Hash: fmt.Sprintf("h%d", i), CreatedAt: old, LastSeenAt: old, ExpiresAt: old.Add(time.Hour)}
		if err := dbs[i%2].CreateSession(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	var logs [2]bytes.Buffer
	var deleted atomic.Int32
	var wg sync.WaitGroup
	for r, db := range dbs {
		logger := slog.New(slog.NewTextHandler(&logs[r], &slog.HandlerOptions{Level: slog.LevelDebug}))
		sweep := func(ctx context.Context) error {
			n, err := db.DeleteExpiredSessions(ctx, now)
			deleted.Add(int32(n))
			time.Sleep(100 * time.Millisecond) // both janitors tick while the pass runs
			return err
		}
		pass := app.OneReplica(db, "janitor", 10*time.Minute, logger, func() time.Time { return now }, sweep)
		wg.Go(func() {
			if err := pass(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if deleted.Load() != 2500 {
		t.Fatalf("%d sessions deleted, want 2500", deleted.Load())
	}
	all := logs[0].String() + logs[1].String()
	if strings.Count(all, "janitor pass") != 1 || strings.Count(all, "janitor: skipped") != 1 || !strings.Contains(all, "duration_ms=") {
		t.Fatalf("logs:\n%s", all)
	}
}
