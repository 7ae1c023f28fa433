package web

import (
	"net/http"

	"folio/app"
)

// handleSignup serves POST /api/auth/signup.
func (s *Server) handleSignup(w http.ResponseWriter, r *http.Request) error {
	var in app.SignupInput
	if err := decode(r, &in); err != nil {
		return err
	}
	sess, err := s.Auth.Signup(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sess)
	return nil
}

// handleLogin serves POST /api/auth/login.
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) error {
	var in app.LoginInput
	if err := decode(r, &in); err != nil {
		return err
	}
	sess, err := s.Auth.Login(r.Context(), in, clientIP(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sess)
	return nil
}

// handleRefresh serves POST /api/auth/refresh.
func (s *Server) handleRefresh(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		RefreshToken string `json:"refreshToken"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	sess, err := s.Auth.Refresh(r.Context(), in.RefreshToken)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sess)
	return nil
}

// handleLogout serves POST /api/auth/logout.
func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		RefreshToken string `json:"refreshToken"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	if err := s.Auth.Logout(r.Context(), in.RefreshToken); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, message{"logged out"})
	return nil
}

// handleVerifyEmail serves POST /api/auth/verify-email.
func (s *Server) handleVerifyEmail(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Token string `json:"token"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	if err := s.Auth.VerifyEmail(r.Context(), in.Token); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, message{"email verified"})
	return nil
}

// handleResendVerification serves POST /api/auth/resend-verification.
func (s *Server) handleResendVerification(w http.ResponseWriter, r *http.Request) error {
	if err := s.Auth.ResendVerification(r.Context(), ""); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, message{"verification email sent"})
	return nil
}

// handleMe serves GET /api/users/me.
func (s *Server) handleMe(w http.ResponseWriter, r *http.Request) error {
	u, err := s.Auth.Me(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, u)
	return nil
}

// message is the {message} response.
type message struct {
	Message string `json:"message"`
}
