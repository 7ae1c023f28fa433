package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// BenchmarkGenerateHTTP measures the synchronous generate path end to end:
// TLS, auth, validation, SQLite, bbolt, render, file write, over keep-alive
// connections from parallel clients.
//
//	go test -run '^$' -bench GenerateHTTP -benchtime 2000x .
func BenchmarkGenerateHTTP(b *testing.B) {
	s := startServer(b)
	u := s.signup("Bench")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	body := map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": map[string]any{"number": "2026-001", "customer": "ACME"}}
	var failed atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if r := s.do("POST", "/api/v1/documents/generate", key, body); r.status != 200 || r.str("status") != "completed" {
				failed.Add(1)
			}
		}
	})
	b.StopTimer()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d generates failed", n)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "docs/s")
}

// BenchmarkBatch100 measures a 100-document batch from request to its end.
//
//	go test -run '^$' -bench Batch100 -benchtime 10x .
func BenchmarkBatch100(b *testing.B) {
	s := startServer(b)
	u := s.signup("Bench")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	docs := make([]any, 100)
	for i := range docs {
		docs[i] = map[string]any{"variables": map[string]any{"number": fmt.Sprint(i), "customer": "ACME"}}
	}
	for b.Loop() {
		r := s.must(200, "POST", "/api/v1/documents/generate/batch", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "documents": docs})
		if d := s.waitBatch(key, r.str("batchId")); d.str("completedDocuments") != "100" {
			b.Fatalf("batch = %s", d.raw)
		}
	}
	b.ReportMetric(float64(b.N*100)/b.Elapsed().Seconds(), "docs/s")
}

// TestBenchCommandSmoke runs `folio bench` briefly on one scenario: it serves,
// generates over HTTPS and reports its figures as JSON.
func TestBenchCommandSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server and drives it for a second")
	}
	code, out, errOut := runCLI(t, "bench", "--duration", "1s", "--scenarios", "invoice,batch", "--concurrency", "2", "--workers", "1", "--json")
	if code != 0 {
		t.Fatalf("bench exited %d: %s", code, errOut)
	}
	var report struct {
		Results []struct {
			Scenario      string  `json:"scenario"`
			Documents     int     `json:"documents"`
			Errors        int     `json:"errors"`
			FirstError    string  `json:"firstError"`
			DocsPerSecond float64 `json:"docsPerSecond"`
			P50ms         float64 `json:"p50Ms"`
			P99ms         float64 `json:"p99Ms"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("bench output is not JSON: %v\n%s", err, out)
	}
	if len(report.Results) != 2 {
		t.Fatalf("%d results, want 2: %s", len(report.Results), out)
	}
	for _, r := range report.Results {
		if r.Documents <= 0 || r.Errors != 0 || r.DocsPerSecond <= 0 || r.P50ms <= 0 || r.P99ms < r.P50ms {
			t.Fatalf("bench result = %+v", r)
		}
	}
	// The batch ends when its batch.completed webhook arrives.
	if b := report.Results[1]; !strings.HasPrefix(b.Scenario, "b batch") || b.Documents%100 != 0 {
		t.Fatalf("batch result = %+v", b)
	}
}

// BenchmarkBatchPoll measures polls of an ended 100-document batch over
// keep-alive HTTPS, each reading the whole answer: plain, and sending back
// the last ETag (304 since issue 24). cpu-µs/poll is the process's CPU
// time, server and client together.
//
//	go test -run '^$' -bench BatchPoll -benchtime 2000x .
func BenchmarkBatchPoll(b *testing.B) {
	s := startServer(b)
	u := s.signup("Bench")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	docs := make([]any, 100)
	for i := range docs {
		docs[i] = map[string]any{"variables": map[string]any{"number": fmt.Sprint(i), "customer": "ACME"}}
	}
	r := s.must(200, "POST", "/api/v1/documents/generate/batch", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "documents": docs})
	url := s.URL() + "/api/v1/documents/batches/" + r.str("batchId")
	etag := s.waitBatch(key, r.str("batchId")).header.Get("ETag")
	for _, c := range []struct {
		name, etag string
	}{{"plain", ""}, {"etag", etag}} {
		b.Run(c.name, func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				req, _ := http.NewRequest("GET", url, nil)
				req.Header.Set("Authorization", "Bearer "+key)
				if c.etag != "" {
					req.Header.Set("If-None-Match", c.etag)
				}
				res, err := s.client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				n, _ := io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 && res.StatusCode != 304 || res.StatusCode == 200 && n < 100*50 {
					b.Fatalf("poll: %s, %d bytes", res.Status, n)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/poll")
		})
	}
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
