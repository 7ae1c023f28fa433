package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// markdownTemplate is a report whose contents come before the Markdown
// they list; the Markdown arrives in a variable.
var markdownTemplate = map[string]any{
	"templateType":  "attachment",
	"outputFormats": []string{"pdf"},
	"schema": map[string]any{"sections": []any{map[string]any{"id": "b", "components": []any{
		map[string]any{"type": "toc", "props": map[string]any{"title": "Contents"}},
		map[string]any{"type": "pageBreak"},
		map[string]any{"type": "markdown", "props": map[string]any{"content": "{{ body }}"}},
		map[string]any{"type": "text", "props": map[string]any{"content": "Back to the start", "link": "#intro"}},
	}}}},
	"variables": []any{map[string]any{"name": "body", "type": "string", "required": true}},
}

// qpdfJSON returns qpdf's JSON description of a PDF.
func qpdfJSON(t *testing.T, pdf []byte) string {
	t.Helper()
	if _, err := exec.LookPath("qpdf"); err != nil {
		t.Skip("qpdf not installed")
	}
	path := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("qpdf", "--json=2", path).Output()
	if err != nil {
		t.Fatalf("qpdf: %v", err)
	}
	return string(out)
}

func TestMarkdownThroughTheAPI(t *testing.T) {
	s := startServer(t)
	u := s.signup("Writer")
	tpl := s.createTemplate(u.token, "Report", markdownTemplate)
	body := "# Intro\n\nSee **the numbers** on [our site](https://example.com/numbers).\n\n## Details\n\n- one\n- two\n"
	r := s.do("POST", "/api/templates/"+tpl.str("id")+"/preview", u.token, map[string]any{"variables": map[string]any{"body": body}})
	if r.status != 200 || r.header.Get("Content-Type") != "application/pdf" || r.header.Get("X-Folio-Pages") != "2" {
		t.Fatalf("preview: %d %v\n%s", r.status, r.header, r.raw)
	}
	text := pdfText(t, r.raw)
	for _, want := range []string{"Contents", "Intro", "Details", "See the numbers on our site.", "• one"} {
		if !strings.Contains(text, want) {
			t.Errorf("PDF text lacks %q:\n%s", want, text)
		}
	}
	// The contents list both headings on page 2, with leaders.
	if !strings.Contains(text, "Intro . . .") || !strings.Contains(text, "Details . . .") {
		t.Errorf("contents lack their leaders:\n%s", text)
	}
	js := qpdfJSON(t, r.raw)
	for _, want := range []string{`"/URI": "u:https://example.com/numbers"`, `"title": "Intro"`, `"title": "Details"`, `"destpageposfrom1": 2`} {
		if !strings.Contains(js, want) {
			t.Errorf("qpdf --json lacks %s", want)
		}
	}

	// A link to anything but http, https, mailto or an anchor is refused
	// with the component's path: when saved...
	bad := s.must(200, "POST", "/api/templates/validate-schema", u.token, map[string]any{"templateType": "attachment",
		"schema": map[string]any{"sections": []any{map[string]any{"id": "a", "components": []any{
			map[string]any{"type": "markdown", "props": map[string]any{"content": "[run](javascript:alert(1))"}}}}}}})
	if bad.str("valid") != "false" || !strings.Contains(string(bad.raw), "sections[0].components[0].props.content") || !strings.Contains(string(bad.raw), "javascript") {
		t.Fatalf("validate-schema = %s", bad.raw)
	}
	// ... and when a value brings it.
	r = s.do("POST", "/api/templates/"+tpl.str("id")+"/preview", u.token, map[string]any{"variables": map[string]any{"body": "[x](file:///etc/passwd)"}})
	s.wantError(r, 400, "ERR_TMPL_024")
	if !strings.Contains(string(r.raw), "props.content") || !strings.Contains(string(r.raw), "file: scheme") {
		t.Fatalf("preview error = %s", r.raw)
	}
}
