package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"folio/app"
)

func mustDB(tb testing.TB) *DB {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "folio.db")
	if err := copyMigrated(path); err != nil {
		tb.Fatal(err)
	}
	db, err := Open(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// migrated is a database the migrations built once per test binary:
// mustDB starts each test from a copy of it, and Open finds nothing to
// apply. Applying the 20-odd migrations took most of a small test's time
// (~0.2 s, and ~2 s of CPU under -race, where SQLite's transpiled C is
// instrumented), for each of the hundred databases the tests open. The
// migrations themselves are tested from an empty file by
// TestMigrationsAreIdempotent and migrate_test.go, which open their own.
var migrated struct {
	once sync.Once
	dir  string
	err  error
}

func copyMigrated(to string) error {
	migrated.once.Do(func() {
		if migrated.dir, migrated.err = os.MkdirTemp("", "folio-store-test-"); migrated.err != nil {
			return
		}
		db, err := Open(context.Background(), filepath.Join(migrated.dir, "folio.db"))
		if err != nil {
			migrated.err = err
			return
		}
		migrated.err = db.Close() // the last connection's close checkpoints the WAL into the file
	})
	if migrated.err != nil {
		return migrated.err
	}
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(filepath.Join(migrated.dir, "folio.db"+suffix))
		if errors.Is(err, fs.ErrNotExist) && suffix != "" {
			continue
		} else if err != nil {
			return err
		}
		if err := os.WriteFile(to+suffix, b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// removeMigrated removes the database copyMigrated built (TestMain).
func removeMigrated() {
	if migrated.dir != "" {
		os.RemoveAll(migrated.dir)
	}
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

// Key usage counts are written with the first write transaction touchFlush
// after the last one that wrote them, by a read of keys, or by Close, and
// never lost between them.
func TestKeyTouchesAreWrittenLater(t *testing.T) {
	defer func(d time.Duration) { touchFlush = d }(touchFlush)
	touchFlush = time.Hour // no background flush between the steps
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "folio.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	u := mustUser(t, db, "keys@example.com")
	day1 := time.Date(2026, 11, 24, 23, 59, 0, 0, time.UTC)
	k := &app.APIKey{ID: app.NewID("key"), TeamID: u.PersonalTeamID, Name: "k", KeyType: "live", KeyPrefix: "p", Hash: "h1",
		Permissions: []string{}, IsActive: true, CreatedBy: u.ID, CreatedAt: day1, UpdatedAt: day1}
	if err := db.CreateAPIKey(ctx, k); err != nil {
		t.Fatal(err)
	}
	count := func() (total, today int64, day string) {
		var d string
		if err := db.read.QueryRowContext(ctx, `SELECT total_requests, requests_today, requests_day FROM api_keys WHERE id = ?`, k.ID).Scan(&total, &today, &d); err != nil {
			t.Fatal(err)
		}
		return total, today, d
	}
	db.TouchAPIKey(ctx, k.ID, day1)
	db.TouchAPIKey(ctx, k.ID, day1)
	day2 := day1.Add(2 * time.Minute)
	db.TouchAPIKey(ctx, k.ID, day2)
	if total, _, _ := count(); total != 0 {
		t.Fatalf("written at once: %d", total)
	}
	// due makes the next write find touchFlush passed since counts were
	// last written (the writer is idle: its channels order this write).
	due := func() { db.touchedAt = time.Time{} }
	// A write within touchFlush of the last that wrote counts leaves them;
	// the first write after touchFlush takes them along.
	mustUser(t, db, "early@example.com")
	mustUser(t, db, "early2@example.com")
	if total, _, _ := count(); total != 0 {
		t.Fatalf("written by a write within touchFlush: %d", total)
	}
	due()
	mustUser(t, db, "other@example.com")
	if total, today, d := count(); total != 3 || today != 1 || d != "2026-11-25" {
		t.Fatalf("after a write: total %d, today %d on %s; want 3, 1 on 2026-11-25", total, today, d)
	}
	// A read of the key writes pending counts first.
	db.TouchAPIKey(ctx, k.ID, day2)
	got, err := db.FindAPIKeyByID(ctx, k.TeamID, k.ID)
	if err != nil || got.TotalRequests != 4 || got.RequestsToday != 2 || !got.LastUsedAt.Equal(day2) {
		t.Fatalf("read: %+v %v", got, err)
	}
	// Counts that cannot be written are undone alone, inside their
	// savepoint: the transaction they rode on commits, and they are
	// written once, later.
	if _, err := db.write.ExecContext(ctx, `CREATE TRIGGER refuse_day3 BEFORE UPDATE ON api_keys WHEN NEW.requests_day = '2026-11-26'
		BEGIN SELECT RAISE(ABORT, 'refused'); END`); err != nil {
		t.Fatal(err)
	}
	db.TouchAPIKey(ctx, k.ID, day2)
	db.TouchAPIKey(ctx, k.ID, day2.Add(24*time.Hour))
	due()
	third := mustUser(t, db, "third@example.com")
	if _, err := db.FindUserByID(ctx, third.ID); err != nil {
		t.Fatalf("the transaction carrying failed counts did not commit: %v", err)
	}
	if total, today, d := count(); total != 4 || today != 2 || d != "2026-11-25" {
		t.Fatalf("after a refused write: total %d, today %d on %s; want 4, 2 on 2026-11-25", total, today, d)
	}
	if _, err := db.write.ExecContext(ctx, `DROP TRIGGER refuse_day3`); err != nil {
		t.Fatal(err)
	}
	if total, today, d := count(); total != 4 {
		t.Fatalf("written before any transaction: %d %d %s", total, today, d)
	}
	due()
	mustUser(t, db, "fourth@example.com")
	if total, today, d := count(); total != 6 || today != 1 || d != "2026-11-26" {
		t.Fatalf("after the refusal ended: total %d, today %d on %s; want 6, 1 on 2026-11-26", total, today, d)
	}
	// A count from an earlier day written after a later one adds to the
	// total and leaves the day alone.
	db.TouchAPIKey(ctx, k.ID, day2)
	due()
	mustUser(t, db, "fifth@example.com")
	if total, today, d := count(); total != 7 || today != 1 || d != "2026-11-26" {
		t.Fatalf("a late count from the day before: total %d, today %d on %s; want 7, 1 on 2026-11-26", total, today, d)
	}
	// Close writes what is left.
	db.TouchAPIKey(ctx, k.ID, day2)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	if got, err := db2.FindAPIKeyByID(ctx, k.TeamID, k.ID); err != nil || got.TotalRequests != 8 {
		t.Fatalf("after Close: %+v %v", got, err)
	}
}

// Write transactions that wait together run as one SQLite transaction, a
// savepoint each: a call that fails or panics undoes only its own writes,
// the others commit, and each caller gets its own outcome.
func TestGroupedWritesKeepEachCallAtomic(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	if _, err := db.write.ExecContext(ctx, `CREATE TABLE grouped (k TEXT PRIMARY KEY, v INTEGER)`); err != nil {
		t.Fatal(err)
	}
	// Hold the writer so that the calls below queue up into one group.
	hold, release := make(chan struct{}), make(chan struct{})
	go db.tx(ctx, func(*Tx) error { close(hold); <-release; return nil })
	<-hold
	insert := func(k string) func(*Tx) error {
		return func(tx *Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO grouped (k, v) VALUES (?, 1)`, k)
			return err
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	errBoom := errors.New("boom")
	calls := []struct {
		name string
		ctx  context.Context
		fn   func(*Tx) error
		want string // "" ok, "err", "panic"
	}{
		{"a", ctx, insert("a"), ""},
		{"b", ctx, func(tx *Tx) error { insert("b")(tx); return errBoom }, "err"},
		{"c", ctx, func(tx *Tx) error { insert("c")(tx); panic("c panics") }, "panic"},
		{"d", cancelled, insert("d"), "err"},
		{"e", ctx, insert("e"), ""},
		{"dup", ctx, insert("a"), "err"}, // violates the key a wrote in this same transaction
	}
	var wg sync.WaitGroup
	got := make([]string, len(calls))
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					got[i] = "panic"
				}
			}()
			if err := db.tx(c.ctx, c.fn); err != nil {
				got[i] = "err"
			}
		}()
		time.Sleep(5 * time.Millisecond) // queue in this order
	}
	close(release)
	wg.Wait()
	for i, c := range calls {
		if got[i] != c.want {
			t.Errorf("call %s: got %q, want %q", c.name, got[i], c.want)
		}
	}
	rows, err := db.read.QueryContext(ctx, `SELECT k FROM grouped ORDER BY k`)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := scanStrings(rows)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(keys, ",") != "a,e" {
		t.Fatalf("rows = %v, want a and e only", keys)
	}
}

// holdWriter makes the writer run a transaction that lasts until the
// returned release is called, so that the calls after it wait.
func holdWriter(t *testing.T, db *DB) (release func()) {
	t.Helper()
	held, done := make(chan struct{}), make(chan struct{})
	finished := make(chan error, 1)
	go func() { finished <- db.tx(context.Background(), func(*Tx) error { close(held); <-done; return nil }) }()
	<-held
	var once sync.Once
	release = func() {
		once.Do(func() {
			close(done)
			if err := <-finished; err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(release)
	return release
}

// A call waiting for the writer gives up when its context ends, whether it
// waits in the queue or to get into it (the queue is full), and its write
// never happens; calls with time to wait are written once the writer is
// free.
func TestWaitingWritesHonourTheirContext(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	if _, err := db.write.ExecContext(ctx, `CREATE TABLE waits (k TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	insert := func(ctx context.Context, k string) error {
		return db.tx(ctx, func(tx *Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO waits (k) VALUES (?)`, k)
			return err
		})
	}
	// giveUp calls insert with a deadline and returns its error, failing
	// the test if it is still waiting long after the deadline.
	giveUp := func(k string) error {
		dctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		errc := make(chan error, 1)
		go func() { errc <- insert(dctx, k) }()
		select {
		case err := <-errc:
			return err
		case <-time.After(time.Minute): // a guard against hanging, not a measure
			t.Fatalf("%s: still waiting a minute after its deadline", k)
			return nil
		}
	}
	release := holdWriter(t, db)

	// In the queue: the writer is busy, the queue has room.
	if err := giveUp("queued"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("queued call: %v, want context.DeadlineExceeded", err)
	}
	// Before the queue: it is full of calls that wait without a deadline.
	var wg sync.WaitGroup
	for i := range maxGroup {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := insert(ctx, fmt.Sprint("patient-", i)); err != nil {
				t.Error(err)
			}
		}()
	}
	for len(db.writes) < maxGroup {
		time.Sleep(time.Millisecond)
	}
	if err := giveUp("blocked"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("call before a full queue: %v, want context.DeadlineExceeded", err)
	}
	release()
	wg.Wait()
	var patient, gone int
	if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FILTER (WHERE k LIKE 'patient-%'), COUNT(*) FILTER (WHERE k IN ('queued', 'blocked')) FROM waits`).Scan(&patient, &gone); err != nil {
		t.Fatal(err)
	}
	if patient != maxGroup || gone != 0 {
		t.Fatalf("%d patient writes (want %d), %d writes of callers that gave up (want 0)", patient, maxGroup, gone)
	}
}

// A call the writer has started runs to the end when its context ends
// meanwhile, and its caller gets its outcome.
func TestStartedWriteIgnoresItsContext(t *testing.T) {
	db := mustDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := db.write.ExecContext(ctx, `CREATE TABLE started (k TEXT)`); err != nil {
		t.Fatal(err)
	}
	err := db.tx(ctx, func(tx *Tx) error {
		cancel()
		_, err := tx.ExecContext(ctx, `INSERT INTO started (k) VALUES ('x')`)
		return err
	})
	if err != nil {
		t.Fatalf("started call: %v, want its own outcome (nil)", err)
	}
	var n int
	if err := db.read.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM started`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d rows (%v), want 1", n, err)
	}
}

// TestTrimIdleReaders closes the idle reader connections; reads go on,
// on connections opened again.
func TestTrimIdleReaders(t *testing.T) {
	db := mustDB(t)
	ctx := context.Background()
	for range 3 {
		if err := db.Ping(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := db.read.Stats().Idle; n == 0 {
		t.Fatal("no idle reader before the trim")
	}
	if err := db.TrimIdle(ctx); err != nil {
		t.Fatal(err)
	}
	if n := db.read.Stats().Idle; n != 0 {
		t.Fatalf("%d idle readers after the trim", n)
	}
	if _, err := db.Version(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestStepsRunAlone: a maintenance step (txAlone) queued among requests'
// calls runs in a transaction of its own; the calls queued before it are
// grouped as ever, and those after it form the next group.
func TestStepsRunAlone(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	var mu sync.Mutex
	var groups [][]bool // each group's calls: alone or not
	testHookGroup = func(g []*writeReq) {
		mu.Lock()
		defer mu.Unlock()
		var a []bool
		for _, r := range g {
			a = append(a, r.alone)
		}
		groups = append(groups, a)
	}
	defer func() { testHookGroup = nil }()
	release := holdWriter(t, db)
	var wg sync.WaitGroup
	for i := range 7 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn := func(tx *Tx) error { _, err := tx.ExecContext(ctx, `SELECT 1`); return err }
			var err error
			if i == 3 {
				_, err = db.txAlone(ctx, fn)
			} else {
				err = db.tx(ctx, fn)
			}
			if err != nil {
				t.Error(err)
			}
		}()
		time.Sleep(5 * time.Millisecond) // queue in this order
	}
	release()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if got := fmt.Sprint(groups[1:]); got != "[[false false false] [true] [false false false]]" {
		t.Fatalf("groups after the held one: %s", got)
	}
}
