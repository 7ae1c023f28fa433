package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// upload posts a multipart form with an optional file part.
func (s *testServer) upload(path, token string, file []byte, fields map[string]string, headers ...string) resp {
	s.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	if file != nil {
		fw, _ := mw.CreateFormFile("file", "template.json")
		fw.Write(file)
	}
	mw.Close()
	req, _ := http.NewRequest("POST", s.URL()+path, &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := s.client.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	r := resp{status: res.StatusCode, header: res.Header, raw: raw}
	if err := json.Unmarshal(raw, &r.body); err != nil {
		s.t.Fatalf("POST %s: not JSON: %s", path, raw)
	}
	return r
}

func TestTemplateExportImport(t *testing.T) {
	s := startServer(t)
	u, v := s.signup("Exporter"), s.signup("Importer")
	def := map[string]any{}
	for k, val := range invoiceTemplate {
		def[k] = val
	}
	def["description"] = "with everything"
	def["constants"] = map[string]any{"company": "Folio Ltd", "vatRate": 0.2}
	def["calculatedVariables"] = []any{map[string]any{"name": "shout", "expression": "upper(customer)"}}
	tpl := s.createTemplate(u.token, "Invoice Export", def)
	base := "/api/templates/" + tpl.str("id")

	ex := s.must(200, "GET", base+"/export", u.token, nil)
	if cd := ex.header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment") || !strings.Contains(cd, "invoice-export.json") {
		t.Fatalf("Content-Disposition %q", cd)
	}
	if ex.str("format") != "folio-template" || ex.str("template.name") != "Invoice Export" || ex.str("sourceTemplateId") != tpl.str("id") ||
		ex.str("template.constants.company") != "Folio Ltd" || ex.get("template.calculatedVariables") == nil {
		t.Fatalf("export = %s", ex.raw)
	}
	s.must(200, "GET", "/api/templates/attachment/"+tpl.str("id")+"/export", u.token, nil)

	// Round trip into another team: the definition comes back identical.
	im := s.upload("/api/templates/import", v.token, ex.raw, nil)
	if im.status != 200 || im.str("status") != "created" || !strings.HasPrefix(im.str("templateId"), "tpl_") || im.str("message") == "" {
		t.Fatalf("import = %d %s", im.status, im.raw)
	}
	ex2 := s.must(200, "GET", "/api/templates/"+im.str("templateId")+"/export", v.token, nil)
	if !reflect.DeepEqual(ex.get("template"), ex2.get("template")) {
		t.Fatalf("round trip differs:\n%s\n%s", ex.raw, ex2.raw)
	}
	s.generate(s.createKey(v.token, nil), im.str("templateId"), map[string]any{"variables": map[string]any{"number": "7", "customer": "Z"}})

	// Name taken in the same team: rename (default), skip, overwrite.
	rn := s.upload("/api/templates/import", u.token, ex.raw, map[string]string{"duplicateHandling": "rename"})
	if rn.str("status") != "renamed" || rn.str("templateId") == tpl.str("id") {
		t.Fatalf("rename = %s", rn.raw)
	}
	if g := s.must(200, "GET", "/api/templates/"+rn.str("templateId"), u.token, nil); g.str("name") != "Invoice Export (Imported)" {
		t.Fatalf("renamed = %s", g.raw)
	}
	if rn2 := s.upload("/api/templates/import", u.token, ex.raw, nil); rn2.str("status") != "renamed" {
		t.Fatalf("default handling = %s", rn2.raw)
	}
	sk := s.upload("/api/templates/import", u.token, ex.raw, map[string]string{"duplicateHandling": "skip"})
	if sk.str("status") != "skipped" || sk.str("templateId") != tpl.str("id") {
		t.Fatalf("skip = %s", sk.raw)
	}
	// Overwrite replaces the draft only: the published version stays and
	// generation keeps using it until the next publish.
	s.must(200, "POST", base+"/publish", u.token, nil)
	key := s.createKey(u.token, nil)
	vars := map[string]any{"variables": map[string]any{"number": "7", "customer": "Z"}}
	var file map[string]any
	json.Unmarshal(ex.raw, &file)
	file["template"].(map[string]any)["description"] = "overwritten"
	changed, _ := json.Marshal(file)
	changed = bytes.ReplaceAll(changed, []byte("Invoice {{number}}"), []byte("Overwritten {{number}}"))
	ow := s.upload("/api/templates/import", u.token, changed, map[string]string{"duplicateHandling": "overwrite"})
	if ow.str("status") != "overwritten" || ow.str("templateId") != tpl.str("id") {
		t.Fatalf("overwrite = %s", ow.raw)
	}
	if g := s.must(200, "GET", base, u.token, nil); g.str("description") != "overwritten" || g.str("hasDraft") != "true" || g.str("publishedVersion") != "1" {
		t.Fatalf("after overwrite = %s", g.raw)
	}
	if l := s.must(200, "GET", base+"/versions", u.token, nil); l.str("meta.total") != "1" {
		t.Fatalf("versions after overwrite = %s", l.raw)
	}
	g := s.generate(key, tpl.str("id"), vars)
	if text := s.pdfOf(g); !strings.Contains(text, "Invoice 7") || strings.Contains(text, "Overwritten") || g.str("templateVersion") != "1" {
		t.Fatalf("generation after overwrite used the draft (version %q):\n%s", g.str("templateVersion"), text)
	}
	s.must(200, "POST", base+"/publish", u.token, nil)
	if text := s.pdfOf(s.generate(key, tpl.str("id"), vars)); !strings.Contains(text, "Overwritten 7") {
		t.Fatalf("generation after publishing the overwrite:\n%s", text)
	}
	// A bare template object (a saved GET response) imports too, through the legacy path.
	bare := s.must(200, "GET", base, u.token, nil)
	bare.body["name"] = "From GET"
	raw, _ := json.Marshal(bare.body)
	if r := s.upload("/api/templates/attachment/import", u.token, raw, nil); r.str("status") != "created" {
		t.Fatalf("bare import = %s", r.raw)
	}

	// Errors.
	s.wantError(s.upload("/api/templates/import", u.token, nil, map[string]string{"duplicateHandling": "skip"}), 400, "ERR_TMPL_015")
	s.wantError(s.do("POST", "/api/templates/import", u.token, map[string]any{"name": "json body, no file"}), 400, "ERR_TMPL_015")
	s.wantError(s.upload("/api/templates/import", u.token, []byte("not json {"), nil), 400, "ERR_TMPL_016")
	s.wantError(s.upload("/api/templates/import", u.token, []byte(`["an array"]`), nil), 400, "ERR_TMPL_016")
	s.wantError(s.upload("/api/templates/import", u.token, []byte(`{"template":{"outputFormats":["pdf"],"schema":{"sections":[]}}}`), nil), 400, "ERR_TMPL_010")
	s.wantError(s.upload("/api/templates/import", u.token, []byte(`{"name":"x","outputFormats":"pdf","schema":{}}`), nil), 400, "ERR_TMPL_010")
	bad := s.upload("/api/templates/import", u.token, []byte(`{"name":"x","outputFormats":["pdf"],"schema":{"sections":[{"id":"s","components":[{"type":"hologram"}]}]}}`), nil)
	s.wantError(bad, 400, "ERR_TMPL_010")
	if !strings.Contains(string(bad.raw), "ERR_TMPL_008") {
		t.Fatalf("schema cause missing: %s", bad.raw)
	}
	s.wantError(s.upload("/api/templates/import", u.token, ex.raw, map[string]string{"duplicateHandling": "merge"}), 400, "ERR_VALID_003")
	email := []byte(`{"name":"Mail","templateType":"email","outputFormats":["pdf"],"schema":{"sections":[]}}`)
	s.wantError(s.upload("/api/templates/attachment/import", u.token, email, nil), 400, "ERR_TMPL_009")
	s.wantError(s.do("GET", "/api/templates/tpl_missing/export", u.token, nil), 404, "ERR_TMPL_001")
}

func TestTemplateListFoldersCategoriesAndBulk(t *testing.T) {
	s := startServer(t)
	u := s.signup("Filer")
	f := s.must(200, "POST", "/api/template-folders", u.token, map[string]any{"name": "Finance"})
	c1 := s.must(200, "POST", "/api/template-categories", u.token, map[string]any{"name": "Invoices"})
	c2 := s.must(200, "POST", "/api/template-categories", u.token, map[string]any{"name": "EU"})
	if !strings.HasPrefix(f.str("id"), "fld_") || !strings.HasPrefix(c1.str("id"), "cat_") || f.str("name") != "Finance" {
		t.Fatalf("folder %s category %s", f.raw, c1.raw)
	}
	s.wantError(s.do("POST", "/api/template-folders", u.token, map[string]any{"name": "Finance"}), 400, "ERR_VALID_003")
	s.wantError(s.do("POST", "/api/template-folders", u.token, map[string]any{}), 400, "ERR_VALID_005")

	var ids []string
	for i, name := range []string{"Alpha invoice", "Beta invoice", "Gamma letter", "Delta letter", "Epsilon note"} {
		body := map[string]any{}
		for k, v := range invoiceTemplate {
			body[k] = v
		}
		body["name"] = name
		if i < 2 {
			body["folderId"] = f.str("id")
		}
		if i == 4 {
			body["templateType"] = "email"
		}
		ids = append(ids, s.must(200, "POST", "/api/templates", u.token, body).str("id"))
	}
	s.wantError(s.do("POST", "/api/templates", u.token, map[string]any{"name": "x", "outputFormats": []string{"pdf"},
		"schema": map[string]any{"sections": []any{}}, "folderId": "fld_missing"}), 404, "ERR_FOLDER_001")

	bc := s.must(200, "POST", "/api/templates/bulk-categories", u.token, map[string]any{
		"templateIds": []string{ids[0], ids[2], "tpl_missing"}, "categoryIds": []string{c1.str("id")}})
	if bc.str("updated") != "2" || bc.str("skipped") != "1" {
		t.Fatalf("bulk categories = %s", bc.raw)
	}
	s.must(200, "POST", "/api/templates/bulk-categories", u.token, map[string]any{"templateIds": []string{ids[0]}, "categoryIds": []string{c2.str("id")}, "mode": "add"})
	s.must(200, "POST", "/api/templates/bulk-categories", u.token, map[string]any{"templateIds": []string{ids[2]}, "categoryIds": []string{c2.str("id")}, "mode": "replace"})
	if g := s.must(200, "GET", "/api/templates/"+ids[0], u.token, nil); len(g.get("categoryIds").([]any)) != 2 || g.str("folderId") != f.str("id") {
		t.Fatalf("template 0 = %s", g.raw)
	}
	s.wantError(s.do("POST", "/api/templates/bulk-categories", u.token, map[string]any{"templateIds": []string{ids[0]}, "categoryIds": []string{"cat_nope"}}), 404, "ERR_CATEGORY_001")
	s.wantError(s.do("POST", "/api/templates/bulk-categories", u.token, map[string]any{"templateIds": []string{ids[0]}, "categoryIds": []string{}, "mode": "swap"}), 400, "ERR_VALID_003")
	s.wantError(s.do("POST", "/api/templates/bulk-categories", u.token, map[string]any{"categoryIds": []string{}}), 400, "ERR_VALID_005")

	count := func(query string) int {
		t.Helper()
		l := s.must(200, "GET", "/api/templates?"+query, u.token, nil)
		return len(dataList(t, l))
	}
	for q, want := range map[string]int{
		"search=INVOICE":                   2,
		"search=letter":                    2,
		"folderId=" + f.str("id"):          2,
		"categoryId=" + c1.str("id"):       1, // ids[2] had its categories replaced
		"categoryId=" + c2.str("id"):       2,
		"templateType=email":               1,
		"search=a&folderId=" + f.str("id"): 2,
		"limit=2&page=3":                   1,
	} {
		if got := count(q); got != want {
			t.Fatalf("?%s: %d templates, want %d", q, got, want)
		}
	}
	pg := s.must(200, "GET", "/api/templates?limit=2&page=2", u.token, nil)
	if pg.str("meta.total") != "5" || pg.str("meta.totalPages") != "3" || pg.str("meta.hasNextPage") != "true" || pg.str("meta.hasPreviousPage") != "true" {
		t.Fatalf("meta = %s", pg.raw)
	}
	if l := s.must(200, "GET", "/api/templates/attachment", u.token, nil); l.str("meta.total") != "4" {
		t.Fatalf("legacy list = %s", l.raw)
	}
	s.wantError(s.do("GET", "/api/templates?templateType=fax", u.token, nil), 400, "ERR_TMPL_009")

	// Folders list with counts, rename, delete (templates stay, out of the folder).
	fl := dataList(t, s.must(200, "GET", "/api/template-folders", u.token, nil))
	if len(fl) != 1 || fl[0]["templateCount"] != 2.0 {
		t.Fatalf("folders = %v", fl)
	}
	if r := s.must(200, "PUT", "/api/template-folders/"+f.str("id"), u.token, map[string]any{"name": "Money"}); r.str("name") != "Money" {
		t.Fatalf("rename = %s", r.raw)
	}
	s.must(200, "DELETE", "/api/template-folders/"+f.str("id"), u.token, nil)
	s.wantError(s.do("DELETE", "/api/template-folders/"+f.str("id"), u.token, nil), 404, "ERR_FOLDER_001")
	s.wantError(s.do("PUT", "/api/template-categories/cat_nope", u.token, map[string]any{"name": "x"}), 404, "ERR_CATEGORY_001")
	if g := s.must(200, "GET", "/api/templates/"+ids[0], u.token, nil); g.get("folderId") != nil {
		t.Fatalf("template still in deleted folder: %s", g.raw)
	}
	s.must(200, "DELETE", "/api/template-categories/"+c2.str("id"), u.token, nil)
	if got := count("categoryId=" + c2.str("id")); got != 0 {
		t.Fatalf("deleted category still filters %d", got)
	}

	// Bulk delete: the team's templates go, the rest are reported.
	other := s.signup("Other")
	theirs := s.createTemplate(other.token, "Theirs", invoiceTemplate)
	bd := s.must(200, "POST", "/api/templates/bulk-delete", u.token, map[string]any{"ids": []string{ids[0], ids[1], ids[1], "tpl_missing", theirs.str("id")}})
	if bd.str("deleted") != "2" || bd.str("skipped") != "2" || len(bd.get("errors").([]any)) != 2 {
		t.Fatalf("bulk delete = %s", bd.raw)
	}
	if e := bd.get("errors").([]any)[0].(map[string]any); e["id"] != "tpl_missing" || e["reason"] == "" {
		t.Fatalf("bulk delete errors = %s", bd.raw)
	}
	s.must(200, "GET", "/api/templates/"+theirs.str("id"), other.token, nil)
	deleted := map[string]bool{}
	for _, it := range dataList(t, s.must(200, "GET", "/api/teams/activity", u.token, nil)) {
		if it["type"] == "template_deleted" {
			deleted[it["template"].(map[string]any)["id"].(string)] = true
		}
	}
	if len(deleted) != 2 || !deleted[ids[0]] || !deleted[ids[1]] {
		t.Fatalf("template_deleted activity after bulk delete: %v", deleted)
	}
	s.wantError(s.do("POST", "/api/templates/bulk-delete", u.token, map[string]any{}), 400, "ERR_VALID_005")
	s.wantError(s.do("POST", "/api/templates/bulk-delete", u.token, map[string]any{"ids": []string{}}), 400, "ERR_VALID_003")

	// One bulk request names at most 100 templates (and 100 categories).
	many := func(prefix string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%s_missing%d", prefix, i)
		}
		return out
	}
	for _, c := range []struct {
		path, field string
		body        map[string]any
	}{
		{"/api/templates/bulk-delete", "ids", map[string]any{"ids": many("tpl", 101)}},
		{"/api/templates/bulk-categories", "templateIds", map[string]any{"templateIds": many("tpl", 101), "categoryIds": []string{}}},
		{"/api/templates/bulk-categories", "categoryIds", map[string]any{"templateIds": []string{ids[2]}, "categoryIds": many("cat", 101)}},
	} {
		r := s.do("POST", c.path, u.token, c.body)
		s.wantError(r, 400, "ERR_VALID_003")
		if r.str("relatedInfo.field") != c.field {
			t.Fatalf("%s with 101 %s: %s", c.path, c.field, r.raw)
		}
	}
	if bd := s.must(200, "POST", "/api/templates/bulk-delete", u.token, map[string]any{"ids": many("tpl", 100)}); bd.str("skipped") != "100" {
		t.Fatalf("bulk delete of 100 = %s", bd.raw)
	}
	if bc := s.must(200, "POST", "/api/templates/bulk-categories", u.token, map[string]any{"templateIds": many("tpl", 100), "categoryIds": []string{}}); bc.str("skipped") != "100" {
		t.Fatalf("bulk categories of 100 = %s", bc.raw)
	}
	if l := s.must(200, "GET", "/api/templates", u.token, nil); l.str("meta.total") != "3" {
		t.Fatalf("after bulk delete = %s", l.raw)
	}
}
