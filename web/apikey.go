package web

import (
	"net/http"

	"folio/app"
)

// handleCreateKey serves POST /api/api-keys.
func (s *Server) handleCreateKey(w http.ResponseWriter, r *http.Request) error {
	var in app.KeyInput
	if err := decode(r, &in); err != nil {
		return err
	}
	k, err := s.Keys.CreateAPIKey(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, k)
	return nil
}

// handleListKeys serves GET /api/api-keys.
func (s *Server) handleListKeys(w http.ResponseWriter, r *http.Request) error {
	pg, err := page(r)
	if err != nil {
		return err
	}
	active, err := boolQuery(r, "isActive")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	keys, total, err := s.Keys.FindAPIKeys(r.Context(), app.KeyFilter{IsActive: active, SortBy: q.Get("sortBy"), SortOrder: q.Get("sortOrder"), Page: pg})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list{Data: keys, Meta: app.NewMeta(pg, total)})
	return nil
}

// handleGetKey serves GET /api/api-keys/{id}.
func (s *Server) handleGetKey(w http.ResponseWriter, r *http.Request) error {
	k, err := s.Keys.FindAPIKeyByID(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, k)
	return nil
}

// handleUpdateKey serves PATCH /api/api-keys/{id}.
func (s *Server) handleUpdateKey(w http.ResponseWriter, r *http.Request) error {
	var in app.KeyInput
	if err := decode(r, &in); err != nil {
		return err
	}
	k, err := s.Keys.UpdateAPIKey(r.Context(), r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, k)
	return nil
}

// handleRevokeKey serves POST /api/api-keys/{id}/revoke.
func (s *Server) handleRevokeKey(w http.ResponseWriter, r *http.Request) error {
	k, err := s.Keys.RevokeAPIKey(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": k.ID, "name": k.Name, "isActive": k.IsActive, "updatedAt": k.UpdatedAt})
	return nil
}

// handleKeyStats serves GET /api/api-keys/{id}/stats.
func (s *Server) handleKeyStats(w http.ResponseWriter, r *http.Request) error {
	st, err := s.Keys.APIKeyStats(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

// handleDeleteKey serves DELETE /api/api-keys/{id}.
func (s *Server) handleDeleteKey(w http.ResponseWriter, r *http.Request) error {
	if err := s.Keys.DeleteAPIKey(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
