package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"folio/render"
)

// Validation is the answer of the validate-schema and validate-variables
// endpoints.
type Validation struct {
	Valid    bool           `json:"valid"`
	Errors   []render.Issue `json:"errors"`
	Warnings []render.Issue `json:"warnings"`
}

// ValidateSchemaInput is the body of POST /api/templates/validate-schema.
// The declarations are optional: with them, names the schema reads that
// none declares are warned about too.
type ValidateSchemaInput struct {
	TemplateType        string                      `json:"templateType"`
	Schema              json.RawMessage             `json:"schema"`
	Variables           []render.Variable           `json:"variables,omitempty"`
	Constants           map[string]any              `json:"constants,omitempty"`
	CalculatedVariables []render.CalculatedVariable `json:"calculatedVariables,omitempty"`
}

// ValidateSchema checks a schema without storing anything.
func (s *TemplateService) ValidateSchema(ctx context.Context, in ValidateSchemaInput) (*Validation, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if in.TemplateType == "" {
		return nil, ErrRequired("templateType")
	}
	if in.TemplateType != TypeAttachment && in.TemplateType != TypeEmail {
		return nil, Errorf(ECodeTemplateType, "templateType must be attachment or email")
	}
	if len(in.Schema) == 0 || string(in.Schema) == "null" {
		return nil, ErrRequired("schema")
	}
	v := &Validation{Errors: []render.Issue{}, Warnings: schemaWarnings(in.Schema)}
	ct, err := s.compile(ctx, p.TeamID, render.Definition{Schema: in.Schema, Variables: in.Variables, Constants: in.Constants, CalculatedVariables: in.CalculatedVariables})
	if err != nil {
		var se *render.SchemaError
		if !errors.As(err, &se) {
			return nil, err
		}
		v.Errors = se.Issues
		v.Warnings = append(v.Warnings, se.Warnings...)
	} else {
		v.Warnings = append(v.Warnings, ct.Warnings()...)
	}
	v.Valid = len(v.Errors) == 0
	return v, nil
}

// schemaWarnings notes things that render but are probably not meant.
func schemaWarnings(raw json.RawMessage) []render.Issue {
	w := []render.Issue{}
	var sc struct {
		PageSize *string `json:"pageSize"`
		Sections []struct {
			ID         string            `json:"id"`
			Role       string            `json:"role"`
			Components []json.RawMessage `json:"components"`
		} `json:"sections"`
	}
	if json.Unmarshal(raw, &sc) != nil {
		return w
	}
	if sc.PageSize == nil {
		w = append(w, render.Issue{Path: "schema.pageSize", Message: "not set; A4 is used"})
	}
	body := 0
	for i, sec := range sc.Sections {
		if sec.Role == "" || sec.Role == "body" {
			body++
		}
		if len(sec.Components) == 0 {
			w = append(w, render.Issue{Path: fmt.Sprintf("schema.sections[%d].components", i), Message: "section has no components"})
		}
	}
	if body == 0 {
		w = append(w, render.Issue{Path: "schema.sections", Message: "no body section: documents will only hold headers and footers"})
	}
	return w
}

// ValidateVariablesInput is the body of POST /api/templates/validate-variables.
type ValidateVariablesInput struct {
	Variables           []render.Variable           `json:"variables"`
	Constants           map[string]any              `json:"constants"`
	CalculatedVariables []render.CalculatedVariable `json:"calculatedVariables"`
}

// ValidateVariables checks variable declarations, constants and calculated
// variables (types, defaults, names, dependency order) without storing anything.
func (s *TemplateService) ValidateVariables(ctx context.Context, in ValidateVariablesInput) (*Validation, error) {
	if _, err := PrincipalFrom(ctx); err != nil {
		return nil, err
	}
	if in.Variables == nil {
		return nil, ErrRequired("variables")
	}
	v := &Validation{Errors: []render.Issue{}, Warnings: []render.Issue{}}
	def := render.Definition{Schema: json.RawMessage(`{"sections":[]}`), Variables: in.Variables, Constants: in.Constants, CalculatedVariables: in.CalculatedVariables}
	if _, err := s.Engine.Compile(def); err != nil {
		var se *render.SchemaError
		if !errors.As(err, &se) {
			return nil, err
		}
		for _, is := range se.Issues {
			if !strings.HasPrefix(is.Path, "schema") {
				v.Errors = append(v.Errors, is)
			}
		}
	}
	for i, d := range in.Variables {
		if d.Description == "" {
			v.Warnings = append(v.Warnings, render.Issue{Path: fmt.Sprintf("variables[%d].description", i), Message: "no description: automation tools and the dashboard show the name only"})
		}
		if d.Required && d.DefaultValue != nil {
			v.Warnings = append(v.Warnings, render.Issue{Path: fmt.Sprintf("variables[%d].defaultValue", i), Message: "a required variable never uses its default"})
		}
	}
	v.Valid = len(v.Errors) == 0
	return v, nil
}

// PreviewInput is the body of POST /api/templates/:id/preview. Without
// variables the template's sample data is rendered.
type PreviewInput struct {
	Variables json.RawMessage `json:"variables"`
	Format    string          `json:"format"`
	Locale    string          `json:"locale"` // overrides the schema's locale
	// PDFRequest holds pdfa, watermark, encrypt and documentMetadata; a
	// preview is stamped DRAFT unless a watermark is set (false: none).
	render.PDFRequest
}

// PreviewDefinitionInput is the body of POST /api/templates/preview: a
// definition that is not stored (an editor's unsaved text, an export
// file's template) and the values to render it with; without variables,
// the definition's sampleData.
type PreviewDefinitionInput struct {
	Template  *TemplateDefinition `json:"template"`
	Variables json.RawMessage     `json:"variables"`
	Format    string              `json:"format"`
	Locale    string              `json:"locale"` // overrides the schema's locale
	render.PDFRequest
}

// PreviewStats are a preview's render figures and its warnings: the
// request's values holding characters no font can draw, by variable.
type PreviewStats struct {
	render.Stats
	Warnings []DryRunIssue
}

// Preview renders a template without recording a job, charging quota or
// sending webhooks.
func (s *DocumentService) Preview(ctx context.Context, ref string, in PreviewInput) ([]byte, PreviewStats, error) {
	if err := previewer(ctx); err != nil {
		return nil, PreviewStats{}, err
	}
	// The working state (draft) of an own or shared template: what an
	// editor previews.
	t, err := s.Templates.FindTemplate(ctx, TemplateRef{ID: ref})
	if err != nil {
		return nil, PreviewStats{}, err
	}
	format, err := previewFormat(in.Format)
	if err != nil {
		return nil, PreviewStats{}, err
	}
	vars, err := previewValues(in.Variables, t.SampleData)
	if err != nil {
		return nil, PreviewStats{}, err
	}
	if err := checkLocale("locale", in.Locale); err != nil {
		return nil, PreviewStats{}, err
	}
	ct, err := s.Templates.Compiled(ctx, t, in.Locale)
	if err != nil {
		return nil, PreviewStats{}, err
	}
	pdfOpts, err := previewPDFOptions(in.PDFRequest, format, ct)
	if err != nil {
		return nil, PreviewStats{}, err
	}
	pdfOpts.Draft = true
	p, _ := PrincipalFrom(ctx)
	opts := s.documentOptions(ctx, t, p.TeamID, s.Now(), true)
	opts.PDF = pdfOpts
	return s.renderPreview(ctx, ct, format, vars, opts)
}

// PreviewDefinition renders a definition that is not stored: what an editor
// previews as it is typed, so no draft is saved for it. Nothing is recorded
// or charged; errors are those of saving (ERR_TMPL_008 with every path) and
// of generating.
func (s *DocumentService) PreviewDefinition(ctx context.Context, in PreviewDefinitionInput) ([]byte, PreviewStats, error) {
	if err := previewer(ctx); err != nil {
		return nil, PreviewStats{}, err
	}
	if in.Template == nil {
		return nil, PreviewStats{}, ErrRequired("template")
	}
	def := in.Template
	if len(def.Schema) == 0 || string(def.Schema) == "null" {
		return nil, PreviewStats{}, ErrRequired("template.schema")
	}
	format, err := previewFormat(in.Format)
	if err != nil {
		return nil, PreviewStats{}, err
	}
	vars, err := previewValues(in.Variables, def.SampleData)
	if err != nil {
		return nil, PreviewStats{}, err
	}
	if err := checkLocale("locale", in.Locale); err != nil {
		return nil, PreviewStats{}, err
	}
	var teamID string
	if p, err := PrincipalFrom(ctx); err == nil {
		teamID = p.TeamID
	}
	ct, err := s.Templates.compile(ctx, teamID, render.Definition{Schema: def.Schema, Variables: def.Variables, Constants: def.Constants,
		CalculatedVariables: def.CalculatedVariables, Locale: in.Locale})
	if err != nil {
		return nil, PreviewStats{}, schemaError(err)
	}
	opts := s.renderOptions(true)
	if p, err := PrincipalFrom(ctx); err == nil {
		opts.Assets = s.Templates.assetResolver(ctx, p.TeamID)
		opts.Fetch = s.Templates.Images.Resolver(p.TeamID) // the same guard as jobs
	}
	if opts.PDF, err = previewPDFOptions(in.PDFRequest, format, ct); err != nil {
		return nil, PreviewStats{}, err
	}
	opts.PDF.Draft = true
	return s.renderPreview(ctx, ct, format, vars, opts)
}

// previewer checks that the caller may preview: any member, or an API key
// with templates:read.
func previewer(ctx context.Context) error {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return err
	}
	return p.Require(PermTemplatesRead)
}

func previewFormat(format string) (string, error) {
	switch format {
	case "":
		return string(render.PDF), nil
	case string(render.PDF), string(render.XLSX):
		return format, nil
	}
	return "", ErrInvalid("format", "format must be pdf or xlsx")
}

// previewValues are a preview's variables: the request's, else the sample data.
func previewValues(raw json.RawMessage, sample map[string]any) (map[string]any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		if sample == nil {
			return map[string]any{}, nil
		}
		return sample, nil
	}
	return decodeObject("variables", raw)
}

func (s *DocumentService) renderPreview(ctx context.Context, ct *render.Template, format string, vars map[string]any, opts render.Options) ([]byte, PreviewStats, error) {
	values, err := ct.Values(vars)
	if err != nil {
		return nil, PreviewStats{}, variableError(err)
	}
	timeout := s.renderTimeout(format)
	var buf bytes.Buffer
	st, err := ct.Render(ctx, &buf, render.Format(format), values, opts)
	if err != nil {
		return nil, PreviewStats{Stats: st}, renderError(err, timeout)
	}
	ps := PreviewStats{Stats: st, Warnings: []DryRunIssue{}}
	for _, m := range ct.MissingGlyphs(vars) {
		ps.Warnings = append(ps.Warnings, DryRunIssue{Variable: m.Variable, Message: m.Message})
	}
	return buf.Bytes(), ps, nil
}

// RenderFunc compiles def once and returns a function that renders it with
// vars, without HTTP or storage: the floor the bench measures the API against.
func (s *TemplateService) RenderFunc(def render.Definition, format string, vars map[string]any) (func(ctx context.Context, w io.Writer) error, error) {
	ct, err := s.Engine.Compile(def)
	if err != nil {
		return nil, schemaError(err)
	}
	return func(ctx context.Context, w io.Writer) error {
		values, err := ct.Values(vars)
		if err != nil {
			return variableError(err)
		}
		_, err = ct.Render(ctx, w, render.Format(format), values, render.Options{})
		return err
	}, nil
}

// DryRun is the answer of a dry run, POST /api/v1/documents/generate?dryRun=true:
// the document is checked and rendered like a job, then thrown away. No job
// is recorded, no quota is charged and no webhook is sent.
type DryRun struct {
	Valid     bool          `json:"valid"`
	Errors    []DryRunIssue `json:"errors"`
	Warnings  []DryRunIssue `json:"warnings"`
	Predicted Prediction    `json:"predicted"`
	Limits    DryRunLimits  `json:"limits"`
}

// DryRunIssue is one problem a dry run found, with the code the real
// request would fail with.
type DryRunIssue struct {
	Code     string         `json:"code,omitempty"`
	Message  string         `json:"message"`
	Variable string         `json:"variable,omitempty"`
	Path     string         `json:"path,omitempty"`
	Info     map[string]any `json:"relatedInfo,omitempty"`
}

// Prediction is the size of the document a request would produce: the
// figures preview reports in its X-Folio-* headers. When a limit stops the
// render, the figure of that limit is how far it got (at least max + 1).
type Prediction struct {
	// Pages counts the attached PDFs' pages too; AttachedPages says how
	// many of them were attachBefore's and attachAfter's.
	Pages         int            `json:"pages"`
	AttachedPages *AttachedPages `json:"attachedPages,omitempty"`
	Images        int            `json:"images"`
	Rows          int            `json:"rows"`
	Sheets        int            `json:"sheets"`
	Bytes         int64          `json:"bytes"`
}

// AttachedPages are the pages of attachBefore's and attachAfter's PDFs
// in a document.
type AttachedPages struct {
	Before int `json:"before"`
	After  int `json:"after"`
}

// DryRunLimits are the limits a document is checked against, and the
// caller's plan's.
type DryRunLimits struct {
	Pages             int   `json:"pages"`
	Images            int   `json:"images"`
	Rows              int   `json:"rows"`
	Sheets            int   `json:"sheets"`
	Columns           int   `json:"columns"`
	Bytes             int64 `json:"bytes"`
	MemoryBytes       int64 `json:"memoryBytes"`
	TimeoutSeconds    int   `json:"timeoutSeconds"`
	DocumentsPerMonth int64 `json:"documentsPerMonth"`
	BatchSize         int   `json:"batchSize,omitempty"`
}

// nearLimit is the share of a limit from which a dry run warns.
const nearLimit = 0.8

// DryRun checks a generate request and renders its document without
// storing it.
func (s *DocumentService) DryRun(ctx context.Context, in GenerateInput) (*DryRun, error) {
	p, t, err := s.generationTarget(ctx, in.TemplateID, in.Format, in.Version)
	if err != nil {
		return nil, err
	}
	vars, err := in.decodeBody()
	if err != nil {
		return nil, err
	}
	_, plan, err := s.charge(ctx, p.TeamID)
	if err != nil {
		return nil, err
	}
	ct, err := s.Templates.Compiled(ctx, t, in.Locale)
	if err != nil {
		return nil, err
	}
	pdfOpts, err := pdfOptions(in.PDFRequest, in.Format, ct)
	if err != nil {
		return nil, err
	}
	if err := s.Signing.CheckSignature(ctx, p.TeamID, signatureFor(ct, pdfOpts, in.Format)); err != nil {
		return nil, err
	}
	c, err := s.dryRender(ctx, t, ct, in.Format, vars, pdfOpts)
	if err != nil {
		return nil, err
	}
	c.Warnings = append(templateWarnings(ct), c.Warnings...)
	return &DryRun{Valid: len(c.Errors) == 0, Errors: c.Errors, Warnings: c.Warnings, Predicted: c.Predicted,
		Limits: s.dryRunLimits(in.Format, plan, 0)}, nil
}

// documentCheck is what a dry run learns about one document.
type documentCheck struct {
	Errors    []DryRunIssue
	Warnings  []DryRunIssue
	Predicted Prediction
}

// dryRender validates the variables and renders the document as a job
// would, keeping only its figures. The error is for the caller's own
// context ending; everything wrong with the document is in the check.
func (s *DocumentService) dryRender(ctx context.Context, t *Template, ct *render.Template, format string, vars map[string]any, pdf render.PDFOptions) (documentCheck, error) {
	c := documentCheck{Errors: []DryRunIssue{}, Warnings: undeclaredVariables(t, vars)}
	values, err := ct.Values(vars)
	if err != nil {
		var ve *render.VariableError
		if !errors.As(err, &ve) {
			e := renderError(err, 0)
			c.Errors = append(c.Errors, DryRunIssue{Code: e.Code, Message: e.Message, Info: e.Info})
			return c, nil
		}
		for _, v := range ve.Errors {
			c.Errors = append(c.Errors, DryRunIssue{Code: ECodeVariables, Message: v.Message, Variable: v.Variable})
		}
		return c, nil
	}
	timeout := s.renderTimeout(format)
	// The options a job of the caller's team would render with: the
	// predicted size is the file's to the byte.
	var teamID string
	if p, err := PrincipalFrom(ctx); err == nil {
		teamID = p.TeamID
	}
	opts := s.documentOptions(ctx, t, teamID, s.Now(), true)
	opts.PDF = pdf
	st, err := ct.Render(ctx, io.Discard, render.Format(format), values, opts)
	c.Predicted = Prediction{Pages: st.Pages, Images: st.Images, Rows: st.Rows, Sheets: st.Sheets, Bytes: st.Bytes}
	if st.AttachedPagesBefore+st.AttachedPagesAfter > 0 {
		c.Predicted.AttachedPages = &AttachedPages{Before: st.AttachedPagesBefore, After: st.AttachedPagesAfter}
	}
	if err != nil {
		if ctx.Err() != nil {
			return c, ctx.Err()
		}
		e := renderError(err, timeout)
		issue := DryRunIssue{Code: e.Code, Message: e.Message, Info: e.Info}
		var le *render.LimitError
		var ee *render.ExpressionError
		switch {
		case errors.As(err, &le):
			c.Predicted.reached(le.Limit, le.Actual)
		case errors.As(err, &ee):
			issue.Path = ee.Path
		}
		c.Errors = append(c.Errors, issue)
		return c, nil
	}
	c.Warnings = append(c.Warnings, s.nearLimits(c.Predicted)...)
	for _, m := range ct.MissingGlyphs(vars) {
		c.Warnings = append(c.Warnings, DryRunIssue{Variable: m.Variable, Message: m.Message})
	}
	if st.PagesUnsettled {
		c.Warnings = append(c.Warnings, DryRunIssue{Message: fmt.Sprintf("the page count does not settle: the layout depends on pages "+
			"(in a condition or a larger expression, or a section on the last page) and still changed after the last of %d layouts; "+
			"the document keeps that layout, so what it shows of pages may not match its %d pages", render.MaxLayoutPasses, st.Pages),
			Info: map[string]any{"pages": st.Pages}})
	}
	return c, nil
}

// reached records how far a render got when limit stopped it.
func (p *Prediction) reached(limit string, actual int64) {
	switch limit {
	case render.LimitPages:
		p.Pages = max(p.Pages, int(actual))
	case render.LimitImages:
		p.Images = max(p.Images, int(actual))
	case render.LimitRows:
		p.Rows = max(p.Rows, int(actual))
	case render.LimitSheets:
		p.Sheets = max(p.Sheets, int(actual))
	case render.LimitBytes:
		p.Bytes = max(p.Bytes, actual)
	}
}

// limits are the generation limits renders run under: Limits over the
// specification's.
func (s *DocumentService) limits() render.Limits {
	if s.Limits == nil {
		return render.DefaultLimits()
	}
	return s.Limits.WithDefaults()
}

// renderTimeout is the time one document of format may take.
func (s *DocumentService) renderTimeout(format string) time.Duration {
	if format == string(render.XLSX) {
		return s.limits().XLSXTimeout
	}
	return s.limits().PDFTimeout // pdf, and xml (an e-invoice alone: no layout)
}

// dryRunLimits lists the limits of a format and plan; batchSize is the
// plan's batch size for batches (0 for one document).
func (s *DocumentService) dryRunLimits(format string, plan Plan, batchSize int) DryRunLimits {
	l := s.limits()
	return DryRunLimits{Pages: l.Pages, Images: l.Images, Rows: l.Rows, Sheets: l.Sheets, Columns: l.Columns,
		Bytes: l.Bytes, MemoryBytes: l.Memory, TimeoutSeconds: int(s.renderTimeout(format).Seconds()),
		DocumentsPerMonth: plan.DocumentsPerMonth, BatchSize: batchSize}
}

// nearLimits warns about figures at 80% of their limit or more.
func (s *DocumentService) nearLimits(p Prediction) []DryRunIssue {
	l := s.limits()
	var out []DryRunIssue
	for _, f := range []struct {
		name     string
		got, max int64
		what     string
	}{
		{render.LimitPages, int64(p.Pages), int64(l.Pages), "pages"},
		{render.LimitImages, int64(p.Images), int64(l.Images), "images"},
		{render.LimitRows, int64(p.Rows), int64(l.Rows), "spreadsheet rows"},
		{render.LimitSheets, int64(p.Sheets), int64(l.Sheets), "sheets"},
		{render.LimitBytes, p.Bytes, l.Bytes, "bytes"},
	} {
		if f.max > 0 && float64(f.got) >= nearLimit*float64(f.max) {
			out = append(out, DryRunIssue{Message: fmt.Sprintf("%d %s: %d%% of the limit of %d", f.got, f.what, f.got*100/f.max, f.max),
				Info: map[string]any{"limit": f.name, "actual": f.got, "max": f.max}})
		}
	}
	return out
}

// templateWarnings lists what the template's schema probably does not
// mean (unknown keys, undeclared names), each with its path.
func templateWarnings(ct *render.Template) []DryRunIssue {
	out := []DryRunIssue{}
	for _, w := range ct.Warnings() {
		out = append(out, DryRunIssue{Path: w.Path, Message: w.Message})
	}
	return out
}

// undeclaredVariables warns about request values the template does not
// declare: they pass through, but are often a typo.
func undeclaredVariables(t *Template, vars map[string]any) []DryRunIssue {
	known := map[string]bool{}
	for _, v := range t.Variables {
		known[v.Name] = true
	}
	for _, c := range t.CalculatedVariables {
		known[c.Name] = true
	}
	for name := range t.Constants {
		known[name] = true
	}
	out := []DryRunIssue{}
	for name := range vars {
		if !known[name] {
			out = append(out, DryRunIssue{Variable: name, Message: "not declared by the template; it is passed through as it is"})
		}
	}
	slices.SortFunc(out, func(a, b DryRunIssue) int { return strings.Compare(a.Variable, b.Variable) })
	return out
}
