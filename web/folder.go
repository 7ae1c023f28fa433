package web

import (
	"net/http"

	"folio/app"
)

// Folders and categories share their handlers; kind tells them apart.

// handleCreateGroup serves POST /api/template-folders and POST /api/template-categories.
func (s *Server) handleCreateGroup(kind string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var in app.GroupInput
		if err := decode(r, &in); err != nil {
			return err
		}
		g, err := s.Templates.CreateGroup(r.Context(), kind, in)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, g)
		return nil
	}
}

// handleListGroups serves GET /api/template-folders and GET /api/template-categories.
func (s *Server) handleListGroups(kind string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		pg, err := page(r)
		if err != nil {
			return err
		}
		gs, total, err := s.Templates.FindGroups(r.Context(), kind, pg)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, list{Data: gs, Meta: app.NewMeta(pg, total)})
		return nil
	}
}

// handleRenameGroup serves PUT /api/template-folders/{id} and PUT /api/template-categories/{id}.
func (s *Server) handleRenameGroup(kind string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var in app.GroupInput
		if err := decode(r, &in); err != nil {
			return err
		}
		g, err := s.Templates.RenameGroup(r.Context(), kind, r.PathValue("id"), in)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, g)
		return nil
	}
}

// handleDeleteGroup serves DELETE /api/template-folders/{id} and DELETE /api/template-categories/{id}.
func (s *Server) handleDeleteGroup(kind string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := s.Templates.DeleteGroup(r.Context(), kind, r.PathValue("id")); err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]any{"success": true, "message": kind + " deleted"})
		return nil
	}
}
