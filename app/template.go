package app

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"folio/render"
)

// Template types (DESIGN.md section 6).
const (
	TypeAttachment = "attachment"
	TypeEmail      = "email"
)

// Template is a stored document definition owned by a team.
type Template struct {
	ID                  string                      `json:"id"`
	TeamID              string                      `json:"teamId"`
	ShortID             string                      `json:"shortId"`
	Slug                string                      `json:"slug"`
	Name                string                      `json:"name"`
	Description         string                      `json:"description"`
	TemplateType        string                      `json:"templateType"`
	OutputFormats       []string                    `json:"outputFormats"`
	Schema              json.RawMessage             `json:"schema"`
	Variables           []render.Variable           `json:"variables"`
	Constants           map[string]any              `json:"constants"`
	CalculatedVariables []render.CalculatedVariable `json:"calculatedVariables"`
	FolderID            *string                     `json:"folderId"`
	IsPublished         bool                        `json:"isPublished"`
	PublishedAt         *time.Time                  `json:"publishedAt"`
	CreatedAt           time.Time                   `json:"createdAt"`
	UpdatedAt           time.Time                   `json:"updatedAt"`
	CreatedBy           string                      `json:"-"`
}

// Definition returns what the render engine needs from the template.
func (t *Template) Definition() render.Definition {
	return render.Definition{Schema: t.Schema, Variables: t.Variables, Constants: t.Constants, CalculatedVariables: t.CalculatedVariables}
}

// TemplateFilter selects a team's templates for listing.
type TemplateFilter struct {
	TeamID string
	Search string
	Page   Page
}

// TemplateStore keeps templates. Every method is scoped by team.
type TemplateStore interface {
	CreateTemplate(ctx context.Context, t *Template) error
	// FindTemplate finds a live template by id, shortId or slug.
	FindTemplate(ctx context.Context, teamID, ref string) (*Template, error)
	FindTemplates(ctx context.Context, f TemplateFilter) ([]*Template, int, error)
	CountTemplates(ctx context.Context, teamID string) (int, error)
}

// TemplateService applies the template rules.
type TemplateService struct {
	Templates TemplateStore
	Teams     TeamStore
	Engine    *render.Engine
	Now       func() time.Time

	mu    sync.Mutex
	cache map[string]compiled
}

type compiled struct {
	updatedAt time.Time
	tpl       *render.Template
}

const maxCompiledCache = 1024

// TemplateInput is the body of POST /api/templates.
type TemplateInput struct {
	Name                *string                     `json:"name"`
	Description         *string                     `json:"description"`
	TemplateType        *string                     `json:"templateType"`
	OutputFormats       []string                    `json:"outputFormats"`
	Schema              json.RawMessage             `json:"schema"`
	Variables           []render.Variable           `json:"variables"`
	Constants           map[string]any              `json:"constants"`
	CalculatedVariables []render.CalculatedVariable `json:"calculatedVariables"`
	FolderID            *string                     `json:"folderId"`
}

// CreateTemplate validates and stores a new template in the caller's team.
func (s *TemplateService) CreateTemplate(ctx context.Context, in TemplateInput) (*Template, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if p.Kind != AuthJWT {
		if err := p.Require(PermTemplatesWrite); err != nil {
			return nil, err
		}
	}
	if !CanWrite(p.Role) {
		return nil, &Error{Code: ECodeTemplateNoEdit, Message: "viewers cannot create templates"}
	}
	if in.Name == nil || strings.TrimSpace(*in.Name) == "" {
		return nil, ErrRequired("name")
	}
	if in.OutputFormats == nil {
		return nil, ErrRequired("outputFormats")
	}
	if len(in.Schema) == 0 || string(in.Schema) == "null" {
		return nil, ErrRequired("schema")
	}
	name := strings.TrimSpace(*in.Name)
	if utf8.RuneCountInString(name) > 255 {
		return nil, ErrInvalid("name", "name must be at most 255 characters")
	}
	formats, err := checkFormats(in.OutputFormats)
	if err != nil {
		return nil, err
	}
	typ := TypeAttachment
	if in.TemplateType != nil {
		typ = *in.TemplateType
	}
	if typ != TypeAttachment && typ != TypeEmail {
		return nil, Errorf(ECodeTemplateType, "templateType must be attachment or email")
	}
	now := s.Now().UTC()
	t := &Template{
		ID: NewID("tpl"), TeamID: p.TeamID, ShortID: "etpl_" + RandomString(12), Slug: Slugify(name),
		Name: name, TemplateType: typ, OutputFormats: formats, Schema: in.Schema,
		Variables: in.Variables, Constants: in.Constants, CalculatedVariables: in.CalculatedVariables,
		FolderID: in.FolderID, CreatedAt: now, UpdatedAt: now, CreatedBy: p.UserID,
	}
	if in.Description != nil {
		t.Description = *in.Description
	}
	t.normalize()
	if _, err := s.Engine.Compile(t.Definition()); err != nil {
		return nil, schemaError(err)
	}
	if err := s.checkTemplateQuota(ctx, p.TeamID); err != nil {
		return nil, err
	}
	if err := s.Templates.CreateTemplate(ctx, t); err != nil {
		return nil, err
	}
	return t, nil
}

func (s *TemplateService) checkTemplateQuota(ctx context.Context, teamID string) error {
	team, err := s.Teams.FindTeam(ctx, teamID)
	if err != nil {
		return err
	}
	plan, err := FindPlan(team.Plan)
	if err != nil || plan.Templates == 0 {
		return nil
	}
	n, err := s.Templates.CountTemplates(ctx, teamID)
	if err != nil {
		return err
	}
	if n >= plan.Templates {
		return Errorf(ECodePlanLimit, "the %s plan allows %d template(s); delete one or change plan", plan.Name, plan.Templates).
			WithInfo("limit", plan.Templates, "current", n, "plan", plan.Name, "resource", "templates")
	}
	return nil
}

// normalize replaces nil collections so JSON shows [] and {} rather than null.
func (t *Template) normalize() {
	if t.Variables == nil {
		t.Variables = []render.Variable{}
	}
	if t.Constants == nil {
		t.Constants = map[string]any{}
	}
	if t.CalculatedVariables == nil {
		t.CalculatedVariables = []render.CalculatedVariable{}
	}
	if t.OutputFormats == nil {
		t.OutputFormats = []string{}
	}
}

func checkFormats(in []string) ([]string, error) {
	if len(in) == 0 {
		return nil, ErrInvalid("outputFormats", "outputFormats needs at least one of pdf, xlsx")
	}
	var out []string
	for _, f := range in {
		if f != string(render.PDF) && f != string(render.XLSX) {
			return nil, ErrInvalid("outputFormats", "unknown output format %q (pdf or xlsx)", f)
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

// schemaError turns a render compile error into ERR_TMPL_008.
func schemaError(err error) error {
	var se *render.SchemaError
	if errors.As(err, &se) {
		return (&Error{Code: ECodeSchemaInvalid, Message: se.Error()}).WithInfo("errors", se.Issues)
	}
	return err
}

// FindTemplate returns a template of the caller's team by id, shortId or slug.
func (s *TemplateService) FindTemplate(ctx context.Context, ref string) (*Template, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.Require(PermTemplatesRead); err != nil {
		return nil, err
	}
	return s.Templates.FindTemplate(ctx, p.TeamID, ref)
}

// FindTemplates lists the caller's team's templates.
func (s *TemplateService) FindTemplates(ctx context.Context, f TemplateFilter) ([]*Template, int, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, 0, err
	}
	if err := p.Require(PermTemplatesRead); err != nil {
		return nil, 0, err
	}
	f.TeamID = p.TeamID
	return s.Templates.FindTemplates(ctx, f)
}

// Compiled returns the compiled form of a template, compiling each stored
// state once per process.
func (s *TemplateService) Compiled(t *Template) (*render.Template, error) {
	s.mu.Lock()
	c, ok := s.cache[t.ID]
	s.mu.Unlock()
	if ok && c.updatedAt.Equal(t.UpdatedAt) {
		return c.tpl, nil
	}
	rt, err := s.Engine.Compile(t.Definition())
	if err != nil {
		return nil, schemaError(err)
	}
	s.mu.Lock()
	if s.cache == nil || len(s.cache) >= maxCompiledCache {
		s.cache = make(map[string]compiled)
	}
	s.cache[t.ID] = compiled{updatedAt: t.UpdatedAt, tpl: rt}
	s.mu.Unlock()
	return rt, nil
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// Slugify makes a URL-safe slug of at most 100 characters from a name. The
// store appends a suffix when the slug is taken.
func Slugify(name string) string {
	s := strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if len(s) > 80 {
		s = strings.TrimRight(s[:80], "-")
	}
	if s == "" {
		s = "template"
	}
	return s
}
