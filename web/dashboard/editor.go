package dashboard

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"folio/app"
	"folio/render"
)

// editor is what the template editor shows: the stored template, or the
// text the user submitted when saving failed.
type editor struct {
	Schema, Variables, Constants, Calculated string
	Name, Description                        string
	Formats                                  []string
	// Fields are the sample values as text, by variable name.
	Fields map[string]string
}

func editorOf(t *app.Template) editor {
	ind := func(v any) string {
		b, _ := json.MarshalIndent(v, "", "  ")
		return string(b)
	}
	var schema bytes.Buffer
	if json.Indent(&schema, t.Schema, "", "  ") != nil {
		schema.Write(t.Schema)
	}
	vars, consts, calc := any(t.Variables), any(t.Constants), any(t.CalculatedVariables)
	if t.Variables == nil {
		vars = []any{}
	}
	if t.Constants == nil {
		consts = map[string]any{}
	}
	if t.CalculatedVariables == nil {
		calc = []any{}
	}
	return editor{Schema: schema.String(), Variables: ind(vars), Constants: ind(consts), Calculated: ind(calc),
		Name: t.Name, Description: t.Description, Formats: t.OutputFormats, Fields: fieldsOf(t.Variables, t.SampleData)}
}

// sampleField is one input of the sample-values form.
type sampleField struct {
	Name, Type, Description, Value, Default string
	Required, Multiline                     bool
}

// multiline reports whether a variable's sample value is JSON text.
func multiline(typ string) bool { return typ == "object" || typ == "array" }

// sampleFields builds the sample form: one input per declared variable,
// holding its text; a default shows as the placeholder.
func sampleFields(vars []render.Variable, fields map[string]string) []sampleField {
	var out []sampleField
	for _, v := range vars {
		f := sampleField{Name: v.Name, Type: v.Type, Description: v.Description, Required: v.Required,
			Multiline: multiline(v.Type), Value: fields[v.Name]}
		if v.DefaultValue != nil {
			f.Default = valueText(v.DefaultValue, false)
		}
		out = append(out, f)
	}
	return out
}

// fieldsOf turns sample data into the form's text.
func fieldsOf(vars []render.Variable, data map[string]any) map[string]string {
	out := map[string]string{}
	for _, v := range vars {
		if val, ok := data[v.Name]; ok && val != nil {
			out[v.Name] = valueText(val, multiline(v.Type))
		}
	}
	return out
}

// valueText is a value as a form shows it: text as it is, anything else as
// JSON, indented in the large fields.
func valueText(v any, indent bool) string {
	if s, ok := v.(string); ok {
		return s
	}
	ind := ""
	if indent {
		ind = "  "
	}
	b, _ := json.MarshalIndent(v, "", ind)
	return string(b)
}

// formFields reads the sample form's fields (var.<name>) from a posted form.
func formFields(form url.Values) map[string]string {
	out := map[string]string{}
	for k, v := range form {
		if name, ok := strings.CutPrefix(k, "var."); ok && len(v) > 0 {
			out[name] = v[0]
		}
	}
	return out
}

// sampleValues reads the sample form's text into values, by declared type.
// It starts from base (stored sample data, whose keys for undeclared
// variables are kept); an empty field leaves its variable out, so its
// default applies.
func sampleValues(vars []render.Variable, fields map[string]string, base map[string]any) (map[string]any, error) {
	vals := map[string]any{}
	for k, v := range base {
		vals[k] = v
	}
	for _, v := range vars {
		s := strings.TrimSpace(fields[v.Name])
		delete(vals, v.Name)
		if s == "" {
			continue
		}
		field := "sampleData." + v.Name
		switch v.Type {
		case "number":
			n, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, app.ErrInvalid(field, "the sample value of %s must be a number", v.Name)
			}
			vals[v.Name] = n
		case "integer":
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, app.ErrInvalid(field, "the sample value of %s must be a whole number", v.Name)
			}
			vals[v.Name] = n
		case "boolean":
			vals[v.Name] = s == "true"
		case "object", "array":
			var x any
			if err := json.Unmarshal([]byte(s), &x); err != nil {
				return nil, app.ErrInvalid(field, "the sample value of %s must be JSON (%v)", v.Name, err)
			}
			vals[v.Name] = x
		default:
			vals[v.Name] = s
		}
	}
	return vals, nil
}

// templateEdit serves GET /app/templates/{id}: the editor with its preview
// pane, sample values, publishing and the newest versions.
func (d *Dashboard) templateEdit(c *call) error {
	t, err := d.Templates.FindTemplate(c.r.Context(), app.TemplateRef{ID: c.r.PathValue("id")})
	if err != nil {
		return err
	}
	return d.renderEditor(c, t, editorOf(t), nil, http.StatusOK)
}

func (d *Dashboard) renderEditor(c *call, t *app.Template, ed editor, fail *app.Error, status int) error {
	versions, total, err := d.Templates.FindTemplateVersions(c.r.Context(), app.TemplateRef{ID: t.ID}, app.Page{Page: 1, Limit: 5})
	if err != nil {
		return err
	}
	// The sample form follows the variables as typed, when they parse.
	vars := t.Variables
	var typed []render.Variable
	if json.Unmarshal([]byte(ed.Variables), &typed) == nil {
		vars = typed
	}
	formats := ed.Formats
	if len(formats) == 0 {
		formats = t.OutputFormats
	}
	canEdit := t.Permission != "view" && app.CanWrite(c.P.Role)
	data := map[string]any{"T": t, "Ed": ed, "Samples": sampleFields(vars, ed.Fields), "Formats": formats,
		"Versions": versions, "VersionCount": total, "CanEdit": canEdit}
	if canEdit {
		// The asset picker lists the team's assets, whose references the
		// editor inserts at the cursor.
		assets, _, err := d.Assets.FindAssets(c.r.Context(), app.AssetFilter{Page: app.Page{Page: 1, Limit: app.MaxLimit}})
		if err != nil {
			return err
		}
		data["Assets"] = assets
	}
	if fail != nil {
		data["error"] = errorText(fail)
		data["Info"] = fail.Info
	}
	return d.render(c, "templates_edit", t.Name, data, status)
}

// editorForm reads the editor's form as typed.
func editorForm(c *call) editor {
	c.parseForm()
	return editor{Schema: c.r.PostFormValue("schema"), Variables: c.r.PostFormValue("variables"), Constants: c.r.PostFormValue("constants"),
		Calculated: c.r.PostFormValue("calculatedVariables"), Name: c.form("name"), Description: c.form("description"),
		Formats: c.r.PostForm["outputFormats"], Fields: formFields(c.r.PostForm)}
}

// templateSave serves POST /app/templates/{id}: saves the draft and the
// sample values from the editor form, the only way the editor stores
// anything. On an error the form comes back with the text as typed.
func (d *Dashboard) templateSave(c *call) error {
	ref := app.TemplateRef{ID: c.r.PathValue("id")}
	t, err := d.Templates.FindTemplate(c.r.Context(), ref)
	if err != nil {
		return err
	}
	ed := editorForm(c)
	upd, perr := ed.update(t.SampleData)
	if perr == nil {
		saved, err := d.Templates.UpdateTemplate(c.r.Context(), ref, upd)
		if err == nil {
			msg := "Saved. Publish to make this draft the version API calls use."
			if !saved.HasDraft {
				msg = "Saved. The draft equals the published version " + strconv.Itoa(saved.PublishedVersion) + "."
			}
			return c.redirect("/app/templates/"+url.PathEscape(saved.ID), "ok", msg)
		}
		perr = err
	}
	var e *app.Error
	if !errors.As(perr, &e) {
		return perr
	}
	return d.renderEditor(c, t, ed, e, statusOf(e.Code))
}

// update parses the editor's JSON fields and sample values into a template
// update; sample values of variables the editor does not declare are kept
// from stored.
func (ed editor) update(stored map[string]any) (app.TemplateUpdate, error) {
	upd := app.TemplateUpdate{Name: &ed.Name, Description: &ed.Description, OutputFormats: ed.Formats}
	if upd.OutputFormats == nil {
		upd.OutputFormats = []string{}
	}
	def, err := ed.definition()
	if err != nil {
		return upd, err
	}
	sample, err := sampleValues(def.Variables, ed.Fields, stored)
	if err != nil {
		return upd, err
	}
	upd.Schema = def.Schema
	upd.Variables, upd.Constants, upd.CalculatedVariables, upd.SampleData = &def.Variables, &def.Constants, &def.CalculatedVariables, &sample
	return upd, nil
}

// definition parses the editor's JSON fields.
func (ed editor) definition() (*app.TemplateDefinition, error) {
	def := &app.TemplateDefinition{}
	if err := jsonField("schema", ed.Schema, &def.Schema); err != nil {
		return nil, err
	}
	if err := jsonField("variables", ed.Variables, &def.Variables); err != nil {
		return nil, err
	}
	if err := jsonField("constants", ed.Constants, &def.Constants); err != nil {
		return nil, err
	}
	if err := jsonField("calculatedVariables", ed.Calculated, &def.CalculatedVariables); err != nil {
		return nil, err
	}
	if def.Variables == nil {
		def.Variables = []render.Variable{}
	}
	return def, nil
}

// jsonField decodes one JSON text field; empty means absent.
func jsonField(field, text string, v any) error {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(text), v); err != nil {
		return app.ErrInvalid(field, "%s is not valid JSON: %v", field, err)
	}
	return nil
}

// previewRequest is what the editor's script sends to preview the text
// being edited: the definition's JSON fields, the sample form's text and
// the format; view "table" asks for an XLSX as an HTML table.
type previewRequest struct {
	Schema              json.RawMessage   `json:"schema"`
	Variables           json.RawMessage   `json:"variables"`
	Constants           json.RawMessage   `json:"constants"`
	CalculatedVariables json.RawMessage   `json:"calculatedVariables"`
	Fields              map[string]string `json:"fields"`
	Format              string            `json:"format"`
	View                string            `json:"view"`
}

// templatePreview serves POST /app/templates/{id}/preview: the editor's
// text rendered with its sample values, unsaved (the API's preview of a
// definition: no draft, no job). The script sends JSON; without script the
// editor form's Preview button posts the form and opens the file.
func (d *Dashboard) templatePreview(c *call) error {
	t, err := d.Templates.FindTemplate(c.r.Context(), app.TemplateRef{ID: c.r.PathValue("id")})
	if err != nil {
		return err
	}
	var in previewRequest
	var def *app.TemplateDefinition
	if strings.HasPrefix(c.r.Header.Get("Content-Type"), "application/json") {
		if err := decodeJSON(c, &in); err != nil {
			return err
		}
		ed := editor{Schema: string(in.Schema), Variables: string(in.Variables), Constants: string(in.Constants), Calculated: string(in.CalculatedVariables)}
		if def, err = ed.definition(); err != nil {
			return err
		}
	} else {
		ed := editorForm(c)
		in.Fields, in.Format = ed.Fields, c.form("format")
		if def, err = ed.definition(); err != nil {
			return err
		}
	}
	if len(def.Schema) == 0 { // nothing typed: the stored draft
		def = &app.TemplateDefinition{Schema: t.Schema, Variables: t.Variables, Constants: t.Constants, CalculatedVariables: t.CalculatedVariables}
	}
	values, err := sampleValues(def.Variables, in.Fields, nil)
	if err != nil {
		return err
	}
	vars, err := json.Marshal(values)
	if err != nil {
		return err
	}
	doc, st, err := d.Documents.PreviewDefinition(c.r.Context(), app.PreviewDefinitionInput{Template: def, Variables: vars, Format: in.Format})
	if err != nil {
		return err
	}
	h := c.w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Folio-Pages", strconv.Itoa(st.Pages))
	h.Set("X-Folio-Sheets", strconv.Itoa(st.Sheets))
	h.Set("X-Folio-Bytes", strconv.Itoa(len(doc)))
	if in.Format == "xlsx" && in.View == "table" {
		table, err := xlsxTable(doc)
		if err != nil {
			return err
		}
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("X-Folio-Fragment", "xlsx-table")
		_, err = c.w.Write(table)
		return err
	}
	if in.Format == "xlsx" {
		h.Set("Content-Type", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
		h.Set("Content-Disposition", `attachment; filename="preview.xlsx"`)
	} else {
		h.Set("Content-Type", "application/pdf")
		h.Set("Content-Disposition", `inline; filename="preview.pdf"`)
	}
	_, err = c.w.Write(doc)
	return err
}
