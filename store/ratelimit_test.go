package store

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"folio/app"
)

// TestRateWindowsWriteOnlyChanges: limiters saved to bbolt write nothing
// while idle (not even an empty transaction), write a changed key that a
// restart then finds, and delete a key once it has expired.
func TestRateWindowsWriteOnlyChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "queue.db")
	b, err := OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 10, 9, 15, 0, 0, time.UTC)
	now := t0
	clock := func() time.Time { return now }
	writes := func() int64 { s := b.db.Stats(); return s.TxStats.GetWrite() }
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))

	ctx, stop := context.WithCancel(context.Background())
	l := app.NewMemoryLimiter()
	wait, err := app.PersistLimiter(ctx, l, b.AuthLimits(), time.Hour, clock, logger)
	if err != nil {
		t.Fatal(err)
	}
	before := writes()
	for range 5 { // five save intervals with nothing to save
		now = now.Add(2 * time.Second)
		if err := l.Save(b.AuthLimits(), now); err != nil {
			t.Fatal(err)
		}
	}
	if got := writes() - before; got != 0 {
		t.Fatalf("an idle limiter wrote %d pages", got)
	}
	allow(l, "login:email:a@example.com", 1, 15*time.Minute, now)
	stop()
	wait() // the last save, as at Close
	if writes() == before {
		t.Fatal("the changed key was not written")
	}
	b.Close()

	b, err = OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, stop = context.WithCancel(context.Background())
	defer stop()
	l = app.NewMemoryLimiter()
	if _, err := app.PersistLimiter(ctx, l, b.AuthLimits(), time.Hour, clock, logger); err != nil {
		t.Fatal(err)
	}
	if d := allow(l, "login:email:a@example.com", 1, 15*time.Minute, now); d.Allowed {
		t.Fatal("the restarted limiter forgot the key's call")
	}
	if err := l.Save(b.AuthLimits(), now); err != nil {
		t.Fatal(err)
	}
	before = writes()
	now = now.Add(31 * time.Minute) // two of its windows after the last began
	if err := l.Save(b.AuthLimits(), now); err != nil {
		t.Fatal(err)
	}
	stored, err := b.AuthLimits().LoadRateWindows()
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 0 || writes() == before {
		t.Fatalf("after expiry bbolt holds %v", stored)
	}
	// The API's limiter has a bucket of its own, untouched by all this.
	if api, err := b.LoadRateWindows(); err != nil || len(api) != 0 {
		t.Fatalf("API windows %v %v", api, err)
	}
}

// allow is one call of the login throttle (refused calls not counted) over
// l's windows.
func allow(l *app.MemoryLimiter, key string, limit int, win time.Duration, now time.Time) app.Decision {
	d, err := (&app.RateLimiter{Windows: l}).Allow(context.Background(), key, limit, win, now)
	if err != nil {
		panic(err)
	}
	return d
}
