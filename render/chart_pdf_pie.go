package render

import (
	"math"
	"strconv"

	"folio/render/text"
)

// pie draws a pie or a donut of the first series, slices clockwise from
// twelve o'clock, with their shares written on the slices that have room.
func (cp *chartPainter) pie(a rect) {
	e, d, f := cp.e, cp.d, cp.p.f
	if len(d.series) == 0 {
		return
	}
	values := d.series[0].values
	total := 0.0
	for _, v := range values {
		if v > 0 {
			total += v
		}
	}
	if total <= 0 {
		cp.empty(a)
		return
	}
	r := min(a.w, a.h)/2 - 0.5
	cx, cy := a.x+a.w/2, a.y+a.h/2
	inner := 0.0
	if e.kind == chartDonut {
		inner = r * 0.58
	}
	st := cp.st
	lh := lineHeight(st)
	angle := 90.0 // degrees, counter-clockwise from three o'clock
	type sliceLabel struct {
		line  text.Line
		x, y  float64
		color [3]int
	}
	var labels []sliceLabel
	for i, v := range values {
		if !(v > 0) {
			continue
		}
		sweep := v / total * 360
		col := e.colorOf(i)
		f.SetFillColor(col[0], col[1], col[2])
		path := cp.newPath()
		path.arc(cx, cy, r, angle, angle-sweep, true)
		if inner > 0 {
			path.arc(cx, cy, inner, angle-sweep, angle, false)
		} else if sweep < 360 {
			path.to(false, cx, cy)
		}
		cp.paint(path, "h f")
		if v/total >= minSliceLabel || e.showValues && sweep >= 3 {
			mid := (angle - sweep/2) * math.Pi / 180
			lr := (r + inner) / 2
			switch {
			case inner == 0 && sweep > 359.9:
				lr = 0 // a whole pie: the label in its middle
			case inner == 0:
				lr = r * 0.66
			}
			s := formatShare(v/total, cp.p.t.fmt)
			if e.showValues {
				s = valueLabel(v, e.yAxis, cp.p.t.fmt)
			}
			line := cp.text(s, st)
			// Only where the slice is wide and deep enough at that radius.
			deep := r-inner >= lh*1.1 && r >= lh*2.5
			if arc := sweep * math.Pi / 180 * lr; deep && (arc > lineWidth(line, st)*1.15 || sweep > 300) {
				labels = append(labels, sliceLabel{line, cx + lr*math.Cos(mid), cy - lr*math.Sin(mid), contrastText(col)})
			}
		}
		angle -= sweep
	}
	// White edges between the slices.
	if len(values) > 1 {
		f.SetDrawColor(255, 255, 255)
		f.SetLineWidth(0.4)
		angle = 90
		for _, v := range values {
			if !(v > 0) || v == total {
				continue
			}
			rad := angle * math.Pi / 180
			f.Line(cx+inner*math.Cos(rad), cy-inner*math.Sin(rad), cx+r*math.Cos(rad), cy-r*math.Sin(rad))
			angle -= v / total * 360
		}
	}
	for _, l := range labels {
		lst := st
		lst.color = l.color
		lst.bold = true
		cp.label(l.line, lst, l.x, l.y-lh/2, "C")
	}
	if inner > lh {
		// The total in the hole.
		tst := st
		tst.bold, tst.size, tst.color = true, st.size+2, [3]int{0x22, 0x22, 0x22}
		line := cp.fit(valueLabel(total, e.yAxis, cp.p.t.fmt), tst, inner*1.7)
		cp.label(line, tst, cx, cy-lineHeight(tst)/2, "C")
	}
}

// formatShare writes a share as a percentage in the template's locale.
func formatShare(x float64, f *formatting) string {
	d := 0
	if x < 0.1 && math.Round(x*100) != x*100 {
		d = 1
	}
	if !f.loc.IsZero() {
		return f.loc.Percent(x, d)
	}
	s, _ := formatPercent(defaultFormatting, []any{x, d})
	return s.(string)
}

// contrastText is white or near-black, whichever reads better on c.
func contrastText(c [3]int) [3]int {
	if 0.299*float64(c[0])+0.587*float64(c[1])+0.114*float64(c[2]) > 150 {
		return [3]int{0x22, 0x22, 0x22}
	}
	return [3]int{255, 255, 255}
}

// chartPath builds a PDF path in page millimetres.
type chartPath struct {
	b    []byte
	k, h float64
	ops  int
}

func (cp *chartPainter) newPath() *chartPath {
	return &chartPath{k: cp.p.f.GetConversionRatio(), h: cp.p.pageH}
}

func (c *chartPath) pt(x, y float64) {
	c.b = strconv.AppendFloat(c.b, x*c.k, 'f', 2, 64)
	c.b = append(c.b, ' ')
	c.b = strconv.AppendFloat(c.b, (c.h-y)*c.k, 'f', 2, 64)
	c.b = append(c.b, ' ')
}

// to moves to (x, y) when move is set, else draws a line to it.
func (c *chartPath) to(move bool, x, y float64) {
	c.pt(x, y)
	if move {
		c.b = append(c.b, "m "...)
	} else {
		c.b = append(c.b, "l "...)
	}
	c.ops++
}

// arc continues the path along a circle around (cx, cy) from angle a0 to
// a1 (degrees, counter-clockwise from three o'clock), in Bézier pieces of
// at most 90 degrees; move starts the path at the arc's start.
func (c *chartPath) arc(cx, cy, r, a0, a1 float64, move bool) {
	at := func(a float64) (float64, float64) {
		rad := a * math.Pi / 180
		return cx + r*math.Cos(rad), cy - r*math.Sin(rad)
	}
	x, y := at(a0)
	c.to(move, x, y)
	n := max(int(math.Ceil(math.Abs(a1-a0)/90)), 1)
	step := (a1 - a0) / float64(n)
	k := 4.0 / 3 * math.Tan(step*math.Pi/180/4)
	for i := 0; i < n; i++ {
		s, e := a0+float64(i)*step, a0+float64(i+1)*step
		sr, er := s*math.Pi/180, e*math.Pi/180
		x0, y0 := at(s)
		x3, y3 := at(e)
		// Tangents in page coordinates (y grows downwards).
		c.pt(x0-k*r*math.Sin(sr), y0-k*r*math.Cos(sr))
		c.pt(x3+k*r*math.Sin(er), y3+k*r*math.Cos(er))
		c.pt(x3, y3)
		c.b = append(c.b, "c "...)
		c.ops++
	}
}

// paint writes the path with a painting operator ("S", "f", "h f").
func (cp *chartPainter) paint(c *chartPath, op string) {
	if c.ops == 0 {
		return
	}
	cp.p.charge(int64(len(c.b)))
	cp.p.f.RawWriteStr(string(c.b) + op)
}
