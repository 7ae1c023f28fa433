package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

// GrowthData is what `folio admin grow` wrote (its grow.json): the big
// team and how to act as its owner.
type GrowthData struct {
	BigTeamID      string   `json:"bigTeamId"`
	OwnerEmail     string   `json:"ownerEmail"`
	Password       string   `json:"password"`
	APIKey         string   `json:"apiKey"`
	TemplateIDs    []string `json:"templateIds"`
	BatchID        string   `json:"batchId"`
	SubscriptionID string   `json:"subscriptionId"`
	JobID          string   `json:"jobId"`
}

// GrowthConfig drives Growth.
type GrowthConfig struct {
	Client   *Client // unauthenticated client of the server under test
	Data     GrowthData
	Requests int // timed requests per endpoint, after 3 untimed ones
	// Only, when set, keeps the endpoints whose name contains it.
	Only string
	// Maintenance, when set, runs the janitor's tasks once; Growth times
	// writes while it runs. It deletes what retention says, so it runs last.
	Maintenance func(ctx context.Context) error
	// WriteTimeout bounds each write timed during maintenance.
	WriteTimeout time.Duration
	Progress     func(name string)
}

// Latency is one endpoint's figures.
type Latency struct {
	Name       string  `json:"name"`
	Path       string  `json:"path"`
	N          int     `json:"n"`
	P50ms      float64 `json:"p50Ms"`
	P95ms      float64 `json:"p95Ms"`
	MaxMs      float64 `json:"maxMs"`
	Errors     int     `json:"errors"`
	FirstError string  `json:"firstError,omitempty"`
	// IO is the process's I/O per request (Linux's /proc/self/io, over the
	// timed requests and the untimed ones before them). Server and client
	// share the process, so the characters and calls include the
	// requests' TLS traffic on the loopback; ReadBytes and WriteBytes are
	// what reached the storage layer.
	IO *IOPerRequest `json:"io,omitempty"`
}

// IOPerRequest is /proc/self/io's counters divided by the requests.
type IOPerRequest struct {
	RChar      float64 `json:"rchar"`
	WChar      float64 `json:"wchar"`
	SyscR      float64 `json:"syscr"`
	SyscW      float64 `json:"syscw"`
	ReadBytes  float64 `json:"readBytes"`
	WriteBytes float64 `json:"writeBytes"`
	// CPUms is the process's CPU time (user and system, /proc/self/stat,
	// in clock ticks of 10 ms) per request.
	CPUms float64 `json:"cpuMs"`
}

// procIO reads /proc/self/io (nil where there is none).
func procIO() map[string]float64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return nil
	}
	m := map[string]float64{}
	// utime and stime, the 14th and 15th fields, after the command in
	// parentheses.
	if st, err := os.ReadFile("/proc/self/stat"); err == nil {
		if i := strings.LastIndexByte(string(st), ')'); i > 0 {
			if f := strings.Fields(string(st[i+1:])); len(f) > 13 {
				u, _ := strconv.ParseFloat(f[11], 64)
				k, _ := strconv.ParseFloat(f[12], 64)
				m["ticks"] = u + k
			}
		}
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err == nil {
			m[k] = n
		}
	}
	return m
}

// ioDelta is the counters from a to b per request.
func ioDelta(a, b map[string]float64, n int) *IOPerRequest {
	if a == nil || b == nil || n == 0 {
		return nil
	}
	d := func(k string) float64 { return round((b[k]-a[k])/float64(n), 1) }
	return &IOPerRequest{RChar: d("rchar"), WChar: d("wchar"), SyscR: d("syscr"), SyscW: d("syscw"),
		ReadBytes: d("read_bytes"), WriteBytes: d("write_bytes"), CPUms: round((b["ticks"]-a["ticks"])*10/float64(n), 2)}
}

// ExportFigures are one month's CSV export.
type ExportFigures struct {
	FirstByteMs float64 `json:"firstByteMs"`
	Seconds     float64 `json:"seconds"`
	MB          float64 `json:"mb"`
	Rows        int     `json:"rows"`
	// RSSGrowthMB is how much the process's resident set grew during the
	// export (server and client share the process).
	RSSGrowthMB float64 `json:"rssGrowthMB"`
	Error       string  `json:"error,omitempty"`
}

// MaintenanceFigures are a janitor pass and the writes timed meanwhile.
type MaintenanceFigures struct {
	Seconds float64   `json:"seconds"`
	Error   string    `json:"error,omitempty"`
	Writes  []Latency `json:"writes"`
}

// GrowthResult is the growth benchmark's answer.
type GrowthResult struct {
	Reads       []Latency           `json:"reads"`
	Export      *ExportFigures      `json:"export,omitempty"`
	Maintenance *MaintenanceFigures `json:"maintenance,omitempty"`
	// Steps are the durations of the maintenance steps and backfill chunks
	// that ran while the server was up, by kind.
	Steps []StepFigures `json:"steps,omitempty"`
	// SlowSteps are the steps that held the writer over 50 ms, each with
	// what explains it.
	SlowSteps []SlowStep `json:"slowSteps,omitempty"`
}

// SlowStep is one maintenance step that held the writer over 50 ms: when
// it ended, its rows, the writer's hold and its statements' time, the
// writer thread's CPU time in the statements, the blocks it read from
// storage, the times the kernel switched it out, the garbage collections
// meanwhile, and its phases.
type SlowStep struct {
	Kind         string    `json:"kind"`
	Ended        time.Time `json:"ended"`
	Rows         int       `json:"rows"`
	HeldMs       float64   `json:"heldMs"`
	StatementsMs float64   `json:"statementsMs"`
	CPUMs        float64   `json:"cpuMs"`
	InBlocks     int64     `json:"inBlocks"`
	Preempted    int64     `json:"preempted"`
	GCs          uint64    `json:"gcs"`
	Detail       string    `json:"detail,omitempty"`
	Interrupted  bool      `json:"interrupted"`
	// WALFrames and WALBackfilled are the WAL's frames and those copied
	// into the database when the step began (the checkpoint after the
	// step before it).
	WALFrames     int `json:"walFrames"`
	WALBackfilled int `json:"walBackfilled"`
	// Kernel is what the writer's thread did past 25 ms (store.StepTime).
	Kernel []string `json:"kernel,omitempty"`
	// Trace names the execution trace of the seconds before the step's
	// end (bench growth --trace-slow).
	Trace string `json:"trace,omitempty"`
}

// Ms is a duration in milliseconds to two decimals.
func Ms(d time.Duration) float64 { return round(float64(d.Microseconds())/1000, 2) }

// StepFigures describe the maintenance steps (or backfill chunks) of one
// kind: how long each held SQLite's writer, from its first statement to
// its commit, and how long its own statements took (the rest is the
// commit and the calls of requests grouped into the same transaction).
type StepFigures struct {
	Kind    string  `json:"kind"`
	N       int     `json:"n"`
	Rows    int     `json:"rows"`
	Over50  int     `json:"over50ms"`
	P50ms   float64 `json:"p50Ms"`
	P99ms   float64 `json:"p99Ms"`
	MaxMs   float64 `json:"maxMs"`
	TotalS  float64 `json:"totalSeconds"` // the sum of the held times
	StmtP99 float64 `json:"statementsP99Ms"`
	StmtMax float64 `json:"statementsMaxMs"`
	// Over50Statements counts the steps over 50 ms whose own statements
	// took more than 50 ms too (the others were slow in their commit).
	Over50Statements int `json:"over50msByStatements"`
	// Interrupted counts the steps stopped at their deadline and rolled
	// back (their rows deleted by smaller steps after them).
	Interrupted int `json:"interrupted"`
	// WALMaxFrames is the longest WAL a checkpoint after a step found;
	// CheckpointsShort counts those that could not copy all of it (a
	// reader still needed frames, or the checkpoint met another), and
	// CheckpointsBusy those that met another checkpoint.
	WALMaxFrames     int `json:"walMaxFrames"`
	CheckpointsShort int `json:"checkpointsShort"`
	CheckpointsBusy  int `json:"checkpointsBusy"`
}

// StepDurations computes a kind's figures from its steps' held and
// statement times and rows.
func StepDurations(kind string, held, stmts []time.Duration, rows int) StepFigures {
	f := StepFigures{Kind: kind, N: len(held), Rows: rows}
	for i, d := range held {
		f.TotalS += d.Seconds()
		if d > 50*time.Millisecond {
			f.Over50++
			if stmts[i] > 50*time.Millisecond {
				f.Over50Statements++
			}
		}
	}
	f.TotalS = round(f.TotalS, 2)
	h := append([]time.Duration{}, held...)
	s := append([]time.Duration{}, stmts...)
	sort.Slice(h, func(i, j int) bool { return h[i] < h[j] })
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	f.P50ms, f.P99ms = pct(h, 0.50), pct(h, 0.99)
	f.StmtP99 = pct(s, 0.99)
	if len(h) > 0 {
		f.MaxMs = round(float64(h[len(h)-1].Microseconds())/1000, 2)
		f.StmtMax = round(float64(s[len(s)-1].Microseconds())/1000, 2)
	}
	return f
}

// growthEndpoint is one timed request; who says which credentials it uses.
type growthEndpoint struct {
	name, who, method, path string
	body                    any
}

// Growth times every API read endpoint and dashboard page, a synchronous
// generate and one month's export on a server over a grown data
// directory, then (with cfg.Maintenance) writes during a janitor pass.
func Growth(ctx context.Context, cfg GrowthConfig) (*GrowthResult, error) {
	d := cfg.Data
	c := cfg.Client
	sess, err := c.Login(ctx, d.OwnerEmail, d.Password)
	if err != nil {
		return nil, fmt.Errorf("login: %w", err)
	}
	jwt := c.WithToken(sess.AccessToken)
	api := c.WithToken(d.APIKey)
	dash, err := newDashboardClient(ctx, c, d)
	if err != nil {
		return nil, err
	}
	var key struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := jwt.teamDo(ctx, d.BigTeamID, "GET", "/api/api-keys", nil, &key); err != nil || len(key.Data) == 0 {
		return nil, fmt.Errorf("keys: %v", err)
	}
	tpl := d.TemplateIDs[0]
	endpoints := []growthEndpoint{
		{"jobs list, first page", "api", "GET", "/api/v1/documents/jobs", nil},
		{"jobs list, page 100", "api", "GET", "/api/v1/documents/jobs?page=100", nil},
		{"jobs list, limit 100 page 1000", "api", "GET", "/api/v1/documents/jobs?page=1000&limit=100", nil},
		{"jobs by status (failed)", "api", "GET", "/api/v1/documents/jobs?status=failed", nil},
		{"jobs by template", "api", "GET", "/api/v1/documents/jobs?templateId=" + tpl, nil},
		{"jobs by status and template", "api", "GET", "/api/v1/documents/jobs?status=failed&templateId=" + tpl, nil},
		{"jobs by status and template, page 20", "api", "GET", "/api/v1/documents/jobs?status=completed&templateId=" + tpl + "&page=20", nil},
		{"job", "api", "GET", "/api/v1/documents/jobs/" + d.JobID, nil},
		{"batch of 100", "api", "GET", "/api/v1/documents/batches/" + d.BatchID, nil},
		{"queue stats", "api", "GET", "/api/v1/documents/queue/stats", nil},
		{"document analytics (30 days)", "api", "GET", "/api/v1/documents/analytics", nil},
		{"usage", "api", "GET", "/api/v1/analytics/usage", nil},
		{"templates", "api", "GET", "/api/v1/templates", nil},
		{"template", "api", "GET", "/api/v1/templates/" + tpl, nil},
		{"template analytics", "api", "GET", "/api/v1/templates/" + tpl + "/analytics", nil},
		{"webhook subscriptions", "api", "GET", "/api/v1/webhook-subscriptions", nil},
		{"webhook deliveries", "api", "GET", "/api/v1/webhook-subscriptions/" + d.SubscriptionID + "/deliveries", nil},
		{"dashboard wallet", "jwt", "GET", "/api/dashboard/analytics/wallet", nil},
		{"dashboard health", "jwt", "GET", "/api/dashboard/analytics/health", nil},
		{"dashboard insights", "jwt", "GET", "/api/dashboard/analytics/insights", nil},
		{"api keys", "jwt", "GET", "/api/api-keys", nil},
		{"api key stats", "jwt", "GET", "/api/api-keys/" + key.Data[0].ID + "/stats", nil},
		{"team activity", "jwt", "GET", "/api/teams/activity", nil},
		{"team members", "jwt", "GET", "/api/teams/members", nil},
		{"teams", "jwt", "GET", "/api/teams", nil},
		{"page: home", "dash", "GET", "/app/", nil},
		{"page: jobs", "dash", "GET", "/app/jobs", nil},
		{"page: jobs, page 100", "dash", "GET", "/app/jobs?page=100", nil},
		{"page: jobs, failed", "dash", "GET", "/app/jobs?status=failed", nil},
		{"page: job", "dash", "GET", "/app/jobs/" + d.JobID, nil},
		{"page: usage", "dash", "GET", "/app/usage", nil},
		{"page: templates", "dash", "GET", "/app/templates", nil},
		{"page: keys", "dash", "GET", "/app/keys", nil},
		{"page: key", "dash", "GET", "/app/keys/" + key.Data[0].ID, nil},
		{"page: webhooks", "dash", "GET", "/app/webhooks", nil},
		{"page: webhook", "dash", "GET", "/app/webhooks/" + d.SubscriptionID, nil},
		{"page: team", "dash", "GET", "/app/team", nil},
		{"generate (sync)", "api", "POST", "/api/v1/documents/generate",
			map[string]any{"templateId": tpl, "format": "pdf", "variables": map[string]any{"name": "Ada", "number": "INV-1"}}},
	}
	// The page after the 100,000th job by cursor, when the server has them.
	var deep struct {
		Meta struct {
			NextCursor string `json:"nextCursor"`
		} `json:"meta"`
	}
	if err := api.Do(ctx, "GET", "/api/v1/documents/jobs?page=1000&limit=100", nil, &deep); err == nil && deep.Meta.NextCursor != "" {
		endpoints = append(endpoints[:3:3], append([]growthEndpoint{{"jobs list, limit 100 by cursor after job 100,000", "api", "GET",
			"/api/v1/documents/jobs?limit=100&cursor=" + url.QueryEscape(deep.Meta.NextCursor), nil}}, endpoints[3:]...)...)
	}
	do := func(ctx context.Context, e growthEndpoint) error {
		switch e.who {
		case "api":
			return api.Do(ctx, e.method, e.path, e.body, nil)
		case "jwt":
			return jwt.teamDo(ctx, d.BigTeamID, e.method, e.path, e.body, nil)
		default:
			return dash.get(ctx, e.path)
		}
	}
	res := &GrowthResult{}
	n := max(cfg.Requests, 1)
	for _, e := range endpoints {
		if cfg.Only != "" && !strings.Contains(e.name, cfg.Only) {
			continue
		}
		if cfg.Progress != nil {
			cfg.Progress(e.name)
		}
		lat := Latency{Name: e.name, Path: e.path}
		var times []time.Duration
		io0 := procIO()
		for i := range n + 3 {
			t0 := time.Now()
			err := do(ctx, e)
			if i < 3 {
				continue
			}
			times = append(times, time.Since(t0))
			if err != nil {
				lat.Errors++
				if lat.FirstError == "" {
					lat.FirstError = err.Error()
				}
			}
		}
		lat.IO = ioDelta(io0, procIO(), n+3)
		res.Reads = append(res.Reads, figures(lat, times))
	}
	if cfg.Only == "" || strings.Contains("export", cfg.Only) {
		if cfg.Progress != nil {
			cfg.Progress("export")
		}
		res.Export = exportMonth(ctx, api)
	}
	if cfg.Maintenance != nil {
		if cfg.Progress != nil {
			cfg.Progress("maintenance")
		}
		res.Maintenance = maintenance(ctx, cfg, api, tpl)
	}
	return res, nil
}

// figures computes the percentiles of times.
func figures(l Latency, times []time.Duration) Latency {
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	l.N = len(times)
	l.P50ms, l.P95ms = pct(times, 0.50), pct(times, 0.95)
	if len(times) > 0 {
		l.MaxMs = round(float64(times[len(times)-1].Microseconds())/1000, 2)
	}
	return l
}

// teamDo is Do acting on team (X-Team-Id).
func (c *Client) teamDo(ctx context.Context, team, method, path string, body, out any) error {
	cp := *c
	cp.HTTP = &http.Client{Transport: teamHeader{team, c.HTTP.Transport}, Timeout: c.HTTP.Timeout}
	return cp.Do(ctx, method, path, body, out)
}

type teamHeader struct {
	team string
	next http.RoundTripper
}

func (t teamHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Team-Id", t.team)
	return t.next.RoundTrip(r)
}

// dashboardClient is a signed-in browser of the dashboard.
type dashboardClient struct {
	base string
	http *http.Client
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// newDashboardClient logs in to the dashboard and switches to the big team.
func newDashboardClient(ctx context.Context, c *Client, d GrowthData) (*dashboardClient, error) {
	jar, _ := cookiejar.New(nil)
	dc := &dashboardClient{base: c.BaseURL, http: &http.Client{Transport: c.HTTP.Transport, Jar: jar, Timeout: c.HTTP.Timeout}}
	page, err := dc.read(ctx, "GET", "/app/login", nil)
	if err != nil {
		return nil, err
	}
	m := csrfInput.FindStringSubmatch(page)
	if m == nil {
		return nil, errors.New("dashboard: no CSRF field on the login page")
	}
	if _, err := dc.read(ctx, "POST", "/app/login", url.Values{"csrf": {m[1]}, "email": {d.OwnerEmail}, "password": {d.Password}}); err != nil {
		return nil, err
	}
	page, err = dc.read(ctx, "GET", "/app/team", nil)
	if err != nil {
		return nil, err
	}
	if m = csrfInput.FindStringSubmatch(page); m == nil {
		return nil, errors.New("dashboard: login failed (no CSRF field on the team page)")
	}
	if _, err := dc.read(ctx, "POST", "/app/team/switch", url.Values{"csrf": {m[1]}, "team": {d.BigTeamID}}); err != nil {
		return nil, err
	}
	return dc, nil
}

func (dc *dashboardClient) read(ctx context.Context, method, path string, form url.Values) (string, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, dc.base+path, body)
	if err != nil {
		return "", err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := dc.http.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return "", err
	}
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s %s: %s", method, path, res.Status)
	}
	if strings.HasSuffix(res.Request.URL.Path, "/app/login") && path != "/app/login" {
		return "", fmt.Errorf("%s %s: sent to the login page", method, path)
	}
	return string(b), nil
}

func (dc *dashboardClient) get(ctx context.Context, path string) error {
	_, err := dc.read(ctx, "GET", path, nil)
	return err
}

// exportMonth downloads the CSV of the last 30 days of jobs, timing its
// first byte and its end, and the resident set's growth meanwhile.
func exportMonth(ctx context.Context, api *Client) *ExportFigures {
	end := time.Now().UTC()
	path := "/api/v1/documents/jobs/export?format=csv&startDate=" + end.AddDate(0, 0, -30).Format(time.DateOnly) + "&endDate=" + end.Format(time.DateOnly)
	out := &ExportFigures{}
	rss0 := RSSMB()
	stopRSS := sampleRSS()
	t0 := time.Now()
	res, err := api.get(ctx, path, api.Token)
	if err != nil {
		out.Error = err.Error()
		stopRSS()
		return out
	}
	defer res.Body.Close()
	buf := make([]byte, 64<<10)
	var total int64
	for {
		n, err := res.Body.Read(buf)
		if total == 0 && n > 0 {
			out.FirstByteMs = round(float64(time.Since(t0).Microseconds())/1000, 2)
		}
		total += int64(n)
		out.Rows += strings.Count(string(buf[:n]), "\n")
		if err == io.EOF {
			break
		} else if err != nil {
			out.Error = err.Error()
			break
		}
	}
	out.Seconds = round(time.Since(t0).Seconds(), 3)
	out.MB = round(float64(total)/(1<<20), 1)
	out.RSSGrowthMB = round(stopRSS()-rss0, 1)
	out.Rows-- // the header
	if res.StatusCode != http.StatusOK {
		out.Error = res.Status
	}
	return out
}

// maintenance runs cfg.Maintenance while two clients write: one updates a
// webhook subscription (one write transaction a request), the other
// generates documents synchronously (three).
func maintenance(ctx context.Context, cfg GrowthConfig, api *Client, tpl string) *MaintenanceFigures {
	out := &MaintenanceFigures{}
	timeout := cfg.WriteTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	done := make(chan struct{})
	writers := []struct {
		name string
		op   func(ctx context.Context, i int) error
	}{
		{"update a webhook subscription", func(ctx context.Context, i int) error {
			return api.Do(ctx, "PATCH", "/api/v1/webhook-subscriptions/"+cfg.Data.SubscriptionID, map[string]any{"description": fmt.Sprint("write ", i)}, nil)
		}},
		{"generate (sync)", func(ctx context.Context, i int) error {
			return api.Do(ctx, "POST", "/api/v1/documents/generate", map[string]any{"templateId": tpl, "format": "pdf",
				"variables": map[string]any{"name": "Ada", "number": fmt.Sprint("INV-", i)}}, nil)
		}},
	}
	var wg sync.WaitGroup
	out.Writes = make([]Latency, len(writers))
	for w, wr := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := Latency{Name: "during maintenance: " + wr.name}
			var times []time.Duration
			for i := 0; ; i++ {
				select {
				case <-done:
					out.Writes[w] = figures(lat, times)
					return
				default:
				}
				wctx, cancel := context.WithTimeout(ctx, timeout)
				t0 := time.Now()
				err := wr.op(wctx, i)
				times = append(times, time.Since(t0))
				cancel()
				if err != nil {
					lat.Errors++
					if lat.FirstError == "" {
						lat.FirstError = err.Error()
					}
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	time.Sleep(200 * time.Millisecond) // writes answer before the pass begins
	t0 := time.Now()
	if err := cfg.Maintenance(ctx); err != nil {
		out.Error = err.Error()
	}
	out.Seconds = round(time.Since(t0).Seconds(), 3)
	close(done)
	wg.Wait()
	return out
}

// WriteGrowthTable prints a growth result as aligned tables.
func WriteGrowthTable(w io.Writer, r *GrowthResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "endpoint\tn\tp50 ms\tp95 ms\tmax ms\terrors\t")
	rows := r.Reads
	if r.Maintenance != nil {
		rows = append(append([]Latency{}, rows...), r.Maintenance.Writes...)
	}
	for _, l := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.1f\t%d\t\n", l.Name, l.N, l.P50ms, l.P95ms, l.MaxMs, l.Errors)
	}
	tw.Flush()
	for _, l := range rows {
		if l.FirstError != "" {
			fmt.Fprintf(w, "%s: first error: %s\n", l.Name, l.FirstError)
		}
	}
	if e := r.Export; e != nil {
		fmt.Fprintf(w, "export, 30 days of CSV: first byte %.1f ms, %d rows, %.1f MB in %.2f s, resident set +%.1f MB %s\n",
			e.FirstByteMs, e.Rows, e.MB, e.Seconds, e.RSSGrowthMB, e.Error)
	}
	if m := r.Maintenance; m != nil {
		fmt.Fprintf(w, "maintenance pass: %.2f s %s\n", m.Seconds, m.Error)
	}
	if len(r.Steps) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "steps	n	rows	over 50 ms	(by statements)	p50 ms	p99 ms	max ms	statements p99 ms	statements max ms	")
		for _, f := range r.Steps {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t\n", f.Kind, f.N, f.Rows, f.Over50, f.Over50Statements,
				f.P50ms, f.P99ms, f.MaxMs, f.StmtP99, f.StmtMax)
		}
		tw.Flush()
	}
}
