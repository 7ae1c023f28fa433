package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"folio/render"
)

// MaxReleaseNotes bounds a version's release notes.
const MaxReleaseNotes = 10000

// VersionInfo is a published version as listed: GET /api/templates/:id/versions.
type VersionInfo struct {
	ID           string    `json:"id"`
	Version      int       `json:"version"`
	ReleaseNotes string    `json:"releaseNotes"`
	RestoredFrom *int      `json:"restoredFrom,omitempty"`
	PublishedAt  time.Time `json:"publishedAt"`
	PublishedBy  string    `json:"publishedBy"`
}

// TemplateVersion is a published version: an immutable copy of the
// template's content when it was published (or restored).
type TemplateVersion struct {
	VersionInfo
	TemplateID          string                      `json:"templateId"`
	TeamID              string                      `json:"-"`
	Name                string                      `json:"name"`
	Description         string                      `json:"description"`
	TemplateType        string                      `json:"templateType"`
	OutputFormats       []string                    `json:"outputFormats"`
	Schema              json.RawMessage             `json:"schema"`
	Variables           []render.Variable           `json:"variables"`
	Constants           map[string]any              `json:"constants"`
	CalculatedVariables []render.CalculatedVariable `json:"calculatedVariables"`
	SampleData          map[string]any              `json:"sampleData"`
	ContentHash         string                      `json:"-"`
	// State says what this object holds: "published" or, for the draft
	// read through /versions/draft, "draft".
	State string `json:"state"`
}

// TemplateVersionStore keeps published versions.
type TemplateVersionStore interface {
	// PublishTemplate copies a live template's working copy into the next
	// version, in one transaction. check sees the template as stored in
	// that transaction and may refuse (ERR_TMPL_020). It fills v's number,
	// content and hash and returns the template as updated.
	PublishTemplate(ctx context.Context, templateID string, v *TemplateVersion, check func(*Template) error) (*Template, error)
	// RestoreTemplateVersion makes version `from` the working copy and
	// publishes it as the next version (filling v), in one transaction.
	RestoreTemplateVersion(ctx context.Context, templateID string, from int, v *TemplateVersion) (*Template, error)
	// FindTemplateVersions lists a template's versions, newest first.
	FindTemplateVersions(ctx context.Context, templateID string, pg Page) ([]*TemplateVersion, int, error)
	// FindTemplateVersion finds a template's version by number (ERR_TMPL_013).
	FindTemplateVersion(ctx context.Context, templateID string, version int) (*TemplateVersion, error)
	// FindTemplateVersionByID finds a version by its id alone (ERR_TMPL_013).
	FindTemplateVersionByID(ctx context.Context, id string) (*TemplateVersion, error)
}

// PublishInput is the optional body of publish and restore.
type PublishInput struct {
	ReleaseNotes string `json:"releaseNotes"`
}

func (in PublishInput) check() error {
	if utf8.RuneCountInString(in.ReleaseNotes) > MaxReleaseNotes {
		return ErrInvalid("releaseNotes", "releaseNotes must be at most %d characters", MaxReleaseNotes)
	}
	return nil
}

// PublishTemplate publishes the working copy as the next version. A
// template whose working copy equals its newest version has no draft to
// publish (ERR_TMPL_020).
func (s *TemplateService) PublishTemplate(ctx context.Context, ref TemplateRef, in PublishInput) (*TemplateVersion, error) {
	p, t, err := s.access(ctx, ref, actEdit)
	if err != nil {
		return nil, err
	}
	if err := in.check(); err != nil {
		return nil, err
	}
	v := &TemplateVersion{VersionInfo: VersionInfo{ID: NewID("tv"), ReleaseNotes: in.ReleaseNotes, PublishedAt: s.Now().UTC(), PublishedBy: p.UserID}}
	t, err = s.Templates.PublishTemplate(ctx, t.ID, v, func(cur *Template) error {
		if !cur.HasDraft {
			return Errorf(ECodeNothingToPublish, "template %s has no draft changes to publish; version %d is current", cur.ID, cur.PublishedVersion).
				WithInfo("publishedVersion", cur.PublishedVersion)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.record(ctx, p, t, ActivityTemplatePublished, map[string]any{"version": v.Version})
	return v, nil
}

// FindTemplateVersions lists a template's published versions, newest first.
func (s *TemplateService) FindTemplateVersions(ctx context.Context, ref TemplateRef, pg Page) ([]VersionInfo, int, error) {
	_, t, err := s.access(ctx, ref, actRead)
	if err != nil {
		return nil, 0, err
	}
	list, total, err := s.Templates.FindTemplateVersions(ctx, t.ID, pg)
	if err != nil {
		return nil, 0, err
	}
	out := make([]VersionInfo, len(list))
	for i, v := range list {
		out[i] = v.VersionInfo
	}
	return out, total, nil
}

// FindTemplateVersion returns the full state of a template at a version:
// a version id or number, "latest" (the newest published) or "draft" (the
// unpublished working copy).
func (s *TemplateService) FindTemplateVersion(ctx context.Context, ref TemplateRef, version string) (*TemplateVersion, error) {
	p, t, err := s.access(ctx, ref, actRead)
	if err != nil {
		return nil, err
	}
	sel, err := parseVersion(version)
	if err != nil {
		return nil, err
	}
	if sel.kind == selDraft {
		if !t.HasDraft {
			return nil, noDraft(t)
		}
		d := versionOf(t)
		d.ID, d.State = "", "draft"
		return d, nil
	}
	return s.findVersion(ctx, p, t, sel)
}

// RestoreTemplateVersion makes a published version the working copy again
// and publishes it as a new version. Unpublished changes are replaced.
func (s *TemplateService) RestoreTemplateVersion(ctx context.Context, ref TemplateRef, version string, in PublishInput) (*TemplateVersion, error) {
	p, t, err := s.access(ctx, ref, actEdit)
	if err != nil {
		return nil, err
	}
	if err := in.check(); err != nil {
		return nil, err
	}
	sel, err := parseVersion(version)
	if err != nil {
		return nil, err
	}
	if sel.kind == selDraft {
		return nil, Errorf(ECodeBadVersion, "only a published version can be restored, not the draft").WithInfo("version", version)
	}
	from, err := s.findVersion(ctx, p, t, sel)
	if err != nil {
		return nil, err
	}
	notes := in.ReleaseNotes
	if notes == "" {
		notes = fmt.Sprintf("Restored from version %d", from.Version)
	}
	restored := from.Version
	v := &TemplateVersion{VersionInfo: VersionInfo{ID: NewID("tv"), ReleaseNotes: notes, RestoredFrom: &restored, PublishedAt: s.Now().UTC(), PublishedBy: p.UserID}}
	t, err = s.Templates.RestoreTemplateVersion(ctx, t.ID, from.Version, v)
	if err != nil {
		return nil, err
	}
	s.record(ctx, p, t, ActivityTemplatePublished, map[string]any{"version": v.Version, "restoredFrom": from.Version})
	return v, nil
}

// Version selectors: a path's :versionId or a generate request's version.
const (
	selDefault = iota // newest published, else the draft (generation only)
	selDraft          // the unpublished working copy
	selLatest         // the newest published version
	selNumber         // a version number
	selID             // a version id (tv_...)
)

type versionSel struct {
	kind   int
	number int
	id     string
}

// parseVersion reads a version given as text: a number from 1, a version
// id, "latest" (or "published"), or "draft".
func parseVersion(s string) (versionSel, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "draft":
		return versionSel{kind: selDraft}, nil
	case s == "latest" || s == "published":
		return versionSel{kind: selLatest}, nil
	case strings.HasPrefix(s, "tv_") && len(s) > 3:
		return versionSel{kind: selID, id: s}, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || strings.HasPrefix(s, "+") {
		return versionSel{}, Errorf(ECodeBadVersion, "version must be a version number from 1, a version id, \"latest\" or \"draft\"; got %q", s).
			WithInfo("version", s)
	}
	return versionSel{kind: selNumber, number: n}, nil
}

// parseVersionJSON reads the optional version of a generate request: a
// number or a string as parseVersion takes.
func parseVersionJSON(raw json.RawMessage) (versionSel, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return versionSel{kind: selDefault}, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		if i, err := strconv.Atoi(n.String()); err == nil && i >= 1 {
			return versionSel{kind: selNumber, number: i}, nil
		}
		return versionSel{}, Errorf(ECodeBadVersion, "version must be a whole number from 1; got %s", n).WithInfo("field", "version")
	}
	var str string
	if err := json.Unmarshal(raw, &str); err != nil {
		return versionSel{}, Errorf(ECodeBadVersion, "version must be a number or a string").WithInfo("field", "version")
	}
	return parseVersion(str)
}

// findVersion loads a published version of t.
func (s *TemplateService) findVersion(ctx context.Context, p *Principal, t *Template, sel versionSel) (*TemplateVersion, error) {
	switch sel.kind {
	case selID:
		v, err := s.Templates.FindTemplateVersionByID(ctx, sel.id)
		if err != nil {
			return nil, err
		}
		if v.TemplateID != t.ID {
			// Another template's version: say so only when the caller's team owns it.
			if v.TeamID != p.TeamID {
				return nil, ErrNotFound(ECodeVersionNotFound, "version")
			}
			return nil, Errorf(ECodeVersionMismatch, "version %s belongs to another template, not %s", v.ID, t.ID).
				WithInfo("versionId", v.ID, "templateId", t.ID)
		}
		v.State = "published"
		return v, nil
	case selLatest, selDefault:
		if t.PublishedVersion == 0 {
			return nil, noPublished(t)
		}
		sel.number = t.PublishedVersion
	}
	if t.PublishedVersion == 0 {
		return nil, noPublished(t)
	}
	v, err := s.Templates.FindTemplateVersion(ctx, t.ID, sel.number)
	if err != nil {
		return nil, (&Error{Code: ECodeVersionNotFound, Message: fmt.Sprintf("template %s has no version %d (newest: %d)", t.ID, sel.number, t.PublishedVersion)}).
			WithInfo("version", sel.number, "publishedVersion", t.PublishedVersion)
	}
	v.State = "published"
	return v, nil
}

func noPublished(t *Template) error {
	return Errorf(ECodeNoPublishedVersion, "template %s has no published version", t.ID)
}

func noDraft(t *Template) error {
	return Errorf(ECodeNoDraft, "template %s has no draft: its working copy is published as version %d", t.ID, t.PublishedVersion).
		WithInfo("publishedVersion", t.PublishedVersion)
}

// versionOf copies t's content into a version value.
func versionOf(t *Template) *TemplateVersion {
	return &TemplateVersion{
		TemplateID: t.ID, TeamID: t.TeamID, Name: t.Name, Description: t.Description, TemplateType: t.TemplateType,
		OutputFormats: t.OutputFormats, Schema: t.Schema, Variables: t.Variables, Constants: t.Constants,
		CalculatedVariables: t.CalculatedVariables, SampleData: t.SampleData, ContentHash: t.ContentHash(),
	}
}

// withVersion returns a copy of t holding v's content, for rendering.
func withVersion(t *Template, v *TemplateVersion) *Template {
	c := *t
	c.Description, c.OutputFormats, c.Schema = v.Description, v.OutputFormats, v.Schema
	c.Variables, c.Constants, c.CalculatedVariables, c.SampleData = v.Variables, v.Constants, v.CalculatedVariables, v.SampleData
	c.UpdatedAt = v.PublishedAt // versions never change: the compile cache keys on it
	n := v.Version
	c.StateVersion = &n
	return &c
}

// TemplateForGeneration finds a template the team may generate from (its own
// or one shared with it) in the state generation uses: the version asked for,
// else the newest published version, else the draft. StateVersion tells which.
func (s *TemplateService) TemplateForGeneration(ctx context.Context, p *Principal, ref string, version json.RawMessage) (*Template, error) {
	sel, err := parseVersionJSON(version)
	if err != nil {
		return nil, err
	}
	t, err := s.Templates.FindVisibleTemplate(ctx, p.TeamID, ref)
	if err != nil {
		return nil, templateNotFound(err, ref)
	}
	switch {
	case sel.kind == selDraft:
		if !t.HasDraft {
			return nil, noDraft(t)
		}
		return t, nil
	case sel.kind == selDefault && t.PublishedVersion == 0:
		return t, nil
	}
	v, err := s.findVersion(ctx, p, t, sel)
	if err != nil {
		return nil, err
	}
	return withVersion(t, v), nil
}

// TemplateForJob loads the template state a job was recorded with, for the
// worker: the job's team's own template or one shared with it.
func (s *TemplateService) TemplateForJob(ctx context.Context, j *Job) (*Template, error) {
	t, err := s.Templates.FindVisibleTemplate(ctx, j.TeamID, j.TemplateID)
	if err != nil {
		return nil, err
	}
	if j.TemplateVersion == nil {
		return t, nil
	}
	v, err := s.Templates.FindTemplateVersion(ctx, t.ID, *j.TemplateVersion)
	if err != nil {
		return nil, err
	}
	return withVersion(t, v), nil
}

// FillVersion makes v the next version of t: its number, t's content and
// the content's hash.
func (t *Template) FillVersion(v *TemplateVersion) {
	v.TemplateID, v.TeamID, v.Version = t.ID, t.TeamID, t.PublishedVersion+1
	v.Name, v.Description, v.TemplateType, v.OutputFormats, v.Schema = t.Name, t.Description, t.TemplateType, t.OutputFormats, t.Schema
	v.Variables, v.Constants, v.CalculatedVariables, v.SampleData = t.Variables, t.Constants, t.CalculatedVariables, t.SampleData
	v.ContentHash = t.ContentHash()
}

// MarkPublished records on t that v, filled by FillVersion, was stored.
func (t *Template) MarkPublished(v *TemplateVersion) {
	t.PublishedVersion, t.PublishedHash, t.IsPublished, t.HasDraft = v.Version, v.ContentHash, true, false
	at := v.PublishedAt
	t.PublishedAt, t.UpdatedAt = &at, at
}

// RestoreContent makes the content of version src t's working copy.
func (t *Template) RestoreContent(src *TemplateVersion) {
	t.Description, t.OutputFormats, t.Schema = src.Description, src.OutputFormats, src.Schema
	t.Variables, t.Constants, t.CalculatedVariables, t.SampleData = src.Variables, src.Constants, src.CalculatedVariables, src.SampleData
}
