package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"folio/app"
)

type pathTypeKey struct{}

// templatePaths maps the typed template paths onto the canonical ones before
// routing, and keeps the type for the handlers (which check it, ERR_TMPL_009):
//
//	/api/templates/attachment[/...]      -> /api/templates[/...]   (the legacy aliases; email likewise)
//	/api/templates/{type}/{id}/share(s)  -> /api/templates/{id}/share(s)
//
// Registering these forms as mux patterns beside /api/templates/{id}/versions/{versionId}
// would make ServeMux panic: neither pattern is more specific than the other.
func templatePaths(next http.Handler) http.Handler {
	const prefix = "/api/templates/"
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, prefix) {
			next.ServeHTTP(w, r)
			return
		}
		segs := strings.Split(r.URL.Path[len(prefix):], "/")
		switch {
		case segs[0] == app.TypeAttachment || segs[0] == app.TypeEmail:
		case len(segs) == 3 && (segs[2] == "share" || segs[2] == "shares") && segs[1] != "versions" && segs[0] != "shares":
		default:
			next.ServeHTTP(w, r)
			return
		}
		u := *r.URL
		u.Path = strings.TrimSuffix(prefix+strings.Join(segs[1:], "/"), "/")
		u.RawPath = ""
		r2 := r.WithContext(context.WithValue(r.Context(), pathTypeKey{}, segs[0]))
		r2.URL = &u
		next.ServeHTTP(w, r2)
	})
}

// pathType is the template type of a typed path, "" for the canonical ones.
func pathType(r *http.Request) string {
	t, _ := r.Context().Value(pathTypeKey{}).(string)
	return t
}

func templateRef(r *http.Request) app.TemplateRef {
	return app.TemplateRef{ID: r.PathValue("id"), Type: pathType(r)}
}

// decodeOptional decodes a JSON body into v when there is one.
func decodeOptional(r *http.Request, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return (&app.Error{Code: app.ECodePayloadTooLarge, Message: "request body exceeds 10 MB"}).WithInfo("maxBytes", MaxBody)
		}
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return decode(r, v)
}

// handleCreateTemplate serves POST /api/templates, POST /api/v1/templates
// and POST /api/templates/attachment.
func (s *Server) handleCreateTemplate(w http.ResponseWriter, r *http.Request) error {
	var in app.TemplateInput
	if err := decode(r, &in); err != nil {
		return err
	}
	in.PathType = pathType(r)
	t, err := s.Templates.CreateTemplate(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": t.ID, "shortId": t.ShortID, "slug": t.Slug, "name": t.Name, "templateType": t.TemplateType,
		"outputFormats": t.OutputFormats, "createdAt": t.CreatedAt, "warnings": t.Warnings,
	})
	return nil
}

// handleGetTemplate serves GET /api/templates/{id} and /api/v1/templates/{id}.
func (s *Server) handleGetTemplate(w http.ResponseWriter, r *http.Request) error {
	t, err := s.Templates.FindTemplate(r.Context(), templateRef(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

// handleListTemplates serves GET /api/templates and /api/v1/templates
// (?page, limit, search, folderId, categoryId, templateType).
func (s *Server) handleListTemplates(w http.ResponseWriter, r *http.Request) error {
	pg, err := page(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := app.TemplateFilter{Search: q.Get("search"), FolderID: q.Get("folderId"), CategoryID: q.Get("categoryId"),
		TemplateType: q.Get("templateType"), Page: pg}
	if t := pathType(r); t != "" {
		if f.TemplateType != "" && f.TemplateType != t {
			return app.Errorf(app.ECodeTemplateType, "templateType %q does not match the %s path", f.TemplateType, t)
		}
		f.TemplateType = t
	}
	list0, total, err := s.Templates.FindTemplates(r.Context(), f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list{Data: list0, Meta: app.NewMeta(pg, total)})
	return nil
}

// handleUpdateTemplate serves PUT /api/templates/{id} and PATCH /api/v1/templates/{id}.
func (s *Server) handleUpdateTemplate(w http.ResponseWriter, r *http.Request) error {
	var in app.TemplateUpdate
	if err := decode(r, &in); err != nil {
		return err
	}
	t, err := s.Templates.UpdateTemplate(r.Context(), templateRef(r), in)
	if err != nil {
		return err
	}
	// The template, and what the save accepted but probably was not meant.
	writeJSON(w, http.StatusOK, struct {
		*app.Template
		Warnings any `json:"warnings"`
	}{t, t.Warnings})
	return nil
}

// handleDeleteTemplate serves DELETE /api/templates/{id} and /api/v1/templates/{id}.
func (s *Server) handleDeleteTemplate(w http.ResponseWriter, r *http.Request) error {
	if err := s.Templates.DeleteTemplate(r.Context(), templateRef(r)); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "message": "template deleted"})
	return nil
}

// handlePublishTemplate serves POST /api/templates/{id}/publish.
func (s *Server) handlePublishTemplate(w http.ResponseWriter, r *http.Request) error {
	var in app.PublishInput
	if err := decodeOptional(r, &in); err != nil {
		return err
	}
	v, err := s.Templates.PublishTemplate(r.Context(), templateRef(r), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": v.ID, "templateId": v.TemplateID, "version": v.Version,
		"releaseNotes": v.ReleaseNotes, "publishedAt": v.PublishedAt})
	return nil
}

// handleDuplicateTemplate serves POST /api/templates/{id}/duplicate.
func (s *Server) handleDuplicateTemplate(w http.ResponseWriter, r *http.Request) error {
	t, err := s.Templates.DuplicateTemplate(r.Context(), templateRef(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

// handleExportTemplate serves GET /api/templates/{id}/export: a JSON file download.
func (s *Server) handleExportTemplate(w http.ResponseWriter, r *http.Request) error {
	x, err := s.Templates.ExportTemplate(r.Context(), templateRef(r))
	if err != nil {
		return err
	}
	body, err := json.MarshalIndent(x, "", "  ")
	if err != nil {
		return &app.Error{Code: app.ECodeExportFailed, Message: "export failed"}
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": x.Template.Slug + ".json"}))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(append(body, '\n'))
	return err
}

// handleImportTemplate serves POST /api/templates/import (multipart: file,
// duplicateHandling).
func (s *Server) handleImportTemplate(w http.ResponseWriter, r *http.Request) error {
	in := app.ImportInput{PathType: pathType(r), DuplicateHandling: r.URL.Query().Get("duplicateHandling")}
	r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
	err := r.ParseMultipartForm(MaxBody)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return (&app.Error{Code: app.ECodePayloadTooLarge, Message: "request body exceeds 10 MB"}).WithInfo("maxBytes", MaxBody)
	case err == nil:
		defer r.MultipartForm.RemoveAll()
		if v := r.FormValue("duplicateHandling"); v != "" {
			in.DuplicateHandling = v
		}
		f, _, err := r.FormFile("file")
		if err == nil {
			defer f.Close()
			if in.File, err = io.ReadAll(f); err != nil {
				return err
			}
			if in.File == nil {
				in.File = []byte{}
			}
		}
	}
	// Not multipart, or no file part: the service answers ERR_TMPL_015.
	res, err := s.Templates.ImportTemplate(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// handleTemplateVersions serves GET /api/templates/{id}/versions.
func (s *Server) handleTemplateVersions(w http.ResponseWriter, r *http.Request) error {
	pg, err := page(r)
	if err != nil {
		return err
	}
	vs, total, err := s.Templates.FindTemplateVersions(r.Context(), templateRef(r), pg)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list{Data: vs, Meta: app.NewMeta(pg, total)})
	return nil
}

// handleTemplateVersion serves GET /api/templates/{id}/versions/{versionId}.
func (s *Server) handleTemplateVersion(w http.ResponseWriter, r *http.Request) error {
	v, err := s.Templates.FindTemplateVersion(r.Context(), templateRef(r), r.PathValue("versionId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// handleRestoreVersion serves POST /api/templates/{id}/versions/{versionId}/restore.
func (s *Server) handleRestoreVersion(w http.ResponseWriter, r *http.Request) error {
	var in app.PublishInput
	if err := decodeOptional(r, &in); err != nil {
		return err
	}
	v, err := s.Templates.RestoreTemplateVersion(r.Context(), templateRef(r), r.PathValue("versionId"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "newVersion": v.Version, "restoredFrom": *v.RestoredFrom, "id": v.ID,
		"message": fmt.Sprintf("version %d restored as version %d", *v.RestoredFrom, v.Version)})
	return nil
}

// handleAutomationFields serves GET /api/templates/{id}/automation-fields.
func (s *Server) handleAutomationFields(w http.ResponseWriter, r *http.Request) error {
	fields, err := s.Templates.AutomationFields(r.Context(), templateRef(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"fields": fields})
	return nil
}

// handleBulkDeleteTemplates serves POST /api/templates/bulk-delete.
func (s *Server) handleBulkDeleteTemplates(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		IDs []string `json:"ids"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	res, err := s.Templates.BulkDeleteTemplates(r.Context(), in.IDs)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// handleBulkCategories serves POST /api/templates/bulk-categories.
func (s *Server) handleBulkCategories(w http.ResponseWriter, r *http.Request) error {
	var in app.BulkCategoriesInput
	if err := decode(r, &in); err != nil {
		return err
	}
	res, err := s.Templates.BulkCategories(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
