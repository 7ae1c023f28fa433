package web

import (
	"net/http"

	"folio/app"
)

// handleCreateTemplate serves POST /api/templates.
func (s *Server) handleCreateTemplate(w http.ResponseWriter, r *http.Request) error {
	var in app.TemplateInput
	if err := decode(r, &in); err != nil {
		return err
	}
	t, err := s.Templates.CreateTemplate(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": t.ID, "shortId": t.ShortID, "slug": t.Slug, "name": t.Name, "outputFormats": t.OutputFormats, "createdAt": t.CreatedAt,
	})
	return nil
}

// handleGetTemplate serves GET /api/templates/{id} and /api/v1/templates/{id}.
func (s *Server) handleGetTemplate(w http.ResponseWriter, r *http.Request) error {
	t, err := s.Templates.FindTemplate(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

// handleListTemplates serves GET /api/templates and /api/v1/templates.
func (s *Server) handleListTemplates(w http.ResponseWriter, r *http.Request) error {
	pg, err := page(r)
	if err != nil {
		return err
	}
	list0, total, err := s.Templates.FindTemplates(r.Context(), app.TemplateFilter{Search: r.URL.Query().Get("search"), Page: pg})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list{Data: list0, Meta: app.NewMeta(pg, total)})
	return nil
}
