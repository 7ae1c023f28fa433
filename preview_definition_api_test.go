package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// TestPreviewDefinition: POST /api/templates/preview renders a definition
// sent in the body, without storing a template, a draft or a job. Without
// variables it renders the definition's sampleData; a definition that would
// not save gets the save's ERR_TMPL_008 with every path.
func TestPreviewDefinition(t *testing.T) {
	s := startServer(t)
	u := s.signup("Drafter")
	def := map[string]any{}
	for k, v := range invoiceTemplate {
		def[k] = v
	}
	def["sampleData"] = map[string]any{"number": "SAMPLE-9", "customer": "Sample AG"}

	r := s.do("POST", "/api/templates/preview", u.token, map[string]any{"template": def, "variables": map[string]any{"number": "D-1", "customer": "Draft GmbH"}})
	if r.status != 200 || r.header.Get("Content-Type") != "application/pdf" || r.header.Get("X-Folio-Pages") != "1" {
		t.Fatalf("preview: %d %v %s", r.status, r.header, r.raw)
	}
	if text := pdfText(t, r.raw); !strings.Contains(text, "Bill to: Draft GmbH") || !strings.Contains(text, "Note: Thank you") {
		t.Fatalf("preview text:\n%s", text)
	}
	// No variables: the sample data.
	r = s.do("POST", "/api/templates/preview", u.token, map[string]any{"template": def})
	if text := pdfText(t, r.raw); r.status != 200 || !strings.Contains(text, "Invoice SAMPLE-9") {
		t.Fatalf("preview of the sample data: %d\n%s", r.status, text)
	}
	// XLSX, read back as cells.
	r = s.do("POST", "/api/templates/preview", u.token, map[string]any{"template": def, "format": "xlsx"})
	if r.status != 200 || r.header.Get("X-Folio-Sheets") != "1" {
		t.Fatalf("xlsx preview: %d %v", r.status, r.header)
	}
	f, err := excelize.OpenReader(bytes.NewReader(r.raw))
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := f.GetRows(f.GetSheetList()[0])
	if len(rows) == 0 || rows[0][0] != "Invoice SAMPLE-9" {
		t.Fatalf("xlsx rows %q", rows)
	}

	// Nothing was stored: no template, no job.
	if l := s.must(200, "GET", "/api/templates", u.token, nil); l.str("meta.total") != "0" {
		t.Fatalf("a preview stored a template: %s", l.raw)
	}
	if l := s.must(200, "GET", "/api/v1/documents/jobs", u.token, nil); l.str("meta.total") != "0" {
		t.Fatalf("a preview recorded a job: %s", l.raw)
	}

	// A definition that would not save: every problem with its path.
	bad := map[string]any{"schema": map[string]any{"sections": []any{map[string]any{"id": "b", "components": []any{
		map[string]any{"type": "text", "props": map[string]any{"content": "ok"}},
		map[string]any{"type": "sparkline"},
	}}}}}
	r = s.do("POST", "/api/templates/preview", u.token, map[string]any{"template": bad})
	s.wantError(r, 400, "ERR_TMPL_008")
	if !strings.Contains(string(r.raw), `"path":"schema.sections[0].components[1].type"`) {
		t.Fatalf("schema error without its path: %s", r.raw)
	}
	s.wantError(s.do("POST", "/api/templates/preview", u.token, map[string]any{"template": def, "variables": map[string]any{}}), 400, "ERR_VALID_002")
	s.wantError(s.do("POST", "/api/templates/preview", u.token, map[string]any{}), 400, "ERR_VALID_005")
	s.wantError(s.do("POST", "/api/templates/preview", u.token, map[string]any{"template": map[string]any{"name": "x"}}), 400, "ERR_VALID_005")
	s.wantError(s.do("POST", "/api/templates/preview", u.token, map[string]any{"template": def, "format": "docx"}), 400, "ERR_VALID_003")
	s.wantError(s.do("POST", "/api/templates/preview", "", map[string]any{"template": def}), 401, "ERR_AUTH_003")

	// An API key may preview, and an export file's template previews as it is.
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Stored", def)
	ex := s.must(200, "GET", "/api/templates/"+tpl.str("id")+"/export", u.token, nil)
	r = s.do("POST", "/api/templates/preview", key, []byte(`{"template":`+string(mustField(t, ex.raw, "template"))+`}`))
	if text := pdfText(t, r.raw); r.status != 200 || !strings.Contains(text, "Bill to: Sample AG") {
		t.Fatalf("preview of an export file's template: %d\n%s", r.status, text)
	}
	// The stored template's preview without a body renders its sample data too.
	r = s.do("POST", "/api/templates/"+tpl.str("id")+"/preview", u.token, nil)
	if text := pdfText(t, r.raw); r.status != 200 || !strings.Contains(text, "Invoice SAMPLE-9") {
		t.Fatalf("preview by id without a body: %d\n%s", r.status, text)
	}
}

// mustField returns one top-level field of a JSON object as raw JSON.
func mustField(t *testing.T, raw []byte, name string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m[name] == nil {
		t.Fatalf("no %s in %s", name, raw)
	}
	return m[name]
}
