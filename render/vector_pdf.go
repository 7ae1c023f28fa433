package render

import (
	"math"
	"strconv"
	"strings"

	"folio/render/internal/fpdf"
	"folio/render/vector"
)

// Vector drawings (render/vector: SVG images, and charts) are written as
// PDF path operators, with the text through the engine's one text path,
// so they stay sharp at any zoom and their text can be selected and
// searched. Each item is drawn inside q … Q with its own transform, so
// fpdf's idea of the graphics state (colours, line width) is never
// changed by them.

// vectorState is what a document keeps for its vector drawings.
type vectorState struct {
	drawings map[string]*vectorImage // parsed SVG sources, by source
	shadings map[string]string       // gradient shadings registered, by definition
}

func (p *pdfWriter) vectors() *vectorState {
	if p.vec == nil {
		p.vec = &vectorState{drawings: map[string]*vectorImage{}, shadings: map[string]string{}}
	}
	return p.vec
}

// Bytes of page content a vector drawing is charged, per path command and
// per item, against the render's memory budget.
const (
	vectorCommandBytes = 36
	vectorItemBytes    = 120
)

// drawVector draws d fitted into the box at (x, y) of w × h millimetres,
// clipped to it. family is the font family of its text when the drawing
// names none the engine has.
func (p *pdfWriter) drawVector(d *vector.Drawing, x, y, w, h float64, family string) {
	if w <= 0 || h <= 0 {
		return
	}
	k := 72 / 25.4
	// page maps the page's millimetres (y down) to PDF points (y up).
	page := vector.Matrix{k, 0, 0, -k, 0, p.pageH * k}
	box := d.Fit(w, h).Then(vector.Translate(x, y))
	var b strings.Builder
	b.WriteString("q ")
	writeNums(&b, x*k, (p.pageH-y-h)*k, w*k, h*k)
	b.WriteString("re W n")
	p.f.RawWriteStr(b.String())
	var penX, penY float64
	for _, it := range d.Items {
		if p.err != nil {
			break
		}
		switch {
		case it.Shape != nil:
			p.drawShape(it.Shape, it.Shape.Transform.Then(box).Then(page))
		case it.Text != nil:
			penX, penY = p.drawVectorText(it.Text, it.Text.Transform.Then(box), page, family, penX, penY)
		}
	}
	p.f.RawWriteStr("Q")
}

// writeNums writes numbers for the content stream, each followed by a space.
func writeNums(b *strings.Builder, vs ...float64) {
	for _, v := range vs {
		if math.Abs(v) < 1e-9 || math.IsNaN(v) || math.IsInf(v, 0) {
			v = 0
		}
		s := strconv.FormatFloat(v, 'f', 4, 64)
		if strings.Contains(s, ".") {
			s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		}
		if s == "-0" {
			s = "0"
		}
		b.WriteString(s)
		b.WriteByte(' ')
	}
}

// usable reports whether m maps anything to something visible: finite
// and not flattened, with values PDF readers take.
func usable(m vector.Matrix) bool {
	if !m.Finite() || math.Abs(m.Det()) < 1e-12 {
		return false
	}
	for _, v := range m {
		if math.Abs(v) > 1e7 {
			return false
		}
	}
	return true
}

// pathOps writes a path's operators.
func pathOps(b *strings.Builder, path *vector.Path) {
	i := 0
	for _, op := range path.Ops {
		switch op {
		case vector.MoveTo:
			writeNums(b, path.Pts[i], path.Pts[i+1])
			b.WriteString("m ")
			i += 2
		case vector.LineTo:
			writeNums(b, path.Pts[i], path.Pts[i+1])
			b.WriteString("l ")
			i += 2
		case vector.CubicTo:
			writeNums(b, path.Pts[i:i+6]...)
			b.WriteString("c ")
			i += 6
		case vector.Close:
			b.WriteString("h ")
		}
	}
}

// pathFinite reports whether every point of the path is a number a PDF
// reader takes.
func pathFinite(path *vector.Path) bool {
	for _, v := range path.Pts {
		if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e9 {
			return false
		}
	}
	return true
}

func colorOp(b *strings.Builder, c vector.Color, op string) {
	writeNums(b, float64(c.R)/255, float64(c.G)/255, float64(c.B)/255)
	b.WriteString(op)
	b.WriteByte(' ')
}

// alpha sets the opacity of what follows inside the current q … Q.
func (p *pdfWriter) alpha(b *strings.Builder, a float64) {
	if a >= 1 {
		return
	}
	p.f.RawWriteStr(b.String())
	b.Reset()
	p.f.SetAlpha(math.Max(0, math.Round(a*1000)/1000), "Normal")
}

// drawShape fills and strokes a shape whose coordinates m maps to PDF points.
func (p *pdfWriter) drawShape(sh *vector.Shape, m vector.Matrix) {
	if !usable(m) || !pathFinite(sh.Path) {
		return
	}
	p.charge(int64(sh.Path.Len())*vectorCommandBytes + vectorItemBytes)
	fill, stroke := sh.Fill, sh.Stroke
	if fill != nil && fill.Opacity <= 0 {
		fill = nil
	}
	if stroke != nil && stroke.Opacity <= 0 {
		stroke = nil
	}
	if fill == nil && stroke == nil {
		return
	}
	var b strings.Builder
	b.WriteString("q ")
	writeNums(&b, m[:]...)
	b.WriteString("cm ")
	if stroke != nil {
		writeNums(&b, stroke.Width)
		b.WriteString("w ")
		b.WriteString(strconv.Itoa(stroke.Cap) + " J " + strconv.Itoa(stroke.Join) + " j ")
		if stroke.Join == vector.JoinMiter && stroke.MiterLimit >= 1 {
			writeNums(&b, stroke.MiterLimit)
			b.WriteString("M ")
		}
		if len(stroke.Dash) > 0 {
			b.WriteString("[")
			writeNums(&b, stroke.Dash...)
			b.WriteString("] ")
			writeNums(&b, stroke.DashOffset)
			b.WriteString("d ")
		}
		colorOp(&b, stroke.Color, "RG")
	}
	fillOp, clipOp := "f", "W n"
	if sh.EvenOdd {
		fillOp, clipOp = "f*", "W* n"
	}
	together := fill != nil && stroke != nil && fill.Gradient == nil && fill.Opacity == stroke.Opacity
	switch {
	case together:
		colorOp(&b, fill.Color, "rg")
		p.alpha(&b, fill.Opacity)
		pathOps(&b, sh.Path)
		if sh.EvenOdd {
			b.WriteString("B*")
		} else {
			b.WriteString("B")
		}
	default:
		if fill != nil {
			b.WriteString("q ")
			p.alpha(&b, fill.Opacity)
			if name := p.shading(fill.Gradient, sh.Path); name != "" {
				pathOps(&b, sh.Path)
				b.WriteString(clipOp + " ")
				g := fill.Gradient
				gm := g.Transform
				if g.BoundingBox {
					x0, y0, x1, y1 := sh.Path.Bounds()
					gm = gm.Then(vector.Matrix{x1 - x0, 0, 0, y1 - y0, x0, y0})
				}
				if usable(gm) {
					writeNums(&b, gm[:]...)
					b.WriteString("cm /" + name + " sh ")
				}
			} else {
				colorOp(&b, fill.Color, "rg")
				pathOps(&b, sh.Path)
				b.WriteString(fillOp + " ")
			}
			b.WriteString("Q ")
		}
		if stroke != nil {
			p.alpha(&b, stroke.Opacity)
			pathOps(&b, sh.Path)
			b.WriteString("S")
		}
	}
	b.WriteString(" Q")
	p.f.RawWriteStr(b.String())
}

// shading registers a gradient's shading once per document and returns
// its name, or "" when it paints as one colour.
func (p *pdfWriter) shading(g *vector.Gradient, path *vector.Path) string {
	if g == nil || len(g.Stops) < 2 {
		return ""
	}
	stops := make([]fpdf.GradientStop, 0, len(g.Stops)+2)
	add := func(off float64, c vector.Color) {
		if n := len(stops); n > 0 && off <= stops[n-1].Offset {
			off = math.Min(1, stops[n-1].Offset+1e-4)
		}
		stops = append(stops, fpdf.GradientStop{Offset: off, R: int(c.R), G: int(c.G), B: int(c.B)})
	}
	if g.Stops[0].Offset > 0 {
		add(0, g.Stops[0].Color)
	}
	for _, s := range g.Stops {
		add(s.Offset, s.Color)
	}
	if last := g.Stops[len(g.Stops)-1]; stops[len(stops)-1].Offset < 1 {
		add(1, last.Color)
	}
	tp, coords := 2, []float64{g.X1, g.Y1, g.X2, g.Y2}
	if g.Radial {
		if g.R <= 0 {
			return ""
		}
		tp, coords = 3, []float64{g.FX, g.FY, g.CX, g.CY, g.R}
	}
	for _, v := range coords {
		if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e9 {
			return ""
		}
	}
	var key strings.Builder
	key.WriteString(strconv.Itoa(tp))
	writeNums(&key, coords...)
	for _, s := range stops {
		writeNums(&key, s.Offset, float64(s.R), float64(s.G), float64(s.B))
	}
	st := p.vectors()
	if name, ok := st.shadings[key.String()]; ok {
		return name
	}
	name := p.f.Shading(tp, coords, stops)
	st.shadings[key.String()] = name
	return name
}

// drawVectorText draws a run of text whose coordinates m maps to the
// page's millimetres; page maps those to PDF points. It returns where the
// next run starts, in the text's coordinates.
func (p *pdfWriter) drawVectorText(t *vector.Text, m, page vector.Matrix, family string, penX, penY float64) (float64, float64) {
	x, y := t.X, t.Y
	if t.PenX {
		x = penX
	}
	if t.PenY {
		y = penY
	}
	x, y = x+t.DX, y+t.DY
	if t.Size <= 0 || t.Fill == nil || !usable(m) || math.IsNaN(x+y) || math.IsInf(x+y, 0) || math.Abs(x)+math.Abs(y) > 1e9 {
		return x, y
	}
	// Inside the transform, one unit of the text's coordinates is drawn
	// as a millimetre: fpdf writes its points through page, so the
	// transform is page⁻¹ · m · page.
	inv := vector.Matrix{1 / page[0], 0, 0, 1 / page[3], 0, -page[5] / page[3]}
	cm := inv.Then(m).Then(page)
	if !usable(cm) {
		return x, y
	}
	st := textStyle{size: t.Size / pointInMM, bold: t.Bold, italic: t.Italic, align: "L", alignSet: true,
		color: [3]int{int(t.Fill.Color.R), int(t.Fill.Color.G), int(t.Fill.Color.B)}, family: p.svgFamily(t.Family, family)}
	if st.size > 2000 || st.size < 0.01 {
		return x, y
	}
	line := p.split(pdfText(strings.ReplaceAll(t.Text, "\n", " ")), st, 0)[0]
	lw := lineWidth(line, st)
	advance := lw
	if strings.HasSuffix(t.Text, " ") {
		// A line's width leaves out its trailing space; the next run
		// starts after it.
		advance += lineWidth(p.split("a a", st, 0)[0], st) - lineWidth(p.split("aa", st, 0)[0], st)
	}
	switch t.Anchor {
	case vector.AnchorMiddle:
		x -= lw / 2
	case vector.AnchorEnd:
		x -= lw
	}
	var b strings.Builder
	b.WriteString("q ")
	writeNums(&b, cm[:]...)
	b.WriteString("cm ")
	colorOp(&b, t.Fill.Color, "rg")
	p.alpha(&b, t.Fill.Opacity)
	p.f.RawWriteStr(b.String())
	r, g, bl := p.f.GetTextColor()
	// drawText puts the baseline this far below the top it is given.
	top := y - (lineHeight(st)/2 + 0.3*st.size*pointInMM)
	// "{nb}" in a drawing is text, not the page count drawn afterwards
	// (which would land outside this transform).
	pages := p.pages
	p.pages = nil
	p.drawText(st, line, x, top, 0, "L")
	p.pages = pages
	p.f.SetTextColor(r, g, bl)
	p.f.RawWriteStr("Q")
	return x + advance, y
}

// svgFamily picks the first family of a CSS font-family list the engine
// has; otherwise the component's family (generic names such as
// sans-serif land there too).
func (p *pdfWriter) svgFamily(list, fallback string) string {
	for _, name := range strings.Split(list, ",") {
		name = strings.Trim(strings.TrimSpace(name), `"'`)
		if name == "" {
			continue
		}
		if _, ok := p.fonts.Family(name); ok {
			return name
		}
	}
	return fallback
}
