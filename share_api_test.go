package main

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// personalTeam returns the id of u's personal team.
func (s *testServer) personalTeam(u user) string {
	s.t.Helper()
	teams, _ := s.must(200, "GET", "/api/teams", u.token, nil).get("data").([]any)
	for _, v := range teams {
		if tm, _ := v.(map[string]any); tm["isPersonal"] == true {
			return tm["id"].(string)
		}
	}
	s.t.Fatalf("%s has no personal team", u.email)
	return ""
}

func TestTemplateSharing(t *testing.T) {
	s := startServer(t)
	owner, other := s.signup("Owner"), s.verifiedUser("Partner")
	ownerTeam, otherTeam := s.personalTeam(owner), s.personalTeam(other)
	ownerKey, otherKey := s.createKey(owner.token, nil), s.createKey(other.token, nil)
	tpl := s.createTemplate(owner.token, "Shared Letter", editionTemplate("alpha"))
	id := tpl.str("id")
	shareURL := "/api/templates/attachment/" + id + "/share"

	// Sharing needs a verified email, then a real other team, once.
	s.wantError(s.do("POST", shareURL, owner.token, map[string]any{"targetTeamId": otherTeam}), 403, "ERR_AUTH_006")
	s.verify(owner)
	s.wantError(s.do("POST", shareURL, owner.token, map[string]any{}), 400, "ERR_VALID_005")
	s.wantError(s.do("POST", shareURL, owner.token, map[string]any{"targetTeamId": ownerTeam}), 400, "ERR_SHARE_003")
	s.wantError(s.do("POST", shareURL, owner.token, map[string]any{"targetTeamId": "team_nope"}), 404, "ERR_SHARE_004")
	s.wantError(s.do("POST", shareURL, owner.token, map[string]any{"targetTeamId": otherTeam, "permission": "admin"}), 400, "ERR_VALID_003")
	s.wantError(s.do("POST", "/api/templates/attachment/tpl_missing/share", owner.token, map[string]any{"targetTeamId": otherTeam}), 404, "ERR_TMPL_001")
	sh := s.must(200, "POST", shareURL, owner.token, map[string]any{"targetTeamId": otherTeam})
	if !strings.HasPrefix(sh.str("id"), "shr_") || sh.str("templateId") != id || sh.str("targetTeamId") != otherTeam ||
		sh.str("targetTeamName") == "" || sh.str("permission") != "view" || sh.get("createdAt") == nil {
		t.Fatalf("share = %s", sh.raw)
	}
	s.wantError(s.do("POST", shareURL, owner.token, map[string]any{"targetTeamId": otherTeam, "permission": "edit"}), 400, "ERR_SHARE_002")
	shares := s.must(200, "GET", "/api/templates/attachment/"+id+"/shares", owner.token, nil)
	if list := shares.get("shares").([]any); len(list) != 1 || list[0].(map[string]any)["id"] != sh.str("id") {
		t.Fatalf("shares = %s", shares.raw)
	}

	// The target team sees it in its shared list and can read it.
	sw := s.must(200, "GET", "/api/templates/shared", other.token, nil)
	items := sw.get("templates").([]any)
	if len(items) != 1 {
		t.Fatalf("shared with me = %s", sw.raw)
	}
	if it := items[0].(map[string]any); it["id"] != id || it["name"] != "Shared Letter" || it["ownerTeamName"] == "" || it["permission"] != "view" || it["sharedAt"] == nil {
		t.Fatalf("shared item = %v", it)
	}
	if l := s.must(200, "GET", "/api/templates/shared", owner.token, nil); len(l.get("templates").([]any)) != 0 {
		t.Fatalf("owner's shared list = %s", l.raw)
	}
	if g := s.must(200, "GET", "/api/templates/"+id, other.token, nil); g.str("permission") != "view" || g.str("teamId") != ownerTeam {
		t.Fatalf("shared get = %s", g.raw)
	}
	s.must(200, "GET", "/api/templates/"+tpl.str("shortId"), other.token, nil)
	s.must(200, "GET", "/api/v1/templates/"+id, otherKey, nil)
	s.wantError(s.do("GET", "/api/templates/"+tpl.str("slug"), other.token, nil), 404, "ERR_TMPL_001") // slugs are per team
	s.must(200, "GET", "/api/templates/"+id+"/versions", other.token, nil)
	s.must(200, "GET", "/api/templates/"+id+"/automation-fields", other.token, nil)
	if l := s.must(200, "GET", "/api/templates", other.token, nil); l.str("meta.total") != "0" {
		t.Fatalf("a shared template is not the team's own: %s", l.raw)
	}

	// A view share generates (through the worker), from the published state too.
	ownerJob := s.generate(ownerKey, id, nil)
	s.must(200, "POST", "/api/templates/"+id+"/publish", owner.token, nil)
	g := s.wantEdition(otherKey, id, nil, "alpha", "1")
	async := s.must(200, "POST", "/api/v1/documents/generate?async=true", otherKey, map[string]any{"templateId": tpl.str("shortId"), "format": "pdf",
		"variables": map[string]any{"customer": "Async"}})
	s.waitJob(otherKey, async.str("jobId"))
	// Neither sees the other's jobs.
	s.wantError(s.do("GET", "/api/v1/documents/jobs/"+ownerJob.str("jobId"), otherKey, nil), 404, "ERR_JOB_001")
	s.wantError(s.do("GET", "/api/v1/documents/jobs/"+g.str("jobId"), ownerKey, nil), 404, "ERR_JOB_001")
	if l := s.must(200, "GET", "/api/v1/documents/jobs?templateId="+id, otherKey, nil); l.str("meta.total") != "2" {
		t.Fatalf("target's jobs = %s", l.raw)
	}
	if l := s.must(200, "GET", "/api/v1/documents/jobs?templateId="+id, ownerKey, nil); l.str("meta.total") != "1" {
		t.Fatalf("owner's jobs = %s", l.raw)
	}

	// What a view share does not allow.
	base := "/api/templates/" + id
	viewRefusals := []struct {
		method, path string
		body         any
		status       int
		code         string
	}{
		{"PUT", base, map[string]any{"description": "x"}, 403, "ERR_TMPL_005"},
		{"POST", base + "/publish", nil, 403, "ERR_TMPL_005"},
		{"POST", base + "/versions/1/restore", nil, 403, "ERR_TMPL_005"},
		{"DELETE", base, nil, 403, "ERR_TMPL_006"},
		{"POST", base + "/share", map[string]any{"targetTeamId": ownerTeam}, 403, "ERR_SHARE_005"},
		{"GET", base + "/shares", nil, 403, "ERR_TMPL_007"},
		{"GET", base + "/export", nil, 403, "ERR_TMPL_004"},
		{"POST", base + "/duplicate", nil, 403, "ERR_TMPL_004"},
		{"PUT", "/api/templates/shares/" + sh.str("id"), map[string]any{"permission": "edit"}, 403, "ERR_SHARE_005"},
		{"DELETE", "/api/templates/shares/" + sh.str("id"), nil, 403, "ERR_SHARE_005"},
	}
	for _, c := range viewRefusals {
		s.wantError(s.do(c.method, c.path, other.token, c.body), c.status, c.code)
	}
	bd := s.must(200, "POST", "/api/templates/bulk-delete", other.token, map[string]any{"ids": []string{id}})
	if bd.str("deleted") != "0" || bd.str("skipped") != "1" {
		t.Fatalf("target bulk delete = %s", bd.raw)
	}

	// Upgrade to edit: the target team may change and publish, nothing more.
	s.wantError(s.do("PUT", "/api/templates/shares/"+sh.str("id"), owner.token, map[string]any{}), 400, "ERR_VALID_005")
	s.wantError(s.do("PUT", "/api/templates/shares/shr_nope", owner.token, map[string]any{"permission": "edit"}), 404, "ERR_SHARE_001")
	up := s.must(200, "PUT", "/api/templates/shares/"+sh.str("id"), owner.token, map[string]any{"permission": "edit"})
	if up.str("permission") != "edit" || up.str("id") != sh.str("id") {
		t.Fatalf("share update = %s", up.raw)
	}
	beta := editionTemplate("beta")
	if e := s.must(200, "PUT", base, other.token, map[string]any{"schema": beta["schema"]}); e.str("permission") != "edit" {
		t.Fatalf("edit by target = %s", e.raw)
	}
	// Edit changes what the template renders, not how the owner addresses
	// or files it.
	s.wantError(s.do("PUT", base, other.token, map[string]any{"slug": "taken-over"}), 403, "ERR_TMPL_005")
	s.wantError(s.do("PUT", base, other.token, map[string]any{"folderId": nil}), 403, "ERR_TMPL_005")
	s.must(200, "POST", base+"/publish", other.token, map[string]any{"releaseNotes": "by partner"})
	s.wantEdition(ownerKey, id, nil, "beta", "2")
	s.must(200, "POST", base+"/versions/1/restore", other.token, nil)
	s.wantEdition(otherKey, id, nil, "alpha", "3")
	for _, c := range viewRefusals[3:] {
		s.wantError(s.do(c.method, c.path, other.token, c.body), c.status, c.code)
	}

	// A third team learns nothing about the share.
	third := s.verifiedUser("Third")
	s.wantError(s.do("PUT", "/api/templates/shares/"+sh.str("id"), third.token, map[string]any{"permission": "view"}), 404, "ERR_SHARE_001")
	s.wantError(s.do("GET", base, third.token, nil), 404, "ERR_TMPL_001")

	// Revoke: access ends at once.
	rv := s.must(200, "DELETE", "/api/templates/shares/"+sh.str("id"), owner.token, nil)
	if rv.str("success") != "true" || rv.str("message") == "" {
		t.Fatalf("revoke = %s", rv.raw)
	}
	s.wantError(s.do("DELETE", "/api/templates/shares/"+sh.str("id"), owner.token, nil), 404, "ERR_SHARE_001")
	s.wantError(s.do("GET", base, other.token, nil), 404, "ERR_TMPL_001")
	s.wantError(s.do("POST", "/api/v1/documents/generate", otherKey, map[string]any{"templateId": id, "format": "pdf",
		"variables": map[string]any{"customer": "x"}}), 404, "ERR_TMPL_001")
	if l := s.must(200, "GET", "/api/templates/shared", other.token, nil); len(l.get("templates").([]any)) != 0 {
		t.Fatalf("after revoke = %s", l.raw)
	}
	// The target's jobs stay its own.
	s.must(200, "GET", "/api/v1/documents/jobs/"+g.str("jobId"), otherKey, nil)

	// Deleting a template ends its shares.
	s.must(200, "POST", shareURL, owner.token, map[string]any{"targetTeamId": otherTeam, "permission": "edit"})
	s.must(200, "DELETE", base, owner.token, nil)
	if l := s.must(200, "GET", "/api/templates/shared", other.token, nil); len(l.get("templates").([]any)) != 0 {
		t.Fatalf("after delete = %s", l.raw)
	}
}

// waitJob polls a job until it ends and fails unless it completed.
func (s *testServer) waitJob(token, id string) resp {
	s.t.Helper()
	for i := 0; i < 300; i++ {
		j := s.must(200, "GET", "/api/v1/documents/jobs/"+id, token, nil)
		switch j.str("status") {
		case "completed":
			return j
		case "failed":
			s.t.Fatalf("job failed: %s", j.raw)
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.t.Fatalf("job %s did not end", id)
	return resp{}
}

func TestTemplateRoles(t *testing.T) {
	s := startServer(t)
	owner := s.verifiedUser("Boss")
	admin, member, viewer := s.verifiedUser("Admin"), s.verifiedUser("Member"), s.verifiedUser("Viewer")
	team := s.newTeam(owner, "Studio")
	for _, m := range []struct {
		u    user
		role string
	}{{admin, "admin"}, {member, "member"}, {viewer, "viewer"}} {
		s.join(owner, team, m.u, m.role)
	}
	hdr := []string{"X-Team-Id", team}
	partner := s.verifiedUser("Partner")
	partnerTeam := s.personalTeam(partner)

	// One template per role under test, so deletes do not interfere.
	mk := func(name string) string {
		body := map[string]any{}
		for k, v := range invoiceTemplate {
			body[k] = v
		}
		body["name"] = name
		return s.must(200, "POST", "/api/templates", owner.token, body, hdr...).str("id")
	}
	newBody := func(name string) map[string]any {
		body := map[string]any{}
		for k, v := range invoiceTemplate {
			body[k] = v
		}
		body["name"] = name
		return body
	}
	folder := s.must(200, "POST", "/api/template-folders", owner.token, map[string]any{"name": "Shared folder"}, hdr...).str("id")
	// A share of the team's template that each role tries to change and revoke.
	shareID := s.must(200, "POST", "/api/templates/"+mk("Shared out")+"/share", owner.token, map[string]any{"targetTeamId": partnerTeam}, hdr...).str("id")
	shareURL := "/api/templates/shares/" + shareID
	export := s.must(200, "GET", "/api/templates/"+mk("Exported")+"/export", owner.token, nil, hdr...).raw

	type step struct {
		action string
		status int
		code   string
	}
	run := func(who user, role string, steps []step) {
		t.Helper()
		id := mk("For " + role)
		base := "/api/templates/" + id
		for _, st := range steps {
			var r resp
			switch st.action {
			case "read":
				r = s.do("GET", base, who.token, nil, hdr...)
			case "list":
				r = s.do("GET", "/api/templates", who.token, nil, hdr...)
			case "versions":
				r = s.do("GET", base+"/versions", who.token, nil, hdr...)
			case "export":
				r = s.do("GET", base+"/export", who.token, nil, hdr...)
			case "create":
				r = s.do("POST", "/api/templates", who.token, newBody("New by "+role), hdr...)
			case "update":
				r = s.do("PUT", base, who.token, map[string]any{"description": role}, hdr...)
			case "publish":
				r = s.do("POST", base+"/publish", who.token, nil, hdr...)
			case "restore":
				r = s.do("POST", base+"/versions/1/restore", who.token, nil, hdr...)
			case "duplicate":
				r = s.do("POST", base+"/duplicate", who.token, nil, hdr...)
			case "import":
				r = s.upload("/api/templates/import", who.token, export, nil, hdr...)
			case "bulk-categories":
				r = s.do("POST", "/api/templates/bulk-categories", who.token, map[string]any{"templateIds": []string{id}, "categoryIds": []string{}}, hdr...)
			case "generate":
				r = s.do("POST", "/api/v1/documents/generate", who.token, map[string]any{"templateId": id, "format": "pdf",
					"variables": map[string]any{"number": "1", "customer": "C"}}, hdr...)
			case "share":
				r = s.do("POST", base+"/share", who.token, map[string]any{"targetTeamId": partnerTeam}, hdr...)
			case "shares":
				r = s.do("GET", base+"/shares", who.token, nil, hdr...)
			case "share-update":
				r = s.do("PUT", shareURL, who.token, map[string]any{"permission": "edit"}, hdr...)
			case "share-revoke":
				r = s.do("DELETE", shareURL, who.token, nil, hdr...)
			case "folder-create":
				r = s.do("POST", "/api/template-folders", who.token, map[string]any{"name": "Folder of " + role}, hdr...)
			case "folder-rename":
				r = s.do("PUT", "/api/template-folders/"+folder, who.token, map[string]any{"name": "Renamed by " + role}, hdr...)
			case "bulk-delete":
				r = s.do("POST", "/api/templates/bulk-delete", who.token, map[string]any{"ids": []string{id}}, hdr...)
			case "delete":
				r = s.do("DELETE", base, who.token, nil, hdr...)
			default:
				t.Fatalf("unknown action %s", st.action)
			}
			if st.code == "" {
				if r.status != st.status {
					t.Fatalf("%s: %s: %d, want %d\n%s", role, st.action, r.status, st.status, r.raw)
				}
				continue
			}
			s.wantError(r, st.status, st.code)
		}
	}
	reads := []step{{"read", 200, ""}, {"list", 200, ""}, {"versions", 200, ""}, {"export", 200, ""}, {"shares", 200, ""}}
	run(viewer, "viewer", append(reads,
		step{"create", 403, "ERR_TMPL_005"},
		step{"update", 403, "ERR_TMPL_005"},
		step{"publish", 403, "ERR_TMPL_005"},
		step{"restore", 403, "ERR_TMPL_005"},
		step{"duplicate", 403, "ERR_TMPL_005"},
		step{"import", 403, "ERR_TMPL_005"},
		step{"bulk-categories", 403, "ERR_TMPL_005"},
		step{"folder-create", 403, "ERR_TMPL_005"},
		step{"folder-rename", 403, "ERR_TMPL_005"},
		step{"generate", 403, "ERR_AUTH_005"},
		step{"share", 403, "ERR_SHARE_005"},
		step{"share-update", 403, "ERR_SHARE_005"},
		step{"share-revoke", 403, "ERR_SHARE_005"},
		step{"bulk-delete", 403, "ERR_TMPL_006"},
		step{"delete", 403, "ERR_TMPL_006"},
	))
	run(member, "member", append(reads,
		step{"create", 200, ""},
		step{"update", 200, ""},
		step{"publish", 200, ""},
		step{"restore", 200, ""},
		step{"duplicate", 200, ""},
		step{"import", 200, ""},
		step{"bulk-categories", 200, ""},
		step{"folder-create", 200, ""},
		step{"folder-rename", 200, ""},
		step{"generate", 200, ""},
		step{"share", 403, "ERR_SHARE_005"},
		step{"share-update", 403, "ERR_SHARE_005"},
		step{"share-revoke", 403, "ERR_SHARE_005"},
		step{"bulk-delete", 403, "ERR_TMPL_006"},
		step{"delete", 403, "ERR_TMPL_006"},
	))
	for _, who := range []struct {
		u    user
		role string
	}{{admin, "admin"}, {owner, "owner"}} {
		run(who.u, who.role, append(reads,
			step{"create", 200, ""},
			step{"update", 200, ""},
			step{"publish", 200, ""},
			step{"restore", 200, ""},
			step{"duplicate", 200, ""},
			step{"generate", 200, ""},
			step{"share", 200, ""},
			step{"share-update", 200, ""},
			step{"delete", 200, ""},
		))
	}
	if l := s.must(200, "GET", "/api/templates/shared", partner.token, nil); !strings.Contains(string(l.raw), `"permission":"edit"`) {
		t.Fatalf("the share was not upgraded: %s", l.raw)
	}
	// Folder deletion is for owners and admins.
	s.wantError(s.do("DELETE", "/api/template-folders/"+folder, member.token, nil, hdr...), 403, "ERR_TMPL_006")
	s.must(200, "DELETE", "/api/template-folders/"+folder, admin.token, nil, hdr...)
	// Bulk delete by an admin.
	if bd := s.must(200, "POST", "/api/templates/bulk-delete", admin.token, map[string]any{"ids": []string{"exported"}}, hdr...); bd.str("deleted") != "1" {
		t.Fatalf("admin bulk delete = %s", bd.raw)
	}

	// Owners and admins need a verified email to change or revoke a share
	// too. The API never takes verification back, so the test clears the
	// flag in the database to reach this guard.
	setEmailVerified(t, s, admin.id, false)
	setEmailVerified(t, s, owner.id, false)
	for _, u := range []user{admin, owner} {
		s.wantError(s.do("PUT", shareURL, u.token, map[string]any{"permission": "view"}, hdr...), 403, "ERR_AUTH_006")
		s.wantError(s.do("DELETE", shareURL, u.token, nil, hdr...), 403, "ERR_AUTH_006")
	}
	setEmailVerified(t, s, admin.id, true)
	s.must(200, "DELETE", shareURL, admin.token, nil, hdr...)
	s.wantError(s.do("DELETE", shareURL, admin.token, nil, hdr...), 404, "ERR_SHARE_001")
}

// setEmailVerified sets a user's verified flag directly in the server's
// database (the API only ever sets it).
func setEmailVerified(t *testing.T, s *testServer, userID string, verified bool) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(s.Config.Data, "folio.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := db.Exec(`UPDATE users SET email_verified = ? WHERE id = ?`, verified, userID)
	if err != nil {
		t.Fatalf("set email_verified of %s: %v", userID, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("set email_verified of %s: %d rows", userID, n)
	}
}

// TestSharedTemplateRolesInTargetTeam checks that an edit share gives the
// target team's members edit rights, not its viewers: roles apply in the
// team a request acts on, whoever owns the template.
func TestSharedTemplateRolesInTargetTeam(t *testing.T) {
	s := startServer(t)
	owner, lead := s.verifiedUser("Owner"), s.verifiedUser("Lead")
	member, viewer := s.verifiedUser("Member"), s.verifiedUser("Viewer")
	target := s.newTeam(lead, "Agency")
	s.join(lead, target, member, "member")
	s.join(lead, target, viewer, "viewer")
	hdr := []string{"X-Team-Id", target}
	id := s.createTemplate(owner.token, "Brochure", editionTemplate("alpha")).str("id")
	base := "/api/templates/" + id
	s.must(200, "POST", base+"/share", owner.token, map[string]any{"targetTeamId": target, "permission": "edit"})

	// The viewer reads it, with the share's permission, and changes nothing.
	if g := s.must(200, "GET", base, viewer.token, nil, hdr...); g.str("permission") != "edit" {
		t.Fatalf("viewer's get = %s", g.raw)
	}
	s.wantError(s.do("PUT", base, viewer.token, map[string]any{"description": "by viewer"}, hdr...), 403, "ERR_TMPL_005")
	s.wantError(s.do("POST", base+"/publish", viewer.token, nil, hdr...), 403, "ERR_TMPL_005")
	s.wantError(s.do("POST", "/api/v1/documents/generate", viewer.token, map[string]any{"templateId": id, "format": "pdf",
		"variables": map[string]any{"customer": "V"}}, hdr...), 403, "ERR_AUTH_005")
	if g := s.must(200, "GET", base, owner.token, nil); g.str("description") != "" {
		t.Fatalf("the viewer changed the template: %s", g.raw)
	}
	// A member of the same team may edit.
	if e := s.must(200, "PUT", base, member.token, map[string]any{"description": "by member"}, hdr...); e.str("description") != "by member" {
		t.Fatalf("member's edit = %s", e.raw)
	}
}
