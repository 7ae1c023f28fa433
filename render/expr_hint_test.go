package render

import (
	"encoding/json"
	"errors"
	"testing"
)

// TestMissingMemberHintInvoice: a typo inside an item (unitprice) used to
// give "subtotal: cannot be calculated: invalid operation: float64 *
// <nil> (1:27)"; it names the item's missing key and the one that is there.
func TestMissingMemberHintInvoice(t *testing.T) {
	tpl := MustCompile(t, Definition{
		Schema:              json.RawMessage(`{"sections":[]}`),
		Variables:           []Variable{{Name: "items", Type: "array", Required: true}},
		CalculatedVariables: []CalculatedVariable{{Name: "subtotal", Expression: "sum(map(items, #.quantity * #.unitPrice))"}},
	})
	_, err := tpl.Values(map[string]any{"items": []any{map[string]any{"description": "Setup", "quantity": 1.0, "unitprice": 1200.0}}})
	var ve *VariableError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v, want a variable error", err)
	}
	want := "subtotal: cannot be calculated: items[0].unitPrice is missing (did you mean unitprice?)"
	if got := ve.Error(); got != "variable validation failed: "+want {
		t.Errorf("error = %q\nwant    %q", got, "variable validation failed: "+want)
	}
}

// TestMissingMemberHint: an expression that fails on nil read from a key
// the data lacks names the key's path in the data and the closest key
// that is there, instead of the VM's "invalid operation".
func TestMissingMemberHint(t *testing.T) {
	tests := []struct {
		name, expr string
		input      map[string]any
		want       string // "": the VM's own message stays
	}{
		{"the element that lacks it", "sum(map(items, #.quantity * #.unitPrice))",
			map[string]any{"items": []any{
				map[string]any{"quantity": 1.0, "unitPrice": 5.0},
				map[string]any{"quantity": 2.0, "unitPirce": 5.0},
			}},
			"items[1].unitPrice is missing (did you mean unitPirce?)"},
		{"nested object", "customer.adress.city + '!'",
			map[string]any{"customer": map[string]any{"address": map[string]any{"city": "Köln"}}},
			"customer.adress is missing (did you mean address?)"},
		{"top-level name", "vatrate * 100",
			map[string]any{"vatRate": 0.19},
			"vatrate is missing (did you mean vatRate?)"},
		{"no near key", "order.total * 2",
			map[string]any{"order": map[string]any{"sum": 3.0}},
			"order.total is missing"},
		{"null value", "order.total * 2",
			map[string]any{"order": map[string]any{"total": nil}},
			"order.total is null"},
		{"builtin argument", "round(order.totl)",
			map[string]any{"order": map[string]any{"total": 2.5}},
			"order.totl is missing (did you mean total?)"},
		{"an index past the end says so already", "lines[2].price * 2",
			map[string]any{"lines": []any{map[string]any{"price": 1.0}}},
			""},
		{"let-bound names are not data", "let c = customer; c.nmae * 2",
			map[string]any{"customer": map[string]any{"name": "Ada"}},
			""},
		{"a type error is not a missing key", "customer.name * 2",
			map[string]any{"customer": map[string]any{"name": "Ada"}},
			""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := newExprCompiler(DefaultLimits()).compile("p", tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			ev := newEvaluator(DefaultLimits())
			_, err = ev.run(x, ev.env(tt.input, 0))
			var xe *ExpressionError
			if !errors.As(err, &xe) {
				t.Fatalf("err = %v, want an expression error", err)
			}
			if tt.want == "" {
				if hint := missingHint(x, ev.env(tt.input, 0), xe.Err); hint != "" {
					t.Errorf("hint = %q, want none (message %q)", hint, xe.Message)
				}
				return
			}
			if xe.Message != tt.want {
				t.Errorf("message = %q\nwant      %q", xe.Message, tt.want)
			}
		})
	}
}

func TestClosestKey(t *testing.T) {
	keys := []string{"description", "quantity", "unitPrice"}
	for name, want := range map[string]string{
		"UNITPRICE": "unitPrice", "unitprce": "unitPrice", "quantiy": "quantity", "qty": "", "x": "", "descripton": "description",
	} {
		if got := closest(name, keys); got != want {
			t.Errorf("closest(%q) = %q, want %q", name, got, want)
		}
	}
}
