package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMissingGlyphsInRequestValues checks that characters no font can
// draw in a request's values are named (U+XXXX) with their variable path
// by a preview (X-Folio-Warnings) and a dry run, and that the document
// still renders.
func TestMissingGlyphsInRequestValues(t *testing.T) {
	s := startServer(t)
	u := s.signup("glyphs")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Glyphs", map[string]any{"outputFormats": []string{"pdf"},
		"schema": map[string]any{"sections": []any{map[string]any{"id": "b", "components": []any{
			map[string]any{"type": "text", "props": map[string]any{"content": "{{customer.name}}"}},
			map[string]any{"type": "table", "props": map[string]any{"rows": "items", "columns": []any{map[string]any{"header": "Item", "value": "{{row.title}}"}}}},
		}}}},
		"variables": []any{map[string]any{"name": "customer", "type": "object"}, map[string]any{"name": "items", "type": "array"}}})
	vars := map[string]any{"customer": map[string]any{"name": "Zanabazar \U00011A00\U00011A01"},
		"items": []any{map[string]any{"title": "ok 中文 ✅"}, map[string]any{"title": "bad \U0001FAE8"}}}
	want := map[string]string{"customer.name": "U+11A00", "items[1].title": "U+1FAE8"}
	check := func(what string, issues []map[string]any) {
		t.Helper()
		got := map[string]string{}
		for _, w := range issues {
			v, _ := w["variable"].(string)
			got[v], _ = w["message"].(string)
		}
		for v, code := range want {
			if !strings.Contains(got[v], code) || !strings.Contains(got[v], "no font can draw") {
				t.Errorf("%s: %s: %q, want it to name %s", what, v, got[v], code)
			}
		}
		if _, ok := got["items[0].title"]; ok {
			t.Errorf("%s warns about characters the fallback fonts draw: %v", what, got)
		}
	}

	r := s.do("POST", "/api/templates/"+tpl.str("id")+"/preview", u.token, map[string]any{"variables": vars})
	if r.status != 200 {
		t.Fatalf("preview: %d %s", r.status, r.raw)
	}
	h := r.header.Get("X-Folio-Warnings")
	var issues []map[string]any
	if err := json.Unmarshal([]byte(h), &issues); err != nil {
		t.Fatalf("X-Folio-Warnings %q: %v", h, err)
	}
	check("preview", issues)
	if text := pdfText(t, r.raw); !strings.Contains(text, "Zanabazar") || !strings.Contains(text, "ok 中文") {
		t.Fatalf("preview text:\n%s", text)
	}
	// A preview whose values every font draws has none.
	r = s.do("POST", "/api/templates/"+tpl.str("id")+"/preview", u.token, map[string]any{"variables": map[string]any{"customer": map[string]any{"name": "Ada"}, "items": []any{}}})
	if r.status != 200 || r.header.Get("X-Folio-Warnings") != "[]" {
		t.Fatalf("clean preview: %d %q", r.status, r.header.Get("X-Folio-Warnings"))
	}

	dry := s.must(200, "POST", "/api/v1/documents/generate?dryRun=true", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": vars})
	var d struct {
		Valid    bool             `json:"valid"`
		Warnings []map[string]any `json:"warnings"`
	}
	if err := json.Unmarshal(dry.raw, &d); err != nil || !d.Valid {
		t.Fatalf("dry run: %v %s", err, dry.raw)
	}
	check("dry run", d.Warnings)
}
