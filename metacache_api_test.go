package main

import (
	"strings"
	"sync"
	"testing"

	"folio/store"
)

// The metadata cache (issue 24): keys, teams, plans and templates are read
// from memory, and every write takes effect on the very next request.

func generateBody(ref string) map[string]any {
	return map[string]any{"templateId": ref, "format": "pdf", "variables": map[string]any{"number": "7", "customer": "ACME"}}
}

// TestCachedKeyRevokedAtOnce: a key used (and so cached) a moment ago is
// refused on the next request once revoked, loses a permission at once,
// and is unknown at once when deleted.
func TestCachedKeyRevokedAtOnce(t *testing.T) {
	s := startServer(t)
	u := s.signup("Revoke")
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	keys := s.must(200, "POST", "/api/api-keys", u.token, map[string]any{"name": "k"})
	key, id := keys.str("plainKey"), keys.str("id")
	s.must(200, "POST", "/api/v1/documents/generate", key, generateBody(tpl.str("id")))

	s.must(200, "PATCH", "/api/api-keys/"+id, u.token, map[string]any{"permissions": map[string]bool{"send_emails": false}})
	s.wantError(s.do("POST", "/api/v1/documents/generate", key, generateBody(tpl.str("id"))), 403, "ERR_AUTH_005")
	s.must(200, "PATCH", "/api/api-keys/"+id, u.token, map[string]any{"permissions": map[string]bool{"send_emails": true}})
	s.must(200, "POST", "/api/v1/documents/generate", key, generateBody(tpl.str("id")))

	s.must(200, "POST", "/api/api-keys/"+id+"/revoke", u.token, nil)
	s.wantError(s.do("POST", "/api/v1/documents/generate", key, generateBody(tpl.str("id"))), 401, "ERR_AKEY_003")
	s.wantError(s.do("GET", "/api/v1/documents/jobs", key, nil), 401, "ERR_AKEY_003")

	s.must(200, "PATCH", "/api/api-keys/"+id, u.token, map[string]any{"isActive": true})
	s.must(200, "GET", "/api/v1/documents/jobs", key, nil)
	s.must(204, "DELETE", "/api/api-keys/"+id, u.token, nil)
	s.wantError(s.do("GET", "/api/v1/documents/jobs", key, nil), 401, "ERR_AKEY_002")
}

// TestCachedPlanChangedAtOnce: folio admin set-plan writes from another
// process (here another database handle); the server's next request obeys
// the new plan, in both directions.
func TestCachedPlanChangedAtOnce(t *testing.T) {
	s := startServer(t) // scale plan
	u := s.signup("Plan")
	team := s.must(200, "GET", "/api/teams", u.token, nil)
	teamID := dataList(t, team)[0]["id"].(string)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	key := s.createKey(u.token, nil)
	docs := make([]any, 11)
	for i := range docs {
		docs[i] = map[string]any{"variables": map[string]any{"number": "1", "customer": "C"}}
	}
	batch := map[string]any{"templateId": tpl.str("id"), "format": "pdf", "documents": docs}
	s.must(200, "POST", "/api/v1/documents/generate/batch", key, batch)
	setPlan := func(plan string) {
		t.Helper()
		if code, _, errOut := runCLI(t, "admin", "set-plan", "--data", s.Config.Data, "--team", teamID, "--plan", plan); code != 0 {
			t.Fatalf("set-plan %s: %s", plan, errOut)
		}
	}
	setPlan("free") // 10 documents per batch
	r := s.do("POST", "/api/v1/documents/generate/batch", key, batch)
	s.wantError(r, 400, "ERR_PLAN_002")
	if r.str("relatedInfo.plan") != "free" || r.str("relatedInfo.limit") != "10" {
		t.Fatalf("relatedInfo = %v", r.get("relatedInfo"))
	}
	setPlan("starter")
	s.must(200, "POST", "/api/v1/documents/generate/batch", key, batch)
}

// TestCachedTemplatePublishedAtOnce: after a publish or a restore, the next
// generate renders the new version; an edit of the draft does not change
// what is generated from the published version.
func TestCachedTemplatePublishedAtOnce(t *testing.T) {
	s := startServer(t)
	u := s.signup("Publish")
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	id := tpl.str("id")
	key := s.createKey(u.token, nil)
	s.must(200, "POST", "/api/templates/"+id+"/publish", u.token, nil)
	text := func(wantVersion string) string {
		t.Helper()
		g := s.must(200, "POST", "/api/v1/documents/generate", key, generateBody(tpl.str("slug")))
		if got := g.str("templateVersion"); got != wantVersion {
			t.Fatalf("templateVersion %q, want %s: %s", got, wantVersion, g.raw)
		}
		_, _, pdf := s.download(g.str("downloadUrl"))
		return pdfText(t, pdf)
	}
	if got := text("1"); !strings.Contains(got, "Bill to: ACME") {
		t.Fatalf("v1 text %q", got)
	}
	edited := map[string]any{"schema": map[string]any{"format": "pdf", "pageSize": "A4", "sections": []any{map[string]any{"id": "body",
		"components": []any{map[string]any{"type": "text", "props": map[string]any{"content": "Customer {{customer}}, second edition"}}}}}}}
	s.must(200, "PUT", "/api/templates/"+id, u.token, edited)
	if got := text("1"); !strings.Contains(got, "Bill to: ACME") {
		t.Fatalf("a draft edit changed the published text: %q", got)
	}
	s.must(200, "POST", "/api/templates/"+id+"/publish", u.token, nil)
	if got := text("2"); !strings.Contains(got, "second edition") {
		t.Fatalf("v2 text %q", got)
	}
	vs := s.must(200, "GET", "/api/templates/"+id+"/versions", u.token, nil)
	var v1 string
	for _, v := range vs.body["data"].([]any) {
		if m := v.(map[string]any); m["version"].(float64) == 1 {
			v1 = m["id"].(string)
		}
	}
	s.must(200, "POST", "/api/templates/"+id+"/versions/"+v1+"/restore", u.token, nil)
	if got := text("3"); !strings.Contains(got, "Bill to: ACME") {
		t.Fatalf("restored v1 as v3: text %q", got)
	}
	s.must(200, "DELETE", "/api/templates/"+id, u.token, nil)
	s.wantError(s.do("POST", "/api/v1/documents/generate", key, generateBody(tpl.str("slug"))), 404, "ERR_TMPL_001")
}

// TestCacheKeepsTeamsApart: two teams with a template of the same slug
// each generate from their own, whatever the other cached, and neither
// reaches the other's by id.
func TestCacheKeepsTeamsApart(t *testing.T) {
	s := startServer(t)
	a, b := s.signup("TeamA"), s.signup("TeamB")
	ta := s.createTemplate(a.token, "Invoice", invoiceTemplate)
	tb := s.createTemplate(b.token, "Invoice", invoiceTemplate)
	if ta.str("slug") != tb.str("slug") || ta.str("id") == tb.str("id") {
		t.Fatalf("slugs %q %q, ids %q %q", ta.str("slug"), tb.str("slug"), ta.str("id"), tb.str("id"))
	}
	ka, kb := s.createKey(a.token, nil), s.createKey(b.token, nil)
	for range 2 { // the second round is served from the cache
		if got := s.must(200, "POST", "/api/v1/documents/generate", ka, generateBody(ta.str("slug"))).str("templateId"); got != ta.str("id") {
			t.Fatalf("team A generated from %s", got)
		}
		if got := s.must(200, "POST", "/api/v1/documents/generate", kb, generateBody(tb.str("slug"))).str("templateId"); got != tb.str("id") {
			t.Fatalf("team B generated from %s", got)
		}
		s.wantError(s.do("POST", "/api/v1/documents/generate", kb, generateBody(ta.str("id"))), 404, "ERR_TMPL_001")
		s.wantError(s.do("GET", "/api/templates/"+ta.str("id"), b.token, nil), 404, "ERR_TMPL_001")
	}
}

// TestCachedGenerateStatements: a synchronous generate with a warm cache
// reads no key, user, team, template or version row; the metadata
// generation it checks is the one its writer published with the last
// commit, read once in each write transaction (a synchronous generate's
// job renders with the request's generation).
func TestCachedGenerateStatements(t *testing.T) {
	s := startServer(t)
	u := s.signup("Stmts")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	s.must(200, "POST", "/api/templates/"+tpl.str("id")+"/publish", u.token, nil)
	s.must(200, "POST", "/api/v1/documents/generate", key, generateBody(tpl.str("id")))
	var mu sync.Mutex
	seen := map[string]int{}
	stop := store.TraceQueries(func(q string, _ int) { mu.Lock(); seen[strings.Join(strings.Fields(q), " ")]++; mu.Unlock() })
	const n = 5
	for range n {
		s.must(200, "POST", "/api/v1/documents/generate", key, generateBody(tpl.str("id")))
	}
	stop()
	mu.Lock()
	defer mu.Unlock()
	total := 0
	for q, c := range seen {
		total += c
		for _, table := range []string{"FROM api_keys", "FROM users", "FROM templates", "FROM template_versions", "FROM members"} {
			if strings.Contains(q, table) {
				t.Errorf("warm generate ran %q %d times", q, c)
			}
		}
		if strings.HasPrefix(q, "SELECT teams.") {
			t.Errorf("warm generate read the team: %q", q)
		}
	}
	// Each request finds the generation the writer published with the
	// last commit (store/metagen.go), the previous generate's: the writer
	// reads it once per commit, these requests not at all.
	if got := seen["SELECT n FROM meta_generation WHERE id = 1"]; got != 0 {
		t.Errorf("requests read the metadata generation %d times in %d generates, want 0", got, n)
	}
	if got := seen["SELECT n AS generation, total_changes() FROM meta_generation WHERE id = 1"]; got != n {
		t.Errorf("the writer read the metadata generation %d times in %d generates, want %d", got, n, n)
	}
	if testing.Verbose() {
		for q, c := range seen {
			t.Logf("%4.1f %.110s", float64(c)/n, q)
		}
	}
	t.Logf("%.1f statements per synchronous generate", float64(total)/n)
}
