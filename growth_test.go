package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"folio/app"
	"folio/store"
	"folio/web/client"
)

// purgeStarted tells when the janitor's job retention begins.
type purgeStarted struct {
	app.JobStore
	once    *sync.Once
	started chan struct{}
}

func (p purgeStarted) PurgeJobs(ctx context.Context, completedBefore, failedBefore time.Time) (app.SweepStats, error) {
	p.once.Do(func() { close(p.started) })
	return p.JobStore.PurgeJobs(ctx, completedBefore, failedBefore)
}

// TestShutdownDuringRetention stops the server while the start-up janitor
// purges a grown history (issue 19: SIGTERM waited for the whole pass,
// minutes at 1M jobs, until kill -9). Close returns within the shutdown
// grace, and the pass says it stopped part way.
func TestShutdownDuringRetention(t *testing.T) {
	if testing.Short() {
		t.Skip("grows 60,000 jobs")
	}
	data := t.TempDir()
	db, err := store.Open(t.Context(), filepath.Join(data, "folio.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Grow(t.Context(), db, store.GrowOptions{Jobs: 60_000, Teams: 10, Days: 90, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	started := make(chan struct{})
	testHookDocuments = func(s *app.DocumentService) { s.Jobs = purgeStarted{s.Jobs, &sync.Once{}, started} }
	defer func() { testHookDocuments = nil }()
	var logs syncBuffer
	m := &Main{Config: Config{Data: data}, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	const grace = 3 * time.Second
	startMain(t, m, func(c *Config) { c.ShutdownGrace = grace })
	select {
	case <-started:
	case <-time.After(time.Minute):
		t.Fatal("the janitor did not start")
	}
	time.Sleep(20 * time.Millisecond) // a step or two
	t0 := time.Now()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d > grace {
		t.Fatalf("Close took %v, more than the %v grace", d, grace)
	}
	var line string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "janitor: job retention") {
			line = l
		}
	}
	if !strings.Contains(line, "context canceled") || !strings.Contains(line, "transactions=") {
		t.Fatalf("the retention pass did not stop part way; its line: %q", line)
	}
}

// TestGrowthBenchReportsSteps runs `folio bench growth --maintenance` on a
// small grown data directory: its JSON has the distribution of every
// maintenance step's duration by kind, and the steps it counts are those
// the janitor's log line reports.
func TestGrowthBenchReportsSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("grows 5,000 jobs")
	}
	data := filepath.Join(t.TempDir(), "grown")
	var out, errs strings.Builder
	if err := grow(t.Context(), data, store.GrowOptions{Jobs: 5_000, Teams: 3, Days: 60, Seed: 2}, &out, &errs); err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(t.TempDir(), "server.log")
	out.Reset()
	if err := bench(t.Context(), []string{"growth", "--data", data, "--requests", "1", "--only", "no endpoint", "--maintenance", "--log", logFile, "--json"},
		&out, &errs); err != nil {
		t.Fatal(err, errs.String())
	}
	var res client.GrowthResult
	if err := json.Unmarshal([]byte(out.String()), &res); err != nil {
		t.Fatal(err, out.String())
	}
	steps := map[string]client.StepFigures{}
	for _, s := range res.Steps {
		steps[s.Kind] = s
		if s.N == 0 || s.MaxMs < s.P99ms || s.P99ms < s.P50ms || s.StmtMax > s.MaxMs || s.Over50 > s.N || s.Over50Statements > s.Over50 {
			t.Fatalf("step figures: %+v", s)
		}
	}
	raw, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`msg="janitor: job retention".* jobs=(\d+) transactions=(\d+)`).FindStringSubmatch(string(raw))
	if line == nil {
		t.Fatalf("no retention line in the log:\n%s", raw)
	}
	jobs, _ := strconv.Atoi(line[1])
	txs, _ := strconv.Atoi(line[2])
	if j := steps["jobs"]; j.Rows != jobs || jobs == 0 || j.N+steps["batches"].N != txs {
		t.Fatalf("steps %+v; the log says %d jobs in %d transactions", res.Steps, jobs, txs)
	}
}
