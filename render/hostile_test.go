package render

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// TestHostileButValidTemplates renders templates that are legal but push
// every dimension to (or past) its limit, with text the font cannot draw.
// Each must end in a document or a limit error carrying its ERR_LIMIT_
// code, never a panic, a hang or another kind of error (issue 13).
func TestHostileButValidTemplates(t *testing.T) {
	if raceEnabled {
		// One goroutine renders each case, so the race detector cannot report
		// anything here; the bulk is encoding a 12- and a 36-megapixel PNG and
		// rendering limit-sized inputs (100 s of the race step at load 10).
		t.Skip("renders limit-sized inputs in one goroutine; run without -race")
	}
	text := func(content string) string {
		b, _ := json.Marshal(content)
		return `{"type":"text","props":{"content":` + string(b) + `}}`
	}
	repeat := func(n int, c string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = c
		}
		return strings.Join(parts, ",")
	}
	// nested wraps c in n levels of single-column columns.
	nested := func(n int, c string) string {
		for range n {
			c = `{"type":"columns","props":{"children":[[` + c + `]]}}`
		}
		return c
	}
	body := func(components string) string {
		return `{"pageSize":"A4","sections":[{"id":"body","components":[` + components + `]}]}`
	}

	items := make([]any, 1000)
	for i := range items {
		items[i] = map[string]any{"n": i, "name": fmt.Sprintf("row %d", i)}
	}
	longCell := strings.Repeat("x", 32767)
	tooLongCell := strings.Repeat("y", 32768)
	longWord := strings.Repeat("W", 20000)
	// Zero-width characters, right-to-left scripts, and scripts the Go font
	// has no glyphs for (Hebrew, Arabic, CJK, emoji, a private-use rune).
	strange := "a\u200bb\u200dc\ufeffd \u202eevil\u202c שלום مرحبا 漢字かな 😀👍🏽 \ue000 Grüße Ωμέγα Привет"

	tests := []struct {
		name   string
		schema string
		vars   map[string]any
		format Format
		// wantText must appear in the PDF's text when the render succeeds.
		wantText string
		// wantCode, when set, is the only acceptable outcome.
		wantCode string
	}{
		{name: "500 components", schema: body(repeat(500, text("line"))), format: PDF, wantText: "line"},
		{name: "nesting at the depth limit", schema: body(nested(9, text("deep inside"))), format: PDF, wantText: "deep inside"},
		{name: "1000-iteration loop of tables", format: PDF, wantCode: "ERR_LIMIT_001",
			schema: body(`{"type":"table","each":"items","as":"it","props":{"rows":"[it]","columns":[{"header":"N","value":"{{row.n}}"},{"header":"Name","value":"{{row.name}}"}]}}`),
			vars:   map[string]any{"items": items}},
		{name: "1000-row table", format: PDF, wantText: "row 999",
			schema: body(`{"type":"table","props":{"rows":"items","columns":[{"header":"N","value":"{{row.n}}"},{"header":"Name","value":"{{row.name}}"}]}}`),
			vars:   map[string]any{"items": items}},
		{name: "1000-row table to XLSX", format: XLSX,
			schema: body(`{"type":"table","props":{"rows":"items","columns":[{"header":"N","value":"{{row.n}}"},{"header":"Name","value":"{{row.name}}"}]}}`),
			vars:   map[string]any{"items": items}},
		{name: "32,767-character cell", format: XLSX, schema: body(text("{{cell}}")), vars: map[string]any{"cell": longCell}},
		{name: "32,768-character cell", format: XLSX, schema: body(text("{{cell}}")), vars: map[string]any{"cell": tooLongCell}, wantCode: "ERR_LIMIT_016"},
		{name: "32,767 characters in a PDF paragraph", format: PDF, schema: body(text("{{cell}}")), vars: map[string]any{"cell": longCell}},
		{name: "a 20,000-character word", format: PDF, schema: body(text("{{w}}")), vars: map[string]any{"w": longWord}},
		{name: "zero-width, right-to-left and missing glyphs", format: PDF, schema: body(text("{{s}}")), vars: map[string]any{"s": strange}, wantText: "Grüße Ωμέγα Привет"},
		{name: "missing glyphs in a table and a heading", format: PDF,
			schema: body(`{"type":"heading","props":{"content":"{{s}}","level":1}},{"type":"table","props":{"rows":"[s, s]","columns":[{"header":"{{s}}","value":"{{row}}"}]}}`),
			vars:   map[string]any{"s": strange}, wantText: "Привет"},
		{name: "missing glyphs to XLSX", format: XLSX, schema: body(text("{{s}}")), vars: map[string]any{"s": strange}},
		{name: "a 4000x3000 image", format: PDF, schema: body(`{"type":"image","props":{"src":"{{img}}","width":100}}`),
			vars: map[string]any{"img": pngDataURI(t, 4000, 3000)}},
		{name: "an image past the memory budget", format: PDF, schema: body(`{"type":"image","props":{"src":"{{img}}","width":100}}`),
			vars: map[string]any{"img": pngDataURI(t, 6000, 6000)}, wantCode: "ERR_LIMIT_017"},
		{name: "51 images", format: PDF, wantCode: "ERR_LIMIT_002",
			schema: body(`{"type":"qrcode","each":"items","as":"it","props":{"value":"{{it.n}}","size":10}}`),
			vars:   map[string]any{"items": items[:51]}},
		{name: "a 50-column table", format: PDF,
			schema: body(`{"type":"table","props":{"rows":"[1,2,3]","columns":[` + repeat(50, `{"header":"Column header","value":"{{row}} and more text"}`) + `]}}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := MustEngine(t).Compile(schemaDef(tt.schema))
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			values, err := tpl.Values(tt.vars)
			if err != nil {
				t.Fatalf("Values: %v", err)
			}
			var buf bytes.Buffer
			stats, err := tpl.Render(context.Background(), &buf, tt.format, values, Options{})
			var le *LimitError
			switch {
			case err != nil && errors.As(err, &le):
				if tt.wantCode != "" && le.Code != tt.wantCode {
					t.Fatalf("limit error %s (%v), want %s", le.Code, err, tt.wantCode)
				}
				if !strings.HasPrefix(le.Code, "ERR_LIMIT_") || le.Actual <= le.Max {
					t.Fatalf("limit error without its figures: %+v", le)
				}
				return
			case err != nil:
				t.Fatalf("Render: %v (want a document or a limit error)", err)
			case tt.wantCode != "":
				t.Fatalf("rendered (%d pages, %d bytes), want %s", stats.Pages, stats.Bytes, tt.wantCode)
			}
			switch tt.format {
			case PDF:
				if stats.Pages < 1 || !bytes.HasPrefix(buf.Bytes(), []byte("%PDF-")) {
					t.Fatalf("not a PDF: %d pages, %q", stats.Pages, buf.Bytes()[:min(buf.Len(), 8)])
				}
				got := ExtractText(t, buf.Bytes())
				if tt.wantText != "" && !strings.Contains(got, tt.wantText) {
					t.Fatalf("PDF text lacks %q:\n%.400s", tt.wantText, got)
				}
			case XLSX:
				f, err := excelize.OpenReader(bytes.NewReader(buf.Bytes()))
				if err != nil {
					t.Fatalf("not a workbook: %v", err)
				}
				defer f.Close()
				if len(f.GetSheetList()) == 0 {
					t.Fatal("workbook without sheets")
				}
			}
		})
	}
}
