package render

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// FuzzChart feeds arbitrary chart props and data through Compile and
// Render (PDF and XLSX): nothing may panic or hang, and every failure is
// a schema, limit or expression error.
func FuzzChart(f *testing.F) {
	f.Add(`{"chartType":"bar","items":"rows","category":"item.n","series":[{"label":"A","value":"item.v"},{"label":"B","value":"item.w","color":"#f00"}],"yAxis":{"format":"currency:EUR","title":"€"}}`,
		`{"rows":[{"n":"a","v":1,"w":-2},{"n":"b","v":"3","w":null},{"n":"c","v":1e14}]}`)
	f.Add(`{"chartType":"bar","stacked":true,"horizontal":true,"showValues":true,"categories":["x","y"],"series":[{"values":[1,-1]},{"values":[null,5]}],"legend":"top"}`, `{}`)
	f.Add(`{"chartType":"line","items":"rows","category":"item","series":[{"value":"index * 1.5"}],"yAxis":{"min":-1,"max":0.5,"format":"percent"},"width":20,"height":20}`,
		`{"rows":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41]}`)
	f.Add(`{"chartType":"area","stacked":true,"categories":"cats","series":[{"values":"a"},{"values":"b"}],"xAxis":{"title":"{{ t }}","gridlines":true}}`,
		`{"cats":["Q1","Q2","Q3"],"a":[1,2],"b":[3,4,5,6],"t":"\u202eright\u0000"}`)
	f.Add(`{"chartType":"pie","items":"groupBy(rows, .g)","category":"item.key","series":[{"value":"len(item.value)"}],"colors":["#000","#fff"]}`,
		`{"rows":[{"g":"x"},{"g":"y"},{"g":1},{"g":null}]}`)
	f.Add(`{"chartType":"donut","title":"{{ 1/0 }}","series":[{"values":[0.0001,1e15,3]}],"showValues":true}`, `{}`)
	f.Add(`{"chartType":"scatter","items":"rows","series":[{"x":"item.x","value":"item.y"},{"xValues":[1,2,3],"values":[3,2]}],"xAxis":{"format":"number:2","min":0}}`,
		`{"rows":[{"x":1,"y":2},{"x":-5,"y":"7"},{"x":null,"y":1}]}`)
	f.Add(`{"chartType":"line","items":"rows","series":[{"value":"item"}],"emptyText":""}`, `{"rows":{"b":2,"a":1}}`)
	f.Fuzz(func(t *testing.T, props, vars string) {
		e := MustEngine(t)
		def := Definition{Schema: json.RawMessage(`{"locale":"de-DE","sections":[{"id":"b","components":[{"type":"chart","props":` + props + `}]}]}`)}
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
		for _, format := range []Format{PDF, XLSX} {
			ctx, cancel := context.WithTimeout(context.Background(), scaled(10*time.Second))
			var buf bytes.Buffer
			_, err := tpl.Render(ctx, &buf, format, input, Options{Limits: fuzzLimits})
			cancel()
			if err != nil {
				var (
					le *LimitError
					xe *ExpressionError
				)
				if !errors.As(err, &le) && !errors.As(err, &xe) {
					t.Fatalf("Render %s: unexpected error %T: %v", format, err, err)
				}
			}
		}
	})
}
