package app

import (
	"math"
	"strconv"
	"sync"
	"time"
)

// Decision is the outcome of one rate-limit check.
type Decision struct {
	Allowed   bool
	Limit     int
	Remaining int
	ResetAt   time.Time
	// RetryAfter is how long to wait before the next call can pass.
	RetryAfter time.Duration
	Window     time.Duration
}

// Limiter counts calls per key in a sliding window.
type Limiter interface {
	Allow(key string, limit int, window time.Duration, now time.Time) Decision
}

// ErrRateLimited builds the spec's 429 error from a refused decision.
func ErrRateLimited(d Decision) *Error {
	secs := int(math.Ceil(d.RetryAfter.Seconds()))
	if secs < 1 {
		secs = 1
	}
	return (&Error{Code: ECodeRateLimited, Message: "rate limit exceeded, retry in " + strconv.Itoa(secs) + " seconds"}).
		WithInfo("limit", d.Limit, "windowSeconds", int(d.Window.Seconds()), "resetAt", d.ResetAt.Unix(), "retryAfterSeconds", secs)
}

// MemoryLimiter is a sliding-window-counter limiter held in memory: the count
// is the current fixed window plus the previous one weighted by how much of
// it still overlaps the sliding window.
type MemoryLimiter struct {
	// CountRefused counts refused calls too (the API's rule: all requests
	// count); otherwise only admitted calls use up the limit.
	CountRefused bool

	mu      sync.Mutex
	windows map[string]*window
	sweep   time.Time
}

type window struct {
	start      time.Time
	prev, curr int
}

// WindowState is one key's counters, for persisting the limiter.
type WindowState struct {
	Start time.Time `json:"s"`
	Prev  int       `json:"p"`
	Curr  int       `json:"c"`
}

// Snapshot copies every key's counters.
func (l *MemoryLimiter) Snapshot() map[string]WindowState {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]WindowState, len(l.windows))
	for k, w := range l.windows {
		out[k] = WindowState{Start: w.start, Prev: w.prev, Curr: w.curr}
	}
	return out
}

// Restore loads counters saved by Snapshot (at start-up).
func (l *MemoryLimiter) Restore(m map[string]WindowState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, s := range m {
		l.windows[k] = &window{start: s.Start, prev: s.Prev, curr: s.Curr}
	}
}

// NewMemoryLimiter returns an empty limiter.
func NewMemoryLimiter() *MemoryLimiter { return &MemoryLimiter{windows: map[string]*window{}} }

// Allow counts one call for key and reports whether it is within limit.
func (l *MemoryLimiter) Allow(key string, limit int, win time.Duration, now time.Time) Decision {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.sweep) > 10*win {
		for k, w := range l.windows {
			if now.Sub(w.start) > 2*win {
				delete(l.windows, k)
			}
		}
		l.sweep = now
	}
	start := now.Truncate(win)
	w := l.windows[key]
	if w == nil {
		w = &window{start: start}
		l.windows[key] = w
	}
	switch d := start.Sub(w.start); {
	case d == win:
		w.prev, w.curr, w.start = w.curr, 0, start
	case d > win:
		w.prev, w.curr, w.start = 0, 0, start
	}
	overlap := 1 - float64(now.Sub(start))/float64(win)
	used := float64(w.prev)*overlap + float64(w.curr)
	dec := Decision{Limit: limit, Window: win, ResetAt: start.Add(win)}
	if used+1 > float64(limit) {
		if l.CountRefused {
			w.curr++
		}
		// Wait until enough of the previous window has slid out, or the
		// next window starts.
		dec.RetryAfter = start.Add(win).Sub(now)
		if w.prev > 0 && float64(w.curr)+1 <= float64(limit) {
			need := (used + 1 - float64(limit)) / float64(w.prev)
			dec.RetryAfter = time.Duration(need * float64(win))
		}
		return dec
	}
	w.curr++
	dec.Allowed = true
	dec.Remaining = int(math.Max(0, math.Floor(float64(limit)-used-1)))
	return dec
}
