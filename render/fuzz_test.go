package render

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// fuzzLimits keep fuzzed documents small so each input renders quickly.
var fuzzLimits = Limits{Pages: 3, LoopIterations: 50, Bytes: 1 << 20}

// FuzzRender feeds arbitrary schema and variable JSON through Compile,
// Values and Render. Nothing may panic, and every failure must be one of
// the documented error types.
func FuzzRender(f *testing.F) {
	f.Add(`{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"Hello {{ name }}"}}]}]}`, `{"name":"Zoë"}`)
	f.Add(`{"pageSize":"Letter","orientation":"landscape","margins":{"top":5,"left":5},"sections":[
		{"id":"h","role":"header","components":[{"type":"text","props":{"content":"{{page}} / {{pages}}","style":{"align":"right"}}}]},
		{"id":"f","role":"footer","components":[{"type":"text","props":{"content":"{{ page == pages ? \"end\" : \"\" }}"}}]},
		{"id":"b","components":[{"type":"heading","props":{"content":"Grüße, Ωμέγα, Привет","level":2}},
		{"type":"text","if":"show","each":"items","as":"it","props":{"content":"{{ it.name | upper }} {{ it.price | currency(\"EUR\") }}","style":{"bold":true,"color":"#ff0000"}}}]}]}`,
		`{"show":true,"items":[{"name":"a","price":1},{"name":"b","price":"x"}]}`)
	f.Add(`{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"{{ text }}"}}]}]}`, `{"text":"\u0000\t\r\n😀\uffff`+"x\u202e"+`"}`)
	f.Add(`{"sections":[{"id":"b","components":[{"type":"text","each":"1..10","props":{"content":"{{ reduce(1..10, #acc + #acc, \"ab\") }}"}}]}]}`, `{}`)
	f.Add(`{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"{{ {\"a\":[1,2]}.a[5] }} {{ \"}}\" }}"}}]}]}`, `null`)
	f.Fuzz(func(t *testing.T, schema, vars string) {
		e := MustEngine(t)
		def := Definition{
			Schema:              json.RawMessage(schema),
			Variables:           []Variable{{Name: "name", Type: "string"}, {Name: "items", Type: "array"}, {Name: "n", Type: "number", DefaultValue: 2.0}},
			Constants:           map[string]any{"rate": 0.2},
			CalculatedVariables: []CalculatedVariable{{Name: "double", Expression: "n * 2 + rate"}},
		}
		tpl, err := e.Compile(def)
		if err != nil {
			var se *SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("Compile: unexpected error type %T: %v", err, err)
			}
			return
		}
		var input map[string]any
		_ = json.Unmarshal([]byte(vars), &input)
		values, err := tpl.Values(input)
		if err != nil {
			var ve *VariableError
			if !errors.As(err, &ve) {
				t.Fatalf("Values: unexpected error type %T: %v", err, err)
			}
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var buf bytes.Buffer
		stats, err := tpl.Render(ctx, &buf, PDF, values, Options{Limits: fuzzLimits})
		if err != nil {
			var (
				le *LimitError
				xe *ExpressionError
			)
			if !errors.As(err, &le) && !errors.As(err, &xe) {
				t.Fatalf("Render: unexpected error %T: %v", err, err)
			}
			if buf.Len() != 0 {
				t.Fatalf("Render failed but wrote %d bytes", buf.Len())
			}
			return
		}
		if stats.Pages < 1 || stats.Pages > fuzzLimits.Pages || !bytes.HasPrefix(buf.Bytes(), []byte("%PDF-")) {
			t.Fatalf("bad document: %+v, starts %q", stats, buf.Bytes()[:min(buf.Len(), 8)])
		}
	})
}
