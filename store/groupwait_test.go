package store

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestGroupWaitsWhileBusy: while more documents are in progress than
// there are cores, some outside the group, the group waits for more calls
// (up to groupTarget, or groupWait) and commits them together; with no
// more in progress than cores it commits at once, alone.
func TestGroupWaitsWhileBusy(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	defer func(d time.Duration, n int) { groupWait, groupTarget = d, n }(groupWait, groupTarget)
	groupWait, groupTarget = time.Hour, 3 // only arrivals end this test's waits
	var mu sync.Mutex
	var sizes []int
	testHookGroup = func(g []*writeReq) {
		mu.Lock()
		sizes = append(sizes, len(g))
		mu.Unlock()
	}
	defer func() { testHookGroup = nil }()
	took := func() []int {
		mu.Lock()
		defer mu.Unlock()
		s := sizes
		sizes = nil
		return s
	}
	noop := func(*Tx) error { return nil }
	cores := runtime.GOMAXPROCS(0)

	// As many in progress as cores: a core would idle through a wait, so
	// each write commits at once.
	db.ExpectWrites(cores)
	for range 3 {
		if err := db.tx(ctx, noop); err != nil {
			t.Fatal(err)
		}
	}
	if s := took(); len(s) != 3 || s[0] != 1 || s[1] != 1 || s[2] != 1 {
		t.Fatalf("groups %v with no more documents in progress than cores, want three of one", s)
	}

	// More: the first write waits until groupTarget calls are in its
	// group (groupWait is an hour: only the arrivals end the wait).
	db.ExpectWrites(groupTarget)
	var wg sync.WaitGroup
	for i := range groupTarget {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 20 * time.Millisecond)
			if err := db.tx(ctx, noop); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if s := took(); len(s) != 1 || s[0] != groupTarget {
		t.Fatalf("groups %v while busy, want one of %d", s, groupTarget)
	}

	// A wait for writes that never come ends after groupWait.
	groupWait = 30 * time.Millisecond
	if err := db.tx(ctx, noop); err != nil {
		t.Fatal(err)
	}
	if s := took(); len(s) != 1 || s[0] != 1 {
		t.Fatalf("groups %v, want the lone write after its wait", s)
	}

	// The documents end: no wait any more.
	db.ExpectWrites(-cores - groupTarget)
	groupWait = time.Hour
	if err := db.tx(ctx, noop); err != nil {
		t.Fatal(err)
	}
	if s := took(); len(s) != 1 || s[0] != 1 {
		t.Fatalf("groups %v after the documents ended, want one of one", s)
	}
}
