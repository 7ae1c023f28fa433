package store

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// Query plans (docs/performance.md, Growth): every statement a request, a
// job or the janitor runs must find its rows through an index. A plan step
// that reads a whole table grows with the history, which is what made a
// 1M-job install stall (issue 19), so the test suites trace every
// statement they run and check its plan with CheckPlan.

// TraceQueries calls fn with every SQL statement the store runs through its
// pools and transactions from now on, and its number of arguments, until
// stop is called. Statements a test runs itself (a _test.go file calls the
// pool or the transaction) are left out. Traces nest: a trace started
// while another runs feeds both, and its stop restores the other (a test
// counting statements inside the suite's plan check).
func TraceQueries(fn func(query string, args int)) (stop func()) {
	prev := traceQuery.Load()
	traced := func(query string, args int) {
		if prev != nil {
			(*prev)(query, args)
		}
		if !fromTest() {
			fn(query, args)
		}
	}
	traceQuery.Store(&traced)
	return func() { traceQuery.Store(prev) }
}

// fromTest reports whether the code that ran the traced statement, the
// first caller outside this file and stmt.go, is in a test file.
func fromTest() bool {
	pc := make([]uintptr, 16)
	frames := runtime.CallersFrames(pc[:runtime.Callers(3, pc)])
	for {
		f, more := frames.Next()
		if !strings.HasSuffix(f.File, "/store/stmt.go") && !strings.HasSuffix(f.File, "/store/explain.go") {
			return strings.HasSuffix(f.File, "_test.go")
		}
		if !more {
			return false
		}
	}
}

// QuerySet collects the distinct statements a trace saw.
type QuerySet struct {
	mu sync.Mutex
	m  map[string]int // query -> number of arguments
}

// Add records query; it has the signature TraceQueries wants.
func (s *QuerySet) Add(query string, args int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]int{}
	}
	s.m[query] = args
}

// Report checks the plan of every statement in the set on a new database
// (plans do not depend on the rows: Folio keeps no ANALYZE statistics),
// writes one line per statement that scans a table to w and returns an
// error when there is one.
func (s *QuerySet) Report(ctx context.Context, w io.Writer) error {
	dir, err := os.MkdirTemp("", "folio-plans-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := Open(ctx, filepath.Join(dir, "folio.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	n, errs := s.Check(ctx, db)
	for _, err := range errs {
		fmt.Fprintln(w, "query plan:", err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%d of %d statements scan a table (store/explain.go)", len(errs), n)
	}
	return nil
}

// Check checks the plan of every statement in the set on db and returns
// the number checked and one error per statement whose plan scans a
// table.
func (s *QuerySet) Check(ctx context.Context, db *DB) (int, []error) {
	s.mu.Lock()
	queries := make([]string, 0, len(s.m))
	for q := range s.m {
		queries = append(queries, q)
	}
	s.mu.Unlock()
	slices.Sort(queries)
	var errs []error
	for _, q := range queries {
		if _, err := CheckPlan(ctx, db, q, s.m[q]); err != nil {
			errs = append(errs, err)
		}
	}
	return len(queries), errs
}

// boundedIndexes are partial indexes whose size does not grow with the
// history, only with work not yet done: reading all of one is no scan of
// the history.
var boundedIndexes = []string{
	"jobs_unfinished",            // pending and processing jobs
	"webhook_deliveries_pending", // deliveries still to attempt
	"events_undispatched",        // events not yet turned into deliveries
	"users_pending_deletion",     // accounts in their grace period
}

// smallTables hold a row per migration, per roll-up, or per write group
// since the last fold of the pending counts (at most maxPendingCounts):
// scanning them is free.
var smallTables = []string{"migrations", "rollup_backfill", "job_count_pending"}

// planExceptions are statements allowed to scan, each with its reason.
var planExceptions = []struct{ contains, why string }{}

var planStep = regexp.MustCompile(`^SCAN (\S+)(?: AS \S+)?(?: USING (?:COVERING )?INDEX (\S+))?`)

// CheckPlan explains query (args arguments, all NULL: plans do not depend
// on the values) on db. It returns the plan, and an error naming each step
// that scans a table of the history — a SCAN without an index, or of a
// whole index that is not bounded — unless the statement is one of the
// planExceptions.
func CheckPlan(ctx context.Context, db *DB, query string, args int) ([]string, error) {
	tables, err := db.tableNames(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := db.read.DB.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, make([]any, args)...)
	if err != nil {
		return nil, fmt.Errorf("explain %s: %w", oneLine(query), err)
	}
	defer rows.Close()
	var plan, scans []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return nil, err
		}
		plan = append(plan, detail)
		m := planStep.FindStringSubmatch(detail)
		if m == nil || !slices.Contains(tables, m[1]) || slices.Contains(smallTables, m[1]) || slices.Contains(boundedIndexes, m[2]) {
			continue
		}
		scans = append(scans, detail)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(scans) == 0 {
		return plan, nil
	}
	for _, e := range planExceptions {
		if strings.Contains(query, e.contains) {
			return plan, nil
		}
	}
	return plan, fmt.Errorf("%s: scans %s (plan: %s)", oneLine(query), strings.Join(scans, "; "), strings.Join(plan, "; "))
}

func (db *DB) tableNames(ctx context.Context) ([]string, error) {
	rows, err := db.read.DB.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table'`)
	if err != nil {
		return nil, err
	}
	return scanStrings(rows)
}

func oneLine(q string) string { return strings.Join(strings.Fields(q), " ") }
