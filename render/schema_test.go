package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestCompileSchemaErrors(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   []Issue // each must be among the issues (message by prefix)
	}{
		{"missing schema", ``, []Issue{{"schema", "is required"}}},
		{"schema not an object", `[1]`, []Issue{{"schema", "must be an object"}}},
		{"missing sections", `{}`, []Issue{{"schema.sections", "is required"}}},
		{"sections not an array", `{"sections":{}}`, []Issue{{"schema.sections", "must be an array"}}},
		{"bad page setup", `{"format":"docx","pageSize":"A3","orientation":"sideways","sections":[]}`, []Issue{
			{"schema.format", "must be one of pdf, xlsx"},
			{"schema.pageSize", "must be one of A4, Letter"},
			{"schema.orientation", "must be one of portrait, landscape"},
		}},
		{"bad margins", `{"margins":{"top":-1,"left":"wide"},"sections":[]}`, []Issue{
			{"schema.margins.top", "must be between 0 and 100"},
			{"schema.margins.left", "must be a number"},
		}},
		{"margins leave no room", `{"margins":{"left":100,"right":100},"sections":[]}`, []Issue{
			{"schema.margins", "left and right margins leave less than"},
		}},
		{"section without id and bad role", `{"sections":[{"role":"sidebar"}]}`, []Issue{
			{"schema.sections[0].id", "is required"},
			{"schema.sections[0].role", "must be one of body, header, footer"},
		}},
		{"duplicate section ids", `{"sections":[{"id":"a"},{"id":"a"}]}`, []Issue{
			{"schema.sections[1].id", "duplicates the id"},
		}},
		{"unknown component type", `{"sections":[{"id":"a","components":[{"type":"text","props":{"content":"x"}},{"type":"carousel"}]}]}`, []Issue{
			{"schema.sections[0].components[1].type", `unknown component type "carousel"`},
		}},
		{"component without type", `{"sections":[{"id":"a","components":[{"props":{}}]}]}`, []Issue{
			{"schema.sections[0].components[0].type", "is required"},
		}},
		{"text without content", `{"sections":[{"id":"a","components":[{"type":"text","props":{}}]}]}`, []Issue{
			{"schema.sections[0].components[0].props.content", "is required"},
		}},
		{"content not text", `{"sections":[{"id":"a","components":[{"type":"text","props":{"content":5}}]}]}`, []Issue{
			{"schema.sections[0].components[0].props.content", "must be a string"},
		}},
		{"placeholder syntax error", `{"sections":[{"id":"a","components":[{"type":"text","props":{"content":"ok"}},{"type":"text","props":{"content":"Hi {{ name + }}"}}]}]}`, []Issue{
			{"schema.sections[0].components[1].props.content", "placeholder {{name +}}"},
		}},
		{"unclosed placeholder", `{"sections":[{"id":"a","components":[{"type":"text","props":{"content":"Hi {{ name"}}]}]}`, []Issue{
			{"schema.sections[0].components[0].props.content", "placeholder opened with {{ is not closed"},
		}},
		{"empty placeholder", `{"sections":[{"id":"a","components":[{"type":"text","props":{"content":"Hi {{ }}"}}]}]}`, []Issue{
			{"schema.sections[0].components[0].props.content", "placeholder {{}}: expression is empty"},
		}},
		{"reserved name", `{"sections":[{"id":"a","components":[{"type":"text","props":{"content":"{{ __budget }}"}}]}]}`, []Issue{
			{"schema.sections[0].components[0].props.content", `placeholder {{__budget}}: name "__budget" is reserved`},
		}},
		{"clock is not available", `{"sections":[{"id":"a","components":[{"type":"text","props":{"content":"{{ now() }}"}}]}]}`, []Issue{
			{"schema.sections[0].components[0].props.content", "placeholder {{now()}}"},
		}},
		{"bad style", `{"sections":[{"id":"a","components":[{"type":"text","props":{"content":"x","style":{"fontSize":200,"bold":"yes","color":"red","align":"justify"}}}]}]}`, []Issue{
			{"schema.sections[0].components[0].props.style.fontSize", "must be between 4 and 96"},
			{"schema.sections[0].components[0].props.style.bold", "must be true or false"},
			{"schema.sections[0].components[0].props.style.color", "must be a colour"},
			{"schema.sections[0].components[0].props.style.align", "must be one of left, center, right"},
		}},
		{"bad heading level", `{"sections":[{"id":"a","components":[{"type":"heading","props":{"content":"x","level":4}}]}]}`, []Issue{
			{"schema.sections[0].components[0].props.level", "must be 1, 2 or 3"},
		}},
		{"bad if and each", `{"sections":[{"id":"a","components":[{"type":"text","if":"a ==","each":"(","as":"1x","props":{"content":"x"}},{"type":"text","as":"y","props":{"content":"x"}}]}]}`, []Issue{
			{"schema.sections[0].components[0].if", "unexpected token"},
			{"schema.sections[0].components[0].each", ""},
			{"schema.sections[0].components[0].as", "must start with a letter"},
			{"schema.sections[0].components[1].as", `needs "each"`},
		}},
		{"too complex expression", `{"sections":[{"id":"a","components":[{"type":"text","props":{"content":"{{ ` + strings.Repeat("1 + ", 600) + `1 }}"}}]}]}`, []Issue{
			{"schema.sections[0].components[0].props.content", "placeholder"},
		}},
		{"too many components", `{"sections":[{"id":"a","components":[` + strings.TrimSuffix(strings.Repeat(`{"type":"text","props":{"content":"x"}},`, 501), ",") + `]}]}`, []Issue{
			{"schema", "has 501 components, maximum 500"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := MustEngine(t).Compile(schemaDef(tt.schema))
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

func hasIssue(list []Issue, want Issue) bool {
	for _, got := range list {
		if got.Path == want.Path && strings.HasPrefix(got.Message, want.Message) {
			return true
		}
	}
	return false
}

func TestCompileValidSchema(t *testing.T) {
	tests := []struct {
		name   string
		schema string
	}{
		{"minimal", `{"sections":[]}`},
		{"everything", `{"format":"PDF","pageSize":"letter","orientation":"Landscape","margins":{"top":10,"right":15,"bottom":10,"left":15},
			"sections":[{"id":"h","name":"Header","role":"header","components":[{"type":"text","props":{"content":"{{page}}/{{pages}}"}}]},
			{"id":"b","components":[
				{"type":"heading","props":{"content":"Title","level":3,"style":{"color":"#abc","align":"center"}}},
				{"type":"text","if":"show","each":"items","as":"it","props":{"content":"{{ it.name }} {{ {\"a\": 1}.a }} {{ \"}}\" }}","style":{"fontSize":9,"italic":true}}},
				{"type":"text","props":{"content":"{{ if x { \"yes\" } else { \"no\" }}}"}}]}]}`},
		{"unknown fields are ignored", `{"version":1,"sections":[{"id":"b","extra":true,"components":[{"type":"text","props":{"content":"x","future":1}}]}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := MustEngine(t).Compile(schemaDef(tt.schema)); err != nil {
				t.Errorf("Compile: %v", err)
			}
		})
	}
}

func TestSchemaErrorListsEveryIssue(t *testing.T) {
	_, err := MustEngine(t).Compile(schemaDef(`{"sections":[{"id":"a","components":[{"type":"x"},{"type":"y"},{"type":"text"}]}]}`))
	var se *SchemaError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want a *SchemaError", err)
	}
	if got, want := len(se.Issues), 3; got != want {
		t.Errorf("issues = %d, want %d: %v", got, want, se.Issues)
	}
	if got, want := se.Error(), `template schema is invalid: schema.sections[0].components[0].type: unknown component type "x" (and 2 more)`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	b, _ := json.Marshal(se.Issues[0])
	if got, want := string(b), `{"path":"schema.sections[0].components[0].type","message":"unknown component type \"x\""}`; got != want {
		t.Errorf("JSON = %s, want %s", got, want)
	}
}

func TestSchemaErrorIssuesAreCapped(t *testing.T) {
	var comps []string
	for i := 0; i < 300; i++ {
		comps = append(comps, fmt.Sprintf(`{"type":"bad%d"}`, i))
	}
	_, err := MustEngine(t).Compile(schemaDef(`{"sections":[{"id":"a","components":[` + strings.Join(comps, ",") + `]}]}`))
	var se *SchemaError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want a *SchemaError", err)
	}
	if got, want := len(se.Issues), maxIssues; got != want {
		t.Errorf("issues = %d, want %d", got, want)
	}
}

func TestNewEngineRejectsBadFonts(t *testing.T) {
	tests := []struct {
		name  string
		fonts Fonts
	}{
		{"no regular font", Fonts{}},
		{"garbage", Fonts{Regular: []byte("not a font at all, not even close")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewEngine(tt.fonts); err == nil {
				t.Error("NewEngine: want an error")
			}
		})
	}
}

func TestCompileComponentErrors(t *testing.T) {
	const p = "schema.sections[0].components[0]"
	nested := `{"type":"text","props":{"content":"deep"}}`
	for range 10 {
		nested = `{"type":"columns","props":{"children":[[` + nested + `]]}}`
	}
	tests := []struct {
		name      string
		component string
		want      []Issue
	}{
		{"table without rows and columns", `{"type":"table"}`, []Issue{
			{p + ".props.rows", "is required"}, {p + ".props.columns", "is required"}}},
		{"table with bad columns", `{"type":"table","props":{"rows":"items","as":"1","columns":[{"header":"A"},{"value":"x","format":"money"},{"value":"x","width":"wide"},{"value":"x","width":-3,"align":"justify"},5]}}`, []Issue{
			{p + ".props.as", "must start with a letter"},
			{p + ".props.columns[0].value", "is required"},
			{p + ".props.columns[1].format", `unknown format "money"`},
			{p + ".props.columns[2].width", "must be millimetres (a number) or a percentage"},
			{p + ".props.columns[3].width", "must be between 0 and 500"},
			{p + ".props.columns[3].align", "must be one of left, center, right"},
			{p + ".props.columns[4]", "must be an object"}}},
		{"table rows expression", `{"type":"table","props":{"rows":"items +","columns":[{"value":"x"}]}}`, []Issue{{p + ".props.rows", "unexpected token"}}},
		{"table percentages over 100", `{"type":"table","props":{"rows":"r","columns":[{"value":"x","width":"60%"},{"value":"x","width":"50%"}]}}`, []Issue{
			{p + ".props.columns", "percentage widths add up to more than 100%"}}},
		{"table with too many columns", `{"type":"table","props":{"rows":"r","columns":[` + strings.TrimSuffix(strings.Repeat(`{"value":"x"},`, 51), ",") + `]}}`, []Issue{
			{p + ".props.columns", "has 51 columns, maximum 50"}}},
		{"format arguments", `{"type":"table","props":{"rows":"r","columns":[{"value":"x","format":"number:12"},{"value":"x","format":"currency:euro"},{"value":"x","format":"percent:x"}]}}`, []Issue{
			{p + ".props.columns[0].format", "number:N needs N from 0 to 10"},
			{p + ".props.columns[1].format", "currency needs a three-letter code"},
			{p + ".props.columns[2].format", "percent:N needs N"}}},
		{"image without src", `{"type":"image","props":{"width":0}}`, []Issue{
			{p + ".props.src", "is required"}, {p + ".props.width", "must be between 1 and 500"}}},
		{"qrcode", `{"type":"qrcode","props":{"level":"X","size":5}}`, []Issue{
			{p + ".props.value", "is required"}, {p + ".props.level", "must be one of L, M, Q, H"}, {p + ".props.size", "must be between 10 and 200"}}},
		{"barcode", `{"type":"barcode","props":{"showText":"yes"}}`, []Issue{
			{p + ".props.value", "is required"}, {p + ".props.showText", "must be true or false"}}},
		{"keyValue", `{"type":"keyValue","props":{"items":[{"label":"a"},{"value":"b","format":"x"}]}}`, []Issue{
			{p + ".props.items[0].value", "is required"}, {p + ".props.items[1].label", "is required"}, {p + ".props.items[1].format", "unknown format"}}},
		{"keyValue without items", `{"type":"keyValue","props":{}}`, []Issue{{p + ".props.items", "is required"}}},
		{"divider", `{"type":"divider","props":{"color":"grey","thickness":9}}`, []Issue{
			{p + ".props.color", "must be a colour"}, {p + ".props.thickness", "must be between"}}},
		{"spacer", `{"type":"spacer","props":{"height":-1}}`, []Issue{{p + ".props.height", "must be between 0 and 250"}}},
		{"columns", `{"type":"columns","props":{"widths":[1],"children":[[{"type":"nope"}],{"type":"text"}]}}`, []Issue{
			{p + ".props.children[0][0].type", `unknown component type "nope"`},
			{p + ".props.children[1]", "must be an array"},
			{p + ".props.widths", "must hold one relative width per column (2)"}}},
		{"columns without children", `{"type":"columns"}`, []Issue{{p + ".props.children", "is required"}}},
		{"columns nested too deep", nested, []Issue{{p + strings.Repeat(".props.children[0][0]", 10), "is nested 11 levels deep, maximum 10"}}},
		{"loops nested too deep", nestedComponents(4, `"each":"xs",`), []Issue{{p + strings.Repeat(".props.children[0][0]", 3) + ".each", "is inside 4 loops, maximum 3"}}},
		{"conditions nested too deep", nestedComponents(6, `"if":"true",`), []Issue{{p + strings.Repeat(".props.children[0][0]", 5) + ".if", "is inside 6 conditions, maximum 5"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := MustEngine(t).Compile(schemaDef(`{"sections":[{"id":"a","components":[` + tt.component + `]}]}`))
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

func TestCompileCountsComponentsInsideColumns(t *testing.T) {
	inner := strings.TrimSuffix(strings.Repeat(`{"type":"text","props":{"content":"x"}},`, 250), ",")
	_, err := MustEngine(t).Compile(schemaDef(`{"sections":[{"id":"a","components":[{"type":"columns","props":{"children":[[` + inner + `],[` + inner + `]]}}]}]}`))
	var se *SchemaError
	if !errors.As(err, &se) || !hasIssue(se.Issues, Issue{"schema", "has 501 components, maximum 500"}) {
		t.Errorf("err = %v, want 501 components refused", err)
	}
}

func TestCompileComponentsAcceptsEveryComponent(t *testing.T) {
	for _, dir := range []string{"table", "image", "qrcode", "barcode", "keyValue", "divider", "spacer", "pageBreak", "columns"} {
		def, _ := LoadCase(t, "testdata/"+dir)
		if _, err := MustEngine(t).Compile(def); err != nil {
			t.Errorf("%s: %v", dir, err)
		}
	}
}

// nestedComponents is a text component inside n-1 columns, each of the n
// levels carrying extra (`"each":"xs",` nests n loops).
func nestedComponents(n int, extra string) string {
	c := `{"type":"text",` + extra + `"props":{"content":"deep"}}`
	for range n - 1 {
		c = `{"type":"columns",` + extra + `"props":{"children":[[` + c + `]]}}`
	}
	return c
}

func TestCompileAcceptsNestingAtTheLimits(t *testing.T) {
	for name, component := range map[string]string{
		"10 levels":    nestedComponents(10, ""),
		"3 loops":      nestedComponents(3, `"each":"xs",`),
		"5 conditions": nestedComponents(5, `"if":"true",`),
	} {
		if _, err := MustEngine(t).Compile(schemaDef(`{"sections":[{"id":"a","components":[` + component + `]}]}`)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestCompileReportsTemplateLimits checks that a template over a limit on
// its own size names the limit, with the figures, besides the issues.
func TestCompileReportsTemplateLimits(t *testing.T) {
	body := func(components string) json.RawMessage {
		return json.RawMessage(`{"sections":[{"id":"a","components":[` + components + `]}]}`)
	}
	text := `{"type":"text","props":{"content":"x"}}`
	variables := make([]Variable, 501)
	for i := range variables {
		variables[i] = Variable{Name: fmt.Sprintf("v%d", i), Type: "string"}
	}
	tests := []struct {
		name        string
		def         Definition
		code, limit string
		actual, max int64
	}{
		{"501 components", Definition{Schema: body(strings.TrimSuffix(strings.Repeat(text+",", 501), ","))}, "ERR_LIMIT_009", LimitComponents, 501, 500},
		{"11 levels", Definition{Schema: body(nestedComponents(11, ""))}, "ERR_LIMIT_008", LimitNestingDepth, 11, 10},
		{"4 loops", Definition{Schema: body(nestedComponents(4, `"each":"xs",`))}, "ERR_LIMIT_008", LimitLoopDepth, 4, 3},
		{"6 conditions", Definition{Schema: body(nestedComponents(6, `"if":"true",`))}, "ERR_LIMIT_008", LimitConditionalDepth, 6, 5},
		{"501 variables", Definition{Schema: body(text), Variables: variables}, "ERR_LIMIT_018", LimitVariables, 501, 500},
		{"components before other problems", Definition{Schema: body(strings.Repeat(text+",", 501) + `{"type":"nope"}`)}, "ERR_LIMIT_009", LimitComponents, 502, 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := MustEngine(t).Compile(tt.def)
			var se *SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want a *SchemaError", err)
			}
			le := se.Limit
			if le == nil {
				t.Fatalf("no limit named; issues %v", se.Issues)
			}
			if le.Code != tt.code || le.Limit != tt.limit || le.Actual != tt.actual || le.Max != tt.max {
				t.Errorf("limit = %s %s %d/%d, want %s %s %d/%d", le.Code, le.Limit, le.Actual, le.Max, tt.code, tt.limit, tt.actual, tt.max)
			}
			if len(se.Issues) == 0 {
				t.Error("no issues listed")
			}
		})
	}
	_, err := MustEngine(t).Compile(schemaDef(`{"sections":[{"id":"a","components":[{"type":"nope"}]}]}`))
	if se := (*SchemaError)(nil); !errors.As(err, &se) || se.Limit != nil {
		t.Errorf("an unknown type: err = %v, want a *SchemaError without a limit", err)
	}
}
