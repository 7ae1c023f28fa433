package app

import (
	"context"
	"fmt"
)

// Template actions, for access checks.
type templateAction int

const (
	actRead       templateAction = iota // read, list versions, generate
	actEdit                             // change, publish, restore
	actDelete                           // delete
	actCopy                             // export, duplicate: the owning team only
	actShare                            // share, change or revoke shares
	actViewShares                       // list a template's shares
)

// access finds a template the caller's team can see and checks that the
// caller may act on it. Another team's template that is not shared with the
// caller's team is not found; a shared one answers 403 for what the share
// does not allow.
func (s *TemplateService) access(ctx context.Context, ref TemplateRef, act templateAction) (*Principal, *Template, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := p.Require(PermTemplatesRead); err != nil {
		return nil, nil, err
	}
	if act == actEdit || act == actDelete {
		if err := p.Require(PermTemplatesWrite); err != nil {
			return nil, nil, err
		}
	}
	if ref.Type != "" && ref.Type != TypeAttachment && ref.Type != TypeEmail {
		return nil, nil, Errorf(ECodeTemplateType, "invalid template type %q in the path (attachment or email)", ref.Type).WithInfo("type", ref.Type)
	}
	t, err := s.Templates.FindVisibleTemplate(ctx, p.TeamID, ref.ID)
	if err != nil {
		return nil, nil, templateNotFound(err, ref.ID)
	}
	if ref.Type != "" && t.TemplateType != ref.Type {
		return nil, nil, Errorf(ECodeTemplateType, "template %s is an %s template, not %s", t.ID, t.TemplateType, ref.Type).
			WithInfo("type", ref.Type, "templateType", t.TemplateType)
	}
	own := t.TeamID == p.TeamID
	deny := func(code, msg string) (*Principal, *Template, error) {
		return nil, nil, &Error{Code: code, Message: msg}
	}
	switch act {
	case actEdit:
		if p.Kind == AuthJWT && !CanWrite(p.Role) {
			return deny(ECodeTemplateNoEdit, "viewers cannot change templates")
		}
		if !own && t.Permission != ShareEdit {
			return deny(ECodeTemplateNoEdit, "this template is shared with your team for viewing only")
		}
	case actDelete:
		if !own {
			return deny(ECodeTemplateNoDelete, "only the team that owns a template can delete it")
		}
		if p.Kind == AuthJWT && !CanAdmin(p.Role) {
			return deny(ECodeTemplateNoDelete, "only team owners and admins can delete templates")
		}
	case actCopy:
		if !own {
			return deny(ECodeTemplateNoAccess, "a shared template can be used but not copied or exported; ask its owner")
		}
	case actShare:
		if !own {
			return deny(ECodeShareForbidden, "only the team that owns a template can share it")
		}
		if !CanAdmin(p.Role) {
			return deny(ECodeShareForbidden, "only team owners and admins can share templates")
		}
		if !p.Verified {
			return deny(ECodeEmailNotVerified, "verify your email address before sharing templates")
		}
	case actViewShares:
		if !own {
			return deny(ECodeTemplateNoView, "only the team that owns a template can see whom it is shared with")
		}
	}
	return p, t, nil
}

// templateNotFound repeats the reference the caller sent in a not-found
// error, so that a typo or a template of another team shows.
func templateNotFound(err error, ref string) error {
	if ErrorCode(err) != ECodeTemplateNotFound {
		return err
	}
	shown := ref
	if r := []rune(ref); len(r) > 100 {
		shown = string(r[:100]) + "…"
	}
	return (&Error{Code: ECodeTemplateNotFound, Message: fmt.Sprintf(
		"template %q not found: no template of this team, or shared with it, has this id, shortId or slug", shown)}).
		WithInfo("id", ref)
}
