package main

import (
	"fmt"
	"sync/atomic"
	"testing"
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
