package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"folio/web/client"
)

// TestGoClient drives the real server through the Go client package
// (web/client) the way an integrator would: sign up, log in, create a key
// and a template, generate synchronously and asynchronously, run a batch,
// download the documents, and read an API error as a typed value.
func TestGoClient(t *testing.T) {
	s := startServer(t)
	ctx := context.Background()
	c := opsClient(t, s)

	if _, err := c.Signup(ctx, "client@example.com", "a long password", "Client"); err != nil {
		t.Fatalf("Signup: %v", err)
	}
	sess, err := c.Login(ctx, "client@example.com", "a long password")
	if err != nil || sess.AccessToken == "" {
		t.Fatalf("Login: %v", err)
	}
	jwt := c.WithToken(sess.AccessToken)
	key, err := jwt.CreateKey(ctx, "integration")
	if err != nil || !strings.HasPrefix(key, "svc_sk_") {
		t.Fatalf("CreateKey: %q, %v", key, err)
	}
	tplID, err := jwt.CreateTemplate(ctx, map[string]any{
		"name": "Client letter", "outputFormats": []string{"pdf", "xlsx"},
		"schema": map[string]any{"sections": []any{map[string]any{"id": "body", "components": []any{
			map[string]any{"type": "text", "props": map[string]any{"content": "Dear {{name}}"}},
		}}}},
		"variables": []any{map[string]any{"name": "name", "type": "string", "required": true}},
	})
	if err != nil || tplID == "" {
		t.Fatalf("CreateTemplate: %q, %v", tplID, err)
	}
	api := c.WithToken(key)

	job, err := api.Generate(ctx, tplID, "pdf", map[string]any{"name": "Ada Lovelace"}, false)
	if err != nil || job.Status != "completed" || job.DownloadURL == "" {
		t.Fatalf("Generate: %+v, %v", job, err)
	}
	pdf, err := api.Download(ctx, job.DownloadURL)
	if err != nil {
		t.Fatalf("Download: %v", err)
	}
	if got := pdfText(t, pdf); !strings.Contains(got, "Dear Ada Lovelace") {
		t.Fatalf("downloaded PDF says %q", got)
	}

	queued, err := api.Generate(ctx, tplID, "xlsx", map[string]any{"name": "Grace"}, true)
	if err != nil || queued.JobID == "" {
		t.Fatalf("Generate async: %+v, %v", queued, err)
	}
	var got client.Job
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if err := api.Do(ctx, "GET", "/api/v1/documents/jobs/"+queued.JobID, nil, &got); err != nil {
			t.Fatalf("get job: %v", err)
		}
		if got.Status == "completed" || got.Status == "failed" || time.Now().After(deadline) {
			break
		}
	}
	if got.Status != "completed" || got.Format != "xlsx" {
		t.Fatalf("async job ended %+v", got)
	}

	names := []any{map[string]any{"name": "One"}, map[string]any{"name": "Two"}, map[string]any{"name": "Three"}}
	b, err := api.GenerateBatch(ctx, tplID, "pdf", names)
	if err != nil || b.BatchID == "" || b.TotalDocuments != 3 {
		t.Fatalf("GenerateBatch: %+v, %v", b, err)
	}
	b, err = api.WaitBatch(ctx, b.BatchID, 10*time.Millisecond)
	if err != nil || b.Status != "completed" || b.CompletedDocuments != 3 || len(b.Documents) != 3 {
		t.Fatalf("WaitBatch: %+v, %v", b, err)
	}
	var texts []string
	for _, d := range b.Documents {
		pdf, err := api.Download(ctx, d.DownloadURL)
		if err != nil {
			t.Fatalf("Download %s: %v", d.JobID, err)
		}
		texts = append(texts, pdfText(t, pdf))
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{"Dear One", "Dear Two", "Dear Three"} {
		if !strings.Contains(all, want) {
			t.Fatalf("batch documents lack %q:\n%s", want, all)
		}
	}

	_, err = api.Generate(ctx, "no-such-template", "pdf", nil, false)
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Code != "ERR_TMPL_001" {
		t.Fatalf("unknown template: %v, want a *client.Error 404 ERR_TMPL_001", err)
	}
}
