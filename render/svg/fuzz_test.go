package svg

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: no input makes the reader panic, run past its bounds, or
// return a drawing with an item that is neither a shape nor a text.
func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("..", "testdata", "svg", "showcase.svg")); err == nil {
		f.Add(b)
	}
	for _, s := range []string{
		`<svg viewBox="0 0 10 10"><path d="M0 0 A5 5 0 1 1 10 10 z m1 1 q1 1 2 2 t3 3 s1 1 2 2 c1 1 2 2 3 3"/></svg>`,
		`<svg><g transform="rotate(30 5 5) skewX(10) matrix(1 0 0 1 2 2)"><rect width="5" height="5" rx="1"/></g></svg>`,
		`<svg><linearGradient id="g" href="#g"><stop offset="2"/></linearGradient><rect width="1" height="1" fill="url(#g)"/></svg>`,
		`<svg><style>.a{fill:red}@media print{.a{fill:blue}}</style><text class="a" x="1 2" y="3">a<tspan dy="1">b</tspan></text></svg>`,
		`<svg><symbol id="s" viewBox="0 0 1 1"><circle r="1"/></symbol><use href="#s" width="10" height="10"/></svg>`,
		`<svg><polyline points="1,2 3"/><polygon points=""/><line x1="1e308" x2="-1e308"/></svg>`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := parse(data)
		if err != nil {
			return
		}
		d := res.Drawing
		if len(d.Items) > maxDrawn || len(res.Warnings) > maxWarnings {
			t.Fatalf("%d items, %d warnings", len(d.Items), len(res.Warnings))
		}
		if !(d.Width > 0) || !(d.Height > 0) || math.IsInf(d.Width, 0) || math.IsInf(d.Height, 0) {
			t.Fatalf("size %gx%g", d.Width, d.Height)
		}
		d.Fit(100, 50)
		for _, it := range d.Items {
			switch {
			case it.Shape != nil:
				if len(it.Shape.Path.Pts)%2 != 0 {
					t.Fatalf("odd point count")
				}
				it.Shape.Path.Bounds()
			case it.Text != nil:
			default:
				t.Fatalf("empty item")
			}
		}
	})
}
