package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"
)

// Op is one unit of bench work; it returns how many documents it produced.
type Op func(ctx context.Context) (docs int, err error)

// Result is one scenario's figures.
type Result struct {
	Scenario      string  `json:"scenario"`
	Concurrency   int     `json:"concurrency"`
	Ops           int     `json:"ops"`
	Documents     int     `json:"documents"`
	Errors        int     `json:"errors"`
	FirstError    string  `json:"firstError,omitempty"`
	Seconds       float64 `json:"seconds"`
	DocsPerSecond float64 `json:"docsPerSecond"`
	P50ms         float64 `json:"p50Ms"`
	P95ms         float64 `json:"p95Ms"`
	P99ms         float64 `json:"p99Ms"`
	CPUSecPerDoc  float64 `json:"cpuSecondsPerDocument"`
	PeakRSSMB     float64 `json:"peakRssMB"`
	// AllocKBPerDoc is the Go heap allocated per document and GCCycles the
	// collections the run caused, the whole process's (client included).
	AllocKBPerDoc  float64 `json:"allocKBPerDocument"`
	GCCycles       uint32  `json:"gcCycles"`
	GoroutinesPeak int     `json:"-"`
}

// Run calls op from concurrency goroutines until duration has passed (or,
// with maxOps > 0, until that many ops ran) and measures it. CPU time and
// RSS are the whole process's: when the server runs in the same process they
// include the client's share.
func Run(ctx context.Context, name string, concurrency int, duration time.Duration, maxOps int, op Op) Result {
	var (
		mu        sync.Mutex
		latencies []time.Duration
		docs      atomic.Int64
		errs      atomic.Int64
		ops       atomic.Int64
		firstErr  atomic.Value
	)
	stopRSS := sampleRSS()
	var mem0, mem1 runtime.MemStats
	runtime.ReadMemStats(&mem0)
	cpu0 := cpuTime()
	start := time.Now()
	deadline := start.Add(duration)
	var wg sync.WaitGroup
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var local []time.Duration
			for ctx.Err() == nil && time.Now().Before(deadline) {
				if maxOps > 0 && ops.Add(1) > int64(maxOps) {
					break
				} else if maxOps == 0 {
					ops.Add(1)
				}
				t0 := time.Now()
				n, err := op(ctx)
				local = append(local, time.Since(t0))
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				docs.Add(int64(n))
			}
			mu.Lock()
			latencies = append(latencies, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	runtime.ReadMemStats(&mem1)
	r := Result{Scenario: name, Concurrency: concurrency, Ops: len(latencies), Documents: int(docs.Load()), Errors: int(errs.Load()),
		Seconds: round(elapsed.Seconds(), 3), PeakRSSMB: round(stopRSS(), 1)}
	if v := firstErr.Load(); v != nil {
		r.FirstError = v.(string)
	}
	if r.Documents > 0 {
		r.DocsPerSecond = round(float64(r.Documents)/elapsed.Seconds(), 1)
		r.CPUSecPerDoc = round(cpu.Seconds()/float64(r.Documents), 6)
		r.AllocKBPerDoc = round(float64(mem1.TotalAlloc-mem0.TotalAlloc)/1024/float64(r.Documents), 1)
	}
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	r.GCCycles = mem1.NumGC - mem0.NumGC
	r.P50ms, r.P95ms, r.P99ms = pct(latencies, 0.50), pct(latencies, 0.95), pct(latencies, 0.99)
	return r
}

func pct(d []time.Duration, p float64) float64 {
	if len(d) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(d)))) - 1
	return round(float64(d[max(i, 0)].Microseconds())/1000, 2)
}

func round(v float64, places int) float64 {
	m := math.Pow(10, float64(places))
	return math.Round(v*m) / m
}

// sampleRSS samples the resident set every 20 ms (Linux /proc) and returns a
// function that stops and reports the peak in MB.
func sampleRSS() func() float64 {
	var peak atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if kb := rssKB(); kb > peak.Load() {
				peak.Store(kb)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() float64 { close(stop); <-done; return float64(peak.Load()) / 1024 }
}

// RSSMB is the current resident set in MB (0 where /proc is missing).
func RSSMB() float64 { return float64(rssKB()) / 1024 }

func rssKB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			if len(f) >= 2 {
				n, _ := strconv.ParseInt(f[1], 10, 64)
				return n
			}
		}
	}
	return 0
}

// WriteJSON prints results as indented JSON, with the date, CPUs and Go
// version they were measured with.
func WriteJSON(w io.Writer, rs []Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"date": time.Now().UTC().Format(time.RFC3339), "cpus": runtime.NumCPU(), "go": runtime.Version(), "results": rs})
}

// WriteTable prints results as an aligned table.
func WriteTable(w io.Writer, rs []Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tconc\tdocs\terrors\tseconds\tdocs/s\tp50 ms\tp95 ms\tp99 ms\tCPU ms/doc\talloc KB/doc\tGCs\tpeak RSS MB\t")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.2f\t%.1f\t%.2f\t%.2f\t%.2f\t%.3f\t%.1f\t%d\t%.1f\t\n", r.Scenario, r.Concurrency, r.Documents, r.Errors,
			r.Seconds, r.DocsPerSecond, r.P50ms, r.P95ms, r.P99ms, r.CPUSecPerDoc*1000, r.AllocKBPerDoc, r.GCCycles, r.PeakRSSMB)
	}
	tw.Flush()
	for _, r := range rs {
		if r.FirstError != "" {
			fmt.Fprintf(w, "%s: first error: %s\n", r.Scenario, r.FirstError)
		}
	}
	fmt.Fprintf(w, "(%s, %d CPUs, GOMAXPROCS %d)\n", runtime.Version(), runtime.NumCPU(), runtime.GOMAXPROCS(0))
}
