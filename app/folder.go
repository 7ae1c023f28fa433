package app

import (
	"context"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Kinds of template group.
const (
	GroupFolder   = "folder"
	GroupCategory = "category"
)

// maxBulkTemplates bounds the ids of one bulk template request.
const maxBulkTemplates = 100

// TemplateGroup is a folder or a category: a named record of a team that
// templates are filed under. A template sits in at most one folder and in
// any number of categories.
type TemplateGroup struct {
	ID            string    `json:"id"`
	TeamID        string    `json:"-"`
	Kind          string    `json:"-"`
	Name          string    `json:"name"`
	TemplateCount int       `json:"templateCount"`
	CreatedAt     time.Time `json:"createdAt"`
	UpdatedAt     time.Time `json:"updatedAt"`
}

// TemplateGroupStore keeps folders and categories and files templates in them.
type TemplateGroupStore interface {
	// CreateGroup inserts a folder or category (ERR_VALID_003 on a taken name).
	CreateGroup(ctx context.Context, g *TemplateGroup) error
	// FindGroup finds a team's folder or category (ERR_FOLDER_001, ERR_CATEGORY_001).
	FindGroup(ctx context.Context, teamID, kind, id string) (*TemplateGroup, error)
	// FindGroups lists a team's folders or categories by name.
	FindGroups(ctx context.Context, teamID, kind string, pg Page) ([]*TemplateGroup, int, error)
	RenameGroup(ctx context.Context, teamID, kind, id, name string, now time.Time) (*TemplateGroup, error)
	// DeleteGroup removes a folder (its templates leave it) or a category
	// (its templates lose it).
	DeleteGroup(ctx context.Context, teamID, kind, id string) error
	// SetTemplateCategories adds categoryIDs to the team's live templates
	// among templateIDs, or replaces theirs with them; it returns the ids it applied to.
	SetTemplateCategories(ctx context.Context, teamID string, templateIDs, categoryIDs []string, replace bool, now time.Time) ([]string, error)
}

// GroupInput is the body of folder and category create and rename.
type GroupInput struct {
	Name *string `json:"name"`
}

func groupNotFound(kind string) *Error {
	if kind == GroupCategory {
		return ErrNotFound(ECodeCategoryNotFound, "category")
	}
	return ErrNotFound(ECodeFolderNotFound, "folder")
}

func checkGroupName(in GroupInput) (string, error) {
	if in.Name == nil || strings.TrimSpace(*in.Name) == "" {
		return "", ErrRequired("name")
	}
	name := strings.TrimSpace(*in.Name)
	if utf8.RuneCountInString(name) > MaxTemplateName {
		return "", ErrInvalid("name", "name must be at most %d characters", MaxTemplateName)
	}
	return name, nil
}

// groupWriter checks the caller may change folders and categories: members
// create and rename, owners and admins also delete.
func groupWriter(ctx context.Context, remove bool) (*Principal, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if remove && !CanAdmin(p.Role) {
		return nil, &Error{Code: ECodeTemplateNoDelete, Message: "only team owners and admins can delete folders and categories"}
	}
	if !CanWrite(p.Role) {
		return nil, &Error{Code: ECodeTemplateNoEdit, Message: "viewers cannot change folders and categories"}
	}
	return p, nil
}

// CreateGroup creates a folder or category in the caller's team.
func (s *TemplateService) CreateGroup(ctx context.Context, kind string, in GroupInput) (*TemplateGroup, error) {
	p, err := groupWriter(ctx, false)
	if err != nil {
		return nil, err
	}
	name, err := checkGroupName(in)
	if err != nil {
		return nil, err
	}
	prefix := "fld"
	if kind == GroupCategory {
		prefix = "cat"
	}
	now := s.Now().UTC()
	g := &TemplateGroup{ID: NewID(prefix), TeamID: p.TeamID, Kind: kind, Name: name, CreatedAt: now, UpdatedAt: now}
	if err := s.Templates.CreateGroup(ctx, g); err != nil {
		return nil, err
	}
	return g, nil
}

// FindGroups lists the caller's team's folders or categories.
func (s *TemplateService) FindGroups(ctx context.Context, kind string, pg Page) ([]*TemplateGroup, int, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, 0, err
	}
	if err := p.Require(PermTemplatesRead); err != nil {
		return nil, 0, err
	}
	return s.Templates.FindGroups(ctx, p.TeamID, kind, pg)
}

// RenameGroup renames one of the caller's team's folders or categories.
func (s *TemplateService) RenameGroup(ctx context.Context, kind, id string, in GroupInput) (*TemplateGroup, error) {
	p, err := groupWriter(ctx, false)
	if err != nil {
		return nil, err
	}
	name, err := checkGroupName(in)
	if err != nil {
		return nil, err
	}
	return s.Templates.RenameGroup(ctx, p.TeamID, kind, id, name, s.Now().UTC())
}

// DeleteGroup deletes a folder or category; its templates stay.
func (s *TemplateService) DeleteGroup(ctx context.Context, kind, id string) error {
	p, err := groupWriter(ctx, true)
	if err != nil {
		return err
	}
	return s.Templates.DeleteGroup(ctx, p.TeamID, kind, id)
}

func (s *TemplateService) checkFolder(ctx context.Context, teamID, id string) error {
	if _, err := s.Templates.FindGroup(ctx, teamID, GroupFolder, id); err != nil {
		if e, ok := err.(*Error); ok {
			return e.WithInfo("field", "folderId")
		}
		return err
	}
	return nil
}

// BulkError names an id a bulk request skipped, and why.
type BulkError struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// BulkDeleteResult is the answer of POST /api/templates/bulk-delete.
type BulkDeleteResult struct {
	Deleted int         `json:"deleted"`
	Skipped int         `json:"skipped"`
	Errors  []BulkError `json:"errors"`
}

func checkBulkIDs(field string, ids []string) error {
	if ids == nil {
		return ErrRequired(field)
	}
	if len(ids) == 0 || len(ids) > maxBulkTemplates {
		return ErrInvalid(field, "%s must hold 1 to %d ids", field, maxBulkTemplates)
	}
	return nil
}

// BulkDeleteTemplates soft-deletes the caller's team's templates among ids
// (id, shortId or slug). Ids that are not the team's templates are skipped
// and reported; a role that may not delete is refused as a whole.
func (s *TemplateService) BulkDeleteTemplates(ctx context.Context, ids []string) (*BulkDeleteResult, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if !CanAdmin(p.Role) {
		return nil, &Error{Code: ECodeTemplateNoDelete, Message: "only team owners and admins can delete templates"}
	}
	if err := checkBulkIDs("ids", ids); err != nil {
		return nil, err
	}
	res := &BulkDeleteResult{Errors: []BulkError{}}
	found := map[string]*Template{}
	var del []string
	for _, ref := range uniq(ids) {
		t, err := s.Templates.FindTemplate(ctx, p.TeamID, ref)
		if ErrorCode(err) == ECodeTemplateNotFound {
			res.Errors = append(res.Errors, BulkError{ID: ref, Reason: "template not found"})
			continue
		} else if err != nil {
			return nil, err
		}
		if found[t.ID] == nil {
			found[t.ID] = t
			del = append(del, t.ID)
		}
	}
	gone, err := s.Templates.DeleteTemplates(ctx, p.TeamID, del, p.UserID, s.Now().UTC())
	if err != nil {
		return nil, err
	}
	for _, id := range gone {
		s.record(ctx, p, found[id], ActivityTemplateDeleted, nil)
	}
	for _, id := range del {
		if !slices.Contains(gone, id) {
			res.Errors = append(res.Errors, BulkError{ID: id, Reason: "template not found"})
		}
	}
	res.Deleted, res.Skipped = len(gone), len(res.Errors)
	return res, nil
}

// BulkCategoriesInput is the body of POST /api/templates/bulk-categories.
type BulkCategoriesInput struct {
	TemplateIDs []string `json:"templateIds"`
	CategoryIDs []string `json:"categoryIds"`
	Mode        string   `json:"mode"`
}

// BulkCategoriesResult is the answer of POST /api/templates/bulk-categories.
type BulkCategoriesResult struct {
	Updated int `json:"updated"`
	Skipped int `json:"skipped"`
}

// BulkCategories adds categories to the caller's team's templates (mode
// add, the default) or replaces theirs (replace; an empty list clears them).
// Templates that are not the team's are skipped.
func (s *TemplateService) BulkCategories(ctx context.Context, in BulkCategoriesInput) (*BulkCategoriesResult, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if !CanWrite(p.Role) {
		return nil, &Error{Code: ECodeTemplateNoEdit, Message: "viewers cannot change templates"}
	}
	if err := checkBulkIDs("templateIds", in.TemplateIDs); err != nil {
		return nil, err
	}
	if in.CategoryIDs == nil {
		return nil, ErrRequired("categoryIds")
	}
	if in.Mode == "" {
		in.Mode = "add"
	}
	if in.Mode != "add" && in.Mode != "replace" {
		return nil, ErrInvalid("mode", "mode must be add or replace")
	}
	cats := uniq(in.CategoryIDs)
	if len(cats) > maxBulkTemplates {
		return nil, ErrInvalid("categoryIds", "categoryIds must hold at most %d ids", maxBulkTemplates)
	}
	for _, id := range cats {
		if _, err := s.Templates.FindGroup(ctx, p.TeamID, GroupCategory, id); err != nil {
			if e, ok := err.(*Error); ok {
				return nil, e.WithInfo("field", "categoryIds", "id", id)
			}
			return nil, err
		}
	}
	var ids []string
	refs := uniq(in.TemplateIDs)
	for _, ref := range refs {
		t, err := s.Templates.FindTemplate(ctx, p.TeamID, ref)
		if ErrorCode(err) == ECodeTemplateNotFound {
			continue
		} else if err != nil {
			return nil, err
		}
		if !slices.Contains(ids, t.ID) {
			ids = append(ids, t.ID)
		}
	}
	changed, err := s.Templates.SetTemplateCategories(ctx, p.TeamID, ids, cats, in.Mode == "replace", s.Now().UTC())
	if err != nil {
		return nil, err
	}
	return &BulkCategoriesResult{Updated: len(changed), Skipped: len(refs) - len(changed)}, nil
}

// uniq drops repeated strings, keeping the first of each in order.
func uniq(list []string) []string {
	out := make([]string, 0, len(list))
	for _, v := range list {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// ErrGroupNameTaken refuses a folder or category name the team has.
func ErrGroupNameTaken(kind, name string) error {
	return ErrInvalid("name", "a %s named %q already exists", kind, name)
}
