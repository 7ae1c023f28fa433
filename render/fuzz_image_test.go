package render

import (
	"bytes"
	"errors"
	"runtime"
	"testing"
)

// fuzzImageMemory is the render budget FuzzImage renders with: small, so
// that a header promising more is refused and the rest decode quickly.
const fuzzImageMemory = 4 << 20

// fuzzImageOverhead is what a render of a one-image page allocates besides
// the image: fonts, layout, the PDF (measured at about 1 MB).
const fuzzImageOverhead = 8 << 20

// FuzzImage feeds arbitrary bytes as an image through Compile (a literal
// data URI, checked against the default budget from its header alone)
// and Render with a small memory budget, literal and from a variable.
// Nothing may panic, every failure must be a documented error, and no
// render may go past its budget: the memory meter's peak stays within it,
// and the Go heap allocates no more than the budget twice over besides a
// page's usual work. The seed corpus (testdata/fuzz/FuzzImage) holds PNGs
// of every colour type and depth, interlaced or not, JPEGs baseline,
// progressive and CMYK, headers of image bombs and broken files.
func FuzzImage(f *testing.F) {
	e := MustEngine(f)
	dynamic := MustCompile(f, imageSchema("{{ logo }}"))
	opts := Options{Limits: Limits{Memory: fuzzImageMemory}}
	f.Fuzz(func(t *testing.T, data []byte) {
		src := dataURI("image/png", data)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		literal, err := e.Compile(imageSchema(src))
		var se *SchemaError
		if err != nil && !errors.As(err, &se) {
			t.Fatalf("Compile: %T %v", err, err)
		}
		for _, r := range []struct {
			tpl    *Template
			values map[string]any
		}{{literal, nil}, {dynamic, map[string]any{"logo": src}}} {
			if r.tpl == nil {
				continue
			}
			values, err := r.tpl.Values(r.values)
			if err != nil {
				t.Fatalf("Values: %v", err)
			}
			var buf bytes.Buffer
			st, err := r.tpl.Render(t.Context(), &buf, PDF, values, opts)
			var le *LimitError
			var xe *ExpressionError
			switch {
			case errors.As(err, &le) && le.Limit != LimitMemory && le.Limit != LimitBytes:
				t.Fatalf("Render: unexpected limit %v", err)
			case err != nil && le == nil && !errors.As(err, &xe):
				t.Fatalf("Render: %T %v", err, err)
			case err == nil && st.Memory > fuzzImageMemory:
				t.Fatalf("Render counted %d bytes, budget %d", st.Memory, fuzzImageMemory)
			}
		}
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; n > 2*fuzzImageMemory+fuzzImageOverhead+uint64(8*len(src)) {
			t.Fatalf("Compile and two renders allocated %d MB with a budget of %d MB", n>>20, fuzzImageMemory>>20)
		}
	})
}
