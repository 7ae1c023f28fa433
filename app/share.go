package app

import (
	"context"
	"time"
)

// Share permissions. A view share lets the target team read the template and
// generate from it; an edit share also lets it change and publish it. Neither
// lets it delete, share, copy or export the template, or see the owner's jobs.
const (
	ShareView = "view"
	ShareEdit = "edit"
)

// TemplateShare grants another team access to a template.
type TemplateShare struct {
	ID             string    `json:"id"`
	TemplateID     string    `json:"templateId"`
	OwnerTeamID    string    `json:"-"`
	TargetTeamID   string    `json:"targetTeamId"`
	TargetTeamName string    `json:"targetTeamName"`
	Permission     string    `json:"permission"`
	CreatedBy      string    `json:"-"`
	CreatedAt      time.Time `json:"createdAt"`
	UpdatedAt      time.Time `json:"updatedAt"`
}

// SharedTemplate is an item of GET /api/templates/shared.
type SharedTemplate struct {
	ID            string    `json:"id"`
	ShortID       string    `json:"shortId"`
	Name          string    `json:"name"`
	TemplateType  string    `json:"templateType"`
	OwnerTeamID   string    `json:"ownerTeamId"`
	OwnerTeamName string    `json:"ownerTeamName"`
	Permission    string    `json:"permission"`
	SharedAt      time.Time `json:"sharedAt"`
}

// TemplateShareStore keeps shares.
type TemplateShareStore interface {
	// CreateShare inserts a share (ERR_SHARE_002 when the team already has one).
	CreateShare(ctx context.Context, sh *TemplateShare) error
	// FindShares lists a template's shares with live teams, oldest first.
	FindShares(ctx context.Context, templateID string) ([]*TemplateShare, error)
	// FindShare finds a share of a live template by id (ERR_SHARE_001).
	FindShare(ctx context.Context, id string) (*TemplateShare, error)
	UpdateShare(ctx context.Context, id, permission string, now time.Time) (*TemplateShare, error)
	DeleteShare(ctx context.Context, id string) error
	// FindSharedWithTeam lists the live templates of live teams shared with
	// teamID, newest share first.
	FindSharedWithTeam(ctx context.Context, teamID string) ([]*SharedTemplate, error)
}

// ShareInput is the body of POST /api/templates/:type/:id/share and PUT
// /api/templates/shares/:shareId.
type ShareInput struct {
	TargetTeamID *string `json:"targetTeamId"`
	Permission   *string `json:"permission"`
}

func checkPermission(p *string, def string) (string, error) {
	if p == nil || *p == "" {
		if def == "" {
			return "", ErrRequired("permission")
		}
		return def, nil
	}
	if *p != ShareView && *p != ShareEdit {
		return "", ErrInvalid("permission", "permission must be view or edit")
	}
	return *p, nil
}

// ShareTemplate shares one of the caller's team's templates with another
// team (owners and admins with a verified email).
func (s *TemplateService) ShareTemplate(ctx context.Context, ref TemplateRef, in ShareInput) (*TemplateShare, error) {
	p, t, err := s.access(ctx, ref, actShare)
	if err != nil {
		return nil, err
	}
	if in.TargetTeamID == nil || *in.TargetTeamID == "" {
		return nil, ErrRequired("targetTeamId")
	}
	perm, err := checkPermission(in.Permission, ShareView)
	if err != nil {
		return nil, err
	}
	target, err := s.Teams.FindTeam(ctx, *in.TargetTeamID)
	if ErrorCode(err) == ECodeTeamNotFound {
		return nil, Errorf(ECodeShareTeamNotFound, "team %s not found", *in.TargetTeamID).WithInfo("field", "targetTeamId")
	} else if err != nil {
		return nil, err
	}
	if target.ID == t.TeamID {
		return nil, Errorf(ECodeShareOwnTeam, "a template cannot be shared with the team that owns it").WithInfo("field", "targetTeamId")
	}
	now := s.Now().UTC()
	sh := &TemplateShare{ID: NewID("shr"), TemplateID: t.ID, OwnerTeamID: t.TeamID, TargetTeamID: target.ID, TargetTeamName: target.Name,
		Permission: perm, CreatedBy: p.UserID, CreatedAt: now, UpdatedAt: now}
	if err := s.Templates.CreateShare(ctx, sh); err != nil {
		return nil, err
	}
	return sh, nil
}

// FindShares lists the teams a template of the caller's team is shared with.
func (s *TemplateService) FindShares(ctx context.Context, ref TemplateRef) ([]*TemplateShare, error) {
	_, t, err := s.access(ctx, ref, actViewShares)
	if err != nil {
		return nil, err
	}
	return s.Templates.FindShares(ctx, t.ID)
}

// FindSharedTemplates lists the templates other teams share with the caller's team.
func (s *TemplateService) FindSharedTemplates(ctx context.Context) ([]*SharedTemplate, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.Require(PermTemplatesRead); err != nil {
		return nil, err
	}
	return s.Templates.FindSharedWithTeam(ctx, p.TeamID)
}

// share finds a share the caller may manage: one of its team's templates'
// shares, as an owner or admin with a verified email. The target team learns
// that it may not (ERR_SHARE_005); anyone else that it does not exist.
func (s *TemplateService) share(ctx context.Context, id string) (*TemplateShare, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	sh, err := s.Templates.FindShare(ctx, id)
	if err != nil {
		return nil, err
	}
	switch {
	case sh.OwnerTeamID != p.TeamID && sh.TargetTeamID == p.TeamID:
		return nil, &Error{Code: ECodeShareForbidden, Message: "only the team that owns the template can change or revoke its shares"}
	case sh.OwnerTeamID != p.TeamID:
		return nil, ErrNotFound(ECodeShareNotFound, "share")
	case !CanAdmin(p.Role):
		return nil, &Error{Code: ECodeShareForbidden, Message: "only team owners and admins can change or revoke shares"}
	case !p.Verified:
		return nil, &Error{Code: ECodeEmailNotVerified, Message: "verify your email address before sharing templates"}
	}
	return sh, nil
}

// UpdateShare changes a share's permission.
func (s *TemplateService) UpdateShare(ctx context.Context, id string, in ShareInput) (*TemplateShare, error) {
	sh, err := s.share(ctx, id)
	if err != nil {
		return nil, err
	}
	perm, err := checkPermission(in.Permission, "")
	if err != nil {
		return nil, err
	}
	return s.Templates.UpdateShare(ctx, sh.ID, perm, s.Now().UTC())
}

// DeleteShare revokes a share: the target team loses access at once (its
// queued jobs of the template fail with ERR_TMPL_001).
func (s *TemplateService) DeleteShare(ctx context.Context, id string) error {
	sh, err := s.share(ctx, id)
	if err != nil {
		return err
	}
	return s.Templates.DeleteShare(ctx, sh.ID)
}

// ErrAlreadyShared refuses a second share of a template with one team.
func ErrAlreadyShared() error {
	return (&Error{Code: ECodeAlreadyShared, Message: "the template is already shared with this team; change the share's permission instead"}).
		WithInfo("field", "targetTeamId")
}
