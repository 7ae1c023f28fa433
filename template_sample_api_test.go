package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// sampleOf reads a response's sampleData as JSON text, for comparing.
func sampleOf(t *testing.T, r resp, path string) string {
	t.Helper()
	b, err := json.Marshal(r.get(path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTemplateSampleData: a template keeps sample values for its variables.
// The API sets them on create and update (JWT and API key), returns them on
// get, carries them through export, import (created and overwritten),
// duplicate, published versions and restore, and refuses anything but an
// object. Changing only the sample values leaves no draft to publish: they
// do not change what documents render.
func TestTemplateSampleData(t *testing.T) {
	s := startServer(t)
	u := s.signup("Sampler")
	body := map[string]any{}
	for k, v := range invoiceTemplate {
		body[k] = v
	}
	body["name"] = "Sampled"
	body["sampleData"] = map[string]any{"number": "S-1", "customer": "Sample GmbH"}
	created := s.must(200, "POST", "/api/templates", u.token, body)
	id := created.str("id")
	base := "/api/templates/" + id

	got := s.must(200, "GET", base, u.token, nil)
	if sampleOf(t, got, "sampleData") != `{"customer":"Sample GmbH","number":"S-1"}` {
		t.Fatalf("get: %s", got.raw)
	}
	// A template made without sample data shows an empty object, not null.
	plain := s.createTemplate(u.token, "Plain", invoiceTemplate)
	if r := s.must(200, "GET", "/api/templates/"+plain.str("id"), u.token, nil); sampleOf(t, r, "sampleData") != `{}` {
		t.Fatalf("no sample data: %s", r.raw)
	}

	// Publish version 1 with the first values, then change only the values:
	// nothing to publish, and version 1 keeps its own.
	s.must(200, "POST", base+"/publish", u.token, map[string]any{"releaseNotes": "one"})
	upd := s.must(200, "PUT", base, u.token, map[string]any{"sampleData": map[string]any{"number": "S-2", "customer": "Second Ltd", "items": []any{1, 2}}})
	if sampleOf(t, upd, "sampleData") != `{"customer":"Second Ltd","items":[1,2],"number":"S-2"}` || upd.str("hasDraft") != "false" {
		t.Fatalf("update: %s", upd.raw)
	}
	s.wantError(s.do("POST", base+"/publish", u.token, nil), 400, "ERR_TMPL_020")
	v1 := s.must(200, "GET", base+"/versions/1", u.token, nil)
	if sampleOf(t, v1, "sampleData") != `{"customer":"Sample GmbH","number":"S-1"}` {
		t.Fatalf("version 1: %s", v1.raw)
	}
	// An update without sampleData keeps it; a schema change publishes it.
	s.must(200, "PUT", base, u.token, map[string]any{"description": "changed"})
	if r := s.must(200, "GET", base, u.token, nil); !strings.Contains(sampleOf(t, r, "sampleData"), "Second Ltd") {
		t.Fatalf("an update without sampleData lost it: %s", r.raw)
	}
	s.must(200, "POST", base+"/publish", u.token, nil)
	if v2 := s.must(200, "GET", base+"/versions/2", u.token, nil); !strings.Contains(sampleOf(t, v2, "sampleData"), "Second Ltd") {
		t.Fatalf("version 2: %s", v2.raw)
	}
	// Restoring version 1 brings its sample values back with its content.
	s.must(200, "POST", base+"/versions/1/restore", u.token, nil)
	if r := s.must(200, "GET", base, u.token, nil); sampleOf(t, r, "sampleData") != `{"customer":"Sample GmbH","number":"S-1"}` {
		t.Fatalf("after restore: %s", r.raw)
	}

	// Only an object is sample data.
	for _, bad := range []any{[]any{1}, "text", 3} {
		s.wantError(s.do("PUT", base, u.token, map[string]any{"sampleData": bad}), 400, "ERR_VALID_003")
	}
	big := map[string]any{"blob": strings.Repeat("x", 1<<20)}
	s.wantError(s.do("PUT", base, u.token, map[string]any{"sampleData": big}), 400, "ERR_VALID_003")
	// An empty template's values can be set later.
	if r := s.must(200, "PUT", "/api/templates/"+plain.str("id"), u.token, map[string]any{"sampleData": map[string]any{"number": "P"}}); sampleOf(t, r, "sampleData") != `{"number":"P"}` {
		t.Fatalf("set: %s", r.raw)
	}

	// API keys with templates:write set it through /api/v1/templates.
	key := s.createKey(u.token, map[string]bool{"manage_templates": true})
	r := s.must(200, "PATCH", "/api/v1/templates/"+id, key, map[string]any{"sampleData": map[string]any{"number": "K-1", "customer": "Key Co"}})
	if sampleOf(t, r, "sampleData") != `{"customer":"Key Co","number":"K-1"}` {
		t.Fatalf("PATCH with a key: %s", r.raw)
	}
	if r := s.must(200, "GET", "/api/v1/templates/"+id, key, nil); sampleOf(t, r, "sampleData") != `{"customer":"Key Co","number":"K-1"}` {
		t.Fatalf("GET with a key: %s", r.raw)
	}

	// Export, import into another team, duplicate: the values travel along.
	ex := s.must(200, "GET", base+"/export", u.token, nil)
	if sampleOf(t, ex, "template.sampleData") != `{"customer":"Key Co","number":"K-1"}` {
		t.Fatalf("export: %s", ex.raw)
	}
	other := s.signup("Receiver")
	im := s.upload("/api/templates/import", other.token, ex.raw, nil)
	if im.status != 200 {
		t.Fatalf("import: %d %s", im.status, im.raw)
	}
	ex2 := s.must(200, "GET", "/api/templates/"+im.str("templateId")+"/export", other.token, nil)
	if !reflect.DeepEqual(ex.get("template"), ex2.get("template")) {
		t.Fatalf("round trip differs:\n%s\n%s", ex.raw, ex2.raw)
	}
	// Overwrite replaces the sample values with the file's.
	file := strings.Replace(string(ex.raw), "Key Co", "File Co", 1)
	if ow := s.upload("/api/templates/import", other.token, []byte(file), map[string]string{"duplicateHandling": "overwrite"}); ow.str("status") != "overwritten" {
		t.Fatalf("overwrite: %s", ow.raw)
	}
	if r := s.must(200, "GET", "/api/templates/"+im.str("templateId"), other.token, nil); !strings.Contains(sampleOf(t, r, "sampleData"), "File Co") {
		t.Fatalf("after overwrite: %s", r.raw)
	}
	// An export file of an older Folio, without sampleData, imports with none.
	var old map[string]any
	json.Unmarshal(ex.raw, &old)
	delete(old["template"].(map[string]any), "sampleData")
	old["template"].(map[string]any)["name"] = "From an older export"
	oldFile, _ := json.Marshal(old)
	im = s.upload("/api/templates/import", other.token, oldFile, nil)
	if r := s.must(200, "GET", "/api/templates/"+im.str("templateId"), other.token, nil); sampleOf(t, r, "sampleData") != `{}` {
		t.Fatalf("import without sampleData: %s", r.raw)
	}
	dup := s.must(200, "POST", base+"/duplicate", u.token, nil)
	if r := s.must(200, "GET", "/api/templates/"+dup.str("id"), u.token, nil); sampleOf(t, r, "sampleData") != `{"customer":"Key Co","number":"K-1"}` {
		t.Fatalf("duplicate: %s", r.raw)
	}
}
