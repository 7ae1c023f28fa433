package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"folio/app"
	"folio/store"
)

// businessInvoice is a PDF/A-3b invoice template with document properties.
var businessInvoice = map[string]any{
	"name":          "Archived invoice",
	"outputFormats": []string{"pdf", "xlsx"},
	"schema": map[string]any{
		"pdfa":     "3b",
		"metadata": map[string]any{"title": "Invoice {{number}}", "author": "ACME GmbH", "subject": "Invoice", "keywords": "invoice"},
		"sections": []any{map[string]any{"id": "body", "components": []any{
			map[string]any{"type": "heading", "props": map[string]any{"content": "Invoice {{number}}"}},
			map[string]any{"type": "text", "props": map[string]any{"content": "Bill to: {{customer}} — Grüße"}},
		}}},
	},
	"variables": []any{
		map[string]any{"name": "number", "type": "string", "required": true},
		map[string]any{"name": "customer", "type": "string", "required": true},
	},
}

// poppler runs a poppler or qpdf tool on pdf; ok is false when it fails.
func poppler(t *testing.T, pdf []byte, tool string, args ...string) (string, bool) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		t.Fatalf("%s is needed (apt-get install poppler-utils qpdf): %v", tool, err)
	}
	path := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	args = append(args, path)
	if tool == "pdftotext" {
		args = append(args, "-")
	}
	out, err := exec.Command(tool, args...).CombinedOutput()
	return string(out), err == nil
}

// pdfaViolations runs render/testdata/pdfa/check.py (pikepdf, fontTools).
func pdfaViolations(t *testing.T, pdf []byte, part, conformance string) string {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import pikepdf, fontTools").Run(); err != nil {
		t.Fatalf("python3-pikepdf and python3-fonttools are needed: %v", err)
	}
	path := filepath.Join(t.TempDir(), "doc.pdf")
	os.WriteFile(path, pdf, 0o600)
	out, _ := exec.Command("/usr/bin/python3", filepath.Join("render", "testdata", "pdfa", "check.py"), path, part, conformance).CombinedOutput()
	return strings.TrimSpace(string(out))
}

func TestBusinessPDFOptionsThroughAPI(t *testing.T) {
	var logs syncBuffer
	rcv := startReceiver(t, false)
	s := startMain(t, &Main{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}, func(c *Config) {
		c.WebhookAllowPrivate, c.WebhookCA = true, rcv.caFile
	})
	u := s.verifiedUser("archivist")
	key := s.createKey(u.token, nil)
	s.must(200, "POST", "/api/v1/webhook-subscriptions", key, map[string]any{"url": rcv.url, "events": []string{"document.generated", "document.failed"}})
	tpl := s.createTemplate(u.token, "Archived invoice", businessInvoice)
	id := tpl.str("id")
	vars := map[string]any{"number": "2026-0042", "customer": "Müller AG"}
	const userPW, ownerPW, batchPW = "pw-Zebra-91734", "owner-Quokka-55120", "pw-Ibex-30918"

	t.Run("single: PDF/A-3b with the request's documentMetadata", func(t *testing.T) {
		g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "pdf", "variables": vars,
			"documentMetadata": map[string]any{"title": "Rechnung 2026-0042", "language": "de-DE", "creationDate": "2026-11-20"}})
		_, _, pdf := s.download(g.str("downloadUrl"))
		info, _ := poppler(t, pdf, "pdfinfo")
		for _, want := range []string{"Title:           Rechnung 2026-0042", "Author:          ACME GmbH", "Subject:         Invoice", "CreationDate:    Fri Nov 20 00:00:00 2026 UTC"} {
			if !strings.Contains(info, want) {
				t.Errorf("pdfinfo lacks %q:\n%s", want, info)
			}
		}
		if v := pdfaViolations(t, pdf, "3", "B"); v != "" {
			t.Errorf("PDF/A-3b violations:\n%s", v)
		}
		if out, ok := poppler(t, pdf, "qpdf", "--check"); !ok {
			t.Errorf("qpdf --check:\n%s", out)
		}
	})

	t.Run("single: watermark", func(t *testing.T) {
		g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "pdf", "variables": vars,
			"watermark": map[string]any{"text": "PAID", "angle": 30, "opacity": 0.3, "color": "#008000"}})
		_, _, pdf := s.download(g.str("downloadUrl"))
		if text, _ := poppler(t, pdf, "pdftotext", "-raw"); !strings.Contains(strings.Join(strings.Fields(text), ""), "PAID") {
			t.Errorf("watermark text missing:\n%s", text)
		}
		if v := pdfaViolations(t, pdf, "3", "B"); v != "" {
			t.Errorf("a translucent watermark breaks PDF/A:\n%s", v)
		}
	})

	t.Run("single async: encrypted, passwords never stored", func(t *testing.T) {
		// The template asks for PDF/A, which forbids encryption.
		r := s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "pdf", "variables": vars,
			"encrypt": map[string]any{"userPassword": userPW}})
		s.wantError(r, 400, "ERR_VALID_003")
		if r.str("relatedInfo.field") != "encrypt" || !strings.Contains(r.str("message"), "PDF/A") {
			t.Errorf("pdfa + encrypt: %s", r.raw)
		}
		a := s.must(200, "POST", "/api/v1/documents/generate?async=true", key, map[string]any{"templateId": id, "format": "pdf", "variables": vars,
			"pdfa": "none", "encrypt": map[string]any{"userPassword": userPW, "ownerPassword": ownerPW, "permissions": []string{"print"}}})
		j := s.waitJob(key, a.str("jobId"))
		_, _, pdf := s.download(j.str("downloadUrl"))
		enc, ok := poppler(t, pdf, "qpdf", "--show-encryption", "--password="+userPW)
		if !ok || !strings.Contains(enc, "R = 6") || !strings.Contains(enc, "AESv3") || !strings.Contains(enc, "print high resolution: allowed") ||
			!strings.Contains(enc, "extract for any purpose: not allowed") {
			t.Errorf("qpdf --show-encryption:\n%s", enc)
		}
		if text, ok := poppler(t, pdf, "pdftotext", "-upw", userPW); !ok || !strings.Contains(text, "Müller AG") {
			t.Errorf("pdftotext with the password: %s", text)
		}
		if out, ok := poppler(t, pdf, "pdftotext"); ok {
			t.Errorf("pdftotext without the password read it: %s", out)
		}
		if bytes.Contains(j.raw, []byte(userPW)) {
			t.Errorf("job view shows the password: %s", j.raw)
		}
	})

	t.Run("batch: a password per document, the batch's watermark", func(t *testing.T) {
		b := s.must(200, "POST", "/api/v1/documents/generate/batch", key, map[string]any{"templateId": id, "format": "pdf", "pdfa": "none",
			"watermark": map[string]any{"text": "COPY", "pages": "first"},
			"documents": []any{
				map[string]any{"variables": vars, "encrypt": map[string]any{"userPassword": batchPW}},
				map[string]any{"variables": map[string]any{"number": "2026-0043", "customer": "Other"}, "documentMetadata": map[string]any{"title": "Second"}},
			}})
		batch := s.waitBatch(key, b.str("batchId"))
		docs := batch.get("documents").([]any)
		if len(docs) != 2 {
			t.Fatalf("batch: %s", batch.raw)
		}
		_, _, first := s.download(docs[0].(map[string]any)["downloadUrl"].(string))
		if text, ok := poppler(t, first, "pdftotext", "-raw", "-upw", batchPW); !ok || !strings.Contains(strings.Join(strings.Fields(text), ""), "COPY") {
			t.Errorf("first document with its password: %v %s", ok, text)
		}
		if _, ok := poppler(t, first, "pdftotext"); ok {
			t.Error("first document opens without its password")
		}
		_, _, second := s.download(docs[1].(map[string]any)["downloadUrl"].(string))
		if info, _ := poppler(t, second, "pdfinfo"); !strings.Contains(info, "Title:           Second") || !strings.Contains(info, "Encrypted:       no") {
			t.Errorf("second document:\n%s", info)
		}
		// A bad option of one document names it.
		r := s.do("POST", "/api/v1/documents/generate/batch", key, map[string]any{"templateId": id, "format": "pdf", "pdfa": "none",
			"documents": []any{map[string]any{"variables": vars}, map[string]any{"variables": vars, "encrypt": map[string]any{"userPassword": "x", "permissions": []string{"fly"}}}}})
		s.wantError(r, 400, "ERR_VALID_003")
		if r.str("relatedInfo.field") != "documents[1].encrypt.permissions[0]" {
			t.Errorf("batch option error: %s", r.raw)
		}
	})

	t.Run("preview: DRAFT unless a watermark is set", func(t *testing.T) {
		r := s.must(200, "POST", "/api/templates/"+id+"/preview", u.token, map[string]any{"variables": vars})
		if text, _ := poppler(t, r.raw, "pdftotext", "-raw"); !strings.Contains(strings.Join(strings.Fields(text), ""), "DRAFT") {
			t.Errorf("preview lacks DRAFT:\n%s", text)
		}
		if v := pdfaViolations(t, r.raw, "3", "B"); v != "" {
			t.Errorf("preview of a PDF/A template:\n%s", v)
		}
		r = s.must(200, "POST", "/api/templates/"+id+"/preview", u.token, map[string]any{"variables": vars, "watermark": false})
		if text, _ := poppler(t, r.raw, "pdftotext", "-raw"); strings.Contains(strings.Join(strings.Fields(text), ""), "DRAFT") {
			t.Errorf("watermark false still stamps DRAFT:\n%s", text)
		}
		r = s.must(200, "POST", "/api/templates/preview", u.token, map[string]any{"template": businessInvoice, "variables": vars,
			"pdfa": "none", "encrypt": map[string]any{"userPassword": userPW}})
		if info, _ := poppler(t, r.raw, "pdfinfo", "-upw", userPW); !strings.Contains(info, "AES-256") {
			t.Errorf("definition preview not encrypted:\n%s", info)
		}
	})

	t.Run("dry run", func(t *testing.T) {
		r := s.must(200, "POST", "/api/v1/documents/generate?dryRun=true", key, map[string]any{"templateId": id, "format": "pdf", "variables": vars,
			"watermark": map[string]any{"text": "DRAFT"}})
		if r.get("valid") != true {
			t.Errorf("dry run: %s", r.raw)
		}
		r = s.do("POST", "/api/v1/documents/generate?dryRun=true", key, map[string]any{"templateId": id, "format": "pdf", "variables": vars,
			"watermark": map[string]any{"text": "DRAFT", "opacity": 2}})
		s.wantError(r, 400, "ERR_VALID_003")
		if r.str("relatedInfo.field") != "watermark.opacity" {
			t.Errorf("dry run bad opacity: %s", r.raw)
		}
	})

	t.Run("validation", func(t *testing.T) {
		for _, tc := range []struct {
			body  map[string]any
			field string
		}{
			{map[string]any{"pdfa": "1b"}, "pdfa"},
			{map[string]any{"watermark": map[string]any{"text": "X", "pages": "some"}}, "watermark.pages"},
			{map[string]any{"watermark": "DRAFT"}, "watermark"},
			{map[string]any{"pdfa": "none", "encrypt": map[string]any{"permissions": []string{"print"}}}, "encrypt"},
			{map[string]any{"pdfa": "none", "encrypt": map[string]any{"userPassword": "x", "algorithm": "rc4"}}, "encrypt.algorithm"},
			{map[string]any{"documentMetadata": map[string]any{"creationDate": "soon"}}, "documentMetadata.creationDate"},
			{map[string]any{"format": "xlsx", "pdfa": "none", "encrypt": map[string]any{"userPassword": "x"}}, "encrypt"},
		} {
			body := map[string]any{"templateId": id, "format": "pdf", "variables": vars}
			for k, v := range tc.body {
				body[k] = v
			}
			r := s.do("POST", "/api/v1/documents/generate", key, body)
			s.wantError(r, 400, "ERR_VALID_003")
			if r.str("relatedInfo.field") != tc.field {
				t.Errorf("%v: field %q, want %q: %s", tc.body, r.str("relatedInfo.field"), tc.field, r.raw)
			}
		}
	})

	// No password anywhere: webhooks, job rows (the database and its WAL), files, logs.
	hooks := rcv.waitFor(5, 20*time.Second) // two single, one async, two batch documents
	if len(hooks) < 5 {
		t.Errorf("%d webhooks, want 5", len(hooks))
	}
	for _, h := range hooks {
		for _, pw := range []string{userPW, ownerPW, batchPW} {
			if bytes.Contains(h.body, []byte(pw)) {
				t.Errorf("a webhook holds the password %s: %s", pw, h.body)
			}
		}
	}
	filepath.WalkDir(s.Config.Data, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(path)
		for _, pw := range []string{userPW, ownerPW, batchPW} {
			if bytes.Contains(b, []byte(pw)) {
				t.Errorf("%s holds the password %s", path, pw)
			}
		}
		return nil
	})
	for _, pw := range []string{userPW, ownerPW, batchPW} {
		if strings.Contains(logs.String(), pw) {
			t.Errorf("the log holds the password %s", pw)
		}
	}
	if !strings.Contains(logs.String(), "job ended") {
		t.Error("no log captured")
	}
}

// TestPDFOptionsAfterRestart starts a server on jobs a previous process
// accepted and never ran: one with a watermark runs with it (the options
// are in its row), one to be encrypted fails, because its passwords were
// only ever in the previous process's memory; it is never written
// unencrypted.
func TestPDFOptionsAfterRestart(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	s1 := startServerIn(t, data)
	u := s1.signup("Restarter")
	k := s1.must(200, "POST", "/api/api-keys", u.token, map[string]any{"name": "k"})
	key, team := k.str("plainKey"), k.str("teamId")
	tpl := s1.createTemplate(u.token, "Invoice", invoiceTemplate).str("id")
	s1.Close()

	db, err := store.Open(ctx, filepath.Join(data, "folio.db"))
	if err != nil {
		t.Fatal(err)
	}
	job := func(options string) *app.Job {
		return &app.Job{ID: app.NewID("job"), TeamID: team, TemplateID: tpl, Status: app.StatusPending, Format: "pdf", Priority: app.PrioritySingle,
			Variables: json.RawMessage(`{"number":"R-1","customer":"Restart Ltd"}`), CreatedAt: time.Now().UTC(), PDFOptions: json.RawMessage(options)}
	}
	marked := job(`{"watermark":{"text":"RESTARTED"},"documentMetadata":{"title":"After restart"}}`)
	secret := job(`{"encrypted":true}`)
	if err := db.CreateJobs(ctx, nil, marked, secret); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s2 := startServerIn(t, data)
	got := s2.waitEnd(key, marked.ID)
	if got.str("status") != "completed" {
		t.Fatalf("watermarked job after restart: %s", got.raw)
	}
	_, _, pdf := s2.download(got.str("downloadUrl"))
	if text, _ := poppler(t, pdf, "pdftotext", "-raw"); !strings.Contains(strings.Join(strings.Fields(text), ""), "RESTARTED") {
		t.Errorf("watermark lost across the restart:\n%s", text)
	}
	if info, _ := poppler(t, pdf, "pdfinfo"); !strings.Contains(info, "Title:           After restart") {
		t.Errorf("documentMetadata lost across the restart:\n%s", info)
	}
	got = s2.waitEnd(key, secret.ID)
	if got.str("status") != "failed" || got.str("errorCode") != "ERR_JOB_005" || !strings.Contains(got.str("error"), "passwords") {
		t.Errorf("encrypted job without its passwords: %s", got.raw)
	}
}

// TestImageWatermarkFromAsset stamps a team's uploaded image on the last page.
func TestImageWatermarkFromAsset(t *testing.T) {
	s := startServer(t)
	u := s.signup("stamper")
	key := s.createKey(u.token, nil)
	img := image.NewNRGBA(image.Rect(0, 0, 60, 30))
	for i := range img.Pix {
		img.Pix[i] = 200
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	s.must(200, "POST", "/api/assets", u.token, map[string]any{"name": "seal", "contentBase64": b64(buf.Bytes())})
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate).str("id")
	g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl, "format": "pdf",
		"variables": map[string]any{"number": "W-1", "customer": "Seal Ltd"},
		"watermark": map[string]any{"image": "asset:seal", "position": "bottom-right", "angle": 0, "width": 50, "pages": "last"}})
	_, _, pdf := s.download(g.str("downloadUrl"))
	if out, _ := poppler(t, pdf, "pdfimages", "-list"); !strings.Contains(out, "   60    30 ") {
		t.Errorf("the seal is not in the PDF:\n%s", out)
	}
	r := s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl, "format": "pdf",
		"variables": map[string]any{"number": "W-2", "customer": "Seal Ltd"}, "watermark": map[string]any{"image": "asset:nope"}})
	if r.status != 400 && r.status != 404 {
		t.Errorf("an unknown asset: %d %s", r.status, r.raw)
	}
}

// TestTemplateRequiresEncryption: a schema's encrypt {"required": true}
// makes every generate, batch document and dry run send its own encrypt
// (the passwords are still never stored); previews stay unencrypted
// drafts; a schema that tries to hold a password is refused.
func TestTemplateRequiresEncryption(t *testing.T) {
	s := startMain(t, &Main{})
	u := s.verifiedUser("payroll")
	key := s.createKey(u.token, nil)
	def := map[string]any{"outputFormats": []string{"pdf"}, "schema": map[string]any{
		"encrypt": map[string]any{"required": true},
		"sections": []any{map[string]any{"id": "body", "components": []any{
			map[string]any{"type": "text", "props": map[string]any{"content": "Payslip for {{name}}"}},
		}}},
	}, "variables": []any{map[string]any{"name": "name", "type": "string", "required": true}}}
	id := s.createTemplate(u.token, "Payslip", def).str("id")
	vars := map[string]any{"name": "Ada Lovelace"}

	r := s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "pdf", "variables": vars})
	s.wantError(r, 400, "ERR_VALID_003")
	if r.str("relatedInfo.field") != "encrypt" {
		t.Errorf("field: %s", r.raw)
	}
	b := s.do("POST", "/api/v1/documents/generate/batch", key, map[string]any{"templateId": id, "format": "pdf",
		"documents": []any{map[string]any{"variables": vars}}})
	s.wantError(b, 400, "ERR_VALID_003")

	const pw = "pw-Okapi-22391"
	g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "pdf", "variables": vars,
		"encrypt": map[string]any{"userPassword": pw}})
	_, _, pdf := s.download(g.str("downloadUrl"))
	if enc, ok := poppler(t, pdf, "qpdf", "--show-encryption", "--password="+pw); !ok || !strings.Contains(enc, "R = 6") {
		t.Errorf("qpdf --show-encryption:\n%s", enc)
	}
	if text, ok := poppler(t, pdf, "pdftotext", "-upw", pw); !ok || !strings.Contains(text, "Ada Lovelace") {
		t.Errorf("pdftotext with the password: %s", text)
	}

	// The editor's preview is a DRAFT, not a document sent to anyone.
	p := s.must(200, "POST", "/api/templates/"+id+"/preview", u.token, map[string]any{"variables": vars})
	if text, ok := poppler(t, p.raw, "pdftotext", "-raw"); !ok || !strings.Contains(text, "Ada Lovelace") || !strings.Contains(strings.Join(strings.Fields(text), ""), "DRAFT") {
		t.Errorf("preview, read without a password: %s", text)
	}

	bad := map[string]any{}
	for k, v := range def {
		bad[k] = v
	}
	bad["schema"] = map[string]any{"encrypt": map[string]any{"required": true, "userPassword": "secret"},
		"sections": def["schema"].(map[string]any)["sections"]}
	bad["name"] = "Leaky payslip"
	r = s.do("POST", "/api/templates", u.token, bad)
	if r.status != 400 || !strings.Contains(string(r.raw), "schema.encrypt.userPassword") {
		t.Errorf("a schema with a password: %d %s", r.status, r.raw)
	}
}
