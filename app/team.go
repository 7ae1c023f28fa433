package app

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
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
	Role        string    `json:"role,omitempty"` // the caller's role, in lists and gets
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

// TeamUpdate holds the optional fields of PUT /api/teams/:id.
type TeamUpdate struct {
	Name *string
	Slug *string
}

// TeamStore keeps teams and memberships.
type TeamStore interface {
	// FindTeam finds a live team by id or slug.
	FindTeam(ctx context.Context, idOrSlug string) (*Team, error)
	FindMember(ctx context.Context, teamID, userID string) (*Member, error)
	SetTeamPlan(ctx context.Context, teamID, plan string, now time.Time) error
	AddTeamCredits(ctx context.Context, teamID string, n int64, now time.Time) error
	// CreateTeam inserts a team and its owner's membership (ERR_TEAM_002 on a taken slug).
	CreateTeam(ctx context.Context, t *Team) error
	// FindTeamsForUser lists the live teams a user belongs to, with Role set.
	FindTeamsForUser(ctx context.Context, userID string, pg Page) ([]*Team, int, error)
	UpdateTeam(ctx context.Context, id string, upd TeamUpdate, now time.Time) (*Team, error)
	// DeleteTeam soft-deletes a team, frees its slug and closes its pending invitations.
	DeleteTeam(ctx context.Context, id string, now time.Time) error
	FindMembers(ctx context.Context, teamID string, pg Page) ([]*Member, int, error)
	// UpdateMemberRole changes a role; ERR_TEAM_011 when the user is not a member.
	UpdateMemberRole(ctx context.Context, teamID, userID, role string, now time.Time) (*Member, error)
	// RemoveMember deletes a membership and deactivates the API keys the user
	// created for the team, returning how many; ERR_TEAM_011 when not a member.
	RemoveMember(ctx context.Context, teamID, userID string, now time.Time) (int, error)
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
	t, err := a.find(ctx, ref)
	if err != nil {
		return nil, err
	}
	if err := a.Teams.SetTeamPlan(ctx, t.ID, plan, a.Now().UTC()); err != nil {
		return nil, err
	}
	return a.Teams.FindTeam(ctx, t.ID)
}

// find returns the team an operator named, with an error that repeats the
// name.
func (a *TeamAdmin) find(ctx context.Context, ref string) (*Team, error) {
	if strings.TrimSpace(ref) == "" {
		return nil, ErrRequired("team (its id or slug)")
	}
	t, err := a.Teams.FindTeam(ctx, ref)
	if ErrorCode(err) == ECodeTeamNotFound {
		return nil, Errorf(ECodeTeamNotFound, "no team with id or slug %q", ref)
	}
	return t, err
}

// AddCredits adds document credits to the team with the given id or slug.
func (a *TeamAdmin) AddCredits(ctx context.Context, ref string, n int64) (*Team, error) {
	if n <= 0 {
		return nil, ErrInvalid("documents", "documents must be a positive number")
	}
	t, err := a.find(ctx, ref)
	if err != nil {
		return nil, err
	}
	if err := a.Teams.AddTeamCredits(ctx, t.ID, n, a.Now().UTC()); err != nil {
		return nil, err
	}
	return a.Teams.FindTeam(ctx, t.ID)
}

// Team error codes (SPEC.md, Errors). ERR_TEAM_013 is Folio's.
const (
	ECodeTeamSlugTaken       = "ERR_TEAM_002"
	ECodeNotTeamOwner        = "ERR_TEAM_003"
	ECodePersonalTeamDelete  = "ERR_TEAM_004"
	ECodePersonalTeamSlug    = "ERR_TEAM_005"
	ECodeAlreadyMember       = "ERR_TEAM_007"
	ECodeAlreadyInvited      = "ERR_TEAM_008"
	ECodeInvitationNotFound  = "ERR_TEAM_009"
	ECodeInvitationExpired   = "ERR_TEAM_010"
	ECodeMemberNotFound      = "ERR_TEAM_011"
	ECodeCannotRemoveSelf    = "ERR_TEAM_012"
	ECodePersonalTeamMembers = "ERR_TEAM_013"
)

// TeamConfig holds what the team service needs from the operator.
type TeamConfig struct {
	BaseURL     string
	DefaultPlan string
}

// TeamService manages teams, members, invitations and the activity feed.
// Every call acts on the caller's team (X-Team-Id or the personal team),
// except team create/list/get/update/delete, which name the team.
type TeamService struct {
	Teams       TeamStore
	Invitations InvitationStore
	Users       UserStore
	Activity    *ActivityLog
	Mailer      Mailer
	Config      TeamConfig
	Now         func() time.Time
}

// TeamInput is the body of POST /api/teams and PUT /api/teams/:id.
type TeamInput struct {
	Name *string `json:"name"`
	Slug *string `json:"slug"`
}

var teamSlugRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

func checkTeamName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", ErrRequired("name")
	}
	if utf8.RuneCountInString(name) > 100 {
		return "", ErrInvalid("name", "name must be at most 100 characters")
	}
	return name, nil
}

// reservedTeamSlugs are the static path segments under /api/teams/: a team
// with such a slug could not be addressed by it (GET /api/teams/members is
// the member list, not the team).
var reservedTeamSlugs = []string{"members", "activity", "invitations", "leave"}

func checkTeamSlug(slug string) (string, error) {
	slug = strings.TrimSpace(slug)
	if len(slug) > 100 || !teamSlugRE.MatchString(slug) {
		return "", ErrInvalid("slug", "slug must be 1 to 100 lower-case letters, digits and single hyphens")
	}
	if strings.HasPrefix(slug, "personal-") || strings.HasPrefix(slug, "deleted-") {
		return "", ErrInvalid("slug", "slugs starting with personal- or deleted- are reserved")
	}
	if slices.Contains(reservedTeamSlugs, slug) {
		return "", ErrInvalid("slug", "slug %q is reserved", slug)
	}
	return slug, nil
}

// CreateTeam creates a team on the default plan; the caller becomes its owner.
func (s *TeamService) CreateTeam(ctx context.Context, in TeamInput) (*Team, error) {
	p, err := jwtAdmin(ctx)
	if err != nil {
		return nil, err
	}
	if in.Name == nil {
		return nil, ErrRequired("name")
	}
	name, err := checkTeamName(*in.Name)
	if err != nil {
		return nil, err
	}
	plan := s.Config.DefaultPlan
	if plan == "" {
		plan = "free"
	}
	now := s.Now().UTC()
	t := &Team{ID: NewID("team"), Name: name, Plan: plan, OwnerID: p.UserID, MemberCount: 1, Role: RoleOwner, CreatedAt: now, UpdatedAt: now}
	if in.Slug != nil {
		if t.Slug, err = checkTeamSlug(*in.Slug); err != nil {
			return nil, err
		}
		if err := s.Teams.CreateTeam(ctx, t); err != nil {
			return nil, err
		}
		return t, nil
	}
	// A slug made from the name gets a random suffix when it is taken.
	base := strings.TrimPrefix(strings.TrimPrefix(Slugify(name), "personal-"), "deleted-")
	if base == "template" && !strings.Contains(strings.ToLower(name), "template") {
		base = "team"
	}
	if slices.Contains(reservedTeamSlugs, base) {
		base += "-team"
	}
	t.Slug = base
	for i := 0; ; i++ {
		err = s.Teams.CreateTeam(ctx, t)
		if err == nil {
			return t, nil
		}
		if ErrorCode(err) != ECodeTeamSlugTaken || i == 4 {
			return nil, err
		}
		t.Slug = base + "-" + strings.ToLower(RandomString(5))
	}
}

// FindTeams lists the caller's teams, the personal team included.
func (s *TeamService) FindTeams(ctx context.Context, pg Page) ([]*Team, int, error) {
	p, err := jwtAdmin(ctx)
	if err != nil {
		return nil, 0, err
	}
	return s.Teams.FindTeamsForUser(ctx, p.UserID, pg)
}

// teamOf returns a team (by id or slug) the caller belongs to; any other team
// is not found, so non-members learn nothing about it.
func (s *TeamService) teamOf(ctx context.Context, ref string) (*Principal, *Team, error) {
	p, err := jwtAdmin(ctx)
	if err != nil {
		return nil, nil, err
	}
	t, err := s.Teams.FindTeam(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	m, err := s.Teams.FindMember(ctx, t.ID, p.UserID)
	if err != nil {
		return nil, nil, err
	}
	t.Role = m.Role
	return p, t, nil
}

func errNotOwner(action string) error {
	return &Error{Code: ECodeNotTeamOwner, Message: "only the team owner can " + action}
}

// FindTeam returns one of the caller's teams.
func (s *TeamService) FindTeam(ctx context.Context, ref string) (*Team, error) {
	_, t, err := s.teamOf(ctx, ref)
	return t, err
}

// UpdateTeam renames a team or changes its slug (owner only; a personal
// team's slug never changes).
func (s *TeamService) UpdateTeam(ctx context.Context, ref string, in TeamInput) (*Team, error) {
	_, t, err := s.teamOf(ctx, ref)
	if err != nil {
		return nil, err
	}
	if t.Role != RoleOwner {
		return nil, errNotOwner("change the team")
	}
	var upd TeamUpdate
	if in.Name != nil {
		name, err := checkTeamName(*in.Name)
		if err != nil {
			return nil, err
		}
		upd.Name = &name
	}
	if in.Slug != nil && strings.TrimSpace(*in.Slug) != t.Slug {
		if t.IsPersonal {
			return nil, &Error{Code: ECodePersonalTeamSlug, Message: "a personal team's slug cannot change"}
		}
		slug, err := checkTeamSlug(*in.Slug)
		if err != nil {
			return nil, err
		}
		upd.Slug = &slug
	}
	u, err := s.Teams.UpdateTeam(ctx, t.ID, upd, s.Now().UTC())
	if err != nil {
		return nil, err
	}
	u.Role = t.Role
	return u, nil
}

// DeleteTeam soft-deletes a team (owner only; not the personal team). Its
// members, API keys and invitations stop working at once.
func (s *TeamService) DeleteTeam(ctx context.Context, ref string) error {
	_, t, err := s.teamOf(ctx, ref)
	if err != nil {
		return err
	}
	if t.Role != RoleOwner {
		return errNotOwner("delete the team")
	}
	if t.IsPersonal {
		return &Error{Code: ECodePersonalTeamDelete, Message: "a personal team cannot be deleted directly; it goes with the account"}
	}
	return s.Teams.DeleteTeam(ctx, t.ID, s.Now().UTC())
}

// ErrTeamSlugTaken is ERR_TEAM_002: another live team has the slug.
func ErrTeamSlugTaken() error {
	return (&Error{Code: ECodeTeamSlugTaken, Message: "team slug already exists"}).WithInfo("field", "slug")
}
