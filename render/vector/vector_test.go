package vector

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// Then applies the receiver first: a scale then a move is not a move
// then a scale.
func TestMatrixThen(t *testing.T) {
	m := Scale(2, 2).Then(Translate(10, 0))
	if x, y := m.Apply(1, 1); !near(x, 12) || !near(y, 2) {
		t.Errorf("scale then translate: (%g, %g)", x, y)
	}
	m = Translate(10, 0).Then(Scale(2, 2))
	if x, y := m.Apply(1, 1); !near(x, 22) || !near(y, 2) {
		t.Errorf("translate then scale: (%g, %g)", x, y)
	}
	if x, y := Rotate(90).Apply(1, 0); !near(x, 0) || !near(y, 1) {
		t.Errorf("rotate: (%g, %g)", x, y)
	}
	if !near(Scale(2, 3).Det(), 6) || (Matrix{1, 0, 0, math.NaN(), 0, 0}).Finite() {
		t.Error("Det or Finite")
	}
}

// Fit places a view box in a box by its aspect: meet centres it, slice
// covers the box, none stretches.
func TestFit(t *testing.T) {
	d := &Drawing{ViewBox: [4]float64{10, 10, 100, 50}, Aspect: Aspect{AlignX: 1, AlignY: 1}}
	m := d.Fit(100, 100) // scale 1, centred vertically
	if x, y := m.Apply(10, 10); !near(x, 0) || !near(y, 25) {
		t.Errorf("meet: (%g, %g)", x, y)
	}
	d.Aspect = Aspect{AlignX: 2, AlignY: 0, Slice: true}
	m = d.Fit(100, 100) // scale 2, the right end aligned
	if x, y := m.Apply(110, 10); !near(x, 100) || !near(y, 0) {
		t.Errorf("slice: (%g, %g)", x, y)
	}
	d.Aspect = Aspect{None: true}
	if m := d.Fit(200, 200); !near(m[0], 2) || !near(m[3], 4) {
		t.Errorf("none: %v", m)
	}
}

// Shapes close and bound as expected; an arc between the ends of a
// diameter passes through the far side of its circle.
func TestPathShapes(t *testing.T) {
	var p Path
	p.RoundedRect(0, 0, 10, 4, 3, 3) // radii clamp to half the height
	if x0, y0, x1, y1 := p.Bounds(); x0 != 0 || y0 != 0 || x1 != 10 || y1 != 4 {
		t.Errorf("rounded rect bounds %g %g %g %g", x0, y0, x1, y1)
	}
	var e Path
	e.Ellipse(5, 5, 5, 2)
	if e.Ops[len(e.Ops)-1] != Close || e.Len() != 6 {
		t.Errorf("ellipse ops %v", e.Ops)
	}
	var a Path
	a.MoveTo(0, 0)
	a.ArcTo(5, 5, 0, false, false, 10, 0) // counter-clockwise on a y-down page: through (5, 5)
	if x, y := a.Current(); !near(x, 10) || !near(y, 0) {
		t.Errorf("arc ends at (%g, %g)", x, y)
	}
	_, _, _, y1 := a.Bounds()
	if y1 < 5 || y1 > 7 {
		t.Errorf("arc bulges to y=%g, want about 5 (controls a little beyond)", y1)
	}
	var q Path
	q.MoveTo(0, 0)
	q.QuadTo(5, 10, 10, 0)
	if q.Pts[3] != q.Pts[5] || !near(q.Pts[3], 20.0/3) {
		t.Errorf("quad as cubic: %v", q.Pts)
	}
}
