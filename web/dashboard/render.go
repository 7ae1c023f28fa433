package dashboard

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"folio/app"
)

//go:embed views/*.html
var viewFiles embed.FS

//go:embed static
var staticFiles embed.FS

// assetVersion changes with the static files, so browsers refetch them.
var assetVersion = func() string {
	h := sha256.New()
	fs.WalkDir(staticFiles, "static", func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			b, _ := staticFiles.ReadFile(p)
			h.Write(b)
		}
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:10]
}()

// serveStatic serves the embedded CSS, JavaScript and icons, and the
// vendored editor under vendor/ (its LICENSE and README stay in the
// repository: only known types are served).
func serveStatic(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	types := map[string]string{".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".svg": "image/svg+xml"}
	typ, known := types[path.Ext(name)]
	nested := strings.Contains(name, "/")
	if !known || (nested && !strings.HasPrefix(name, "vendor/")) || !fs.ValidPath(name) {
		http.NotFound(w, r)
		return
	}
	b, err := staticFiles.ReadFile("static/" + name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", typ)
	w.Header().Set("Cache-Control", "public, max-age=86400")
	w.Write(b)
}

// views holds one template set per page, each the layout plus the page.
type views struct {
	pages map[string]*template.Template
}

var funcs = template.FuncMap{
	"when": func(t any) string {
		switch v := t.(type) {
		case time.Time:
			if v.IsZero() {
				return "—"
			}
			return v.UTC().Format("2006-01-02 15:04 UTC")
		case *time.Time:
			if v == nil {
				return "—"
			}
			return v.UTC().Format("2006-01-02 15:04 UTC")
		}
		return "—"
	},
	"iso": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"json": func(v any) string {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return ""
		}
		return string(b)
	},
	"rawjson": func(raw json.RawMessage) string {
		var buf bytes.Buffer
		if json.Indent(&buf, raw, "", "  ") != nil {
			return string(raw)
		}
		return buf.String()
	},
	"join":     strings.Join,
	"contains": func(list []string, s string) bool { return contains(list, s) },
	"bytes":    humanBytes,
	"duration": humanDuration,
	"deref": func(p *int) int {
		if p == nil {
			return 0
		}
		return *p
	},
	"deref64": func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	},
	"pct": func(a, b int64) int {
		if b <= 0 {
			return 0
		}
		return int(math.Min(100, math.Round(float64(a)*100/float64(b))))
	},
	"num":          app.GroupDigits,
	"capabilities": app.KeyCapabilities,
	// plural writes a count and its noun: {{plural 1 "API key"}} is
	// "1 API key", {{plural 3 "entry" "entries"}} "3 entries".
	"plural": func(n any, noun string, many ...string) string {
		var c int64
		switch v := n.(type) {
		case int:
			c = int64(v)
		case int64:
			c = v
		case float64:
			c = int64(v)
		}
		return app.Plural(c, noun, many...)
	},
	"add": func(a, b int) int { return a + b },
	"dict": func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[fmt.Sprint(kv[i])] = kv[i+1]
		}
		return m
	},
}

func parseViews() *views {
	layout := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(viewFiles, "views/layout.html", "views/parts.html"))
	names, _ := fs.Glob(viewFiles, "views/*.html")
	v := &views{pages: map[string]*template.Template{}}
	for _, n := range names {
		base := path.Base(n)
		if base == "layout.html" || base == "parts.html" {
			continue
		}
		v.pages[strings.TrimSuffix(base, ".html")] = template.Must(template.Must(layout.Clone()).ParseFS(viewFiles, n))
	}
	return v
}

// page is what every view gets: the layout's fields and the page's data.
type page struct {
	Title   string
	Nav     string
	User    *app.User
	Team    *app.Team
	P       *app.Principal
	CSRF    string
	Flash   *flash
	Error   string // an error shown above the page's content
	Assets  string
	Path    string
	Query   url.Values
	Now     time.Time
	D       map[string]any
	Minimal bool // signed-out pages: no navigation
}

// render writes a page with status 200 (or status when given).
func (d *Dashboard) render(c *call, name, title string, data map[string]any, status ...int) error {
	return d.renderBlock(c, name, "layout", title, data, status...)
}

// renderBlock executes one block of a page: "layout" for the whole page, or
// a part a script fetches to refresh itself.
func (d *Dashboard) renderBlock(c *call, name, block, title string, data map[string]any, status ...int) error {
	t, ok := d.views.pages[name]
	if !ok {
		return fmt.Errorf("no view %q", name)
	}
	pg := &page{Title: title, Nav: strings.SplitN(name, "_", 2)[0], User: c.User, Team: c.Team, P: c.P, CSRF: c.csrf, Flash: c.flash,
		Assets: assetVersion, Path: c.r.URL.Path, Query: c.r.URL.Query(), Now: time.Now().UTC(), D: data, Minimal: c.User == nil}
	if e, ok := data["error"].(string); ok {
		pg.Error = e
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, block, pg); err != nil {
		return err
	}
	h := c.w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	code := http.StatusOK
	if len(status) > 0 {
		code = status[0]
	}
	c.w.WriteHeader(code)
	_, err := c.w.Write(buf.Bytes())
	return err
}

// finish shows a handler's error: app errors as a page with their message,
// anything else logged and shown as an internal error with the request id.
func (d *Dashboard) finish(c *call, err error) {
	if err == nil {
		return
	}
	var e *app.Error
	if !errors.As(err, &e) {
		d.Logger.Error("dashboard internal error", "method", c.r.Method, "path", c.r.URL.Path, "request_id", c.w.Header().Get("X-Request-Id"), "err", err)
		e = &app.Error{Code: app.ECodeInternal, Message: "Something went wrong on the server (request " + c.w.Header().Get("X-Request-Id") + "). It has been logged."}
	}
	status := statusOf(e.Code)
	if isJSON(c.r) {
		writeJSONError(c.w, status, e)
		return
	}
	if rerr := d.render(c, "error", "Error", map[string]any{"error": errorText(e), "Status": status}, status); rerr != nil {
		d.Logger.Error("dashboard render error page", "err", rerr)
		http.Error(c.w, e.Message, status)
	}
}

func (d *Dashboard) forbidden(w http.ResponseWriter, r *http.Request, msg string) {
	c := &call{w: w, r: r}
	if isJSON(r) {
		writeJSONError(w, http.StatusForbidden, &app.Error{Code: "ERR_CSRF_001", Message: msg})
		return
	}
	if err := d.render(c, "error", "Refused", map[string]any{"error": msg, "Status": http.StatusForbidden}, http.StatusForbidden); err != nil {
		http.Error(w, msg, http.StatusForbidden)
	}
}

func (d *Dashboard) notFound(c *call) error {
	return d.render(c, "error", "Not found", map[string]any{"error": "There is no page at " + c.r.URL.Path + ".", "Status": 404}, http.StatusNotFound)
}

// statusOf maps an error code to the page's status, like the API's table.
func statusOf(code string) int {
	switch {
	case code == app.ECodeInternal || code == "":
		return http.StatusInternalServerError
	case strings.HasPrefix(code, "ERR_QUOTA_"):
		return http.StatusTooManyRequests
	case code == app.ECodeFilesUnavailable:
		return http.StatusServiceUnavailable
	case code == app.ECodeUnauthenticated || code == app.ECodeBadCredentials || code == app.ECodeTwoFactorRequired || code == app.ECodeBadTwoFactor:
		return http.StatusUnauthorized
	}
	switch code {
	case app.ECodeTemplateNotFound, app.ECodeJobNotFound, app.ECodeKeyNotFound, app.ECodeSubscriptionNotFound, app.ECodeDeliveryNotFound,
		app.ECodeTeamNotFound, app.ECodeInvitationNotFound, app.ECodeVersionNotFound, app.ECodeUserNotFound, app.ECodeBatchNotFound, app.ECodeMemberNotFound:
		return http.StatusNotFound
	case app.ECodeForbidden, app.ECodeKeyForbidden, app.ECodeJWTOnly, app.ECodeEmailNotVerified, app.ECodeNotTeamOwner,
		app.ECodeTemplateNoAccess, app.ECodeTemplateNoEdit, app.ECodeTemplateNoDelete, app.ECodeTemplateNoView, app.ECodeShareForbidden,
		app.ECodePendingDeletion, app.ECodeDeletionRunning, app.ECodeSignupClosed:
		return http.StatusForbidden
	}
	return http.StatusBadRequest
}

// errorText is what a person reads: the service's message and its code.
func errorText(e *app.Error) string {
	msg := sentence(e.Message)
	if e.Code == "" || e.Code == app.ECodeInternal {
		return msg
	}
	return msg + " (" + e.Code + ")"
}

// writeJSONError answers a script's request with the API's error envelope.
func writeJSONError(w http.ResponseWriter, status int, err error) {
	var e *app.Error
	if !errors.As(err, &e) {
		e = &app.Error{Code: app.ECodeInternal, Message: "internal server error"}
	}
	writeJSON(w, status, map[string]any{"statusCode": status, "code": e.Code, "message": e.Message, "text": errorText(e),
		"timestamp": time.Now().UTC().Format(time.RFC3339Nano), "relatedInfo": e.Info})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"code":"ERR_INTERNAL_001","message":"internal server error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(b)
}

// pager is the pagination bar of a list.
type pager struct {
	Page, TotalPages, Total int
	Estimate                bool // Total is a lower bound (app.MaxCount)
	Prev, Next              string
}

// pageOf reads ?page= (or the named parameter; 1 when absent or bad) with
// the given page size.
func pageOf(c *call, limit int, param ...string) app.Page {
	name := "page"
	if len(param) > 0 {
		name = param[0]
	}
	n, err := strconv.Atoi(c.r.URL.Query().Get(name))
	if err != nil || n < 1 {
		n = 1
	}
	return app.Page{Page: n, Limit: limit}
}

// newPager links the neighbouring pages, keeping the other query parameters.
func newPager(c *call, pg app.Page, total int, param ...string) *pager {
	return metaPager(c, app.NewMeta(pg, total), param...)
}

// listPager is newPager for a list whose total may be a lower bound.
func listPager(c *call, pg app.Page, info app.ListInfo) *pager {
	return metaPager(c, info.Meta(pg))
}

func metaPager(c *call, m app.Meta, param ...string) *pager {
	name := "page"
	if len(param) > 0 {
		name = param[0]
	}
	p := &pager{Page: m.Page, TotalPages: max(m.TotalPages, 1), Total: m.Total, Estimate: m.TotalIsEstimate}
	link := func(n int) string {
		q := c.r.URL.Query()
		q.Set(name, strconv.Itoa(n))
		return c.r.URL.Path + "?" + q.Encode()
	}
	if m.HasPreviousPage {
		p.Prev = link(m.Page - 1)
	}
	if m.HasNextPage {
		p.Next = link(m.Page + 1)
	}
	return p
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// initialisms are words a sentence starts with in capitals, not as "Url".
var initialisms = map[string]string{
	"url": "URL", "urls": "URLs", "id": "ID", "ids": "IDs", "api": "API", "pdf": "PDF", "xlsx": "XLSX",
	"json": "JSON", "csv": "CSV", "http": "HTTP", "https": "HTTPS", "smtp": "SMTP", "totp": "TOTP", "jwt": "JWT",
}

// sentence starts an API message as a sentence: "url must use https" is
// "URL must use https", "the plan ..." is "The plan ...", and a field name
// written in camelCase ("templateId is required") stays as it is.
func sentence(msg string) string {
	end := strings.IndexFunc(msg, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' })
	if end < 0 {
		end = len(msg)
	}
	word := msg[:end]
	if word == "" {
		return msg
	}
	if up, ok := initialisms[strings.ToLower(word)]; ok {
		return up + msg[end:]
	}
	for _, r := range word[1:] {
		if unicode.IsUpper(r) || unicode.IsDigit(r) || r == '_' {
			return msg // a field name, as the API spells it
		}
	}
	r, size := utf8.DecodeRuneInString(msg)
	return string(unicode.ToUpper(r)) + msg[size:]
}

// humanDuration writes a rendering time the way people say it: 850 ms,
// 2.4 s, 1 min 5 s.
func humanDuration(d *time.Duration) string {
	if d == nil {
		return "—"
	}
	switch {
	case *d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
	case *d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
	}
	return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
}
