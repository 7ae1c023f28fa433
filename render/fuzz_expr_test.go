package render

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// FuzzExpression compiles and evaluates one arbitrary placeholder expression
// against fixed variables, in an arbitrary locale (the schema's "locale"). It must never panic or hang: it renders, or fails
// with a SchemaError at compile time or an ExpressionError/LimitError at run
// time, within the operation budget.
func FuzzExpression(f *testing.F) {
	for _, seed := range []string{
		`total | currency("EUR")`, `customer.address.city`, `price * qty`, `sum(map(items, #.p))`, `filter(items, #.p > 1)`,
		`date | formatDate("2006-01-02")`, `upper(name) + lower(name)`, `default(missing, "x")`, `1..1000000`,
		`reduce(1..100, #acc + #acc, "ab")`, `items[99].p`, `name[0:3]`, `"a" * 3`, `1/0`, `{}`, `nil.x.y`, `page`, `"}}"`,
		strings.Repeat("(", 200) + "1" + strings.Repeat(")", 200), `map(1..1000, map(1..1000, #))`,
		`formatNumber(total, 2, "de-CH")`, `formatPercent(price, 1)`, `formatDate(date, "full")`, `t("key")`, `"key" | t`,
		`formatDate(date, "dddd D MMMM YYYY", "ar-EG")`, `currency(total, "KWD", "en-IN")`, `currency(-0.001, "JPY")`,
	} {
		for _, loc := range []string{"", "de-DE", "ar-EG", "ja-JP"} {
			f.Add(seed, loc)
		}
	}
	vars := map[string]any{"total": 1234.5, "price": 2.5, "qty": 3, "name": "Zoë", "date": "2026-11-22",
		"customer": map[string]any{"address": map[string]any{"city": "Москва"}},
		"items":    []any{map[string]any{"p": 1}, map[string]any{"p": 2.5}, map[string]any{"p": "x"}}}
	f.Fuzz(func(t *testing.T, expr, locale string) {
		e := MustEngine(t)
		content, _ := json.Marshal("{{ " + expr + " }}")
		loc, _ := json.Marshal(locale)
		def := Definition{Schema: json.RawMessage(`{"locale":` + string(loc) + `,"translations":{"de":{"key":"Schlüssel"}},"sections":[{"id":"b","components":[{"type":"text","props":{"content":` + string(content) + `}}]}]}`)}
		tpl, err := e.Compile(def)
		if err != nil {
			var se *SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("compile %q: %T %v", expr, err, err)
			}
			return
		}
		values, err := tpl.Values(vars)
		if err != nil {
			t.Fatalf("values: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), scaled(5*time.Second))
		defer cancel()
		start := time.Now()
		_, err = tpl.Render(ctx, io.Discard, PDF, values, Options{Limits: fuzzLimits})
		if time.Since(start) > scaled(4*time.Second) {
			t.Fatalf("%q took %v: the budget did not stop it", expr, time.Since(start))
		}
		var ee *ExpressionError
		var le *LimitError
		if err != nil && !errors.As(err, &ee) && !errors.As(err, &le) && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("render %q: %T %v", expr, err, err)
		}
	})
}
