package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"folio/web"
)

// openAPIDoc is the part of the OpenAPI document the tests read.
type openAPIDoc struct {
	OpenAPI    string                                `json:"openapi"`
	Paths      map[string]map[string]openAPIOp       `json:"paths"`
	Components map[string]map[string]json.RawMessage `json:"components"`
}

type openAPIOp struct {
	OperationID string             `json:"operationId"`
	Tags        []string           `json:"tags"`
	Summary     string             `json:"summary"`
	Security    []map[string][]any `json:"security"`
	Parameters  []map[string]any   `json:"parameters"`
	RequestBody *openAPIBody       `json:"requestBody"`
	Responses   map[string]struct {
		Headers map[string]struct {
			Description string `json:"description"`
		} `json:"headers"`
	} `json:"responses"`
}

type openAPIBody struct {
	Content map[string]struct {
		Example json.RawMessage `json:"example"`
	} `json:"content"`
}

func loadOpenAPI(t *testing.T) *openAPIDoc {
	t.Helper()
	var doc openAPIDoc
	if err := json.Unmarshal(web.OpenAPI, &doc); err != nil {
		t.Fatalf("web/openapi.json: %v", err)
	}
	return &doc
}

// ops lists the document's operations as "METHOD /path".
func (d *openAPIDoc) ops() map[string]openAPIOp {
	out := map[string]openAPIOp{}
	for path, item := range d.Paths {
		for method, op := range item {
			out[strings.ToUpper(method)+" "+path] = op
		}
	}
	return out
}

// successStatus is the operation's lowest documented 2xx status (its plain answer).
func (o openAPIOp) successStatus() int {
	best := 0
	for code := range o.Responses {
		if strings.HasPrefix(code, "2") {
			var n int
			fmt.Sscan(code, &n)
			if best == 0 || n < best {
				best = n // the plain answer: 206 answers only a Range request
			}
		}
	}
	return best
}

// TestOpenAPIDocument checks the document itself: OpenAPI 3.1, every
// operation named, tagged, answered and with its path parameters declared,
// every $ref resolving, the error envelope and the three security schemes.
func TestOpenAPIDocument(t *testing.T) {
	doc := loadOpenAPI(t)
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi = %q", doc.OpenAPI)
	}
	for _, name := range []string{"bearerJWT", "bearerAPIKey", "metricsToken"} {
		if doc.Components["securitySchemes"][name] == nil {
			t.Errorf("security scheme %s missing", name)
		}
	}
	var env struct {
		Required []string `json:"required"`
	}
	json.Unmarshal(doc.Components["schemas"]["Error"], &env)
	if want := []string{"statusCode", "code", "message", "timestamp", "path"}; !slices.Equal(env.Required, want) {
		t.Errorf("Error schema requires %v, want %v", env.Required, want)
	}
	ids := map[string]string{}
	pathParam := regexp.MustCompile(`\{(\w+)\}`)
	for key, op := range doc.ops() {
		if op.OperationID == "" || len(op.Tags) == 0 || op.Summary == "" {
			t.Errorf("%s: operationId, tags and summary are required", key)
		}
		if prev, dup := ids[op.OperationID]; dup {
			t.Errorf("operationId %s used by %s and %s", op.OperationID, prev, key)
		}
		ids[op.OperationID] = key
		if op.successStatus() == 0 {
			t.Errorf("%s: no 2xx response", key)
		}
		if op.Security == nil {
			t.Errorf("%s: security must be stated ([] for public operations)", key)
		}
		declared := map[string]bool{}
		for _, p := range op.Parameters {
			if p["in"] == "path" {
				declared[p["name"].(string)] = true
			}
		}
		for _, m := range pathParam.FindAllStringSubmatch(key, -1) {
			if !declared[m[1]] {
				t.Errorf("%s: path parameter %s not declared", key, m[1])
			}
		}
	}
	// Every $ref points at an existing component.
	refs := regexp.MustCompile(`"\$ref":\s*"#/components/(\w+)/(\w+)"`).FindAllStringSubmatch(string(web.OpenAPI), -1)
	if len(refs) == 0 {
		t.Fatal("no $ref found")
	}
	for _, m := range refs {
		if doc.Components[m[1]][m[2]] == nil {
			t.Errorf("$ref #/components/%s/%s does not resolve", m[1], m[2])
		}
	}
}

// TestOpenAPICoversRoutes checks that every route the server registers is
// in the document and every documented operation is a route. The HTML
// dashboard (mounted beside the API, not through Server.handle) is not part
// of the API description.
func TestOpenAPICoversRoutes(t *testing.T) {
	s := startServer(t)
	routes := map[string]bool{}
	for _, r := range s.Server.Routes() {
		routes[r] = true
	}
	if len(routes) < 100 {
		t.Fatalf("only %d routes: Routes() is not collecting them", len(routes))
	}
	doc := loadOpenAPI(t)
	var missing, extra []string
	for r := range routes {
		if _, ok := doc.ops()[r]; !ok {
			missing = append(missing, r)
		}
	}
	for op := range doc.ops() {
		if !routes[op] {
			extra = append(extra, op)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("routes missing from web/openapi.json:\n  %s", strings.Join(missing, "\n  "))
	}
	if len(extra) > 0 {
		t.Errorf("documented operations the server does not route:\n  %s", strings.Join(extra, "\n  "))
	}

	// The document is served as checked in, without authentication.
	r := s.must(200, "GET", "/api/openapi.json", "", nil)
	if !bytes.Equal(r.raw, web.OpenAPI) || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatal("GET /api/openapi.json does not serve web/openapi.json")
	}
}

// TestOpenAPISecurity checks that the documented security matches what the
// server enforces: operations needing a bearer token refuse calls without
// one (401), JWT-only operations refuse API keys (403 ERR_AUTH_004), and
// public ones never ask for credentials.
func TestOpenAPISecurity(t *testing.T) {
	s := startServer(t)
	u := s.signup("Sec")
	key := s.createKey(u.token, nil)
	fill := regexp.MustCompile(`\{\w+\}`)
	for k, op := range loadOpenAPI(t).ops() {
		method, path, _ := strings.Cut(k, " ")
		path = fill.ReplaceAllString(path, "x")
		schemes := map[string]bool{}
		for _, req := range op.Security {
			for name := range req {
				schemes[name] = true
			}
		}
		switch {
		case schemes["metricsToken"]:
			continue // TestMetricsProtection
		case len(schemes) == 0:
			if r := s.do(method, path, "", nil); r.status == 401 {
				t.Errorf("%s is documented public but answers 401: %s", k, r.raw)
			}
		default:
			s.wantError(s.do(method, path, "", nil), 401, "ERR_AUTH_003")
			if !schemes["bearerAPIKey"] {
				if r := s.do(method, path, key, nil); r.status != 403 || r.str("code") != "ERR_AUTH_004" {
					t.Errorf("%s is documented JWT-only but an API key gets %d %s", k, r.status, r.str("code"))
				}
			}
		}
	}
}

const examplePassword = "correct horse battery"

// examplePNG is a 1×1 PNG, base64, for the asset fixtures.
const examplePNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGOQi9ryHwAD8gIsFe8/lwAAAABJRU5ErkJggg=="

// exampleWorld holds the accounts and records the document's example
// requests act on.
type exampleWorld struct {
	s   *testServer
	rcv *receiver
	ids map[string]string
	tok map[string]string // caller name -> bearer token
	// last holds the latest answer of each operation, for later substitutions.
	last map[string]resp
}

// signupAs creates a verified account with examplePassword and returns its
// access and refresh tokens and user id.
func (w *exampleWorld) signupAs(name, email string, verified bool) (token, refresh, id string) {
	s := w.s
	s.t.Helper()
	r := s.must(200, "POST", "/api/auth/signup", "", map[string]any{"email": email, "password": examplePassword, "name": name})
	if verified {
		s.verify(user{email: email})
	}
	return r.str("accessToken"), r.str("refreshToken"), r.str("user.id")
}

func (w *exampleWorld) as(name string, method, path string, body any, team string) resp {
	w.s.t.Helper()
	h := []string{}
	if team != "" {
		h = append(h, "X-Team-Id", team)
	}
	r := w.s.do(method, path, w.tok[name], body, h...)
	if r.status/100 != 2 {
		w.s.t.Fatalf("setup %s %s: %d %s", method, path, r.status, r.raw)
	}
	return r
}

func newExampleWorld(t *testing.T) *exampleWorld {
	rcv := startReceiver(t, false)
	s := startServer(t, func(c *Config) {
		c.WebhookAllowPrivate = true
		c.WebhookCA = rcv.caFile
		c.WebhookRetrySchedule = "0s"
	})
	w := &exampleWorld{s: s, rcv: rcv, ids: map[string]string{}, tok: map[string]string{}, last: map[string]resp{}}
	var ownerID string
	w.tok["owner"], _, ownerID = w.signupAs("Owner", "owner@example.com", true)
	w.ids["ownerID"] = ownerID
	_, w.ids["refreshA"], _ = w.signupAs("Refresher", "refresh@example.com", true)
	w.ids["refreshB"] = s.must(200, "POST", "/api/auth/login", "", map[string]any{"email": "refresh@example.com", "password": examplePassword}).str("refreshToken")
	for name, email := range map[string]string{"b": "b@example.com", "c": "c@example.com", "h": "h@example.com", "e": "twofactor@example.com",
		"g": "password@example.com", "f": "leaving@example.com", "p": "partner@example.com"} {
		var id string
		w.tok[name], _, id = w.signupAs(strings.ToUpper(name), email, true)
		w.ids[name+"ID"] = id
	}
	w.tok["u"], _, _ = w.signupAs("Unverified", "unverified@example.com", false)

	// Team X holds everything the owner and the key act on; Y and the
	// partner's team receive shares and invitations; Z is deleted.
	x := w.as("owner", "POST", "/api/teams", map[string]any{"name": "Examples"}, "").str("id")
	w.ids["teamX"] = x
	y := w.as("owner", "POST", "/api/teams", map[string]any{"name": "Other team"}, "").str("id")
	w.ids["teamZ"] = w.as("owner", "POST", "/api/teams", map[string]any{"name": "Disposable"}, "").str("id")
	w.as("p", "POST", "/api/teams", map[string]any{"name": "Partner", "slug": "partner-team"}, "")
	invite := func(team, email, role string) string {
		return w.as("owner", "POST", "/api/teams/members/invite", map[string]any{"email": email, "role": role}, team).str("id")
	}
	for _, who := range []string{"c", "h"} {
		id := invite(x, who+"@example.com", "member")
		w.as(who, "POST", "/api/teams/invitations/"+id+"/accept", nil, "")
	}
	w.ids["invAccept"] = invite(x, "b@example.com", "member")
	w.ids["invReject"] = invite(y, "b@example.com", "viewer")
	w.ids["invCancel"] = invite(x, "pending@example.com", "viewer")

	keys := func(name string) (string, string) {
		r := w.as("owner", "POST", "/api/api-keys", map[string]any{"name": name, "permissions": map[string]bool{"manage_templates": true}}, x)
		return r.str("plainKey"), r.str("id")
	}
	w.tok["key"], w.ids["keyID"] = keys("examples")
	_, w.ids["keyDisposable"] = keys("disposable")

	// Templates: the invoice (slug "invoice", published, with a draft
	// change), one that fails at render time, and disposable ones.
	def := func(name, slug string) map[string]any {
		d := map[string]any{}
		for k, v := range invoiceTemplate {
			d[k] = v
		}
		d["name"], d["outputFormats"] = name, []string{"pdf", "xlsx"}
		if slug != "" {
			d["slug"] = slug
		}
		return d
	}
	tpl := w.as("owner", "POST", "/api/templates", def("Monthly invoice", "invoice"), x).str("id")
	w.ids["tpl"] = tpl
	w.as("owner", "POST", "/api/templates/"+tpl+"/publish", map[string]any{"releaseNotes": "v1"}, x)
	w.as("owner", "PUT", "/api/templates/"+tpl, map[string]any{"description": "draft change"}, x)
	for _, n := range []string{"tplDel", "tplDelV1", "tplBulk"} {
		w.ids[n] = w.as("owner", "POST", "/api/templates", def("Disposable "+n, ""), x).str("id")
	}
	loop := map[string]any{"name": "Fails", "outputFormats": []string{"pdf"},
		"schema":    map[string]any{"sections": []any{map[string]any{"id": "body", "components": []any{map[string]any{"type": "text", "each": "items", "as": "it", "props": map[string]any{"content": "{{it}}"}}}}}},
		"variables": []any{map[string]any{"name": "items", "type": "array", "required": true}}}
	failing := w.as("owner", "POST", "/api/templates", loop, x).str("id")
	w.ids["share"] = w.as("owner", "POST", "/api/templates/"+tpl+"/share", map[string]any{"targetTeamId": y, "permission": "view"}, x).str("id")
	w.ids["folder"] = w.as("owner", "POST", "/api/template-folders", map[string]any{"name": "Archive"}, x).str("id")
	w.ids["category"] = w.as("owner", "POST", "/api/template-categories", map[string]any{"name": "Legal"}, x).str("id")

	// Assets: one to read, replace and rename, one to delete.
	for name, fix := range map[string]string{"brand-logo": "asset", "old-logo": "assetDel"} {
		w.ids[fix] = w.as("owner", "POST", "/api/assets", map[string]any{"name": name, "contentBase64": examplePNG}, x).str("id")
	}

	// Signing certificates: one to read, one to delete, and the file the
	// upload example sends.
	signer := newTestCert(w.s.t, "p256", "Example Signer", time.Now().Add(24*time.Hour))
	w.ids["p12"] = base64.StdEncoding.EncodeToString(signer.p12(w.s.t, "example-p12-password"))
	for name, fix := range map[string]string{"Fixture contracts": "signing", "Fixture old": "signingDel"} {
		w.ids[fix] = w.as("owner", "POST", "/api/signing-certificates", map[string]any{"name": name, "p12Base64": w.ids["p12"], "password": "example-p12-password"}, x).str("id")
	}

	// Jobs: completed ones (one to read, two to delete), a failed one, a batch.
	gen := func() resp {
		return w.as("key", "POST", "/api/v1/documents/generate", map[string]any{"templateId": tpl, "format": "pdf", "variables": map[string]any{"number": "1", "customer": "c"}}, "")
	}
	job := gen()
	w.ids["job"], w.ids["download"] = job.str("jobId"), job.str("downloadUrl")
	w.ids["jobDel"], w.ids["jobDelBulk"] = gen().str("jobId"), gen().str("jobId")
	items := make([]int, 1001)
	f := s.do("POST", "/api/v1/documents/generate", w.tok["key"], map[string]any{"templateId": failing, "format": "pdf", "variables": map[string]any{"items": items}})
	if w.ids["jobFailed"] = f.str("relatedInfo.jobId"); w.ids["jobFailed"] == "" {
		t.Fatalf("no failed job: %s", f.raw)
	}
	w.ids["batch"] = w.as("key", "POST", "/api/v1/documents/generate/batch", map[string]any{"templateId": tpl, "format": "pdf",
		"documents": []any{map[string]any{"variables": map[string]any{"number": "2", "customer": "c"}}}}, "").str("batchId")

	// Webhooks: a subscription with a failed delivery, one to delete. They
	// listen for an event this world never fires: a document.generated of
	// the batch above could otherwise reach the receiver first, take its one
	// failure, and leave the test delivery a success that cannot be retried.
	sub := func() string {
		return w.as("key", "POST", "/api/v1/webhook-subscriptions", map[string]any{"url": rcv.url, "events": []string{"batch.failed"}}, "").str("id")
	}
	w.ids["sub"], w.ids["subDel"] = sub(), sub()
	rcv.failFirst = 1
	w.ids["delivery"] = w.as("key", "POST", "/api/v1/webhook-subscriptions/"+w.ids["sub"]+"/test", nil, "").str("deliveryId")
	return w
}

// exampleCall says how to run one documented operation's example.
type exampleCall struct {
	as     string            // caller: a name in exampleWorld.tok; "" = the default for the route
	team   string            // X-Team-Id fixture name; default teamX for the owner
	params map[string]string // path parameter -> fixture name (default: exampleParams)
	// subst replaces literal example values with fixture values at call time.
	subst func(w *exampleWorld) map[string]string
	late  bool // run after the deletes (it needs their effects)
}

// exampleParams resolves path parameters by name when no call says otherwise.
var exampleParams = map[string]string{"jobId": "job", "batchId": "batch", "shareId": "share", "deliveryId": "delivery", "versionId": "=1"}

// exampleCalls are the operations whose examples need a particular caller,
// record or value. Operations not listed run as the owner (JWT routes) or
// the API key (others) with exampleParams.
var exampleCalls = map[string]exampleCall{
	"POST /api/auth/refresh": {subst: func(w *exampleWorld) map[string]string {
		return map[string]string{"rt_2hV9cQ4mXbT7nK1pL8sW3yZ6aR0dF5gJ9uE2iO7vB4nM1xC8qP3": w.ids["refreshA"]}
	}},
	"POST /api/auth/logout": {subst: func(w *exampleWorld) map[string]string {
		return map[string]string{"rt_2hV9cQ4mXbT7nK1pL8sW3yZ6aR0dF5gJ9uE2iO7vB4nM1xC8qP3": w.ids["refreshB"]}
	}},
	"POST /api/auth/verify-email": {subst: func(w *exampleWorld) map[string]string {
		mails := w.s.mails("jane@example.com") // signed up by the signup example
		if len(mails) == 0 {
			w.s.t.Fatal("no verification mail for the signup example")
		}
		return map[string]string{"Vq3nX8bR2kT6mW1pY9sL4dF7hJ0cG5zA8eU3iO6t": mailToken.FindStringSubmatch(mails[0])[1]}
	}},
	"POST /api/auth/resend-verification":  {as: "u"},
	"POST /api/auth/restore":              {late: true},
	"DELETE /api/users/me":                {as: "f"},
	"POST /api/users/me/change-password":  {as: "g"},
	"GET /api/users/{id}/avatar":          {params: map[string]string{"id": "ownerID"}},
	"GET /api/users/me/2fa/status":        {as: "e"},
	"POST /api/users/me/2fa/enable":       {as: "e"},
	"POST /api/users/me/2fa/backup-codes": {as: "e"},
	"POST /api/users/me/2fa/disable":      {as: "e", late: true},
	"POST /api/users/me/2fa/verify": {as: "e", subst: func(w *exampleWorld) map[string]string {
		return map[string]string{"123456": totpCode(w.s.t.(*testing.T), w.last["POST /api/users/me/2fa/enable"].str("secret"), time.Now())}
	}},
	"GET /api/teams/{id}":                       {params: map[string]string{"id": "teamX"}},
	"PUT /api/teams/{id}":                       {params: map[string]string{"id": "teamX"}},
	"DELETE /api/teams/{id}":                    {params: map[string]string{"id": "teamZ"}},
	"POST /api/teams/leave":                     {as: "h"},
	"DELETE /api/teams/members/{id}":            {params: map[string]string{"id": "cID"}},
	"PATCH /api/teams/members/{id}/role":        {params: map[string]string{"id": "cID"}},
	"DELETE /api/teams/members/{id}/invitation": {params: map[string]string{"id": "invCancel"}},
	"GET /api/teams/invitations/my":             {as: "b"},
	"POST /api/teams/invitations/{id}/accept":   {as: "b", params: map[string]string{"id": "invAccept"}},
	"POST /api/teams/invitations/{id}/reject":   {as: "b", params: map[string]string{"id": "invReject"}},
	"GET /api/api-keys/{id}":                    {params: map[string]string{"id": "keyID"}},
	"PATCH /api/api-keys/{id}":                  {params: map[string]string{"id": "keyID"}},
	"GET /api/api-keys/{id}/stats":              {params: map[string]string{"id": "keyID"}},
	"POST /api/api-keys/{id}/revoke":            {params: map[string]string{"id": "keyDisposable"}},
	"DELETE /api/api-keys/{id}":                 {params: map[string]string{"id": "keyDisposable"}},
	"DELETE /api/templates/{id}":                {params: map[string]string{"id": "tplDel"}},
	"DELETE /api/v1/templates/{id}":             {params: map[string]string{"id": "tplDelV1"}},
	"POST /api/templates/bulk-delete": {subst: func(w *exampleWorld) map[string]string {
		return map[string]string{"tpl_obsolete1": w.ids["tplBulk"], "tpl_obsolete2": w.ids["tplBulk"]}
	}},
	"POST /api/templates/bulk-categories": {subst: func(w *exampleWorld) map[string]string {
		return map[string]string{"invoice": w.ids["tpl"], "cat_finance": w.ids["category"]}
	}},
	"PUT /api/template-folders/{id}":       {params: map[string]string{"id": "folder"}},
	"DELETE /api/template-folders/{id}":    {params: map[string]string{"id": "folder"}},
	"PUT /api/template-categories/{id}":    {params: map[string]string{"id": "category"}},
	"DELETE /api/template-categories/{id}": {params: map[string]string{"id": "category"}},
	"GET /api/assets/{id}":                 {params: map[string]string{"id": "asset"}},
	"GET /api/assets/{id}/content":         {params: map[string]string{"id": "asset"}},
	"PUT /api/assets/{id}":                 {params: map[string]string{"id": "asset"}},
	"PATCH /api/assets/{id}":               {params: map[string]string{"id": "asset"}},
	"DELETE /api/assets/{id}":              {params: map[string]string{"id": "assetDel"}},
	"POST /api/signing-certificates": {subst: func(w *exampleWorld) map[string]string {
		return map[string]string{"MIIKQQIBAzCCCf...": w.ids["p12"], "the p12 password": "example-p12-password"}
	}},
	"GET /api/signing-certificates/{id}":        {params: map[string]string{"id": "signing"}},
	"DELETE /api/signing-certificates/{id}":     {params: map[string]string{"id": "signingDel"}},
	"POST /api/v1/documents/jobs/{jobId}/retry": {params: map[string]string{"jobId": "jobFailed"}},
	"DELETE /api/v1/documents/jobs/{jobId}":     {params: map[string]string{"jobId": "jobDel"}},
	"POST /api/v1/documents/jobs/bulk/retry": {subst: func(w *exampleWorld) map[string]string {
		return map[string]string{"job_failed1": w.ids["jobFailed"], "job_failed2": w.ids["jobFailed"]}
	}},
	"DELETE /api/v1/documents/jobs/bulk": {subst: func(w *exampleWorld) map[string]string {
		return map[string]string{"job_old1": w.ids["jobDelBulk"], "job_old2": "job_gone"}
	}},
	"GET /api/v1/documents/jobs/{jobId}/download":                           {as: "-"},
	"GET /api/v1/documents/batches/{batchId}/combined":                      {as: "-"},
	"DELETE /api/v1/webhook-subscriptions/{id}":                             {params: map[string]string{"id": "subDel"}},
	"POST /api/v1/webhook-subscriptions/{id}/deliveries/{deliveryId}/retry": {params: map[string]string{"id": "sub"}},
}

// TestOpenAPIExamples runs every documented operation against a real
// server: its request body example (substituted where it names records of
// this world), path parameters from fixtures, and the documented caller.
// Each must answer its documented success status.
func TestOpenAPIExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every endpoint")
	}
	w := newExampleWorld(t)
	doc := loadOpenAPI(t)
	ops := doc.ops()
	// Order: the routes' order, deletes after everything else, then the
	// calls that need a delete's effect.
	var first, deletes, late []string
	for _, r := range w.s.Server.Routes() {
		switch {
		case exampleCalls[r].late:
			late = append(late, r)
		case strings.HasPrefix(r, "DELETE "):
			deletes = append(deletes, r)
		default:
			first = append(first, r)
		}
	}
	ran := 0
	for _, key := range slices.Concat(first, deletes, late) {
		op, ok := ops[key]
		if !ok {
			continue // TestOpenAPICoversRoutes reports it
		}
		w.run(t, key, op)
		ran++
	}
	if ran != len(ops) {
		t.Fatalf("ran %d of %d operations", ran, len(ops))
	}
}

var pathParam = regexp.MustCompile(`\{(\w+)\}`)

func (w *exampleWorld) run(t *testing.T, key string, op openAPIOp) {
	t.Helper()
	call := exampleCalls[key]
	method, path, _ := strings.Cut(key, " ")
	// Path parameters.
	var bad string
	path = pathParam.ReplaceAllStringFunc(path, func(p string) string {
		name := p[1 : len(p)-1]
		fix := call.params[name]
		if fix == "" {
			fix = exampleParams[name]
		}
		if fix == "" && name == "id" {
			fix = "tpl" // /api/templates/{id}/... and /api/v1/templates/{id}/...
			if strings.HasPrefix(path, "/api/v1/webhook-subscriptions/") {
				fix = "sub"
			}
		}
		if strings.HasPrefix(fix, "=") {
			return fix[1:]
		}
		if w.ids[fix] == "" {
			bad = name
		}
		return url.PathEscape(w.ids[fix])
	})
	if bad != "" {
		t.Fatalf("%s: no fixture for path parameter %s (add it to exampleCalls)", key, bad)
	}
	// Caller.
	who := call.as
	if who == "" {
		switch {
		case len(op.Security) == 0:
			who = "-"
		case slices.ContainsFunc(op.Security, func(m map[string][]any) bool { _, ok := m["bearerAPIKey"]; return ok }):
			who = "key"
		case slices.ContainsFunc(op.Security, func(m map[string][]any) bool { _, ok := m["metricsToken"]; return ok }):
			who = "-" // loopback client without a token
		default:
			who = "owner"
		}
	}
	var headers []string
	if who != "-" && who != "key" {
		team := w.ids["teamX"]
		if call.team != "" {
			team = w.ids[call.team]
		}
		if who == "owner" || who == "h" {
			headers = append(headers, "X-Team-Id", team)
		}
	}
	// Body: the documented example.
	var body any
	if op.RequestBody != nil {
		for ct, c := range op.RequestBody.Content {
			if _, ok := op.RequestBody.Content["application/json"]; ok && ct != "application/json" {
				continue // one body per call: an operation taking JSON or multipart (assets) runs its JSON example
			}
			if len(c.Example) == 0 {
				t.Fatalf("%s: request body %s has no example", key, ct)
			}
			ex := string(c.Example)
			if call.subst != nil {
				for from, to := range call.subst(w) {
					ex = strings.ReplaceAll(ex, `"`+from+`"`, `"`+to+`"`)
				}
			}
			switch ct {
			case "application/json":
				body = ex
			case "multipart/form-data":
				var fields map[string]string
				json.Unmarshal([]byte(ex), &fields)
				var buf bytes.Buffer
				mw := multipart.NewWriter(&buf)
				fw, _ := mw.CreateFormFile("file", "template.json")
				fw.Write([]byte(fields["file"]))
				mw.WriteField("duplicateHandling", fields["duplicateHandling"])
				mw.Close()
				body = buf.Bytes()
				headers = append(headers, "Content-Type", mw.FormDataContentType())
			default:
				t.Fatalf("%s: no runner for %s examples", key, ct)
			}
		}
	}
	target := path
	if key == "GET /api/v1/documents/jobs/{jobId}/download" {
		target = w.ids["download"]
	}
	if key == "GET /api/v1/documents/batches/{batchId}/combined" {
		target = w.s.waitBatch(w.tok["key"], w.ids["batch"]).str("combinedUrl")
	}
	token := ""
	if who != "-" {
		token = w.tok[who]
	}
	r := w.s.do(method, target, token, body, headers...)
	w.last[key] = r
	want := op.successStatus()
	if r.status != want {
		t.Errorf("%s (as %s): status %d, want %d\n%s", key, who, r.status, want, truncate(r.raw, 400))
		return
	}
	// The documented response headers are sent; a Content-Disposition is
	// of the documented kind (attachment or inline).
	for name, h := range op.Responses[fmt.Sprint(want)].Headers {
		got := r.header.Get(name)
		if got == "" {
			t.Errorf("%s: documents the header %s, the answer has none", key, name)
			continue
		}
		if kind, _, _ := strings.Cut(h.Description, ";"); name == "Content-Disposition" && !strings.HasPrefix(got, kind+";") {
			t.Errorf("%s: Content-Disposition %q, documented %q", key, got, h.Description)
		}
	}
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}
