package render

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// calcTemplate is a template with calculated variables (name → expression)
// and a text printing each of them.
func calcTemplate(calcs [][2]string) Definition {
	var comps, vars []string
	for _, c := range calcs {
		content, _ := json.Marshal("{{ " + c[0] + " }}")
		comps = append(comps, `{"type":"text","props":{"content":`+string(content)+`}}`)
		expr, _ := json.Marshal(c[1])
		vars = append(vars, `{"name":"`+c[0]+`","expression":`+string(expr)+`}`)
	}
	var calculated []CalculatedVariable
	_ = json.Unmarshal([]byte("["+strings.Join(vars, ",")+"]"), &calculated)
	return Definition{
		Schema:              json.RawMessage(`{"sections":[{"id":"b","components":[` + strings.Join(comps, ",") + `]}]}`),
		Variables:           []Variable{{Name: "s", Type: "string"}, {Name: "obj", Type: "object"}},
		CalculatedVariables: calculated,
	}
}

// TestEnvIsRefused: $env hands a template the evaluation environment; a
// calculated variable holding it made the map of variables contain
// itself, and printing it overflowed the stack (issue 18). Every way of
// reading it is refused at compile time, with the expression's path.
func TestEnvIsRefused(t *testing.T) {
	e := MustEngine(t)
	for _, src := range []string{`$env`, `$env.total`, `$env["__budget"]`, `len($env)`, `keys($env)`, `get($env, "n")`,
		`map([1], $env)`, `let e = $env; e`, `{a: $env}`, `toPairs($env)`, `$env | keys`} {
		t.Run(src, func(t *testing.T) {
			_, err := e.Compile(calcTemplate([][2]string{{"n", src}}))
			var se *SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("compile %q: %v, want a schema error", src, err)
			}
			if len(se.Issues) != 1 || se.Issues[0].Path != "calculatedVariables[0].expression" || !strings.Contains(se.Issues[0].Message, "$env") {
				t.Fatalf("issues %+v, want one at calculatedVariables[0].expression naming $env", se.Issues)
			}
		})
	}
	// In a placeholder too.
	def := Definition{Schema: json.RawMessage(`{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"{{ $env }}"}}]}]}`)}
	var se *SchemaError
	if _, err := e.Compile(def); !errors.As(err, &se) || se.Issues[0].Path != "schema.sections[0].components[0].props.content" {
		t.Fatalf("placeholder $env: %v", err)
	}
}

// TestFormatValueIsBounded prints values that contain themselves or nest
// far deeper than any template could make: the formatter stops at
// maxValueDepth levels and maxFormattedValue bytes.
func TestFormatValueIsBounded(t *testing.T) {
	self := map[string]any{"a": 1}
	self["self"] = self
	list := []any{1, nil}
	list[1] = list
	deep := any("leaf")
	for range 100_000 {
		deep = []any{deep}
	}
	wide := make([]any, 1_000_000)
	for i := range wide {
		wide[i] = "0123456789"
	}
	for name, v := range map[string]any{"self map": self, "self list": list, "deep": deep, "wide": wide} {
		out := formatValue(v)
		if len(out) > maxFormattedValue+16 || !strings.Contains(out, "…") {
			t.Errorf("%s: %d bytes, want at most %d ending in an ellipsis", name, len(out), maxFormattedValue)
		}
	}
	// Ordinary values print as JSON, as before.
	if got := formatValue(map[string]any{"b": []any{1.5, "x<y", true, nil}, "a": 2}); got != `{"a":2,"b":[1.5,"x\u003cy",true,null]}` {
		t.Errorf("formatValue = %s", got)
	}
	if got := formatValue([]int{1, 2, 3}); got != `[1,2,3]` {
		t.Errorf("formatValue([]int) = %s", got)
	}
}

// TestExpressionValuesAreBounded: expressions cannot make values nested
// deeper than maxValueDepth, nor more bytes than the expression memory
// budget, whatever feature they use (issue 18).
func TestExpressionValuesAreBounded(t *testing.T) {
	e := MustEngine(t)
	big := strings.Repeat("x", 500_000)
	tests := []struct {
		expr string
		want string // "depth" or "memory"
	}{
		{`reduce(1..300, [#acc], [])`, "depth"},
		{`reduce(1..300, let m = {a: #acc}; m, {})`, "depth"},
		{`reduce(1..300, concat([#acc], []), [])`, "depth"},
		{`reduce(1..300, [[[#acc]]], 0)`, "depth"},
		{`reduce(1..300, toPairs({a: #acc}), 0)`, "depth"},
		{`reduce(1..300, let a = #acc; map([1], a), 0)`, "depth"},
		{`reduce(1..300, groupBy([#acc], "k"), 0)`, "depth"},
		{`len(map(1..1500, s + s))`, "memory"},
		{`len(map(1..1500, s))`, "memory"},
		{`len(reduce(1..1500, #acc + s, ""))`, "memory"},
		{`len(map(1..300000, [#, #, #, #, #, #, #, #, #, #, #, #]))`, "memory"},
		{`len(1..10000000)`, "memory"},
		{`len(map(1..200, split(s, "")))`, "memory"},
		{`len(filter(map(1..1000, upper(s)), true))`, "memory"},
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			tpl, err := e.Compile(calcTemplate([][2]string{{"n", tc.expr}}))
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = tpl.Values(map[string]any{"s": big})
			if time.Since(start) > scaled(10*time.Second) {
				t.Errorf("took %v", time.Since(start))
			}
			var le *LimitError
			var ve *VariableError
			switch tc.want {
			case "memory":
				if !errors.As(err, &le) || le.Limit != LimitExpressionMemory || le.Code != "ERR_LIMIT_017" || le.Max != DefaultLimits().expressionMemory() {
					t.Fatalf("err = %v, want the expression memory limit", err)
				}
			case "depth":
				if !errors.As(err, &ve) || !strings.Contains(ve.Error(), "nested more than 100 levels") {
					t.Fatalf("err = %v, want a nesting error", err)
				}
			}
		})
	}
	// Within the bounds, the same features work.
	tpl, err := e.Compile(calcTemplate([][2]string{{"n", `reduce(1..50, [#acc], [])`}, {"m", `len(map(1..10, s + s))`}}))
	if err != nil {
		t.Fatal(err)
	}
	values, err := tpl.Values(map[string]any{"s": "ab"})
	if err != nil || values["m"] != 10 {
		t.Fatalf("values %v, %v", values["m"], err)
	}
	if _, err := tpl.Render(context.Background(), io.Discard, PDF, values, Options{}); err != nil {
		t.Fatal(err)
	}
}

// TestSelfReferencingInput: a caller handing Values a map that contains
// itself (the JSON decoder cannot, a Go caller can) gets a bounded value.
func TestSelfReferencingInput(t *testing.T) {
	e := MustEngine(t)
	def := Definition{Schema: json.RawMessage(`{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"{{ x }} {{ len(x) }} {{ x.self.self.a }}"}}]}]}`)}
	tpl, err := e.Compile(def)
	if err != nil {
		t.Fatal(err)
	}
	self := map[string]any{"a": 1}
	self["self"] = self
	values, err := tpl.Values(map[string]any{"x": self})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tpl.Render(context.Background(), io.Discard, PDF, values, Options{}); err != nil {
		t.Fatal(err)
	}
}

// sandboxFeatures are expression shapes that build a value from earlier
// ones (A, B: other calculated variables). FuzzSelfReference strings them
// together so that values grow, nest and refer to each other through
// every feature of the expression language.
var sandboxFeatures = []string{
	`[A, B]`, `{a: A, b: B}`, `A + B`, `A * 2`, `A ?? B`, `A ? A : B`, `let x = A; [x, x]`, `map(1..3, A)`, `map(A, [#, B])`,
	`filter(A, true)`, `reduce(1..5, [#acc, A], B)`, `reduce(A, #acc + #, 0)`, `concat(A, B)`, `flatten([A, [B]])`, `toPairs(A)`,
	`fromPairs(A)`, `groupBy(A, #)`, `sortBy(A, #)`, `uniq(A)`, `keys(A)`, `values(A)`, `A[0]`, `A.a`, `A[1:]`, `first(A)`, `last(B)`,
	`take(A, 2)`, `reverse(A)`, `len(A)`, `string(A)`, `A | join`, `join(A, B)`, `upper(A)`, `replace(A, "a", B)`, `default(A, B)`,
	`currency(A, "EUR")`, `formatNumber(A, 2)`, `get(A, "a")`, `A in B`, `count(A, true)`, `sum(A)`, `1..A`, `split(A, "")`,
	`type(A)`, `A == B`, `any(A, # == B)`, `find(A, true)`, `[A, [A, [A, [A]]]]`, `{a: {b: {c: A}}}`, `$env`, `$env.A`,
	`__budget`, `A | $env`,
}

// FuzzSelfReference builds calculated variables from sandboxFeatures
// (each byte of ops picks a feature and the earlier variables it reads),
// then prints them in every component that shows values. Whatever it
// builds, nothing may panic, hang or exhaust the stack (which Go cannot
// recover from): the outcome is a document, a schema error, a variable
// error or a limit error.
func FuzzSelfReference(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	f.Add([]byte{10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10})
	f.Add([]byte{47, 47, 47, 47, 47, 47, 47, 47, 47, 47, 47, 47, 47, 47, 47, 47, 47, 47, 47, 47, 47, 47, 47, 47, 47, 47, 47, 47, 47})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{49, 0, 1})
	f.Add([]byte{1, 6, 8, 11, 13, 30, 31})
	f.Add([]byte("the quick brown fox jumps over the lazy dog"))
	e := MustEngine(f)
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 64 {
			ops = ops[:64]
		}
		// v0 is an input: a nested object with text and numbers.
		calcs := [][2]string{}
		name := func(i int) string {
			if i < 0 {
				return "obj"
			}
			return fmt.Sprintf("v%d", i)
		}
		for i, op := range ops {
			f := sandboxFeatures[int(op)%len(sandboxFeatures)]
			a, b := name(i-1), name(i/2-1)
			if op&0x80 != 0 {
				a, b = b, a
			}
			f = strings.ReplaceAll(strings.ReplaceAll(f, "A", a), "B", b)
			calcs = append(calcs, [2]string{name(i), f})
		}
		def := calcTemplate(calcs)
		var list []string
		for _, c := range calcs {
			list = append(list, c[0])
		}
		// Show the last values in a table, a key/value list and a loop too.
		if len(list) > 0 {
			last := list[len(list)-1]
			def.Schema = json.RawMessage(strings.Replace(string(def.Schema), `]}]}`,
				`,{"type":"table","props":{"rows":"`+last+`","columns":[{"header":"v","value":"{{ row }}"}]}}`+
					`,{"type":"keyValue","props":{"items":[{"label":"{{ `+last+` }}","value":"{{ `+last+` }}"}]}}`+
					`,{"type":"text","each":"`+last+`","as":"it","props":{"content":"{{ it }}"}}]}]}`, 1))
		}
		tpl, err := e.Compile(def)
		if err != nil {
			var se *SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("compile: %T %v", err, err)
			}
			return
		}
		in := map[string]any{"obj": map[string]any{"a": "text", "n": 3.5, "list": []any{1, "two", []any{3}}}}
		values, err := tpl.Values(in)
		if err != nil {
			var ve *VariableError
			var le *LimitError
			if !errors.As(err, &ve) && !errors.As(err, &le) {
				t.Fatalf("values: %T %v", err, err)
			}
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, format := range []Format{PDF, XLSX} {
			_, err = tpl.Render(ctx, io.Discard, format, values, Options{Limits: fuzzLimits})
			var ee *ExpressionError
			var le *LimitError
			if err != nil && !errors.As(err, &ee) && !errors.As(err, &le) && !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("render %v: %T %v", format, err, err)
			}
		}
	})
}
