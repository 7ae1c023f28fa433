package storetest

import (
	"fmt"
	"testing"
	"time"

	"folio/app"
)

var teamCases = []Case{
	{"TeamsOfAUser", teamsOfAUser},
	{"TeamUpdateAndDelete", teamUpdateAndDelete},
	{"TeamPlanAndCredits", teamPlanAndCredits},
	{"Members", members},
	{"MembershipIsScopedByTeam", membershipIsScopedByTeam},
	{"Invitations", invitations},
	{"AcceptInvitation", acceptInvitation},
	{"PlanCountsCheckedOnInsert", planCountsCheckedOnInsert},
}

func page(n, limit int) app.Page { return app.Page{Page: n, Limit: limit} }

// teamsOfAUser: a user's teams list the personal one first, then by
// creation, ties in insertion order, with the user's role and member counts;
// a taken slug is ERR_TEAM_002; deleted teams are left out.
func teamsOfAUser(t *testing.T, s Store) {
	u := mustUser(t, s, "owner@example.com")
	guest := mustUser(t, s, "guest@example.com")
	later := t0.Add(time.Hour)
	b := mustTeam(t, s, u, "team-b", "starter", later)
	a := mustTeam(t, s, u, "team-a", "starter", later) // same instant: after b
	old := mustTeam(t, s, guest, "team-old", "starter", t0.Add(time.Minute))
	invite(t, s, old, guest, u.Email, app.RoleAdmin, t0.Add(time.Minute))
	if _, err := s.AcceptInvitation(ctx, mustInvitation(t, s, old.ID, u.Email).ID, u.ID, t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	err := s.CreateTeam(ctx, &app.Team{ID: app.NewID("team"), Name: "Dup", Slug: "team-a", Plan: "free", OwnerID: u.ID, CreatedAt: t0, UpdatedAt: t0})
	wantCode(t, "taken slug", err, app.ECodeTeamSlugTaken)

	teams, total, err := s.FindTeamsForUser(ctx, u.ID, page(1, 10))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tm := range teams {
		got = append(got, fmt.Sprintf("%s:%s:%d", tm.Slug, tm.Role, tm.MemberCount))
	}
	personal, _ := s.FindTeam(ctx, u.PersonalTeamID)
	want := []string{personal.Slug + ":owner:1", "team-old:admin:2", "team-b:owner:1", "team-a:owner:1"}
	if total != 4 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("teams %v (total %d), want %v", got, total, want)
	}
	if teams[2].ID != b.ID || teams[3].ID != a.ID || !teams[3].CreatedAt.Equal(later) || teams[3].Plan != "starter" || teams[3].Name != "Team team-a" {
		t.Fatalf("team fields: %+v", teams[3])
	}
	second, total, err := s.FindTeamsForUser(ctx, u.ID, page(2, 3))
	if err != nil || total != 4 || len(second) != 1 || second[0].ID != a.ID {
		t.Fatalf("page 2: %v %d %v", second, total, err)
	}
	// By slug as well as id.
	if got, err := s.FindTeam(ctx, "team-b"); err != nil || got.ID != b.ID {
		t.Fatalf("by slug: %+v %v", got, err)
	}
	if err := s.DeleteTeam(ctx, b.ID, later); err != nil {
		t.Fatal(err)
	}
	if _, total, _ := s.FindTeamsForUser(ctx, u.ID, page(1, 10)); total != 3 {
		t.Fatalf("after deleting one: total %d, want 3", total)
	}
}

// teamUpdateAndDelete: renames keep slugs unique; deletion frees the slug,
// cancels pending invitations, and hides the team from every lookup.
func teamUpdateAndDelete(t *testing.T, s Store) {
	u := mustUser(t, s, "upd@example.com")
	a := mustTeam(t, s, u, "alpha", "starter", t0)
	mustTeam(t, s, u, "beta", "starter", t0)
	name, slug := "Alpha Two", "alpha-two"
	got, err := s.UpdateTeam(ctx, a.ID, app.TeamUpdate{Name: &name, Slug: &slug}, t0.Add(time.Second))
	if err != nil || got.Name != name || got.Slug != slug || got.MemberCount != 1 || !got.UpdatedAt.Equal(t0.Add(time.Second)) || !got.CreatedAt.Equal(t0) {
		t.Fatalf("update: %+v %v", got, err)
	}
	onlyName := "Alpha Three"
	if got, err := s.UpdateTeam(ctx, a.ID, app.TeamUpdate{Name: &onlyName}, t0); err != nil || got.Slug != slug || got.Name != onlyName {
		t.Fatalf("name only: %+v %v", got, err)
	}
	taken := "beta"
	_, err = s.UpdateTeam(ctx, a.ID, app.TeamUpdate{Slug: &taken}, t0)
	wantCode(t, "taken slug", err, app.ECodeTeamSlugTaken)
	_, err = s.UpdateTeam(ctx, "team_missing", app.TeamUpdate{Name: &name}, t0)
	wantCode(t, "unknown team", err, app.ECodeTeamNotFound)

	invite(t, s, a, u, "pending@example.com", app.RoleMember, t0)
	inv := mustInvitation(t, s, a.ID, "pending@example.com")
	if err := s.DeleteTeam(ctx, a.ID, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	_, err = s.FindTeam(ctx, a.ID)
	wantCode(t, "deleted team by id", err, app.ECodeTeamNotFound)
	_, err = s.FindTeam(ctx, slug)
	wantCode(t, "deleted team by slug", err, app.ECodeTeamNotFound)
	_, err = s.FindMember(ctx, a.ID, u.ID)
	wantCode(t, "member of a deleted team", err, app.ECodeTeamNotFound)
	_, err = s.FindInvitation(ctx, inv.ID, t0)
	wantCode(t, "invitation of a deleted team", err, app.ECodeInvitationNotFound)
	wantCode(t, "delete twice", s.DeleteTeam(ctx, a.ID, t0), app.ECodeTeamNotFound)
	_, err = s.UpdateTeam(ctx, a.ID, app.TeamUpdate{Name: &name}, t0)
	wantCode(t, "update deleted", err, app.ECodeTeamNotFound)
	// The slug is free again.
	mustTeam(t, s, u, slug, "free", t0.Add(time.Hour))
}

// teamPlanAndCredits: plan and credits change on live teams only.
func teamPlanAndCredits(t *testing.T, s Store) {
	u := mustUser(t, s, "plan@example.com")
	if err := s.SetTeamPlan(ctx, u.PersonalTeamID, "growth", t0); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := s.AddTeamCredits(ctx, u.PersonalTeamID, 250, t0); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.FindTeam(ctx, u.PersonalTeamID); err != nil || got.Plan != "growth" || got.Credits != 500 {
		t.Fatalf("team %+v %v", got, err)
	}
	wantCode(t, "plan of unknown", s.SetTeamPlan(ctx, "team_missing", "free", t0), app.ECodeTeamNotFound)
	wantCode(t, "credits of unknown", s.AddTeamCredits(ctx, "team_missing", 1, t0), app.ECodeTeamNotFound)
	gone := mustTeam(t, s, u, "gone", "free", t0)
	if err := s.DeleteTeam(ctx, gone.ID, t0); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "plan of deleted", s.SetTeamPlan(ctx, gone.ID, "scale", t0), app.ECodeTeamNotFound)
}

// invite creates a pending invitation expiring a day after at.
func invite(t *testing.T, s Store, team *app.Team, by *app.User, email, role string, at time.Time) *app.Invitation {
	t.Helper()
	inv := &app.Invitation{ID: app.NewID("inv"), TeamID: team.ID, Email: email, Role: role, InvitedByID: by.ID, ExpiresAt: at.Add(24 * time.Hour), CreatedAt: at}
	if err := s.CreateInvitation(ctx, inv, at); err != nil {
		t.Fatal(err)
	}
	return inv
}

// mustInvitation finds the team's live invitation to email.
func mustInvitation(t *testing.T, s Store, teamID, email string) *app.Invitation {
	t.Helper()
	invs, _, err := s.FindInvitationsByEmail(ctx, email, t0, page(1, 100))
	if err != nil {
		t.Fatal(err)
	}
	for _, inv := range invs {
		if inv.TeamID == teamID {
			return inv
		}
	}
	t.Fatalf("no invitation of %s to %s", teamID, email)
	return nil
}

// join adds user to team with role through an accepted invitation.
func join(t *testing.T, s Store, team *app.Team, owner, user *app.User, role string, at time.Time) {
	t.Helper()
	inv := invite(t, s, team, owner, user.Email, role, at)
	if _, err := s.AcceptInvitation(ctx, inv.ID, user.ID, at); err != nil {
		t.Fatal(err)
	}
}

// members: the owner lists first, then members by joining; roles change
// and members leave, but never the owner; removing a member deactivates the
// keys they made for the team, not their others.
func members(t *testing.T, s Store) {
	owner := mustUser(t, s, "own@example.com")
	m1 := mustUser(t, s, "m1@example.com")
	m2 := mustUser(t, s, "m2@example.com")
	team := mustTeam(t, s, owner, "crew", "growth", t0.Add(time.Hour))
	join(t, s, team, owner, m2, app.RoleViewer, t0.Add(2*time.Hour))
	join(t, s, team, owner, m1, app.RoleMember, t0.Add(2*time.Hour)) // same instant: after m2
	list, total, err := s.FindMembers(ctx, team.ID, page(1, 10))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range list {
		got = append(got, m.Email+":"+m.Role)
	}
	if want := "[own@example.com:owner m2@example.com:viewer m1@example.com:member]"; total != 3 || fmt.Sprint(got) != want {
		t.Fatalf("members %v (total %d), want %s", got, total, want)
	}
	if !list[1].JoinedAt.Equal(t0.Add(2*time.Hour)) || list[1].Name != m2.Name || list[1].UserID != m2.ID || list[1].TeamID != team.ID {
		t.Fatalf("member fields %+v", list[1])
	}
	if p2, _, _ := s.FindMembers(ctx, team.ID, page(2, 2)); len(p2) != 1 || p2[0].UserID != m1.ID {
		t.Fatalf("page 2: %v", p2)
	}
	m, err := s.UpdateMemberRole(ctx, team.ID, m1.ID, app.RoleAdmin, t0)
	if err != nil || m.Role != app.RoleAdmin || m.Email != m1.Email {
		t.Fatalf("role change: %+v %v", m, err)
	}
	_, err = s.UpdateMemberRole(ctx, team.ID, owner.ID, app.RoleMember, t0)
	wantCode(t, "owner's role", err, app.ECodeMemberNotFound)
	_, err = s.UpdateMemberRole(ctx, team.ID, "usr_missing", app.RoleMember, t0)
	wantCode(t, "role of a non-member", err, app.ECodeMemberNotFound)

	k1 := mustKey(t, s, team.ID, m1.ID, "m1 team key", t0)
	k2 := mustKey(t, s, team.ID, m1.ID, "m1 second key", t0)
	if _, err := s.UpdateAPIKey(ctx, team.ID, k2.ID, app.KeyUpdate{IsActive: ptr(false)}, t0); err != nil {
		t.Fatal(err)
	}
	own := mustKey(t, s, m1.PersonalTeamID, m1.ID, "m1 personal key", t0)
	n, err := s.RemoveMember(ctx, team.ID, m1.ID, t0.Add(3*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("remove: %d keys deactivated, %v; want 1 (the active one)", n, err)
	}
	if k, _ := s.FindAPIKeyByID(ctx, team.ID, k1.ID); k.IsActive || !k.UpdatedAt.Equal(t0.Add(3*time.Hour)) {
		t.Fatalf("team key after removal: %+v", k)
	}
	if k, _ := s.FindAPIKeyByID(ctx, m1.PersonalTeamID, own.ID); !k.IsActive {
		t.Fatal("the member's key of another team was deactivated")
	}
	_, err = s.FindMember(ctx, team.ID, m1.ID)
	wantCode(t, "removed member", err, app.ECodeTeamNotFound)
	_, err = s.RemoveMember(ctx, team.ID, m1.ID, t0)
	wantCode(t, "remove twice", err, app.ECodeMemberNotFound)
	_, err = s.RemoveMember(ctx, team.ID, owner.ID, t0)
	wantCode(t, "remove the owner", err, app.ECodeMemberNotFound)
	if got, _ := s.FindTeam(ctx, team.ID); got.MemberCount != 2 {
		t.Fatalf("member count %d, want 2", got.MemberCount)
	}
}

// membershipIsScopedByTeam: team B learns nothing of team A's members,
// and changes addressed to the wrong team change nothing.
func membershipIsScopedByTeam(t *testing.T, s Store) {
	ua := mustUser(t, s, "a@example.com")
	ub := mustUser(t, s, "b@example.com")
	ta := mustTeam(t, s, ua, "ta", "growth", t0)
	tb := mustTeam(t, s, ub, "tb", "growth", t0)
	join(t, s, ta, ua, mustUser(t, s, "c@example.com"), app.RoleMember, t0)
	_, err := s.FindMember(ctx, tb.ID, ua.ID)
	wantCode(t, "A's owner in B", err, app.ECodeTeamNotFound)
	if list, total, err := s.FindMembers(ctx, tb.ID, page(1, 10)); err != nil || total != 1 || list[0].UserID != ub.ID {
		t.Fatalf("B's members: %v %d %v", list, total, err)
	}
	c, _ := s.FindUserByEmail(ctx, "c@example.com")
	_, err = s.UpdateMemberRole(ctx, tb.ID, c.ID, app.RoleAdmin, t0)
	wantCode(t, "role through B", err, app.ECodeMemberNotFound)
	_, err = s.RemoveMember(ctx, tb.ID, c.ID, t0)
	wantCode(t, "remove through B", err, app.ECodeMemberNotFound)
	if m, err := s.FindMember(ctx, ta.ID, c.ID); err != nil || m.Role != app.RoleMember {
		t.Fatalf("A's member after B's attempts: %+v %v", m, err)
	}
}

// invitations: one live pending invitation per address and team; members
// cannot be invited; an expired invitation is replaced; lists show live
// pending invitations newest first, with team name and inviter.
func invitations(t *testing.T, s Store) {
	owner := mustUser(t, s, "own@example.com")
	team := mustTeam(t, s, owner, "inv", "growth", t0)
	other := mustTeam(t, s, owner, "inv2", "growth", t0)
	first := invite(t, s, team, owner, "x@example.com", app.RoleMember, t0)
	err := s.CreateInvitation(ctx, &app.Invitation{ID: app.NewID("inv"), TeamID: team.ID, Email: "x@example.com", Role: app.RoleAdmin,
		InvitedByID: owner.ID, ExpiresAt: t0.Add(time.Hour), CreatedAt: t0}, t0)
	wantCode(t, "invited twice", err, app.ECodeAlreadyInvited)
	err = s.CreateInvitation(ctx, &app.Invitation{ID: app.NewID("inv"), TeamID: team.ID, Email: owner.Email, Role: app.RoleAdmin,
		InvitedByID: owner.ID, ExpiresAt: t0.Add(time.Hour), CreatedAt: t0}, t0)
	wantCode(t, "a member invited", err, app.ECodeAlreadyMember)
	invite(t, s, team, owner, "y@example.com", app.RoleViewer, t0.Add(time.Minute))
	invite(t, s, team, owner, "z@example.com", app.RoleViewer, t0.Add(time.Minute)) // same instant: listed before y
	invite(t, s, other, owner, "x@example.com", app.RoleAdmin, t0.Add(2*time.Minute))

	got, err := s.FindInvitation(ctx, first.ID, t0)
	if err != nil || got.Status != app.InvitePending || got.TeamName != "Team inv" || got.InvitedBy == nil || got.InvitedBy.Email != owner.Email ||
		got.InvitedBy.Name != owner.Name || got.InvitedBy.ID != owner.ID || !got.ExpiresAt.Equal(t0.Add(24*time.Hour)) || !got.CreatedAt.Equal(t0) || got.Role != app.RoleMember {
		t.Fatalf("invitation %+v %v", got, err)
	}
	emails := func(invs []*app.Invitation) string {
		var out []string
		for _, inv := range invs {
			out = append(out, inv.Email+"@"+inv.TeamID[:4])
		}
		return fmt.Sprint(out)
	}
	list, total, err := s.FindTeamInvitations(ctx, team.ID, t0.Add(time.Hour), page(1, 10))
	if want := "[z@example.com@team y@example.com@team x@example.com@team]"; err != nil || total != 3 || emails(list) != want {
		t.Fatalf("team invitations %s (total %d) %v, want %s", emails(list), total, err, want)
	}
	list, total, _ = s.FindTeamInvitations(ctx, team.ID, t0.Add(time.Hour), page(2, 2))
	if total != 3 || len(list) != 1 || list[0].ID != first.ID {
		t.Fatalf("page 2: %s", emails(list))
	}
	byEmail, total, err := s.FindInvitationsByEmail(ctx, "x@example.com", t0, page(1, 10))
	if err != nil || total != 2 || byEmail[0].TeamID != other.ID || byEmail[1].TeamID != team.ID {
		t.Fatalf("by email: %v %d %v", byEmail, total, err)
	}
	// Past its expiry an invitation reads as expired, lists leave it out,
	// and a new one may be sent.
	late := t0.Add(25 * time.Hour)
	if got, _ := s.FindInvitation(ctx, first.ID, late); got.Status != app.InviteExpired {
		t.Fatalf("expired invitation reads %s", got.Status)
	}
	if _, total, _ := s.FindTeamInvitations(ctx, team.ID, late, page(1, 10)); total != 0 {
		t.Fatalf("expired invitations listed: %d", total)
	}
	again := invite(t, s, team, owner, "x@example.com", app.RoleMember, late)
	if got, _ := s.FindInvitation(ctx, first.ID, t0); got.Status != app.InviteExpired {
		t.Fatalf("the replaced invitation is %s, want expired", got.Status)
	}
	// Closing: pending only.
	if err := s.CloseInvitation(ctx, again.ID, app.InviteRejected, late); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.FindInvitation(ctx, again.ID, late); got.Status != app.InviteRejected {
		t.Fatalf("closed invitation is %s", got.Status)
	}
	wantCode(t, "close twice", s.CloseInvitation(ctx, again.ID, app.InviteCancelled, late), app.ECodeInvitationNotFound)
	_, err = s.FindInvitation(ctx, "inv_missing", t0)
	wantCode(t, "unknown invitation", err, app.ECodeInvitationNotFound)
}

// acceptInvitation: accepting makes a member with the invited role, once;
// expired, closed and already-member cases are refused with their codes.
func acceptInvitation(t *testing.T, s Store) {
	owner := mustUser(t, s, "own@example.com")
	guest := mustUser(t, s, "guest@example.com")
	team := mustTeam(t, s, owner, "acc", "growth", t0)
	inv := invite(t, s, team, owner, guest.Email, app.RoleAdmin, t0)
	_, err := s.AcceptInvitation(ctx, inv.ID, guest.ID, t0.Add(24*time.Hour))
	wantCode(t, "accept at expiry", err, app.ECodeInvitationExpired)
	joined := t0.Add(time.Hour)
	m, err := s.AcceptInvitation(ctx, inv.ID, guest.ID, joined)
	if err != nil || m.Role != app.RoleAdmin || m.UserID != guest.ID || m.TeamID != team.ID || !m.JoinedAt.Equal(joined) {
		t.Fatalf("accept: %+v %v", m, err)
	}
	if got, _ := s.FindInvitation(ctx, inv.ID, joined); got.Status != app.InviteAccepted {
		t.Fatalf("accepted invitation is %s", got.Status)
	}
	_, err = s.AcceptInvitation(ctx, inv.ID, guest.ID, joined)
	wantCode(t, "accept twice", err, app.ECodeInvitationNotFound)
	// Invited again while a member is refused at creation; an invitation
	// to another address accepted by a member is refused at acceptance.
	other := invite(t, s, team, owner, "someone@example.com", app.RoleMember, joined)
	_, err = s.AcceptInvitation(ctx, other.ID, guest.ID, joined)
	wantCode(t, "accepted by a member", err, app.ECodeAlreadyMember)
	// Of concurrent acceptances by different users, one wins.
	shared := invite(t, s, team, owner, "shared@example.com", app.RoleMember, joined)
	var users []*app.User
	for i := range 6 {
		users = append(users, mustUser(t, s, fmt.Sprintf("c%d@example.com", i)))
	}
	ok := 0
	for _, err := range concurrently(len(users), func(i int) error { _, err := s.AcceptInvitation(ctx, shared.ID, users[i].ID, joined); return err }) {
		switch app.ErrorCode(err) {
		case "":
			ok++
		case app.ECodeInvitationNotFound:
		default:
			t.Fatalf("concurrent accept: %v", err)
		}
	}
	if ok != 1 {
		t.Fatalf("one invitation accepted %d times", ok)
	}
}

// planCountsCheckedOnInsert: the store counts a team's keys and members in
// the inserting transaction, so concurrent inserts never go past the plan.
func planCountsCheckedOnInsert(t *testing.T, s Store) {
	u := mustUser(t, s, "plan@example.com") // personal team on free: 1 key
	check := func(what string, errs []error, wantOK int, resource string, limit int) {
		t.Helper()
		ok := 0
		var refusal *app.Error
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case app.ErrorCode(err) == app.ECodePlanLimit:
				refusal = err.(*app.Error)
			default:
				t.Fatalf("%s: %v", what, err)
			}
		}
		if ok != wantOK || refusal == nil || refusal.Info["limit"] != limit || refusal.Info["current"] != limit || refusal.Info["resource"] != resource {
			t.Fatalf("%s: %d inserted, refusal %+v; want %d", what, ok, refusal, wantOK)
		}
	}
	check("keys", concurrently(10, func(i int) error {
		return s.CreateAPIKey(ctx, &app.APIKey{ID: app.NewID("key"), TeamID: u.PersonalTeamID, Name: "k", KeyType: "secret", KeyPrefix: "svc_sk_...",
			Hash: app.NewID("hash"), Permissions: []string{}, IsActive: true, CreatedBy: u.ID, CreatedAt: t0, UpdatedAt: t0})
	}), 1, app.ResourceAPIKeys, 1)

	// A starter team (3 members) with its owner: two more seats, pending
	// invitations included.
	starter := mustTeam(t, s, u, "starter", "starter", t0)
	check("invitations", concurrently(10, func(i int) error {
		return s.CreateInvitation(ctx, &app.Invitation{ID: app.NewID("inv"), TeamID: starter.ID, Email: fmt.Sprintf("g%d@example.com", i),
			Role: app.RoleMember, ExpiresAt: t0.Add(time.Hour), CreatedAt: t0, InvitedByID: u.ID}, t0)
	}), 2, app.ResourceMembers, 3)
	// Accepting counts members only: after a move to free (1 member) the
	// pending invitations can no longer be accepted.
	if err := s.SetTeamPlan(ctx, starter.ID, "free", t0); err != nil {
		t.Fatal(err)
	}
	invs, _, err := s.FindTeamInvitations(ctx, starter.ID, t0, page(1, 10))
	if err != nil || len(invs) != 2 {
		t.Fatalf("pending invitations: %v %v", invs, err)
	}
	guest := mustUser(t, s, invs[0].Email)
	_, err = s.AcceptInvitation(ctx, invs[0].ID, guest.ID, t0)
	wantCode(t, "accept beyond the plan", err, app.ECodePlanLimit)
}

func ptr[T any](v T) *T { return &v }
