package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzSVGRender draws arbitrary markup through an svg component: Compile
// reads it (an error is a schema error), Render draws it into a PDF. No
// input may panic, and a render fails only with a limit or a documented
// error.
func FuzzSVGRender(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "svg", "showcase.svg")); err == nil {
		f.Add(string(b))
	}
	for _, s := range []string{
		`<svg viewBox="0 0 10 10"><path d="M0 0 A5 5 0 1 1 10 10 z" fill="url(#g)"/><radialGradient id="g" r="0"><stop/><stop offset="1"/></radialGradient></svg>`,
		`<svg width="1e9" height="1e-9" viewBox="0 0 1e-300 1e300"><rect width="1e300" height="1" transform="scale(1e300)"/><text font-size="1e9">x</text></svg>`,
		`<svg><text x="1" y="2" text-anchor="end" font-family="Noto Sans Arabic">مرحبا <tspan dy="5">{nb}</tspan></text></svg>`,
		`<svg><g opacity="0.3"><rect width="5" height="5" stroke="red" stroke-dasharray="0 0" stroke-width="0"/></g></svg>`,
	} {
		f.Add(s)
	}
	e := MustEngine(f)
	opts := Options{Limits: Limits{Memory: 16 << 20}}
	f.Fuzz(func(t *testing.T, markup string) {
		content, err := json.Marshal(markup)
		if err != nil {
			return
		}
		tpl, err := e.Compile(schemaDef(`{"sections":[{"id":"b","components":[{"type":"svg","props":{"content":` + string(content) + `,"width":100}}]}]}`))
		var se *SchemaError
		if err != nil {
			if !errors.As(err, &se) {
				t.Fatalf("Compile: %T %v", err, err)
			}
			return
		}
		var buf bytes.Buffer
		_, err = tpl.Render(t.Context(), &buf, PDF, nil, opts)
		var le *LimitError
		var xe *ExpressionError
		if err != nil && !errors.As(err, &le) && !errors.As(err, &xe) {
			t.Fatalf("Render: %T %v", err, err)
		}
	})
}
