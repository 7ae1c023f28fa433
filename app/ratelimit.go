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
	size       time.Duration // the window of the key's last call
	prev, curr int
}

// WindowState is one key's counters, for persisting the limiter.
type WindowState struct {
	Start time.Time `json:"s"`
	// Window is the key's window in seconds (0 in files written before it
	// was kept: the key is then swept by the next call's window).
	Window int `json:"w,omitempty"`
	Prev   int `json:"p"`
	Curr   int `json:"c"`
}

// Snapshot copies every key's counters.
func (l *MemoryLimiter) Snapshot() map[string]WindowState {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]WindowState, len(l.windows))
	for k, w := range l.windows {
		out[k] = WindowState{Start: w.start, Window: int(w.size / time.Second), Prev: w.prev, Curr: w.curr}
	}
	return out
}

// Restore loads counters saved by Snapshot (at start-up).
func (l *MemoryLimiter) Restore(m map[string]WindowState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, s := range m {
		l.windows[k] = &window{start: s.Start, size: time.Duration(s.Window) * time.Second, prev: s.Prev, curr: s.Curr}
	}
}

// NewMemoryLimiter returns an empty limiter.
func NewMemoryLimiter() *MemoryLimiter { return &MemoryLimiter{windows: map[string]*window{}} }

// Allow counts one call for key and reports whether it is within limit.
func (l *MemoryLimiter) Allow(key string, limit int, win time.Duration, now time.Time) Decision {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.sweep) > 10*win {
		// Keys of one limiter may use different windows (login: 15 minutes,
		// mail: an hour): each is dropped once two of its own windows passed.
		for k, w := range l.windows {
			size := w.size
			if size == 0 {
				size = win
			}
			if now.Sub(w.start) > 2*size {
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
	w.size = win
	switch d := start.Sub(w.start); {
	case d == win:
		w.prev, w.curr, w.start = w.curr, 0, start
	case d > win:
		w.prev, w.curr, w.start = 0, 0, start
	}
	dec := Decision{Limit: limit, Window: win, ResetAt: start.Add(win)}
	used := w.used(now)
	if used+1 > float64(limit) {
		if l.CountRefused {
			w.curr++
		}
		dec.RetryAfter = w.retryAfter(limit, now)
		return dec
	}
	w.curr++
	dec.Allowed = true
	dec.Remaining = int(math.Max(0, math.Floor(float64(limit)-used-1)))
	return dec
}

// used is the weighted count at t, a time in the window that starts at
// w.start or in the next one, when no other call comes in between.
func (w *window) used(t time.Time) float64 {
	prev, curr, start := w.prev, w.curr, w.start
	if t.Sub(start) >= w.size {
		prev, curr, start = curr, 0, start.Add(w.size)
	}
	if t.Sub(start) >= w.size {
		return 0
	}
	overlap := 1 - float64(t.Sub(start))/float64(w.size)
	return float64(prev)*overlap + float64(curr)
}

// retryAfter is how long from now until a call would be admitted, if no
// other call comes in between: the weighted count only falls as time passes,
// so the earliest such moment is solved for in this window, then in the
// next (where this window's count, refused calls included, becomes the
// previous one's). It is rounded up to whole seconds, the unit of
// Retry-After, so a client that waits exactly that long is admitted.
func (w *window) retryAfter(limit int, now time.Time) time.Duration {
	room := float64(limit - 1)
	at := w.start.Add(2 * w.size) // both windows slid out
	switch {
	case float64(w.curr) <= room && w.prev > 0:
		// prev·(1 − x) + curr ≤ limit − 1, x the elapsed part of this window.
		x := 1 - (room-float64(w.curr))/float64(w.prev)
		at = w.start.Add(time.Duration(x * float64(w.size)))
	case w.curr > 0:
		// curr·(1 − x) ≤ limit − 1 in the next window.
		x := 1 - room/float64(w.curr)
		at = w.start.Add(w.size + time.Duration(x*float64(w.size)))
	}
	d := at.Sub(now)
	d = (d + time.Second - 1).Truncate(time.Second)
	// Rounding in the arithmetic above must not leave the client one call
	// short; step on until the count really admits one.
	for d < 2*w.size && w.used(now.Add(d))+1 > float64(limit) {
		d += time.Second
	}
	return max(d, time.Second)
}
