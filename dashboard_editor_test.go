package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// TestDashboardEditorSampleData: the editor's sample form fills from the
// template's stored sample data, whoever opens it (a template made from an
// example, one made through the API), and Save stores the form back,
// keeping values of variables the form does not show.
func TestDashboardEditorSampleData(t *testing.T) {
	s := startServer(t)
	u := s.signup("Editor")
	c := dashClient(t, s)
	c.login(u)

	res := c.post("/app/templates", url.Values{"csrf": {c.token("/app/templates/new")}, "example": {"invoice"}, "name": {"Invoice"}})
	id := strings.TrimPrefix(res.Header.Get("Location"), "/app/templates/")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(id, "tpl_") {
		t.Fatalf("create: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	// Another browser of the same user (no URL parameter, no local storage)
	// sees the example's values.
	other := dashClient(t, s)
	other.login(u)
	if page := other.page("/app/templates/" + id); !strings.Contains(page, `name="var.invoiceNumber" value="INV-2026-0042"`) {
		t.Fatal("the editor's sample form lacks the stored invoiceNumber")
	}
	if got := s.must(200, "GET", "/api/templates/"+id, u.token, nil); got.str("sampleData.invoiceNumber") != "INV-2026-0042" {
		t.Fatalf("sampleData through the API: %s", got.raw)
	}

	// A template made through the API with sampleData opens filled too, and
	// a default shows as the placeholder of an empty field.
	body := map[string]any{}
	for k, v := range invoiceTemplate {
		body[k] = v
	}
	body["sampleData"] = map[string]any{"number": "API-7", "customer": "Über <API> GmbH", "extra": "kept"}
	api := s.createTemplate(u.token, "From the API", body).str("id")
	page := c.page("/app/templates/" + api)
	for _, want := range []string{`name="var.number" value="API-7"`, `name="var.customer" value="Über &lt;API&gt; GmbH"`, `name="var.note" value="" placeholder="Thank you"`} {
		if !strings.Contains(page, want) {
			t.Fatalf("editor of an API template lacks %s", want)
		}
	}

	// Save stores the form's values; "extra" (declared by no variable) stays.
	form := func(number string) url.Values {
		return url.Values{"csrf": {c.csrf()}, "name": {"From the API"}, "outputFormats": {"pdf"},
			"schema": {mustJSON(t, invoiceTemplate["schema"])}, "variables": {mustJSON(t, invoiceTemplate["variables"])},
			"var.number": {number}, "var.customer": {"Saved Ltd"}, "var.note": {""}}
	}
	if flash := c.flash(c.post("/app/templates/"+api, form("API-8"))); !strings.Contains(flash, "Saved") {
		t.Fatalf("save: %q", flash)
	}
	got := s.must(200, "GET", "/api/templates/"+api, u.token, nil)
	if sampleOf(t, got, "sampleData") != `{"customer":"Saved Ltd","extra":"kept","number":"API-8"}` {
		t.Fatalf("sampleData after saving the form: %s", got.raw)
	}
	// A sample value of the wrong type comes back on the page, text kept.
	vars := `[{"name":"number","type":"integer"},{"name":"customer","type":"string"}]`
	f := form("twelve")
	f.Set("variables", vars)
	res = c.post("/app/templates/"+api, f)
	if body := readBody(res); res.StatusCode != 400 || !strings.Contains(body, "sample value of number must be a whole number") || !strings.Contains(body, `value="twelve"`) {
		t.Fatalf("a bad sample value: %d\n%s", res.StatusCode, body)
	}

	// The live-draft route is gone: the editor saves only on Save.
	if res := c.post("/app/templates/"+api+"/draft", url.Values{"csrf": {c.csrf()}}); res.StatusCode != http.StatusNotFound && res.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST .../draft: %d", res.StatusCode)
	}
}

// TestDashboardEditorPreview: the editor previews the text being edited,
// unsaved, as PDF or as the first sheet of the XLSX in an HTML table; the
// form's Preview button works without script; the vendored code editor is
// served from the binary and nothing else under vendor/ is.
func TestDashboardEditorPreview(t *testing.T) {
	s := startServer(t)
	u := s.signup("Previewer")
	c := dashClient(t, s)
	c.login(u)
	body := map[string]any{}
	for k, v := range invoiceTemplate {
		body[k] = v
	}
	body["outputFormats"] = []string{"pdf", "xlsx"}
	id := s.createTemplate(u.token, "Stored", body).str("id")
	c.page("/app/templates/" + id)

	unsaved := strings.Replace(mustJSON(t, invoiceTemplate["schema"]), "Invoice {{number}}", "Unsaved {{number}}", 1)
	preview := func(format, view string) *http.Response {
		req := map[string]any{"schema": json.RawMessage(unsaved), "variables": invoiceTemplate["variables"],
			"fields": map[string]string{"number": "<b>N-1</b>", "customer": "Cust & Co"}, "format": format, "view": view}
		b, _ := json.Marshal(req)
		r, _ := http.NewRequest("POST", s.URL()+"/app/templates/"+id+"/preview", strings.NewReader(string(b)))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("X-CSRF-Token", c.csrf())
		res, err := c.c.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := preview("pdf", "")
	pdf := []byte(readBody(res))
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/pdf" || !strings.Contains(pdfText(t, pdf), "Unsaved <b>N-1</b>") {
		t.Fatalf("PDF preview: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	res = preview("xlsx", "table")
	table := readBody(res)
	if res.StatusCode != 200 || res.Header.Get("X-Folio-Fragment") != "xlsx-table" || !strings.Contains(table, `<table class="sheet" id="xlsx-table">`) ||
		!strings.Contains(table, "<td>Unsaved &lt;b&gt;N-1&lt;/b&gt;</td>") || !strings.Contains(table, "<td>Bill to: Cust &amp; Co</td>") {
		t.Fatalf("XLSX table: %d\n%s", res.StatusCode, table)
	}
	res = preview("xlsx", "")
	if res.StatusCode != 200 || !strings.HasPrefix(readBody(res), "PK") {
		t.Fatalf("XLSX file: %d", res.StatusCode)
	}
	// Nothing was saved by previewing.
	if got := s.must(200, "GET", "/api/templates/"+id, u.token, nil); strings.Contains(string(got.raw), "Unsaved") {
		t.Fatal("a preview saved the editor's text")
	}
	// A schema error comes back with its path, as the API's.
	unsaved = `{"sections":[{"id":"b","components":[{"type":"sparkline"}]}]}`
	res = preview("pdf", "")
	if b := readBody(res); res.StatusCode != 400 || !strings.Contains(b, "schema.sections[0].components[0].type") {
		t.Fatalf("schema error: %d %s", res.StatusCode, b)
	}

	// Without script: the editor form posted to the preview.
	res = c.post("/app/templates/"+id+"/preview", url.Values{"csrf": {c.csrf()}, "schema": {mustJSON(t, invoiceTemplate["schema"])},
		"variables": {mustJSON(t, invoiceTemplate["variables"])}, "var.number": {"F-1"}, "var.customer": {"Form AG"}, "format": {"pdf"}})
	if b := readBody(res); res.StatusCode != 200 || !strings.Contains(pdfText(t, []byte(b)), "Invoice F-1") {
		t.Fatalf("form preview: %d", res.StatusCode)
	}

	// The vendored editor is served; its licence and anything outside vendor/ are not.
	for path, want := range map[string]int{
		"/app/static/vendor/codemirror/codemirror.js": 200, "/app/static/vendor/codemirror/lint.css": 200,
		"/app/static/vendor/codemirror/LICENSE": 404, "/app/static/vendor/codemirror/README.md": 404,
		"/app/static/other/app.js": 404, "/app/static/app.js": 200,
	} {
		if res := c.get(path); res.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, res.StatusCode, want)
		}
	}
	if page := c.page("/app/templates/" + id); !regexp.MustCompile(`<script src="/app/static/vendor/codemirror/codemirror.js\?v=[0-9a-f]+" defer></script>`).MatchString(page) {
		t.Fatal("the editor page does not load the code editor")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
