package web

import (
	"net/http"

	"folio/app"
)

// handleCreateTeam serves POST /api/teams.
func (s *Server) handleCreateTeam(w http.ResponseWriter, r *http.Request) error {
	var in app.TeamInput
	if err := decode(r, &in); err != nil {
		return err
	}
	t, err := s.Teams.CreateTeam(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

// handleListTeams serves GET /api/teams.
func (s *Server) handleListTeams(w http.ResponseWriter, r *http.Request) error {
	pg, err := page(r)
	if err != nil {
		return err
	}
	teams, total, err := s.Teams.FindTeams(r.Context(), pg)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list{Data: teams, Meta: app.NewMeta(pg, total)})
	return nil
}

// handleGetTeam serves GET /api/teams/{id}.
func (s *Server) handleGetTeam(w http.ResponseWriter, r *http.Request) error {
	t, err := s.Teams.FindTeam(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

// handleUpdateTeam serves PUT /api/teams/{id}.
func (s *Server) handleUpdateTeam(w http.ResponseWriter, r *http.Request) error {
	var in app.TeamInput
	if err := decode(r, &in); err != nil {
		return err
	}
	t, err := s.Teams.UpdateTeam(r.Context(), r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

// handleDeleteTeam serves DELETE /api/teams/{id}.
func (s *Server) handleDeleteTeam(w http.ResponseWriter, r *http.Request) error {
	if err := s.Teams.DeleteTeam(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, message{"team deleted"})
	return nil
}

// handleListMembers serves GET /api/teams/members.
func (s *Server) handleListMembers(w http.ResponseWriter, r *http.Request) error {
	pg, err := page(r)
	if err != nil {
		return err
	}
	members, total, err := s.Teams.FindMembers(r.Context(), pg)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list{Data: members, Meta: app.NewMeta(pg, total)})
	return nil
}

// handleInvite serves POST /api/teams/members/invite.
func (s *Server) handleInvite(w http.ResponseWriter, r *http.Request) error {
	var in app.InviteInput
	if err := decode(r, &in); err != nil {
		return err
	}
	inv, err := s.Teams.Invite(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": inv.ID, "email": inv.Email, "role": inv.Role, "status": inv.Status,
		"teamId": inv.TeamID, "expiresAt": inv.ExpiresAt})
	return nil
}

// handleRemoveMember serves DELETE /api/teams/members/{id}.
func (s *Server) handleRemoveMember(w http.ResponseWriter, r *http.Request) error {
	if err := s.Teams.RemoveMember(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, message{"member removed"})
	return nil
}

// handleChangeRole serves PATCH /api/teams/members/{id}/role.
func (s *Server) handleChangeRole(w http.ResponseWriter, r *http.Request) error {
	var in app.RoleInput
	if err := decode(r, &in); err != nil {
		return err
	}
	m, err := s.Teams.ChangeRole(r.Context(), r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, m)
	return nil
}

// handleCancelInvitation serves DELETE /api/teams/members/{id}/invitation.
func (s *Server) handleCancelInvitation(w http.ResponseWriter, r *http.Request) error {
	if err := s.Teams.CancelInvitation(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, message{"invitation cancelled"})
	return nil
}

// handleTeamInvitations serves GET /api/teams/invitations.
func (s *Server) handleTeamInvitations(w http.ResponseWriter, r *http.Request) error {
	pg, err := page(r)
	if err != nil {
		return err
	}
	invs, total, err := s.Teams.FindTeamInvitations(r.Context(), pg)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list{Data: invs, Meta: app.NewMeta(pg, total)})
	return nil
}

// handleMyInvitations serves GET /api/teams/invitations/my.
func (s *Server) handleMyInvitations(w http.ResponseWriter, r *http.Request) error {
	pg, err := page(r)
	if err != nil {
		return err
	}
	invs, total, err := s.Teams.MyInvitations(r.Context(), pg)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list{Data: invs, Meta: app.NewMeta(pg, total)})
	return nil
}

// handleAcceptInvitation serves POST /api/teams/invitations/{id}/accept.
func (s *Server) handleAcceptInvitation(w http.ResponseWriter, r *http.Request) error {
	m, err := s.Teams.AcceptInvitation(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"message": "invitation accepted", "teamId": m.TeamID, "role": m.Role})
	return nil
}

// handleRejectInvitation serves POST /api/teams/invitations/{id}/reject.
func (s *Server) handleRejectInvitation(w http.ResponseWriter, r *http.Request) error {
	if err := s.Teams.RejectInvitation(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, message{"invitation rejected"})
	return nil
}

// handleLeaveTeam serves POST /api/teams/leave.
func (s *Server) handleLeaveTeam(w http.ResponseWriter, r *http.Request) error {
	if err := s.Teams.LeaveTeam(r.Context()); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, message{"you left the team"})
	return nil
}

// handleActivity serves GET /api/teams/activity.
func (s *Server) handleActivity(w http.ResponseWriter, r *http.Request) error {
	pg, err := page(r)
	if err != nil {
		return err
	}
	items, info, err := s.Teams.FindActivities(r.Context(), pg)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list{Data: items, Meta: info.Meta(pg)})
	return nil
}
