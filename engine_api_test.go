package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"folio/render"
)

// blanks are runs of spaces pdftotext -layout puts between columns.
var blanks = regexp.MustCompile(`[ \t]+`)

const xlsxContentType = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"

// schemaOf is a schema with one body section holding components.
func schemaOf(components ...string) json.RawMessage {
	return json.RawMessage(`{"sections":[{"id":"b","components":[` + strings.Join(components, ",") + `]}]}`)
}

// nested is a text component inside n-1 columns, each of the n levels
// carrying attrs (`"each":"xs",` nests n loops, `"if":"true",` n conditions).
func nested(n int, attrs string) string {
	c := `{"type":"text",` + attrs + `"props":{"content":"deep"}}`
	for range n - 1 {
		c = `{"type":"columns",` + attrs + `"props":{"children":[[` + c + `]]}}`
	}
	return c
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(`{"type":"text","props":{"content":"line %d"}}`, i)
	}
	return out
}

func stringVariables(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"name": fmt.Sprintf("v%d", i), "type": "string"}
	}
	return out
}

// wantLimit asserts a limit error and its relatedInfo {limit, actual, max}.
func (s *testServer) wantLimit(r resp, code, limit string, actual, max int) {
	s.t.Helper()
	s.wantError(r, 400, code)
	if r.str("relatedInfo.limit") != limit || r.str("relatedInfo.actual") != fmt.Sprint(actual) || r.str("relatedInfo.max") != fmt.Sprint(max) {
		s.t.Fatalf("relatedInfo = %v, want limit %s, actual %d, max %d", r.get("relatedInfo"), limit, actual, max)
	}
}

// TestTemplateLimitsOnSave checks that a template over a limit on its own
// size is refused when saved, with the limit's code and figures and the
// path of every offending component.
func TestTemplateLimitsOnSave(t *testing.T) {
	s := startServer(t)
	u := s.signup("Limits")
	save := func(name string, schema json.RawMessage, variables []any) resp {
		return s.do("POST", "/api/templates", u.token, map[string]any{"name": name, "outputFormats": []string{"pdf"}, "schema": schema, "variables": variables})
	}
	tests := []struct {
		name        string
		schema      json.RawMessage
		variables   []any
		code, limit string
		actual, max int
		path        string // one of relatedInfo.errors
	}{
		{"501 components", schemaOf(texts(501)...), nil, "ERR_LIMIT_009", "components", 501, 500, "schema"},
		{"11 levels", schemaOf(nested(11, "")), nil, "ERR_LIMIT_008", "nestingDepth", 11, 10,
			"schema.sections[0].components[0]" + strings.Repeat(".props.children[0][0]", 10)},
		{"4 nested loops", schemaOf(nested(4, `"each":"xs",`)), nil, "ERR_LIMIT_008", "loopDepth", 4, 3,
			"schema.sections[0].components[0]" + strings.Repeat(".props.children[0][0]", 3) + ".each"},
		{"6 nested conditions", schemaOf(nested(6, `"if":"true",`)), nil, "ERR_LIMIT_008", "conditionalDepth", 6, 5,
			"schema.sections[0].components[0]" + strings.Repeat(".props.children[0][0]", 5) + ".if"},
		{"501 variables", schemaOf(texts(1)...), stringVariables(501), "ERR_LIMIT_018", "variables", 501, 500, "variables"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := save(tt.name, tt.schema, tt.variables)
			s.wantLimit(r, tt.code, tt.limit, tt.actual, tt.max)
			if !strings.Contains(string(r.raw), `"path":"`+tt.path+`"`) {
				t.Errorf("relatedInfo.errors lacks path %s: %s", tt.path, r.raw)
			}
		})
	}
	if l := s.must(200, "GET", "/api/templates", u.token, nil); l.str("meta.total") != "0" {
		t.Fatalf("refused templates were stored: %s", l.raw)
	}
	// At the limits a template is accepted.
	for name, schema := range map[string]json.RawMessage{
		"500 components": schemaOf(texts(500)...), "10 levels": schemaOf(nested(10, "")),
		"3 loops": schemaOf(nested(3, `"each":"xs",`)), "5 conditions": schemaOf(nested(5, `"if":"true",`)),
	} {
		if r := save(name, schema, nil); r.status != 200 {
			t.Errorf("%s: %d %s", name, r.status, r.raw)
		}
	}
	s.must(200, "POST", "/api/templates", u.token, map[string]any{"name": "500 variables", "outputFormats": []string{"pdf"}, "schema": schemaOf(texts(1)...), "variables": stringVariables(500)})

	// Changing a template goes through the same check, and leaves it as it was.
	tpl := s.createTemplate(u.token, "Grows", map[string]any{"outputFormats": []string{"pdf"}, "schema": schemaOf(texts(2)...)})
	s.wantLimit(s.do("PUT", "/api/templates/"+tpl.str("id"), u.token, map[string]any{"schema": schemaOf(texts(501)...)}), "ERR_LIMIT_009", "components", 501, 500)
	s.wantLimit(s.do("PUT", "/api/templates/"+tpl.str("id"), u.token, map[string]any{"variables": stringVariables(501)}), "ERR_LIMIT_018", "variables", 501, 500)
	if got := s.must(200, "GET", "/api/templates/"+tpl.str("id"), u.token, nil); strings.Count(string(got.raw), `"type":"text"`) != 2 {
		t.Fatalf("refused update changed the template: %s", got.raw)
	}
	// An import reports import data invalid, with the limit as its cause.
	file, _ := json.Marshal(map[string]any{"name": "Imported", "outputFormats": []string{"pdf"}, "schema": schemaOf(nested(4, `"each":"xs",`))})
	im := s.upload("/api/templates/import", u.token, file, nil)
	s.wantError(im, 400, "ERR_TMPL_010")
	if im.str("relatedInfo.cause") != "ERR_LIMIT_008" || im.str("relatedInfo.details.limit") != "loopDepth" || im.str("relatedInfo.details.actual") != "4" || im.str("relatedInfo.details.max") != "3" {
		t.Fatalf("import over the loop depth = %s", im.raw)
	}
}

// TestCalculatedVariableErrorsOnSave checks that a cycle or an unknown name
// among calculated variables is refused on save with the path of the problem.
func TestCalculatedVariableErrorsOnSave(t *testing.T) {
	s := startServer(t)
	u := s.signup("Calc")
	body := func(calc ...map[string]any) map[string]any {
		return map[string]any{"name": "Calc", "outputFormats": []string{"pdf"}, "schema": schemaOf(texts(1)...),
			"variables": []any{map[string]any{"name": "qty", "type": "integer"}}, "calculatedVariables": calc}
	}
	tests := []struct {
		name       string
		calc       []map[string]any
		path, want string
	}{
		{"cycle", []map[string]any{{"name": "net", "expression": "qty * 10"}, {"name": "a", "expression": "b + net"}, {"name": "b", "expression": "a * 2"}},
			"calculatedVariables[1].expression", "cycle: a → b → a"},
		{"unknown name", []map[string]any{{"name": "net", "expression": "qty * price"}},
			"calculatedVariables[0].expression", `unknown variable "price"`},
	}
	tpl := s.createTemplate(u.token, "Fine", body(map[string]any{"name": "net", "expression": "qty * 10"}))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range []resp{
				s.do("POST", "/api/templates", u.token, body(tt.calc...)),
				s.do("PUT", "/api/templates/"+tpl.str("id"), u.token, map[string]any{"calculatedVariables": tt.calc}),
			} {
				s.wantError(r, 400, "ERR_TMPL_008")
				errs, _ := r.get("relatedInfo.errors").([]any)
				found := false
				for _, e := range errs {
					e, _ := e.(map[string]any)
					if e["path"] == tt.path && strings.Contains(fmt.Sprint(e["message"]), tt.want) {
						found = true
					}
				}
				if !found {
					t.Errorf("relatedInfo.errors lacks {%s: …%s…}: %s", tt.path, tt.want, r.raw)
				}
			}
		})
	}
}

// TestPreviewFormatsAndLimitInfo checks the preview's Content-Type per
// format and that a limit stops preview and generate alike, naming the
// limit, how far the render got and the maximum.
func TestPreviewFormatsAndLimitInfo(t *testing.T) {
	s := startServer(t, func(c *Config) { c.Limits = &render.Limits{Rows: 20} })
	u := s.signup("Formats")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Both", map[string]any{"outputFormats": []string{"pdf", "xlsx"},
		"schema": schemaOf(`{"type":"heading","props":{"content":"Orders of {{ customer }}"}}`,
			`{"type":"table","props":{"rows":"rows","columns":[{"header":"No.","value":"{{ row }}"}]}}`),
		"variables": []any{map[string]any{"name": "customer", "type": "string", "required": true}, map[string]any{"name": "rows", "type": "array", "defaultValue": []any{1, 2, 3}}}})
	preview := "/api/templates/" + tpl.str("id") + "/preview"
	vars := map[string]any{"customer": "Müller"}

	pdf := s.must(200, "POST", preview, u.token, map[string]any{"format": "pdf", "variables": vars})
	if ct := pdf.header.Get("Content-Type"); ct != "application/pdf" || !bytes.HasPrefix(pdf.raw, []byte("%PDF-")) {
		t.Fatalf("PDF preview: Content-Type %q, starts %q", ct, pdf.raw[:min(8, len(pdf.raw))])
	}
	if text := pdfText(t, pdf.raw); !strings.Contains(text, "Orders of Müller") {
		t.Fatalf("PDF preview text:\n%s", text)
	}
	x := s.must(200, "POST", preview, u.token, map[string]any{"format": "xlsx", "variables": vars})
	if ct := x.header.Get("Content-Type"); ct != xlsxContentType {
		t.Fatalf("XLSX preview: Content-Type %q, want %s", ct, xlsxContentType)
	}
	f, err := excelize.OpenReader(bytes.NewReader(x.raw))
	if err != nil {
		t.Fatalf("the XLSX preview does not open: %v", err)
	}
	rows, _ := f.GetRows(f.GetSheetList()[0])
	f.Close()
	if got := fmt.Sprint(rows); !strings.Contains(got, "Orders of Müller") || !strings.Contains(got, "No.") {
		t.Fatalf("XLSX preview rows = %v", rows)
	}

	// 25 table rows, a heading and a header row: 27 rows against a limit of
	// 20 set for this server; the render stops at the 21st.
	many := map[string]any{"customer": "Big", "rows": numbersTo(25)}
	s.wantLimit(s.do("POST", preview, u.token, map[string]any{"format": "xlsx", "variables": many}), "ERR_LIMIT_003", "rows", 21, 20)
	g := s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "xlsx", "variables": many})
	s.wantLimit(g, "ERR_LIMIT_003", "rows", 21, 20)
	job := s.must(200, "GET", "/api/v1/documents/jobs/"+g.str("relatedInfo.jobId"), key, nil)
	if job.str("status") != "failed" || job.str("errorCode") != "ERR_LIMIT_003" {
		t.Fatalf("failed job = %s", job.raw)
	}

	// The PDF page limit is the specification's (30): this server changed rows only.
	long := s.createTemplate(u.token, "Long", longTemplate())
	lv := map[string]any{"body": longText}
	s.wantLimit(s.do("POST", "/api/templates/"+long.str("id")+"/preview", u.token, map[string]any{"variables": lv}), "ERR_LIMIT_001", "pages", 31, 30)
	s.wantLimit(s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": long.str("id"), "format": "pdf", "variables": lv}), "ERR_LIMIT_001", "pages", 31, 30)
}

func numbersTo(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// TestRenderTimeoutIsAJobError runs a server whose per-document timeouts
// are a nanosecond: every render runs out of time and is reported as
// ERR_JOB_006, by generate, by the job record, by preview and by a dry run.
func TestRenderTimeoutIsAJobError(t *testing.T) {
	s := startServer(t, func(c *Config) {
		c.Limits = &render.Limits{PDFTimeout: time.Nanosecond, XLSXTimeout: time.Nanosecond}
	})
	u := s.signup("Slow")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	vars := map[string]any{"number": "T-1", "customer": "Late Ltd"}
	g := s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": vars})
	s.wantError(g, 400, "ERR_JOB_006")
	if g.str("relatedInfo.jobId") == "" || g.get("relatedInfo.timeoutSeconds") == nil {
		t.Fatalf("timeout relatedInfo = %s", g.raw)
	}
	job := s.must(200, "GET", "/api/v1/documents/jobs/"+g.str("relatedInfo.jobId"), key, nil)
	if job.str("status") != "failed" || job.str("errorCode") != "ERR_JOB_006" || job.get("downloadUrl") != nil {
		t.Fatalf("timed-out job = %s", job.raw)
	}
	s.wantError(s.do("POST", "/api/templates/"+tpl.str("id")+"/preview", u.token, map[string]any{"variables": vars}), 400, "ERR_JOB_006")
	dry := s.must(200, "POST", "/api/v1/documents/generate?dryRun=true", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": vars})
	if dry.str("valid") != "false" || !strings.Contains(string(dry.raw), `"code":"ERR_JOB_006"`) {
		t.Fatalf("dry run = %s", dry.raw)
	}
}

// TestQuickStartExamples follows the README's quick start: each example
// template is created through the API as it is in testdata/templates, then
// generated by its slug with its example variables, as PDF and as XLSX.
func TestQuickStartExamples(t *testing.T) {
	s := startServer(t)
	u := s.signup("Quick")
	key := s.createKey(u.token, nil)
	tests := []struct {
		file, name, slug string
		pages            int
		pdf              []string // lines pdftotext -layout finds, blanks squeezed
		sheet            string
		cells            []string
	}{
		{"invoice", "Example invoice", "example-invoice", 1,
			[]string{"Invoice INV-2026-0042", "Ωμέγα Trading Ltd.", "Grüße-Paket: Übersetzung der Vorlagen (DE/EL/RU)", "Total due €3,530.14"},
			"Invoice", []string{"Invoice INV-2026-0042", "Total due", "3530.14"}},
		{"monthly-report", "Example monthly report", "example-monthly-report", 3,
			[]string{"Sales report November 2026", "DACH 1,012 €48,210.50 52.6%", "Ελλάδα 141 €6,120.75 6.7%", "Confidential · Page 3 of 3"},
			"Summary", []string{"Revenue by region", "DACH"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			var tpl map[string]any
			readJSON(t, filepath.Join("testdata", "templates", tt.file+".json"), &tpl)
			var vars map[string]any
			readJSON(t, filepath.Join("testdata", "templates", tt.file+".vars.json"), &vars)
			tpl["name"] = tt.name
			created := s.must(200, "POST", "/api/templates", u.token, tpl)
			if created.str("slug") != tt.slug {
				t.Fatalf("slug = %q, want %q", created.str("slug"), tt.slug)
			}

			g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tt.slug, "format": "pdf", "variables": vars})
			status, h, pdf := s.download(g.str("downloadUrl"))
			if status != 200 || h.Get("Content-Type") != "application/pdf" {
				t.Fatalf("PDF download: %d %v", status, h)
			}
			if got := pdfPageCount(t, pdf); got != tt.pages {
				t.Errorf("pages = %d, want %d", got, tt.pages)
			}
			text := blanks.ReplaceAllString(pdfText(t, pdf), " ")
			for _, want := range tt.pdf {
				if !strings.Contains(text, want) {
					t.Errorf("PDF lacks %q:\n%s", want, text)
				}
			}

			g = s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tt.slug, "format": "xlsx", "variables": vars})
			status, h, xlsx := s.download(g.str("downloadUrl"))
			if status != 200 || h.Get("Content-Type") != xlsxContentType {
				t.Fatalf("XLSX download: %d %v", status, h)
			}
			f, err := excelize.OpenReader(bytes.NewReader(xlsx))
			if err != nil {
				t.Fatalf("workbook does not open: %v", err)
			}
			defer f.Close()
			rows, err := f.GetRows(tt.sheet, excelize.Options{RawCellValue: true})
			if err != nil {
				t.Fatalf("sheet %q: %v (sheets %v)", tt.sheet, err, f.GetSheetList())
			}
			cells := fmt.Sprint(rows)
			for _, want := range tt.cells {
				if !strings.Contains(cells, want) {
					t.Errorf("sheet %q lacks %q: %v", tt.sheet, want, rows)
				}
			}
		})
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
