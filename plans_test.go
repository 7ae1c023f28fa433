package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	"folio/store"
)

// runCheckingPlans runs the API tests tracing every statement the servers
// they start run, then checks that none scans a table of the history
// (store.CheckPlan): the requests, jobs and janitor passes of the whole
// suite are the exercise.
func runCheckingPlans(m *testing.M) int {
	if onlyBenchmarks() {
		// Tracing costs every statement a stack walk: a benchmark measures
		// the server as it runs outside tests.
		return m.Run()
	}
	var set store.QuerySet
	stop := store.TraceQueries(set.Add)
	code := m.Run()
	stop()
	if code == 0 {
		if err := set.Report(context.Background(), os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			code = 1
		}
	}
	return code
}

// onlyBenchmarks reports whether this run runs benchmarks and no test
// (go test -run '^$' -bench X).
func onlyBenchmarks() bool {
	if !flag.Parsed() {
		flag.Parse()
	}
	bench, run := flag.Lookup("test.bench"), flag.Lookup("test.run")
	return bench != nil && bench.Value.String() != "" && run != nil && run.Value.String() == "^$"
}
