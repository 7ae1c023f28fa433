package dashboard

import (
	"errors"
	"slices"

	"folio/app"
)

// teamPage serves GET /app/team: the current team, its members and
// invitations, the invitations addressed to me, and my teams to switch to.
// Each list pages on its own parameter: ?page= (members), ?invitations=,
// ?mine= and ?teams= (the switcher, 100 teams a page).
func (d *Dashboard) teamPage(c *call) error {
	ctx := c.r.Context()
	mpg := pageOf(c, 20)
	members, mtotal, err := d.Teams.FindMembers(ctx, mpg)
	if err != nil {
		return err
	}
	tpg := pageOf(c, app.MaxLimit, "teams")
	teams, ttotal, err := d.Teams.FindTeams(ctx, tpg)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(teams, func(t *app.Team) bool { return t.ID == c.Team.ID }) {
		// The switcher shows the current team on every page of teams.
		cur := *c.Team
		cur.Role = c.P.Role
		teams = append([]*app.Team{&cur}, teams...)
	}
	data := map[string]any{"Members": members, "MembersPager": sectionPager(c, mpg, mtotal, "page", "members"),
		"Teams": teams, "TeamsPager": sectionPager(c, tpg, ttotal, "teams", "switch-team"),
		"IsOwner": c.P.Role == app.RoleOwner, "IsAdmin": app.CanAdmin(c.P.Role), "Roles": []string{app.RoleAdmin, app.RoleMember, app.RoleViewer}}
	if app.CanAdmin(c.P.Role) && !c.Team.IsPersonal {
		ipg := pageOf(c, 20, "invitations")
		invs, itotal, err := d.Teams.FindTeamInvitations(ctx, ipg)
		if err != nil {
			return err
		}
		data["Invitations"], data["InvitationsPager"] = invs, sectionPager(c, ipg, itotal, "invitations", "invitations")
	}
	minepg := pageOf(c, 20, "mine")
	mine, minetotal, err := d.Teams.MyInvitations(ctx, minepg)
	if e := (*app.Error)(nil); errors.As(err, &e) {
		data["MineError"] = errorText(e)
	} else if err != nil {
		return err
	}
	data["Mine"], data["MinePager"] = mine, sectionPager(c, minepg, minetotal, "mine", "my-invitations")
	acts, _, err := d.Teams.FindActivities(ctx, app.Page{Page: 1, Limit: 10})
	if err != nil {
		return err
	}
	data["Activity"] = acts
	return d.render(c, "team", "Team", data)
}

// sectionPager is the pager of one of several lists on a page: it pages on
// its own query parameter and its links come back to the list's anchor.
func sectionPager(c *call, pg app.Page, total int, param, anchor string) *pager {
	p := newPager(c, pg, total, param)
	if p.Prev != "" {
		p.Prev += "#" + anchor
	}
	if p.Next != "" {
		p.Next += "#" + anchor
	}
	return p
}

// teamSwitch serves POST /app/team/switch: the session acts on another team.
func (d *Dashboard) teamSwitch(c *call) error {
	t, err := d.Sessions.SwitchTeam(c.r.Context(), c.Session, c.form("team"))
	msg := ""
	if err == nil {
		msg = "You are now working in “" + t.Name + "”."
	}
	return c.done(err, backTo(c, "/app/team"), msg)
}

// teamCreate serves POST /app/teams: a new team, which becomes the current one.
func (d *Dashboard) teamCreate(c *call) error {
	name := c.form("name")
	t, err := d.Teams.CreateTeam(c.r.Context(), app.TeamInput{Name: &name})
	if err != nil {
		return c.done(err, "/app/team", "")
	}
	if _, err := d.Sessions.SwitchTeam(c.r.Context(), c.Session, t.ID); err != nil {
		return err
	}
	return c.redirect("/app/team", "ok", "Team “"+t.Name+"” created; you are working in it now.")
}

// teamRename serves POST /app/team/rename (owner).
func (d *Dashboard) teamRename(c *call) error {
	name := c.form("name")
	_, err := d.Teams.UpdateTeam(c.r.Context(), c.P.TeamID, app.TeamInput{Name: &name})
	return c.done(err, "/app/team", "Team renamed.")
}

// teamDelete serves POST /app/team/delete (owner; not the personal team).
func (d *Dashboard) teamDelete(c *call) error {
	err := d.Teams.DeleteTeam(c.r.Context(), c.P.TeamID)
	return c.done(err, "/app/team", "Team deleted. You are back in your personal team.")
}

// teamLeave serves POST /app/team/leave.
func (d *Dashboard) teamLeave(c *call) error {
	err := d.Teams.LeaveTeam(c.r.Context())
	return c.done(err, "/app/team", "You left the team. You are back in your personal team.")
}

// teamInvite serves POST /app/team/invite: mails an invitation.
func (d *Dashboard) teamInvite(c *call) error {
	role := c.form("role")
	inv, err := d.Teams.Invite(c.r.Context(), app.InviteInput{Email: c.form("email"), Role: &role})
	msg := ""
	if err == nil {
		msg = "Invitation sent to " + inv.Email + "."
	}
	return c.done(err, "/app/team", msg)
}

// memberRole serves POST /app/team/members/{id}/role (owner).
func (d *Dashboard) memberRole(c *call) error {
	m, err := d.Teams.ChangeRole(c.r.Context(), c.r.PathValue("id"), app.RoleInput{Role: c.form("role")})
	msg := ""
	if err == nil {
		msg = m.Name + " is now " + m.Role + "."
	}
	return c.done(err, "/app/team", msg)
}

// memberRemove serves POST /app/team/members/{id}/remove (owner).
func (d *Dashboard) memberRemove(c *call) error {
	err := d.Teams.RemoveMember(c.r.Context(), c.r.PathValue("id"))
	return c.done(err, "/app/team", "Member removed; their API keys for this team are deactivated.")
}

// invitationCancel serves POST /app/team/invitations/{id}/cancel (owner).
func (d *Dashboard) invitationCancel(c *call) error {
	err := d.Teams.CancelInvitation(c.r.Context(), c.r.PathValue("id"))
	return c.done(err, "/app/team", "Invitation cancelled.")
}

// invitationPage serves GET /invitations/{id}/accept, the link of the
// invitation mail: it shows the invitation with Accept and Decline buttons
// (accepting is a POST, never a side effect of opening a link).
func (d *Dashboard) invitationPage(c *call) error {
	id := c.r.PathValue("id")
	var inv *app.Invitation
	var err error
	for n := 1; inv == nil; n++ {
		var mine []*app.Invitation
		var total int
		mine, total, err = d.Teams.MyInvitations(c.r.Context(), app.Page{Page: n, Limit: app.MaxLimit})
		if err != nil {
			break
		}
		for _, i := range mine {
			if i.ID == id {
				inv = i
			}
		}
		if n*app.MaxLimit >= total {
			break
		}
	}
	data := map[string]any{"Inv": inv, "ID": id}
	var e *app.Error
	switch {
	case app.ErrorCode(err) == app.ECodeEmailNotVerified:
		// A newcomer who signed up from the mail's link: the verification
		// link brings them back here.
		data["Unverified"] = true
	case errors.As(err, &e):
		data["error"] = errorText(e)
	case err != nil:
		return err
	case inv == nil:
		data["error"] = "This invitation is not open for " + c.User.Email + ": it may have been accepted, declined, cancelled or sent to another address."
	}
	return d.render(c, "invitation", "Invitation", data)
}

// invitationAccept serves POST /app/invitations/{id}/accept: joins the team
// and switches to it.
func (d *Dashboard) invitationAccept(c *call) error {
	m, err := d.Teams.AcceptInvitation(c.r.Context(), c.r.PathValue("id"))
	if err != nil {
		return c.done(err, backTo(c, "/app/team"), "")
	}
	t, err := d.Sessions.SwitchTeam(c.r.Context(), c.Session, m.TeamID)
	if err != nil {
		return err
	}
	return c.redirect("/app/team", "ok", "Welcome to “"+t.Name+"”: you joined as "+m.Role+".")
}

// invitationReject serves POST /app/invitations/{id}/reject.
func (d *Dashboard) invitationReject(c *call) error {
	err := d.Teams.RejectInvitation(c.r.Context(), c.r.PathValue("id"))
	return c.done(err, "/app/team", "Invitation declined.")
}
