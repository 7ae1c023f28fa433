package app

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"slices"
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
	// Allow counts one call for key and decides whether it is within
	// limit calls per window. The error is the storage's (a database
	// that does not answer); the call is then neither counted nor
	// decided.
	Allow(ctx context.Context, key string, limit int, window time.Duration, now time.Time) (Decision, error)
}

// RateWindows is the storage behind a limiter: each key's count of calls
// in its current fixed window and in the previous one. The embedded
// install keeps them in memory (MemoryLimiter, saved to bbolt now and
// then); several replicas share them in PostgreSQL, so that a team cannot
// get N times its limit from N replicas.
type RateWindows interface {
	// HitRate counts one call c: it decides, on the counts as they are
	// when the call is counted, whether the call is admitted (the
	// weighted count plus this call within c.Limit) and adds it to the
	// current window when admitted or when c.CountRefused. Concurrent
	// calls for one key, from any replica, are counted one after the
	// other.
	HitRate(ctx context.Context, c RateCall) (RateHit, error)
}

// RateCall is one call to count.
type RateCall struct {
	// Limiter names the limiter ("api", "auth") when one store holds the
	// windows of several.
	Limiter string
	Key     string
	Limit   int
	Window  time.Duration
	Now     time.Time
	// CountRefused counts refused calls too (the API's rule: all requests
	// count); otherwise only admitted calls use up the limit.
	CountRefused bool
}

// Start is the beginning of the fixed window the call falls in.
func (c RateCall) Start() time.Time { return c.Now.Truncate(c.Window) }

// Overlap is the weight of the previous window's count: the part of the
// sliding window (the Window before Now) that still overlaps it.
func (c RateCall) Overlap() float64 {
	return 1 - float64(c.Now.Sub(c.Start()))/float64(c.Window)
}

// RateHit is a key's counts after a call was counted.
type RateHit struct {
	Start   time.Time // the current window's start
	Prev    int       // calls counted in the previous window
	Curr    int       // calls counted in the current one, this one included when counted
	Allowed bool
}

// RateLimiter is a Limiter over a store of windows.
type RateLimiter struct {
	Windows RateWindows
	// Name is RateCall.Limiter.
	Name string
	// CountRefused is RateCall.CountRefused.
	CountRefused bool
}

// maxRateKey bounds the length of the keys the limiter stores: keys hold
// what clients send (an email tried at login), and a longer one is
// shortened to its first bytes and a hash of the whole.
const maxRateKey = 160

// Allow counts one call for key.
func (l *RateLimiter) Allow(ctx context.Context, key string, limit int, window time.Duration, now time.Time) (Decision, error) {
	if len(key) > maxRateKey {
		sum := sha256.Sum256([]byte(key))
		key = key[:maxRateKey-65] + "#" + hex.EncodeToString(sum[:])
	}
	c := RateCall{Limiter: l.Name, Key: key, Limit: limit, Window: window, Now: now, CountRefused: l.CountRefused}
	h, err := l.Windows.HitRate(ctx, c)
	if err != nil {
		return Decision{}, err
	}
	return Decide(c, h), nil
}

// Decide is the decision on call c that the store counted as h: the
// headers' remaining calls when admitted, the time to wait when not.
func Decide(c RateCall, h RateHit) Decision {
	dec := Decision{Limit: c.Limit, Window: c.Window, ResetAt: c.Start().Add(c.Window)}
	w := window{start: h.Start, size: c.Window, prev: h.Prev, curr: h.Curr}
	if !h.Allowed {
		dec.RetryAfter = w.retryAfter(c.Limit, c.Now)
		return dec
	}
	w.curr-- // the count this call was admitted on
	dec.Allowed = true
	dec.Remaining = int(math.Max(0, math.Floor(float64(c.Limit)-w.used(c.Now)-1)))
	return dec
}

// Throttle counts one call for key on l and returns the spec's 429 error
// when it is over limit, or the limiter's storage error.
func Throttle(ctx context.Context, l Limiter, key string, limit int, window time.Duration, now time.Time) error {
	d, err := l.Allow(ctx, key, limit, window, now)
	if err != nil {
		return err
	}
	if !d.Allowed {
		return ErrRateLimited(d)
	}
	return nil
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
//
// Keys come from clients (an IP, an email tried at login), so the limiter
// bounds them: expired keys are dropped within a window of expiring, and
// past MaxKeys the key whose window ends first goes to make room. It also
// tracks which keys changed since it was last saved, so that saving writes
// only those (nothing when idle).
type MemoryLimiter struct {
	// MaxKeys bounds the keys held (0: DefaultMaxKeys).
	MaxKeys int

	mu      sync.Mutex
	windows map[string]*window
	// order holds the keys of each window size, least recently called
	// first: as a call moves its key's window to the current one, that is
	// also the order in which they expire.
	order map[time.Duration]*list.List
	dirty map[string]struct{} // changed or removed since the last save
	sweep time.Time
}

// DefaultMaxKeys bounds a limiter's keys unless MaxKeys says otherwise:
// about 20 MB with email-sized keys, up to twice that while a flood of new
// keys waits for the next save (changed and dropped keys are remembered
// until then).
const DefaultMaxKeys = 100_000

// legacyWindow is the window given to restored keys saved without one
// (before it was kept): the longest any limiter uses, so none is dropped
// early; the key's next call sets its own.
const legacyWindow = time.Hour

type window struct {
	key        string
	start      time.Time
	size       time.Duration // the window of the key's last call
	prev, curr int
	elem       *list.Element // in order[size]
	saved      bool          // written to the store by a save (and not deleted since)
}

// WindowState is one key's counters, for persisting the limiter.
type WindowState struct {
	Start time.Time `json:"s"`
	// Window is the key's window in seconds (0 in files written before it
	// was kept: the key is then given legacyWindow).
	Window int `json:"w,omitempty"`
	Prev   int `json:"p"`
	Curr   int `json:"c"`
}

func (w *window) state() WindowState {
	return WindowState{Start: w.start, Window: int(w.size / time.Second), Prev: w.prev, Curr: w.curr}
}

// expires is when the key's counters stop counting: two of its windows
// after the current one began.
func (w *window) expires() time.Time { return w.start.Add(2 * w.size) }

// NewMemoryLimiter returns an empty limiter.
func NewMemoryLimiter() *MemoryLimiter {
	return &MemoryLimiter{windows: map[string]*window{}, order: map[time.Duration]*list.List{}, dirty: map[string]struct{}{}}
}

// Snapshot copies every key's counters.
func (l *MemoryLimiter) Snapshot() map[string]WindowState {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]WindowState, len(l.windows))
	for k, w := range l.windows {
		out[k] = w.state()
	}
	return out
}

// Restore loads saved counters (at start-up). Keys past MaxKeys are dropped
// (and deleted from the store by the next save), those whose windows end
// first.
func (l *MemoryLimiter) Restore(m map[string]WindowState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// Oldest first, as the order lists keep them.
	slices.SortFunc(keys, func(a, b string) int { return m[a].Start.Compare(m[b].Start) })
	for _, k := range keys {
		s := m[k]
		if w := l.windows[k]; w != nil {
			l.remove(w)
		}
		l.makeRoom()
		w := &window{key: k, start: s.Start, size: time.Duration(s.Window) * time.Second, prev: s.Prev, curr: s.Curr, saved: true}
		if w.size <= 0 {
			w.size = legacyWindow
		}
		l.add(w)
	}
}

// HitRate counts one call in memory.
func (l *MemoryLimiter) HitRate(_ context.Context, c RateCall) (RateHit, error) {
	key, win, now := c.Key, c.Window, c.Now
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.sweep) >= win {
		l.sweepExpired(now)
	}
	start := c.Start()
	w := l.windows[key]
	switch {
	case w == nil:
		l.makeRoom()
		w = &window{key: key, start: start, size: win}
		l.add(w)
	case w.size != win:
		// Keys of one limiter may use different windows (login: 15 minutes,
		// mail: an hour); a key whose window changes changes lists.
		l.order[w.size].Remove(w.elem)
		w.size = win
		w.elem = l.list(win).PushBack(w)
	default:
		l.order[win].MoveToBack(w.elem)
	}
	l.dirty[key] = struct{}{}
	switch d := start.Sub(w.start); {
	case d == win:
		w.prev, w.curr, w.start = w.curr, 0, start
	case d > win:
		w.prev, w.curr, w.start = 0, 0, start
	}
	ok := w.used(now)+1 <= float64(c.Limit)
	if ok || c.CountRefused {
		w.curr++
	}
	return RateHit{Start: w.start, Prev: w.prev, Curr: w.curr, Allowed: ok}, nil
}

// Save drops the keys expired at now and writes to st what changed since
// the last save: the changed keys' counters and the deletion of the keys
// dropped. With no change it does not call st at all. On failure the
// changes are kept for the next save.
func (l *MemoryLimiter) Save(st RateStore, now time.Time) error {
	put, del := l.changes(now)
	if len(put) == 0 && len(del) == 0 {
		return nil
	}
	if err := st.SaveRateWindows(put, del); err != nil {
		l.mu.Lock()
		defer l.mu.Unlock()
		for k := range put {
			if l.windows[k] != nil {
				l.dirty[k] = struct{}{}
			}
		}
		for _, k := range del {
			if l.windows[k] == nil {
				l.dirty[k] = struct{}{}
			}
		}
		return err
	}
	return nil
}

// changes sweeps and takes the changes since the last call.
func (l *MemoryLimiter) changes(now time.Time) (put map[string]WindowState, del []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweepExpired(now)
	if len(l.dirty) == 0 {
		return nil, nil
	}
	put = map[string]WindowState{}
	for k := range l.dirty {
		if w := l.windows[k]; w != nil {
			put[k] = w.state()
			w.saved = true
		} else {
			del = append(del, k)
		}
	}
	clear(l.dirty)
	return put, del
}

// sweepExpired drops the keys expired at now. Each list is in expiry
// order, so this looks at no more than one live key per window size.
func (l *MemoryLimiter) sweepExpired(now time.Time) {
	for _, lst := range l.order {
		for e := lst.Front(); e != nil; e = lst.Front() {
			w := e.Value.(*window)
			if !now.After(w.expires()) {
				break
			}
			l.remove(w)
		}
	}
	l.sweep = now
}

// makeRoom drops the key whose window ends first when the limiter is full.
func (l *MemoryLimiter) makeRoom() {
	max := l.MaxKeys
	if max <= 0 {
		max = DefaultMaxKeys
	}
	for len(l.windows) >= max {
		var first *window
		for _, lst := range l.order {
			if e := lst.Front(); e != nil {
				if w := e.Value.(*window); first == nil || w.expires().Before(first.expires()) {
					first = w
				}
			}
		}
		l.remove(first)
	}
}

func (l *MemoryLimiter) list(size time.Duration) *list.List {
	lst := l.order[size]
	if lst == nil {
		lst = list.New()
		l.order[size] = lst
	}
	return lst
}

// add holds w as its size's most recently called key.
func (l *MemoryLimiter) add(w *window) {
	w.elem = l.list(w.size).PushBack(w)
	l.windows[w.key] = w
}

// remove drops w; the next save deletes it from the store when a save
// wrote it there.
func (l *MemoryLimiter) remove(w *window) {
	l.order[w.size].Remove(w.elem)
	delete(l.windows, w.key)
	if w.saved {
		l.dirty[w.key] = struct{}{}
	} else {
		delete(l.dirty, w.key)
	}
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
