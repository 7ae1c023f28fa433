package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// verify confirms u's email with the token from the verification mail.
func (s *testServer) verify(u user) {
	s.t.Helper()
	for _, m := range s.mails(u.email) {
		if strings.Contains(m, "Subject: Verify your email address") {
			s.must(200, "POST", "/api/auth/verify-email", "", map[string]any{"token": mailToken.FindStringSubmatch(m)[1]})
			return
		}
	}
	s.t.Fatalf("no verification mail for %s", u.email)
}

// verifiedUser signs up and verifies a user.
func (s *testServer) verifiedUser(name string) user {
	s.t.Helper()
	u := s.signup(name)
	s.verify(u)
	return u
}

// login returns a fresh access token for u.
func (s *testServer) login(u user) string {
	s.t.Helper()
	return s.must(200, "POST", "/api/auth/login", "", map[string]any{"email": u.email, "password": u.password}).str("accessToken")
}

var inviteLink = regexp.MustCompile(`/invitations/(inv_[A-Za-z0-9]+)/accept`)

// lastInvitationID reads the invitation id from the newest invitation mail to addr.
func (s *testServer) lastInvitationID(addr string) string {
	s.t.Helper()
	mails := s.mails(addr)
	for i := len(mails) - 1; i >= 0; i-- {
		if m := inviteLink.FindStringSubmatch(mails[i]); m != nil {
			return m[1]
		}
	}
	s.t.Fatalf("no invitation mail to %s", addr)
	return ""
}

// newTeam creates a team owned by owner and returns its id.
func (s *testServer) newTeam(owner user, name string) string {
	s.t.Helper()
	return s.must(200, "POST", "/api/teams", owner.token, map[string]any{"name": name}).str("id")
}

// join invites a verified u into team as role and accepts for them.
func (s *testServer) join(owner user, teamID string, u user, role string) {
	s.t.Helper()
	s.must(200, "POST", "/api/teams/members/invite", owner.token, map[string]any{"email": u.email, "role": role}, "X-Team-Id", teamID)
	s.must(200, "POST", "/api/teams/invitations/"+s.lastInvitationID(u.email)+"/accept", u.token, nil)
}

func dataList(t *testing.T, r resp) []map[string]any {
	t.Helper()
	raw, ok := r.get("data").([]any)
	if !ok {
		t.Fatalf("no data list: %s", r.raw)
	}
	out := make([]map[string]any, len(raw))
	for i, v := range raw {
		out[i] = v.(map[string]any)
	}
	return out
}

// activityTypes lists the feed's types, oldest first.
func activityTypes(t *testing.T, r resp) []string {
	t.Helper()
	var out []string
	items := dataList(t, r)
	for i := len(items) - 1; i >= 0; i-- {
		out = append(out, items[i]["type"].(string))
	}
	return out
}

func TestTeamCreateListUpdateDelete(t *testing.T) {
	s := startServer(t)
	u := s.signup("Olivia")

	c := s.must(200, "POST", "/api/teams", u.token, map[string]any{"name": "Acme Corp", "slug": "acme"})
	id := c.str("id")
	if !strings.HasPrefix(id, "team_") || c.str("slug") != "acme" || c.str("name") != "Acme Corp" || c.get("createdAt") == nil {
		t.Fatalf("create = %s", c.raw)
	}
	auto := s.must(200, "POST", "/api/teams", u.token, map[string]any{"name": "Acme Corp"})
	if !strings.HasPrefix(auto.str("slug"), "acme-corp") {
		t.Fatalf("generated slug %q", auto.str("slug"))
	}
	// The same name again gets a different generated slug; an explicit taken slug is refused.
	if again := s.must(200, "POST", "/api/teams", u.token, map[string]any{"name": "Acme Corp"}); again.str("slug") == auto.str("slug") {
		t.Fatalf("slug reused: %s", again.raw)
	}
	s.wantError(s.do("POST", "/api/teams", u.token, map[string]any{"name": "Other", "slug": "acme"}), 400, "ERR_TEAM_002")
	s.wantError(s.do("POST", "/api/teams", u.token, map[string]any{}), 400, "ERR_VALID_005")
	s.wantError(s.do("POST", "/api/teams", u.token, map[string]any{"name": "X", "slug": "Not A Slug"}), 400, "ERR_VALID_003")
	s.wantError(s.do("POST", "/api/teams", u.token, map[string]any{"name": "X", "slug": "personal-mine"}), 400, "ERR_VALID_003")
	// Static path words under /api/teams/ are not slugs: GET /api/teams/members
	// must stay the member list. A name that would slug to one gets "-team".
	for _, word := range []string{"members", "activity", "invitations", "leave"} {
		r := s.do("POST", "/api/teams", u.token, map[string]any{"name": "X", "slug": word})
		s.wantError(r, 400, "ERR_VALID_003")
		if r.str("relatedInfo.field") != "slug" {
			t.Fatalf("slug %q: %s", word, r.raw)
		}
		s.wantError(s.do("PUT", "/api/teams/"+id, u.token, map[string]any{"slug": word}), 400, "ERR_VALID_003")
	}
	members := s.must(200, "POST", "/api/teams", u.token, map[string]any{"name": "Members"})
	if members.str("slug") != "members-team" {
		t.Fatalf("slug of Members = %q", members.str("slug"))
	}
	s.must(200, "DELETE", "/api/teams/"+members.str("id"), u.token, nil)

	list := s.must(200, "GET", "/api/teams", u.token, nil)
	teams := dataList(t, list)
	if len(teams) != 4 || teams[0]["isPersonal"] != true || teams[0]["role"] != "owner" || teams[0]["memberCount"] != 1.0 {
		t.Fatalf("list = %s", list.raw)
	}
	if teams[1]["id"] != id || teams[1]["isPersonal"] != false || teams[1]["role"] != "owner" {
		t.Fatalf("second team = %v", teams[1])
	}
	if list.get("meta.total") != 4.0 {
		t.Fatalf("meta = %v", list.get("meta"))
	}
	personal := teams[0]["id"].(string)

	g := s.must(200, "GET", "/api/teams/"+id, u.token, nil)
	if g.str("name") != "Acme Corp" || g.str("memberCount") != "1" || g.str("slug") != "acme" {
		t.Fatalf("get = %s", g.raw)
	}
	s.must(200, "GET", "/api/teams/acme", u.token, nil) // by slug too

	up := s.must(200, "PUT", "/api/teams/"+id, u.token, map[string]any{"name": "Acme Inc", "slug": "acme-inc"})
	if up.str("name") != "Acme Inc" || up.str("slug") != "acme-inc" {
		t.Fatalf("update = %s", up.raw)
	}
	s.wantError(s.do("PUT", "/api/teams/"+id, u.token, map[string]any{"slug": auto.str("slug")}), 400, "ERR_TEAM_002")
	s.wantError(s.do("PUT", "/api/teams/"+id, u.token, map[string]any{"name": ""}), 400, "ERR_VALID_005")

	// The personal team: renamable, but its slug is fixed and it cannot be deleted.
	ps := s.must(200, "GET", "/api/teams/"+personal, u.token, nil).str("slug")
	s.must(200, "PUT", "/api/teams/"+personal, u.token, map[string]any{"name": "Mine", "slug": ps})
	s.wantError(s.do("PUT", "/api/teams/"+personal, u.token, map[string]any{"slug": "my-own"}), 400, "ERR_TEAM_005")
	s.wantError(s.do("DELETE", "/api/teams/"+personal, u.token, nil), 400, "ERR_TEAM_004")

	// Soft delete: gone from every view; its slug can be used again.
	if d := s.must(200, "DELETE", "/api/teams/"+id, u.token, nil); d.str("message") == "" {
		t.Fatalf("delete = %s", d.raw)
	}
	s.wantError(s.do("GET", "/api/teams/"+id, u.token, nil), 404, "ERR_TEAM_001")
	s.wantError(s.do("GET", "/api/teams/members", u.token, nil, "X-Team-Id", id), 404, "ERR_TEAM_001")
	s.wantError(s.do("DELETE", "/api/teams/"+id, u.token, nil), 404, "ERR_TEAM_001")
	if n := len(dataList(t, s.must(200, "GET", "/api/teams", u.token, nil))); n != 3 {
		t.Fatalf("after delete %d teams, want 3", n)
	}
	s.must(200, "POST", "/api/teams", u.token, map[string]any{"name": "Acme again", "slug": "acme-inc"})

	key := s.createKey(u.token, nil)
	s.wantError(s.do("GET", "/api/teams", key, nil), 403, "ERR_AUTH_004")
}

func TestInvitationLifecycle(t *testing.T) {
	s, clock := startClocked(t)
	owner := s.verifiedUser("Owner")
	team := s.newTeam(owner, "Crew")
	hdr := []string{"X-Team-Id", team}

	// Invite someone without an account yet; the mail carries the accept link.
	bobEmail := fmt.Sprintf("bob-%d@example.com", userSeq.Add(1))
	inv := s.must(200, "POST", "/api/teams/members/invite", owner.token, map[string]any{"email": strings.ToUpper(bobEmail)}, hdr...)
	if inv.str("email") != bobEmail || inv.str("role") != "member" || inv.str("status") != "pending" || !strings.HasPrefix(inv.str("id"), "inv_") {
		t.Fatalf("invite = %s", inv.raw)
	}
	if exp, err := time.Parse(time.RFC3339, inv.str("expiresAt")); err != nil || exp.Sub(clock.Now()) < 6*24*time.Hour {
		t.Fatalf("expiresAt %q", inv.str("expiresAt"))
	}
	mails := s.mails(bobEmail)
	if len(mails) != 1 || !strings.Contains(mails[0], "Crew") || s.lastInvitationID(bobEmail) != inv.str("id") {
		t.Fatalf("invitation mail: %v", mails)
	}
	s.wantError(s.do("POST", "/api/teams/members/invite", owner.token, map[string]any{"email": bobEmail, "role": "admin"}, hdr...), 400, "ERR_TEAM_008")

	// Bob signs up with that address; he must verify it before answering.
	bob := s.must(200, "POST", "/api/auth/signup", "", map[string]any{"email": bobEmail, "password": "bob password", "name": "Bob"})
	b := user{email: bobEmail, password: "bob password", token: bob.str("accessToken"), id: bob.str("user.id")}
	s.wantError(s.do("GET", "/api/teams/invitations/my", b.token, nil), 403, "ERR_AUTH_006")
	s.wantError(s.do("POST", "/api/teams/invitations/"+inv.str("id")+"/accept", b.token, nil), 403, "ERR_AUTH_006")
	s.verify(b)
	my := dataList(t, s.must(200, "GET", "/api/teams/invitations/my", b.token, nil))
	if len(my) != 1 || my[0]["id"] != inv.str("id") || my[0]["teamId"] != team || my[0]["teamName"] != "Crew" || my[0]["role"] != "member" || my[0]["expiresAt"] == nil {
		t.Fatalf("my invitations = %v", my)
	}
	if by, _ := my[0]["invitedBy"].(map[string]any); by["email"] != owner.email || by["name"] != "Owner" {
		t.Fatalf("invitedBy = %v", my[0]["invitedBy"])
	}
	// Nobody else can see or answer Bob's invitation.
	eve := s.verifiedUser("Eve")
	s.wantError(s.do("POST", "/api/teams/invitations/"+inv.str("id")+"/accept", eve.token, nil), 404, "ERR_TEAM_009")
	s.wantError(s.do("POST", "/api/teams/invitations/"+inv.str("id")+"/reject", eve.token, nil), 404, "ERR_TEAM_009")
	if n := len(dataList(t, s.must(200, "GET", "/api/teams/invitations/my", eve.token, nil))); n != 0 {
		t.Fatalf("Eve sees %d invitations", n)
	}

	acc := s.must(200, "POST", "/api/teams/invitations/"+inv.str("id")+"/accept", b.token, nil)
	if acc.str("message") == "" || acc.str("teamId") != team {
		t.Fatalf("accept = %s", acc.raw)
	}
	s.wantError(s.do("POST", "/api/teams/invitations/"+inv.str("id")+"/accept", b.token, nil), 404, "ERR_TEAM_009")
	members := dataList(t, s.must(200, "GET", "/api/teams/members", b.token, nil, hdr...))
	if len(members) != 2 || members[0]["id"] != owner.id || members[0]["role"] != "owner" || members[1]["email"] != bobEmail ||
		members[1]["role"] != "member" || members[1]["name"] != "Bob" || members[1]["joinedAt"] == nil {
		t.Fatalf("members = %v", members)
	}
	s.wantError(s.do("POST", "/api/teams/members/invite", owner.token, map[string]any{"email": bobEmail}, hdr...), 400, "ERR_TEAM_007")
	if n := len(dataList(t, s.must(200, "GET", "/api/teams/invitations/my", b.token, nil))); n != 0 {
		t.Fatalf("accepted invitation still listed (%d)", n)
	}

	// Reject: the invitation closes and a new one may be sent.
	carol := s.verifiedUser("Carol")
	s.must(200, "POST", "/api/teams/members/invite", owner.token, map[string]any{"email": carol.email, "role": "viewer"}, hdr...)
	cinv := s.lastInvitationID(carol.email)
	s.must(200, "POST", "/api/teams/invitations/"+cinv+"/reject", carol.token, nil)
	s.wantError(s.do("POST", "/api/teams/invitations/"+cinv+"/accept", carol.token, nil), 404, "ERR_TEAM_009")
	s.must(200, "POST", "/api/teams/members/invite", owner.token, map[string]any{"email": carol.email, "role": "viewer"}, hdr...)

	// Cancel (owner): the invitee can no longer accept.
	pending := dataList(t, s.must(200, "GET", "/api/teams/invitations", owner.token, nil, hdr...))
	if len(pending) != 1 || pending[0]["email"] != carol.email || pending[0]["status"] != "pending" {
		t.Fatalf("team invitations = %v", pending)
	}
	c2 := s.lastInvitationID(carol.email)
	s.must(200, "DELETE", "/api/teams/members/"+c2+"/invitation", owner.token, nil, hdr...)
	s.wantError(s.do("DELETE", "/api/teams/members/"+c2+"/invitation", owner.token, nil, hdr...), 404, "ERR_TEAM_009")
	s.wantError(s.do("POST", "/api/teams/invitations/"+c2+"/accept", carol.token, nil), 404, "ERR_TEAM_009")
	s.wantError(s.do("DELETE", "/api/teams/members/inv_nope/invitation", owner.token, nil, hdr...), 404, "ERR_TEAM_009")

	// Expiry: after seven days the invitation cannot be accepted; a new one can be sent.
	dave := s.verifiedUser("Dave")
	s.must(200, "POST", "/api/teams/members/invite", owner.token, map[string]any{"email": dave.email}, hdr...)
	dinv := s.lastInvitationID(dave.email)
	clock.Advance(7*24*time.Hour + time.Minute)
	owner.token, dave.token = s.login(owner), s.login(dave)
	s.wantError(s.do("POST", "/api/teams/invitations/"+dinv+"/accept", dave.token, nil), 400, "ERR_TEAM_010")
	if n := len(dataList(t, s.must(200, "GET", "/api/teams/invitations/my", dave.token, nil))); n != 0 {
		t.Fatalf("expired invitation still listed (%d)", n)
	}
	s.must(200, "POST", "/api/teams/members/invite", owner.token, map[string]any{"email": dave.email}, hdr...)
	s.must(200, "POST", "/api/teams/invitations/"+s.lastInvitationID(dave.email)+"/accept", dave.token, nil)

	// Input checks.
	for _, c := range []struct {
		body map[string]any
		code string
	}{
		{map[string]any{}, "ERR_VALID_005"},
		{map[string]any{"email": "not-an-email"}, "ERR_USER_003"},
		{map[string]any{"email": "x@example.com", "role": "owner"}, "ERR_VALID_003"},
		{map[string]any{"email": "x@example.com", "role": "boss"}, "ERR_VALID_003"},
	} {
		s.wantError(s.do("POST", "/api/teams/members/invite", owner.token, c.body, hdr...), 400, c.code)
	}
	// A personal team has no other members.
	s.wantError(s.do("POST", "/api/teams/members/invite", owner.token, map[string]any{"email": "x@example.com"}), 400, "ERR_TEAM_013")
	// Inviting needs a verified email.
	unverified := s.signup("Unverified")
	ut := s.newTeam(unverified, "Unverified team")
	s.wantError(s.do("POST", "/api/teams/members/invite", unverified.token, map[string]any{"email": "x@example.com"}, "X-Team-Id", ut), 403, "ERR_AUTH_006")

	feed := s.must(200, "GET", "/api/teams/activity", owner.token, nil, hdr...)
	got := strings.Join(activityTypes(t, feed), ",")
	want := "invitation_sent,member_joined,invitation_sent,invitation_sent,invitation_sent,invitation_sent,member_joined"
	if got != want {
		t.Fatalf("activity = %s\nwant %s", got, want)
	}
	items := dataList(t, feed)
	joined := items[0]
	if joined["type"] != "member_joined" || joined["user"].(map[string]any)["id"] != dave.id || joined["timestamp"] == nil {
		t.Fatalf("newest activity = %v", joined)
	}
	sent := items[len(items)-1]
	if sent["user"].(map[string]any)["email"] != owner.email || sent["target"].(map[string]any)["email"] != bobEmail {
		t.Fatalf("invitation_sent = %v", sent)
	}
}

func TestTeamRoleBoundaries(t *testing.T) {
	s := startServer(t)
	owner, admin, member, viewer := s.verifiedUser("Owner"), s.verifiedUser("Admin"), s.verifiedUser("Member"), s.verifiedUser("Viewer")
	team := s.newTeam(owner, "Roles")
	s.join(owner, team, admin, "admin")
	s.join(owner, team, member, "member")
	s.join(owner, team, viewer, "viewer")
	hdr := []string{"X-Team-Id", team}

	// A pending invitation to cancel, and a target member for role changes.
	target := s.verifiedUser("Target")
	s.join(owner, team, target, "member")
	s.must(200, "POST", "/api/teams/members/invite", owner.token, map[string]any{"email": "pending@example.com"}, hdr...)
	pendingID := s.lastInvitationID("pending@example.com")

	type call struct{ method, path string }
	calls := map[string]call{
		"list members":      {"GET", "/api/teams/members"},
		"activity":          {"GET", "/api/teams/activity"},
		"get team":          {"GET", "/api/teams/" + team},
		"invite":            {"POST", "/api/teams/members/invite"},
		"list invitations":  {"GET", "/api/teams/invitations"},
		"cancel invitation": {"DELETE", "/api/teams/members/" + pendingID + "/invitation"},
		"change role":       {"PATCH", "/api/teams/members/" + target.id + "/role"},
		"remove member":     {"DELETE", "/api/teams/members/" + target.id},
		"rename team":       {"PUT", "/api/teams/" + team},
		"delete team":       {"DELETE", "/api/teams/" + team},
		"create template":   {"POST", "/api/templates"},
		"create API key":    {"POST", "/api/api-keys"},
	}
	bodies := map[string]any{
		"invite": map[string]any{"email": "new@example.com"}, "change role": map[string]any{"role": "viewer"},
		"rename team": map[string]any{"name": "Renamed"}, "create API key": map[string]any{"name": "k"},
	}
	tpl := map[string]any{}
	for k, v := range invoiceTemplate {
		tpl[k] = v
	}
	tpl["name"] = "Roles template"
	bodies["create template"] = tpl

	// {who, action, status, code}; "" code means success. The owner's
	// successes are checked last, after everyone else's refusals.
	for _, c := range []struct {
		who    user
		role   string
		action string
		status int
		code   string
	}{
		{viewer, "viewer", "list members", 200, ""},
		{viewer, "viewer", "activity", 200, ""},
		{viewer, "viewer", "get team", 200, ""},
		{viewer, "viewer", "invite", 403, "ERR_AUTH_005"},
		{viewer, "viewer", "list invitations", 403, "ERR_AUTH_005"},
		{viewer, "viewer", "create template", 403, "ERR_TMPL_005"},
		{viewer, "viewer", "rename team", 403, "ERR_TEAM_003"},
		{viewer, "viewer", "cancel invitation", 403, "ERR_TEAM_003"},
		{viewer, "viewer", "change role", 403, "ERR_TEAM_003"},
		{viewer, "viewer", "remove member", 403, "ERR_TEAM_003"},
		{viewer, "viewer", "delete team", 403, "ERR_TEAM_003"},
		{viewer, "viewer", "create API key", 403, "ERR_AKEY_004"},
		{member, "member", "list invitations", 403, "ERR_AUTH_005"},
		{member, "member", "rename team", 403, "ERR_TEAM_003"},
		{member, "member", "delete team", 403, "ERR_TEAM_003"},
		{member, "member", "invite", 403, "ERR_AUTH_005"},
		{member, "member", "cancel invitation", 403, "ERR_TEAM_003"},
		{member, "member", "change role", 403, "ERR_TEAM_003"},
		{member, "member", "remove member", 403, "ERR_TEAM_003"},
		{member, "member", "create API key", 403, "ERR_AKEY_004"},
		{member, "member", "create template", 200, ""},
		{admin, "admin", "list invitations", 200, ""},
		{admin, "admin", "invite", 200, ""},
		{admin, "admin", "cancel invitation", 403, "ERR_TEAM_003"},
		{admin, "admin", "change role", 403, "ERR_TEAM_003"},
		{admin, "admin", "remove member", 403, "ERR_TEAM_003"},
		{admin, "admin", "rename team", 403, "ERR_TEAM_003"},
		{admin, "admin", "delete team", 403, "ERR_TEAM_003"},
		{admin, "admin", "create API key", 200, ""},
		{owner, "owner", "cancel invitation", 200, ""},
		{owner, "owner", "change role", 200, ""},
		{owner, "owner", "remove member", 200, ""},
		{owner, "owner", "rename team", 200, ""},
	} {
		cl := calls[c.action]
		r := s.do(cl.method, cl.path, c.who.token, bodies[c.action], hdr...)
		if c.code == "" {
			if r.status != c.status {
				t.Fatalf("%s: %s: %d, want %d\n%s", c.role, c.action, r.status, c.status, r.raw)
			}
			continue
		}
		s.wantError(r, c.status, c.code)
		if c.code == "ERR_AUTH_005" && r.str("relatedInfo.required") != "admin" {
			t.Fatalf("%s: %s relatedInfo = %v", c.role, c.action, r.get("relatedInfo"))
		}
	}

	// The member's template shows in the feed with its name.
	feed := dataList(t, s.must(200, "GET", "/api/teams/activity", viewer.token, nil, hdr...))
	var sawTemplate, sawRole, sawRemoved bool
	for _, it := range feed {
		switch it["type"] {
		case "template_created":
			sawTemplate = it["template"].(map[string]any)["name"] == "Roles template" && it["user"].(map[string]any)["id"] == member.id
		case "role_changed":
			d := it["details"].(map[string]any)
			sawRole = d["from"] == "member" && d["to"] == "viewer" && it["target"].(map[string]any)["id"] == target.id
		case "member_removed":
			sawRemoved = it["target"].(map[string]any)["id"] == target.id && it["user"].(map[string]any)["id"] == owner.id
		}
	}
	if !sawTemplate || !sawRole || !sawRemoved {
		t.Fatalf("feed lacks template_created/role_changed/member_removed: %v", feed)
	}

	// Owner-only rules on roles and removal.
	for _, c := range []struct {
		method, path string
		body         any
		status       int
		code         string
	}{
		{"PATCH", "/api/teams/members/" + member.id + "/role", map[string]any{"role": "owner"}, 400, "ERR_VALID_003"},
		{"PATCH", "/api/teams/members/" + member.id + "/role", map[string]any{}, 400, "ERR_VALID_005"},
		{"PATCH", "/api/teams/members/" + owner.id + "/role", map[string]any{"role": "admin"}, 400, "ERR_VALID_003"},
		{"PATCH", "/api/teams/members/" + target.id + "/role", map[string]any{"role": "admin"}, 404, "ERR_TEAM_011"},
		{"PATCH", "/api/teams/members/usr_nobody/role", map[string]any{"role": "admin"}, 404, "ERR_TEAM_011"},
		{"DELETE", "/api/teams/members/" + owner.id, nil, 400, "ERR_TEAM_012"},
		{"DELETE", "/api/teams/members/" + target.id, nil, 404, "ERR_TEAM_011"},
	} {
		s.wantError(s.do(c.method, c.path, owner.token, c.body, hdr...), c.status, c.code)
	}
	m := s.must(200, "PATCH", "/api/teams/members/"+member.id+"/role", owner.token, map[string]any{"role": "admin"}, hdr...)
	if m.str("role") != "admin" || m.str("id") != member.id || m.str("email") != member.email {
		t.Fatalf("role change = %s", m.raw)
	}
	// A promoted member gets admin rights at once.
	s.must(200, "GET", "/api/teams/invitations", member.token, nil, hdr...)

	// Members can leave; the owner cannot.
	s.must(200, "POST", "/api/teams/leave", viewer.token, nil, hdr...)
	s.wantError(s.do("GET", "/api/teams/members", viewer.token, nil, hdr...), 404, "ERR_TEAM_001")
	s.wantError(s.do("POST", "/api/teams/leave", owner.token, nil, hdr...), 400, "ERR_TEAM_012")
	if types := activityTypes(t, s.must(200, "GET", "/api/teams/activity", owner.token, nil, hdr...)); types[len(types)-1] != "member_left" {
		t.Fatalf("activity after leave = %v", types)
	}

	// Only the owner deletes the team; then nobody reaches it.
	s.must(200, "DELETE", "/api/teams/"+team, owner.token, nil)
	s.wantError(s.do("GET", "/api/teams/members", admin.token, nil, hdr...), 404, "ERR_TEAM_001")
}

func TestRemovedMemberLosesAccessAndKeys(t *testing.T) {
	s := startServer(t)
	owner, admin := s.verifiedUser("Owner"), s.verifiedUser("Admin")
	team := s.newTeam(owner, "Keys")
	hdr := []string{"X-Team-Id", team}
	s.join(owner, team, admin, "admin")

	created := s.must(200, "POST", "/api/api-keys", admin.token, map[string]any{"name": "admin key"}, hdr...)
	key, keyID := created.str("plainKey"), created.str("id")
	ownerKey := s.must(200, "POST", "/api/api-keys", owner.token, map[string]any{"name": "owner key"}, hdr...).str("plainKey")
	s.must(200, "GET", "/api/v1/templates", key, nil)
	s.must(200, "GET", "/api/teams/members", admin.token, nil, hdr...)

	s.must(200, "DELETE", "/api/teams/members/"+admin.id, owner.token, nil, hdr...)
	s.wantError(s.do("GET", "/api/teams/members", admin.token, nil, hdr...), 404, "ERR_TEAM_001")
	s.wantError(s.do("GET", "/api/teams/"+team, admin.token, nil), 404, "ERR_TEAM_001")
	s.wantError(s.do("GET", "/api/v1/templates", key, nil), 401, "ERR_AKEY_003")
	s.must(200, "GET", "/api/v1/templates", ownerKey, nil)
	k := s.must(200, "GET", "/api/api-keys/"+keyID, owner.token, nil, hdr...)
	if k.str("isActive") != "false" {
		t.Fatalf("removed member's key = %s", k.raw)
	}
	if n := len(dataList(t, s.must(200, "GET", "/api/teams/members", owner.token, nil, hdr...))); n != 1 {
		t.Fatalf("%d members after removal", n)
	}
	// Their other teams are untouched.
	s.must(200, "GET", "/api/teams/members", admin.token, nil)
}

func TestTeamIsolation(t *testing.T) {
	s := startServer(t)
	owner, outsider := s.verifiedUser("Owner"), s.verifiedUser("Outsider")
	team := s.newTeam(owner, "Private")
	s.must(200, "POST", "/api/teams/members/invite", owner.token, map[string]any{"email": "someone@example.com"}, "X-Team-Id", team)
	invID := s.lastInvitationID("someone@example.com")
	own := s.newTeam(outsider, "Outside")

	for _, c := range []struct{ method, path string }{
		{"GET", "/api/teams/members"}, {"GET", "/api/teams/activity"}, {"GET", "/api/teams/invitations"},
		{"POST", "/api/teams/members/invite"}, {"DELETE", "/api/teams/members/" + owner.id},
		{"PATCH", "/api/teams/members/" + owner.id + "/role"}, {"POST", "/api/teams/leave"},
	} {
		r := s.do(c.method, c.path, outsider.token, map[string]any{"email": "x@example.com", "role": "admin"}, "X-Team-Id", team)
		s.wantError(r, 404, "ERR_TEAM_001")
		if strings.Contains(string(r.raw), "Private") || strings.Contains(string(r.raw), owner.email) {
			t.Fatalf("%s %s leaks: %s", c.method, c.path, r.raw)
		}
	}
	for _, c := range []struct{ method, path string }{{"GET", "/api/teams/" + team}, {"PUT", "/api/teams/" + team}, {"DELETE", "/api/teams/" + team}} {
		s.wantError(s.do(c.method, c.path, outsider.token, map[string]any{"name": "Mine now"}), 404, "ERR_TEAM_001")
	}
	// The outsider owns a team of their own, but cannot cancel another team's invitation from it.
	s.wantError(s.do("DELETE", "/api/teams/members/"+invID+"/invitation", outsider.token, nil, "X-Team-Id", own), 404, "ERR_TEAM_009")
	if teams := dataList(t, s.must(200, "GET", "/api/teams", outsider.token, nil)); len(teams) != 2 {
		t.Fatalf("outsider sees %d teams", len(teams))
	}
	if g := s.must(200, "GET", "/api/teams/"+team, owner.token, nil); g.str("name") != "Private" {
		t.Fatalf("team changed: %s", g.raw)
	}
}

func TestMemberPlanLimit(t *testing.T) {
	s := startServer(t, func(c *Config) { c.DefaultPlan = "starter" }) // 3 members
	owner, a := s.verifiedUser("Owner"), s.verifiedUser("A")
	team := s.newTeam(owner, "Small")
	hdr := []string{"X-Team-Id", team}
	s.join(owner, team, a, "member")
	s.must(200, "POST", "/api/teams/members/invite", owner.token, map[string]any{"email": "b@example.com"}, hdr...)
	r := s.do("POST", "/api/teams/members/invite", owner.token, map[string]any{"email": "c@example.com"}, hdr...)
	s.wantError(r, 400, "ERR_PLAN_002")
	if r.str("relatedInfo.limit") != "3" || r.str("relatedInfo.current") != "3" || r.str("relatedInfo.plan") != "starter" || r.str("relatedInfo.resource") != "members" {
		t.Fatalf("relatedInfo = %v", r.get("relatedInfo"))
	}
	// Cancelling the pending invitation frees the seat.
	s.must(200, "DELETE", "/api/teams/members/"+s.lastInvitationID("b@example.com")+"/invitation", owner.token, nil, hdr...)
	c := s.verifiedUser("C")
	s.must(200, "POST", "/api/teams/members/invite", owner.token, map[string]any{"email": c.email}, hdr...)

	// Accepting checks the limit again: the operator moved the team to a
	// one-member plan after the invitation was sent.
	setPlan := func(plan string) {
		t.Helper()
		if code, _, errOut := runCLI(t, "admin", "set-plan", "--data", s.Config.Data, "--team", team, "--plan", plan); code != 0 {
			t.Fatalf("set-plan %s: %s", plan, errOut)
		}
	}
	setPlan("free")
	accept := "/api/teams/invitations/" + s.lastInvitationID(c.email) + "/accept"
	r = s.do("POST", accept, c.token, nil)
	s.wantError(r, 400, "ERR_PLAN_002")
	if r.str("relatedInfo.limit") != "1" || r.str("relatedInfo.current") != "2" || r.str("relatedInfo.plan") != "free" {
		t.Fatalf("accept over the limit: relatedInfo = %v", r.get("relatedInfo"))
	}
	if n := len(dataList(t, s.must(200, "GET", "/api/teams/members", owner.token, nil, hdr...))); n != 2 {
		t.Fatalf("%d members after a refused accept", n)
	}
	// The invitation stays pending: back on a plan with room, it is accepted.
	setPlan("starter")
	s.must(200, "POST", accept, c.token, nil)
	if n := len(dataList(t, s.must(200, "GET", "/api/teams/members", owner.token, nil, hdr...))); n != 3 {
		t.Fatalf("%d members after accept", n)
	}
}

// TestDeletedTeamStopsEverywhere: after an owner deletes a team, its API
// keys, pending invitations and members no longer reach it.
func TestDeletedTeamStopsEverywhere(t *testing.T) {
	s := startServer(t)
	owner, admin, member, invitee := s.verifiedUser("Owner"), s.verifiedUser("Admin"), s.verifiedUser("Member"), s.verifiedUser("Invitee")
	team := s.newTeam(owner, "Doomed")
	hdr := []string{"X-Team-Id", team}
	s.join(owner, team, admin, "admin")
	s.join(owner, team, member, "member")
	ownerKey := s.must(200, "POST", "/api/api-keys", owner.token, map[string]any{"name": "owner key"}, hdr...).str("plainKey")
	adminKey := s.must(200, "POST", "/api/api-keys", admin.token, map[string]any{"name": "admin key"}, hdr...).str("plainKey")
	tpl := map[string]any{}
	for k, v := range invoiceTemplate {
		tpl[k] = v
	}
	tpl["name"] = "Doomed template"
	tplID := s.must(200, "POST", "/api/templates", member.token, tpl, hdr...).str("id")
	s.must(200, "POST", "/api/teams/members/invite", owner.token, map[string]any{"email": invitee.email}, hdr...)
	invID := s.lastInvitationID(invitee.email)

	// Before: three members, seen the same by every member; keys work.
	for _, u := range []user{owner, member} {
		var seen bool
		for _, tm := range dataList(t, s.must(200, "GET", "/api/teams", u.token, nil)) {
			if tm["id"] == team {
				seen = tm["memberCount"] == 3.0
			}
		}
		if !seen {
			t.Fatalf("%s's team list lacks the team with memberCount 3", u.email)
		}
	}
	if g := s.must(200, "GET", "/api/teams/"+team, member.token, nil); g.str("memberCount") != "3" || g.str("role") != "member" {
		t.Fatalf("get = %s", g.raw)
	}
	for _, k := range []string{ownerKey, adminKey} {
		if l := s.must(200, "GET", "/api/v1/templates", k, nil); l.str("meta.total") != "1" {
			t.Fatalf("key's templates = %s", l.raw)
		}
	}
	if my := dataList(t, s.must(200, "GET", "/api/teams/invitations/my", invitee.token, nil)); len(my) != 1 {
		t.Fatalf("pending invitations = %v", my)
	}

	s.must(200, "DELETE", "/api/teams/"+team, owner.token, nil)

	// Its keys are refused, as unknown keys.
	for _, k := range []string{ownerKey, adminKey} {
		s.wantError(s.do("GET", "/api/v1/templates", k, nil), 401, "ERR_AKEY_002")
		s.wantError(s.do("POST", "/api/v1/documents/generate", k, map[string]any{"templateId": tplID, "format": "pdf",
			"variables": map[string]any{"number": "1", "customer": "C"}}), 401, "ERR_AKEY_002")
	}
	// Its invitation can no longer be seen or accepted.
	if my := dataList(t, s.must(200, "GET", "/api/teams/invitations/my", invitee.token, nil)); len(my) != 0 {
		t.Fatalf("invitation of a deleted team still listed: %v", my)
	}
	s.wantError(s.do("POST", "/api/teams/invitations/"+invID+"/accept", invitee.token, nil), 404, "ERR_TEAM_009")
	// Its members cannot act on it.
	for _, u := range []user{admin, member} {
		for _, c := range []struct {
			method, path string
			body         any
		}{
			{"GET", "/api/teams/" + team, nil},
			{"GET", "/api/teams/members", nil},
			{"GET", "/api/teams/activity", nil},
			{"POST", "/api/teams/leave", nil},
			{"GET", "/api/templates", nil},
			{"GET", "/api/templates/" + tplID, nil},
			{"POST", "/api/templates", tpl},
			{"POST", "/api/api-keys", map[string]any{"name": "k"}},
		} {
			s.wantError(s.do(c.method, c.path, u.token, c.body, hdr...), 404, "ERR_TEAM_001")
		}
		for _, tm := range dataList(t, s.must(200, "GET", "/api/teams", u.token, nil)) {
			if tm["id"] == team {
				t.Fatalf("%s still lists the deleted team", u.email)
			}
		}
	}
}
