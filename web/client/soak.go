package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// SoakRun is a whole soak run: a server process, a webhook receiver and the
// load (docs/reliability.md).
type SoakRun struct {
	Binary      string // the folio binary to run as the server
	Examples    string // directory with invoice.json and invoice.vars.json
	Duration    time.Duration
	Concurrency int
	Teams       int
	JSON        bool      // report as JSON instead of text
	Out, Log    io.Writer // report; progress
	// GenerateOnly makes every request a synchronous PDF generate of the
	// example invoice instead of the mix.
	GenerateOnly bool
	// Idle, when not 0, is how long the server's RSS is sampled after the
	// load and its checks, with no request (issue 24: back under 50 MB
	// within a minute).
	Idle time.Duration
}

// RunSoak starts r.Binary as a server on a temporary data directory (scale
// plan, no rate limits, webhooks to a local receiver), drives it with Soak
// and writes the report. Its error says when the run failed its checks. The
// server's log goes to folio-soak-server.log in the temporary directory.
func RunSoak(ctx context.Context, r SoakRun) error {
	data, err := os.MkdirTemp("", "folio-soak-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(data)
	rcv, err := StartReceiver()
	if err != nil {
		return err
	}
	defer rcv.Close()
	caFile := filepath.Join(data, "receiver-ca.pem")
	if err := os.WriteFile(caFile, rcv.CAPEM, 0o600); err != nil {
		return err
	}
	logf, err := os.Create(filepath.Join(os.TempDir(), "folio-soak-server.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	p, err := StartProcess(r.Binary, data, logf, "--default-plan", "scale", "--rate-limits", "off", "--webhook-allow-private", "--webhook-ca", caFile)
	if err != nil {
		return err
	}
	defer p.Stop()
	c, err := p.Client()
	if err != nil {
		return err
	}
	def, vars, err := LoadExample(r.Examples)
	if err != nil {
		return err
	}
	rep, err := Soak(ctx, SoakConfig{
		Client: c, PID: p.Cmd.Process.Pid, Teams: r.Teams, Concurrency: r.Concurrency, Duration: r.Duration, Template: def, Vars: vars,
		Verify:  func(email string) error { return p.Admin("verify-email", "--email", email) },
		HookURL: rcv.URL, Delivered: rcv.Delivered, Log: r.Log, GenerateOnly: r.GenerateOnly,
	})
	if err != nil {
		return err
	}
	if r.Idle > 0 {
		rep.Idle = sampleIdle(ctx, p.Cmd.Process.Pid, r.Idle, r.Log)
	}
	if r.JSON {
		enc := json.NewEncoder(r.Out)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
	} else {
		WriteSoak(r.Out, rep)
	}
	if !rep.Passed {
		return fmt.Errorf("soak failed: %v", rep.Problems)
	}
	return nil
}

// SoakConfig drives Soak against a server running in another process.
type SoakConfig struct {
	Client      *Client
	PID         int // the server process, for RSS and file descriptors
	Teams       int
	Concurrency int
	Duration    time.Duration
	Template    map[string]any // a template producing pdf and xlsx
	Vars        map[string]any
	// Verify marks an account's email verified (needed for webhooks).
	Verify func(email string) error
	// HookURL receives the webhooks; Delivered reports the event ids it got
	// per job id.
	HookURL   string
	Delivered func() map[string][]string
	Log       io.Writer
	// GenerateOnly makes every request a synchronous PDF generate.
	GenerateOnly bool
}

// SoakReport is the outcome of a soak run.
type SoakReport struct {
	Seconds          float64        `json:"seconds"`
	Requests         int64          `json:"requests"`
	RequestsPerSec   float64        `json:"requestsPerSecond"`
	ByStatus         map[string]int `json:"byStatus"`
	ServerErrors     int            `json:"serverErrors"`
	P50ms            float64        `json:"p50Ms"`
	P99ms            float64        `json:"p99Ms"`
	JobsAccepted     int            `json:"jobsAccepted"`
	JobsCompleted    int            `json:"jobsCompleted"`
	JobsLost         int            `json:"jobsLost"`
	WebhooksMissing  int            `json:"webhookEventsMissing"`
	WebhookDupes     int            `json:"webhookDuplicateDeliveries"`
	RSSFirstHalfMB   float64        `json:"rssFirstHalfMaxMB"`
	RSSSecondHalfMB  float64        `json:"rssSecondHalfMaxMB"`
	FDsFirstHalf     int            `json:"fdsFirstHalfMax"`
	FDsSecondHalf    int            `json:"fdsSecondHalfMax"`
	Samples          []Sample       `json:"samples"`
	Passed           bool           `json:"passed"`
	Problems         []string       `json:"problems,omitempty"`
	GoroutinesFirst  int            `json:"goroutinesFirstHalfMax,omitempty"`
	GoroutinesSecond int            `json:"goroutinesSecondHalfMax,omitempty"`
	// Idle is the server's RSS after the load, every 5 s (--idle).
	Idle []Sample `json:"idle,omitempty"`
}

// sampleIdle reads a process's RSS every 5 s for d, the first reading at
// once (the load's end).
func sampleIdle(ctx context.Context, pid int, d time.Duration, log io.Writer) []Sample {
	var out []Sample
	start := time.Now()
	for {
		s := Sample{At: time.Since(start).Seconds(), RSSMB: procRSSMB(pid), FDs: procFDs(pid)}
		out = append(out, s)
		if log != nil {
			fmt.Fprintf(log, "idle %3.0f s: server RSS %.1f MB\n", s.At, s.RSSMB)
		}
		if time.Since(start) >= d {
			return out
		}
		select {
		case <-ctx.Done():
			return out
		case <-time.After(min(5*time.Second, d-time.Since(start))):
		}
	}
}

// Sample is one reading of the server process.
type Sample struct {
	At         float64 `json:"at"`
	RSSMB      float64 `json:"rssMB"`
	FDs        int     `json:"fds"`
	Goroutines int     `json:"goroutines,omitempty"`
}

type soakTeam struct {
	api, jwt *Client
	tpl      string
}

// Soak runs the mixed load and then checks that every accepted job ended
// completed exactly once, with its webhook delivered.
func Soak(ctx context.Context, cfg SoakConfig) (*SoakReport, error) {
	logf := func(format string, args ...any) {
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, format+"\n", args...)
		}
	}
	var teams []*soakTeam
	for i := 0; i < cfg.Teams; i++ {
		email := fmt.Sprintf("soak-%d-%d@example.com", time.Now().UnixNano(), i)
		sess, err := cfg.Client.Signup(ctx, email, "soak password", fmt.Sprintf("Soak %d", i))
		if err != nil {
			return nil, fmt.Errorf("signup: %w", err)
		}
		if err := cfg.Verify(email); err != nil {
			return nil, err
		}
		jwt := cfg.Client.WithToken(sess.AccessToken)
		key, err := jwt.CreateKey(ctx, "soak")
		if err != nil {
			return nil, fmt.Errorf("key: %w", err)
		}
		tpl, err := jwt.CreateTemplate(ctx, cfg.Template)
		if err != nil {
			return nil, fmt.Errorf("template: %w", err)
		}
		api := cfg.Client.WithToken(key)
		if err := api.Do(ctx, "POST", "/api/v1/webhook-subscriptions", map[string]any{"url": cfg.HookURL, "events": []string{"document.generated", "document.failed"}}, nil); err != nil {
			return nil, fmt.Errorf("subscription: %w", err)
		}
		teams = append(teams, &soakTeam{api: api, jwt: jwt, tpl: tpl})
	}
	logf("soak: %d teams ready, running %s with %d clients", len(teams), cfg.Duration, cfg.Concurrency)

	var (
		mu       sync.Mutex
		lat      []time.Duration
		byStatus = map[string]int{}
		accepted = map[string]*soakTeam{}
		requests atomic.Int64
	)
	record := func(d time.Duration, status int) {
		mu.Lock()
		lat = append(lat, d)
		byStatus[strconv.Itoa(status)]++
		mu.Unlock()
		requests.Add(1)
	}
	statusOf := func(err error) int {
		if err == nil {
			return 200
		}
		if e, ok := err.(*Error); ok {
			return e.StatusCode
		}
		return 599 // transport error
	}
	start := time.Now()
	var samples []Sample
	sampleDone := make(chan struct{})
	go func() {
		defer close(sampleDone)
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for time.Since(start) < cfg.Duration {
			s := Sample{At: time.Since(start).Seconds(), RSSMB: procRSSMB(cfg.PID), FDs: procFDs(cfg.PID)}
			s.Goroutines = goroutines(ctx, teams[0].jwt)
			mu.Lock()
			samples = append(samples, s)
			mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	deadline := start.Add(cfg.Duration)
	var wg sync.WaitGroup
	for w := 0; w < cfg.Concurrency; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), uint64(start.UnixNano())))
			var mine []string
			for time.Now().Before(deadline) && ctx.Err() == nil {
				tm := teams[rng.IntN(len(teams))]
				t0 := time.Now()
				p := rng.IntN(100)
				if cfg.GenerateOnly {
					p = 0
				}
				switch {
				case p < 45, p >= 45 && p < 60:
					format := "pdf"
					if p >= 45 {
						format = "xlsx"
					}
					async := rng.IntN(2) == 0 && !cfg.GenerateOnly
					j, err := tm.api.Generate(ctx, tm.tpl, format, cfg.Vars, async)
					record(time.Since(t0), statusOf(err))
					if err == nil {
						mu.Lock()
						accepted[j.JobID] = tm
						mu.Unlock()
						mine = append(mine, j.JobID)
						// Closed loop: an async client polls its job to the end,
						// as integrations do, so load follows capacity.
						for async && j.Status != "completed" && j.Status != "failed" && ctx.Err() == nil {
							time.Sleep(20 * time.Millisecond)
							t1 := time.Now()
							err := tm.api.Do(ctx, "GET", "/api/v1/documents/jobs/"+j.JobID, nil, j)
							record(time.Since(t1), statusOf(err))
							if err != nil {
								break
							}
						}
					}
				case p < 65:
					vars := make([]any, 10)
					for i := range vars {
						vars[i] = cfg.Vars
					}
					b, err := tm.api.GenerateBatch(ctx, tm.tpl, "pdf", vars)
					record(time.Since(t0), statusOf(err))
					if err == nil {
						var full Batch
						for ctx.Err() == nil {
							t1 := time.Now()
							err := tm.api.Do(ctx, "GET", "/api/v1/documents/batches/"+b.BatchID, nil, &full)
							record(time.Since(t1), statusOf(err))
							if err != nil || full.Status != "processing" {
								break
							}
							time.Sleep(50 * time.Millisecond)
						}
						mu.Lock()
						for _, d := range full.Documents {
							accepted[d.JobID] = tm
						}
						mu.Unlock()
					}
				case p < 85:
					if len(mine) == 0 {
						continue
					}
					var j Job
					err := tm.api.Do(ctx, "GET", "/api/v1/documents/jobs/"+mine[rng.IntN(len(mine))], nil, &j)
					if e, ok := err.(*Error); ok && e.StatusCode == 404 {
						err = nil // another team's job: 404 is right
					}
					record(time.Since(t0), statusOf(err))
				default:
					err := tm.api.Do(ctx, "GET", "/api/v1/templates/"+tm.tpl, nil, nil)
					record(time.Since(t0), statusOf(err))
				}
			}
		}(w)
	}
	wg.Wait()
	<-sampleDone
	elapsed := time.Since(start)
	logf("soak: load done after %s, %d requests; waiting for jobs and webhooks", elapsed.Round(time.Second), requests.Load())

	r := &SoakReport{Seconds: elapsed.Seconds(), Requests: requests.Load(), ByStatus: byStatus, Samples: samples, JobsAccepted: len(accepted)}
	r.RequestsPerSec = round(float64(r.Requests)/elapsed.Seconds(), 1)
	for code, n := range byStatus {
		if c, _ := strconv.Atoi(code); c >= 500 {
			r.ServerErrors += n
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	r.P50ms, r.P99ms = pct(lat, 0.5), pct(lat, 0.99)

	// Every accepted job ends completed: per team, the completed count must
	// reach the accepted count (nothing lost), never exceed it (nothing
	// doubled), with no job failed or left pending.
	perTeam := map[*soakTeam]int{}
	for _, tm := range accepted {
		perTeam[tm]++
	}
	wait := time.Now().Add(5 * time.Minute)
	for tm, want := range perTeam {
		count := func(status string) int {
			var l struct {
				Meta struct {
					Total int `json:"total"`
				} `json:"meta"`
			}
			if err := tm.api.Do(ctx, "GET", "/api/v1/documents/jobs?limit=1&status="+status, nil, &l); err != nil {
				return -1
			}
			return l.Meta.Total
		}
		for {
			done := count("completed")
			if done == want {
				r.JobsCompleted += done
				break
			}
			if done > want {
				r.Problems = append(r.Problems, fmt.Sprintf("a team has %d completed jobs for %d accepted", done, want))
				r.JobsCompleted += done
				break
			}
			if time.Now().After(wait) || count("failed") > 0 {
				r.JobsLost += want - done
				r.JobsCompleted += done
				r.Problems = append(r.Problems, fmt.Sprintf("a team has %d of %d jobs completed (%d failed, %d pending)", done, want, count("failed"), count("pending")))
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// Every job's document.generated arrived, once per event id.
	deadline = time.Now().Add(2 * time.Minute)
	for {
		got := cfg.Delivered()
		missing, dupes := 0, 0
		for id := range accepted {
			evs := got[id]
			if len(evs) == 0 {
				missing++
			}
			seen := map[string]bool{}
			for _, e := range evs {
				if seen[e] {
					dupes++
				}
				seen[e] = true
			}
		}
		r.WebhooksMissing, r.WebhookDupes = missing, dupes
		if missing == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	half := cfg.Duration.Seconds() / 2
	for _, s := range samples {
		if s.At < half {
			r.RSSFirstHalfMB, r.FDsFirstHalf, r.GoroutinesFirst = max(r.RSSFirstHalfMB, s.RSSMB), max(r.FDsFirstHalf, s.FDs), max(r.GoroutinesFirst, s.Goroutines)
		} else {
			r.RSSSecondHalfMB, r.FDsSecondHalf, r.GoroutinesSecond = max(r.RSSSecondHalfMB, s.RSSMB), max(r.FDsSecondHalf, s.FDs), max(r.GoroutinesSecond, s.Goroutines)
		}
	}
	if r.ServerErrors > 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("%d server errors", r.ServerErrors))
	}
	if r.WebhooksMissing > 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("%d jobs without a delivered webhook", r.WebhooksMissing))
	}
	// Flat: the second half's peak within 15% (+10 MB) of the first half's.
	if r.RSSSecondHalfMB > r.RSSFirstHalfMB*1.15+10 {
		r.Problems = append(r.Problems, fmt.Sprintf("RSS grew: %.1f MB then %.1f MB", r.RSSFirstHalfMB, r.RSSSecondHalfMB))
	}
	if r.FDsSecondHalf > r.FDsFirstHalf+20 {
		r.Problems = append(r.Problems, fmt.Sprintf("file descriptors grew: %d then %d", r.FDsFirstHalf, r.FDsSecondHalf))
	}
	if r.GoroutinesFirst > 0 && r.GoroutinesSecond > r.GoroutinesFirst+50 {
		r.Problems = append(r.Problems, fmt.Sprintf("goroutines grew: %d then %d", r.GoroutinesFirst, r.GoroutinesSecond))
	}
	r.Passed = len(r.Problems) == 0 && r.JobsLost == 0
	return r, nil
}

func procRSSMB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			if f := strings.Fields(line); len(f) >= 2 {
				n, _ := strconv.ParseFloat(f[1], 64)
				return round(n/1024, 1)
			}
		}
	}
	return 0
}

func procFDs(pid int) int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0
	}
	return len(ents)
}

// goroutines reads go_goroutines from /metrics when the server exposes it
// (loopback without a token); 0 otherwise.
func goroutines(ctx context.Context, c *Client) int {
	req, err := http.NewRequestWithContext(ctx, "GET", c.BaseURL+"/metrics", nil)
	if err != nil {
		return 0
	}
	res, err := c.HTTP.Do(req)
	if err != nil {
		return 0
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "go_goroutines ") {
			n, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(line, "go_goroutines ")), 64)
			return int(n)
		}
	}
	return 0
}

// WriteSoak prints a soak report.
func WriteSoak(w io.Writer, r *SoakReport) {
	fmt.Fprintf(w, "duration %.0f s, %d requests (%.1f/s), statuses %v\n", r.Seconds, r.Requests, r.RequestsPerSec, r.ByStatus)
	fmt.Fprintf(w, "latency p50 %.1f ms, p99 %.1f ms; 5xx: %d\n", r.P50ms, r.P99ms, r.ServerErrors)
	fmt.Fprintf(w, "jobs accepted %d, completed %d, lost %d; webhook events missing %d, duplicate deliveries %d\n",
		r.JobsAccepted, r.JobsCompleted, r.JobsLost, r.WebhooksMissing, r.WebhookDupes)
	fmt.Fprintf(w, "server RSS max %.1f MB (first half) / %.1f MB (second half); fds %d / %d; goroutines %d / %d\n",
		r.RSSFirstHalfMB, r.RSSSecondHalfMB, r.FDsFirstHalf, r.FDsSecondHalf, r.GoroutinesFirst, r.GoroutinesSecond)
	if n := len(r.Idle); n > 0 {
		fmt.Fprintf(w, "server RSS at the load's end %.1f MB, after %.0f s idle %.1f MB\n", r.Idle[0].RSSMB, r.Idle[n-1].At, r.Idle[n-1].RSSMB)
	}
	if r.Passed {
		fmt.Fprintln(w, "PASS")
	} else {
		fmt.Fprintf(w, "FAIL: %v\n", r.Problems)
	}
}
