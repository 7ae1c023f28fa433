package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strconv"
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

// Template limits (SPEC.md, Generation limits).
const (
	MaxTemplateName = 255
	MaxTemplateSlug = 100
)

// Template error codes (SPEC.md, Errors). ERR_FOLDER_001 and ERR_CATEGORY_001 are Folio's.
const (
	ECodeTemplateNoAccess   = "ERR_TMPL_004"
	ECodeTemplateNoDelete   = "ERR_TMPL_006"
	ECodeTemplateNoView     = "ERR_TMPL_007"
	ECodeImportInvalid      = "ERR_TMPL_010"
	ECodeExportFailed       = "ERR_TMPL_012"
	ECodeVersionNotFound    = "ERR_TMPL_013"
	ECodeVersionMismatch    = "ERR_TMPL_014"
	ECodeImportNoFile       = "ERR_TMPL_015"
	ECodeImportNotJSON      = "ERR_TMPL_016"
	ECodeNothingToPublish   = "ERR_TMPL_020"
	ECodeNoPublishedVersion = "ERR_TMPL_021"
	ECodeNoDraft            = "ERR_TMPL_022"
	ECodeBadVersion         = "ERR_TMPL_023"
	ECodeShareNotFound      = "ERR_SHARE_001"
	ECodeAlreadyShared      = "ERR_SHARE_002"
	ECodeShareOwnTeam       = "ERR_SHARE_003"
	ECodeShareTeamNotFound  = "ERR_SHARE_004"
	ECodeShareForbidden     = "ERR_SHARE_005"
	ECodeFolderNotFound     = "ERR_FOLDER_001"
	ECodeCategoryNotFound   = "ERR_CATEGORY_001"
)

// Template is a stored document definition owned by a team. Its content
// fields hold the working copy (the draft); published versions are copies
// kept as TemplateVersion.
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
	// SampleData holds example values for the variables: the editor's form
	// starts from them and a preview without variables renders them. Not
	// part of ContentHash: changing only sample values leaves no draft.
	SampleData  map[string]any `json:"sampleData"`
	FolderID    *string        `json:"folderId"`
	CategoryIDs []string       `json:"categoryIds"`
	IsPublished bool           `json:"isPublished"`
	PublishedAt *time.Time     `json:"publishedAt"`
	// PublishedVersion is the newest published version number (0: never published).
	PublishedVersion int `json:"publishedVersion"`
	// HasDraft reports changes not yet published (always true before the first publish).
	HasDraft bool `json:"hasDraft"`
	// Permission is "view" or "edit" when the template belongs to another
	// team that shares it with the caller's team; empty for the team's own.
	Permission string    `json:"permission,omitempty"`
	CreatedAt  time.Time `json:"createdAt"`
	UpdatedAt  time.Time `json:"updatedAt"`
	CreatedBy  string    `json:"-"`
	// PublishedHash is the content hash of the newest published version.
	PublishedHash string `json:"-"`
	// StateVersion is the published version whose content this value holds;
	// nil for the working draft.
	StateVersion *int `json:"-"`
	// Warnings are what the save that returned this value accepted but
	// probably was not meant (unknown keys, undeclared names); not stored.
	Warnings []render.Issue `json:"-"`
}

// Definition returns what the render engine needs from the template.
func (t *Template) Definition() render.Definition {
	return render.Definition{Schema: t.Schema, Variables: t.Variables, Constants: t.Constants, CalculatedVariables: t.CalculatedVariables}
}

// ContentHash digests the versioned content: everything but the name,
// slug, type and organisation (folder, categories). Publishing compares it
// with the newest version's to find unpublished changes.
func (t *Template) ContentHash() string {
	b, err := json.Marshal([]any{t.Description, t.OutputFormats, t.Schema, t.Variables, t.Constants, t.CalculatedVariables})
	if err != nil {
		b = append([]byte(t.Description), t.Schema...) // a stored schema is valid JSON; never reached
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TemplateRef names a template in a request: id, shortId or slug, and the
// template type of a typed path (/api/templates/attachment/...), "" when none.
type TemplateRef struct {
	ID   string
	Type string
}

// TemplateFilter selects a team's templates for listing.
type TemplateFilter struct {
	TeamID       string
	Search       string // part of the name, case-insensitive
	FolderID     string
	CategoryID   string
	TemplateType string
	Page         Page
}

// TemplateStore keeps templates with their versions, shares, folders and
// categories. Every method is scoped by team or by a template the app
// already scoped.
type TemplateStore interface {
	// CreateTemplate inserts a template; a taken slug gets a numeric suffix, a taken name is ERR_TMPL_011.
	CreateTemplate(ctx context.Context, t *Template) error
	// FindTemplate finds a live template of the team by id, shortId or slug.
	FindTemplate(ctx context.Context, teamID, ref string) (*Template, error)
	// FindVisibleTemplate finds a live template the team owns (id, shortId or
	// slug) or that is shared with it (id or shortId), setting Permission on a shared one.
	FindVisibleTemplate(ctx context.Context, teamID, ref string) (*Template, error)
	// FindTemplateByName finds a live template of the team by its exact name.
	FindTemplateByName(ctx context.Context, teamID, name string) (*Template, error)
	FindTemplates(ctx context.Context, f TemplateFilter) ([]*Template, int, error)
	// UpdateTemplate writes the editable fields of a live template (ERR_TMPL_011 on a taken name).
	UpdateTemplate(ctx context.Context, t *Template) error
	// DeleteTemplates soft-deletes the team's live templates among ids, ends
	// their shares, and returns the ids deleted.
	DeleteTemplates(ctx context.Context, teamID string, ids []string, by string, now time.Time) ([]string, error)
	TemplateVersionStore
	TemplateShareStore
	TemplateGroupStore
}

// TemplateService applies the template rules.
type TemplateService struct {
	Templates TemplateStore
	Teams     TeamStore
	Engine    *render.Engine
	Now       func() time.Time
	// Activity, when set, records template events in the team's feed.
	Activity *ActivityLog
	// Assets resolves asset:<ref> references when rendering, and carries
	// assets in exports and imports; nil: templates cannot use assets.
	Assets *AssetService
	// Images fetches image sources that are https URLs, caching per
	// team; nil: templates cannot draw image URLs.
	Images *ImageFetcher

	mu      sync.Mutex
	cache   map[string]compiled
	engines map[string]fontEngine // by team: the server's fonts and the team's
}

type compiled struct {
	updatedAt time.Time
	tpl       *render.Template
}

const maxCompiledCache = 1024

// TemplateInput is the body of POST /api/templates and POST /api/v1/templates.
type TemplateInput struct {
	Name                *string                     `json:"name"`
	Slug                *string                     `json:"slug"`
	Description         *string                     `json:"description"`
	TemplateType        *string                     `json:"templateType"`
	OutputFormats       []string                    `json:"outputFormats"`
	Schema              json.RawMessage             `json:"schema"`
	Variables           []render.Variable           `json:"variables"`
	Constants           map[string]any              `json:"constants"`
	CalculatedVariables []render.CalculatedVariable `json:"calculatedVariables"`
	SampleData          map[string]any              `json:"sampleData"`
	FolderID            *string                     `json:"folderId"`
	// PathType is the type of a typed path (/api/templates/attachment), "" when none.
	PathType string `json:"-"`
}

// CreateTemplate validates and stores a new template in the caller's team.
func (s *TemplateService) CreateTemplate(ctx context.Context, in TemplateInput) (*Template, error) {
	p, err := s.creator(ctx)
	if err != nil {
		return nil, err
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
	typ, err := templateType(in.TemplateType, in.PathType)
	if err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	t := &Template{
		ID: NewID("tpl"), TeamID: p.TeamID, ShortID: "etpl_" + RandomString(12), TemplateType: typ,
		Schema: in.Schema, Variables: in.Variables, Constants: in.Constants, CalculatedVariables: in.CalculatedVariables,
		SampleData: in.SampleData, CreatedAt: now, UpdatedAt: now, CreatedBy: p.UserID,
	}
	if in.Description != nil {
		t.Description = *in.Description
	}
	if t.Name, err = checkTemplateName(*in.Name); err != nil {
		return nil, err
	}
	if t.Slug, err = templateSlug(in.Slug, t.Name); err != nil {
		return nil, err
	}
	if t.OutputFormats, err = checkFormats(in.OutputFormats); err != nil {
		return nil, err
	}
	if in.FolderID != nil && *in.FolderID != "" {
		if err := s.checkFolder(ctx, p.TeamID, *in.FolderID); err != nil {
			return nil, err
		}
		t.FolderID = in.FolderID
	}
	if err := s.create(ctx, p, t); err != nil {
		return nil, err
	}
	return t, nil
}

// create checks and stores a new template (create, duplicate, import).
func (s *TemplateService) create(ctx context.Context, p *Principal, t *Template) error {
	t.normalize()
	if err := checkSampleData(t.SampleData); err != nil {
		return err
	}
	ct, err := s.compile(ctx, t.TeamID, t.Definition())
	if err != nil {
		return schemaError(err)
	}
	t.Warnings = append(warningsOf(ct), s.assetWarnings(ctx, t)...)
	if err := s.Templates.CreateTemplate(ctx, t); err != nil { // checks the plan's template count
		return err
	}
	t.HasDraft = true
	s.record(ctx, p, t, ActivityTemplateCreated, nil)
	return nil
}

// warningsOf returns a compiled template's warnings, never nil.
func warningsOf(ct *render.Template) []render.Issue {
	if w := ct.Warnings(); w != nil {
		return w
	}
	return []render.Issue{}
}

// creator checks that the caller may create templates in its team.
func (s *TemplateService) creator(ctx context.Context) (*Principal, error) {
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
	return p, nil
}

func (s *TemplateService) record(ctx context.Context, p *Principal, t *Template, typ string, details map[string]any) {
	s.Activity.RecordActivity(ctx, Activity{TeamID: t.TeamID, Type: typ, User: ActivityUser{ID: p.UserID},
		Template: &ActivityTemplate{ID: t.ID, Name: t.Name}, Details: details})
}

func templateType(body *string, path string) (string, error) {
	typ := path
	if body != nil && *body != "" {
		if path != "" && *body != path {
			return "", Errorf(ECodeTemplateType, "templateType %q does not match the %s path", *body, path).WithInfo("field", "templateType")
		}
		typ = *body
	}
	if typ == "" {
		typ = TypeAttachment
	}
	if typ != TypeAttachment && typ != TypeEmail {
		return "", Errorf(ECodeTemplateType, "templateType must be attachment or email").WithInfo("field", "templateType")
	}
	return typ, nil
}

func checkTemplateName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", ErrRequired("name")
	}
	if utf8.RuneCountInString(name) > MaxTemplateName {
		return "", ErrInvalid("name", "name must be at most %d characters", MaxTemplateName)
	}
	return name, nil
}

var slugRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// reservedSlugs are static path segments under /api/templates/; a template
// with such a slug could not be addressed by it.
var reservedSlugs = []string{"attachment", "email", "shared", "shares", "import", "bulk-delete", "bulk-categories",
	"validate-schema", "validate-variables", "preview"}

// templateSlug checks a requested slug, or makes one from the name.
func templateSlug(want *string, name string) (string, error) {
	if want == nil || strings.TrimSpace(*want) == "" {
		slug := Slugify(name)
		if slices.Contains(reservedSlugs, slug) {
			slug += "-template"
		}
		return slug, nil
	}
	slug := strings.TrimSpace(*want)
	if len(slug) > MaxTemplateSlug || !slugRE.MatchString(slug) {
		return "", ErrInvalid("slug", "slug must be 1 to %d lower-case letters, digits and single hyphens", MaxTemplateSlug)
	}
	if slices.Contains(reservedSlugs, slug) || strings.HasPrefix(slug, "tpl_") || strings.HasPrefix(slug, "etpl_") {
		return "", ErrInvalid("slug", "slug %q is reserved", slug)
	}
	return slug, nil
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
	if t.CategoryIDs == nil {
		t.CategoryIDs = []string{}
	}
	if t.SampleData == nil {
		t.SampleData = map[string]any{}
	}
}

// MaxSampleData bounds a template's sample data, as JSON: it is shown in
// every editor page and read with every template.
const MaxSampleData = 1 << 20

// checkSampleData refuses sample data too large to keep with a template.
func checkSampleData(d map[string]any) error {
	b, err := json.Marshal(d)
	if err != nil {
		return ErrInvalid("sampleData", "sampleData must be a JSON object")
	}
	if len(b) > MaxSampleData {
		return ErrInvalid("sampleData", "sampleData must be at most %d bytes as JSON (it is %d)", MaxSampleData, len(b)).
			WithInfo("max", MaxSampleData, "actual", len(b))
	}
	return nil
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

// schemaError turns a render compile error into ERR_TMPL_008, or into the
// limit's own code (ERR_LIMIT_008, 009, 018) when the template exceeds a
// limit on its size; relatedInfo.errors lists every problem either way.
func schemaError(err error) error {
	var se *render.SchemaError
	if !errors.As(err, &se) {
		return err
	}
	e := (&Error{Code: ECodeSchemaInvalid, Message: se.Error()}).WithInfo("errors", se.Issues)
	if le := se.Limit; le != nil {
		e = (&Error{Code: le.Code, Message: le.Error()}).WithInfo("limit", le.Limit, "actual", le.Actual, "max", le.Max, "errors", se.Issues)
	}
	if len(se.Warnings) > 0 {
		e = e.WithInfo("warnings", se.Warnings)
	}
	return e
}

// FindTemplate returns a template the caller's team owns or has shared with it.
func (s *TemplateService) FindTemplate(ctx context.Context, ref TemplateRef) (*Template, error) {
	_, t, err := s.access(ctx, ref, actRead)
	return t, err
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
	if f.TemplateType != "" && f.TemplateType != TypeAttachment && f.TemplateType != TypeEmail {
		return nil, 0, Errorf(ECodeTemplateType, "templateType must be attachment or email").WithInfo("field", "templateType")
	}
	f.TeamID = p.TeamID
	return s.Templates.FindTemplates(ctx, f)
}

// Compiled returns the compiled form of a template state in a locale
// (a request's override; "" is the schema's own) with its team's fonts,
// compiling each stored state once per process, locale and set of team
// fonts.
func (s *TemplateService) Compiled(ctx context.Context, t *Template, locale string) (*render.Template, error) {
	eng, fonts, err := s.engineFor(ctx, t.TeamID)
	if err != nil {
		return nil, err
	}
	key := t.ID + "@draft"
	if t.StateVersion != nil {
		key = t.ID + "@" + strconv.Itoa(*t.StateVersion)
	}
	if locale != "" {
		key += "#" + locale
	}
	if fonts != "" {
		key += "\x00" + fonts
	}
	s.mu.Lock()
	c, ok := s.cache[key]
	s.mu.Unlock()
	if ok && c.updatedAt.Equal(t.UpdatedAt) {
		return c.tpl, nil
	}
	def := t.Definition()
	def.Locale = locale
	rt, err := eng.Compile(def)
	if err != nil {
		return nil, schemaError(err)
	}
	s.mu.Lock()
	if s.cache == nil || len(s.cache) >= maxCompiledCache {
		s.cache = make(map[string]compiled)
	}
	s.cache[key] = compiled{updatedAt: t.UpdatedAt, tpl: rt}
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

// SuffixedSlug is the i-th candidate for a template slug that base has
// taken: base cut to fit, then "-i" (the stores try i = 2, 3, ... until a
// slug is free in the team).
func SuffixedSlug(base string, i int) string {
	suffix := "-" + strconv.Itoa(i)
	if n := MaxTemplateSlug - len(suffix); len(base) > n {
		base = base[:n]
	}
	return strings.TrimRight(base, "-") + suffix
}

// ErrTemplateNameTaken is ERR_TMPL_011: the team has a live template named name.
func ErrTemplateNameTaken(name string) error {
	return (&Error{Code: ECodeTemplateExists, Message: "a template named " + name + " already exists"}).WithInfo("field", "name")
}

// ErrTemplateSlugTaken refuses a slug another live template of the team has.
func ErrTemplateSlugTaken(slug string) error {
	return ErrInvalid("slug", "another template of the team has the slug %q", slug)
}
