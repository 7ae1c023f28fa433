package web

import (
	"net/http"
	"strconv"

	"folio/app"
)

// handleCreateSubscription serves POST /api/v1/webhook-subscriptions.
func (s *Server) handleCreateSubscription(w http.ResponseWriter, r *http.Request) error {
	var in app.SubscriptionInput
	if err := decode(r, &in); err != nil {
		return err
	}
	sub, err := s.Webhooks.CreateSubscription(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sub)
	return nil
}

// handleListSubscriptions serves GET /api/v1/webhook-subscriptions.
func (s *Server) handleListSubscriptions(w http.ResponseWriter, r *http.Request) error {
	subs, err := s.Webhooks.FindSubscriptions(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": subs})
	return nil
}

// handleGetSubscription serves GET /api/v1/webhook-subscriptions/{id}.
func (s *Server) handleGetSubscription(w http.ResponseWriter, r *http.Request) error {
	sub, err := s.Webhooks.FindSubscription(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sub)
	return nil
}

// handleUpdateSubscription serves PATCH /api/v1/webhook-subscriptions/{id}.
func (s *Server) handleUpdateSubscription(w http.ResponseWriter, r *http.Request) error {
	var in app.SubscriptionInput
	if err := decode(r, &in); err != nil {
		return err
	}
	sub, err := s.Webhooks.UpdateSubscription(r.Context(), r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sub)
	return nil
}

// handleDeleteSubscription serves DELETE /api/v1/webhook-subscriptions/{id}.
func (s *Server) handleDeleteSubscription(w http.ResponseWriter, r *http.Request) error {
	if err := s.Webhooks.DeleteSubscription(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleTestSubscription serves POST /api/v1/webhook-subscriptions/{id}/test.
func (s *Server) handleTestSubscription(w http.ResponseWriter, r *http.Request) error {
	res, err := s.Webhooks.SendTest(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// handleListDeliveries serves GET /api/v1/webhook-subscriptions/{id}/deliveries[?limit=N].
func (s *Server) handleListDeliveries(w http.ResponseWriter, r *http.Request) error {
	limit := 50
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > app.MaxLimit {
			return app.ErrInvalid("limit", "limit must be an integer from 1 to %d", app.MaxLimit)
		}
		limit = n
	}
	dels, err := s.Webhooks.FindDeliveries(r.Context(), r.PathValue("id"), limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"deliveries": dels})
	return nil
}

// handleRetryDelivery serves POST /api/v1/webhook-subscriptions/{id}/deliveries/{deliveryId}/retry.
func (s *Server) handleRetryDelivery(w http.ResponseWriter, r *http.Request) error {
	d, err := s.Webhooks.RetryDelivery(r.Context(), r.PathValue("id"), r.PathValue("deliveryId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "message": "delivery queued for another attempt", "delivery": d})
	return nil
}
