package app

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"time"

	"folio/render"
)

// ExportFormat marks a Folio template export file.
const (
	ExportFormat        = "folio-template"
	ExportFormatVersion = 1
)

// TemplateDefinition is a template's portable definition: what an export
// file carries and an import reads.
type TemplateDefinition struct {
	Name                string                      `json:"name"`
	Slug                string                      `json:"slug"`
	Description         string                      `json:"description"`
	TemplateType        string                      `json:"templateType"`
	OutputFormats       []string                    `json:"outputFormats"`
	Schema              json.RawMessage             `json:"schema"`
	Variables           []render.Variable           `json:"variables"`
	Constants           map[string]any              `json:"constants"`
	CalculatedVariables []render.CalculatedVariable `json:"calculatedVariables"`
	SampleData          map[string]any              `json:"sampleData"`
}

// TemplateExport is the JSON file of GET /api/templates/:id/export.
type TemplateExport struct {
	Format           string             `json:"format"`
	FormatVersion    int                `json:"formatVersion"`
	ExportedAt       time.Time          `json:"exportedAt"`
	SourceTemplateID string             `json:"sourceTemplateId"`
	PublishedVersion int                `json:"publishedVersion"`
	Template         TemplateDefinition `json:"template"`
	// Assets are the assets the template's schema names, with their bytes:
	// an import into another team or install brings them along.
	Assets []ExportedAsset `json:"assets,omitempty"`
}

// ExportedAsset is an asset inside an export file. Ref is how the schema
// names it (after "asset:"): its name or its id at export time.
type ExportedAsset struct {
	Ref           string `json:"ref"`
	Name          string `json:"name"`
	Kind          string `json:"kind"`
	SHA256        string `json:"sha256"`
	ContentBase64 string `json:"contentBase64"`
}

// ExportTemplate returns the full definition of one of the team's templates
// (its working copy).
func (s *TemplateService) ExportTemplate(ctx context.Context, ref TemplateRef) (*TemplateExport, error) {
	_, t, err := s.access(ctx, ref, actCopy)
	if err != nil {
		return nil, err
	}
	assets, err := s.exportAssets(ctx, t)
	if err != nil {
		return nil, err
	}
	return &TemplateExport{
		Assets: assets,
		Format: ExportFormat, FormatVersion: ExportFormatVersion, ExportedAt: s.Now().UTC(), SourceTemplateID: t.ID,
		PublishedVersion: t.PublishedVersion,
		Template: TemplateDefinition{
			Name: t.Name, Slug: t.Slug, Description: t.Description, TemplateType: t.TemplateType, OutputFormats: t.OutputFormats,
			Schema: t.Schema, Variables: t.Variables, Constants: t.Constants, CalculatedVariables: t.CalculatedVariables,
			SampleData: t.SampleData,
		},
	}, nil
}

// Duplicate handling of an import whose name is taken.
const (
	ImportRename    = "rename"
	ImportSkip      = "skip"
	ImportOverwrite = "overwrite"
)

// ImportInput is the multipart form of POST /api/templates/import.
type ImportInput struct {
	// File is the uploaded file; nil when the form has none.
	File              []byte
	DuplicateHandling string
	// PathType is the type of a typed path (/api/templates/attachment/import).
	PathType string
}

// ImportResult is the answer of an import. Status is created, renamed,
// skipped or overwritten.
type ImportResult struct {
	Status     string `json:"status"`
	TemplateID string `json:"templateId"`
	Message    string `json:"message"`
}

// ImportTemplate creates a template from an export file (or any JSON
// object holding a template definition, such as a saved GET response). A
// taken name is renamed (" (Imported)" appended, the default), skipped, or
// overwrites the existing template's working copy.
func (s *TemplateService) ImportTemplate(ctx context.Context, in ImportInput) (*ImportResult, error) {
	p, err := s.creator(ctx)
	if err != nil {
		return nil, err
	}
	if in.File == nil {
		return nil, &Error{Code: ECodeImportNoFile, Message: "no file uploaded: send the export file as the multipart field \"file\""}
	}
	mode := in.DuplicateHandling
	if mode == "" {
		mode = ImportRename
	}
	if mode != ImportRename && mode != ImportSkip && mode != ImportOverwrite {
		return nil, ErrInvalid("duplicateHandling", "duplicateHandling must be rename, skip or overwrite")
	}
	def, assets, err := readDefinition(in.File)
	if err != nil {
		return nil, err
	}
	typ, err := templateType(&def.TemplateType, in.PathType)
	if err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	t := &Template{
		ID: NewID("tpl"), TeamID: p.TeamID, ShortID: "etpl_" + RandomString(12), TemplateType: typ, Description: def.Description,
		Schema: def.Schema, Variables: def.Variables, Constants: def.Constants, CalculatedVariables: def.CalculatedVariables,
		SampleData: def.SampleData, CreatedAt: now, UpdatedAt: now, CreatedBy: p.UserID,
	}
	bad := func(err error) error {
		var e *Error
		if errors.As(err, &e) {
			return (&Error{Code: ECodeImportInvalid, Message: "import data invalid: " + e.Message}).WithInfo("cause", e.Code, "details", e.Info)
		}
		return err
	}
	if t.Name, err = checkTemplateName(def.Name); err != nil {
		return nil, bad(err)
	}
	if t.Slug, err = templateSlug(&def.Slug, t.Name); err != nil {
		if t.Slug, err = templateSlug(nil, t.Name); err != nil {
			return nil, bad(err)
		}
	}
	if def.OutputFormats == nil {
		return nil, bad(ErrRequired("outputFormats"))
	}
	if t.OutputFormats, err = checkFormats(def.OutputFormats); err != nil {
		return nil, bad(err)
	}
	if len(def.Schema) == 0 || string(def.Schema) == "null" {
		return nil, bad(ErrRequired("schema"))
	}
	t.normalize()
	if err := checkSampleData(t.SampleData); err != nil {
		return nil, bad(err)
	}
	if err := s.checkImport(ctx, p.TeamID, t, assets); err != nil {
		return nil, bad(err)
	}

	existing, err := s.Templates.FindTemplateByName(ctx, p.TeamID, t.Name)
	if len(assets) > 0 && !(err == nil && mode == ImportSkip) {
		if t.Schema, err = s.importAssets(ctx, t.Schema, assets); err != nil {
			return nil, err
		}
		ctx = s.Assets.Meta.Repin(ctx) // the fonts just stored are the team's now
		existing, err = s.Templates.FindTemplateByName(ctx, p.TeamID, t.Name)
	}
	switch {
	case ErrorCode(err) == ECodeTemplateNotFound:
		if err := s.create(ctx, p, t); err != nil {
			return nil, err
		}
		return &ImportResult{Status: "created", TemplateID: t.ID, Message: "template " + t.Name + " imported"}, nil
	case err != nil:
		return nil, err
	}
	switch mode {
	case ImportSkip:
		return &ImportResult{Status: "skipped", TemplateID: existing.ID, Message: "a template named " + t.Name + " already exists; nothing imported"}, nil
	case ImportOverwrite:
		if existing.TemplateType != t.TemplateType {
			return nil, Errorf(ECodeTemplateType, "cannot overwrite %s: it is an %s template and the file holds an %s template",
				existing.ID, existing.TemplateType, t.TemplateType)
		}
		existing.Description, existing.OutputFormats, existing.Schema = t.Description, t.OutputFormats, t.Schema
		existing.Variables, existing.Constants, existing.CalculatedVariables = t.Variables, t.Constants, t.CalculatedVariables
		existing.SampleData = t.SampleData
		existing.UpdatedAt = now
		if err := s.Templates.UpdateTemplate(ctx, existing); err != nil {
			return nil, err
		}
		s.record(ctx, p, existing, ActivityTemplateUpdated, map[string]any{"import": "overwrite"})
		return &ImportResult{Status: "overwritten", TemplateID: existing.ID,
			Message: "template " + existing.Name + " overwritten with the imported definition (publish to release it)"}, nil
	}
	if err := s.createNamed(ctx, p, t, t.Name, " (Imported)"); err != nil {
		return nil, err
	}
	return &ImportResult{Status: "renamed", TemplateID: t.ID, Message: "a template with that name exists; imported as " + t.Name}, nil
}

// readDefinition parses an import file: an export file ({format, template})
// or a bare template object.
func readDefinition(file []byte) (*TemplateDefinition, []ExportedAsset, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(file, &top); err != nil || top == nil {
		return nil, nil, &Error{Code: ECodeImportNotJSON, Message: "the uploaded file is not a JSON object"}
	}
	var assets []ExportedAsset
	if raw, ok := top["assets"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &assets); err != nil {
			return nil, nil, (&Error{Code: ECodeImportInvalid, Message: "import data invalid: assets must be an array of {ref, name, kind, contentBase64}"}).WithInfo("field", "assets")
		}
	}
	raw := json.RawMessage(file)
	if inner, ok := top["template"]; ok && len(inner) > 0 && inner[0] == '{' {
		raw = inner
	}
	var def TemplateDefinition
	if err := json.Unmarshal(raw, &def); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, nil, (&Error{Code: ECodeImportInvalid, Message: "import data invalid: " + te.Field + " has the wrong type"}).WithInfo("field", te.Field)
		}
		return nil, nil, &Error{Code: ECodeImportInvalid, Message: "import data invalid: " + err.Error()}
	}
	return &def, assets, nil
}

// checkImport compiles an imported template with the importing team's
// fonts and the font assets the file carries (stored only after the
// check), so a template naming its own font as asset:<ref> imports.
func (s *TemplateService) checkImport(ctx context.Context, teamID string, t *Template, assets []ExportedAsset) error {
	eng, _, err := s.engineFor(ctx, teamID)
	if err != nil {
		return err
	}
	var extra []render.FontFamily
	for _, ea := range assets {
		if ea.Kind != AssetFont || ea.Ref == "" {
			continue
		}
		data, err := base64.StdEncoding.DecodeString(ea.ContentBase64)
		if err != nil {
			continue // importAssets says what is wrong with it
		}
		extra = append(extra, render.FontFamily{Name: ea.Ref, Regular: data})
	}
	if len(extra) > 0 {
		if eng, err = eng.WithFonts(extra...); err != nil {
			return errAsset("%s", upperFirst(err.Error()))
		}
	}
	if _, err := eng.Compile(t.Definition()); err != nil {
		return schemaError(err)
	}
	return nil
}
