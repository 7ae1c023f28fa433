package web

import (
	"net/http/httptest"
	"strings"
	"testing"

	"folio/app"
)

// FuzzDecode feeds arbitrary bodies to the JSON decoder for every request
// type: it must never panic, and must either fill the value or return an
// *app.Error that the envelope can show.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"templateId":"x","format":"pdf","variables":{"a":1}}`, `{"documents":[{"variables":{}}]}`, `[1,2]`, `"x"`, `null`,
		`{"name":5}`, `{"permissions":{"send_emails":"yes"}}`, `{"schema":{"sections":[]}}`, `{"a":` + strings.Repeat("[", 10000),
		"{\"email\":\"\\ud800\"}", `{"url":"https://x","events":["document.generated"]}`, `{} {}`,
	} {
		f.Add(seed)
	}
	targets := []func() any{
		func() any { return &app.GenerateInput{} }, func() any { return &app.BatchInput{} }, func() any { return &app.TemplateInput{} },
		func() any { return &app.KeyInput{} }, func() any { return &app.SignupInput{} }, func() any { return &app.LoginInput{} },
		func() any { return &app.SubscriptionInput{} }, func() any { return &app.PreviewInput{} }, func() any { return &app.ValidateSchemaInput{} },
		func() any { return &app.ValidateVariablesInput{} }, func() any { return &jobIDs{} },
		func() any { return &app.KeyUpdate{} }, func() any { return &app.SubscriptionUpdate{} }, func() any { return &app.TemplateUpdate{} },
		func() any { return &app.ShareInput{} }, func() any { return &app.GroupInput{} }, func() any { return &app.BulkCategoriesInput{} },
		func() any { return &app.PublishInput{} }, func() any { return &app.TeamInput{} }, func() any { return &app.InviteInput{} },
		func() any { return &app.RoleInput{} }, func() any { return &app.ChangePasswordInput{} }, func() any { return &app.DeleteAccountInput{} },
		func() any { return &app.EmailPreferencesInput{} }, func() any { return &app.PasswordInput{} }, func() any { return &app.ProfileInput{} },
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, mk := range targets {
			err := decode(httptest.NewRequest("POST", "/", strings.NewReader(body)), mk())
			if err != nil && app.ErrorCode(err) == "" {
				t.Fatalf("decode(%q) returned a non-envelope error %v", body, err)
			}
		}
	})
}

// FuzzBearer checks the Authorization header parser never panics.
func FuzzBearer(f *testing.F) {
	for _, s := range []string{"Bearer svc_sk_abc", "bearer x", "Basic abc", "Bearer", "Bearer  ", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Authorization", h)
		tok := bearer(r)
		if tok != "" && !strings.Contains(h, tok) {
			t.Fatalf("bearer(%q) = %q", h, tok)
		}
	})
}
