package render

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestCompileWarnings: keys no component reads and names no declaration
// gives are accepted, and listed with their paths and the nearest known
// key or name.
func TestCompileWarnings(t *testing.T) {
	tpl := MustCompile(t, Definition{
		Schema: json.RawMessage(`{"pageSize": "A4", "pagesize": "A4", "sections": [{"id": "body", "components": [
			{"type": "text", "props": {"content": "Dear {{ custmer.name }}, {{ customer.name }} on page {{ page }}", "style": {"colour": "#ff0000", "bold": true}}},
			{"type": "table", "props": {"rows": "items", "columns": [{"header": "Price", "value": "{{ row.price }} {{ rowIndex }} {{ currency }}", "widht": 20}]}},
			{"type": "text", "each": "items", "as": "it", "props": {"content": "{{ it.name }} {{ index }} {{ total }}", "keepTogether": true}},
			{"type": "heading", "prop": {"content": "x"}, "props": {"content": "{{ vatrate }}"}}
		]}]}`),
		Variables:           []Variable{{Name: "customer", Type: "object"}, {Name: "items", Type: "array"}, {Name: "vatRate", Type: "number"}},
		Constants:           map[string]any{"company": "ACME"},
		CalculatedVariables: []CalculatedVariable{{Name: "total", Expression: "len(items)"}},
	})
	got := tpl.Warnings()
	want := []Issue{
		{"schema.pagesize", "unknown key, ignored (did you mean pageSize?)"},
		{"schema.sections[0].components[0].props.style.colour", "unknown key, ignored (did you mean color?)"},
		{"schema.sections[0].components[1].props.columns[0].widht", "unknown key, ignored (did you mean width?)"},
		{"schema.sections[0].components[3].prop", "unknown key, ignored (did you mean props?)"},
		{"schema.sections[0].components[0].props.content", `"custmer" is not a declared variable, constant or calculated variable; it is empty unless the request sends it (did you mean customer?)`},
		{"schema.sections[0].components[1].props.columns[0].value", `"currency" is not a declared variable, constant or calculated variable; it is empty unless the request sends it`},
		{"schema.sections[0].components[3].props.content", `"vatrate" is not a declared variable, constant or calculated variable; it is empty unless the request sends it (did you mean vatRate?)`},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", issuesText(got), issuesText(want))
	}

	// A schema on its own (nothing declared) is not checked for names.
	tpl = MustCompile(t, Definition{Schema: json.RawMessage(`{"sections": [{"id": "b", "components": [
		{"type": "text", "props": {"content": "{{ name }}"}}]}]}`)})
	if w := tpl.Warnings(); len(w) != 0 {
		t.Errorf("schema alone: warnings %v", w)
	}

	// A component of an unknown type is an error; its props are not also
	// warned about as unknown keys.
	_, err := MustEngine(t).Compile(Definition{Schema: json.RawMessage(`{"sections": [{"id": "b", "components": [
		{"type": "sparkline", "props": {"content": "x"}}, {"props": {"content": "y"}}, {"type": "text", "props": {"content": "z", "colour": "red"}}]}]}`)})
	var se *SchemaError
	if !errors.As(err, &se) || len(se.Issues) != 2 || len(se.Warnings) != 1 || se.Warnings[0].Path != "schema.sections[0].components[2].props.colour" {
		t.Errorf("err = %v, warnings %v; want two type errors and the colour warning alone", err, se)
	}

	// Beside errors, the warnings come with the SchemaError.
	_, err = MustEngine(t).Compile(Definition{Schema: json.RawMessage(`{"sections": [{"id": "b", "components": [
		{"type": "text", "props": {"content": "x", "style": {"fontSize": 200, "colour": "red"}}}]}]}`)})
	if !errors.As(err, &se) || len(se.Warnings) != 1 || se.Warnings[0].Path != "schema.sections[0].components[0].props.style.colour" {
		t.Errorf("err = %v, warnings %v; want the fontSize error and the colour warning", err, se)
	}
}

// TestExamplesHaveNoWarnings: every template shipped in the repository
// uses only keys the parser reads and names it declares, so a warning
// means something to its reader.
func TestExamplesHaveNoWarnings(t *testing.T) {
	var files []string
	for _, pattern := range []string{"../testdata/templates/*.json", "../web/dashboard/examples/*.json"} {
		m, _ := filepath.Glob(pattern)
		files = append(files, m...)
	}
	for _, f := range files {
		if filepath.Ext(filepath.Base(f[:len(f)-5])) == ".vars" {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var def Definition
		if err := json.Unmarshal(raw, &def); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		tpl, err := MustEngine(t).Compile(def)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if w := tpl.Warnings(); len(w) > 0 {
			t.Errorf("%s:\n%s", f, issuesText(w))
		}
	}
	if len(files) < 4 {
		t.Errorf("found %d example files", len(files))
	}
}

func issuesText(list []Issue) string {
	var s string
	for _, i := range list {
		s += "  " + i.Path + ": " + i.Message + "\n"
	}
	return s
}
