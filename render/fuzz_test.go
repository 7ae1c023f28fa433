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
var fuzzLimits = Limits{Pages: 3, LoopIterations: 50, Bytes: 1 << 20, Rows: 200, Sheets: 3}

// FuzzRender feeds arbitrary schema and variable JSON through Compile,
// Values and Render (PDF and XLSX). Nothing may panic or hang, and every
// failure must be one of the documented error types.
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
	f.Add(`{"sections":[{"id":"b","name":"Sheet: [1]","components":[{"type":"table","props":{"rows":"items","columns":[
		{"header":"N","value":"{{ row.name }}","width":"30%"},{"header":"P","value":"{{ row.price }}","format":"currency:EUR","align":"right"},
		{"header":"D","value":"{{ row.d }}","format":"date:DD.MM.YYYY"},{"value":"{{ rowIndex }} x","width":12}]}},
		{"type":"keyValue","props":{"items":[{"label":"Total","value":"{{ double }}","format":"number:2"}]}},{"type":"pageBreak"},
		{"type":"table","props":{"rows":"{{ items }}","as":"it","showHeader":false,"bordered":false,"columns":[{"value":"{{ it }}","format":"percent:1"}]}}]}]}`,
		`{"items":[{"name":"a","price":1.5,"d":"2024-01-02"},{"name":"\u0000\uffff","price":"x","d":true},null,3]}`)
	f.Add(`{"sections":[{"id":"h","role":"header","components":[{"type":"image","props":{"src":"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==","height":5}}]},
		{"id":"b","components":[{"type":"image","props":{"src":"{{ name }}","width":20,"height":300}},
		{"type":"qrcode","props":{"value":"{{ name }}","size":20,"level":"H","align":"center"}},
		{"type":"barcode","props":{"value":"{{ name }}","width":50,"showText":false}},
		{"type":"divider","props":{"color":"#f00","thickness":2}},{"type":"spacer","props":{"height":250}},
		{"type":"columns","props":{"widths":[1,3],"gap":2,"children":[[{"type":"text","each":"items","props":{"content":"{{ item }}"}}],[{"type":"columns","props":{"children":[[{"type":"pageBreak"}],[]]}}]]}}]}]}`,
		`{"name":"data:image/jpeg;base64,/9j/4AAQ","items":[1,2,3]}`)
	f.Add(`{"sections":[
		{"id":"h1","role":"header","on":"first","components":[{"type":"heading","props":{"content":"Cover {{page}}"}}]},
		{"id":"h2","role":"header","on":"notFirst","components":[{"type":"text","props":{"content":"{{page}}/{{pages}}"}}]},
		{"id":"f1","role":"footer","on":"last","components":[{"type":"keyValue","props":{"items":[{"label":"Total","value":"{{ sum(map(items, #.a ?? 0)) }}"}]}}]},
		{"id":"f2","role":"footer","on":"notLast","components":[{"type":"text","props":{"content":"more on {{ page + 1 }}"}}]},
		{"id":"b","components":[{"type":"text","if":"page > 1","props":{"content":"page {{page}}","widows":3,"orphans":1}},
		{"type":"columns","keepTogether":true,"each":"items","props":{"children":[[{"type":"text","props":{"content":"{{ item.a }} on {{ page }}"}}],[{"type":"spacer","props":{"height":40}}]]}},
		{"type":"table","props":{"rows":"items","groupBy":"g","carryForward":"row.a","continuedLabel":{"bottom":"c/f {{ carried }}","top":"b/f {{ page }}"},
		"subtotalLabel":"Sub {{ group }}","totalLabel":"All","columns":[{"header":"G","value":"{{ row.g }}"},
		{"header":"A","key":"a","value":"{{ row.a }}","format":"currency:EUR","total":"sum"},{"header":"B","value":"{{ (row.a ?? 0) * 2 }}","formula":"={a}*2+{row-1}","total":"average"},
		{"header":"D","value":"{{ row.d }}","format":"date","total":"max"},{"header":"N","value":"{{ row.n }}","total":"count"}]}}]}]}`,
		`{"items":[{"g":"x","a":1.5,"d":"2024-01-02","n":"n"},{"g":"y","a":-2,"d":"2023-12-31"},{"g":"x","a":1e9},{"g":null},{"g":"y","a":0.1}]}`)
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
		for _, format := range []Format{PDF, XLSX} {
			ctx, cancel := context.WithTimeout(context.Background(), scaled(10*time.Second))
			var buf bytes.Buffer
			stats, err := tpl.Render(ctx, &buf, format, values, Options{Limits: fuzzLimits})
			cancel()
			if err != nil {
				var (
					le *LimitError
					xe *ExpressionError
				)
				if !errors.As(err, &le) && !errors.As(err, &xe) {
					t.Fatalf("Render %s: unexpected error %T: %v", format, err, err)
				}
				if buf.Len() != 0 {
					t.Fatalf("Render %s failed but wrote %d bytes", format, buf.Len())
				}
				continue
			}
			switch {
			case format == PDF && (stats.Pages < 1 || stats.Pages > fuzzLimits.Pages || !bytes.HasPrefix(buf.Bytes(), []byte("%PDF-"))):
				t.Fatalf("bad PDF: %+v, starts %q", stats, buf.Bytes()[:min(buf.Len(), 8)])
			case format == XLSX && (stats.Sheets < 1 || stats.Sheets > fuzzLimits.Sheets || stats.Rows > fuzzLimits.Rows || !bytes.HasPrefix(buf.Bytes(), []byte("PK"))):
				t.Fatalf("bad XLSX: %+v", stats)
			}
		}
	})
}
