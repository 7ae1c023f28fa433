// Package vector describes drawings made of paths and text, independent of
// any output format: the SVG reader (render/svg) produces them and the PDF
// writer draws them as vector operators, so charts and other graphics can
// build them too. A Drawing has its own coordinate space (its view box)
// that the writer fits into a box on the page.
package vector

import "math"

// Matrix is an affine transform [a b c d e f]: a point (x, y) goes to
// (a·x + c·y + e, b·x + d·y + f), as in SVG and PDF.
type Matrix [6]float64

// Identity is the transform that moves nothing.
var Identity = Matrix{1, 0, 0, 1, 0, 0}

// Translate moves by (tx, ty).
func Translate(tx, ty float64) Matrix { return Matrix{1, 0, 0, 1, tx, ty} }

// Scale scales by sx and sy about the origin.
func Scale(sx, sy float64) Matrix { return Matrix{sx, 0, 0, sy, 0, 0} }

// Rotate turns by deg degrees (clockwise on a y-down page) about the origin.
func Rotate(deg float64) Matrix {
	s, c := math.Sincos(deg * math.Pi / 180)
	return Matrix{c, s, -s, c, 0, 0}
}

// SkewX slants along x by deg degrees.
func SkewX(deg float64) Matrix { return Matrix{1, 0, math.Tan(deg * math.Pi / 180), 1, 0, 0} }

// SkewY slants along y by deg degrees.
func SkewY(deg float64) Matrix { return Matrix{1, math.Tan(deg * math.Pi / 180), 0, 1, 0, 0} }

// Then returns the transform that applies m, then n.
func (m Matrix) Then(n Matrix) Matrix {
	return Matrix{
		m[0]*n[0] + m[1]*n[2],
		m[0]*n[1] + m[1]*n[3],
		m[2]*n[0] + m[3]*n[2],
		m[2]*n[1] + m[3]*n[3],
		m[4]*n[0] + m[5]*n[2] + n[4],
		m[4]*n[1] + m[5]*n[3] + n[5],
	}
}

// Apply transforms the point (x, y).
func (m Matrix) Apply(x, y float64) (float64, float64) {
	return m[0]*x + m[2]*y + m[4], m[1]*x + m[3]*y + m[5]
}

// Det is the determinant: 0 when the transform flattens everything.
func (m Matrix) Det() float64 { return m[0]*m[3] - m[1]*m[2] }

// Finite reports whether every entry is a finite number.
func (m Matrix) Finite() bool {
	for _, v := range m {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// Op is one path command.
type Op byte

// Path commands; each takes its points from Path.Pts in order.
const (
	MoveTo  Op = iota // 1 point
	LineTo            // 1 point
	CubicTo           // 3 points: two controls, then the end
	Close             // no point
)

// Path is a sequence of subpaths in the drawing's coordinates.
type Path struct {
	Ops []Op
	Pts []float64 // x, y pairs
	// cur and start are the current point and the start of the subpath.
	curX, curY, startX, startY float64
}

// Len is the number of commands.
func (p *Path) Len() int { return len(p.Ops) }

// Current is the current point.
func (p *Path) Current() (float64, float64) { return p.curX, p.curY }

// Empty reports whether the path has no command.
func (p *Path) Empty() bool { return len(p.Ops) == 0 }

// MoveTo starts a subpath at (x, y).
func (p *Path) MoveTo(x, y float64) {
	p.Ops = append(p.Ops, MoveTo)
	p.Pts = append(p.Pts, x, y)
	p.curX, p.curY, p.startX, p.startY = x, y, x, y
}

// LineTo draws a line to (x, y).
func (p *Path) LineTo(x, y float64) {
	p.start()
	p.Ops = append(p.Ops, LineTo)
	p.Pts = append(p.Pts, x, y)
	p.curX, p.curY = x, y
}

// CubicTo draws a cubic Bézier curve to (x, y).
func (p *Path) CubicTo(x1, y1, x2, y2, x, y float64) {
	p.start()
	p.Ops = append(p.Ops, CubicTo)
	p.Pts = append(p.Pts, x1, y1, x2, y2, x, y)
	p.curX, p.curY = x, y
}

// QuadTo draws a quadratic Bézier curve to (x, y), as the cubic it equals.
func (p *Path) QuadTo(cx, cy, x, y float64) {
	x0, y0 := p.curX, p.curY
	p.CubicTo(x0+2.0/3*(cx-x0), y0+2.0/3*(cy-y0), x+2.0/3*(cx-x), y+2.0/3*(cy-y), x, y)
}

// Close closes the subpath; the current point returns to its start.
func (p *Path) Close() {
	if len(p.Ops) == 0 || p.Ops[len(p.Ops)-1] == Close {
		return
	}
	p.Ops = append(p.Ops, Close)
	p.curX, p.curY = p.startX, p.startY
}

// start begins a subpath at the current point when none is open.
func (p *Path) start() {
	if len(p.Ops) == 0 {
		p.MoveTo(p.curX, p.curY)
	} else if p.Ops[len(p.Ops)-1] == Close {
		p.Ops = append(p.Ops, MoveTo)
		p.Pts = append(p.Pts, p.curX, p.curY)
	}
}

// Rect adds a closed rectangle.
func (p *Path) Rect(x, y, w, h float64) {
	p.MoveTo(x, y)
	p.LineTo(x+w, y)
	p.LineTo(x+w, y+h)
	p.LineTo(x, y+h)
	p.Close()
}

// kappa places the controls of a cubic that draws a quarter of a circle.
const kappa = 0.5522847498307936

// RoundedRect adds a rectangle whose corners are quarter ellipses of radii rx, ry.
func (p *Path) RoundedRect(x, y, w, h, rx, ry float64) {
	if rx <= 0 || ry <= 0 {
		p.Rect(x, y, w, h)
		return
	}
	rx, ry = min(rx, w/2), min(ry, h/2)
	kx, ky := rx*kappa, ry*kappa
	p.MoveTo(x+rx, y)
	p.LineTo(x+w-rx, y)
	p.CubicTo(x+w-rx+kx, y, x+w, y+ry-ky, x+w, y+ry)
	p.LineTo(x+w, y+h-ry)
	p.CubicTo(x+w, y+h-ry+ky, x+w-rx+kx, y+h, x+w-rx, y+h)
	p.LineTo(x+rx, y+h)
	p.CubicTo(x+rx-kx, y+h, x, y+h-ry+ky, x, y+h-ry)
	p.LineTo(x, y+ry)
	p.CubicTo(x, y+ry-ky, x+rx-kx, y, x+rx, y)
	p.Close()
}

// Ellipse adds a closed ellipse centred on (cx, cy).
func (p *Path) Ellipse(cx, cy, rx, ry float64) {
	kx, ky := rx*kappa, ry*kappa
	p.MoveTo(cx+rx, cy)
	p.CubicTo(cx+rx, cy+ky, cx+kx, cy+ry, cx, cy+ry)
	p.CubicTo(cx-kx, cy+ry, cx-rx, cy+ky, cx-rx, cy)
	p.CubicTo(cx-rx, cy-ky, cx-kx, cy-ry, cx, cy-ry)
	p.CubicTo(cx+kx, cy-ry, cx+rx, cy-ky, cx+rx, cy)
	p.Close()
}

// ArcTo draws an elliptical arc to (x, y) the way SVG's "A" command does:
// radii rx, ry, the ellipse turned by rot degrees, the large or small
// arc, clockwise (sweep) or not. It is drawn as cubic curves.
func (p *Path) ArcTo(rx, ry, rot float64, large, sweep bool, x, y float64) {
	x0, y0 := p.curX, p.curY
	if x0 == x && y0 == y {
		return
	}
	rx, ry = math.Abs(rx), math.Abs(ry)
	if rx == 0 || ry == 0 {
		p.LineTo(x, y)
		return
	}
	// SVG 1.1 appendix F.6.5: from endpoints to centre.
	sin, cos := math.Sincos(rot * math.Pi / 180)
	dx, dy := (x0-x)/2, (y0-y)/2
	x1 := cos*dx + sin*dy
	y1 := -sin*dx + cos*dy
	if l := x1*x1/(rx*rx) + y1*y1/(ry*ry); l > 1 {
		s := math.Sqrt(l)
		rx, ry = rx*s, ry*s
	}
	num := rx*rx*ry*ry - rx*rx*y1*y1 - ry*ry*x1*x1
	den := rx*rx*y1*y1 + ry*ry*x1*x1
	co := 0.0
	if den > 0 && num > 0 {
		co = math.Sqrt(num / den)
	}
	if large == sweep {
		co = -co
	}
	cx1, cy1 := co*rx*y1/ry, -co*ry*x1/rx
	cx := cos*cx1 - sin*cy1 + (x0+x)/2
	cy := sin*cx1 + cos*cy1 + (y0+y)/2
	angle := func(ux, uy, vx, vy float64) float64 {
		a := math.Atan2(ux*vy-uy*vx, ux*vx+uy*vy)
		return a
	}
	t1 := angle(1, 0, (x1-cx1)/rx, (y1-cy1)/ry)
	dt := angle((x1-cx1)/rx, (y1-cy1)/ry, (-x1-cx1)/rx, (-y1-cy1)/ry)
	if !sweep && dt > 0 {
		dt -= 2 * math.Pi
	} else if sweep && dt < 0 {
		dt += 2 * math.Pi
	}
	if math.IsNaN(t1) || math.IsNaN(dt) || math.IsNaN(cx) || math.IsNaN(cy) {
		p.LineTo(x, y)
		return
	}
	n := int(math.Ceil(math.Abs(dt) / (math.Pi / 2)))
	n = max(1, min(n, 4))
	step := dt / float64(n)
	k := 4.0 / 3 * math.Tan(step/4)
	point := func(t float64) (float64, float64) {
		st, ct := math.Sincos(t)
		ex, ey := rx*ct, ry*st
		return cos*ex - sin*ey + cx, sin*ex + cos*ey + cy
	}
	deriv := func(t float64) (float64, float64) {
		st, ct := math.Sincos(t)
		ex, ey := -rx*st, ry*ct
		return cos*ex - sin*ey, sin*ex + cos*ey
	}
	t := t1
	for i := 0; i < n; i++ {
		ax, ay := point(t)
		adx, ady := deriv(t)
		bx, by := point(t + step)
		bdx, bdy := deriv(t + step)
		if i == n-1 {
			bx, by = x, y
		}
		p.CubicTo(ax+k*adx, ay+k*ady, bx-k*bdx, by-k*bdy, bx, by)
		t += step
	}
}

// Bounds is the box holding every point of the path, controls included
// (so a curve's box may be a little larger than the curve).
func (p *Path) Bounds() (x0, y0, x1, y1 float64) {
	if len(p.Pts) < 2 {
		return 0, 0, 0, 0
	}
	x0, y0, x1, y1 = p.Pts[0], p.Pts[1], p.Pts[0], p.Pts[1]
	for i := 2; i+1 < len(p.Pts); i += 2 {
		x0, x1 = min(x0, p.Pts[i]), max(x1, p.Pts[i])
		y0, y1 = min(y0, p.Pts[i+1]), max(y1, p.Pts[i+1])
	}
	return
}

// Color is an sRGB colour.
type Color struct{ R, G, B uint8 }

// Stop is one colour of a gradient at Offset (0 to 1).
type Stop struct {
	Offset  float64
	Color   Color
	Opacity float64
}

// Gradient is a linear gradient from (X1, Y1) to (X2, Y2), or a radial
// one from the focus (FX, FY) to the circle at (CX, CY) of radius R, in
// the coordinates of the shape it paints (or of its bounding box, as
// fractions, when BoundingBox is set), transformed by Transform. Colours
// before the first stop and after the last are those stops' colours.
type Gradient struct {
	Radial         bool
	X1, Y1, X2, Y2 float64
	CX, CY, R      float64
	FX, FY         float64
	Stops          []Stop
	Transform      Matrix
	BoundingBox    bool
}

// Paint fills or strokes with a colour, or a gradient when Gradient is set.
type Paint struct {
	Color    Color
	Gradient *Gradient
	Opacity  float64 // 0 to 1
}

// Line caps and joins.
const (
	CapButt = iota
	CapRound
	CapSquare
)

const (
	JoinMiter = iota
	JoinRound
	JoinBevel
)

// Stroke outlines a path.
type Stroke struct {
	Paint
	Width      float64
	Cap, Join  int
	MiterLimit float64
	Dash       []float64 // lengths of dashes and gaps; none: solid
	DashOffset float64
}

// Shape is a path filled and/or stroked.
type Shape struct {
	Path      *Path
	Fill      *Paint // nil: not filled
	EvenOdd   bool   // the even-odd fill rule, else non-zero
	Stroke    *Stroke
	Transform Matrix // from the path's coordinates to the drawing's
}

// Text anchors.
const (
	AnchorStart = iota
	AnchorMiddle
	AnchorEnd
)

// Text is a run of text on one line; (X, Y) is where its baseline starts
// (or, with the anchor, is centred or ends). PenX and PenY place it
// after the text drawn before it instead (x), or on that text's baseline
// (y); DX and DY then shift it.
type Text struct {
	X, Y       float64
	PenX, PenY bool
	DX, DY     float64
	Text       string
	Size       float64 // the font size in the drawing's units
	Family     string  // font families to try, as CSS writes them ("Arial, sans-serif")
	Bold       bool
	Italic     bool
	Anchor     int
	Fill       *Paint
	// Transform goes from the text's coordinates to the drawing's.
	Transform Matrix
}

// Item is one thing drawn: a shape or a text.
type Item struct {
	Shape *Shape
	Text  *Text
}

// Aspect says how a view box fits a box of other proportions, like SVG's
// preserveAspectRatio: None stretches it; otherwise it keeps its
// proportions, aligned by AlignX and AlignY (0 min, 1 mid, 2 max), either
// whole inside the box (meet) or covering it (Slice).
type Aspect struct {
	None           bool
	AlignX, AlignY int
	Slice          bool
}

// Drawing is a picture: items drawn in order inside a view box, which is
// fitted into the box on the page and clips what falls outside it.
type Drawing struct {
	// Width and Height are its natural size in CSS pixels (96 a inch).
	Width, Height float64
	// ViewBox is the region of the drawing's coordinates shown: x, y, width, height.
	ViewBox [4]float64
	Aspect  Aspect
	Items   []Item
}

// Fit returns the transform from the drawing's coordinates to a box of
// w × h at the origin, following its Aspect.
func (d *Drawing) Fit(w, h float64) Matrix {
	vx, vy, vw, vh := d.ViewBox[0], d.ViewBox[1], d.ViewBox[2], d.ViewBox[3]
	if vw <= 0 || vh <= 0 {
		return Identity
	}
	sx, sy := w/vw, h/vh
	if !d.Aspect.None {
		s := min(sx, sy)
		if d.Aspect.Slice {
			s = max(sx, sy)
		}
		sx, sy = s, s
	}
	tx := -vx * sx
	ty := -vy * sy
	tx += (w - vw*sx) * float64(d.Aspect.AlignX) / 2
	ty += (h - vh*sy) * float64(d.Aspect.AlignY) / 2
	return Matrix{sx, 0, 0, sy, tx, ty}
}
