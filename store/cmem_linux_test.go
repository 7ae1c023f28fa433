//go:build linux && (amd64 || arm64 || loong64 || ppc64le || s390x || riscv64 || 386 || arm)

package store

import (
	"context"
	"os"
	"reflect"
	"runtime/debug"
	"strings"
	"testing"
)

// cAllocator reads libc's allocator's accounting (memory.go): the bytes
// of regions holding allocations (live) and of empty regions it keeps
// (freedSize).
func cAllocator() (live, kept int64) {
	libcAllocatorMu.Lock()
	defer libcAllocatorMu.Unlock()
	v := reflect.ValueOf(&libcAllocator).Elem()
	return v.FieldByName("live").Int(), v.FieldByName("freedSize").Int()
}

// TestTrimIdleReturnsSQLiteMemory: after writes that fill the writer's
// page cache, TrimIdle frees the cache's pages (fewer bytes in regions
// holding allocations) and libc's allocator keeps none of the regions
// that emptied.
func TestTrimIdleReturnsSQLiteMemory(t *testing.T) {
	mustCTrim(t)
	ctx := context.Background()
	db := mustDB(t)
	// 8 MB of 4 KB rows: the writer's cache (2 MB, SQLite's default) is
	// full of them afterwards.
	for _, q := range []string{`CREATE TABLE ballast (b BLOB)`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000) INSERT INTO ballast SELECT randomblob(4000) FROM n`} {
		if _, err := db.write.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	live, _ := cAllocator()
	if err := db.TrimIdle(ctx); err != nil {
		t.Fatal(err)
	}
	liveAfter, kept := cAllocator()
	if freed := live - liveAfter; freed < 1<<20 {
		t.Errorf("the trim freed %d bytes of SQLite's regions (%d → %d), want the writer's cache, more than 1 MB", freed, live, liveAfter)
	}
	if kept != 0 {
		t.Errorf("libc's allocator keeps %d bytes of empty regions after the trim, want 0", kept)
	}
	var n int
	if err := db.write.QueryRowContext(ctx, `SELECT COUNT(*) FROM ballast`).Scan(&n); err != nil || n != 2000 {
		t.Fatalf("%d rows after the trim (%v), want 2000", n, err)
	}
}

// TestCTrimVersions: the trim reaches into modernc.org/libc and
// modernc.org/memory as they were at cVersions. After go.mod moves either,
// read the new Xmalloc/Xfree (mem_musl.go), libc's allocator and
// allocatorMu (libc_musl.go) and Allocator.Trim (memory.go) again, then
// update cVersions.
func TestCTrimVersions(t *testing.T) {
	if off := cVersionsDiffer(goModDeps(t)); off != "" {
		t.Fatal(off)
	}
}

// mustCTrim turns the trim on for the test when go.mod requires the
// versions it was written for: a test binary holds no dependency
// versions (debug.ReadBuildInfo), so cTrimOff is off in tests.
func mustCTrim(t *testing.T) {
	t.Helper()
	if off := cVersionsDiffer(goModDeps(t)); off != "" {
		t.Fatal(off)
	}
	saved := cTrimOff
	cTrimOff = func() string { return "" }
	t.Cleanup(func() { cTrimOff = saved })
}

// goModDeps reads the modules the repository's go.mod requires.
func goModDeps(t *testing.T) []*debug.Module {
	t.Helper()
	b, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	var deps []*debug.Module
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		switch {
		case len(f) >= 2 && f[0] == "replace":
			// Another copy of the module: the trim's guard never trusts it.
			deps = append(deps, &debug.Module{Path: f[1], Replace: &debug.Module{}})
		case len(f) >= 2 && strings.HasPrefix(f[1], "v"):
			deps = append(deps, &debug.Module{Path: f[0], Version: f[1]})
		}
	}
	return deps
}

// TestCVersionsDiffer: the trim turns itself off for any other version,
// a missing module or a replacement.
func TestCVersionsDiffer(t *testing.T) {
	mod := func(path, version string) *debug.Module { return &debug.Module{Path: path, Version: version} }
	ok := []*debug.Module{mod("modernc.org/libc", "v1.79.0"), mod("modernc.org/memory", "v1.12.1")}
	replaced := []*debug.Module{ok[0], mod("modernc.org/memory", "v1.12.1")}
	replaced[1].Replace = &debug.Module{Path: "../memory"}
	for _, tt := range []struct {
		name string
		deps []*debug.Module
		on   bool
	}{
		{"these versions", ok, true},
		{"newer libc", []*debug.Module{mod("modernc.org/libc", "v1.79.1"), ok[1]}, false},
		{"older memory", []*debug.Module{ok[0], mod("modernc.org/memory", "v1.12.0")}, false},
		{"no libc", ok[1:], false},
		{"memory replaced by a directory", replaced, false},
	} {
		if got := cVersionsDiffer(tt.deps) == ""; got != tt.on {
			t.Errorf("%s: trim on %v, want %v (%s)", tt.name, got, tt.on, cVersionsDiffer(tt.deps))
		}
	}
}
