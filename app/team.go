package app

import (
	"context"
	"time"
)

// Team roles, from most to least powerful.
const (
	RoleOwner  = "owner"
	RoleAdmin  = "admin"
	RoleMember = "member"
	RoleViewer = "viewer"
)

// Team owns templates, jobs, keys and webhooks; every tenant query is scoped by it.
type Team struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Slug        string    `json:"slug"`
	IsPersonal  bool      `json:"isPersonal"`
	Plan        string    `json:"plan"`
	Credits     int64     `json:"credits"`
	OwnerID     string    `json:"-"`
	MemberCount int       `json:"memberCount"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"-"`
}

// Member is a user's membership of a team.
type Member struct {
	TeamID   string    `json:"-"`
	UserID   string    `json:"id"`
	Email    string    `json:"email"`
	Name     string    `json:"name"`
	Role     string    `json:"role"`
	JoinedAt time.Time `json:"joinedAt"`
}

// TeamStore keeps teams and memberships.
type TeamStore interface {
	// FindTeam finds a live team by id or slug.
	FindTeam(ctx context.Context, idOrSlug string) (*Team, error)
	FindMember(ctx context.Context, teamID, userID string) (*Member, error)
	SetTeamPlan(ctx context.Context, teamID, plan string, now time.Time) error
	AddTeamCredits(ctx context.Context, teamID string, n int64, now time.Time) error
}

// CanWrite reports whether a role may create and change team resources.
func CanWrite(role string) bool { return role == RoleOwner || role == RoleAdmin || role == RoleMember }

// CanAdmin reports whether a role may manage team settings and keys.
func CanAdmin(role string) bool { return role == RoleOwner || role == RoleAdmin }

// TeamAdmin applies operator commands (folio admin) to teams.
type TeamAdmin struct {
	Teams TeamStore
	Now   func() time.Time
}

// SetPlan changes the plan of the team with the given id or slug.
func (a *TeamAdmin) SetPlan(ctx context.Context, ref, plan string) (*Team, error) {
	if _, err := FindPlan(plan); err != nil {
		return nil, err
	}
	t, err := a.Teams.FindTeam(ctx, ref)
	if err != nil {
		return nil, err
	}
	if err := a.Teams.SetTeamPlan(ctx, t.ID, plan, a.Now().UTC()); err != nil {
		return nil, err
	}
	return a.Teams.FindTeam(ctx, t.ID)
}

// AddCredits adds document credits to the team with the given id or slug.
func (a *TeamAdmin) AddCredits(ctx context.Context, ref string, n int64) (*Team, error) {
	if n <= 0 {
		return nil, ErrInvalid("documents", "documents must be a positive number")
	}
	t, err := a.Teams.FindTeam(ctx, ref)
	if err != nil {
		return nil, err
	}
	if err := a.Teams.AddTeamCredits(ctx, t.ID, n, a.Now().UTC()); err != nil {
		return nil, err
	}
	return a.Teams.FindTeam(ctx, t.ID)
}
