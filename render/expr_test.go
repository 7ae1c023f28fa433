package render

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// renderText compiles content as a text template and renders it in values.
func renderText(t *testing.T, content string, values map[string]any) (string, error) {
	t.Helper()
	c := &compiler{limits: DefaultLimits(), exprs: newExprCompiler(DefaultLimits())}
	tt := c.compileText("content", content)
	if err := c.err(); err != nil {
		t.Fatalf("compile %q: %v", content, err)
	}
	ev := newEvaluator(DefaultLimits())
	return tt.render(ev, ev.env(values, 0))
}

func TestPlaceholders(t *testing.T) {
	values := map[string]any{
		"name":     "Zoë",
		"price":    19.99,
		"qty":      3,
		"big":      1234567.891,
		"neg":      -1234.5,
		"customer": map[string]any{"address": map[string]any{"city": "Köln"}},
		"tags":     []any{"a", "b", "c"},
		"due":      time.Date(2024, 3, 9, 0, 0, 0, 0, time.UTC),
		"stamp":    time.Date(2024, 3, 9, 14, 5, 0, 0, time.UTC),
		"empty":    "",
		"flag":     true,
	}
	tests := []struct {
		content string
		want    string
	}{
		{"plain text", "plain text"},
		{"Hello {{name}}!", "Hello Zoë!"},
		{"{{ customer.address.city }}", "Köln"},
		{"[{{ missing }}][{{ missing.deep.path }}][{{ customer.nope.city }}]", "[][][]"},
		{"{{ price * qty }}", "59.97"},
		{"{{ 0.1 + 0.2 }} {{ 10 / 4 }} {{ 7 % 3 }} {{ 2 ** 10 }}", "0.3 2.5 1 1024"},
		{"{{ qty > 2 }} {{ qty == 3 && name != \"x\" }} {{ price < 10 ? \"cheap\" : \"dear\" }}", "true true dear"},
		{"{{ big | currency(\"EUR\") }} {{ neg | currency(\"usd\") }} {{ 9 | currency(\"CHF\") }} {{ 1500 | currency(\"JPY\") }} {{ 5 | currency() }}", "€1,234,567.89 -$1,234.50 9.00 CHF ¥1,500 5.00"},
		{"{{ big | formatNumber(2) }} {{ formatNumber(big) }} {{ neg | formatNumber(1) }}", "1,234,567.89 1,234,568 -1,234.5"},
		{"{{ due | formatDate(\"DD.MM.YYYY\") }} {{ due | formatDate(\"January 2, 2006\") }} {{ \"2024-12-01\" | formatDate(\"D MMM YY\") }} {{ stamp | formatDate(\"YYYY-MM-DD HH:mm\") }}", "09.03.2024 March 9, 2024 1 Dec 24 2024-03-09 14:05"},
		{"{{ due }} {{ stamp }}", "2024-03-09 2024-03-09T14:05:00Z"},
		{"{{ name | upper }} {{ name | lower() }} {{ upper(missing) }}", "ZOË zoë "},
		{"{{ missing | default(\"n/a\") }} {{ empty | default(\"none\") }} {{ name | default(\"x\") }}", "n/a none Zoë"},
		{"{{ tags | join }} {{ join(tags, \"/\") }} {{ len(tags) }} {{ tags[1] }}", "a, b, c a/b/c 3 b"},
		{"{{ replace(name, \"ë\", \"e\") }}", "Zoe"},
		{"{{ sum(map([1, 2, 3], # * 2)) }} {{ filter(tags, # != \"b\") }}", `12 ["a","c"]`},
		{"{{ let x = qty * 2; x + 1 }}", "7"},
		{"{{ {\"a\": {\"b\": 1}}.a.b }} {{ \"}}\" }}", "1 }}"},
		{"{{ if flag { \"yes\" } else { \"no\" }}}", "yes"},
		{"{{ missing ?? \"fallback\" }}", "fallback"},
		{"{{ due.Year() }}", "2024"},
		{"{{ customer }}", `{"address":{"city":"Köln"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.content, func(t *testing.T) {
			got, err := renderText(t, tt.content, values)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPlaceholderErrors(t *testing.T) {
	tests := []struct {
		content string
		want    string
	}{
		{"{{ currency(\"x\", \"EUR\") }}", `currency: text "x" is not a number`},
		{"{{ formatDate(5) }}", "formatDate: 5 is not a date"},
		{"{{ formatNumber(1, 20) }}", "formatNumber: decimals must be a whole number from 0 to 10"},
		{"{{ default(1) }}", "default takes 2 arguments, got 1"},
		{"{{ reduce(1..100, #acc + #acc, \"0123456789\") }}", "text longer than"},
		{"{{ tags[9] }}", "index out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.content, func(t *testing.T) {
			_, err := renderText(t, tt.content, map[string]any{"tags": []any{1}})
			var xe *ExpressionError
			if !errors.As(err, &xe) {
				t.Fatalf("err = %v, want *ExpressionError", err)
			}
			if !strings.Contains(xe.Message, tt.want) {
				t.Errorf("message %q, want it to contain %q", xe.Message, tt.want)
			}
			if xe.Path != "content" {
				t.Errorf("path = %q, want %q", xe.Path, "content")
			}
		})
	}
}

func TestOperationBudgetStopsRunawayExpressions(t *testing.T) {
	limits := DefaultLimits()
	limits.Operations, limits.LoopIterations = 10, 10 // budget: 100 operations
	ec := newExprCompiler(limits)
	x, err := ec.compile("p", "sum(map(1..50, # * 2))")
	if err != nil {
		t.Fatal(err)
	}
	ev := newEvaluator(limits)
	if _, err := ev.run(x, ev.env(nil, 0)); err == nil || !strings.Contains(err.Error(), "operation budget of 100 exceeded") {
		t.Errorf("err = %v, want the operation budget", err)
	}
	small, _ := ec.compile("p", "sum(map(1..20, # * 2))")
	if got, err := ev.run(small, ev.env(nil, 0)); err != nil || got != 420 {
		t.Errorf("got %v, %v; want 420 (the budget resets per evaluation)", got, err)
	}
}

func TestExpressionRequiresSandbox(t *testing.T) {
	x, err := newExprCompiler(DefaultLimits()).compile("p", "1 + 1")
	if err != nil {
		t.Fatal(err)
	}
	ev := newEvaluator(DefaultLimits())
	if _, err := ev.run(x, map[string]any{}); err == nil {
		t.Error("running without the budget in env should fail closed")
	}
}

func TestCallBarePipes(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a | upper", "a | upper()"},
		{"a | upper | lower()", "a | upper() | lower()"},
		{"a || b", "a || b"},
		{`"Ω" | upper`, `"Ω" | upper()`},
		{"a | currency(\"EUR\")", "a | currency(\"EUR\")"},
	}
	for _, tt := range tests {
		got, err := callBarePipes(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("callBarePipes(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}
