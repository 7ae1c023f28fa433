package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSaveWarnsWithPaths: a key no component reads (colour), an unknown
// prop and a name no declaration gives are accepted, and every answer that
// checks a template lists them as warnings with their JSON paths: create,
// update, validate-schema (given the declarations; the API's and the
// editor's) and a dry run.
func TestSaveWarnsWithPaths(t *testing.T) {
	s := startServer(t)
	u := s.signup("Warned")
	key := s.createKey(u.token, nil)
	schema := map[string]any{"pageSize": "A4", "sections": []any{map[string]any{"id": "body", "components": []any{
		map[string]any{"type": "heading", "props": map[string]any{"content": "Invoice {{ number }}", "level": 1, "style": map[string]any{"colour": "#ff0000"}}},
		map[string]any{"type": "text", "props": map[string]any{"content": "Bill to: {{ custmer }}", "fontsize": 9}},
	}}}}
	vars := []any{
		map[string]any{"name": "number", "type": "string", "required": true},
		map[string]any{"name": "customer", "type": "string", "required": true},
	}
	want := map[string]string{
		"schema.sections[0].components[0].props.style.colour": "unknown key, ignored (did you mean color?)",
		"schema.sections[0].components[1].props.fontsize":     "unknown key, ignored",
		"schema.sections[0].components[1].props.content":      `"custmer" is not a declared variable, constant or calculated variable; it is empty unless the request sends it (did you mean customer?)`,
	}
	check := func(what string, list any) {
		t.Helper()
		got := map[string]string{}
		items, _ := list.([]any)
		for _, it := range items {
			m := it.(map[string]any)
			path, _ := m["path"].(string)
			msg, _ := m["message"].(string)
			if _, ok := want[path]; ok {
				got[path] = msg
			}
		}
		for path, msg := range want {
			if got[path] != msg {
				t.Errorf("%s: warning at %s = %q, want %q\nall: %v", what, path, got[path], msg, list)
			}
		}
	}

	created := s.must(200, "POST", "/api/templates", u.token, map[string]any{"name": "Warned", "outputFormats": []string{"pdf"}, "schema": schema, "variables": vars})
	check("create", created.get("warnings"))
	updated := s.must(200, "PUT", "/api/templates/"+created.str("id"), u.token, map[string]any{"description": "with warnings"})
	check("update", updated.get("warnings"))
	if updated.str("description") != "with warnings" || updated.str("slug") != "warned" {
		t.Errorf("update answers the template too: %s", updated.raw)
	}
	v := s.must(200, "POST", "/api/templates/validate-schema", u.token, map[string]any{"templateType": "attachment", "schema": schema, "variables": vars})
	check("validate-schema", v.get("warnings"))
	if v.str("valid") != "true" {
		t.Errorf("warnings make a schema invalid: %s", v.raw)
	}
	// The editor's check as you type (the dashboard's route, with the
	// declarations the editor holds) answers the same.
	c := dashClient(t, s)
	c.login(u)
	c.page("/app/templates")
	b, _ := json.Marshal(map[string]any{"templateType": "attachment", "schema": schema, "variables": vars})
	req, _ := http.NewRequest("POST", s.URL()+"/app/templates/validate-schema", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", c.csrf())
	res, err := c.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var ed map[string]any
	if err := json.NewDecoder(res.Body).Decode(&ed); err != nil || res.StatusCode != 200 {
		t.Fatalf("the editor's validate-schema: %d %v", res.StatusCode, err)
	}
	res.Body.Close()
	check("the editor's validate-schema", ed["warnings"])
	dry := s.must(200, "POST", "/api/v1/documents/generate?dryRun=true", key, map[string]any{"templateId": "warned", "format": "pdf",
		"variables": map[string]any{"number": "1", "customer": "ACME"}})
	check("dry run", dry.get("warnings"))

	// A clean template answers an empty list.
	clean := s.createTemplate(u.token, "Clean", invoiceTemplate)
	if w, ok := clean.get("warnings").([]any); !ok || len(w) != 0 {
		t.Errorf("clean template: warnings %v", clean.get("warnings"))
	}
}

// TestMissingItemKeyNamed: a typo in a line item's key is named with its
// path in the request and the key that is there.
func TestMissingItemKeyNamed(t *testing.T) {
	s := startServer(t)
	u := s.signup("Typo")
	key := s.createKey(u.token, nil)
	var tpl map[string]any
	readJSON(t, filepath.Join("testdata", "templates", "invoice.json"), &tpl)
	var vars map[string]any
	readJSON(t, filepath.Join("testdata", "templates", "invoice.vars.json"), &vars)
	s.must(200, "POST", "/api/templates", u.token, tpl)
	item := vars["items"].([]any)[0].(map[string]any)
	item["unitprice"] = item["unitPrice"]
	delete(item, "unitPrice")
	r := s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": "invoice", "format": "pdf", "variables": vars})
	s.wantError(r, 400, "ERR_VALID_002")
	want := "subtotal: cannot be calculated: items[0].unitPrice is missing (did you mean unitprice?)"
	if !strings.Contains(r.str("message"), want) || !strings.Contains(string(r.raw), "items[0].unitPrice is missing") {
		t.Errorf("message = %q, want it to hold %q\n%s", r.str("message"), want, r.raw)
	}
}

// TestTemplateNotFoundRepeatsTheID: the reference sent comes back in the
// message and in relatedInfo.id, on every route that looks one up.
func TestTemplateNotFoundRepeatsTheID(t *testing.T) {
	s := startServer(t)
	u := s.signup("Lost")
	key := s.createKey(u.token, nil)
	for _, r := range []resp{
		s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": "invoce", "format": "pdf"}),
		s.do("GET", "/api/templates/invoce", u.token, nil),
		s.do("POST", "/api/templates/invoce/preview", u.token, map[string]any{}),
	} {
		s.wantError(r, 404, "ERR_TMPL_001")
		if !strings.Contains(r.str("message"), `template "invoce" not found`) || r.str("relatedInfo.id") != "invoce" {
			t.Errorf("not found = %s", r.raw)
		}
	}
}

// TestDeniedDownloadSaysHowToGetAFreshLink: an expired or altered link
// answers how to get a working one, and that way works.
func TestDeniedDownloadSaysHowToGetAFreshLink(t *testing.T) {
	s := startServer(t)
	u := s.signup("Late")
	key := s.createKey(u.token, nil)
	s.createTemplate(u.token, "Invoice", invoiceTemplate)
	g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": "invoice", "format": "pdf",
		"variables": map[string]any{"number": "1", "customer": "ACME"}})
	job := g.str("jobId")
	dlKey, err := os.ReadFile(filepath.Join(s.Config.Data, "keys", "download.key"))
	if err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Minute).Unix()
	mac := hmac.New(sha256.New, dlKey)
	fmt.Fprintf(mac, "%s.%d", job, past)
	expired := fmt.Sprintf("%s/api/v1/documents/jobs/%s/download?expires=%d&signature=%s", s.URL(), job, past, hex.EncodeToString(mac.Sum(nil)))
	fresh := "GET /api/v1/documents/jobs/" + job
	for name, url := range map[string]string{"expired": expired, "altered": g.str("downloadUrl") + "0"} {
		r := s.do("GET", url, "", nil)
		s.wantError(r, 403, "ERR_JOB_003")
		if !strings.Contains(r.str("message"), fresh) || !strings.Contains(r.str("message"), "fresh downloadUrl") || r.str("relatedInfo.jobId") != job {
			t.Errorf("%s link: %s", name, r.raw)
		}
		if name == "expired" && !strings.Contains(r.str("message"), "expired at ") {
			t.Errorf("expired link does not say so: %s", r.raw)
		}
	}
	again := s.must(200, "GET", "/api/v1/documents/jobs/"+job, key, nil)
	if st, _, _ := s.download(again.str("downloadUrl")); st != 200 {
		t.Errorf("the fresh link: %d", st)
	}
}
