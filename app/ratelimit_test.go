package app

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// t0 is the start of a 60-second window.
var t0 = time.Date(2026, 3, 10, 9, 15, 0, 0, time.UTC)

// call is one call of a rate-limit scenario, at t0 plus at.
type call struct{ at time.Duration }

// replay runs calls against a fresh limiter (limit per 60 s) and returns the
// last decision.
func replay(countRefused bool, limit int, calls []call) Decision {
	l := NewMemoryLimiter()
	var d Decision
	for _, c := range calls {
		d = allow(l, countRefused, "team", limit, time.Minute, t0.Add(c.at))
	}
	return d
}

// allow is one call of a RateLimiter over l's windows.
func allow(l *MemoryLimiter, countRefused bool, key string, limit int, win time.Duration, now time.Time) Decision {
	d, err := (&RateLimiter{Windows: l, CountRefused: countRefused}).Allow(context.Background(), key, limit, win, now)
	if err != nil {
		panic(err) // memory windows do not fail
	}
	return d
}

func burst(n int, at time.Duration) []call {
	out := make([]call, n)
	for i := range out {
		out[i] = call{at}
	}
	return out
}

// TestRetryAfterIsExact checks that a client refused with Retry-After d is
// admitted when it comes back d later, and that d is not longer than needed
// (one second earlier it is still refused), whether or not refused calls
// count.
func TestRetryAfterIsExact(t *testing.T) {
	tests := []struct {
		name   string
		limit  int
		calls  []call // the last one is refused
		counts bool
		want   time.Duration
	}{
		// The current window alone is full: the refused call is the 11th of
		// this window and becomes the previous window's weight in the next:
		// 11·(1 − x) ≤ 9 at x = 2/11 of the next window (70.9 s from t0).
		{"current window full, refused calls count", 10, append(burst(10, 0), call{5 * time.Second}), true, 66 * time.Second},
		{"current window full, refused calls free", 10, append(burst(10, 0), call{5 * time.Second}), false, 61 * time.Second},
		// The previous window is full and still weighs 9.5 at 3 s: the
		// refused call counts, so 10·(1 − x) + 1 ≤ 9 at x = 0.2 (12 s).
		{"previous window weighs", 10, append(burst(10, -time.Minute), call{3 * time.Second}), true, 9 * time.Second},
		{"previous window weighs, refused free", 10, append(burst(10, -time.Minute), call{3 * time.Second}), false, 3 * time.Second},
		// Limit 1: the window after next is the first that is empty.
		{"limit one", 1, []call{{0}, {time.Second}}, true, 119 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := replay(tt.counts, tt.limit, tt.calls)
			if d.Allowed || d.Remaining != 0 {
				t.Fatalf("last call admitted: %+v", d)
			}
			if d.RetryAfter != tt.want {
				t.Fatalf("RetryAfter = %v, want %v", d.RetryAfter, tt.want)
			}
			refusedAt := tt.calls[len(tt.calls)-1].at
			if d := replay(tt.counts, tt.limit, append(tt.calls, call{refusedAt + tt.want})); !d.Allowed {
				t.Fatalf("a client waiting Retry-After (%v) is refused again: %+v", tt.want, d)
			}
			if d := replay(tt.counts, tt.limit, append(tt.calls, call{refusedAt + tt.want - time.Second})); d.Allowed {
				t.Fatalf("Retry-After %v is longer than needed: admitted a second earlier", tt.want)
			}
			e := ErrRateLimited(d)
			if e.Info["retryAfterSeconds"] != int(tt.want/time.Second) || e.Info["resetAt"] != t0.Add(time.Minute).Unix() {
				t.Fatalf("relatedInfo = %v", e.Info)
			}
		})
	}
}

// TestRefusedCallsCarryIntoNextWindow: with CountRefused a client that keeps
// calling while limited stays limited in the next window.
func TestRefusedCallsCarryIntoNextWindow(t *testing.T) {
	calls := append(burst(3, 0), burst(3, 10*time.Second)...) // 3 admitted, 3 refused
	calls = append(calls, call{90 * time.Second})             // half of the next window
	if d := replay(true, 3, calls); d.Allowed {
		t.Fatalf("refused calls did not count: 6·0.5 + 1 > 3 must be refused, got %+v", d)
	}
	if d := replay(false, 3, calls); !d.Allowed {
		t.Fatalf("without CountRefused 3·0.5 + 1 ≤ 3 is admitted, got %+v", d)
	}
}

// TestSweepKeepsLongerWindows: one limiter holds keys with different windows
// (login 15 minutes, mail an hour); sweeping after a short-window call must
// not drop a long window that is still running.
func TestSweepKeepsLongerWindows(t *testing.T) {
	l := NewMemoryLimiter()
	if !allow(l, false, "mail", 1, time.Hour, t0).Allowed {
		t.Fatal("first mail refused")
	}
	allow(l, false, "login", 5, time.Minute, t0.Add(31*time.Minute)) // sweeps keys older than two of their windows
	if d := allow(l, false, "mail", 1, time.Hour, t0.Add(32*time.Minute)); d.Allowed {
		t.Fatal("the hourly window was swept by a one-minute call")
	}
	allow(l, false, "login", 5, time.Minute, t0.Add(3*time.Hour))
	if len(l.Snapshot()) != 1 {
		t.Fatalf("expired windows kept: %v", l.Snapshot())
	}
}

// TestSnapshotKeepsWindow: a restored limiter sweeps by each key's own window.
func TestSnapshotKeepsWindow(t *testing.T) {
	l := NewMemoryLimiter()
	allow(l, false, "mail", 1, time.Hour, t0)
	snap := l.Snapshot()
	if snap["mail"].Window != 3600 {
		t.Fatalf("snapshot = %+v", snap)
	}
	r := NewMemoryLimiter()
	r.Restore(snap)
	allow(r, false, "login", 5, time.Minute, t0.Add(31*time.Minute))
	if allow(r, false, "mail", 1, time.Hour, t0.Add(32*time.Minute)).Allowed {
		t.Fatal("restored hourly window was lost")
	}
}

// TestDefaultRateTableIsSet2 checks every cell of SPEC.md's Set 2.
func TestDefaultRateTableIsSet2(t *testing.T) {
	want := map[string]map[string]int{
		ClassGenerate: {KindKey: 100, KindOAuth: 50, KindJWT: 100},
		ClassBatch:    {KindKey: 10, KindOAuth: 5, KindJWT: 10},
		ClassRead:     {KindKey: 300, KindOAuth: 150, KindJWT: 300},
		ClassOther:    {KindKey: 1000, KindOAuth: 500, KindJWT: 500},
	}
	rt := DefaultRateTable()
	for class, kinds := range want {
		for kind, n := range kinds {
			if got := rt.Limit(class, kind); got != n {
				t.Errorf("%s/%s = %d, want %d", class, kind, got, n)
			}
		}
	}
	if rt.WindowSeconds != 60 || rt.Window() != time.Minute || rt.Unauthenticated != 60 {
		t.Fatalf("window %d, unauthenticated %d", rt.WindowSeconds, rt.Unauthenticated)
	}
}

func TestLoadRateTable(t *testing.T) {
	load := func(body string) (*RateTable, error) {
		p := filepath.Join(t.TempDir(), "rates.json")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return LoadRateTable(p)
	}
	rt, err := load(`{"unauthenticated": 5, "classes": {"generate": {"key": 7}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if rt.Unauthenticated != 5 || rt.Limit(ClassGenerate, KindKey) != 7 || rt.Limit(ClassGenerate, KindJWT) != 100 || rt.Limit(ClassRead, KindKey) != 300 {
		t.Fatalf("partial file: %+v", rt)
	}
	for _, tt := range []struct{ body, want string }{
		{`{"unauthenticted": 5}`, `unknown field "unauthenticted"`},
		{`{"classes": {"read": {"key": 300}}, "class": {}}`, `unknown field "class"`},
		{`{"classes": {"read": {"key": 0}}}`, "classes.read.key is 0"},
		{`{"classes": {"batch": {"jwt": -2}}}`, "classes.batch.jwt is -2"},
		{`{"classes": {"batch": {"jwt": null}}}`, "classes.batch.jwt is null"},
		{`{"windowSeconds": 0}`, "windowSeconds is 0"},
		{`{"download": -1}`, "download is -1"},
		{`{"classes": {"nope": {"key": 1}}}`, `unknown class "nope"`},
		{`{"classes": {"read": {"robot": 1}}}`, `unknown kind "robot"`},
		{`{"unauthenticated": 5} {"unauthenticated": 6}`, "more than one JSON value"},
	} {
		if _, err := load(tt.body); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want it to say %q", tt.body, err, tt.want)
		}
	}
}

// fakeRates is a RateStore in memory that counts its saves.
type fakeRates struct {
	m     map[string]WindowState
	saves int
	last  struct {
		put map[string]WindowState
		del []string
	}
}

func (f *fakeRates) SaveRateWindows(put map[string]WindowState, del []string) error {
	if f.m == nil {
		f.m = map[string]WindowState{}
	}
	f.saves++
	f.last.put, f.last.del = put, del
	for _, k := range del {
		delete(f.m, k)
	}
	maps.Copy(f.m, put)
	return nil
}

func (f *fakeRates) LoadRateWindows() (map[string]WindowState, error) { return maps.Clone(f.m), nil }

// TestLimiterSavesOnlyWhatChanged: a save writes the keys called since the
// last one and deletes the keys expired since; with nothing changed it
// does not touch the store.
func TestLimiterSavesOnlyWhatChanged(t *testing.T) {
	l := NewMemoryLimiter()
	st := &fakeRates{}
	save := func(at time.Duration) {
		t.Helper()
		if err := l.Save(st, t0.Add(at)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		save(time.Duration(i) * time.Second)
	}
	if st.saves != 0 {
		t.Fatalf("an empty limiter saved %d times", st.saves)
	}
	allow(l, false, "a", 10, time.Minute, t0)
	allow(l, false, "b", 10, time.Minute, t0)
	save(time.Second)
	if st.saves != 1 || len(st.last.put) != 2 || len(st.last.del) != 0 {
		t.Fatalf("after two calls: %d saves, last %+v", st.saves, st.last)
	}
	for i := range 5 {
		save(time.Duration(2+i) * time.Second)
	}
	if st.saves != 1 {
		t.Fatalf("an idle limiter saved %d more times", st.saves-1)
	}
	allow(l, false, "a", 10, time.Minute, t0.Add(10*time.Second))
	save(11 * time.Second)
	if st.saves != 2 || len(st.last.put) != 1 || st.last.put["a"].Curr != 2 || len(st.last.del) != 0 {
		t.Fatalf("after a call of a: %d saves, last %+v", st.saves, st.last)
	}
	// A key called and expired between two saves never reaches the store.
	allow(l, false, "c", 10, time.Minute, t0.Add(20*time.Second))
	// Two windows after their last one began (t0), a and b have expired, c too.
	save(3 * time.Minute)
	if st.saves != 3 || len(st.last.put) != 0 || !slices.Equal(sorted(st.last.del), []string{"a", "b"}) {
		t.Fatalf("after expiry: %d saves, last %+v", st.saves, st.last)
	}
	if len(st.m) != 0 || len(l.Snapshot()) != 0 {
		t.Fatalf("left: store %v, limiter %v", st.m, l.Snapshot())
	}
	save(4 * time.Minute)
	if st.saves != 3 {
		t.Fatal("an emptied limiter saved again")
	}
}

func sorted(s []string) []string { slices.Sort(s); return s }

// TestLimiterKeysAreBounded: a burst of a million distinct keys (an
// attacker trying emails) leaves the limiter, its pending changes and the
// store at most DefaultMaxKeys keys each, memory flat, and a key still in
// use kept: those whose windows end first make room.
func TestLimiterKeysAreBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("a million calls")
	}
	l := NewMemoryLimiter()
	st := &fakeRates{}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	const burst = 1_000_000
	base := heap()
	var atCap uint64
	for i := range burst {
		now := t0.Add(time.Duration(i) * time.Millisecond) // 1,000 keys a second for 17 minutes
		allow(l, false, fmt.Sprintf("login:email:%d@example.com", i), 10, 15*time.Minute, now)
		if i%1000 == 0 {
			allow(l, false, "login:email:victim@example.com", 10, 15*time.Minute, now)
		}
		if i%100_000 == 99_999 {
			l.mu.Lock()
			n, dirty := len(l.windows), len(l.dirty)
			l.mu.Unlock()
			if n > DefaultMaxKeys || dirty > 2*DefaultMaxKeys {
				t.Fatalf("after %d keys: %d held, %d changes pending", i+1, n, dirty)
			}
			if err := l.Save(st, now); err != nil {
				t.Fatal(err)
			}
			st.last.put, st.last.del = nil, nil
			if len(st.m) > DefaultMaxKeys {
				t.Fatalf("after %d keys: %d stored", i+1, len(st.m))
			}
			if i == 199_999 {
				atCap = heap()
			}
		}
	}
	end := heap()
	t.Logf("heap (limiter and the fake store's copy) grew by %d MB after 200,000 keys, %d MB after %d", (atCap-base)>>20, (end-base)>>20, burst)
	if end > atCap+atCap/2 {
		t.Fatalf("heap grew from %d to %d MB between 200,000 and %d keys", atCap>>20, end>>20, burst)
	}
	snap := l.Snapshot()
	if len(snap) != DefaultMaxKeys {
		t.Fatalf("%d keys held, want %d", len(snap), DefaultMaxKeys)
	}
	if _, ok := snap["login:email:victim@example.com"]; !ok {
		t.Fatal("the key in use was dropped")
	}
	if _, ok := snap[fmt.Sprintf("login:email:%d@example.com", burst-1)]; !ok {
		t.Fatal("the newest key is missing")
	}
	if _, ok := snap["login:email:0@example.com"]; ok {
		t.Fatal("the oldest key was kept")
	}
}

// TestLimiterMakesRoomFromTheEnd: at MaxKeys a new key drops expired keys
// first, then the key whose counters stop counting first (a one-minute
// window before an hour's, whichever was called last).
func TestLimiterMakesRoomFromTheEnd(t *testing.T) {
	l := NewMemoryLimiter()
	l.MaxKeys = 2
	allow(l, false, "mail", 1, time.Hour, t0)
	allow(l, false, "api", 1, time.Minute, t0.Add(10*time.Second))
	allow(l, false, "new", 1, time.Minute, t0.Add(20*time.Second))
	if got := sorted(slices.Collect(maps.Keys(l.Snapshot()))); !slices.Equal(got, []string{"mail", "new"}) {
		t.Fatalf("kept %v, want mail and new", got)
	}
	l.MaxKeys = 3
	allow(l, false, "api", 1, time.Minute, t0.Add(30*time.Second))
	// At t0+3m the one-minute keys have expired; the hour's has not.
	allow(l, false, "later", 1, time.Minute, t0.Add(3*time.Minute))
	if got := sorted(slices.Collect(maps.Keys(l.Snapshot()))); !slices.Equal(got, []string{"later", "mail"}) {
		t.Fatalf("kept %v, want later and mail", got)
	}
}
