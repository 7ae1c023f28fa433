package app

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// rssFile reads the process's file-backed resident memory (kB).
func rssFile(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}

// TestDropFilePages drops the test binary's read-only pages from the
// resident set and goes on running code and reading tables from them.
func TestDropFilePages(t *testing.T) {
	before := rssFile(t)
	if n := DropFilePages(); n <= 0 {
		t.Fatalf("DropFilePages dropped %d bytes", n)
	}
	after := rssFile(t)
	if after >= before {
		t.Fatalf("RssFile %d kB before, %d kB after", before, after)
	}
	// The code and read-only data come back from the file.
	if got := ErrorCode(&Error{Code: ECodeForbidden}); got != ECodeForbidden {
		t.Fatalf("ErrorCode = %q", got)
	}
	if _, err := FindPlan("free"); err != nil {
		t.Fatal(err)
	}
	t.Logf("RssFile %d kB -> %d kB", before, after)
}
