package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// matrixBodies gives routes a body that passes validation, so a refusal
// comes from authorization and not from the body.
var matrixBodies = map[string]any{
	"PUT /api/templates/{id}":                                               map[string]any{"name": "Renamed"},
	"PATCH /api/v1/templates/{id}":                                          map[string]any{"name": "Renamed"},
	"POST /api/templates/{id}/publish":                                      map[string]any{"releaseNotes": "x"},
	"POST /api/templates/{id}/share":                                        map[string]any{"targetTeamId": "team_x", "permission": "view"},
	"PUT /api/templates/shares/{shareId}":                                   map[string]any{"permission": "edit"},
	"POST /api/templates/bulk-delete":                                       map[string]any{"ids": []string{"{tpl}"}},
	"POST /api/templates/bulk-categories":                                   map[string]any{"templateIds": []string{"{tpl}"}, "categoryIds": []string{"{cat}"}},
	"POST /api/templates/{id}/preview":                                      map[string]any{"variables": map[string]any{"number": "1", "customer": "c"}},
	"POST /api/v1/documents/generate":                                       map[string]any{"templateId": "{tpl}", "format": "pdf", "variables": map[string]any{"number": "1", "customer": "c"}},
	"POST /api/v1/documents/generate/batch":                                 map[string]any{"templateId": "{tpl}", "format": "pdf", "documents": []any{map[string]any{"variables": map[string]any{"number": "1", "customer": "c"}}}},
	"POST /api/v1/documents/jobs/bulk/retry":                                map[string]any{"jobIds": []string{"{job}"}},
	"DELETE /api/v1/documents/jobs/bulk":                                    map[string]any{"jobIds": []string{"{job}"}},
	"PATCH /api/v1/webhook-subscriptions/{id}":                              map[string]any{"enabled": false},
	"PATCH /api/api-keys/{id}":                                              map[string]any{"name": "stolen"},
	"PUT /api/teams/{id}":                                                   map[string]any{"name": "Stolen"},
	"PATCH /api/teams/members/{id}/role":                                    map[string]any{"role": "admin"},
	"PUT /api/template-folders/{id}":                                        map[string]any{"name": "Stolen"},
	"PUT /api/template-categories/{id}":                                     map[string]any{"name": "Stolen"},
	"POST /api/templates/validate-schema":                                   map[string]any{"templateType": "attachment", "schema": map[string]any{"sections": []any{}}},
	"POST /api/templates/validate-variables":                                map[string]any{"variables": []any{}},
	"POST /api/v1/webhook-subscriptions":                                    map[string]any{"url": "https://127.0.0.1:1/hook"},
	"POST /api/v1/templates":                                                map[string]any{"name": "Other", "outputFormats": []string{"pdf"}, "schema": map[string]any{"sections": []any{}}},
	"POST /api/templates":                                                   map[string]any{"name": "Other", "outputFormats": []string{"pdf"}, "schema": map[string]any{"sections": []any{}}},
	"POST /api/template-folders":                                            map[string]any{"name": "F2"},
	"POST /api/template-categories":                                         map[string]any{"name": "C2"},
	"POST /api/api-keys":                                                    map[string]any{"name": "k"},
	"POST /api/teams":                                                       map[string]any{"name": "T2"},
	"POST /api/teams/members/invite":                                        map[string]any{"email": "someone@example.com", "role": "member"},
	"POST /api/v1/webhook-subscriptions/{id}/deliveries/{deliveryId}/retry": nil,
	"POST /api/assets":                                                      map[string]any{"name": "mine", "contentBase64": examplePNG},
	"PUT /api/assets/{id}":                                                  map[string]any{"contentBase64": examplePNG},
	"PATCH /api/assets/{id}":                                                map[string]any{"name": "Stolen"},
}

// selfRoutes act on the caller's own account or membership; they are
// checked for authentication only (a viewer leaving its team is allowed).
var selfRoutes = regexp.MustCompile(`^(\S+ /api/users/me|\S+ /api/auth/|POST /api/teams$|POST /api/teams/leave|\S+ /api/teams/invitations/(my|\{id\}/(accept|reject)))`)

func TestRouteIsolationMatrix(t *testing.T) {
	s := startServer(t, func(c *Config) { c.WebhookAllowPrivate = true })
	a, b, v, c := s.verifiedUser("Alice"), s.verifiedUser("Bob"), s.verifiedUser("Vera"), s.verifiedUser("Carl")
	team := s.newTeam(a, "Acme")
	ha := []string{"X-Team-Id", team}
	s.join(a, team, v, "viewer")
	mk := func(perms map[string]bool) string {
		body := map[string]any{"name": "k"}
		if perms != nil {
			body["permissions"] = perms
		}
		return s.must(200, "POST", "/api/api-keys", a.token, body, ha...).str("plainKey")
	}
	keyA := mk(map[string]bool{"manage_templates": true})
	keyLimited := mk(map[string]bool{"send_emails": false, "read_analytics": false, "manage_templates": false})
	revoked := s.must(200, "POST", "/api/api-keys", a.token, map[string]any{"name": "old"}, ha...)
	s.must(200, "POST", "/api/api-keys/"+revoked.str("id")+"/revoke", a.token, nil, ha...)
	keyID := s.must(200, "GET", "/api/api-keys", a.token, nil, ha...).get("data").([]any)[0].(map[string]any)["id"].(string)

	body := map[string]any{}
	for k, val := range invoiceTemplate {
		body[k] = val
	}
	body["name"] = "Acme Invoice"
	tpl := s.must(200, "POST", "/api/templates", a.token, body, ha...)
	s.must(200, "POST", "/api/templates/"+tpl.str("id")+"/publish", a.token, map[string]any{}, ha...)
	version := s.must(200, "GET", "/api/templates/"+tpl.str("id")+"/versions", a.token, nil, ha...).get("data").([]any)[0].(map[string]any)["id"].(string)
	job := s.must(200, "POST", "/api/v1/documents/generate", keyA, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": map[string]any{"number": "1", "customer": "c"}})
	bat := s.must(200, "POST", "/api/v1/documents/generate/batch", keyA, map[string]any{"templateId": tpl.str("id"), "format": "pdf",
		"documents": []any{map[string]any{"variables": map[string]any{"number": "1", "customer": "c"}}}})
	folder := s.must(200, "POST", "/api/template-folders", a.token, map[string]any{"name": "Acme folder"}, ha...).str("id")
	cat := s.must(200, "POST", "/api/template-categories", a.token, map[string]any{"name": "Acme category"}, ha...).str("id")
	sub := s.must(200, "POST", "/api/v1/webhook-subscriptions", keyA, map[string]any{"url": "https://127.0.0.1:1/hook"})
	dlv := s.must(200, "POST", "/api/v1/webhook-subscriptions/"+sub.str("id")+"/test", keyA, nil).str("deliveryId")
	teamC := s.must(200, "GET", "/api/teams", c.token, nil).get("data").([]any)[0].(map[string]any)["id"].(string)
	share := s.must(200, "POST", "/api/templates/attachment/"+tpl.str("id")+"/share", a.token, map[string]any{"targetTeamId": teamC}, ha...).str("id")
	s.must(200, "POST", "/api/teams/members/invite", a.token, map[string]any{"email": "pending@example.com", "role": "member"}, ha...)
	inv := s.lastInvitationID("pending@example.com")

	asset := s.must(200, "POST", "/api/assets", a.token, map[string]any{"name": "Acme logo", "contentBase64": examplePNG}, ha...).str("id")
	signer := newTestCert(t, "p256", "Acme Signer", time.Now().Add(24*time.Hour))
	signing := s.must(200, "POST", "/api/signing-certificates", a.token, map[string]any{"name": "Acme signer",
		"p12Base64": base64.StdEncoding.EncodeToString(signer.p12(t, "pw")), "password": "pw"}, ha...).str("id")
	matrixBodies["POST /api/signing-certificates"] = map[string]any{"name": "Mine", "password": "pw",
		"p12Base64": base64.StdEncoding.EncodeToString(newTestCert(t, "p256", "Someone", time.Now().Add(24*time.Hour)).p12(t, "pw"))}

	ids := map[string]string{"{tpl}": tpl.str("id"), "{job}": job.str("jobId"), "{cat}": cat}
	secrets := []string{tpl.str("id"), tpl.str("shortId"), job.str("jobId"), bat.str("batchId"), folder, cat, sub.str("id"), dlv, keyID, share, inv, team, "Acme Invoice", "Acme folder",
		asset, "Acme logo", signing, "Acme signer"}

	// Tokens that must never authenticate.
	jwtKey, err := os.ReadFile(filepath.Join(s.Config.Data, "keys", "jwt.key"))
	if err != nil {
		t.Fatal(err)
	}
	sign := func(key []byte, exp time.Time) string {
		tok, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{Subject: a.id, IssuedAt: jwt.NewNumericDate(exp.Add(-time.Hour)), ExpiresAt: jwt.NewNumericDate(exp)}).SignedString(key)
		return tok
	}
	other := make([]byte, 32)
	rand.Read(other)
	parts := strings.Split(a.token, ".")
	badAuth := map[string]string{
		"expired JWT": sign(jwtKey, time.Now().Add(-time.Minute)),
		"forged JWT":  sign(other, time.Now().Add(time.Hour)),
		"alg:none":    "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + parts[1] + ".",
		"revoked key": revoked.str("plainKey"),
		"garbage":     "svc_sk_" + strings.Repeat("Z", 40),
	}
	keyB := s.createKey(b.token, map[string]bool{"manage_templates": true})

	checked := 0
	for _, pattern := range s.Server.Routes() {
		method, path, _ := strings.Cut(pattern, " ")
		if strings.HasPrefix(path, "/healthz") || strings.HasPrefix(path, "/readyz") || strings.HasPrefix(path, "/metrics") ||
			strings.HasPrefix(path, "/debug/") || path == "/api/openapi.json" || strings.HasPrefix(path, "/api/auth/") || !strings.HasPrefix(path, "/api/") {
			continue
		}
		concrete := path
		hasID := strings.Contains(path, "{")
		for _, r := range []struct{ param, val string }{
			{"/api/api-keys/{id}", "/api/api-keys/" + keyID}, {"/api/teams/members/{id}/invitation", "/api/teams/members/" + inv + "/invitation"},
			{"/api/teams/members/{id}", "/api/teams/members/" + v.id}, {"/api/teams/invitations/{id}", "/api/teams/invitations/" + inv},
			{"/api/teams/{id}", "/api/teams/" + team}, {"/api/templates/shares/{shareId}", "/api/templates/shares/" + share},
			{"/api/template-folders/{id}", "/api/template-folders/" + folder}, {"/api/template-categories/{id}", "/api/template-categories/" + cat},
			{"{versionId}", version}, {"/api/templates/{id}", "/api/templates/" + tpl.str("id")}, {"/api/v1/templates/{id}", "/api/v1/templates/" + tpl.str("id")},
			{"{jobId}", job.str("jobId")}, {"{batchId}", bat.str("batchId")}, {"{deliveryId}", dlv},
			{"/api/v1/webhook-subscriptions/{id}", "/api/v1/webhook-subscriptions/" + sub.str("id")}, {"/api/users/{id}", "/api/users/" + a.id},
			{"/api/assets/{id}", "/api/assets/" + asset}, {"/api/signing-certificates/{id}", "/api/signing-certificates/" + signing},
		} {
			concrete = strings.ReplaceAll(concrete, r.param, r.val)
		}
		if strings.Contains(concrete, "{") {
			t.Fatalf("route %s: no object for %s", pattern, concrete)
		}
		if strings.HasSuffix(concrete, "/download") || strings.HasSuffix(concrete, "/combined") {
			continue // the signed link is the credential: covered by the download tests, FuzzDownloadVerify and TestAttachPDFsThroughAPI (combined)
		}
		reqBody := any(map[string]any{})
		if b, ok := matrixBodies[pattern]; ok && b != nil {
			reqBody = substitute(b, ids)
		}
		if method == "GET" || method == "DELETE" && reqBody != nil && len(reqBody.(map[string]any)) == 0 {
			reqBody = nil
		}
		checked++
		sent, _ := json.Marshal(reqBody)
		for name, tok := range badAuth {
			if pattern == "GET /api/users/{id}/avatar" {
				break // public: avatars are images linked from profiles
			}
			r := s.do(method, concrete, tok, reqBody)
			if r.status != 401 {
				t.Errorf("%s with %s: %d %s, want 401", pattern, name, r.status, r.str("code"))
			}
		}
		self := selfRoutes.MatchString(pattern)
		// Team B, by JWT, by key, and naming team A.
		for name, call := range map[string]func() resp{
			"team B JWT":        func() resp { return s.do(method, concrete, b.token, reqBody) },
			"team B key":        func() resp { return s.do(method, concrete, keyB, reqBody) },
			"B naming A's team": func() resp { return s.do(method, concrete, b.token, reqBody, "X-Team-Id", team) },
		} {
			r := call()
			if self && name != "B naming A's team" {
				continue // B's own account: allowed, and checked by the account tests
			}
			leak := ""
			for _, sec := range secrets {
				// An id the caller sent itself may be echoed back.
				if strings.Contains(string(r.raw), sec) && !strings.Contains(concrete, sec) && !strings.Contains(string(sent), sec) {
					leak = sec
				}
			}
			switch {
			case leak != "":
				t.Errorf("%s as %s: answer contains A's %q: %.200s", pattern, name, leak, r.raw)
			case hasID && r.status/100 == 2 && pattern != "GET /api/users/{id}/avatar":
				t.Errorf("%s as %s: %d on A's object", pattern, name, r.status)
			case r.status == 403 && r.str("code") != "ERR_AUTH_004" && r.str("code") != "ERR_AUTH_005" && r.str("code") != "ERR_AUTH_006":
				t.Errorf("%s as %s: 403 %s reveals A's object exists (want 404)", pattern, name, r.str("code"))
			case r.status >= 500:
				t.Errorf("%s as %s: %d %s", pattern, name, r.status, r.raw)
			}
		}
		// The viewer of team A cannot change anything.
		readOnly := method == "GET" || strings.HasSuffix(path, "/preview") || strings.HasPrefix(path, "/api/templates/validate-")
		if !self && !readOnly {
			if r := s.do(method, concrete, v.token, reqBody, "X-Team-Id", team); r.status/100 == 2 || r.status >= 500 {
				t.Errorf("%s as viewer: %d %.200s", pattern, r.status, r.raw)
			}
		}
		// A key without the permission is refused with ERR_AUTH_005 (or
		// ERR_AUTH_004 on dashboard-only routes).
		needs := ""
		switch {
		case strings.HasPrefix(path, "/api/v1/webhook-subscriptions"):
			needs = "webhooks:write"
		case strings.Contains(path, "/analytics"):
			needs = "analytics:read"
		case method != "GET" && strings.HasPrefix(path, "/api/v1/documents"):
			needs = "attachments:write"
		case method != "GET" && (strings.HasPrefix(path, "/api/v1/templates") || strings.HasPrefix(path, "/api/assets")):
			needs = "templates:write"
		}
		if needs != "" {
			r := s.do(method, concrete, keyLimited, reqBody)
			if r.status != 403 || (r.str("code") == "ERR_AUTH_005" && r.str("relatedInfo.required") != needs) || (r.str("code") != "ERR_AUTH_005" && r.str("code") != "ERR_AUTH_004") {
				t.Errorf("%s with a key lacking %s: %d %s %v", pattern, needs, r.status, r.str("code"), r.get("relatedInfo"))
			}
		}
	}
	if checked < 90 {
		t.Fatalf("only %d routes checked", checked)
	}
	// Team A's things are all still there.
	s.must(200, "GET", "/api/templates/"+tpl.str("id"), a.token, nil, ha...)
	s.must(200, "GET", "/api/v1/documents/jobs/"+job.str("jobId"), keyA, nil)
	s.must(200, "GET", "/api/v1/webhook-subscriptions/"+sub.str("id"), keyA, nil)
	if r := s.must(200, "GET", "/api/assets/"+asset, keyA, nil); r.str("name") != "Acme logo" {
		t.Errorf("A's asset changed: %s", r.raw)
	}
	if r := s.must(200, "GET", "/api/signing-certificates/"+signing, keyA, nil); r.str("name") != "Acme signer" {
		t.Errorf("A's signing certificate changed: %s", r.raw)
	}
	t.Logf("%d routes x %d attackers checked", checked, len(badAuth)+5)
	_ = fmt.Sprint
}

// substitute replaces placeholder strings like "{tpl}" in a body.
func substitute(v any, ids map[string]string) any {
	switch x := v.(type) {
	case string:
		if id, ok := ids[x]; ok {
			return id
		}
		return x
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = substitute(e, ids)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = substitute(e, ids)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = substitute(e, ids)
		}
		return out
	}
	return v
}
