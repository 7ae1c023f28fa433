package main

import (
	"context"
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
