package app

import (
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// checkIDShape fails unless id is prefix, "_" and 20 base62 characters
// (NewID's shape, which NewTimeID keeps).
func checkIDShape(t *testing.T, id, prefix string) {
	t.Helper()
	rest, ok := strings.CutPrefix(id, prefix+"_")
	if !ok || len(rest) != 20 {
		t.Fatalf("%q: want %s_ and 20 characters", id, prefix)
	}
	for _, c := range rest {
		if !strings.ContainsRune(base62, c) {
			t.Fatalf("%q: %q is not base62", id, c)
		}
	}
}

func TestNewTimeIDShape(t *testing.T) {
	at := time.Date(2026, 11, 26, 13, 0, 0, 0, time.UTC)
	for _, prefix := range []string{"job", "bat", "evt", "dlv", "act"} {
		checkIDShape(t, NewTimeID(prefix, at), prefix)
		checkIDShape(t, NewID(prefix), prefix)
	}
	// The first 8 characters say the milliseconds, the rest are random.
	a, b := NewTimeID("job", at), NewTimeID("job", at)
	if a[:4+IDTimeChars] != b[:4+IDTimeChars] || a == b {
		t.Fatalf("same millisecond: %s and %s", a, b)
	}
	if got := a[4 : 4+IDTimeChars]; got != IDTime(at) {
		t.Fatalf("time part %q, want %q", got, IDTime(at))
	}
}

func TestIDTimeDecodes(t *testing.T) {
	for _, at := range []time.Time{time.UnixMilli(0), time.UnixMilli(1), time.UnixMilli(61), time.UnixMilli(62),
		time.Date(2026, 11, 26, 13, 0, 0, 123e6, time.UTC), time.Date(8800, 12, 31, 23, 59, 59, 999e6, time.UTC)} {
		s := IDTime(at)
		if len(s) != IDTimeChars {
			t.Fatalf("%v: %q", at, s)
		}
		var ms int64
		for _, c := range s {
			ms = ms*62 + int64(strings.IndexRune(base62, c))
		}
		if ms != at.UnixMilli() {
			t.Errorf("%v: %q decodes to %d ms, want %d", at, s, ms, at.UnixMilli())
		}
	}
	// Out of range: clamped, not wrapped.
	if got := IDTime(time.UnixMilli(-5)); got != "00000000" {
		t.Errorf("before 1970: %q", got)
	}
	if got := IDTime(time.Date(8900, 1, 1, 0, 0, 0, 0, time.UTC)); got != "zzzzzzzz" {
		t.Errorf("after the range: %q", got)
	}
}

// Later milliseconds sort after earlier ones as plain strings (SQLite's
// BINARY collation, Go's <), whatever the random part.
func TestNewTimeIDOrderAcrossMilliseconds(t *testing.T) {
	base := time.Date(2026, 11, 26, 13, 0, 0, 0, time.UTC)
	steps := []time.Duration{time.Millisecond, 61 * time.Millisecond, 62 * time.Millisecond, time.Second, time.Hour, 24 * time.Hour * 365}
	at := base
	prev := NewTimeID("job", at)
	for i := range 2000 {
		at = at.Add(steps[i%len(steps)])
		id := NewTimeID("job", at)
		if id <= prev {
			t.Fatalf("%s (at %v) sorts before or as %s", id, at, prev)
		}
		prev = id
	}
	// Every millisecond of a day's boundary and a carry across all digits.
	for _, ms := range []int64{62*62 - 1, 62 * 62 * 62 * 62 * 62 * 62 * 62, 1<<41 - 1} {
		if a, b := NewTimeID("evt", time.UnixMilli(ms)), NewTimeID("evt", time.UnixMilli(ms+1)); a >= b {
			t.Fatalf("carry at %d: %s >= %s", ms, a, b)
		}
	}
}

func TestNewTimeIDUniqueUnderConcurrency(t *testing.T) {
	at := time.Date(2026, 11, 26, 13, 0, 0, 0, time.UTC) // one millisecond for all: only the random part differs
	const workers, each = 8, 5000
	ids := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				ids[w] = append(ids[w], NewTimeID("job", at))
			}
		}()
	}
	wg.Wait()
	var all []string
	for _, l := range ids {
		all = append(all, l...)
	}
	sort.Strings(all)
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			t.Fatalf("duplicate %s", all[i])
		}
	}
	if len(all) != workers*each {
		t.Fatalf("%d IDs", len(all))
	}
	// The random part uses the whole alphabet (no byte-range bias cut it short).
	seen := map[rune]bool{}
	for _, id := range all {
		for _, c := range id[4+IDTimeChars:] {
			seen[c] = true
		}
	}
	if len(seen) != 62 {
		t.Fatalf("%d distinct characters in the random parts, want 62", len(seen))
	}
}
