// Package dashboard is Folio's web dashboard: server-rendered HTML pages
// (html/template, embedded static files, a little hand-written JavaScript)
// that call the same app services as the JSON API, with a Principal built
// from a session cookie instead of a JWT. web.Server mounts it at / and /app/.
package dashboard

import (
	"log/slog"
	"net/http"
	"sync"

	"folio/app"
)

// Dashboard serves the dashboard pages.
type Dashboard struct {
	Sessions  *app.SessionService
	Auth      *app.AuthService
	Keys      *app.KeyService
	Templates *app.TemplateService
	Documents *app.DocumentService
	Analytics *app.AnalyticsService
	Webhooks  *app.WebhookService
	Teams     *app.TeamService
	Accounts  *app.AccountService
	Assets    *app.AssetService
	Logger    *slog.Logger
	// Limit counts a signed-in request against its team's rate limit for a
	// class (app.ClassGenerate, ...) like a JWT call, and sets the
	// X-RateLimit headers; web.Server sets it when it mounts the
	// dashboard. nil: no rate limits.
	Limit func(w http.ResponseWriter, r *http.Request, p *app.Principal, class string) error

	once    sync.Once
	handler http.Handler
	views   *views
}

// Patterns are the ServeMux patterns the dashboard answers; web.Server
// mounts the dashboard on each. Everything else stays the API's.
var Patterns = []string{
	"GET /{$}",
	"/app/",
	"GET /verify-email",
	"GET /invitations/{id}/accept",
}

// ServeHTTP serves a dashboard request.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d.once.Do(d.build)
	d.handler.ServeHTTP(w, r)
}

func (d *Dashboard) build() {
	d.views = parseViews()
	mux := &routeMux{ServeMux: http.NewServeMux()}
	d.routes(mux)
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.forbidden(w, r, "This request came from another site and was refused.")
	}))
	d.handler = headers(cop.Handler(mux))
}

// Routes returns the pattern of every dashboard route, in the order
// registered; tests walk it to reach every page and every action.
func Routes() []string {
	var d Dashboard
	mux := &routeMux{}
	d.routes(mux)
	return mux.patterns
}

// routeMux records the patterns it registers (and registers them on
// ServeMux when there is one).
type routeMux struct {
	*http.ServeMux
	patterns []string
}

func (m *routeMux) Handle(pattern string, h http.Handler) {
	m.patterns = append(m.patterns, pattern)
	if m.ServeMux != nil {
		m.ServeMux.Handle(pattern, h)
	}
}

// routes lists every dashboard route: METHOD /path → handler. GET pages
// render; POST actions check the CSRF token, call one service method and
// redirect back with a message (or re-render the form with the error).
func (d *Dashboard) routes(mux *routeMux) {
	mux.Handle("GET /app/static/{file...}", http.HandlerFunc(serveStatic))
	mux.Handle("GET /{$}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/app/", http.StatusSeeOther) }))
	mux.Handle("/app/", d.public(d.notFound))

	// Signing in and out; mail links.
	mux.Handle("GET /app/login", d.public(d.loginPage))
	mux.Handle("POST /app/login", d.public(d.login))
	mux.Handle("POST /app/login/2fa", d.public(d.loginTwoFactor))
	mux.Handle("GET /app/signup", d.public(d.signupPage))
	mux.Handle("POST /app/signup", d.public(d.signup))
	mux.Handle("POST /app/logout", d.public(d.logout))
	mux.Handle("GET /verify-email", d.public(d.verifyEmail))
	mux.Handle("GET /invitations/{id}/accept", d.authed(d.invitationPage))

	mux.Handle("GET /app/{$}", d.authed(d.home))

	// Templates.
	mux.Handle("GET /app/templates", d.authed(d.templateList))
	mux.Handle("GET /app/templates/new", d.authed(d.templateNew))
	mux.Handle("POST /app/templates", d.authed(d.templateCreate))
	mux.Handle("GET /app/templates/{id}", d.authed(d.templateEdit))
	mux.Handle("POST /app/templates/{id}", d.authed(d.templateSave))
	mux.Handle("POST /app/templates/{id}/preview", d.authed(d.templatePreview))
	mux.Handle("POST /app/templates/validate-schema", d.authed(d.validateSchema))
	mux.Handle("POST /app/templates/validate-variables", d.authed(d.validateVariables))
	mux.Handle("POST /app/templates/{id}/publish", d.authed(d.templatePublish))
	mux.Handle("POST /app/templates/{id}/generate", d.authed(d.templateGenerate))
	mux.Handle("POST /app/templates/{id}/duplicate", d.authed(d.templateDuplicate))
	mux.Handle("POST /app/templates/{id}/delete", d.authed(d.templateDelete))
	mux.Handle("GET /app/templates/{id}/versions", d.authed(d.templateVersions))
	mux.Handle("POST /app/templates/{id}/versions/{version}/restore", d.authed(d.templateRestore))

	// Jobs.
	mux.Handle("GET /app/assets", d.authed(d.assetList))
	mux.Handle("POST /app/assets", d.authed(d.assetUpload))
	mux.Handle("GET /app/assets/{id}/content", d.authed(d.assetContent))
	mux.Handle("POST /app/assets/{id}/replace", d.authed(d.assetReplace))
	mux.Handle("POST /app/assets/{id}/delete", d.authed(d.assetDelete))

	mux.Handle("GET /app/jobs", d.authed(d.jobList))
	mux.Handle("GET /app/jobs/{id}", d.authed(d.jobDetail))
	mux.Handle("POST /app/jobs/{id}/retry", d.authed(d.jobRetry))
	mux.Handle("POST /app/jobs/{id}/delete", d.authed(d.jobDelete))

	// API keys.
	mux.Handle("GET /app/keys", d.authed(d.keyList))
	mux.Handle("POST /app/keys", d.authed(d.keyCreate))
	mux.Handle("GET /app/keys/{id}", d.authed(d.keyDetail))
	mux.Handle("POST /app/keys/{id}", d.authed(d.keyUpdate))
	mux.Handle("POST /app/keys/{id}/revoke", d.authed(d.keyRevoke))
	mux.Handle("POST /app/keys/{id}/activate", d.authed(d.keyActivate))
	mux.Handle("POST /app/keys/{id}/delete", d.authed(d.keyDelete))

	// Webhooks.
	mux.Handle("GET /app/webhooks", d.authed(d.webhookList))
	mux.Handle("POST /app/webhooks", d.authed(d.webhookCreate))
	mux.Handle("GET /app/webhooks/{id}", d.authed(d.webhookDetail))
	mux.Handle("POST /app/webhooks/{id}/enabled", d.authed(d.webhookEnabled))
	mux.Handle("POST /app/webhooks/{id}/test", d.authed(d.webhookTest))
	mux.Handle("POST /app/webhooks/{id}/delete", d.authed(d.webhookDelete))
	mux.Handle("POST /app/webhooks/{id}/deliveries/{delivery}/retry", d.authed(d.deliveryRetry))

	// Team.
	mux.Handle("GET /app/team", d.authed(d.teamPage))
	mux.Handle("POST /app/team/switch", d.authed(d.teamSwitch))
	mux.Handle("POST /app/teams", d.authed(d.teamCreate))
	mux.Handle("POST /app/team/rename", d.authed(d.teamRename))
	mux.Handle("POST /app/team/delete", d.authed(d.teamDelete))
	mux.Handle("POST /app/team/leave", d.authed(d.teamLeave))
	mux.Handle("POST /app/team/invite", d.authed(d.teamInvite))
	mux.Handle("POST /app/team/members/{id}/role", d.authed(d.memberRole))
	mux.Handle("POST /app/team/members/{id}/remove", d.authed(d.memberRemove))
	mux.Handle("POST /app/team/invitations/{id}/cancel", d.authed(d.invitationCancel))
	mux.Handle("POST /app/invitations/{id}/accept", d.authed(d.invitationAccept))
	mux.Handle("POST /app/invitations/{id}/reject", d.authed(d.invitationReject))

	// Account.
	mux.Handle("GET /app/account", d.authed(d.accountPage))
	mux.Handle("POST /app/account/profile", d.authed(d.accountProfile))
	mux.Handle("POST /app/account/password", d.authed(d.accountPassword))
	mux.Handle("POST /app/account/resend-verification", d.authed(d.accountResend))
	mux.Handle("POST /app/account/2fa/enable", d.authed(d.twoFactorEnable))
	mux.Handle("POST /app/account/2fa/verify", d.authed(d.twoFactorVerify))
	mux.Handle("POST /app/account/2fa/disable", d.authed(d.twoFactorDisable))
	mux.Handle("POST /app/account/2fa/backup-codes", d.authed(d.twoFactorBackupCodes))
	mux.Handle("POST /app/account/delete", d.authed(d.accountDelete))

	// Usage.
	mux.Handle("GET /app/usage", d.authed(d.usagePage))
}

// contentSecurityPolicy allows only the dashboard's own files: no inline
// script or style, no other origins. Previews are PDFs in blob: frames; the
// two-factor QR code is a data: image.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; frame-src 'self' blob:; object-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// headers sets the dashboard's security headers (web adds HSTS, nosniff,
// X-Frame-Options DENY and the referrer policy to every response).
func headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
		next.ServeHTTP(w, r)
	})
}
