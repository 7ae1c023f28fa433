package store

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// groupSizes records the size of every group the writer runs until the
// test ends.
func groupSizes(t *testing.T) func() []int {
	var mu sync.Mutex
	var sizes []int
	testHookGroup = func(g []*writeReq) {
		mu.Lock()
		defer mu.Unlock()
		sizes = append(sizes, len(g))
	}
	t.Cleanup(func() { testHookGroup = nil })
	return func() []int {
		mu.Lock()
		defer mu.Unlock()
		return append([]int(nil), sizes...)
	}
}

// setLinger makes the writer linger up to d in this test.
func setLinger(t *testing.T, d time.Duration) {
	old := lingerMax
	lingerMax = d
	t.Cleanup(func() { lingerMax = old })
}

func nop(tx *Tx) error { _, err := tx.ExecContext(context.Background(), `SELECT 1`); return err }

// A call that reaches an idle writer while another write is announced
// (a document still rendering) waits for it, and the two commit together.
func TestWriterWaitsForAnAnnouncedWrite(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	sizes := groupSizes(t)
	setLinger(t, time.Minute) // the second call comes long before
	db.ExpectWrites(2)        // two documents render
	db.ExpectWrites(-1)       // the first is written
	first := make(chan error, 1)
	go func() { first <- db.tx(ctx, nop) }()
	time.Sleep(20 * time.Millisecond) // the first call waits in the writer
	select {
	case err := <-first:
		t.Fatalf("the first call did not wait for the announced one (%v)", err)
	default:
	}
	db.ExpectWrites(-1) // the second is written
	if err := db.tx(ctx, nop); err != nil {
		t.Fatal(err)
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(sizes()); got != "[2]" {
		t.Fatalf("groups %s, want the two calls in one", got)
	}
	if n, _ := db.ExpectedWrites(); n != 0 {
		t.Fatalf("%d writes still announced", n)
	}
}

// With nothing announced a call never waits: a lone client's writes, a job
// of the queue and a maintenance step commit at once.
func TestWriterWaitsForNothingUnannounced(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	sizes := groupSizes(t)
	setLinger(t, time.Hour)
	for range 3 {
		done := make(chan error, 1)
		go func() { done <- db.tx(ctx, nop) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a call waited though no write was announced")
		}
	}
	// A step runs alone and never waits, even with a write announced.
	db.ExpectWrites(1)
	defer db.ExpectWrites(-1)
	done := make(chan error, 1)
	go func() { _, err := db.txAlone(ctx, nop); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a step waited for an announced write")
	}
	if got := fmt.Sprint(sizes()); got != "[1 1 1 1]" {
		t.Fatalf("groups %s", got)
	}
}

// The wait is bounded: an announced write that never comes (its
// announcement not yet withdrawn) holds a group lingerMax at most.
func TestWriterLingersAtMostLingerMax(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	sizes := groupSizes(t)
	setLinger(t, 20*time.Millisecond)
	db.ExpectWrites(1)
	defer db.ExpectWrites(-1)
	for range 3 {
		done := make(chan error, 1)
		go func() { done <- db.tx(ctx, nop) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a call waited past lingerMax for a write that never came")
		}
	}
	if got := fmt.Sprint(sizes()); got != "[1 1 1]" {
		t.Fatalf("groups %s", got)
	}
}

// While LingerWhile's test says the process is not busy (app: a worker is
// idle, so a held commit would leave a core with nothing to render), an
// announced write is not waited for; once it says busy, it is.
func TestWriterLingersOnlyWhileBusy(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	sizes := groupSizes(t)
	setLinger(t, time.Hour)
	var busy atomic.Bool
	db.LingerWhile(busy.Load)
	db.ExpectWrites(1)
	done := make(chan error, 1)
	go func() { done <- db.tx(ctx, nop) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a call waited for an announced write while a worker was idle")
	}
	busy.Store(true)
	go func() { done <- db.tx(ctx, nop) }()
	time.Sleep(20 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("the call did not wait while busy (%v)", err)
	default:
	}
	db.ExpectWrites(-1)
	if err := db.tx(ctx, nop); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(sizes()); got != "[1 2]" {
		t.Fatalf("groups %s", got)
	}
}
