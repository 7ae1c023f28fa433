package main

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"folio/web"
)

// jsonSchema is the part of JSON Schema 2020-12 that web/openapi.json uses.
// Annotations (description, format, default, examples, contentMediaType)
// do not constrain values and are not read.
type jsonSchema struct {
	Ref                  string                     `json:"$ref"`
	Type                 json.RawMessage            `json:"type"` // a name or a list of names
	Properties           map[string]json.RawMessage `json:"properties"`
	Required             []string                   `json:"required"`
	AdditionalProperties json.RawMessage            `json:"additionalProperties"`
	Items                json.RawMessage            `json:"items"`
	Enum                 []any                      `json:"enum"`
	Const                json.RawMessage            `json:"const"`
	OneOf                []json.RawMessage          `json:"oneOf"`
	AnyOf                []json.RawMessage          `json:"anyOf"`
	AllOf                []json.RawMessage          `json:"allOf"`
	MinLength            *int                       `json:"minLength"`
	MaxLength            *int                       `json:"maxLength"`
	MaxItems             *int                       `json:"maxItems"`
	Minimum              *float64                   `json:"minimum"`
	Maximum              *float64                   `json:"maximum"`
	Pattern              string                     `json:"pattern"`
}

// schemaKeywords are the keywords jsonSchema understands or may ignore; a
// schema using another one fails the validation instead of passing unchecked.
var schemaKeywords = map[string]bool{"$ref": true, "type": true, "properties": true, "required": true,
	"additionalProperties": true, "items": true, "enum": true, "const": true, "oneOf": true, "anyOf": true,
	"allOf": true, "minLength": true, "maxLength": true, "maxItems": true, "minimum": true, "maximum": true,
	"pattern": true, "description": true, "format": true, "default": true, "examples": true,
	"contentMediaType": true, "title": true, "deprecated": true, "readOnly": true, "writeOnly": true}

// validate checks v (decoded JSON) against schema, resolving $refs in the
// document's components, and returns what is wrong, each with its JSON path.
func (d *openAPIDoc) validate(schema json.RawMessage, v any, at string) []string {
	if at == "" {
		at = "$"
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(schema, &raw); err != nil {
		return []string{at + ": schema is not an object: " + err.Error()}
	}
	var unknown []string
	for k := range raw {
		if !schemaKeywords[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return []string{at + ": schema keyword(s) the test validator does not know: " + strings.Join(unknown, ", ")}
	}
	var s jsonSchema
	json.Unmarshal(schema, &s)
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, at+": "+fmt.Sprintf(format, args...)) }

	if s.Ref != "" {
		name, ok := strings.CutPrefix(s.Ref, "#/components/schemas/")
		if target := d.Components["schemas"][name]; ok && target != nil {
			errs = append(errs, d.validate(target, v, at)...)
		} else {
			fail("$ref %s does not resolve", s.Ref)
		}
	}
	if len(s.Type) > 0 {
		var types []string
		if json.Unmarshal(s.Type, &types) != nil {
			types = []string{strings.Trim(string(s.Type), `"`)}
		}
		if !slices.ContainsFunc(types, func(t string) bool { return hasJSONType(v, t) }) {
			fail("%s is not of type %s", jsonKind(v), strings.Join(types, " or "))
			return errs // the other keywords assume the type
		}
	}
	if s.Enum != nil && !slices.ContainsFunc(s.Enum, func(e any) bool { return reflect.DeepEqual(e, v) }) {
		fail("%v is not one of %v", v, s.Enum)
	}
	if len(s.Const) > 0 {
		var c any
		json.Unmarshal(s.Const, &c)
		if !reflect.DeepEqual(c, v) {
			fail("%v is not %v", v, c)
		}
	}
	switch x := v.(type) {
	case map[string]any:
		for _, name := range s.Required {
			if _, ok := x[name]; !ok {
				fail("required property %q missing", name)
			}
		}
		names := make([]string, 0, len(x))
		for name := range x {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if ps, ok := s.Properties[name]; ok {
				errs = append(errs, d.validate(ps, x[name], at+"."+name)...)
				continue
			}
			switch string(s.AdditionalProperties) {
			case "", "true":
			case "false":
				fail("property %q is not allowed", name)
			default:
				errs = append(errs, d.validate(s.AdditionalProperties, x[name], at+"."+name)...)
			}
		}
	case []any:
		if s.MaxItems != nil && len(x) > *s.MaxItems {
			fail("%d items, at most %d", len(x), *s.MaxItems)
		}
		if len(s.Items) > 0 {
			for i, item := range x {
				errs = append(errs, d.validate(s.Items, item, fmt.Sprintf("%s[%d]", at, i))...)
			}
		}
	case string:
		n := utf8.RuneCountInString(x)
		if s.MinLength != nil && n < *s.MinLength {
			fail("%d characters, at least %d", n, *s.MinLength)
		}
		if s.MaxLength != nil && n > *s.MaxLength {
			fail("%d characters, at most %d", n, *s.MaxLength)
		}
		if s.Pattern != "" {
			if re, err := regexp.Compile(s.Pattern); err != nil {
				fail("pattern %q: %v", s.Pattern, err)
			} else if !re.MatchString(x) {
				fail("%q does not match %s", x, s.Pattern)
			}
		}
	case float64:
		if s.Minimum != nil && x < *s.Minimum {
			fail("%v is below the minimum %v", x, *s.Minimum)
		}
		if s.Maximum != nil && x > *s.Maximum {
			fail("%v is above the maximum %v", x, *s.Maximum)
		}
	}
	for _, sub := range s.AllOf {
		errs = append(errs, d.validate(sub, v, at)...)
	}
	if len(s.AnyOf) > 0 && !slices.ContainsFunc(s.AnyOf, func(sub json.RawMessage) bool { return len(d.validate(sub, v, at)) == 0 }) {
		fail("matches none of anyOf")
	}
	if len(s.OneOf) > 0 {
		n := 0
		for _, sub := range s.OneOf {
			if len(d.validate(sub, v, at)) == 0 {
				n++
			}
		}
		if n != 1 {
			fail("matches %d of oneOf's schemas, want exactly 1", n)
		}
	}
	return errs
}

func hasJSONType(v any, t string) bool {
	switch x := v.(type) {
	case nil:
		return t == "null"
	case bool:
		return t == "boolean"
	case string:
		return t == "string"
	case float64:
		return t == "number" || (t == "integer" && x == math.Trunc(x))
	case []any:
		return t == "array"
	case map[string]any:
		return t == "object"
	}
	return false
}

func jsonKind(v any) string {
	for _, t := range []string{"null", "boolean", "string", "integer", "number", "array", "object"} {
		if hasJSONType(v, t) {
			return t
		}
	}
	return fmt.Sprintf("%T", v)
}

// openAPIMedia is a request or response body of one media type.
type openAPIMedia struct {
	Schema  json.RawMessage `json:"schema"`
	Example json.RawMessage `json:"example"`
}

// mediaOf returns the document's JSON schema and example of a request body
// (status "") or a response of "METHOD /path".
func (d *openAPIDoc) mediaOf(t *testing.T, op, status, mediaType string) openAPIMedia {
	t.Helper()
	method, path, _ := strings.Cut(op, " ")
	var item map[string]struct {
		RequestBody struct {
			Content map[string]openAPIMedia `json:"content"`
		} `json:"requestBody"`
		Responses map[string]struct {
			Content map[string]openAPIMedia `json:"content"`
		} `json:"responses"`
	}
	var all struct {
		Paths map[string]json.RawMessage `json:"paths"`
	}
	json.Unmarshal(web.OpenAPI, &all)
	if err := json.Unmarshal(all.Paths[path], &item); err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	o := item[strings.ToLower(method)]
	content := o.RequestBody.Content
	if status != "" {
		content = o.Responses[status].Content
	}
	m, ok := content[mediaType]
	if !ok || len(m.Schema) == 0 {
		t.Fatalf("%s %s: no %s schema", op, status, mediaType)
	}
	return m
}

// TestOpenAPIExamplesMatchSchemas validates every example of a request or
// response body in the document against the body's schema: an example the
// schema refuses means one of the two is wrong.
func TestOpenAPIExamplesMatchSchemas(t *testing.T) {
	doc := loadOpenAPI(t)
	var all struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(web.OpenAPI, &all); err != nil {
		t.Fatal(err)
	}
	n := 0
	for path, item := range all.Paths {
		for method, raw := range item {
			var op struct {
				RequestBody struct {
					Content map[string]openAPIMedia `json:"content"`
				} `json:"requestBody"`
				Responses map[string]struct {
					Content map[string]openAPIMedia `json:"content"`
				} `json:"responses"`
			}
			if json.Unmarshal(raw, &op) != nil {
				continue // not an operation
			}
			bodies := map[string]map[string]openAPIMedia{"request": op.RequestBody.Content}
			for status, r := range op.Responses {
				bodies[status] = r.Content
			}
			for which, content := range bodies {
				for mt, m := range content {
					if len(m.Example) == 0 || len(m.Schema) == 0 {
						continue
					}
					var v any
					if err := json.Unmarshal(m.Example, &v); err != nil {
						t.Fatal(err)
					}
					n++
					for _, e := range doc.validate(m.Schema, v, "") {
						t.Errorf("%s %s, %s %s example: %s", strings.ToUpper(method), path, which, mt, e)
					}
				}
			}
		}
	}
	if n < 40 {
		t.Fatalf("only %d examples validated", n)
	}
}

// TestEmailPreferencesPartialBody checks that the request schema of PATCH
// /api/users/me/email-preferences describes what the server accepts: any
// subset of the three flags (the others keep their value), and not a flag
// of another type.
func TestEmailPreferencesPartialBody(t *testing.T) {
	doc := loadOpenAPI(t)
	req := doc.mediaOf(t, "PATCH /api/users/me/email-preferences", "", "application/json")
	ok := doc.mediaOf(t, "PATCH /api/users/me/email-preferences", "200", "application/json")
	s := startServer(t)
	u := s.signup("Partial")
	for _, body := range []string{`{}`, `{"weeklyDigest": true}`, `{"marketingEmails": true, "productUpdates": false}`,
		`{"marketingEmails": false, "productUpdates": true, "weeklyDigest": false}`} {
		var v any
		json.Unmarshal([]byte(body), &v)
		if errs := doc.validate(req.Schema, v, ""); len(errs) > 0 {
			t.Errorf("%s: the server accepts it, the documented schema does not: %s", body, strings.Join(errs, "; "))
		}
		before := s.must(200, "GET", "/api/users/me/email-preferences", u.token, nil)
		r := s.must(200, "PATCH", "/api/users/me/email-preferences", u.token, body)
		for _, flag := range []string{"marketingEmails", "productUpdates", "weeklyDigest"} {
			want := before.str("preferences." + flag)
			if strings.Contains(body, `"`+flag+`"`) {
				want = fmt.Sprint(v.(map[string]any)[flag])
			}
			if got := r.str("preferences." + flag); got != want {
				t.Errorf("%s: %s = %s, want %s", body, flag, got, want)
			}
		}
		if errs := doc.validate(ok.Schema, r.body, ""); len(errs) > 0 {
			t.Errorf("%s: answer %s does not match the documented 200 schema: %s", body, r.raw, strings.Join(errs, "; "))
		}
	}
	bad := `{"weeklyDigest": "yes"}`
	s.wantError(s.do("PATCH", "/api/users/me/email-preferences", u.token, bad), 400, "ERR_VALID_003")
	var v any
	json.Unmarshal([]byte(bad), &v)
	if len(doc.validate(req.Schema, v, "")) == 0 {
		t.Errorf("%s: the server refuses it, the documented schema accepts it", bad)
	}
}
