package web

import (
	"net/http"

	"folio/app"
)

// handleShareTemplate serves POST /api/templates/{type}/{id}/share (and the
// untyped /api/templates/{id}/share).
func (s *Server) handleShareTemplate(w http.ResponseWriter, r *http.Request) error {
	var in app.ShareInput
	if err := decode(r, &in); err != nil {
		return err
	}
	sh, err := s.Templates.ShareTemplate(r.Context(), templateRef(r), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sh)
	return nil
}

// handleListShares serves GET /api/templates/{type}/{id}/shares (and the
// untyped /api/templates/{id}/shares).
func (s *Server) handleListShares(w http.ResponseWriter, r *http.Request) error {
	shares, err := s.Templates.FindShares(r.Context(), templateRef(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"shares": shares})
	return nil
}

// handleSharedTemplates serves GET /api/templates/shared.
func (s *Server) handleSharedTemplates(w http.ResponseWriter, r *http.Request) error {
	list, err := s.Templates.FindSharedTemplates(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"templates": list})
	return nil
}

// handleUpdateShare serves PUT /api/templates/shares/{shareId}.
func (s *Server) handleUpdateShare(w http.ResponseWriter, r *http.Request) error {
	var in app.ShareInput
	if err := decode(r, &in); err != nil {
		return err
	}
	sh, err := s.Templates.UpdateShare(r.Context(), r.PathValue("shareId"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sh)
	return nil
}

// handleDeleteShare serves DELETE /api/templates/shares/{shareId}.
func (s *Server) handleDeleteShare(w http.ResponseWriter, r *http.Request) error {
	if err := s.Templates.DeleteShare(r.Context(), r.PathValue("shareId")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "message": "share revoked"})
	return nil
}
