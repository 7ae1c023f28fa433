package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var keyText = regexp.MustCompile(`^svc_sk_[0-9A-Za-z]{32,}$`)

func TestAPIKeyLifecycle(t *testing.T) {
	s := startServer(t)
	u := s.signup("Owner")

	created := s.must(200, "POST", "/api/api-keys", u.token, map[string]any{"name": "ci", "permissions": map[string]bool{"manage_templates": true}})
	plain := created.str("plainKey")
	if !keyText.MatchString(plain) {
		t.Fatalf("plainKey %q does not look like svc_sk_<random>", plain)
	}
	id := created.str("id")
	if created.str("keyType") != "secret" || created.str("isActive") != "true" || !strings.HasPrefix(created.str("teamId"), "team_") {
		t.Fatalf("created = %s", created.raw)
	}
	prefix := created.str("keyPrefix")
	if !strings.HasSuffix(prefix, "...") || !strings.HasPrefix(plain, strings.TrimSuffix(prefix, "...")) || len(prefix) >= len(plain) {
		t.Fatalf("keyPrefix %q for key %q", prefix, plain)
	}
	perms := fmt.Sprint(created.get("permissions"))
	for _, p := range []string{"templates:read", "templates:write", "attachments:write", "analytics:read", "webhooks:write"} {
		if !strings.Contains(perms, p) {
			t.Fatalf("permissions %s lack %s", perms, p)
		}
	}

	// The key text is never shown again, nor stored in the clear.
	got := s.must(200, "GET", "/api/api-keys/"+id, u.token, nil)
	if got.get("plainKey") != nil || strings.Contains(string(got.raw), plain) {
		t.Fatalf("get shows the key: %s", got.raw)
	}
	for _, f := range []string{"keyPrefix", "lastUsedAt", "createdAt", "updatedAt"} {
		if _, ok := got.body[f]; !ok {
			t.Fatalf("get lacks %s: %s", f, got.raw)
		}
	}
	assertNotInFiles(t, s.Config.Data, plain)

	// Using the key works and is counted.
	s.must(200, "GET", "/api/v1/templates", plain, nil)
	s.must(200, "GET", "/api/v1/templates", plain, nil)
	st := s.must(200, "GET", "/api/api-keys/"+id+"/stats", u.token, nil)
	if st.str("totalRequests") != "2" || st.str("requestsToday") != "2" || st.get("lastUsedAt") == nil || st.str("documentsGenerated") != "0" || st.get("emailsSent") == nil {
		t.Fatalf("stats = %s", st.raw)
	}

	// Patch: rename and drop a permission; other flags are kept.
	p := s.must(200, "PATCH", "/api/api-keys/"+id, u.token, map[string]any{"name": "ci-renamed", "permissions": map[string]bool{"read_analytics": false}})
	pp := fmt.Sprint(p.get("permissions"))
	if p.str("name") != "ci-renamed" || strings.Contains(pp, "analytics:read") || !strings.Contains(pp, "templates:write") {
		t.Fatalf("patched = %s", p.raw)
	}

	// Revoke: the key is refused with ERR_AKEY_003; PATCH isActive reactivates it.
	rv := s.must(200, "POST", "/api/api-keys/"+id+"/revoke", u.token, nil)
	if rv.str("isActive") != "false" || rv.str("id") != id || rv.get("updatedAt") == nil || rv.str("name") != "ci-renamed" {
		t.Fatalf("revoke = %s", rv.raw)
	}
	s.wantError(s.do("GET", "/api/v1/templates", plain, nil), 401, "ERR_AKEY_003")
	s.must(200, "PATCH", "/api/api-keys/"+id, u.token, map[string]any{"isActive": true})
	s.must(200, "GET", "/api/v1/templates", plain, nil)

	// Delete: 204, then gone, and the key no longer authenticates.
	d := s.do("DELETE", "/api/api-keys/"+id, u.token, nil)
	if d.status != 204 || len(d.raw) != 0 {
		t.Fatalf("delete: %d %q", d.status, d.raw)
	}
	s.wantError(s.do("GET", "/api/api-keys/"+id, u.token, nil), 404, "ERR_AKEY_001")
	s.wantError(s.do("DELETE", "/api/api-keys/"+id, u.token, nil), 404, "ERR_AKEY_001")
	s.wantError(s.do("GET", "/api/v1/templates", plain, nil), 401, "ERR_AKEY_002")
	s.wantError(s.do("GET", "/api/v1/templates", "svc_sk_"+strings.Repeat("A", 40), nil), 401, "ERR_AKEY_002")

	s.wantError(s.do("POST", "/api/api-keys", u.token, map[string]any{}), 400, "ERR_VALID_005")
	s.wantError(s.do("POST", "/api/api-keys", u.token, map[string]any{"name": 5}), 400, "ERR_VALID_003")
}

func TestAPIKeyListSortFilterPaginate(t *testing.T) {
	s := startServer(t)
	u := s.signup("Lister")
	var ids []string
	for _, name := range []string{"charlie", "alpha", "bravo"} {
		ids = append(ids, s.must(200, "POST", "/api/api-keys", u.token, map[string]any{"name": name}).str("id"))
	}
	s.must(200, "POST", "/api/api-keys/"+ids[2]+"/revoke", u.token, nil)

	all := s.must(200, "GET", "/api/api-keys", u.token, nil)
	data := all.get("data").([]any)
	if len(data) != 3 || data[0].(map[string]any)["name"] != "bravo" { // default createdAt desc
		t.Fatalf("default list = %s", all.raw)
	}
	if strings.Contains(string(all.raw), "plainKey") {
		t.Fatal("list shows plainKey")
	}
	meta := all.get("meta").(map[string]any)
	want := map[string]any{"total": 3.0, "page": 1.0, "limit": 20.0, "totalPages": 1.0, "hasNextPage": false, "hasPreviousPage": false}
	for k, v := range want {
		if meta[k] != v {
			t.Fatalf("meta.%s = %v, want %v", k, meta[k], v)
		}
	}

	byName := s.must(200, "GET", "/api/api-keys?sortBy=name&sortOrder=asc", u.token, nil).get("data").([]any)
	if names := []any{byName[0].(map[string]any)["name"], byName[1].(map[string]any)["name"], byName[2].(map[string]any)["name"]}; fmt.Sprint(names) != "[alpha bravo charlie]" {
		t.Fatalf("sorted by name: %v", names)
	}
	inactive := s.must(200, "GET", "/api/api-keys?isActive=false", u.token, nil).get("data").([]any)
	if len(inactive) != 1 || inactive[0].(map[string]any)["id"] != ids[2] {
		t.Fatalf("isActive=false: %v", inactive)
	}
	p2 := s.must(200, "GET", "/api/api-keys?page=2&limit=2&sortBy=name&sortOrder=asc", u.token, nil)
	m2 := p2.get("meta").(map[string]any)
	if d := p2.get("data").([]any); len(d) != 1 || d[0].(map[string]any)["name"] != "charlie" || m2["totalPages"] != 2.0 || m2["hasNextPage"] != false || m2["hasPreviousPage"] != true {
		t.Fatalf("page 2 = %s", p2.raw)
	}
	s.wantError(s.do("GET", "/api/api-keys?limit=101", u.token, nil), 400, "ERR_VALID_003")
	s.wantError(s.do("GET", "/api/api-keys?sortBy=secret", u.token, nil), 400, "ERR_VALID_003")
	s.wantError(s.do("GET", "/api/api-keys?isActive=maybe", u.token, nil), 400, "ERR_VALID_003")
}

func TestAPIKeysCannotManageKeysOrUsers(t *testing.T) {
	s := startServer(t)
	u := s.signup("Boss")
	key := s.createKey(u.token, nil)
	for _, rt := range []struct{ method, path string }{
		{"GET", "/api/api-keys"}, {"POST", "/api/api-keys"}, {"GET", "/api/users/me"}, {"POST", "/api/templates"},
	} {
		s.wantError(s.do(rt.method, rt.path, key, map[string]any{"name": "x"}), 403, "ERR_AUTH_004")
	}
}

func TestAPIKeyPermissionDenied(t *testing.T) {
	s := startServer(t)
	u := s.signup("Perm")
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	readOnly := s.createKey(u.token, map[string]bool{"send_emails": false})
	r := s.do("POST", "/api/v1/documents/generate", readOnly, map[string]any{"templateId": tpl.str("id"), "format": "pdf",
		"variables": map[string]any{"number": "1", "customer": "x"}})
	s.wantError(r, 403, "ERR_AUTH_005")
	if r.str("relatedInfo.required") != "attachments:write" {
		t.Fatalf("relatedInfo = %v", r.get("relatedInfo"))
	}
	granted, ok := r.get("relatedInfo.granted").([]any)
	if !ok || !strings.Contains(fmt.Sprint(granted), "templates:read") || strings.Contains(fmt.Sprint(granted), "attachments:write") {
		t.Fatalf("granted = %v", r.get("relatedInfo.granted"))
	}
}

func TestAPIKeysAreScopedByTeam(t *testing.T) {
	s := startServer(t)
	a, b := s.signup("Alice"), s.signup("Bob")
	id := s.must(200, "POST", "/api/api-keys", a.token, map[string]any{"name": "alice"}).str("id")
	s.wantError(s.do("GET", "/api/api-keys/"+id, b.token, nil), 404, "ERR_AKEY_001")
	s.wantError(s.do("PATCH", "/api/api-keys/"+id, b.token, map[string]any{"name": "mine"}), 404, "ERR_AKEY_001")
	s.wantError(s.do("POST", "/api/api-keys/"+id+"/revoke", b.token, nil), 404, "ERR_AKEY_001")
	s.wantError(s.do("GET", "/api/api-keys/"+id+"/stats", b.token, nil), 404, "ERR_AKEY_001")
	s.wantError(s.do("DELETE", "/api/api-keys/"+id, b.token, nil), 404, "ERR_AKEY_001")
	if d := s.must(200, "GET", "/api/api-keys", b.token, nil).get("data").([]any); len(d) != 0 {
		t.Fatalf("Bob sees Alice's keys: %v", d)
	}
	s.must(200, "GET", "/api/api-keys/"+id, a.token, nil)
}

func TestAPIKeyPlanLimit(t *testing.T) {
	s := startServer(t, func(c *Config) { c.DefaultPlan = "free" })
	u := s.signup("Free")
	s.createKey(u.token, nil)
	r := s.do("POST", "/api/api-keys", u.token, map[string]any{"name": "second"})
	s.wantError(r, 400, "ERR_PLAN_002")
	if r.str("relatedInfo.limit") != "1" {
		t.Fatalf("relatedInfo = %v", r.get("relatedInfo"))
	}
}

// TestKeyPermissionFlags checks the exact permission strings a new key gets
// for each combination of create flags, absent flags taking their defaults
// (DESIGN.md section 4): the read set always; send_emails (default on) adds
// attachments:write, emails:write and webhooks:write; read_analytics
// (default on) analytics:read; manage_templates (default off)
// templates:write.
func TestKeyPermissionFlags(t *testing.T) {
	s := startServer(t) // scale plan: no key limit
	u := s.signup("Flags")
	want := func(send, analytics, manage bool) []string {
		p := []string{"templates:read", "attachments:read", "emails:read"}
		if send {
			p = append(p, "attachments:write", "emails:write", "webhooks:write")
		}
		if analytics {
			p = append(p, "analytics:read")
		}
		if manage {
			p = append(p, "templates:write")
		}
		slices.Sort(p)
		return p
	}
	type tc struct {
		flags map[string]bool // nil: no permissions object at all
		want  []string
	}
	cases := []tc{
		{nil, want(true, true, false)},
		{map[string]bool{}, want(true, true, false)},
		{map[string]bool{"manage_templates": true}, want(true, true, true)},
		{map[string]bool{"send_emails": false}, want(false, true, false)},
		{map[string]bool{"read_analytics": false}, want(true, false, false)},
	}
	for _, send := range []bool{false, true} {
		for _, analytics := range []bool{false, true} {
			for _, manage := range []bool{false, true} {
				cases = append(cases, tc{map[string]bool{"send_emails": send, "read_analytics": analytics, "manage_templates": manage}, want(send, analytics, manage)})
			}
		}
	}
	for i, c := range cases {
		body := map[string]any{"name": fmt.Sprintf("flags %d", i)}
		if c.flags != nil {
			body["permissions"] = c.flags
		}
		created := s.must(200, "POST", "/api/api-keys", u.token, body)
		got := s.must(200, "GET", "/api/api-keys/"+created.str("id"), u.token, nil)
		for _, r := range []resp{created, got} {
			var perms []string
			for _, p := range r.get("permissions").([]any) {
				perms = append(perms, p.(string))
			}
			slices.Sort(perms)
			if !slices.Equal(perms, c.want) {
				t.Errorf("flags %v: permissions %v, want %v", c.flags, perms, c.want)
			}
		}
	}
}
