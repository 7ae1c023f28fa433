package main

import (
	"strings"
	"testing"
)

func TestPreview(t *testing.T) {
	s := startServer(t)
	u := s.signup("Previewer")
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	r := s.do("POST", "/api/templates/"+tpl.str("id")+"/preview", u.token, map[string]any{"variables": map[string]any{"number": "P-1", "customer": "Preview GmbH"}})
	if r.status != 200 || r.header.Get("Content-Type") != "application/pdf" || r.header.Get("X-Folio-Pages") != "1" {
		t.Fatalf("preview: %d %v", r.status, r.header)
	}
	if text := pdfText(t, r.raw); !strings.Contains(text, "Bill to: Preview GmbH") {
		t.Fatalf("preview text:\n%s", text)
	}
	// Nothing is recorded.
	if l := s.must(200, "GET", "/api/v1/documents/jobs", u.token, nil); l.str("meta.total") != "0" {
		t.Fatalf("preview recorded a job: %s", l.raw)
	}
	// An API key with templates:read may preview too.
	key := s.createKey(u.token, nil)
	s.must(200, "POST", "/api/templates/"+tpl.str("slug")+"/preview", key, map[string]any{"variables": map[string]any{"number": "1", "customer": "c"}})

	s.wantError(s.do("POST", "/api/templates/"+tpl.str("id")+"/preview", u.token, map[string]any{"variables": map[string]any{}}), 400, "ERR_VALID_002")
	s.wantError(s.do("POST", "/api/templates/"+tpl.str("id")+"/preview", u.token, map[string]any{"format": "docx"}), 400, "ERR_VALID_003")
	s.wantError(s.do("POST", "/api/templates/tpl_nope/preview", u.token, map[string]any{}), 404, "ERR_TMPL_001")
	other := s.signup("Snoop")
	s.wantError(s.do("POST", "/api/templates/"+tpl.str("id")+"/preview", other.token, map[string]any{}), 404, "ERR_TMPL_001")

	long := s.createTemplate(u.token, "Long", longTemplate())
	s.wantError(s.do("POST", "/api/templates/"+long.str("id")+"/preview", u.token, map[string]any{"variables": map[string]any{"body": longText}}), 400, "ERR_LIMIT_001")
}

func TestValidateSchemaAndVariables(t *testing.T) {
	s := startServer(t)
	u := s.signup("Checker")
	ok := s.must(200, "POST", "/api/templates/validate-schema", u.token, map[string]any{"templateType": "attachment", "schema": invoiceTemplate["schema"]})
	if ok.str("valid") != "true" || len(ok.get("errors").([]any)) != 0 || ok.get("warnings") == nil {
		t.Fatalf("valid schema = %s", ok.raw)
	}
	bad := s.must(200, "POST", "/api/templates/validate-schema", u.token, map[string]any{"templateType": "attachment",
		"schema": map[string]any{"sections": []any{map[string]any{"id": "a", "components": []any{map[string]any{"type": "text", "props": map[string]any{"content": "{{ a + }}"}}}}}}})
	errs := bad.get("errors").([]any)
	if bad.str("valid") != "false" || len(errs) != 1 || !strings.Contains(errs[0].(map[string]any)["path"].(string), "sections[0].components[0].props.content") {
		t.Fatalf("invalid schema = %s", bad.raw)
	}
	warn := s.must(200, "POST", "/api/templates/validate-schema", u.token, map[string]any{"templateType": "email", "schema": map[string]any{"sections": []any{}}})
	if warn.str("valid") != "true" || !strings.Contains(string(warn.raw), "schema.pageSize") {
		t.Fatalf("warnings = %s", warn.raw)
	}
	s.wantError(s.do("POST", "/api/templates/validate-schema", u.token, map[string]any{"schema": map[string]any{}}), 400, "ERR_VALID_005")
	s.wantError(s.do("POST", "/api/templates/validate-schema", u.token, map[string]any{"templateType": "letter", "schema": map[string]any{}}), 400, "ERR_TMPL_009")

	vv := s.must(200, "POST", "/api/templates/validate-variables", u.token, map[string]any{
		"variables":           []any{map[string]any{"name": "qty", "type": "integer", "required": true}, map[string]any{"name": "price", "type": "number", "defaultValue": "cheap"}},
		"calculatedVariables": []any{map[string]any{"name": "a", "expression": "b + 1"}, map[string]any{"name": "b", "expression": "a + 1"}},
	})
	text := string(vv.raw)
	if vv.str("valid") != "false" || !strings.Contains(text, "variables[1]") || !strings.Contains(text, "cycle") {
		t.Fatalf("validate-variables = %s", text)
	}
	good := s.must(200, "POST", "/api/templates/validate-variables", u.token, map[string]any{
		"variables":           []any{map[string]any{"name": "qty", "type": "integer", "required": true, "description": "units"}},
		"constants":           map[string]any{"vat": 0.2},
		"calculatedVariables": []any{map[string]any{"name": "total", "expression": "qty * 10 * (1 + vat)"}},
	})
	if good.str("valid") != "true" || len(good.get("errors").([]any)) != 0 {
		t.Fatalf("good variables = %s", good.raw)
	}
	s.wantError(s.do("POST", "/api/templates/validate-variables", u.token, map[string]any{}), 400, "ERR_VALID_005")
}

func TestPreviewSharedTemplate(t *testing.T) {
	s := startServer(t)
	owner, guest := s.verifiedUser("Owner"), s.signup("Guest")
	tpl := s.createTemplate(owner.token, "Invoice", invoiceTemplate)
	guestTeam := s.must(200, "GET", "/api/teams", guest.token, nil).get("data").([]any)[0].(map[string]any)["id"].(string)
	body := map[string]any{"variables": map[string]any{"number": "S-1", "customer": "Shared Ltd"}}
	s.wantError(s.do("POST", "/api/templates/"+tpl.str("id")+"/preview", guest.token, body), 404, "ERR_TMPL_001")
	s.must(200, "POST", "/api/templates/attachment/"+tpl.str("id")+"/share", owner.token, map[string]any{"targetTeamId": guestTeam, "permission": "view"})
	r := s.must(200, "POST", "/api/templates/"+tpl.str("id")+"/preview", guest.token, body)
	if !strings.Contains(pdfText(t, r.raw), "Shared Ltd") {
		t.Fatal("shared preview lacks its variable")
	}
}
