package render

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// invoiceVariables is a typical declaration list.
var invoiceVariables = []Variable{
	{Name: "customer", Type: "string", Required: true},
	{Name: "amount", Type: "number", Required: true},
	{Name: "quantity", Type: "integer", DefaultValue: 1.0},
	{Name: "paid", Type: "boolean"},
	{Name: "due", Type: "date"},
	{Name: "items", Type: "array"},
	{Name: "address", Type: "object"},
	{Name: "note", Type: "string", DefaultValue: "thank you"},
}

func TestValues(t *testing.T) {
	day := time.Date(2024, 3, 31, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		input map[string]any
		want  map[string]any // a subset of the result
	}{
		{
			name:  "plain JSON values",
			input: map[string]any{"customer": "ACME", "amount": 12.5, "quantity": 3.0, "paid": true, "due": "2024-03-31", "items": []any{1.0}, "address": map[string]any{"city": "Köln"}},
			want:  map[string]any{"customer": "ACME", "amount": 12.5, "quantity": 3, "paid": true, "due": day, "items": []any{1.0}, "address": map[string]any{"city": "Köln"}, "note": "thank you"},
		},
		{
			name:  "defaults and coercion from text",
			input: map[string]any{"customer": 42.0, "amount": "7.25", "paid": "false", "due": "2024-03-31T10:00:00Z"},
			want:  map[string]any{"customer": "42", "amount": 7.25, "quantity": 1, "paid": false, "due": time.Date(2024, 3, 31, 10, 0, 0, 0, time.UTC), "note": "thank you"},
		},
		{
			name:  "json.Number and undeclared values pass through",
			input: map[string]any{"customer": "x", "amount": json.Number("10"), "extra": []any{json.Number("2.5")}},
			want:  map[string]any{"amount": 10.0, "extra": []any{2.5}},
		},
		{
			name:  "constants and calculated variables",
			input: map[string]any{"customer": "x", "amount": 100.0, "quantity": 2.0},
			want:  map[string]any{"taxRate": 0.2, "net": 200.0, "tax": 40.0, "total": 240.0, "label": "X: 240"},
		},
	}
	tpl := MustCompile(t, Definition{
		Schema:    json.RawMessage(`{"sections":[]}`),
		Variables: invoiceVariables,
		Constants: map[string]any{"taxRate": 0.2},
		// declared out of order: Values must sort them by dependency
		CalculatedVariables: []CalculatedVariable{
			{Name: "label", Expression: `upper(customer) + ": " + string(total)`},
			{Name: "total", Expression: "net + tax"},
			{Name: "tax", Expression: "net * taxRate"},
			{Name: "net", Expression: "amount * quantity"},
		},
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tpl.Values(tt.input)
			if err != nil {
				t.Fatalf("Values: %v", err)
			}
			for k, want := range tt.want {
				if !reflect.DeepEqual(got[k], want) {
					t.Errorf("%s = %#v, want %#v", k, got[k], want)
				}
			}
		})
	}
}

func TestValuesErrors(t *testing.T) {
	tpl := MustCompile(t, Definition{Schema: json.RawMessage(`{"sections":[]}`), Variables: invoiceVariables})
	_, err := tpl.Values(map[string]any{
		"amount": "lots", "quantity": 2.5, "paid": "maybe", "due": "31/03/2024", "items": "a,b", "address": []any{},
	})
	var ve *VariableError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v, want a *VariableError", err)
	}
	want := []VariableIssue{
		{"customer", "is required"},
		{"amount", `must be a number, got text "lots"`},
		{"quantity", "must be an integer, got 2.5"},
		{"paid", `must be true or false, got text "maybe"`},
		{"due", `must be a date (RFC 3339 or YYYY-MM-DD), got text "31/03/2024"`},
		{"items", `must be an array, got text "a,b"`},
		{"address", "must be an object, got an array"},
	}
	if !reflect.DeepEqual(ve.Errors, want) {
		t.Errorf("errors:\n got %v\nwant %v", ve.Errors, want)
	}
	if got := ve.Error(); !strings.HasPrefix(got, "variable validation failed: customer: is required (and 6 more)") {
		t.Errorf("Error() = %q", got)
	}
}

func TestValuesCalculationFails(t *testing.T) {
	tpl := MustCompile(t, Definition{
		Schema:              json.RawMessage(`{"sections":[]}`),
		Variables:           []Variable{{Name: "name", Type: "string"}},
		CalculatedVariables: []CalculatedVariable{{Name: "bad", Expression: "name - 1"}, {Name: "good", Expression: "1 + 1"}},
	})
	_, err := tpl.Values(map[string]any{"name": "x"})
	var ve *VariableError
	if !errors.As(err, &ve) || len(ve.Errors) != 1 || ve.Errors[0].Variable != "bad" {
		t.Fatalf("err = %v, want one issue for bad", err)
	}
}

func TestCompileVariableErrors(t *testing.T) {
	tests := []struct {
		name string
		def  Definition
		want []Issue
	}{
		{"bad declarations", Definition{Variables: []Variable{
			{Name: "", Type: "string"},
			{Name: "1st", Type: "string"},
			{Name: "a", Type: "money"},
			{Name: "b", Type: "integer", DefaultValue: "many"},
			{Name: "b", Type: "string"},
			{Name: "__x", Type: "string"},
			{Name: "nil", Type: "string"},
		}}, []Issue{
			{"variables[0].name", "is required"},
			{"variables[1].name", "must start with a letter"},
			{"variables[2].type", "must be one of string, number"},
			{"variables[3].defaultValue", "must be an integer"},
			{"variables[4].name", `"b" is already declared at variables[3].name`},
			{"variables[5].name", "must not start with __"},
			{"variables[6].name", "is a reserved word"},
		}},
		{"constant clashes with a variable", Definition{
			Variables: []Variable{{Name: "rate", Type: "number"}},
			Constants: map[string]any{"rate": 1.0},
		}, []Issue{{"constants.rate", `"rate" is already declared`}}},
		{"calculated cycle", Definition{CalculatedVariables: []CalculatedVariable{
			{Name: "a", Expression: "b + 1"},
			{Name: "b", Expression: "c + 1"},
			{Name: "c", Expression: "a + 1"},
		}}, []Issue{{"calculatedVariables[0].expression", "calculated variables depend on each other in a cycle: a → b → c → a"}}},
		{"calculated self reference", Definition{CalculatedVariables: []CalculatedVariable{{Name: "a", Expression: "a * 2"}}},
			[]Issue{{"calculatedVariables[0].expression", "calculated variables depend on each other in a cycle: a → a"}}},
		{"calculated unknown reference", Definition{CalculatedVariables: []CalculatedVariable{{Name: "a", Expression: "let x = 2; x * missing"}}},
			[]Issue{{"calculatedVariables[0].expression", `refers to unknown variable "missing"`}}},
		{"calculated syntax error", Definition{CalculatedVariables: []CalculatedVariable{{Name: "a", Expression: "1 +* 2"}}},
			[]Issue{{"calculatedVariables[0].expression", "unexpected token"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.def.Schema = json.RawMessage(`{"sections":[]}`)
			_, err := MustEngine(t).Compile(tt.def)
			var se *SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want a *SchemaError", err)
			}
			for _, want := range tt.want {
				if !hasIssue(se.Issues, want) {
					t.Errorf("missing issue %s: %s…\ngot %v", want.Path, want.Message, se.Issues)
				}
			}
		})
	}
}

func TestCompileTooManyVariables(t *testing.T) {
	vars := make([]Variable, 501)
	for i := range vars {
		vars[i] = Variable{Name: "v" + itoa(i), Type: "string"}
	}
	_, err := MustEngine(t).Compile(Definition{Schema: json.RawMessage(`{"sections":[]}`), Variables: vars})
	var se *SchemaError
	if !errors.As(err, &se) || !hasIssue(se.Issues, Issue{"variables", "the template declares 501 variables, maximum 500"}) {
		t.Errorf("err = %v, want the variable limit", err)
	}
}
