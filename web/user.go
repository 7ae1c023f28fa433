package web

import (
	"net/http"

	"folio/app"
)

// handleUpdateMe serves PATCH /api/users/me.
func (s *Server) handleUpdateMe(w http.ResponseWriter, r *http.Request) error {
	var in app.ProfileInput
	if err := decode(r, &in); err != nil {
		return err
	}
	u, err := s.Accounts.UpdateProfile(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, u)
	return nil
}

// handleChangePassword serves POST /api/users/me/change-password. Other
// sessions end; the answer carries a fresh session for this one.
func (s *Server) handleChangePassword(w http.ResponseWriter, r *http.Request) error {
	var in app.ChangePasswordInput
	if err := decode(r, &in); err != nil {
		return err
	}
	sess, err := s.Accounts.ChangePassword(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"message": "password changed; other sessions were signed out",
		"accessToken": sess.AccessToken, "refreshToken": sess.RefreshToken, "expiresIn": sess.ExpiresIn})
	return nil
}

// handleGetEmailPreferences serves GET /api/users/me/email-preferences.
func (s *Server) handleGetEmailPreferences(w http.ResponseWriter, r *http.Request) error {
	p, err := s.Accounts.EmailPreferences(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"preferences": p})
	return nil
}

// handleUpdateEmailPreferences serves PATCH /api/users/me/email-preferences.
func (s *Server) handleUpdateEmailPreferences(w http.ResponseWriter, r *http.Request) error {
	var in app.EmailPreferencesInput
	if err := decode(r, &in); err != nil {
		return err
	}
	p, err := s.Accounts.UpdateEmailPreferences(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"message": "email preferences updated", "preferences": p})
	return nil
}

// handleSetAvatar serves POST /api/users/me/avatar.
func (s *Server) handleSetAvatar(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		ImageData string `json:"imageData"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	url, err := s.Accounts.SetAvatar(r.Context(), in.ImageData)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"message": "avatar updated", "avatarUrl": url})
	return nil
}

// handleDeleteAvatar serves DELETE /api/users/me/avatar.
func (s *Server) handleDeleteAvatar(w http.ResponseWriter, r *http.Request) error {
	if err := s.Accounts.DeleteAvatar(r.Context()); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, message{"avatar removed"})
	return nil
}

// handleAvatar serves GET /api/users/{id}/avatar, public: always a PNG the
// server encoded itself.
func (s *Server) handleAvatar(w http.ResponseWriter, r *http.Request) error {
	f, mod, err := s.Accounts.Avatar(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Type", "image/png")
	h.Set("Cache-Control", "public, max-age=3600")
	h.Set("Content-Security-Policy", "default-src 'none'")
	serveFile(w, r, "avatar.png", mod, f)
	return nil
}

// handleDeleteMe serves DELETE /api/users/me.
func (s *Server) handleDeleteMe(w http.ResponseWriter, r *http.Request) error {
	var in app.DeleteAccountInput
	if err := decode(r, &in); err != nil {
		return err
	}
	d, err := s.Accounts.DeleteAccount(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

// handleRestoreAccount serves POST /api/auth/restore.
func (s *Server) handleRestoreAccount(w http.ResponseWriter, r *http.Request) error {
	var in app.LoginInput
	if err := decode(r, &in); err != nil {
		return err
	}
	sess, err := s.Auth.RestoreAccount(r.Context(), in, clientIP(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"message": "account restored", "user": sess.User,
		"accessToken": sess.AccessToken, "refreshToken": sess.RefreshToken, "expiresIn": sess.ExpiresIn})
	return nil
}

// handleExport serves GET /api/users/me/export.
func (s *Server) handleExport(w http.ResponseWriter, r *http.Request) error {
	e, err := s.Accounts.Export(r.Context())
	if err != nil {
		return err
	}
	w.Header().Set("Content-Disposition", `attachment; filename="folio-export.json"`)
	writeJSON(w, http.StatusOK, e)
	return nil
}

// handleTwoFactorStatus serves GET /api/users/me/2fa/status.
func (s *Server) handleTwoFactorStatus(w http.ResponseWriter, r *http.Request) error {
	st, err := s.Accounts.TwoFactorStatus(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

// handleEnableTwoFactor serves POST /api/users/me/2fa/enable.
func (s *Server) handleEnableTwoFactor(w http.ResponseWriter, r *http.Request) error {
	setup, err := s.Accounts.EnableTwoFactor(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, setup)
	return nil
}

// handleVerifyTwoFactor serves POST /api/users/me/2fa/verify.
func (s *Server) handleVerifyTwoFactor(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Code string `json:"code"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	if err := s.Accounts.VerifyTwoFactor(r.Context(), in.Code); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"success": true})
	return nil
}

// handleDisableTwoFactor serves POST /api/users/me/2fa/disable.
func (s *Server) handleDisableTwoFactor(w http.ResponseWriter, r *http.Request) error {
	var in app.PasswordInput
	if err := decode(r, &in); err != nil {
		return err
	}
	if err := s.Accounts.DisableTwoFactor(r.Context(), in); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"success": true})
	return nil
}

// handleBackupCodes serves POST /api/users/me/2fa/backup-codes.
func (s *Server) handleBackupCodes(w http.ResponseWriter, r *http.Request) error {
	var in app.PasswordInput
	if err := decode(r, &in); err != nil {
		return err
	}
	codes, err := s.Accounts.RegenerateBackupCodes(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"backupCodes": codes})
	return nil
}
