package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Scenario names of the bench (issue 12): a = invoice, b = batch,
// c = report, d = xlsx, e = render; f = polled (issue 24), run only when
// named.
var Scenarios = []string{"render", "invoice", "batch", "report", "xlsx"}

// ExtraScenarios are scenarios run only when --scenarios names them:
// polled sends each poll with the last ETag (as WaitBatch does),
// polled-plain without; paired runs render-only and the synchronous
// generate of the invoice in alternating slices (pairedOps).
var ExtraScenarios = []string{"polled", "polled-plain", "paired"}

// PairedSlice is how long each slice of the paired scenario runs one op.
const PairedSlice = time.Second

// Polled batches (issue 24): PolledBatches batches of 100 at once, each
// polled by its own client every PollInterval until it ends.
const (
	PolledBatches = 10
	PollInterval  = 10 * time.Millisecond
)

// BenchConfig drives Bench.
type BenchConfig struct {
	Client      *Client // unauthenticated client of the server under test
	Examples    string  // directory with invoice.json and invoice.vars.json
	Concurrency int
	Duration    time.Duration
	Scenarios   []string
	// RenderOnly builds the render-only op (no HTTP, no store) for a template.
	RenderOnly func(def json.RawMessage, vars map[string]any) (Op, error)
	// Fund gives the bench team enough credits for the run.
	Fund func(teamID string) error
	// Verify marks the bench account's email verified (webhooks need it).
	Verify func(email string) error
	// Hooks receives the webhooks that end the batch scenario's batches;
	// the server must trust its CA and allow its loopback address.
	Hooks *Receiver
	// Progress, when set, is told about each scenario as it starts.
	Progress func(name string)
	// Profile, when set, is the file a CPU profile of the scenarios (not
	// of their setup) is written to.
	Profile string
}

// Bench sets up an account, key and templates and runs the scenarios.
func Bench(ctx context.Context, cfg BenchConfig) ([]Result, error) {
	c := cfg.Client
	email := fmt.Sprintf("bench-%d@example.com", time.Now().UnixNano())
	sess, err := c.Signup(ctx, email, "bench password", "Bench")
	if err != nil {
		return nil, fmt.Errorf("signup: %w", err)
	}
	if cfg.Verify != nil {
		if err := cfg.Verify(email); err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
	}
	jwt := c.WithToken(sess.AccessToken)
	var key struct {
		PlainKey string `json:"plainKey"`
		TeamID   string `json:"teamId"`
	}
	if err := jwt.Do(ctx, "POST", "/api/api-keys", map[string]any{"name": "bench"}, &key); err != nil {
		return nil, fmt.Errorf("create key: %w", err)
	}
	if cfg.Fund != nil {
		if err := cfg.Fund(key.TeamID); err != nil {
			return nil, err
		}
	}
	api := c.WithToken(key.PlainKey)

	invoice, invoiceVars, err := loadInvoice(cfg.Examples)
	if err != nil {
		return nil, err
	}
	if cfg.Profile != "" {
		f, err := os.Create(cfg.Profile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, err
		}
		defer pprof.StopCPUProfile()
	}
	var results []Result
	for _, name := range cfg.Scenarios {
		if !slices.Contains(Scenarios, name) && !slices.Contains(ExtraScenarios, name) {
			return nil, fmt.Errorf("unknown scenario %q (%s)", name, strings.Join(append(slices.Clone(Scenarios), ExtraScenarios...), ", "))
		}
		if cfg.Progress != nil {
			cfg.Progress(name)
		}
		if name == "paired" {
			if cfg.RenderOnly == nil {
				return nil, errors.New("the paired scenario renders in process: not with --server")
			}
			render, err := cfg.RenderOnly(mustJSON(invoice), invoiceVars)
			if err != nil {
				return nil, err
			}
			id, err := jwt.CreateTemplate(ctx, named(invoice, "Invoice paired"))
			if err != nil {
				return nil, fmt.Errorf("invoice template: %w", err)
			}
			results = append(results, pairedOps(ctx, cfg.Concurrency, cfg.Duration,
				"e render-only invoice, paired", render, "a invoice (sync generate), paired", generateOp(api, id, "pdf", invoiceVars))...)
			continue
		}
		var op Op
		conc, maxOps := cfg.Concurrency, 0
		label := name
		switch name {
		case "render":
			raw, _ := json.Marshal(invoice)
			if op, err = cfg.RenderOnly(raw, invoiceVars); err != nil {
				return nil, err
			}
			label = "e render-only invoice"
		case "invoice":
			id, err := jwt.CreateTemplate(ctx, invoice)
			if err != nil {
				return nil, fmt.Errorf("invoice template: %w", err)
			}
			op = generateOp(api, id, "pdf", invoiceVars)
			label = "a invoice (sync generate)"
		case "batch":
			id, err := jwt.CreateTemplate(ctx, named(invoice, "Invoice batch"))
			if err != nil {
				return nil, fmt.Errorf("batch template: %w", err)
			}
			vars := make([]any, 100)
			for i := range vars {
				vars[i] = invoiceVars
			}
			// Time to batch.completed: the webhook, as a client would
			// learn it (issue 12), else polling the batch every 5 ms.
			if cfg.Hooks != nil {
				if err := api.Do(ctx, "POST", "/api/v1/webhook-subscriptions", map[string]any{"url": cfg.Hooks.URL, "events": []string{"batch.completed", "batch.failed"}}, nil); err != nil {
					return nil, fmt.Errorf("webhook subscription: %w", err)
				}
			}
			op = func(ctx context.Context) (int, error) {
				b, err := api.GenerateBatch(ctx, id, "pdf", vars)
				if err != nil {
					return 0, err
				}
				if cfg.Hooks != nil {
					ev, err := cfg.Hooks.WaitBatchEvent(ctx, b.BatchID, time.Minute)
					if err != nil {
						return 0, err
					}
					if ev != "batch.completed" {
						return 0, fmt.Errorf("batch %s: %s", b.BatchID, ev)
					}
				}
				b, err = api.WaitBatch(ctx, b.BatchID, 5*time.Millisecond)
				if err != nil {
					return 0, err
				}
				if b.CompletedDocuments != 100 {
					return b.CompletedDocuments, fmt.Errorf("batch: %d completed, %d failed", b.CompletedDocuments, b.FailedDocuments)
				}
				return 100, nil
			}
			conc = 1
			label = "b batch of 100 (to its end)"
		case "polled", "polled-plain":
			id, err := jwt.CreateTemplate(ctx, named(invoice, "Invoice "+name+" batches"))
			if err != nil {
				return nil, fmt.Errorf("polled template: %w", err)
			}
			op = polledOp(api, id, invoiceVars, name == "polled")
			conc = 1
			label = fmt.Sprintf("f %d batches of 100, each polled every %s", PolledBatches, PollInterval)
			if name == "polled-plain" {
				label += " (no ETag)"
			}
		case "report":
			id, vars, pages, err := reportTemplate(ctx, jwt)
			if err != nil {
				return nil, err
			}
			op = generateOp(api, id, "pdf", vars)
			label = fmt.Sprintf("c report (%d pages)", pages)
		case "xlsx":
			id, err := jwt.CreateTemplate(ctx, xlsxTemplate())
			if err != nil {
				return nil, fmt.Errorf("xlsx template: %w", err)
			}
			op = generateOp(api, id, "xlsx", xlsxRows(9999)) // + the header row = the 10,000-row limit
			conc = 1
			label = "d xlsx 10000 rows x 10"
		}
		results = append(results, Run(ctx, label, conc, cfg.Duration, maxOps, op))
	}
	return results, nil
}

// pairedOps runs a and b in alternating slices of PairedSlice until each
// has run for duration, and returns one Result for each over all its
// slices. The machine's speed drifts (a VM on a shared host: one binary's
// render-only 1,680–2,670 docs/s between runs), and a ratio of two
// scenarios run one after the other for seconds each carries that drift;
// slices a second apart see the same machine. Latency percentiles are the
// largest of the slices'.
func pairedOps(ctx context.Context, conc int, duration time.Duration, aName string, a Op, bName string, b Op) []Result {
	out := []Result{{Scenario: aName, Concurrency: conc}, {Scenario: bName, Concurrency: conc}}
	var cpu [2]float64
	for done := time.Duration(0); done < duration && ctx.Err() == nil; done += PairedSlice {
		for i, op := range []Op{a, b} {
			r := Run(ctx, out[i].Scenario, conc, min(PairedSlice, duration-done), 0, op)
			o := &out[i]
			o.Ops += r.Ops
			o.Documents += r.Documents
			o.Errors += r.Errors
			if o.FirstError == "" {
				o.FirstError = r.FirstError
			}
			o.Seconds += r.Seconds
			cpu[i] += r.CPUSecPerDoc * float64(r.Documents)
			o.AllocKBPerDoc += r.AllocKBPerDoc * float64(r.Documents)
			o.GCCycles += r.GCCycles
			o.P50ms, o.P95ms, o.P99ms = max(o.P50ms, r.P50ms), max(o.P95ms, r.P95ms), max(o.P99ms, r.P99ms)
			o.PeakRSSMB = max(o.PeakRSSMB, r.PeakRSSMB)
		}
	}
	for i := range out {
		o := &out[i]
		if o.Documents > 0 {
			o.DocsPerSecond = round(float64(o.Documents)/o.Seconds, 1)
			o.CPUSecPerDoc = round(cpu[i]/float64(o.Documents), 6)
			o.AllocKBPerDoc = round(o.AllocKBPerDoc/float64(o.Documents), 1)
		}
		o.Seconds = round(o.Seconds, 3)
	}
	return out
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// polledOp queues PolledBatches batches of 100 at once and polls each
// every PollInterval, as a client without webhooks does, until all have
// ended: its latency is the time to the last batch's end. conditional
// sends each poll with the last answer's ETag.
func polledOp(c *Client, templateID string, invoiceVars map[string]any, conditional bool) Op {
	vars := make([]any, 100)
	for i := range vars {
		vars[i] = invoiceVars
	}
	return func(ctx context.Context) (int, error) {
		errs := make(chan error, PolledBatches)
		for range PolledBatches {
			go func() {
				b, err := c.GenerateBatch(ctx, templateID, "pdf", vars)
				if err == nil {
					b, err = c.waitBatch(ctx, b.BatchID, PollInterval, conditional)
				}
				if err == nil && b.CompletedDocuments != 100 {
					err = fmt.Errorf("batch %s: %d completed, %d failed", b.BatchID, b.CompletedDocuments, b.FailedDocuments)
				}
				errs <- err
			}()
		}
		var first error
		for range PolledBatches {
			if err := <-errs; err != nil && first == nil {
				first = err
			}
		}
		if first != nil {
			return 0, first
		}
		return PolledBatches * 100, nil
	}
}

func generateOp(c *Client, templateID, format string, vars any) Op {
	// The body is the same for every request: encoded once, as a load
	// generator sends fixed bytes. Encoding the invoice's variables again
	// for each request cost the bench's own client ~0.07 ms of CPU a
	// document, counted in every "beyond the render" figure (issue 24,
	// fourth pass).
	body, err := json.Marshal(map[string]any{"templateId": templateID, "format": format, "variables": vars})
	if err != nil {
		return func(context.Context) (int, error) { return 0, err }
	}
	return func(ctx context.Context) (int, error) {
		var j Job
		if err := c.Do(ctx, "POST", "/api/v1/documents/generate", json.RawMessage(body), &j); err != nil {
			return 0, err
		}
		if j.Status != "completed" {
			return 0, fmt.Errorf("job %s is %s: %s", j.JobID, j.Status, j.Error)
		}
		if j.JobID == "" || j.DownloadURL == "" {
			return 0, fmt.Errorf("a completed job's answer without its id or link: %+v", j)
		}
		return 1, nil
	}
}

// loadInvoice reads the example invoice and gives it 20 line items.
func loadInvoice(dir string) (map[string]any, map[string]any, error) {
	var def, vars map[string]any
	for _, f := range []struct {
		name string
		dst  *map[string]any
	}{{"invoice.json", &def}, {"invoice.vars.json", &vars}} {
		b, err := os.ReadFile(filepath.Join(dir, f.name))
		if err != nil {
			return nil, nil, fmt.Errorf("bench examples (--examples): %w", err)
		}
		if err := json.Unmarshal(b, f.dst); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f.name, err)
		}
	}
	items, _ := vars["items"].([]any)
	if len(items) == 0 {
		return nil, nil, errors.New("invoice.vars.json has no items")
	}
	for len(items) < 20 {
		items = append(items, items[len(items)%5])
	}
	vars["items"] = items[:20]
	return named(def, "Invoice bench"), vars, nil
}

func named(def map[string]any, name string) map[string]any {
	out := make(map[string]any, len(def))
	for k, v := range def {
		out[k] = v
	}
	out["name"] = name
	return out
}

// reportTemplate creates a statement-like report and sizes its rows so the
// document has 30 pages (the PDF limit), measured with the preview endpoint.
func reportTemplate(ctx context.Context, c *Client) (string, map[string]any, int, error) {
	def := map[string]any{
		"name": "Report bench", "outputFormats": []string{"pdf"},
		"schema": map[string]any{"pageSize": "A4", "sections": []any{
			map[string]any{"id": "header", "role": "header", "components": []any{map[string]any{"type": "text", "props": map[string]any{"content": "Monthly statement · page {{page}} of {{pages}}", "style": map[string]any{"align": "right", "fontSize": 8}}}}},
			map[string]any{"id": "body", "components": []any{
				map[string]any{"type": "heading", "props": map[string]any{"content": "Account statement", "level": 1}},
				map[string]any{"type": "table", "props": map[string]any{"rows": "rows", "columns": []any{
					map[string]any{"header": "Date", "value": "{{ row.d }}", "width": 25},
					map[string]any{"header": "Description", "value": "{{ row.t }}"},
					map[string]any{"header": "Category", "value": "{{ row.c }}", "width": 30},
					map[string]any{"header": "Amount", "value": "{{ row.a }}", "format": "currency:EUR", "width": 28},
				}}},
			}},
		}},
		"variables": []any{map[string]any{"name": "rows", "type": "array", "required": true}},
	}
	id, err := c.CreateTemplate(ctx, def)
	if err != nil {
		return "", nil, 0, fmt.Errorf("report template: %w", err)
	}
	rowsFor := func(n int) map[string]any {
		rows := make([]any, n)
		for i := range rows {
			rows[i] = map[string]any{"d": fmt.Sprintf("2026-11-%02d", i%28+1), "t": "Card payment — merchant " + strconv.Itoa(i), "c": "Operations", "a": float64(i%997) + 0.5}
		}
		return map[string]any{"rows": rows}
	}
	lo, hi := 100, 2000 // find the most rows that fit in 30 pages
	pages := 0
	for lo < hi {
		mid := (lo + hi + 1) / 2
		p, err := previewPages(ctx, c, id, rowsFor(mid))
		if err != nil {
			return "", nil, 0, err
		}
		if p > 0 && p <= 30 {
			lo, pages = mid, p
		} else {
			hi = mid - 1
		}
	}
	if pages == 0 {
		if pages, err = previewPages(ctx, c, id, rowsFor(lo)); err != nil {
			return "", nil, 0, err
		}
	}
	return id, rowsFor(lo), pages, nil
}

// previewPages renders a preview and returns X-Folio-Pages (0 when refused).
func previewPages(ctx context.Context, c *Client, id string, vars map[string]any) (int, error) {
	body, _ := json.Marshal(map[string]any{"variables": vars})
	req, err := newRequest(ctx, c, "POST", "/api/templates/"+id+"/preview", body)
	if err != nil {
		return 0, err
	}
	res, err := c.HTTP.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		return 0, nil
	}
	return strconv.Atoi(res.Header.Get("X-Folio-Pages"))
}

func xlsxTemplate() map[string]any {
	var cols []any
	for i := 0; i < 10; i++ {
		f := "text"
		if i >= 6 {
			f = "number"
		}
		cols = append(cols, map[string]any{"header": fmt.Sprintf("Col %d", i+1), "value": fmt.Sprintf("{{ row[%d] }}", i), "format": f})
	}
	return map[string]any{
		"name": "Export bench", "outputFormats": []string{"xlsx"},
		"schema": map[string]any{"sections": []any{map[string]any{"id": "export", "name": "Export", "components": []any{
			map[string]any{"type": "table", "props": map[string]any{"rows": "rows", "columns": cols}},
		}}}},
		"variables": []any{map[string]any{"name": "rows", "type": "array", "required": true}},
	}
}

func xlsxRows(n int) map[string]any {
	rows := make([]any, n)
	for i := range rows {
		rows[i] = []any{"R" + strconv.Itoa(i), "Item", "EU", "2026-11", "open", "ok", i, i * 2, float64(i) / 4, i % 7}
	}
	return map[string]any{"rows": rows}
}

// LoadExample reads the example invoice (20 line items) for load tests.
func LoadExample(dir string) (map[string]any, map[string]any, error) {
	def, vars, err := loadInvoice(dir)
	if err != nil {
		return nil, nil, err
	}
	def = named(def, "Soak invoice")
	def["outputFormats"] = []string{"pdf", "xlsx"}
	return def, vars, nil
}
