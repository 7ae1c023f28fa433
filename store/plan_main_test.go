package store

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
)

// TestMain runs the store's tests tracing every statement they run, then
// checks that none of them scans a table of the history (CheckPlan): a
// query added later cannot silently become a full scan.
func TestMain(m *testing.M) {
	flag.Parse()
	if path := os.Getenv("FOLIO_TEST_BUMP_GENERATION"); path != "" {
		if err := bumpGenerationChild(path); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if path := os.Getenv("FOLIO_TEST_WAL_WRITER"); path != "" {
		if err := walWriterChild(path); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if bench, run := flag.Lookup("test.bench").Value.String(), flag.Lookup("test.run").Value.String(); bench != "" && run == "^$" {
		// Only benchmarks: they measure statements without the trace's
		// stack walk each.
		code := m.Run()
		removeMigrated()
		os.Exit(code)
	}
	var set QuerySet
	stop := TraceQueries(set.Add)
	code := m.Run()
	stop()
	removeMigrated()
	if code == 0 {
		if err := set.Report(context.Background(), os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			code = 1
		}
	}
	os.Exit(code)
}
