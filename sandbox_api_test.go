package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestEnvTemplateRefusedThroughAPI: a calculated variable reading $env
// used to overflow the stack of the whole process at its first dry run
// (issue 18). Saving it, validating it and rendering it are refused with
// ERR_TMPL_008 naming the expression's path; nothing crashes.
func TestEnvTemplateRefusedThroughAPI(t *testing.T) {
	s := startServer(t)
	u := s.signup("Attacker")
	key := s.createKey(u.token, map[string]bool{"manage_templates": true})
	def := map[string]any{"outputFormats": []string{"pdf"},
		"schema":              json.RawMessage(`{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"{{ n }}"}}]}]}`),
		"calculatedVariables": []any{map[string]any{"name": "n", "expression": "$env"}}}
	wantRefused := func(r resp) {
		t.Helper()
		s.wantError(r, 400, "ERR_TMPL_008")
		if !strings.Contains(string(r.raw), `calculatedVariables[0].expression`) || !strings.Contains(string(r.raw), `$env`) {
			t.Fatalf("the error should name the expression's path and $env: %s", r.raw)
		}
	}
	body := map[string]any{"name": "Env"}
	for k, v := range def {
		body[k] = v
	}
	wantRefused(s.do("POST", "/api/templates", u.token, body))
	// The validation endpoints answer 200 with the problem and its path.
	v := s.must(200, "POST", "/api/templates/validate-variables", u.token, map[string]any{"variables": []any{},
		"calculatedVariables": def["calculatedVariables"]})
	if v.str("valid") != "false" || !strings.Contains(string(v.raw), `calculatedVariables[0].expression`) {
		t.Fatalf("validate-variables: %s", v.raw)
	}
	v = s.must(200, "POST", "/api/templates/validate-schema", u.token, map[string]any{"templateType": "attachment",
		"schema": json.RawMessage(`{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"{{ $env }}"}}]}]}`)})
	if v.str("valid") != "false" || !strings.Contains(string(v.raw), `schema.sections[0].components[0].props.content`) || !strings.Contains(string(v.raw), `$env`) {
		t.Fatalf("validate-schema: %s", v.raw)
	}
	wantRefused(s.do("POST", "/api/v1/templates", key, body))
	// In a placeholder too, and in a template edited later.
	tpl := s.createTemplate(u.token, "Fine", map[string]any{"outputFormats": []string{"pdf"},
		"schema": json.RawMessage(`{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"ok"}}]}]}`)})
	r := s.do("PUT", "/api/templates/"+tpl.str("id"), u.token, map[string]any{
		"schema": json.RawMessage(`{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"{{ keys($env) }}"}}]}]}`)})
	s.wantError(r, 400, "ERR_TMPL_008")
	// The server is alive and well.
	if d := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf"}); d.str("status") != "completed" {
		t.Fatalf("generate after the refusals: %s", d.raw)
	}
}

// TestExpressionMemoryBudgetThroughAPI: an expression that makes more than
// its byte budget (here 1,500 copies of a doubled 500 KB text, 1.5 GB)
// stops with ERR_LIMIT_017 naming the expressionMemory limit, in a dry
// run and in a job, instead of growing the heap.
func TestExpressionMemoryBudgetThroughAPI(t *testing.T) {
	s := startServer(t)
	u := s.signup("Spender")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Bomb", map[string]any{"outputFormats": []string{"pdf"},
		"schema":              json.RawMessage(`{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"{{ n }}"}}]}]}`),
		"variables":           []any{map[string]any{"name": "s", "type": "string"}},
		"calculatedVariables": []any{map[string]any{"name": "n", "expression": "len(map(1..1500, s + s))"}}})
	gen := map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": map[string]any{"s": strings.Repeat("x", 500_000)}}
	d := s.must(200, "POST", "/api/v1/documents/generate?dryRun=true", key, gen)
	if d.str("valid") != "false" || !strings.Contains(string(d.raw), `"code":"ERR_LIMIT_017"`) || !strings.Contains(string(d.raw), `"limit":"expressionMemory"`) {
		t.Fatalf("dry run: %s", d.raw)
	}
	r := s.do("POST", "/api/v1/documents/generate", key, gen)
	s.wantError(r, 400, "ERR_LIMIT_017")
	if r.str("relatedInfo.limit") != "expressionMemory" || num(r, "relatedInfo.max") != 64<<20 || num(r, "relatedInfo.actual") <= 64<<20 {
		t.Fatalf("generate: %s", r.raw)
	}
}
