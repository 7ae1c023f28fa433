package svg

import (
	"math"
	"strings"
	"testing"

	"folio/render/vector"
)

func mustParse(t *testing.T, src string) *Result {
	t.Helper()
	res, err := Parse([]byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return res
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

func rgb(r, g, b uint8) vector.Color { return vector.Color{R: r, G: g, B: b} }

// Every path command, relative and absolute, lands where SVG says.
func TestPathCommands(t *testing.T) {
	for _, tc := range []struct {
		d          string
		endX, endY float64
		ops        int
	}{
		{"M10 10 L20 10 H30 V40 Z", 10, 10, 5},
		{"m10 10 l10 0 h10 v30 z", 10, 10, 5},
		{"M0 0 C10 0 20 10 20 20 S30 40 40 40", 40, 40, 3},
		{"M0 0 c10 0 20 10 20 20 s10 20 20 20", 40, 40, 3},
		{"M0 0 Q10 0 10 10 T20 20", 20, 20, 3},
		{"M0 0 q10 0 10 10 t10 10", 20, 20, 3},
		{"M0 0 A10 10 0 0 1 20 0", 20, 0, 3},   // a half circle: two quarter curves
		{"M0 0 a10 10 0 1 1 0.1 0", 0.1, 0, 5}, // almost a whole circle: four curves
		{"M0,0 10,10 20,0", 20, 0, 3},          // numbers after M are lineto
		{"M1-2.5.5.5", 0.5, 0.5, 2},            // numbers run together
		{"M0 0 A5 5 0 0110 0", 10, 0, 3},       // arc flags run together
		{"M0 0 A0 5 0 0 1 10 0", 10, 0, 2},     // a zero radius is a line
		{"M0 0 L10 10 L", 10, 10, 2},           // an error ends the path where it is
		{"M0 0 L10 10 #", 10, 10, 2},
		{"M 1e2 1E-1 l -1e1 0", 90, 0.1, 2},
	} {
		p := &vector.Path{}
		budget := 100
		parsePath(tc.d, p, &budget)
		x, y := p.Current()
		if !near(x, tc.endX) || !near(y, tc.endY) || p.Len() != tc.ops {
			t.Errorf("%q: ends at (%g, %g) with %d commands, want (%g, %g) with %d", tc.d, x, y, p.Len(), tc.endX, tc.endY, tc.ops)
		}
	}
}

// An arc's curves stay on its circle.
func TestArcOnCircle(t *testing.T) {
	p := &vector.Path{}
	budget := 10
	if err := parsePath("M0 0 A10 10 0 0 1 20 0", p, &budget); err != nil {
		t.Fatal(err)
	}
	// The top of the half circle (clockwise from (0,0) to (20,0) on a
	// y-down page goes through (10,-10)).
	mid := p.Pts[len(p.Pts)/2-1 : len(p.Pts)/2+1]
	_ = mid
	found := false
	for i := 0; i+1 < len(p.Pts); i += 2 {
		if near(p.Pts[i], 10) && math.Abs(p.Pts[i+1]+10) < 1e-6 {
			found = true
		}
	}
	if !found {
		t.Errorf("arc does not pass through (10, -10): %v", p.Pts)
	}
}

func TestTransforms(t *testing.T) {
	for _, tc := range []struct {
		s    string
		x, y float64 // where (1, 0) goes
		ok   bool
	}{
		{"translate(10 20)", 11, 20, true},
		{"translate(10)", 11, 0, true},
		{"scale(2 3)", 2, 0, true},
		{"rotate(90)", 0, 1, true},
		{"rotate(90 1 1)", 2, 1, true},
		{"matrix(1 0 0 1 5 6)", 6, 6, true},
		{"translate(10,0) scale(2)", 12, 0, true},
		{"skewY(45)", 1, 1, true},
		{"skewX(45)", 1, 0, true},
		{"translate(1 2", 1, 0, false},
		{"wobble(3)", 1, 0, false},
	} {
		m, ok := parseTransform(tc.s)
		x, y := m.Apply(1, 0)
		if ok != tc.ok || !near(x, tc.x) || !near(y, tc.y) {
			t.Errorf("%s: (1,0) -> (%g, %g) ok=%v, want (%g, %g) ok=%v", tc.s, x, y, ok, tc.x, tc.y, tc.ok)
		}
	}
}

func TestColors(t *testing.T) {
	for s, want := range map[string]vector.Color{
		"#f00": rgb(255, 0, 0), "#00ff00": rgb(0, 255, 0), "rgb(0, 0, 255)": rgb(0, 0, 255),
		"rgb(100%,50%,0%)": rgb(255, 128, 0), "teal": rgb(0, 128, 128), "#0000ff80": rgb(0, 0, 255),
	} {
		if got, ok := parseColor(s); !ok || got != want {
			t.Errorf("%s: %v %v, want %v", s, got, ok, want)
		}
	}
	for _, s := range []string{"#12", "rgb(1,2)", "bluish", "#ggg"} {
		if _, ok := parseColor(s); ok {
			t.Errorf("%s read as a colour", s)
		}
	}
}

// Size, view box and preserveAspectRatio.
func TestViewport(t *testing.T) {
	d := mustParse(t, `<svg xmlns="http://www.w3.org/2000/svg" width="2in" viewBox="0 0 100 50" preserveAspectRatio="xMinYMax slice"/>`).Drawing
	if d.Width != 192 || d.Height != 96 || d.ViewBox != [4]float64{0, 0, 100, 50} || !d.Aspect.Slice || d.Aspect.AlignX != 0 || d.Aspect.AlignY != 2 {
		t.Errorf("drawing %+v", d)
	}
	m := d.Fit(200, 200) // slice: scaled by 4, aligned to the bottom
	if x, y := m.Apply(0, 50); !near(x, 0) || !near(y, 200) {
		t.Errorf("fit maps (0,50) to (%g,%g)", x, y)
	}
	d = mustParse(t, `<svg viewBox="0 0 100 50"/>`).Drawing
	if d.Width != 100 || d.Height != 50 {
		t.Errorf("size from the view box: %gx%g", d.Width, d.Height)
	}
	d = mustParse(t, `<svg width="40" height="20" viewBox="0 0 10 10" preserveAspectRatio="none"/>`).Drawing
	if m := d.Fit(40, 20); !near(m[0], 4) || !near(m[3], 2) {
		t.Errorf("none stretches: %v", m)
	}
}

// Styles come from attributes, the style sheet and the style attribute,
// in that order of strength, and are inherited.
func TestStyleCascade(t *testing.T) {
	res := mustParse(t, `<svg xmlns="http://www.w3.org/2000/svg">
	  <style>rect { fill: blue } .warn { fill: orange; stroke: black } #one { stroke-width: 5 }</style>
	  <g fill="green" stroke-width="3">
	    <rect id="one" class="warn" width="10" height="10" fill="red"/>
	    <circle r="5" style="fill: purple; opacity: 0.5"/>
	    <ellipse rx="5" ry="2"/>
	    <rect width="4" height="4" style="display:none"/>
	  </g>
	</svg>`)
	items := res.Drawing.Items
	if len(items) != 3 {
		t.Fatalf("%d items, want 3", len(items))
	}
	r := items[0].Shape
	if r.Fill.Color != rgb(255, 165, 0) || r.Stroke == nil || r.Stroke.Width != 5 {
		t.Errorf("rect: fill %v stroke %+v", r.Fill.Color, r.Stroke)
	}
	c := items[1].Shape
	if c.Fill.Color != rgb(128, 0, 128) || c.Fill.Opacity != 0.5 {
		t.Errorf("circle: %+v", c.Fill)
	}
	if e := items[2].Shape; e.Fill.Color != rgb(0, 128, 0) || e.Stroke != nil {
		t.Errorf("ellipse inherits green and no stroke: %+v %+v", e.Fill, e.Stroke)
	}
}

// Features left out are named in warnings, each once; nothing outside
// the file is fetched.
func TestUnsupportedWarns(t *testing.T) {
	res := mustParse(t, `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">
	  <script>alert(1)</script>
	  <foreignObject><div xmlns="http://www.w3.org/1999/xhtml">x</div></foreignObject>
	  <mask id="m"/><filter id="f"/>
	  <rect width="5" height="5" filter="url(#f)" mask="url(#m)"/>
	  <rect width="5" height="5" clip-path="url(#c)"/>
	  <image href="https://example.com/a.png" width="5" height="5"/>
	  <use xlink:href="https://example.com/sprite.svg#a"/>
	  <use href="#nothing"/>
	  <rect width="5" height="5" fill="url(https://example.com/g.svg#g)"/>
	  <animate attributeName="x"/>
	</svg>`)
	all := strings.Join(res.Warnings, "\n")
	for _, want := range []string{"scripts", "foreignObject", "masks", "filter", "clip-path", "<image>", "https://example.com/sprite.svg#a", "not fetched", "#nothing", "animation"} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings do not mention %q:\n%s", want, all)
		}
	}
	seen := map[string]bool{}
	for _, w := range res.Warnings {
		if seen[w] {
			t.Errorf("warning %q given twice", w)
		}
		seen[w] = true
	}
}

func TestGradients(t *testing.T) {
	res := mustParse(t, `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">
	  <linearGradient id="base"><stop offset="0" stop-color="red"/><stop offset="50%" style="stop-color:#00f"/><stop offset="0.2" stop-color="lime"/></linearGradient>
	  <linearGradient id="tilted" xlink:href="#base" x2="0" y2="1" gradientTransform="rotate(45)"/>
	  <radialGradient id="r" gradientUnits="userSpaceOnUse" cx="50" cy="50" r="40" fx="40"><stop offset="1" stop-color="black"/></radialGradient>
	  <rect width="10" height="10" fill="url(#tilted)"/>
	  <circle r="40" cx="50" cy="50" fill="url(#r)"/>
	  <rect width="10" height="10" fill="url(#missing) green"/>
	  <rect width="10" height="10" stroke="url(#base)"/>
	</svg>`)
	items := res.Drawing.Items
	if len(items) != 4 {
		t.Fatalf("%d items", len(items))
	}
	g := items[0].Shape.Fill.Gradient
	if g == nil || g.Radial || !g.BoundingBox || len(g.Stops) != 3 || g.X2 != 0 || g.Y2 != 1 || g.Stops[2].Offset != 0.5 {
		t.Fatalf("linear: %+v", g)
	}
	r := items[1].Shape.Fill.Gradient
	if r == nil || !r.Radial || r.BoundingBox || r.CX != 50 || r.R != 40 || r.FX != 40 || r.FY != 50 {
		t.Errorf("radial: %+v", r)
	}
	if f := items[2].Shape.Fill; f.Gradient != nil || f.Color != rgb(0, 128, 0) {
		t.Errorf("fallback: %+v", f)
	}
	if s := items[3].Shape.Stroke; s == nil || s.Gradient != nil {
		t.Errorf("a gradient stroke is drawn in one colour: %+v", s)
	}
}

func TestText(t *testing.T) {
	res := mustParse(t, `<svg xmlns="http://www.w3.org/2000/svg">
	  <text x="10" y="20" font-size="12" font-family="Georgia, serif" text-anchor="end">  Total:
	     <tspan font-weight="bold" fill="red">42</tspan> <tspan x="10" dy="15" font-style="italic">next  line</tspan></text>
	</svg>`)
	var runs []*vector.Text
	for _, it := range res.Drawing.Items {
		runs = append(runs, it.Text)
	}
	if len(runs) != 4 {
		t.Fatalf("%d runs: %+v", len(runs), runs)
	}
	if r := runs[0]; r.Text != "Total: " || r.X != 10 || r.Y != 20 || r.PenX || r.Size != 12 || r.Anchor != vector.AnchorEnd || r.Family != "Georgia, serif" {
		t.Errorf("first run %+v", r)
	}
	if r := runs[1]; r.Text != "42" || !r.PenX || !r.PenY || !r.Bold || r.Fill.Color != rgb(255, 0, 0) {
		t.Errorf("second run %+v", r)
	}
	if r := runs[3]; r.Text != "next line" || r.PenX || !r.PenY || r.X != 10 || r.DY != 15 || !r.Italic {
		t.Errorf("last run %+v", r)
	}
}

// A file cannot make the reader do unbounded work: too many elements or
// too deep is an error; <use> copies of copies, path commands and text
// stop at their bounds with a warning.
func TestHostileBounds(t *testing.T) {
	deep := strings.Repeat("<g>", MaxDepth+1) + strings.Repeat("</g>", MaxDepth+1)
	if _, err := Parse([]byte(`<svg>` + deep + `</svg>`)); err == nil || !strings.Contains(err.Error(), "deep") {
		t.Errorf("deep: %v", err)
	}
	many := strings.Repeat("<g/>", MaxElements)
	if _, err := Parse([]byte(`<svg>` + many + `</svg>`)); err == nil || !strings.Contains(err.Error(), "elements") {
		t.Errorf("many: %v", err)
	}
	// The billion laughs of <use>: each level uses the one below ten times.
	var b strings.Builder
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg"><defs><rect id="l0" width="1" height="1"/>`)
	for i := 1; i <= 9; i++ {
		b.WriteString(`<g id="l` + string(rune('0'+i)) + `">`)
		for j := 0; j < 10; j++ {
			b.WriteString(`<use href="#l` + string(rune('0'+i-1)) + `"/>`)
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`</defs><use href="#l9"/></svg>`)
	res := mustParse(t, b.String())
	if n := len(res.Drawing.Items); n > maxDrawn {
		t.Errorf("%d items drawn", n)
	}
	if !strings.Contains(strings.Join(res.Warnings, " "), "more than") {
		t.Errorf("no warning for the bound: %v", res.Warnings)
	}
	// A use that uses itself.
	res = mustParse(t, `<svg xmlns="http://www.w3.org/2000/svg"><g id="a"><use href="#a"/><rect width="1" height="1"/></g></svg>`)
	if len(res.Drawing.Items) > 20 {
		t.Errorf("self-reference drew %d items", len(res.Drawing.Items))
	}
	// Entities and DOCTYPEs are not expanded.
	if _, err := Parse([]byte(`<!DOCTYPE svg [<!ENTITY a "aaaa">]><svg>&a;</svg>`)); err == nil {
		t.Errorf("an entity was accepted")
	}
	for _, bad := range []string{"", "not xml", "<html/>", "<svg><g></svg>", `<?xml version="1.0" encoding="latin1"?><svg/>`} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
