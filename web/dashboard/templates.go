package dashboard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"folio/app"
	"folio/render"
)

// templateList serves GET /app/templates: search and pages of the team's templates.
func (d *Dashboard) templateList(c *call) error {
	pg := pageOf(c, 20)
	search := strings.TrimSpace(c.r.URL.Query().Get("search"))
	list, total, err := d.Templates.FindTemplates(c.r.Context(), app.TemplateFilter{Search: search, Page: pg})
	if err != nil {
		return err
	}
	return d.render(c, "templates", "Templates", map[string]any{"Templates": list, "Search": search, "Pager": newPager(c, pg, total)})
}

// templateNew serves GET /app/templates/new: pick an example and a name.
func (d *Dashboard) templateNew(c *call) error {
	return d.render(c, "templates_new", "New template", map[string]any{"Examples": examples, "Example": "invoice"})
}

// templateCreate serves POST /app/templates: a new template from an example.
func (d *Dashboard) templateCreate(c *call) error {
	ex := findExample(c.form("example"))
	if ex == nil {
		ex = examples[0]
	}
	var in app.TemplateInput
	if err := json.Unmarshal(ex.Body, &in); err != nil {
		return err
	}
	name := c.form("name")
	in.Name = &name
	t, err := d.Templates.CreateTemplate(c.r.Context(), in)
	if err != nil {
		return d.formError(c, err, "templates_new", "New template", map[string]any{"Examples": examples, "Example": ex.ID, "Name": name})
	}
	return c.redirect("/app/templates/"+url.PathEscape(t.ID)+"?example="+ex.ID, "ok", "Template “"+t.Name+"” created. Edit it, preview it, then publish it.")
}

// editor is what the template editor shows: the stored template, or the
// text the user submitted when saving failed.
type editor struct {
	Schema, Variables, Constants, Calculated string
	Name, Description                        string
	Formats                                  []string
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
		Name: t.Name, Description: t.Description, Formats: t.OutputFormats}
}

// sampleField is one input of the sample-values form.
type sampleField struct {
	Name, Type, Description, Value string
	Required, Multiline            bool
}

// sampleFields builds the sample form from the variables, filled with the
// example's values, else the defaults.
func sampleFields(t *app.Template, ex *example) []sampleField {
	var out []sampleField
	for _, v := range t.Variables {
		f := sampleField{Name: v.Name, Type: v.Type, Description: v.Description, Required: v.Required,
			Multiline: v.Type == "object" || v.Type == "array"}
		val := v.DefaultValue
		if ex != nil {
			if ev, ok := ex.Vars[v.Name]; ok {
				val = ev
			}
		}
		switch x := val.(type) {
		case nil:
		case string:
			f.Value = x
		default:
			ind := ""
			if f.Multiline {
				ind = "  "
			}
			b, _ := json.MarshalIndent(x, "", ind)
			f.Value = string(b)
		}
		out = append(out, f)
	}
	return out
}

// sampleValues reads the sample form into variables, by declared type. Empty
// fields are left out so defaults apply.
func sampleValues(t *app.Template, form url.Values) (json.RawMessage, error) {
	vals := map[string]any{}
	for _, v := range t.Variables {
		s := strings.TrimSpace(form.Get("var." + v.Name))
		if s == "" {
			continue
		}
		field := "variables." + v.Name
		switch v.Type {
		case "number":
			n, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, app.ErrInvalid(field, "%s must be a number", v.Name)
			}
			vals[v.Name] = n
		case "integer":
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, app.ErrInvalid(field, "%s must be a whole number", v.Name)
			}
			vals[v.Name] = n
		case "boolean":
			vals[v.Name] = s == "true"
		case "object", "array":
			var x any
			if err := json.Unmarshal([]byte(s), &x); err != nil {
				return nil, app.ErrInvalid(field, "%s must be JSON (%v)", v.Name, err)
			}
			vals[v.Name] = x
		default:
			vals[v.Name] = s
		}
	}
	return json.Marshal(vals)
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
	data := map[string]any{"T": t, "Ed": ed, "Samples": sampleFields(t, findExample(c.r.URL.Query().Get("example"))),
		"Versions": versions, "VersionCount": total, "CanEdit": t.Permission != "view" && app.CanWrite(c.P.Role),
		"Example": c.r.URL.Query().Get("example")}
	if fail != nil {
		data["error"] = errorText(fail)
		data["Info"] = fail.Info
	}
	return d.render(c, "templates_edit", t.Name, data, status)
}

// templateSave serves POST /app/templates/{id}: saves the draft from the
// editor form. On an error the form comes back with the text as typed.
func (d *Dashboard) templateSave(c *call) error {
	ref := app.TemplateRef{ID: c.r.PathValue("id")}
	t, err := d.Templates.FindTemplate(c.r.Context(), ref)
	if err != nil {
		return err
	}
	ed := editor{Schema: c.r.PostFormValue("schema"), Variables: c.r.PostFormValue("variables"), Constants: c.r.PostFormValue("constants"),
		Calculated: c.r.PostFormValue("calculatedVariables"), Name: c.form("name"), Description: c.form("description"), Formats: c.r.PostForm["outputFormats"]}
	upd, perr := ed.update()
	if perr == nil {
		saved, err := d.Templates.UpdateTemplate(c.r.Context(), ref, upd)
		if err == nil {
			return c.redirect("/app/templates/"+url.PathEscape(saved.ID), "ok", "Draft saved. Publish it to make it the version API calls use.")
		}
		perr = err
	}
	var e *app.Error
	if !errors.As(perr, &e) {
		return perr
	}
	return d.renderEditor(c, t, ed, e, statusOf(e.Code))
}

// update parses the editor's JSON fields into a template update.
func (ed editor) update() (app.TemplateUpdate, error) {
	upd := app.TemplateUpdate{Name: &ed.Name, Description: &ed.Description, OutputFormats: ed.Formats}
	if upd.OutputFormats == nil {
		upd.OutputFormats = []string{}
	}
	if err := jsonField("schema", ed.Schema, &upd.Schema); err != nil {
		return upd, err
	}
	var vars []render.Variable
	var consts map[string]any
	var calc []render.CalculatedVariable
	if err := jsonField("variables", ed.Variables, &vars); err != nil {
		return upd, err
	}
	if err := jsonField("constants", ed.Constants, &consts); err != nil {
		return upd, err
	}
	if err := jsonField("calculatedVariables", ed.Calculated, &calc); err != nil {
		return upd, err
	}
	if vars == nil {
		vars = []render.Variable{}
	}
	upd.Variables, upd.Constants, upd.CalculatedVariables = &vars, &consts, &calc
	return upd, nil
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

// draftInput is what the editor's script saves before a live preview.
type draftInput struct {
	Schema              json.RawMessage              `json:"schema"`
	Variables           *[]render.Variable           `json:"variables"`
	Constants           *map[string]any              `json:"constants"`
	CalculatedVariables *[]render.CalculatedVariable `json:"calculatedVariables"`
}

// templateDraft serves POST /app/templates/{id}/draft (JSON, from the
// editor's script): saves schema and variables so the preview renders them.
func (d *Dashboard) templateDraft(c *call) error {
	var in draftInput
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	t, err := d.Templates.UpdateTemplate(c.r.Context(), app.TemplateRef{ID: c.r.PathValue("id")},
		app.TemplateUpdate{Schema: in.Schema, Variables: in.Variables, Constants: in.Constants, CalculatedVariables: in.CalculatedVariables})
	if err != nil {
		return err
	}
	writeJSON(c.w, http.StatusOK, map[string]any{"saved": true, "hasDraft": t.HasDraft, "updatedAt": t.UpdatedAt})
	return nil
}

// templatePreview serves POST /app/templates/{id}/preview: the sample form
// rendered as the draft would be (the API's preview; nothing is recorded).
func (d *Dashboard) templatePreview(c *call) error {
	ref := app.TemplateRef{ID: c.r.PathValue("id")}
	t, err := d.Templates.FindTemplate(c.r.Context(), ref)
	if err != nil {
		return err
	}
	c.parseForm()
	vars, err := sampleValues(t, c.r.PostForm)
	if err != nil {
		return err
	}
	format := c.form("format")
	doc, st, err := d.Documents.Preview(c.r.Context(), t.ID, app.PreviewInput{Variables: vars, Format: format})
	if err != nil {
		return err
	}
	ct := "application/pdf"
	if format == "xlsx" {
		ct = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	}
	h := c.w.Header()
	h.Set("Content-Type", ct)
	h.Set("Content-Disposition", `inline; filename="preview.`+map[bool]string{true: "xlsx", false: "pdf"}[format == "xlsx"]+`"`)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Folio-Pages", strconv.Itoa(st.Pages))
	h.Set("X-Folio-Bytes", strconv.Itoa(len(doc)))
	_, err = c.w.Write(doc)
	return err
}

// validateSchema serves POST /app/templates/validate-schema (JSON): the
// editor's messages as you type.
func (d *Dashboard) validateSchema(c *call) error {
	var in app.ValidateSchemaInput
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	v, err := d.Templates.ValidateSchema(c.r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(c.w, http.StatusOK, v)
	return nil
}

// validateVariables serves POST /app/templates/validate-variables (JSON).
func (d *Dashboard) validateVariables(c *call) error {
	var in app.ValidateVariablesInput
	if err := decodeJSON(c, &in); err != nil {
		return err
	}
	v, err := d.Templates.ValidateVariables(c.r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(c.w, http.StatusOK, v)
	return nil
}

// templatePublish serves POST /app/templates/{id}/publish with release notes.
func (d *Dashboard) templatePublish(c *call) error {
	id := c.r.PathValue("id")
	v, err := d.Templates.PublishTemplate(c.r.Context(), app.TemplateRef{ID: id}, app.PublishInput{ReleaseNotes: c.form("releaseNotes")})
	msg := ""
	if err == nil {
		msg = fmt.Sprintf("Published version %d. API calls without a version now use it.", v.Version)
	}
	return c.done(err, "/app/templates/"+url.PathEscape(id), msg)
}

// templateGenerate serves POST /app/templates/{id}/generate: one real
// document from the sample values (a job, charged like an API call).
func (d *Dashboard) templateGenerate(c *call) error {
	id := c.r.PathValue("id")
	back := "/app/templates/" + url.PathEscape(id)
	t, err := d.Templates.FindTemplate(c.r.Context(), app.TemplateRef{ID: id})
	if err != nil {
		return err
	}
	c.parseForm()
	vars, err := sampleValues(t, c.r.PostForm)
	if err != nil {
		return c.done(err, back, "")
	}
	version := json.RawMessage(`"draft"`)
	if !t.HasDraft || c.form("version") == "latest" {
		version = nil
	}
	j, err := d.Documents.Generate(c.r.Context(), app.GenerateInput{TemplateID: t.ID, Format: c.form("format"), Variables: vars, Version: version}, true)
	if err != nil {
		return c.done(err, back, "")
	}
	return c.redirect("/app/jobs/"+url.PathEscape(j.JobID), "ok", "Document queued.")
}

// templateDuplicate serves POST /app/templates/{id}/duplicate.
func (d *Dashboard) templateDuplicate(c *call) error {
	t, err := d.Templates.DuplicateTemplate(c.r.Context(), app.TemplateRef{ID: c.r.PathValue("id")})
	if err != nil {
		return c.done(err, "/app/templates/"+url.PathEscape(c.r.PathValue("id")), "")
	}
	return c.redirect("/app/templates/"+url.PathEscape(t.ID), "ok", "Created “"+t.Name+"”.")
}

// templateDelete serves POST /app/templates/{id}/delete.
func (d *Dashboard) templateDelete(c *call) error {
	id := c.r.PathValue("id")
	if err := d.Templates.DeleteTemplate(c.r.Context(), app.TemplateRef{ID: id}); err != nil {
		return c.done(err, "/app/templates/"+url.PathEscape(id), "")
	}
	return c.redirect("/app/templates", "ok", "Template deleted.")
}

// templateVersions serves GET /app/templates/{id}/versions.
func (d *Dashboard) templateVersions(c *call) error {
	ref := app.TemplateRef{ID: c.r.PathValue("id")}
	t, err := d.Templates.FindTemplate(c.r.Context(), ref)
	if err != nil {
		return err
	}
	pg := pageOf(c, 20)
	versions, total, err := d.Templates.FindTemplateVersions(c.r.Context(), ref, pg)
	if err != nil {
		return err
	}
	return d.render(c, "templates_versions", t.Name+" — versions", map[string]any{"T": t, "Versions": versions, "Pager": newPager(c, pg, total),
		"CanEdit": t.Permission != "view" && app.CanWrite(c.P.Role)})
}

// templateRestore serves POST /app/templates/{id}/versions/{version}/restore.
func (d *Dashboard) templateRestore(c *call) error {
	id := c.r.PathValue("id")
	v, err := d.Templates.RestoreTemplateVersion(c.r.Context(), app.TemplateRef{ID: id}, c.r.PathValue("version"), app.PublishInput{ReleaseNotes: c.form("releaseNotes")})
	msg := ""
	if err == nil {
		msg = fmt.Sprintf("Restored: version %d is a copy of the version you picked, and the draft now holds it.", v.Version)
	}
	return c.done(err, "/app/templates/"+url.PathEscape(id)+"/versions", msg)
}

// decodeJSON reads a script's JSON body (at most maxForm bytes).
func decodeJSON(c *call, v any) error {
	if err := json.NewDecoder(c.r.Body).Decode(v); err != nil {
		return &app.Error{Code: app.ECodeInvalidJSON, Message: "malformed JSON: " + err.Error()}
	}
	return nil
}
