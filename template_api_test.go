package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// editionTemplate renders "Edition <word>" and the customer: the word tells
// which template state a PDF came from.
func editionTemplate(word string) map[string]any {
	return map[string]any{
		"outputFormats": []string{"pdf"},
		"schema": map[string]any{"format": "pdf", "pageSize": "A4", "sections": []any{map[string]any{"id": "body", "components": []any{
			map[string]any{"type": "heading", "props": map[string]any{"content": "Edition " + word, "level": 1}},
			map[string]any{"type": "text", "props": map[string]any{"content": "Customer: {{customer}}"}},
		}}}},
		"variables": []any{map[string]any{"name": "customer", "type": "string", "required": true}},
	}
}

// generate renders a PDF synchronously and returns the job response.
func (s *testServer) generate(token, templateID string, extra map[string]any) resp {
	s.t.Helper()
	body := map[string]any{"templateId": templateID, "format": "pdf", "variables": map[string]any{"customer": "ACME"}}
	for k, v := range extra {
		body[k] = v
	}
	g := s.must(200, "POST", "/api/v1/documents/generate", token, body)
	if g.str("status") != "completed" {
		s.t.Fatalf("generate: %s", g.raw)
	}
	return g
}

// pdfOf downloads a completed job's PDF and returns its text.
func (s *testServer) pdfOf(job resp) string {
	s.t.Helper()
	status, _, pdf := s.download(job.str("downloadUrl"))
	if status != 200 {
		s.t.Fatalf("download %s: %d", job.str("downloadUrl"), status)
	}
	return pdfText(s.t, pdf)
}

// wantEdition generates from a template and checks which edition the PDF
// shows and which version the job records ("" for the draft).
func (s *testServer) wantEdition(token, templateID string, extra map[string]any, edition, version string) resp {
	s.t.Helper()
	g := s.generate(token, templateID, extra)
	if text := s.pdfOf(g); !strings.Contains(text, "Edition "+edition) {
		s.t.Fatalf("PDF is not edition %s:\n%s", edition, text)
	}
	if g.str("templateVersion") != version {
		s.t.Fatalf("templateVersion = %q, want %q: %s", g.str("templateVersion"), version, g.raw)
	}
	return g
}

func TestTemplateVersionsPublishRestoreGenerate(t *testing.T) {
	s := startServer(t)
	u := s.signup("Publisher")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Letter", editionTemplate("alpha"))
	id := tpl.str("id")
	base := "/api/templates/" + id

	// Never published: generation uses the draft; there is no published version.
	s.wantEdition(key, id, nil, "alpha", "")
	if g := s.must(200, "GET", base, u.token, nil); g.str("hasDraft") != "true" || g.str("publishedVersion") != "0" || g.str("isPublished") != "false" {
		t.Fatalf("new template = %s", g.raw)
	}
	if l := s.must(200, "GET", base+"/versions", u.token, nil); l.str("meta.total") != "0" {
		t.Fatalf("versions before publish = %s", l.raw)
	}
	s.wantError(s.do("GET", base+"/versions/latest", u.token, nil), 400, "ERR_TMPL_021")
	s.wantError(s.do("POST", base+"/versions/1/restore", u.token, nil), 400, "ERR_TMPL_021")
	s.wantError(s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "pdf",
		"variables": map[string]any{"customer": "x"}, "version": "latest"}), 400, "ERR_TMPL_021")
	if d := s.must(200, "GET", base+"/versions/draft", u.token, nil); d.str("state") != "draft" || !strings.Contains(string(d.raw), "Edition alpha") {
		t.Fatalf("draft = %s", d.raw)
	}

	// Publish v1 with release notes (no body is fine too); publishing again is ERR_TMPL_020.
	p1 := s.must(200, "POST", base+"/publish", u.token, map[string]any{"releaseNotes": "first"})
	if p1.str("version") != "1" || !strings.HasPrefix(p1.str("id"), "tv_") || p1.get("publishedAt") == nil {
		t.Fatalf("publish = %s", p1.raw)
	}
	s.wantError(s.do("POST", base+"/publish", u.token, nil), 400, "ERR_TMPL_020")
	s.wantError(s.do("GET", base+"/versions/draft", u.token, nil), 400, "ERR_TMPL_022")
	s.wantError(s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "pdf",
		"variables": map[string]any{"customer": "x"}, "version": "draft"}), 400, "ERR_TMPL_022")
	if g := s.must(200, "GET", base, u.token, nil); g.str("hasDraft") != "false" || g.str("publishedVersion") != "1" || g.str("isPublished") != "true" {
		t.Fatalf("after publish = %s", g.raw)
	}

	// Change the draft: generation keeps using v1 until the next publish.
	beta := editionTemplate("beta")
	up := s.must(200, "PUT", base, u.token, map[string]any{"schema": beta["schema"], "description": "second edition"})
	if up.str("hasDraft") != "true" || up.str("description") != "second edition" {
		t.Fatalf("update = %s", up.raw)
	}
	s.wantEdition(key, id, nil, "alpha", "1")
	s.wantEdition(key, id, map[string]any{"version": "draft"}, "beta", "")
	p2 := s.must(200, "POST", "/api/templates/attachment/"+id+"/publish", u.token, map[string]any{"releaseNotes": "beta"})
	if p2.str("version") != "2" {
		t.Fatalf("publish 2 = %s", p2.raw)
	}
	s.wantEdition(key, id, nil, "beta", "2")

	// Restore v1: a new version 3 with v1's content, used by generation.
	rs := s.must(200, "POST", base+"/versions/1/restore", u.token, nil)
	if rs.str("success") != "true" || rs.str("newVersion") != "3" || !strings.Contains(rs.str("message"), "version 1") {
		t.Fatalf("restore = %s", rs.raw)
	}
	g := s.wantEdition(key, id, nil, "alpha", "3")
	if j := s.must(200, "GET", "/api/v1/documents/jobs/"+g.str("jobId"), key, nil); j.str("templateVersion") != "3" {
		t.Fatalf("job = %s", j.raw)
	}
	if tp := s.must(200, "GET", base, u.token, nil); tp.str("description") != "" || tp.str("hasDraft") != "false" || tp.str("publishedVersion") != "3" {
		t.Fatalf("after restore = %s", tp.raw)
	}
	// Explicit versions: a number, a numeric string, a version id.
	s.wantEdition(key, id, map[string]any{"version": 2}, "beta", "2")
	s.wantEdition(key, id, map[string]any{"version": "1"}, "alpha", "1")
	s.wantEdition(key, id, map[string]any{"version": p2.str("id")}, "beta", "2")
	s.wantEdition(key, id, map[string]any{"version": "latest"}, "alpha", "3")

	// The version list, newest first, and the state at each version.
	vl := s.must(200, "GET", "/api/templates/attachment/"+id+"/versions", u.token, nil)
	vs := dataList(t, vl)
	if len(vs) != 3 || vs[0]["version"] != 3.0 || vs[2]["version"] != 1.0 || vs[2]["releaseNotes"] != "first" ||
		vs[0]["releaseNotes"] != "Restored from version 1" || vs[0]["publishedBy"] != u.id || vs[1]["publishedAt"] == nil || vs[1]["id"] != p2.str("id") {
		t.Fatalf("versions = %s", vl.raw)
	}
	v2 := s.must(200, "GET", base+"/versions/"+p2.str("id"), u.token, nil)
	if v2.str("version") != "2" || v2.str("description") != "second edition" || !strings.Contains(string(v2.raw), "Edition beta") || v2.get("variables") == nil {
		t.Fatalf("state at v2 = %s", v2.raw)
	}
	if v1 := s.must(200, "GET", base+"/versions/1", u.token, nil); !strings.Contains(string(v1.raw), "Edition alpha") {
		t.Fatalf("state at v1 = %s", v1.raw)
	}
	s.must(200, "GET", "/api/templates/attachment/"+id+"/versions/2", key, nil)

	// Version errors.
	other := s.createTemplate(u.token, "Other", editionTemplate("other"))
	op := s.must(200, "POST", "/api/templates/"+other.str("id")+"/publish", u.token, nil)
	stranger := s.signup("Stranger")
	st := s.createTemplate(stranger.token, "Theirs", editionTemplate("theirs"))
	sp := s.must(200, "POST", "/api/templates/"+st.str("id")+"/publish", stranger.token, nil)
	for _, c := range []struct {
		path   string
		status int
		code   string
	}{
		{base + "/versions/9", 404, "ERR_TMPL_013"},
		{base + "/versions/tv_doesnotexist", 404, "ERR_TMPL_013"},
		{base + "/versions/" + op.str("id"), 400, "ERR_TMPL_014"},
		{base + "/versions/" + sp.str("id"), 404, "ERR_TMPL_013"},
		{base + "/versions/abc", 400, "ERR_TMPL_023"},
		{base + "/versions/0", 400, "ERR_TMPL_023"},
		{base + "/versions/-1", 400, "ERR_TMPL_023"},
	} {
		s.wantError(s.do("GET", c.path, u.token, nil), c.status, c.code)
	}
	s.wantError(s.do("POST", base+"/versions/"+op.str("id")+"/restore", u.token, nil), 400, "ERR_TMPL_014")
	s.wantError(s.do("POST", base+"/versions/draft/restore", u.token, nil), 400, "ERR_TMPL_023")
	s.wantError(s.do("POST", base+"/versions/7/restore", u.token, nil), 404, "ERR_TMPL_013")
	for _, v := range []any{0, 1.5, "x", true, -2} {
		s.wantError(s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "pdf",
			"variables": map[string]any{"customer": "x"}, "version": v}), 400, "ERR_TMPL_023")
	}
	s.wantError(s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "pdf",
		"variables": map[string]any{"customer": "x"}, "version": 8}), 404, "ERR_TMPL_013")
	// A version id of another template: the team's own 400 ERR_TMPL_014, another team's 404 ERR_TMPL_013.
	s.wantError(s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "pdf",
		"variables": map[string]any{"customer": "x"}, "version": op.str("id")}), 400, "ERR_TMPL_014")
	s.wantError(s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "pdf",
		"variables": map[string]any{"customer": "x"}, "version": sp.str("id")}), 404, "ERR_TMPL_013")

	// The version list pages like every list.
	pg := s.must(200, "GET", base+"/versions?limit=2&page=2", u.token, nil)
	if vs := dataList(t, pg); len(vs) != 1 || vs[0]["version"] != 1.0 || pg.str("meta.total") != "3" || pg.str("meta.totalPages") != "2" ||
		pg.str("meta.hasNextPage") != "false" || pg.str("meta.hasPreviousPage") != "true" {
		t.Fatalf("versions page 2 = %s", pg.raw)
	}
	if vs := dataList(t, s.must(200, "GET", base+"/versions?limit=1", u.token, nil)); len(vs) != 1 || vs[0]["version"] != 3.0 {
		t.Fatalf("versions limit 1 = %v", vs)
	}

	// A batch records the version too.
	b := s.must(200, "POST", "/api/v1/documents/generate/batch", key, map[string]any{"templateId": id, "format": "pdf", "version": 2,
		"documents": []any{map[string]any{"variables": map[string]any{"customer": "B1"}}}})
	done := s.waitBatch(key, b.str("batchId"))
	jobID := done.get("documents").([]any)[0].(map[string]any)["jobId"].(string)
	if j := s.must(200, "GET", "/api/v1/documents/jobs/"+jobID, key, nil); j.str("templateVersion") != "2" || !strings.Contains(s.pdfOf(j), "Edition beta") {
		t.Fatalf("batch job = %s", j.raw)
	}

	// Publishing and updating show in the team's feed.
	types := strings.Join(activityTypes(t, s.must(200, "GET", "/api/teams/activity", u.token, nil)), ",")
	for _, want := range []string{"template_created", "template_published", "template_updated"} {
		if !strings.Contains(types, want) {
			t.Fatalf("feed %s lacks %s", types, want)
		}
	}
}

func TestTemplateUpdateDeleteDuplicate(t *testing.T) {
	s := startServer(t)
	u := s.signup("Editor")
	key := s.createKey(u.token, nil)
	a := s.createTemplate(u.token, "Quote", invoiceTemplate)
	s.createTemplate(u.token, "Receipt", invoiceTemplate)
	base := "/api/templates/" + a.str("id")

	// Update by slug; absent fields keep their value.
	up := s.must(200, "PUT", "/api/templates/quote", u.token, map[string]any{"name": "Quote 2026", "description": "yearly", "slug": "quote-2026"})
	if up.str("name") != "Quote 2026" || up.str("slug") != "quote-2026" || up.str("description") != "yearly" || len(up.get("variables").([]any)) != 3 {
		t.Fatalf("update = %s", up.raw)
	}
	for _, c := range []struct {
		body   map[string]any
		status int
		code   string
	}{
		{map[string]any{"name": "Receipt"}, 400, "ERR_TMPL_011"},
		{map[string]any{"name": strings.Repeat("n", 256)}, 400, "ERR_VALID_003"},
		{map[string]any{"slug": strings.Repeat("s", 101)}, 400, "ERR_VALID_003"},
		{map[string]any{"slug": "Not A Slug"}, 400, "ERR_VALID_003"},
		{map[string]any{"slug": "receipt"}, 400, "ERR_VALID_003"},
		{map[string]any{"templateType": "email"}, 400, "ERR_TMPL_009"},
		{map[string]any{"outputFormats": []string{"docx"}}, 400, "ERR_VALID_003"},
		{map[string]any{"folderId": "fld_nope"}, 404, "ERR_FOLDER_001"},
		{map[string]any{"schema": map[string]any{"sections": []any{map[string]any{"id": "s", "components": []any{map[string]any{"type": "hologram"}}}}}}, 400, "ERR_TMPL_008"},
	} {
		s.wantError(s.do("PUT", base, u.token, c.body), c.status, c.code)
	}
	// A 255-character name and a 100-character slug are fine.
	s.must(200, "PUT", base, u.token, map[string]any{"name": strings.Repeat("ü", 255), "slug": strings.Repeat("s", 100)})
	s.must(200, "PUT", base, u.token, map[string]any{"name": "Quote 2026", "slug": "quote-2026"})
	s.wantError(s.do("PUT", "/api/templates/tpl_missing", u.token, map[string]any{"name": "x"}), 404, "ERR_TMPL_001")

	// Duplicate: "(Copy)", then "(Copy 2)"; new id, slug and shortId; a draft.
	s.must(200, "POST", base+"/publish", u.token, nil)
	d1 := s.must(200, "POST", base+"/duplicate", u.token, nil)
	d2 := s.must(200, "POST", base+"/duplicate", u.token, nil)
	if d1.str("name") != "Quote 2026 (Copy)" || d2.str("name") != "Quote 2026 (Copy 2)" || d1.str("id") == a.str("id") ||
		d1.str("shortId") == a.str("shortId") || d1.str("slug") != "quote-2026-copy" || d1.str("publishedVersion") != "0" ||
		d1.str("description") != "yearly" || len(d1.get("variables").([]any)) != 3 {
		t.Fatalf("duplicates = %s\n%s", d1.raw, d2.raw)
	}
	s.wantError(s.do("POST", "/api/templates/tpl_missing/duplicate", u.token, nil), 404, "ERR_TMPL_001")

	// Soft delete: gone from reads and lists; its jobs stay readable.
	job := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": a.str("id"), "format": "pdf",
		"variables": map[string]any{"number": "1", "customer": "C"}})
	del := s.must(200, "DELETE", base, u.token, nil)
	if del.str("success") != "true" || del.str("message") == "" {
		t.Fatalf("delete = %s", del.raw)
	}
	s.wantError(s.do("GET", base, u.token, nil), 404, "ERR_TMPL_001")
	s.wantError(s.do("GET", "/api/templates/quote-2026", u.token, nil), 404, "ERR_TMPL_001")
	s.wantError(s.do("DELETE", base, u.token, nil), 404, "ERR_TMPL_001")
	s.wantError(s.do("GET", base+"/versions", u.token, nil), 404, "ERR_TMPL_001")
	s.wantError(s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": a.str("id"), "format": "pdf",
		"variables": map[string]any{"number": "1", "customer": "C"}}), 404, "ERR_TMPL_001")
	if l := s.must(200, "GET", "/api/templates?search=quote", u.token, nil); l.str("meta.total") != "2" {
		t.Fatalf("list after delete = %s", l.raw)
	}
	if j := s.must(200, "GET", "/api/v1/documents/jobs/"+job.str("jobId"), key, nil); j.str("status") != "completed" || j.str("templateVersion") != "1" {
		t.Fatalf("job after delete = %s", j.raw)
	}
	// The team's feed records the deletion, with who and which template.
	if feed := dataList(t, s.must(200, "GET", "/api/teams/activity", u.token, nil)); feed[0]["type"] != "template_deleted" ||
		feed[0]["template"].(map[string]any)["id"] != a.str("id") || feed[0]["template"].(map[string]any)["name"] != "Quote 2026" ||
		feed[0]["user"].(map[string]any)["id"] != u.id {
		t.Fatalf("newest activity after delete = %v", feed[0])
	}
	// The name and slug are free again.
	if again := s.createTemplate(u.token, "Quote 2026", invoiceTemplate); again.str("slug") != "quote-2026" {
		t.Fatalf("recreate = %s", again.raw)
	}
	// Reserved slugs are not given out.
	if e := s.createTemplate(u.token, "Shared", invoiceTemplate); e.str("slug") != "shared-template" {
		t.Fatalf("slug of Shared = %s", e.str("slug"))
	}
}

func TestTemplateTypedPaths(t *testing.T) {
	s := startServer(t)
	u := s.verifiedUser("Typer")
	att := s.createTemplate(u.token, "Attachment one", invoiceTemplate)
	body := map[string]any{"templateType": "email"}
	for k, v := range invoiceTemplate {
		body[k] = v
	}
	body["name"] = "Mail one"
	mail := s.must(200, "POST", "/api/templates", u.token, body)
	if mail.str("templateType") != "email" {
		t.Fatalf("email create = %s", mail.raw)
	}
	// Legacy aliases reach the same operations; the type must match.
	if g := s.must(200, "GET", "/api/templates/attachment/"+att.str("id"), u.token, nil); g.str("id") != att.str("id") || g.str("templateType") != "attachment" {
		t.Fatalf("legacy get = %s", g.raw)
	}
	s.must(200, "GET", "/api/templates/email/"+mail.str("id"), u.token, nil)
	s.wantError(s.do("GET", "/api/templates/attachment/"+mail.str("id"), u.token, nil), 400, "ERR_TMPL_009")
	s.wantError(s.do("PUT", "/api/templates/attachment/"+mail.str("id"), u.token, map[string]any{"name": "x"}), 400, "ERR_TMPL_009")
	s.wantError(s.do("GET", "/api/templates/pdf/"+att.str("id")+"/shares", u.token, nil), 400, "ERR_TMPL_009")
	s.wantError(s.do("GET", "/api/templates/email/"+att.str("id")+"/shares", u.token, nil), 400, "ERR_TMPL_009")
	if sh := s.must(200, "GET", "/api/templates/attachment/"+att.str("id")+"/shares", u.token, nil); sh.get("shares") == nil {
		t.Fatalf("shares = %s", sh.raw)
	}
	body["name"] = "Mail two"
	s.wantError(s.do("POST", "/api/templates/attachment", u.token, body), 400, "ERR_TMPL_009")
	body["templateType"] = "fax"
	s.wantError(s.do("POST", "/api/templates", u.token, body), 400, "ERR_TMPL_009")
	delete(body, "templateType")
	if c := s.must(200, "POST", "/api/templates/attachment", u.token, body); c.str("templateType") != "attachment" {
		t.Fatalf("legacy create = %s", c.raw)
	}
	// Legacy update, publish, versions, restore, preview, delete.
	a := "/api/templates/attachment/" + att.str("id")
	if pv := s.do("POST", a+"/preview", u.token, map[string]any{"variables": map[string]any{"number": "P", "customer": "Q"}}); pv.status != 200 || !strings.HasPrefix(string(pv.raw), "%PDF-") {
		t.Fatalf("legacy preview: %d %.40q", pv.status, pv.raw)
	}
	s.must(200, "PUT", a, u.token, map[string]any{"description": "legacy"})
	s.must(200, "POST", a+"/publish", u.token, nil)
	s.must(200, "GET", a+"/versions/1", u.token, nil)
	s.must(200, "POST", a+"/versions/1/restore", u.token, map[string]any{"releaseNotes": "again"})
	s.must(200, "DELETE", a, u.token, nil)
	s.wantError(s.do("GET", "/api/templates/"+att.str("id"), u.token, nil), 404, "ERR_TMPL_001")
}

func TestTemplateAPIKeysV1(t *testing.T) {
	s := startServer(t)
	u := s.signup("Integrator")
	reader := s.createKey(u.token, nil)
	writer := s.createKey(u.token, map[string]bool{"manage_templates": true})
	tpl := s.createTemplate(u.token, "Keyed", invoiceTemplate)

	// Reads need templates:read (every key has it).
	if l := s.must(200, "GET", "/api/v1/templates", reader, nil); l.str("meta.total") != "1" {
		t.Fatalf("v1 list = %s", l.raw)
	}
	s.must(200, "GET", "/api/v1/templates/"+tpl.str("shortId"), reader, nil)
	s.must(200, "GET", "/api/templates/"+tpl.str("id")+"/versions", reader, nil)
	s.must(200, "GET", "/api/templates/"+tpl.str("id")+"/automation-fields", reader, nil)

	// Writes under /api/v1 need templates:write.
	body := map[string]any{"name": "By key"}
	for k, v := range invoiceTemplate {
		if k != "name" {
			body[k] = v
		}
	}
	for _, c := range []struct{ method, path string }{
		{"POST", "/api/v1/templates"},
		{"PATCH", "/api/v1/templates/" + tpl.str("id")},
		{"DELETE", "/api/v1/templates/" + tpl.str("id")},
	} {
		r := s.do(c.method, c.path, reader, body)
		s.wantError(r, 403, "ERR_AUTH_005")
		if r.str("relatedInfo.required") != "templates:write" || !strings.Contains(r.str("relatedInfo.granted"), "templates:read") {
			t.Fatalf("%s %s relatedInfo = %v", c.method, c.path, r.get("relatedInfo"))
		}
	}
	c := s.must(200, "POST", "/api/v1/templates", writer, body)
	if !strings.HasPrefix(c.str("id"), "tpl_") || c.str("slug") != "by-key" {
		t.Fatalf("v1 create = %s", c.raw)
	}
	if p := s.must(200, "PATCH", "/api/v1/templates/"+c.str("id"), writer, map[string]any{"description": "patched"}); p.str("description") != "patched" {
		t.Fatalf("v1 patch = %s", p.raw)
	}
	if d := s.must(200, "DELETE", "/api/v1/templates/"+c.str("id"), writer, nil); d.str("success") != "true" {
		t.Fatalf("v1 delete = %s", d.raw)
	}
	s.wantError(s.do("GET", "/api/v1/templates/"+c.str("id"), writer, nil), 404, "ERR_TMPL_001")
	// The dashboard routes stay JWT-only for writes, even with templates:write.
	s.wantError(s.do("POST", "/api/templates", writer, body), 403, "ERR_AUTH_004")
	s.wantError(s.do("PUT", "/api/templates/"+tpl.str("id"), writer, body), 403, "ERR_AUTH_004")
	s.wantError(s.do("POST", "/api/templates/"+tpl.str("id")+"/publish", writer, nil), 403, "ERR_AUTH_004")
}

func TestAutomationFields(t *testing.T) {
	s := startServer(t)
	u := s.signup("Zapier")
	tpl := s.createTemplate(u.token, "Order", map[string]any{
		"outputFormats": []string{"pdf"},
		"schema": map[string]any{"sections": []any{map[string]any{"id": "body", "components": []any{
			map[string]any{"type": "text", "props": map[string]any{"content": "{{customer.name}} <{{customer.email}}>"}},
			map[string]any{"type": "table", "props": map[string]any{"rows": "items", "columns": []any{
				map[string]any{"header": "What", "value": "{{row.description}}"},
				map[string]any{"header": "Qty", "value": "{{row.qty}}"},
			}}},
			map[string]any{"type": "text", "each": "notes", "as": "n", "props": map[string]any{"content": "{{n.text}}"}},
		}}}},
		"variables": []any{
			map[string]any{"name": "orderNumber", "type": "string", "required": true, "description": "The order"},
			map[string]any{"name": "customer", "type": "object", "required": true},
			map[string]any{"name": "items", "type": "array", "required": false,
				"defaultValue": []any{map[string]any{"description": "Widget", "qty": 1, "unit_price": 2.5}}},
			map[string]any{"name": "notes", "type": "array", "required": false},
		},
	})
	r := s.must(200, "GET", "/api/templates/"+tpl.str("slug")+"/automation-fields", u.token, nil)
	var got struct {
		Fields []struct {
			Key, Label, Type string
			Required         bool
			Children         []struct{ Key, Label, Type string }
		}
	}
	json.Unmarshal(r.raw, &got)
	if len(got.Fields) != 4 {
		t.Fatalf("fields = %s", r.raw)
	}
	f0, cust, items, notes := got.Fields[0], got.Fields[1], got.Fields[2], got.Fields[3]
	if f0.Key != "orderNumber" || f0.Label != "Order Number" || f0.Type != "string" || !f0.Required || f0.Children != nil {
		t.Fatalf("orderNumber = %+v", f0)
	}
	keys := func(ch []struct{ Key, Label, Type string }) string {
		var out []string
		for _, c := range ch {
			out = append(out, c.Key+":"+c.Type)
		}
		return strings.Join(out, ",")
	}
	if cust.Type != "object" || keys(cust.Children) != "name:string,email:string" {
		t.Fatalf("customer = %+v", cust)
	}
	if items.Type != "array" || items.Required || keys(items.Children) != "description:string,qty:number,unit_price:number" || items.Children[2].Label != "Unit Price" {
		t.Fatalf("items = %+v", items)
	}
	if keys(notes.Children) != "text:string" {
		t.Fatalf("notes = %+v", notes)
	}
	s.wantError(s.do("GET", "/api/templates/tpl_missing/automation-fields", u.token, nil), 404, "ERR_TMPL_001")

	// Once published, the fields are the published version's: a draft edit
	// shows only after the next publish.
	fieldKeys := func() string {
		t.Helper()
		var got struct{ Fields []struct{ Key string } }
		json.Unmarshal(s.must(200, "GET", "/api/templates/"+tpl.str("id")+"/automation-fields", u.token, nil).raw, &got)
		var out []string
		for _, f := range got.Fields {
			out = append(out, f.Key)
		}
		return strings.Join(out, ",")
	}
	s.must(200, "POST", "/api/templates/"+tpl.str("id")+"/publish", u.token, nil)
	s.must(200, "PUT", "/api/templates/"+tpl.str("id"), u.token, map[string]any{"variables": []any{
		map[string]any{"name": "invoiceNumber", "type": "string", "required": true},
	}})
	if got := fieldKeys(); got != "orderNumber,customer,items,notes" {
		t.Fatalf("fields after a draft edit = %s", got)
	}
	s.must(200, "POST", "/api/templates/"+tpl.str("id")+"/publish", u.token, nil)
	if got := fieldKeys(); got != "invoiceNumber" {
		t.Fatalf("fields after publishing the edit = %s", got)
	}
}

// TestRetryRendersTheJobsTemplateState pins which template state a job that
// runs later renders (a retry here; an async job likewise): the published
// version it recorded, even after newer publishes, while a draft job
// (templateVersion null) renders the draft as it is when the job runs.
func TestRetryRendersTheJobsTemplateState(t *testing.T) {
	s := startServer(t)
	disk := &fullDisk{FileStore: s.Server.Documents.Files}
	s.Server.Documents.Files, s.Server.Documents.InlineMax = disk, -1 // every document a file
	u := s.signup("Retrier")
	key := s.createKey(u.token, nil)
	id := s.createTemplate(u.token, "Pinned", editionTemplate("alpha")).str("id")
	base := "/api/templates/" + id
	failed := func(extra map[string]any) string {
		t.Helper()
		body := map[string]any{"templateId": id, "format": "pdf", "variables": map[string]any{"customer": "ACME"}}
		for k, v := range extra {
			body[k] = v
		}
		disk.full.Store(true)
		defer disk.full.Store(false)
		r := s.do("POST", "/api/v1/documents/generate", key, body)
		s.wantError(r, 500, "ERR_JOB_007")
		return r.str("relatedInfo.jobId")
	}
	retry := func(jobID, edition, version string) {
		t.Helper()
		rt := s.must(200, "POST", "/api/v1/documents/jobs/"+jobID+"/retry", key, nil)
		j := s.waitJob(key, rt.str("jobId"))
		if text := s.pdfOf(j); !strings.Contains(text, "Edition "+edition) {
			t.Fatalf("retry of %s is not edition %s:\n%s", jobID, edition, text)
		}
		if j.str("templateVersion") != version {
			t.Fatalf("retry templateVersion = %q, want %q: %s", j.str("templateVersion"), version, j.raw)
		}
	}

	// A draft job renders the draft of the moment it runs.
	draftJob := failed(nil)
	if j := s.must(200, "GET", "/api/v1/documents/jobs/"+draftJob, key, nil); j.get("templateVersion") != nil {
		t.Fatalf("draft job = %s", j.raw)
	}
	s.must(200, "PUT", base, u.token, map[string]any{"schema": editionTemplate("beta")["schema"]})
	retry(draftJob, "beta", "")

	// A job of version 1 renders version 1, after version 2 is out too.
	s.must(200, "POST", base+"/publish", u.token, nil) // v1: beta
	v1Job := failed(nil)
	if j := s.must(200, "GET", "/api/v1/documents/jobs/"+v1Job, key, nil); j.str("templateVersion") != "1" {
		t.Fatalf("v1 job = %s", j.raw)
	}
	latestJob := failed(map[string]any{"version": "latest"})
	s.must(200, "PUT", base, u.token, map[string]any{"schema": editionTemplate("gamma")["schema"]})
	s.must(200, "POST", base+"/publish", u.token, nil) // v2: gamma
	s.wantEdition(key, id, nil, "gamma", "2")
	retry(v1Job, "beta", "1")
	retry(latestJob, "beta", "1")
}
