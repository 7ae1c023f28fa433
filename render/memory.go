package render

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"runtime"
	"strings"
	"sync"
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
}

// hold counts n more bytes kept until the render ends.
func (m *memoryMeter) hold(n int64) error {
	m.held += n
	m.peak = max(m.peak, m.held)
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
	return nil
}

// memoryGate bounds the memory of the renders an engine runs at once:
// every render reserves its whole budget before it starts and waits while
// the reservations of running renders leave too little. Reserving the
// worst case up front means a render never waits halfway, so renders
// cannot deadlock one another.
type memoryGate struct {
	once     sync.Once
	mu       sync.Mutex
	capacity int64
	used     int64
	waiters  []*memoryWaiter // first come, first served
}

type memoryWaiter struct {
	n     int64
	ready chan struct{}
}

// defaultGateCapacity lets as many renders run at full budget as there are
// cores, plus two: renders are CPU-bound, so more would only wait for CPU.
func defaultGateCapacity() int64 {
	return int64(runtime.NumCPU()+2) * DefaultMemory
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

// acquire reserves n bytes (at most the capacity), waiting until they are
// free or ctx ends. release gives them back.
func (g *memoryGate) acquire(ctx context.Context, n int64) (release func(), err error) {
	g.init()
	g.mu.Lock()
	n = min(n, g.capacity)
	if len(g.waiters) == 0 && g.used+n <= g.capacity {
		g.used += n
		g.mu.Unlock()
		return g.releaser(n), nil
	}
	w := &memoryWaiter{n: n, ready: make(chan struct{})}
	g.waiters = append(g.waiters, w)
	g.mu.Unlock()
	select {
	case <-w.ready:
		return g.releaser(w.n), nil
	case <-ctx.Done():
		g.mu.Lock()
		defer g.mu.Unlock()
		select {
		case <-w.ready: // granted meanwhile: hand it back
			g.used -= w.n
			g.wake()
		default:
			for i, o := range g.waiters {
				if o == w {
					g.waiters = append(g.waiters[:i], g.waiters[i+1:]...)
					break
				}
			}
			g.wake()
		}
		return nil, ctx.Err()
	}
}

func (g *memoryGate) releaser(n int64) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			g.used -= n
			g.wake()
			g.mu.Unlock()
		})
	}
}

// wake grants waiting reservations in order while they fit; g.mu is held.
func (g *memoryGate) wake() {
	for len(g.waiters) > 0 {
		w := g.waiters[0]
		w.n = min(w.n, g.capacity)
		if g.used+w.n > g.capacity {
			return
		}
		g.used += w.n
		g.waiters = g.waiters[1:]
		close(w.ready)
	}
}

// SetMemory sets how many bytes the renders of this engine may reserve
// together (each reserves its Limits.Memory while it runs); renders beyond
// that wait. The default allows as many full-budget renders as there are
// CPU cores, plus two. Call it before rendering.
func (e *Engine) SetMemory(total int64) {
	e.memory.setCapacity(total)
}

// imageCost estimates the memory decoding a PNG data URI takes for a
// moment, from its header, before anything is decoded: the pixels (8 bytes
// each at 16 bits per channel, 4 otherwise), a converted copy, and fpdf's
// work embedding it. Other images cost their size.
func imageCost(src string) int64 {
	_, payload, ok := strings.Cut(src, ",")
	if !ok {
		return int64(len(src))
	}
	payload = strings.TrimSpace(payload)
	if len(payload) > 48 {
		payload = payload[:48]
	}
	head, err := base64.StdEncoding.DecodeString(payload)
	if err != nil || len(head) < 26 || string(head[:8]) != "\x89PNG\r\n\x1a\n" || string(head[12:16]) != "IHDR" {
		return int64(len(src))
	}
	w, h := int64(binary.BigEndian.Uint32(head[16:20])), int64(binary.BigEndian.Uint32(head[20:24]))
	if w > maxImageSide || h > maxImageSide {
		return int64(len(src)) // refused by the decoder before it allocates
	}
	perPixel := int64(4)
	if head[24] == 16 {
		perPixel = 8
	}
	return w*h*(perPixel+4) + embedCost(&imageData{kind: "PNG", w: int(w), h: int(h)})
}

// embedCost estimates the memory fpdf takes for a moment to embed an
// image: a PNG's pixels unpacked and split into colour and alpha; a JPEG is
// copied as it is.
func embedCost(img *imageData) int64 {
	if img.kind == "JPG" {
		return int64(len(img.data))
	}
	return int64(img.w) * int64(img.h) * 4 * 2
}
