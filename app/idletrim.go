package app

import (
	"context"
	"log/slog"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// IdleTrim gives memory back to the system once a load has ended (issue
// 24). After a load the Go heap keeps the size its last collection aimed
// at, and the runtime returns the spare pages slowly; with no allocation
// there is no collection to shrink it (the forced one comes every two
// minutes). So every Every it reads how much the process allocated: when
// it allocated at least Busy since the last trim, and less than Quiet in
// the last interval (the load ended), it runs the hooks (caches kept for
// the load) and two collections, the second debug.FreeOSMemory's, once,
// then waits for the next load.
// Busy servers never trim (their intervals are not quiet) and idle ones
// trim once: the collection it forces costs a few milliseconds when nobody
// waits for the CPU.
type IdleTrim struct {
	Every time.Duration // 0: 5 s
	Busy  uint64        // 0: 32 MB
	Quiet uint64        // 0: 1 MB
	Hooks []func()
	// After run once the free memory was returned (dropping the
	// executable's pages from the RSS, DropFilePages).
	After []func()
	// Free returns memory to the system (nil: debug.FreeOSMemory).
	Free   func()
	Logger *slog.Logger

	mu      sync.Mutex
	last    uint64 // allocated bytes at the last look
	pending uint64 // allocated since the last trim
	started bool
	trims   atomic.Int64
}

// Trims returns how many trims ran.
func (t *IdleTrim) Trims() int64 { return t.trims.Load() }

// Observe takes the process's allocated bytes so far and trims when the
// load it saw has ended. It reports whether it trimmed.
func (t *IdleTrim) Observe(allocated uint64) bool {
	busy, quiet := t.Busy, t.Quiet
	if busy == 0 {
		busy = 32 << 20
	}
	if quiet == 0 {
		quiet = 1 << 20
	}
	t.mu.Lock()
	delta := allocated - t.last
	if !t.started || allocated < t.last {
		delta = 0
	}
	t.started, t.last = true, allocated
	t.pending += delta
	trim := delta < quiet && t.pending >= busy
	if trim {
		t.pending = 0
	}
	t.mu.Unlock()
	if trim {
		t.Trim()
	}
	return trim
}

// Trim runs the hooks and returns the free memory at once.
func (t *IdleTrim) Trim() {
	start := time.Now()
	for _, h := range t.Hooks {
		h()
	}
	if t.Free != nil {
		t.Free()
	} else {
		// The first collection moves what the sync.Pools hold (flate
		// writers, render buffers) to their victim caches, the second
		// (FreeOSMemory's) frees it and returns the free pages.
		runtime.GC()
		debug.FreeOSMemory()
	}
	for _, h := range t.After {
		h()
	}
	t.trims.Add(1)
	if t.Logger != nil {
		t.Logger.Debug("idle trim", "ms", time.Since(start).Milliseconds())
	}
}

// Run observes the process's allocations every Every until ctx ends.
func (t *IdleTrim) Run(ctx context.Context) {
	every := t.Every
	if every == 0 {
		every = 5 * time.Second
	}
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 {
			t.Observe(sample[0].Value.Uint64())
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// TrimCaches drops what the service keeps for loads (the documents lists
// of polled batches): the idle trim's hook.
func (s *DocumentService) TrimCaches() { s.lists.trim() }
