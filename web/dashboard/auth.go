package dashboard

import (
	"errors"
	"net/http"
	"net/url"

	"folio/app"
)

// loginPage serves GET /app/login.
func (d *Dashboard) loginPage(c *call) error {
	next := safeNext(c.r.URL.Query().Get("next"))
	if c.P != nil {
		return c.redirect(next, "", "")
	}
	return d.render(c, "login", "Log in", map[string]any{"Next": next, "Email": c.r.URL.Query().Get("email")})
}

// login serves POST /app/login: email and password, then either a session
// or, with two-factor on, the code step.
func (d *Dashboard) login(c *call) error {
	next := safeNext(c.form("next"))
	in := app.LoginInput{Email: c.form("email"), Password: c.r.PostFormValue("password"), Code: c.form("code")}
	restore := c.form("restore") != ""
	var st *app.StartedSession
	var err error
	if restore {
		st, err = d.Sessions.Restore(c.r.Context(), in, c.client())
	} else {
		st, err = d.Sessions.Login(c.r.Context(), in, c.client())
	}
	if app.ErrorCode(err) == app.ECodeTwoFactorRequired && st != nil {
		setCookie(c.w, pendingCookie, st.Token, int(app.SessionPending.Seconds()))
		return d.render(c, "login_2fa", "Two-factor code", map[string]any{"Next": next})
	}
	if err != nil {
		pending := app.ErrorCode(err) == app.ECodePendingDeletion || (restore && app.ErrorCode(err) != app.ECodeAccountNotDelete)
		return d.formError(c, err, "login", "Log in", map[string]any{"Next": next, "Email": in.Email, "Restore": pending})
	}
	c.startSession(st)
	if restore {
		return c.redirect(next, "ok", "Your account is restored. API keys it deactivated stay off until an admin turns them on.")
	}
	return c.redirect(next, "", "")
}

// loginTwoFactor serves POST /app/login/2fa: the code of a pending login.
func (d *Dashboard) loginTwoFactor(c *call) error {
	next := safeNext(c.form("next"))
	ck, err := c.r.Cookie(pendingCookie)
	if err != nil {
		return c.redirect("/app/login?next="+url.QueryEscape(next), "error", "The login expired; enter your email and password again.")
	}
	st, err := d.Sessions.CompleteLogin(c.r.Context(), ck.Value, c.form("code"), c.client())
	if app.ErrorCode(err) == app.ECodeUnauthenticated {
		clearCookie(c.w, pendingCookie)
		return c.redirect("/app/login?next="+url.QueryEscape(next), "error", "The login expired; enter your email and password again.")
	}
	if err != nil {
		return d.formError(c, err, "login_2fa", "Two-factor code", map[string]any{"Next": next})
	}
	c.startSession(st)
	return c.redirect(next, "", "")
}

// signupPage serves GET /app/signup.
func (d *Dashboard) signupPage(c *call) error {
	next := safeNext(c.r.URL.Query().Get("next"))
	if c.P != nil {
		return c.redirect(next, "", "")
	}
	return d.render(c, "signup", "Sign up", map[string]any{"Next": next})
}

// signup serves POST /app/signup: creates the account and signs it in.
func (d *Dashboard) signup(c *call) error {
	next := safeNext(c.form("next"))
	in := app.SignupInput{Name: c.form("name"), Email: c.form("email"), Password: c.r.PostFormValue("password")}
	if next != "/app/" {
		in.Next = next // the verification link comes back here (an invitation)
	}
	st, err := d.Sessions.Signup(c.r.Context(), in, c.client())
	if err != nil {
		return d.formError(c, err, "signup", "Sign up", map[string]any{"Name": in.Name, "Email": in.Email, "Next": next})
	}
	c.startSession(st)
	if next == "/app/" {
		next = "/app/templates"
	}
	return c.redirect(next, "ok", "Welcome to Folio! We sent a link to "+st.User.Email+" to verify your address.")
}

// logout serves POST /app/logout.
func (d *Dashboard) logout(c *call) error {
	if ck, err := c.r.Cookie(sessionCookie); err == nil {
		if err := d.Sessions.Logout(c.r.Context(), ck.Value); err != nil {
			return err
		}
	}
	clearCookie(c.w, sessionCookie)
	c.rotateCSRF()
	return c.redirect("/app/login", "ok", "You are logged out.")
}

// verifyEmail serves GET /verify-email?token=...&next=..., the link of the
// verification and email-change mails. The token is single use, so opening
// the link verifies at once. A link from a signup that began at an
// invitation carries it as next: signed in, the page goes straight back
// there; signed out, the login leads there.
func (d *Dashboard) verifyEmail(c *call) error {
	err := d.Auth.VerifyEmail(c.r.Context(), c.r.URL.Query().Get("token"))
	var e *app.Error
	if err != nil && !errors.As(err, &e) {
		return err
	}
	next := safeNext(c.r.URL.Query().Get("next"))
	if err == nil && c.P != nil && next != "/app/" {
		return c.redirect(next, "ok", "Your email address is verified.")
	}
	data := map[string]any{"OK": err == nil, "SignedIn": c.P != nil, "Next": next}
	status := http.StatusOK
	if e != nil {
		data["error"] = errorText(e)
		status = http.StatusBadRequest
	}
	return d.render(c, "verify", "Verify email", data, status)
}

// formError re-renders a form with the service's error message, keeping what
// was typed; internal errors become the error page.
func (d *Dashboard) formError(c *call, err error, view, title string, data map[string]any) error {
	var e *app.Error
	if !errors.As(err, &e) {
		return err
	}
	data["error"] = errorText(e)
	data["Info"] = e.Info
	return d.render(c, view, title, data, statusOf(e.Code))
}
