package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"folio/app"
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
	in.SampleData = ex.Vars // kept with the template: every editor starts from them
	t, err := d.Templates.CreateTemplate(c.r.Context(), in)
	if err != nil {
		// The message shows on the page, by the field it is about (the form
		// is novalidate: no browser bubble that vanishes).
		data := map[string]any{"Examples": examples, "Example": ex.ID, "Name": name}
		var e *app.Error
		if errors.As(err, &e) && (e.Info["field"] == "name" || e.Code == app.ECodeTemplateExists) {
			data["NameError"] = nameError(err, name)
			return d.render(c, "templates_new", "New template", data, statusOf(e.Code))
		}
		return d.formError(c, err, "templates_new", "New template", data)
	}
	return c.redirect("/app/templates/"+url.PathEscape(t.ID), "ok", "Template “"+t.Name+"” created. Edit it, preview it, then publish it.")
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
	values, err := sampleValues(t.Variables, formFields(c.r.PostForm), nil)
	if err != nil {
		return c.done(err, back, "")
	}
	vars, err := json.Marshal(values)
	if err != nil {
		return err
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

// nameError says what is wrong with a new template's name, in words.
func nameError(err error, name string) string {
	switch {
	case strings.TrimSpace(name) == "":
		return "Give the template a name, for example “Invoice”."
	case app.ErrorCode(err) == app.ECodeTemplateExists:
		return "“" + name + "” is taken in this team: choose another name."
	}
	var e *app.Error
	if errors.As(err, &e) {
		return errorText(e)
	}
	return ""
}
