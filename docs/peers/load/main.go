// Command load is the load client of docs/peers/run.sh: the same client,
// concurrency and checks for every service compared (Folio over HTTPS,
// jsreport and Carbone over HTTP), so that only the servers differ.
//
//	go run ./load setup-folio -url https://127.0.0.1:8443 -examples ../../testdata/templates -out DIR
//	go run ./load data -examples ../../testdata/templates -out DIR/invoice-data.json
//	go run ./load run -target folio -url https://127.0.0.1:8443 -setup DIR/folio.json -concurrency 8 -duration 8s
//	go run ./load run -target http -url http://127.0.0.1:5488/api/report -body DIR/jsreport-request.json ...
//
// run prints one JSON line: documents, errors, seconds, docs/s, latency
// percentiles, bytes of the last document. A document counts only when
// its answer is 200 and a PDF (for Folio: the generate answered
// "completed" and, with -target folio-download, the signed link served a
// PDF).
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: load setup-folio|data|run [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "setup-folio":
		err = setupFolio(os.Args[2:])
	case "data":
		err = data(os.Args[2:])
	case "run":
		err = run(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

func httpClient(conc int) *http.Client {
	return &http.Client{
		Timeout: 60 * time.Second,
		Transport: &http.Transport{
			// Folio's self-signed loopback certificate; the handshake and
			// encryption still happen, once per keep-alive connection.
			TLSClientConfig:     &tls.Config{InsecureSkipVerify: true},
			MaxIdleConns:        conc * 2,
			MaxIdleConnsPerHost: conc * 2,
			IdleConnTimeout:     time.Minute,
		},
	}
}

// post sends a JSON body and returns the answer's body if its status is 200.
func post(ctx context.Context, c *http.Client, url string, body []byte, header map[string]string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	if res.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s %s: %s", url, res.Status, truncate(raw))
	}
	return raw, nil
}

func truncate(b []byte) string {
	if len(b) > 300 {
		b = b[:300]
	}
	return string(b)
}

// examples reads the example invoice and its variables with the items
// repeated to n, as `folio bench` does (web/client/scenarios.go).
func examples(dir string, n int) (map[string]any, map[string]any, error) {
	var def, vars map[string]any
	for name, dst := range map[string]*map[string]any{"invoice.json": &def, "invoice.vars.json": &vars} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, nil, err
		}
		if err := json.Unmarshal(b, dst); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	items, _ := vars["items"].([]any)
	if len(items) == 0 {
		return nil, nil, errors.New("invoice.vars.json has no items")
	}
	base := len(items)
	for len(items) < n {
		items = append(items, items[len(items)%base])
	}
	vars["items"] = items[:n]
	return def, vars, nil
}

// FolioSetup is what setup-folio writes for run -target folio.
type FolioSetup struct {
	Key     string          `json:"key"`
	Request json.RawMessage `json:"request"`
}

func setupFolio(args []string) error {
	fs := flag.NewFlagSet("setup-folio", flag.ExitOnError)
	url := fs.String("url", "https://127.0.0.1:8443", "Folio's base URL")
	dir := fs.String("examples", "testdata/templates", "directory of invoice.json and invoice.vars.json")
	n := fs.Int("items", 20, "line items")
	out := fs.String("out", ".", "directory for folio.json and folio.pdf")
	fs.Parse(args)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := httpClient(1)
	def, vars, err := examples(*dir, *n)
	if err != nil {
		return err
	}
	do := func(path, token string, body any, dst any) error {
		raw, _ := json.Marshal(body)
		h := map[string]string{}
		if token != "" {
			h["Authorization"] = "Bearer " + token
		}
		ans, err := post(ctx, c, *url+path, raw, h)
		if err != nil {
			return err
		}
		return json.Unmarshal(ans, dst)
	}
	var sess struct {
		AccessToken string `json:"accessToken"`
	}
	email := fmt.Sprintf("peers-%d@example.com", time.Now().UnixNano())
	if err := do("/api/auth/signup", "", map[string]string{"email": email, "password": "peers password 1", "name": "Peers"}, &sess); err != nil {
		return fmt.Errorf("signup: %w", err)
	}
	var key struct {
		PlainKey string `json:"plainKey"`
	}
	if err := do("/api/api-keys", sess.AccessToken, map[string]any{"name": "peers"}, &key); err != nil {
		return fmt.Errorf("api key: %w", err)
	}
	def["name"] = "Invoice (peers)"
	var tpl struct {
		ID string `json:"id"`
	}
	if err := do("/api/templates", sess.AccessToken, def, &tpl); err != nil {
		return fmt.Errorf("template: %w", err)
	}
	req, _ := json.Marshal(map[string]any{"templateId": tpl.ID, "format": "pdf", "variables": vars})
	setup := FolioSetup{Key: key.PlainKey, Request: req}
	raw, _ := json.MarshalIndent(setup, "", "  ")
	if err := os.WriteFile(filepath.Join(*out, "folio.json"), raw, 0o600); err != nil {
		return err
	}
	pdf, err := folioDoc(ctx, c, *url, setup, true)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(*out, "folio.pdf"), pdf, 0o644)
}

// folioDoc generates one document synchronously and, with download,
// fetches it through its signed link.
func folioDoc(ctx context.Context, c *http.Client, url string, s FolioSetup, download bool) ([]byte, error) {
	ans, err := post(ctx, c, url+"/api/v1/documents/generate", s.Request, map[string]string{"Authorization": "Bearer " + s.Key})
	if err != nil {
		return nil, err
	}
	var job struct {
		Status      string `json:"status"`
		DownloadURL string `json:"downloadUrl"`
		Error       string `json:"error"`
	}
	if err := json.Unmarshal(ans, &job); err != nil {
		return nil, err
	}
	if job.Status != "completed" {
		return nil, fmt.Errorf("job %s: %s", job.Status, job.Error)
	}
	if !download {
		return ans, nil
	}
	req, err := http.NewRequestWithContext(ctx, "GET", job.DownloadURL, nil)
	if err != nil {
		return nil, err
	}
	res, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	pdf, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != 200 || !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		return nil, fmt.Errorf("download %s: %s", res.Status, truncate(pdf))
	}
	return pdf, nil
}

// data writes the invoice's data as the peers' templates read it: the same
// 20 items, with the amounts, totals and dates Folio's template computes
// and formats itself (the peers get them ready-made).
func data(args []string) error {
	fs := flag.NewFlagSet("data", flag.ExitOnError)
	dir := fs.String("examples", "testdata/templates", "directory of invoice.json and invoice.vars.json")
	n := fs.Int("items", 20, "line items")
	out := fs.String("out", "invoice-data.json", "file to write")
	fs.Parse(args)
	def, vars, err := examples(*dir, *n)
	if err != nil {
		return err
	}
	company := def["constants"].(map[string]any)["company"].(map[string]any)
	var items []map[string]any
	subtotal := 0.0
	for i, it := range vars["items"].([]any) {
		m := it.(map[string]any)
		q, p := m["quantity"].(float64), m["unitPrice"].(float64)
		subtotal += q * p
		items = append(items, map[string]any{
			"pos": i + 1, "description": m["description"], "quantity": number(q),
			"unitPrice": eur(p), "amount": eur(q * p),
		})
	}
	vat := math.Round(subtotal*0.19*100) / 100
	total := subtotal + vat
	due := date(vars["dueDate"].(string), "02.01.2006")
	cust := vars["customer"].(map[string]any)
	cust["countryUpper"] = strings.ToUpper(cust["country"].(string))
	d := map[string]any{
		"company": company, "customer": cust, "items": items,
		"invoiceNumber": vars["invoiceNumber"],
		"issueDate":     date(vars["issueDate"].(string), "02.01.2006"),
		"dueDate":       due,
		"dueDateLong":   date(vars["dueDate"].(string), "02 January 2006"),
		"subtotal":      eur(subtotal), "vatRate": "19", "vat": eur(vat), "total": eur(total),
		"notes": vars["notes"],
	}
	raw, _ := json.MarshalIndent(d, "", "  ")
	return os.WriteFile(*out, raw, 0o644)
}

func date(iso, layout string) string {
	t, err := time.Parse("2006-01-02", iso)
	if err != nil {
		return iso
	}
	return t.Format(layout)
}

// number and eur format as Folio's default (English) locale does:
// 1,234.5 and €1,234.50.
func number(f float64) string {
	s := fmt.Sprintf("%.2f", f)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return group(s)
}

func eur(f float64) string { return "€" + group(fmt.Sprintf("%.2f", f)) }

func group(s string) string {
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if frac != "" {
		return b.String() + "." + frac
	}
	return b.String()
}

// Result is one run's line of output.
type Result struct {
	Target        string  `json:"target"`
	Concurrency   int     `json:"concurrency"`
	Documents     int     `json:"documents"`
	Errors        int     `json:"errors"`
	FirstError    string  `json:"firstError,omitempty"`
	Seconds       float64 `json:"seconds"`
	DocsPerSecond float64 `json:"docsPerSecond"`
	P50ms         float64 `json:"p50ms"`
	P95ms         float64 `json:"p95ms"`
	Bytes         int     `json:"bytes"`
}

func run(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	target := fs.String("target", "http", "folio (generate, link answered), folio-download (generate, then GET the PDF) or http (POST -body, a PDF answered)")
	url := fs.String("url", "", "base URL (folio) or the render endpoint (http)")
	setupFile := fs.String("setup", "", "folio.json written by setup-folio")
	bodyFile := fs.String("body", "", "request body (http)")
	conc := fs.Int("concurrency", 8, "concurrent clients, each on its own keep-alive connection")
	dur := fs.Duration("duration", 8*time.Second, "time to keep starting documents")
	out := fs.String("out", "", "write the last document here")
	fs.Parse(args)
	c := httpClient(*conc)
	var op func(ctx context.Context) ([]byte, error)
	switch *target {
	case "folio", "folio-download":
		raw, err := os.ReadFile(*setupFile)
		if err != nil {
			return err
		}
		var s FolioSetup
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		dl := *target == "folio-download"
		op = func(ctx context.Context) ([]byte, error) { return folioDoc(ctx, c, *url, s, dl) }
	case "http":
		body, err := os.ReadFile(*bodyFile)
		if err != nil {
			return err
		}
		op = func(ctx context.Context) ([]byte, error) {
			pdf, err := post(ctx, c, *url, body, nil)
			if err == nil && !bytes.HasPrefix(pdf, []byte("%PDF-")) {
				err = fmt.Errorf("not a PDF: %s", truncate(pdf))
			}
			return pdf, err
		}
	default:
		return fmt.Errorf("unknown target %q", *target)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *dur+2*time.Minute)
	defer cancel()
	var (
		mu       sync.Mutex
		lat      []float64
		errs     int
		firstErr string
		last     []byte
		wg       sync.WaitGroup
	)
	start := time.Now()
	deadline := start.Add(*dur)
	for i := 0; i < *conc; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				t0 := time.Now()
				doc, err := op(ctx)
				ms := float64(time.Since(t0).Microseconds()) / 1000
				mu.Lock()
				if err != nil {
					errs++
					if firstErr == "" {
						firstErr = err.Error()
					}
				} else {
					lat = append(lat, ms)
					last = doc
				}
				mu.Unlock()
				if err != nil && ctx.Err() != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	// The clock stops when the last document started before the deadline
	// is done, so slow peers are not credited with unfinished work.
	secs := time.Since(start).Seconds()
	sort.Float64s(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return lat[int(p*float64(len(lat)-1))]
	}
	r := Result{Target: *target, Concurrency: *conc, Documents: len(lat), Errors: errs, FirstError: firstErr,
		Seconds: round(secs, 3), DocsPerSecond: round(float64(len(lat))/secs, 1), P50ms: pct(0.5), P95ms: pct(0.95), Bytes: len(last)}
	if *out != "" && last != nil {
		if err := os.WriteFile(*out, last, 0o644); err != nil {
			return err
		}
	}
	raw, _ := json.Marshal(r)
	fmt.Println(string(raw))
	if len(lat) == 0 {
		return fmt.Errorf("no document completed: %s", firstErr)
	}
	return nil
}

func round(f float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(f*p) / p
}
