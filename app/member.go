package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// InvitationTTL is how long an invitation can be accepted.
const InvitationTTL = 7 * 24 * time.Hour

// Invitation states. An invitation past its expiresAt reads as expired.
const (
	InvitePending   = "pending"
	InviteAccepted  = "accepted"
	InviteRejected  = "rejected"
	InviteCancelled = "cancelled"
	InviteExpired   = "expired"
)

// Invitation asks someone, by email, to join a team with a role.
type Invitation struct {
	ID        string        `json:"id"`
	TeamID    string        `json:"teamId"`
	TeamName  string        `json:"teamName,omitempty"`
	Email     string        `json:"email"`
	Role      string        `json:"role"`
	Status    string        `json:"status"`
	InvitedBy *ActivityUser `json:"invitedBy,omitempty"`
	ExpiresAt time.Time     `json:"expiresAt"`
	CreatedAt time.Time     `json:"createdAt"`

	InvitedByID string `json:"-"`
}

// InvitationStore keeps invitations. Reads report a pending invitation past
// its expiry with status expired.
type InvitationStore interface {
	// CreateInvitation stores a pending invitation: ERR_TEAM_007 when the
	// address already belongs to a member, ERR_TEAM_008 when a live pending
	// invitation exists (an expired one is closed and replaced).
	CreateInvitation(ctx context.Context, inv *Invitation, now time.Time) error
	FindInvitation(ctx context.Context, id string, now time.Time) (*Invitation, error)
	// FindTeamInvitations lists a team's pending, unexpired invitations.
	FindTeamInvitations(ctx context.Context, teamID string, now time.Time, pg Page) ([]*Invitation, int, error)
	// FindInvitationsByEmail lists the pending, unexpired invitations to an
	// address from live teams, with team name and inviter.
	FindInvitationsByEmail(ctx context.Context, email string, now time.Time, pg Page) ([]*Invitation, int, error)
	// AcceptInvitation adds the user as a member with the invitation's role:
	// ERR_TEAM_009 unless pending, ERR_TEAM_010 when expired.
	AcceptInvitation(ctx context.Context, id, userID string, now time.Time) (*Member, error)
	// CloseInvitation moves a pending invitation to status (rejected or
	// cancelled); ERR_TEAM_009 unless pending.
	CloseInvitation(ctx context.Context, id, status string, now time.Time) error
}

// InviteInput is the body of POST /api/teams/members/invite.
type InviteInput struct {
	Email string  `json:"email"`
	Role  *string `json:"role"`
}

func checkMemberRole(role string) error {
	switch role {
	case RoleAdmin, RoleMember, RoleViewer:
		return nil
	}
	return ErrInvalid("role", "role must be admin, member or viewer")
}

// FindMembers lists the members of the caller's team.
func (s *TeamService) FindMembers(ctx context.Context, pg Page) ([]*Member, int, error) {
	p, err := jwtAdmin(ctx)
	if err != nil {
		return nil, 0, err
	}
	return s.Teams.FindMembers(ctx, p.TeamID, pg)
}

// Invite invites an address to the caller's team and mails it an accept
// link. Owners and admins with a verified email may invite; the plan's member
// limit counts members plus pending invitations.
func (s *TeamService) Invite(ctx context.Context, in InviteInput) (*Invitation, error) {
	p, err := jwtAdmin(ctx)
	if err != nil {
		return nil, err
	}
	if !CanAdmin(p.Role) {
		return nil, (&Error{Code: ECodeForbidden, Message: "only the team owner and admins can invite members"}).
			WithInfo("required", RoleAdmin, "granted", []string{p.Role})
	}
	if err := RequireVerified(p); err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.Email) == "" {
		return nil, ErrRequired("email")
	}
	email, err := NormalizeEmail(in.Email)
	if err != nil {
		return nil, err
	}
	role := RoleMember
	if in.Role != nil {
		role = *in.Role
	}
	if err := checkMemberRole(role); err != nil {
		return nil, err
	}
	team, err := s.Teams.FindTeam(ctx, p.TeamID)
	if err != nil {
		return nil, err
	}
	if team.IsPersonal {
		return nil, &Error{Code: ECodePersonalTeamMembers, Message: "a personal team has no other members; create a team and invite people to it"}
	}
	now := s.Now().UTC()
	inv := &Invitation{
		ID: NewID("inv"), TeamID: team.ID, TeamName: team.Name, Email: email, Role: role, Status: InvitePending,
		ExpiresAt: now.Add(InvitationTTL), CreatedAt: now, InvitedByID: p.UserID,
	}
	if err := s.Invitations.CreateInvitation(ctx, inv, now); err != nil { // checks the plan's member count
		return nil, err
	}
	inviter, err := s.Users.FindUserByID(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	base := strings.TrimRight(s.Config.BaseURL, "/")
	body := fmt.Sprintf("Hello,\r\n\r\n%s (%s) invited you to join the team %q on Folio as %s.\r\n\r\n"+
		"Accept the invitation here:\r\n\r\n%s/invitations/%s/accept\r\n\r\n"+
		"or, logged in as %s, with POST %s/api/teams/invitations/%s/accept (reject: .../reject).\r\n"+
		"No account yet? Sign up with this address first.\r\n\r\nThe invitation expires on %s.\r\n",
		inviter.Name, inviter.Email, team.Name, role, base, inv.ID, email, base, inv.ID, inv.ExpiresAt.Format(time.RFC1123))
	if err := s.Mailer.Send(ctx, Mail{To: email, Subject: inviter.Name + " invited you to " + team.Name + " on Folio", Body: body}); err != nil {
		// Without its mail the invitation is useless; withdraw it so a retry is not ERR_TEAM_008.
		if cerr := s.Invitations.CloseInvitation(context.WithoutCancel(ctx), inv.ID, InviteCancelled, now); cerr != nil {
			err = errors.Join(err, cerr)
		}
		return nil, fmt.Errorf("send invitation mail: %w", err)
	}
	s.Activity.RecordActivity(ctx, Activity{TeamID: team.ID, Type: ActivityInvitationSent, User: ActivityUser{ID: p.UserID},
		Target: &ActivityUser{Email: email}, Details: map[string]any{"role": role, "invitationId": inv.ID}})
	return inv, nil
}

// FindTeamInvitations lists the caller's team's pending invitations (owners and admins).
func (s *TeamService) FindTeamInvitations(ctx context.Context, pg Page) ([]*Invitation, int, error) {
	p, err := jwtAdmin(ctx)
	if err != nil {
		return nil, 0, err
	}
	if !CanAdmin(p.Role) {
		return nil, 0, (&Error{Code: ECodeForbidden, Message: "only the team owner and admins can see invitations"}).
			WithInfo("required", RoleAdmin, "granted", []string{p.Role})
	}
	return s.Invitations.FindTeamInvitations(ctx, p.TeamID, s.Now().UTC(), pg)
}

// invitee returns the caller when they are verified; invitations are matched
// by address, so an unverified address could belong to someone else.
func (s *TeamService) invitee(ctx context.Context) (*User, error) {
	p, err := jwtAdmin(ctx)
	if err != nil {
		return nil, err
	}
	u, err := s.Users.FindUserByID(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	if !u.EmailVerified {
		return nil, errNotVerified("verify your email address to see and answer invitations")
	}
	return u, nil
}

// MyInvitations lists the pending invitations addressed to the caller.
func (s *TeamService) MyInvitations(ctx context.Context, pg Page) ([]*Invitation, int, error) {
	u, err := s.invitee(ctx)
	if err != nil {
		return nil, 0, err
	}
	return s.Invitations.FindInvitationsByEmail(ctx, u.Email, s.Now().UTC(), pg)
}

// myInvitation finds an invitation addressed to the caller; anyone else's is
// not found.
func (s *TeamService) myInvitation(ctx context.Context, id string) (*User, *Invitation, error) {
	u, err := s.invitee(ctx)
	if err != nil {
		return nil, nil, err
	}
	inv, err := s.Invitations.FindInvitation(ctx, id, s.Now().UTC())
	if err != nil {
		return nil, nil, err
	}
	if inv.Email != u.Email {
		return nil, nil, ErrNotFound(ECodeInvitationNotFound, "invitation")
	}
	return u, inv, nil
}

// Normalize makes a pending invitation past its expiry read as expired
// (the stores keep it pending until someone answers or the team revokes it).
func (inv *Invitation) Normalize(now time.Time) {
	if inv.Status == InvitePending && !now.Before(inv.ExpiresAt) {
		inv.Status = InviteExpired
	}
}

// AcceptInvitation makes the caller a member of the inviting team.
func (s *TeamService) AcceptInvitation(ctx context.Context, id string) (*Member, error) {
	u, inv, err := s.myInvitation(ctx, id)
	if err != nil {
		return nil, err
	}
	switch inv.Status {
	case InviteExpired:
		return nil, (&Error{Code: ECodeInvitationExpired, Message: "the invitation expired; ask for a new one"}).WithInfo("expiresAt", inv.ExpiresAt)
	case InvitePending:
	default:
		return nil, ErrNotFound(ECodeInvitationNotFound, "invitation")
	}
	team, err := s.Teams.FindTeam(ctx, inv.TeamID)
	if err != nil {
		return nil, err
	}
	m, err := s.Invitations.AcceptInvitation(ctx, inv.ID, u.ID, s.Now().UTC()) // checks the plan's member count
	if err != nil {
		return nil, err
	}
	s.Activity.RecordActivity(ctx, Activity{TeamID: team.ID, Type: ActivityMemberJoined, User: ActivityUser{ID: u.ID},
		Details: map[string]any{"role": m.Role}})
	return m, nil
}

// RejectInvitation declines an invitation addressed to the caller.
func (s *TeamService) RejectInvitation(ctx context.Context, id string) error {
	_, inv, err := s.myInvitation(ctx, id)
	if err != nil {
		return err
	}
	return s.Invitations.CloseInvitation(ctx, inv.ID, InviteRejected, s.Now().UTC())
}

// CancelInvitation withdraws a pending invitation of the caller's team (owner only).
func (s *TeamService) CancelInvitation(ctx context.Context, id string) error {
	p, err := jwtAdmin(ctx)
	if err != nil {
		return err
	}
	if p.Role != RoleOwner {
		return errNotOwner("cancel invitations")
	}
	now := s.Now().UTC()
	inv, err := s.Invitations.FindInvitation(ctx, id, now)
	if err != nil {
		return err
	}
	if inv.TeamID != p.TeamID {
		return ErrNotFound(ECodeInvitationNotFound, "invitation")
	}
	return s.Invitations.CloseInvitation(ctx, inv.ID, InviteCancelled, now)
}

// RoleInput is the body of PATCH /api/teams/members/:id/role.
type RoleInput struct {
	Role string `json:"role"`
}

// ChangeRole sets a member's role (owner only; admin, member or viewer).
func (s *TeamService) ChangeRole(ctx context.Context, userID string, in RoleInput) (*Member, error) {
	p, err := jwtAdmin(ctx)
	if err != nil {
		return nil, err
	}
	if p.Role != RoleOwner {
		return nil, errNotOwner("change roles")
	}
	if in.Role == "" {
		return nil, ErrRequired("role")
	}
	if err := checkMemberRole(in.Role); err != nil {
		return nil, err
	}
	if userID == p.UserID {
		return nil, ErrInvalid("id", "the owner's role cannot be changed")
	}
	before, err := s.Teams.FindMember(ctx, p.TeamID, userID)
	if ErrorCode(err) == ECodeTeamNotFound {
		return nil, ErrNotFound(ECodeMemberNotFound, "team member")
	} else if err != nil {
		return nil, err
	}
	m, err := s.Teams.UpdateMemberRole(ctx, p.TeamID, userID, in.Role, s.Now().UTC())
	if err != nil {
		return nil, err
	}
	if before.Role != m.Role {
		s.Activity.RecordActivity(ctx, Activity{TeamID: p.TeamID, Type: ActivityRoleChanged, User: ActivityUser{ID: p.UserID},
			Target: &ActivityUser{ID: userID}, Details: map[string]any{"from": before.Role, "to": m.Role}})
	}
	return m, nil
}

// RemoveMember removes a member (owner only; not the owner). The member loses
// access at once and the API keys they created for the team are deactivated.
func (s *TeamService) RemoveMember(ctx context.Context, userID string) error {
	p, err := jwtAdmin(ctx)
	if err != nil {
		return err
	}
	if p.Role != RoleOwner {
		return errNotOwner("remove members")
	}
	if userID == p.UserID {
		return &Error{Code: ECodeCannotRemoveSelf, Message: "you cannot remove yourself; the owner can delete the team instead"}
	}
	n, err := s.Teams.RemoveMember(ctx, p.TeamID, userID, s.Now().UTC())
	if err != nil {
		return err
	}
	s.Activity.RecordActivity(ctx, Activity{TeamID: p.TeamID, Type: ActivityMemberRemoved, User: ActivityUser{ID: p.UserID},
		Target: &ActivityUser{ID: userID}, Details: map[string]any{"apiKeysDeactivated": n}})
	return nil
}

// LeaveTeam removes the caller from their current team (not the owner).
func (s *TeamService) LeaveTeam(ctx context.Context) error {
	p, err := jwtAdmin(ctx)
	if err != nil {
		return err
	}
	if p.Role == RoleOwner {
		return &Error{Code: ECodeCannotRemoveSelf, Message: "the owner cannot leave the team; delete it instead"}
	}
	n, err := s.Teams.RemoveMember(ctx, p.TeamID, p.UserID, s.Now().UTC())
	if err != nil {
		return err
	}
	s.Activity.RecordActivity(ctx, Activity{TeamID: p.TeamID, Type: ActivityMemberLeft, User: ActivityUser{ID: p.UserID},
		Details: map[string]any{"apiKeysDeactivated": n}})
	return nil
}

// FindActivities returns the caller's team's activity feed, newest first.
func (s *TeamService) FindActivities(ctx context.Context, pg Page) ([]*Activity, ListInfo, error) {
	p, err := jwtAdmin(ctx)
	if err != nil {
		return nil, ListInfo{}, err
	}
	if s.Activity == nil {
		return []*Activity{}, ListInfo{}, nil
	}
	return s.Activity.Store.FindActivities(ctx, p.TeamID, pg)
}
