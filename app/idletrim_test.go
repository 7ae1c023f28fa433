package app

import "testing"

// TestIdleTrimAfterLoad feeds IdleTrim the allocation counts of a load and
// of the quiet after it: it trims once the load ends, not during it, not
// again while idle, and again after the next load.
func TestIdleTrimAfterLoad(t *testing.T) {
	hooks, frees, afters := 0, 0, 0
	tr := &IdleTrim{Busy: 100, Quiet: 10, Hooks: []func(){func() { hooks++ }}, Free: func() { frees++ },
		After: []func(){func() {
			if frees != hooks {
				t.Error("an After hook ran before the memory was returned")
			}
			afters++
		}}}
	var total uint64
	step := func(alloc uint64, want bool) {
		t.Helper()
		total += alloc
		if got := tr.Observe(total); got != want {
			t.Fatalf("after allocating %d (total %d): trimmed %v, want %v", alloc, total, got, want)
		}
	}
	step(0, false) // the first look only sets the base
	step(5, false) // quiet, but nothing to give back yet
	for range 4 {
		step(60, false) // the load
	}
	step(3, true) // it ended
	step(2, false)
	step(0, false)
	step(50, false) // a little traffic: not enough to trim again
	step(1, false)
	step(80, false) // more: 131 since the trim
	step(0, true)
	if hooks != 2 || frees != 2 || afters != 2 || tr.Trims() != 2 {
		t.Fatalf("hooks ran %d times, free %d, after %d, trims %d; want 2 each", hooks, frees, afters, tr.Trims())
	}
}

// TestTrimCachesDropsBatchLists checks the document service's hook: the
// kept documents lists go.
func TestTrimCachesDropsBatchLists(t *testing.T) {
	s := &DocumentService{}
	s.lists.get("bat_1")
	s.lists.get("bat_2")
	if n := s.lists.trim(); n != 2 {
		t.Fatalf("kept %d lists, want 2", n)
	}
	s.TrimCaches()
	if n := s.lists.trim(); n != 0 {
		t.Fatalf("%d lists left after the trim", n)
	}
}
