package dashboard

import (
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"folio/app"
)

// Cookies. The __Host- prefix makes browsers insist on Secure, Path=/ and no
// Domain, so neither a subdomain nor plain HTTP can plant or overwrite them.
const (
	sessionCookie = "__Host-folio_session"
	pendingCookie = "__Host-folio_2fa"
	teamCookie    = "__Host-folio_team" // the team each user last worked in here
	csrfCookie    = "__Host-folio_csrf"
	flashCookie   = "__Host-folio_flash"
	csrfField     = "csrf"
	csrfHeader    = "X-CSRF-Token"
	maxForm       = 10 << 20
)

// call is one dashboard request: the response, the request, and once
// signed in the caller and the team the session acts on.
type call struct {
	w http.ResponseWriter
	r *http.Request

	P       *app.Principal
	Session *app.WebSession
	User    *app.User
	Team    *app.Team
	token   string
	csrf    string
	flash   *flash
}

// handler is a dashboard handler; a returned error is shown as a page.
type handler func(c *call) error

// public wraps a handler that needs no session (it may still have one).
func (d *Dashboard) public(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := d.newCall(w, r)
		if !c.checkCSRF() {
			d.forbidden(w, r, "The form was stale or did not come from this dashboard. Reload the page and try again.")
			return
		}
		if cookie, err := r.Cookie(sessionCookie); err == nil {
			if p, ws, err := d.Sessions.Authenticate(r.Context(), cookie.Value); err == nil {
				if err := d.limit(w, r, p); err != nil {
					d.finish(c, err)
					return
				}
				c.P, c.Session, c.token = p, ws, cookie.Value
				c.r = r.WithContext(app.WithPrincipal(r.Context(), p))
			}
		}
		d.finish(c, h(c))
	})
}

// authed wraps a handler that needs a session: without one, pages redirect
// to the login (coming back afterwards) and actions are refused.
func (d *Dashboard) authed(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := d.newCall(w, r)
		if !c.checkCSRF() {
			d.forbidden(w, r, "The form was stale or did not come from this dashboard. Reload the page and try again.")
			return
		}
		cookie, err := r.Cookie(sessionCookie)
		var p *app.Principal
		var ws *app.WebSession
		if err == nil {
			p, ws, err = d.Sessions.Authenticate(r.Context(), cookie.Value)
		}
		if err != nil {
			if cookie != nil {
				clearCookie(w, sessionCookie)
			}
			next := r.URL.RequestURI()
			if r.Method != http.MethodGet {
				next = r.Referer()
				if u, perr := url.Parse(next); perr == nil {
					next = u.RequestURI()
				}
				if isJSON(r) {
					writeJSONError(w, http.StatusUnauthorized, err)
					return
				}
			}
			c.setFlash("info", "Please log in to continue.")
			http.Redirect(w, r, "/app/login?next="+url.QueryEscape(safeNext(next)), http.StatusSeeOther)
			return
		}
		if err := d.limit(w, r, p); err != nil {
			d.finish(c, err)
			return
		}
		c.P, c.Session, c.token = p, ws, cookie.Value
		c.r = r.WithContext(app.WithPrincipal(r.Context(), p))
		if c.User, err = d.Auth.Me(c.r.Context()); err == nil {
			c.Team, err = d.Teams.FindTeam(c.r.Context(), p.TeamID)
		}
		if err != nil {
			d.finish(c, err)
			return
		}
		c.rememberTeam()
		d.finish(c, h(c))
	})
}

// limit counts a signed-in request against the team's rate limit, in the
// class of the API call it stands for: generating a document is generate,
// the template and job pages are reads, everything else is other.
func (d *Dashboard) limit(w http.ResponseWriter, r *http.Request, p *app.Principal) error {
	if d.Limit == nil {
		return nil
	}
	class := app.ClassOther
	switch r.Pattern {
	case "POST /app/templates/{id}/generate":
		class = app.ClassGenerate
	case "GET /app/templates", "GET /app/templates/{id}", "GET /app/templates/{id}/versions", "GET /app/jobs", "GET /app/jobs/{id}":
		class = app.ClassRead
	}
	return d.Limit(w, r, p, class)
}

func (d *Dashboard) newCall(w http.ResponseWriter, r *http.Request) *call {
	c := &call{w: w, r: r}
	if r.Body != nil {
		limit := int64(maxForm)
		if r.Pattern == "POST /app/assets" || r.Pattern == "POST /app/assets/{id}/replace" {
			limit = maxUpload
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
	}
	if ck, err := r.Cookie(csrfCookie); err == nil && len(ck.Value) >= 32 {
		c.csrf = ck.Value
	} else {
		c.rotateCSRF()
	}
	if ck, err := r.Cookie(flashCookie); err == nil {
		var f flash
		if b, err := base64.RawURLEncoding.DecodeString(ck.Value); err == nil && json.Unmarshal(b, &f) == nil {
			c.flash = &f
		}
		clearCookie(w, flashCookie)
	}
	return c
}

// rotateCSRF issues a new CSRF token (on first visit, login and logout).
func (c *call) rotateCSRF() {
	c.csrf = app.RandomString(43)
	setCookie(c.w, csrfCookie, c.csrf, 0)
}

// checkCSRF accepts safe methods, and unsafe ones carrying the token of the
// CSRF cookie in the form field or the X-CSRF-Token header (double submit;
// CrossOriginProtection has already refused cross-site browser requests).
func (c *call) checkCSRF() bool {
	switch c.r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return true
	}
	ck, err := c.r.Cookie(csrfCookie)
	if err != nil || len(ck.Value) < 32 {
		return false
	}
	got := c.r.Header.Get(csrfHeader)
	if got == "" {
		if err := c.r.ParseMultipartForm(maxForm); err != nil && !errors.Is(err, http.ErrNotMultipart) {
			return false
		}
		got = c.r.PostFormValue(csrfField)
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(ck.Value)) == 1
}

// flash is a one-time message shown on the next page.
type flash struct {
	Kind    string `json:"k"` // ok, error, info
	Message string `json:"m"`
}

func (c *call) setFlash(kind, msg string) {
	b, _ := json.Marshal(flash{Kind: kind, Message: msg})
	setCookie(c.w, flashCookie, base64.RawURLEncoding.EncodeToString(b), 60)
}

// redirect ends an action: a message for the next page, then See Other.
func (c *call) redirect(to, kind, msg string) error {
	if msg != "" {
		c.setFlash(kind, msg)
	}
	http.Redirect(c.w, c.r, to, http.StatusSeeOther)
	return nil
}

// done redirects with ok on success or with the service's error message.
func (c *call) done(err error, to, ok string) error {
	if err != nil {
		var e *app.Error
		if !errors.As(err, &e) {
			return err // internal: logged and shown as a page
		}
		return c.redirect(to, "error", errorText(e))
	}
	return c.redirect(to, "ok", ok)
}

// startSession sets the session cookie of a new login.
func (c *call) startSession(st *app.StartedSession) {
	setCookie(c.w, sessionCookie, st.Token, int(app.SessionMax/time.Second))
	clearCookie(c.w, pendingCookie)
	c.rotateCSRF()
}

func (c *call) client() app.Client {
	host, _, err := net.SplitHostPort(c.r.RemoteAddr)
	if err != nil {
		host = c.r.RemoteAddr
	}
	return app.Client{IP: host, UserAgent: c.r.UserAgent(), LastTeams: c.lastTeams()}
}

// maxRemembered is how many users' last teams one browser keeps.
const maxRemembered = 5

// lastTeams reads the team cookie: user id to the team they last worked in
// on this browser. Logins check membership, so the cookie grants nothing.
func (c *call) lastTeams() map[string]string {
	out := map[string]string{}
	ck, err := c.r.Cookie(teamCookie)
	if err != nil {
		return out
	}
	vals, err := url.ParseQuery(ck.Value)
	if err != nil {
		return out
	}
	for user, teams := range vals {
		if len(teams) > 0 && len(out) < maxRemembered {
			out[user] = teams[0]
		}
	}
	return out
}

// rememberTeam records the team the session works in as the user's last
// team on this browser, so the next login, with or without a two-factor
// step, starts there. A switch shows on the page it redirects to.
func (c *call) rememberTeam() {
	if c.P == nil {
		return
	}
	team := c.P.TeamID
	teams := c.lastTeams()
	if teams[c.P.UserID] == team {
		return
	}
	vals := url.Values{c.P.UserID: {team}}
	for user, t := range teams {
		if user != c.P.UserID && len(vals) < maxRemembered {
			vals.Set(user, t)
		}
	}
	setCookie(c.w, teamCookie, vals.Encode(), 400*24*60*60)
}

// parseForm reads a urlencoded or multipart body (idempotent).
func (c *call) parseForm() {
	if c.r.PostForm == nil {
		c.r.ParseMultipartForm(maxForm)
	}
}

func (c *call) form(name string) string { return strings.TrimSpace(c.r.PostFormValue(name)) }

// formPtr returns a form field as a pointer: nil when the field is absent.
func (c *call) formPtr(name string) *string {
	if _, ok := c.r.PostForm[name]; !ok {
		return nil
	}
	v := c.form(name)
	return &v
}

func (c *call) checked(name string) bool { return c.r.PostFormValue(name) != "" }

func setCookie(w http.ResponseWriter, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
}

func clearCookie(w http.ResponseWriter, name string) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
}

func isJSON(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") || r.Header.Get(csrfHeader) != ""
}
