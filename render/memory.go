package render

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"time"
)

// DefaultMemory is the memory budget of one render (Limits.Memory).
const DefaultMemory = 256 << 20

// memoryMeter counts the large allocations of one render against its
// budget: decoded images (estimated from their headers before decoding),
// embedded images, PDF page content, sheet data excelize keeps in memory
// and the output file. It is an estimate of what dominates a render's
// memory, not an exact account of the Go heap.
type memoryMeter struct {
	budget int64
	held   int64 // bytes held until the render ends
	peak   int64
	res    *reservation // the render's reservation in the pool, grown to the peak
}

// hold counts n more bytes kept until the render ends.
func (m *memoryMeter) hold(n int64) error {
	m.held += n
	m.peak = max(m.peak, m.held)
	m.res.cover(m.peak)
	if m.held > m.budget {
		return newLimitError(LimitMemory, m.held, m.budget)
	}
	return nil
}

// need checks that n more bytes, needed for a moment (decoding an image),
// fit beside what is held.
func (m *memoryMeter) need(n int64) error {
	if m.held+n > m.budget {
		return newLimitError(LimitMemory, m.held+n, m.budget)
	}
	m.peak = max(m.peak, m.held+n)
	m.res.cover(m.peak)
	return nil
}

// memoryGate bounds the memory of the renders an engine runs at once:
// every render reserves what it may need before it starts (its whole
// budget, or less when less is certain to do, see reservation) and waits
// while the reservations of running renders leave too little. A render
// never waits halfway: if it needs more than it reserved, it takes the
// rest without waiting (see cover), so renders cannot deadlock one another.
//
// Interactive renders (previews and dry runs) may hold at most a share of
// the pool (interactiveShare), and waiting jobs are served before them, so
// that interactive traffic cannot keep jobs waiting: with the default pool
// the rest covers a full budget for every document worker.
type memoryGate struct {
	once        sync.Once
	mu          sync.Mutex
	capacity    int64
	used        int64
	interactive int64           // the part of used interactive renders hold
	jobs        []*memoryWaiter // waiting jobs, first come, first served
	previews    []*memoryWaiter // waiting interactive renders, likewise
}

type memoryWaiter struct {
	n           int64
	interactive bool
	ready       chan struct{}
}

// defaultGateCapacity lets as many renders run at full budget as there are
// cores, plus two: renders are CPU-bound, so more would only wait for CPU.
func defaultGateCapacity() int64 {
	return int64(runtime.NumCPU()+2) * DefaultMemory
}

// interactiveShare is the most interactive renders hold together: half
// the pool, at most two full budgets. With the default pool, (cores + 2)
// full budgets, jobs keep at least one full budget per core (the default
// number of workers).
func (g *memoryGate) interactiveShare() int64 {
	return min(g.capacity/2, 2*DefaultMemory)
}

func (g *memoryGate) init() {
	g.once.Do(func() {
		if g.capacity <= 0 {
			g.capacity = defaultGateCapacity()
		}
	})
}

// setCapacity changes how much all renders together may reserve.
func (g *memoryGate) setCapacity(n int64) {
	g.init()
	g.mu.Lock()
	defer g.mu.Unlock()
	if n > 0 {
		g.capacity = n
	}
	g.wake()
}

// ErrBusy is returned by Render when its memory reservation was not
// granted within Options.MemoryWait: other renders held the engine's pool.
var ErrBusy = errors.New("render: the engine's memory is held by other renders")

// acquire reserves n bytes (at most the capacity, or the interactive
// share), waiting until they are free, ctx ends or wait passes (0: no
// limit but ctx; then ErrBusy). The reservation is released with release.
func (g *memoryGate) acquire(ctx context.Context, n int64, interactive bool, wait time.Duration) (*reservation, error) {
	g.init()
	g.mu.Lock()
	n = min(n, g.capacity)
	if interactive {
		n = min(n, g.interactiveShare())
	}
	w := &memoryWaiter{n: n, interactive: interactive, ready: make(chan struct{})}
	if len(g.jobs) == 0 && (!interactive || len(g.previews) == 0) && g.fits(w) {
		g.take(w)
		g.mu.Unlock()
		return &reservation{g: g, n: n, interactive: interactive}, nil
	}
	if interactive {
		g.previews = append(g.previews, w)
	} else {
		g.jobs = append(g.jobs, w)
	}
	g.mu.Unlock()
	var timeout <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	var err error
	select {
	case <-w.ready:
		return &reservation{g: g, n: w.n, interactive: interactive}, nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-timeout:
		err = ErrBusy
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-w.ready: // granted meanwhile: hand it back
		g.give(w.n, interactive)
	default:
		g.jobs = remove(g.jobs, w)
		g.previews = remove(g.previews, w)
		g.wake()
	}
	return nil, err
}

func remove(list []*memoryWaiter, w *memoryWaiter) []*memoryWaiter {
	for i, o := range list {
		if o == w {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}

// fits reports whether w's reservation fits now; g.mu is held.
func (g *memoryGate) fits(w *memoryWaiter) bool {
	if g.used+w.n > g.capacity {
		return false
	}
	return !w.interactive || g.interactive+w.n <= g.interactiveShare()
}

// take counts w's reservation as held; g.mu is held.
func (g *memoryGate) take(w *memoryWaiter) {
	g.used += w.n
	if w.interactive {
		g.interactive += w.n
	}
}

// give returns n bytes and serves the waiting; g.mu is held.
func (g *memoryGate) give(n int64, interactive bool) {
	g.used -= n
	if interactive {
		g.interactive -= n
	}
	g.wake()
}

// wake grants waiting reservations in order while they fit, jobs first;
// interactive renders wait while a job does. g.mu is held.
func (g *memoryGate) wake() {
	for len(g.jobs) > 0 {
		w := g.jobs[0]
		w.n = min(w.n, g.capacity)
		if !g.fits(w) {
			return
		}
		g.take(w)
		g.jobs = g.jobs[1:]
		close(w.ready)
	}
	for len(g.previews) > 0 {
		w := g.previews[0]
		w.n = min(w.n, g.capacity, g.interactiveShare())
		if !g.fits(w) {
			return
		}
		g.take(w)
		g.previews = g.previews[1:]
		close(w.ready)
	}
}

// reservation is the memory one render holds in its engine's pool. Only
// the render's own goroutine uses it.
type reservation struct {
	g           *memoryGate
	n           int64
	interactive bool
	released    bool
}

// cover makes the reservation at least n bytes, without waiting: a render
// whose estimate was too low takes the rest now, and renders that start
// later wait for it.
func (r *reservation) cover(n int64) {
	if r == nil || n <= r.n || r.released {
		return
	}
	r.g.mu.Lock()
	r.g.used += n - r.n
	if r.interactive {
		r.g.interactive += n - r.n
	}
	r.g.mu.Unlock()
	r.n = n
}

// release gives the reservation back; later calls do nothing.
func (r *reservation) release() {
	if r.released {
		return
	}
	r.released = true
	r.g.mu.Lock()
	r.g.give(r.n, r.interactive)
	r.g.mu.Unlock()
}

// SetMemory sets how many bytes the renders of this engine may reserve
// together (each reserves at most its Limits.Memory while it runs);
// renders beyond that wait. Interactive renders (Options.Interactive) hold
// at most half of it, and two full budgets at most. The default allows as
// many full-budget renders as there are CPU cores, plus two. Call it
// before rendering.
func (e *Engine) SetMemory(total int64) {
	e.gate().setCapacity(total)
}

// Reserve takes n bytes from the engine's memory pool for work outside a
// render that holds much memory for a moment, such as decoding an uploaded
// picture, so that it waits with the renders instead of adding to them. It
// waits like an interactive render (Options.Interactive), after waiting
// jobs, until the bytes are free or ctx ends, and takes at most the
// interactive share. release gives them back; call it once.
func (e *Engine) Reserve(ctx context.Context, n int64) (release func(), err error) {
	r, err := e.gate().acquire(ctx, n, true, 0)
	if err != nil {
		return nil, err
	}
	return r.release, nil
}

// pageContentReserve is the PDF page content a reservation allows for
// each page of the page limit: a page packed with small text or table
// cells holds a few hundred kilobytes; a render that needs more takes it
// when it does (reservation.cover).
const pageContentReserve = 1 << 20

// reservationFor is what a render reserves before it starts. A workbook
// reserves its whole budget (sheet data alone can reach 32 MB a sheet). A
// PDF holds at most its page content, its embedded images (no more than the
// output limit), and then either one image being decoded or the output's
// two copies: so it reserves that, with the largest image the template or
// the values hold, and the whole budget only when that is more.
func (t *Template) reservationFor(format Format, values map[string]any, l Limits) int64 {
	if format != PDF {
		return l.Memory
	}
	images, dynamic := int64(0), false
	var walk func(list []*component)
	walk = func(list []*component) {
		for _, c := range list {
			if e, ok := c.elem.(*imageElement); ok {
				if e.lit != nil {
					images = max(images, e.lit.reserve())
				} else {
					dynamic = true
				}
			}
			for _, children := range c.elem.refs().children {
				walk(children)
			}
		}
	}
	walk(componentsOf(t.doc.sections))
	if dynamic {
		images = max(images, largestImage(values, 0))
	}
	return min(l.Memory, int64(l.Pages)*pageContentReserve+l.Bytes+max(2*l.Bytes, images))
}

// largestImage is the largest imageCost of the data URIs found in v,
// looking no deeper than values may nest.
func largestImage(v any, depth int) int64 {
	if depth > maxValueDepth {
		return 0
	}
	switch v := v.(type) {
	case string:
		if strings.HasPrefix(v, "data:") {
			return imageCost(v)
		}
	case map[string]any:
		n := int64(0)
		for _, x := range v {
			n = max(n, largestImage(x, depth+1))
		}
		return n
	case []any:
		n := int64(0)
		for _, x := range v {
			n = max(n, largestImage(x, depth+1))
		}
		return n
	}
	return 0
}

// reservationKey carries a render's reservation to the runs of its
// layout passes.
type reservationKey struct{}

func reservationOf(ctx context.Context) *reservation {
	r, _ := ctx.Value(reservationKey{}).(*reservation)
	return r
}
