package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

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
type ValidateSchemaInput struct {
	TemplateType string          `json:"templateType"`
	Schema       json.RawMessage `json:"schema"`
}

// ValidateSchema checks a schema without storing anything.
func (s *TemplateService) ValidateSchema(ctx context.Context, in ValidateSchemaInput) (*Validation, error) {
	if _, err := PrincipalFrom(ctx); err != nil {
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
	if _, err := s.Engine.Compile(render.Definition{Schema: in.Schema}); err != nil {
		var se *render.SchemaError
		if !errors.As(err, &se) {
			return nil, err
		}
		v.Errors = se.Issues
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

// PreviewInput is the body of POST /api/templates/:id/preview.
type PreviewInput struct {
	Variables json.RawMessage `json:"variables"`
	Format    string          `json:"format"`
}

// Preview renders a template without recording a job, charging quota or
// sending webhooks.
func (s *DocumentService) Preview(ctx context.Context, ref string, in PreviewInput) ([]byte, render.Stats, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, render.Stats{}, err
	}
	if err := p.Require(PermTemplatesRead); err != nil {
		return nil, render.Stats{}, err
	}
	if in.Format == "" {
		in.Format = string(render.PDF)
	}
	// The working state (draft) of an own or shared template: what an
	// editor previews.
	t, err := s.Templates.FindTemplate(ctx, TemplateRef{ID: ref})
	if err != nil {
		return nil, render.Stats{}, err
	}
	if in.Format != string(render.PDF) && in.Format != string(render.XLSX) {
		return nil, render.Stats{}, ErrInvalid("format", "format must be pdf or xlsx")
	}
	vars, err := decodeObject("variables", in.Variables)
	if err != nil {
		return nil, render.Stats{}, err
	}
	ct, err := s.Templates.Compiled(t)
	if err != nil {
		return nil, render.Stats{}, err
	}
	values, err := ct.Values(vars)
	if err != nil {
		return nil, render.Stats{}, variableError(err)
	}
	timeout := renderTimeout(in.Format)
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var buf bytes.Buffer
	st, err := ct.Render(rctx, &buf, render.Format(in.Format), values, s.renderOptions())
	if err != nil {
		return nil, st, renderError(err, timeout)
	}
	return buf.Bytes(), st, nil
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
