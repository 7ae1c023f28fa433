package app

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"folio/render"
)

// TemplateUpdate is the body of PUT /api/templates/:id and PATCH
// /api/v1/templates/:id; absent fields keep their value, folderId null
// takes the template out of its folder.
type TemplateUpdate struct {
	Name                *string                      `json:"name"`
	Slug                *string                      `json:"slug"`
	Description         *string                      `json:"description"`
	TemplateType        *string                      `json:"templateType"`
	OutputFormats       []string                     `json:"outputFormats"`
	Schema              json.RawMessage              `json:"schema"`
	Variables           *[]render.Variable           `json:"variables"`
	Constants           *map[string]any              `json:"constants"`
	CalculatedVariables *[]render.CalculatedVariable `json:"calculatedVariables"`
	SampleData          *map[string]any              `json:"sampleData"`
	FolderID            json.RawMessage              `json:"folderId"`
}

// UpdateTemplate changes a template's working copy (the draft). Published
// versions stay as they were until the next publish.
func (s *TemplateService) UpdateTemplate(ctx context.Context, ref TemplateRef, in TemplateUpdate) (*Template, error) {
	p, t, err := s.access(ctx, ref, actEdit)
	if err != nil {
		return nil, err
	}
	// An edit share lets another team change what the template renders, not
	// how its owner files and addresses it: the slug is what the owner's
	// integrations generate by, the folder is the owner's.
	if t.TeamID != p.TeamID && (in.Slug != nil || len(in.FolderID) > 0) {
		field := "slug"
		if in.Slug == nil {
			field = "folderId"
		}
		return nil, Errorf(ECodeTemplateNoEdit, "only the team that owns a template can change its %s", field).WithInfo("field", field)
	}
	if in.TemplateType != nil && *in.TemplateType != t.TemplateType {
		return nil, Errorf(ECodeTemplateType, "the template type cannot change (it is %s)", t.TemplateType).WithInfo("field", "templateType")
	}
	if in.Name != nil {
		if t.Name, err = checkTemplateName(*in.Name); err != nil {
			return nil, err
		}
	}
	if in.Slug != nil {
		if t.Slug, err = templateSlug(in.Slug, t.Name); err != nil {
			return nil, err
		}
	}
	if in.Description != nil {
		t.Description = *in.Description
	}
	if in.OutputFormats != nil {
		if t.OutputFormats, err = checkFormats(in.OutputFormats); err != nil {
			return nil, err
		}
	}
	if len(in.Schema) > 0 && string(in.Schema) != "null" {
		t.Schema = in.Schema
	}
	if in.Variables != nil {
		t.Variables = *in.Variables
	}
	if in.Constants != nil {
		t.Constants = *in.Constants
	}
	if in.CalculatedVariables != nil {
		t.CalculatedVariables = *in.CalculatedVariables
	}
	if in.SampleData != nil {
		t.SampleData = *in.SampleData
	}
	if len(in.FolderID) > 0 {
		var folder *string
		if err := json.Unmarshal(in.FolderID, &folder); err != nil {
			return nil, ErrInvalid("folderId", "folderId must be a string or null")
		}
		if folder != nil && *folder != "" {
			if err := s.checkFolder(ctx, t.TeamID, *folder); err != nil {
				return nil, err
			}
		} else {
			folder = nil
		}
		t.FolderID = folder
	}
	t.normalize()
	if err := checkSampleData(t.SampleData); err != nil {
		return nil, err
	}
	ct, err := s.compile(ctx, t.TeamID, t.Definition())
	if err != nil {
		return nil, schemaError(err)
	}
	t.Warnings = append(warningsOf(ct), s.assetWarnings(ctx, t)...)
	t.UpdatedAt = s.Now().UTC()
	if err := s.Templates.UpdateTemplate(ctx, t); err != nil {
		return nil, err
	}
	t.HasDraft = t.PublishedVersion == 0 || t.ContentHash() != t.PublishedHash
	s.record(ctx, p, t, ActivityTemplateUpdated, nil)
	return t, nil
}

// DeleteTemplate soft-deletes one of the team's templates: it leaves every
// read and list, its shares end, and its jobs stay readable.
func (s *TemplateService) DeleteTemplate(ctx context.Context, ref TemplateRef) error {
	p, t, err := s.access(ctx, ref, actDelete)
	if err != nil {
		return err
	}
	gone, err := s.Templates.DeleteTemplates(ctx, t.TeamID, []string{t.ID}, p.UserID, s.Now().UTC())
	if err != nil {
		return err
	}
	if len(gone) == 0 {
		return ErrNotFound(ECodeTemplateNotFound, "template")
	}
	s.record(ctx, p, t, ActivityTemplateDeleted, nil)
	return nil
}

// DuplicateTemplate copies one of the team's templates (its working copy,
// folder and categories; not its versions or shares) under the name with
// " (Copy)" appended, with a new slug and shortId.
func (s *TemplateService) DuplicateTemplate(ctx context.Context, ref TemplateRef) (*Template, error) {
	p, t, err := s.access(ctx, ref, actCopy)
	if err != nil {
		return nil, err
	}
	if _, err := s.creator(ctx); err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	c := *t
	c.ID, c.ShortID, c.CreatedBy, c.CreatedAt, c.UpdatedAt = NewID("tpl"), "etpl_"+RandomString(12), p.UserID, now, now
	c.IsPublished, c.PublishedAt, c.PublishedVersion, c.PublishedHash, c.Permission = false, nil, 0, "", ""
	err = s.createNamed(ctx, p, &c, t.Name, " (Copy)")
	return &c, err
}

// createNamed creates t named base+suffix, then base+suffix+" 2", " 3"...
// while the name is taken. The slug follows the name.
func (s *TemplateService) createNamed(ctx context.Context, p *Principal, t *Template, base, suffix string) error {
	for i := 1; ; i++ {
		tail := suffix
		if i > 1 {
			tail = strings.TrimSuffix(suffix, ")") + " " + strconv.Itoa(i) + ")"
		}
		t.Name = truncateRunes(base, MaxTemplateName-utf8.RuneCountInString(tail)) + tail
		t.Slug, _ = templateSlug(nil, t.Name)
		err := s.create(ctx, p, t)
		if ErrorCode(err) != ECodeTemplateExists || i == 50 {
			return err
		}
	}
}

func truncateRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}
