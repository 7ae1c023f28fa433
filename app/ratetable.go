package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"
)

// Rate-limit endpoint classes (SPEC.md Limits, Set 2, in force per DESIGN.md
// section 5).
const (
	ClassGenerate = "generate" // POST /api/v1/documents/generate
	ClassBatch    = "batch"    // POST /api/v1/documents/generate/batch
	ClassRead     = "read"     // GET jobs, GET jobs/:id, GET templates/*
	ClassOther    = "other"    // everything else
	ClassDownload = "download" // signed download links, per client IP
)

// Authentication kinds for rate limiting; OAuth has a column for when OAuth
// clients exist.
const (
	KindKey   = "key"
	KindOAuth = "oauth"
	KindJWT   = "jwt"
)

// RateTable is the rate-limit configuration. It is the JSON format of
// --rate-limits FILE.
type RateTable struct {
	WindowSeconds int `json:"windowSeconds"`
	// Unauthenticated is the limit per client IP for calls without valid
	// authentication.
	Unauthenticated int `json:"unauthenticated"`
	// Download is the limit per client IP for signed download links.
	Download int `json:"download"`
	// Classes maps a class to its limit per team for each kind.
	Classes map[string]map[string]int `json:"classes"`
}

// DefaultRateTable is SPEC.md's Set 2.
func DefaultRateTable() *RateTable {
	return &RateTable{
		WindowSeconds:   60,
		Unauthenticated: 60,
		Download:        300,
		Classes: map[string]map[string]int{
			ClassGenerate: {KindKey: 100, KindOAuth: 50, KindJWT: 100},
			ClassBatch:    {KindKey: 10, KindOAuth: 5, KindJWT: 10},
			ClassRead:     {KindKey: 300, KindOAuth: 150, KindJWT: 300},
			ClassOther:    {KindKey: 1000, KindOAuth: 500, KindJWT: 500},
		},
	}
}

// LoadRateTable reads a --rate-limits file; missing entries keep Set 2's
// values. Unknown keys and values below 1 are refused, so a misspelt entry
// cannot leave a limit silently in force.
func LoadRateTable(path string) (*RateTable, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--rate-limits: %w", err)
	}
	var in struct {
		WindowSeconds   *int                       `json:"windowSeconds"`
		Unauthenticated *int                       `json:"unauthenticated"`
		Download        *int                       `json:"download"`
		Classes         map[string]map[string]*int `json:"classes"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("--rate-limits %s: %w (keys: windowSeconds, unauthenticated, download, classes)", path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("--rate-limits %s: more than one JSON value", path)
	}
	t := DefaultRateTable()
	set := func(name string, dst *int, v *int) error {
		if v == nil {
			return nil
		}
		if *v < 1 {
			return fmt.Errorf("--rate-limits %s: %s is %d; limits and windowSeconds must be at least 1", path, name, *v)
		}
		*dst = *v
		return nil
	}
	if err := errors.Join(set("windowSeconds", &t.WindowSeconds, in.WindowSeconds),
		set("unauthenticated", &t.Unauthenticated, in.Unauthenticated), set("download", &t.Download, in.Download)); err != nil {
		return nil, err
	}
	for class, kinds := range in.Classes {
		if _, ok := t.Classes[class]; !ok {
			return nil, fmt.Errorf("--rate-limits %s: unknown class %q (generate, batch, read, other)", path, class)
		}
		for kind, n := range kinds {
			if kind != KindKey && kind != KindOAuth && kind != KindJWT {
				return nil, fmt.Errorf("--rate-limits %s: unknown kind %q in class %s (key, oauth, jwt)", path, kind, class)
			}
			if n == nil {
				return nil, fmt.Errorf("--rate-limits %s: classes.%s.%s is null; give a number of at least 1", path, class, kind)
			}
			if err := set("classes."+class+"."+kind, new(int), n); err != nil {
				return nil, err
			}
			t.Classes[class][kind] = *n
		}
	}
	return t, nil
}

// Window is the table's window.
func (t *RateTable) Window() time.Duration { return time.Duration(t.WindowSeconds) * time.Second }

// Limit returns the per-team limit for a class and kind.
func (t *RateTable) Limit(class, kind string) int {
	if n := t.Classes[class][kind]; n > 0 {
		return n
	}
	return t.Classes[ClassOther][kind]
}

// RateStore persists limiter counters (bbolt) so limits survive restarts.
type RateStore interface {
	// SaveRateWindows writes put's keys and deletes del's in one
	// transaction.
	SaveRateWindows(put map[string]WindowState, del []string) error
	LoadRateWindows() (map[string]WindowState, error)
}

// PersistLimiter restores l from the store, then saves what changed (Save)
// every interval and once more when ctx ends, so counts survive restarts
// (a crash loses at most one interval). An idle limiter writes nothing.
func PersistLimiter(ctx context.Context, l *MemoryLimiter, st RateStore, every time.Duration, now func() time.Time, logger *slog.Logger) (wait func(), err error) {
	m, err := st.LoadRateWindows()
	if err != nil {
		return nil, err
	}
	l.Restore(m)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				if err := l.Save(st, now()); err != nil {
					logger.Error("save rate limits", "err", err)
				}
				return
			case <-t.C:
				if err := l.Save(st, now()); err != nil {
					logger.Error("save rate limits", "err", err)
				}
			}
		}
	}()
	return func() { <-done }, nil
}

// RateSweeper is windows kept in a database, which stay until swept
// (MemoryLimiter drops its expired keys itself).
type RateSweeper interface {
	// SweepRateWindows deletes the windows that stopped counting before
	// now and returns how many.
	SweepRateWindows(ctx context.Context, now time.Time) (int, error)
}

// SweepRates is the janitor task that sweeps rs, logging what it deleted.
func SweepRates(rs RateSweeper, now func() time.Time, logger *slog.Logger) Sweeper {
	return func(ctx context.Context) error {
		start := time.Now()
		n, err := rs.SweepRateWindows(ctx, now())
		var st SweepStats
		st.Count("rate_windows", n, time.Since(start))
		st.Duration = time.Since(start)
		st.Log(logger, "janitor: rate windows", err)
		return err
	}
}
