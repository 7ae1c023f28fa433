package render

import (
	"strings"

	"folio/render/text"
)

// Chart geometry in millimetres.
const (
	chartGap      = 1.5  // between a label and what it labels
	chartSwatch   = 2.6  // a legend entry's colour square
	chartLegendSp = 5    // between legend entries in a row
	chartMarkerR  = 0.75 // a line's point markers
	chartDotR     = 0.9  // a scatter chart's points
	chartGridW    = 0.15
	chartAxisW    = 0.25
	chartLineW    = 0.55
	maxMarkers    = 40 // points a line may have and still get markers
	minSliceLabel = 0.04
)

var (
	chartGridColor = [3]int{0xE3, 0xE3, 0xE3}
	chartAxisColor = [3]int{0x88, 0x88, 0x88}
	chartMuted     = [3]int{0x66, 0x66, 0x66}
)

// layoutChart evaluates a chart and hands it to s as one box.
func (p *pdfWriter) layoutChart(c *component, e *chartElement, env map[string]any, w float64, s sink) error {
	d, err := p.evalChart(c, e, env)
	if err != nil {
		return err
	}
	cw := w
	if e.width > 0 {
		cw = min(e.width, w)
	}
	ch := e.height
	if ch == 0 {
		ch = min(defaultChartH, max(cw*0.6, minChartSide))
	}
	ch = min(ch, p.bodyHeight())
	off := place(e.align, w, cw)
	p.charge(int64(d.points())*rectOpBytes + 4*textOpBytes)
	return s.add(&box{w: w, h: ch, after: blockAfter, draw: func(x, y float64) {
		lw := p.f.GetLineWidth()
		dr, dg, db := p.f.GetDrawColor()
		(&chartPainter{p: p, e: e, d: d}).draw(x+off, y, cw, ch)
		p.f.SetLineWidth(lw)
		p.f.SetDrawColor(dr, dg, db)
		p.f.SetLineCapStyle("butt")
		p.f.SetLineJoinStyle("miter")
	}})
}

// chartPainter draws one chart.
type chartPainter struct {
	p  *pdfWriter
	e  *chartElement
	d  *chartData
	st textStyle // labels
}

// rect is a box on the page.
type rect struct{ x, y, w, h float64 }

func (cp *chartPainter) draw(x, y, w, h float64) {
	e, d := cp.e, cp.d
	cp.st = e.style
	area := rect{x, y, w, h}
	if d.title != "" {
		tst := cp.st
		tst.bold, tst.size, tst.color = true, cp.st.size+3, [3]int{0x22, 0x22, 0x22}
		line := cp.fit(d.title, tst, w)
		cp.label(line, tst, x+w/2, y, "C")
		area.y += lineHeight(tst) + chartGap
		area.h -= lineHeight(tst) + chartGap
	}
	if d.isEmpty() {
		cp.empty(area)
		return
	}
	area = cp.legend(area)
	if area.w < 5 || area.h < 5 {
		return
	}
	switch {
	case e.pie():
		cp.pie(area)
	case e.kind == chartBar && e.horizontal:
		cp.horizontalBars(area)
	default:
		cp.cartesian(area)
	}
}

// empty draws the frame of a chart without data and its note.
func (cp *chartPainter) empty(a rect) {
	f := cp.p.f
	f.SetDrawColor(chartGridColor[0], chartGridColor[1], chartGridColor[2])
	f.SetLineWidth(chartAxisW)
	f.Rect(a.x, a.y, a.w, a.h, "D")
	st := cp.st
	st.italic, st.color = true, chartMuted
	cp.label(cp.fit(cp.d.empty, st, a.w-4), st, a.x+a.w/2, a.y+a.h/2-lineHeight(st)/2, "C")
}

// text shapes one line of text through the engine's text path.
func (cp *chartPainter) text(s string, st textStyle) text.Line {
	return cp.p.split(pdfText(strings.ReplaceAll(s, "\n", " ")), st, 0)[0]
}

// fit shapes s and shortens it with an ellipsis to fit width.
func (cp *chartPainter) fit(s string, st textStyle, width float64) text.Line {
	line := cp.text(s, st)
	if lineWidth(line, st) <= width {
		return line
	}
	rs := []rune(s)
	lo, hi := 0, len(rs)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if lineWidth(cp.text(string(rs[:mid])+"…", st), st) <= width {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return cp.text(strings.TrimSpace(string(rs[:lo]))+"…", st)
}

// label draws a line whose top is y, its left edge, centre or right edge
// (anchor "L", "C", "R") at x.
func (cp *chartPainter) label(line text.Line, st textStyle, x, y float64, anchor string) {
	lw := lineWidth(line, st)
	switch anchor {
	case "C":
		x -= lw / 2
	case "R":
		x -= lw
	}
	st.alignSet = true
	cp.p.drawText(st, line, x, y, lw, "L")
}

// rotated draws a label turned by angle degrees (counter-clockwise) around
// (x, y), which is the label's right end at mid-height.
func (cp *chartPainter) rotated(line text.Line, st textStyle, x, y, angle float64, anchor string) {
	f := cp.p.f
	f.TransformBegin()
	f.TransformRotate(angle, x, y)
	cp.label(line, st, x, y-lineHeight(st)/2, anchor)
	f.TransformEnd()
}

// legend draws the legend and returns the area left for the plot.
func (cp *chartPainter) legend(a rect) rect {
	e, d := cp.e, cp.d
	type entry struct {
		label string
		color [3]int
	}
	var entries []entry
	if e.pie() {
		for i, c := range d.categories {
			if len(d.series) > 0 && i < len(d.series[0].values) && d.series[0].values[i] > 0 {
				entries = append(entries, entry{c, e.colorOf(i)})
			}
		}
	} else {
		for _, s := range d.series {
			entries = append(entries, entry{s.label, s.color})
		}
	}
	pos := e.legend
	if pos == "" {
		switch {
		case e.pie():
			pos = "right"
		case len(d.series) > 1:
			pos = "bottom"
		default:
			pos = "none"
		}
	}
	if pos == "none" || len(entries) == 0 {
		return a
	}
	if e.legend == "" && pos == "right" {
		// A pie's legend goes below it when its labels would not fit beside.
		for _, en := range entries[:min(len(entries), 50)] {
			if lineWidth(cp.text(en.label, cp.st), cp.st)+chartSwatch+chartGap > min(a.w*0.38, 55.0) {
				pos = "bottom"
				break
			}
		}
	}
	st := cp.st
	lh := lineHeight(st)
	row := lh * 1.15
	swatch := func(c [3]int, x, y float64) {
		cp.p.f.SetFillColor(c[0], c[1], c[2])
		cp.p.f.Rect(x, y+(lh-chartSwatch)/2, chartSwatch, chartSwatch, "F")
	}
	if pos == "right" {
		colW := min(a.w*0.38, 55.0)
		n := min(len(entries), max(int(a.h/row), 1))
		lines := make([]text.Line, n)
		widest := 0.0
		for i, en := range entries[:n] {
			lines[i] = cp.fit(en.label, st, colW-chartSwatch-chartGap)
			widest = max(widest, lineWidth(lines[i], st))
		}
		colW = min(colW, widest+chartSwatch+chartGap)
		x := a.x + a.w - colW
		if e.pie() {
			// The pie and its legend side by side, centred together.
			side := max(min(a.h, a.w-colW-6), 0)
			start := a.x + (a.w-side-6-colW)/2
			x = start + side + 6
			a.x, a.w = start, side+6
		}
		y := a.y + (a.h-float64(n)*row)/2
		for i := 0; i < n; i++ {
			swatch(entries[i].color, x, y)
			cp.label(lines[i], st, x+chartSwatch+chartGap, y, "L")
			y += row
		}
		a.w -= colW + 4
		return a
	}
	// Rows of entries, centred, wrapped to the width.
	type placed struct {
		line text.Line
		c    [3]int
		w    float64
	}
	var rows [][]placed
	var cur []placed
	used := 0.0
	most := max(int(a.h/3/row), 1)
	for _, en := range entries {
		if len(rows) >= most {
			break // no room for more rows: the rest is not shaped
		}
		line := cp.fit(en.label, st, a.w-chartSwatch-chartGap)
		iw := chartSwatch + chartGap + lineWidth(line, st)
		if len(cur) > 0 && used+chartLegendSp+iw > a.w {
			rows = append(rows, cur)
			cur, used = nil, 0
		}
		if len(cur) > 0 {
			used += chartLegendSp
		}
		cur = append(cur, placed{line, en.color, iw})
		used += iw
	}
	rows = append(rows, cur)
	rows = rows[:min(len(rows), max(int(a.h/3/row), 1))]
	h := float64(len(rows)) * row
	y := a.y + a.h - h
	if pos == "top" {
		y = a.y
		a.y += h + chartGap
	}
	a.h -= h + chartGap
	for _, r := range rows {
		total := 0.0
		for i, it := range r {
			if i > 0 {
				total += chartLegendSp
			}
			total += it.w
		}
		x := a.x + (a.w-total)/2
		for _, it := range r {
			swatch(it.c, x, y)
			cp.label(it.line, st, x+chartSwatch+chartGap, y, "L")
			x += it.w + chartLegendSp
		}
		y += row
	}
	return a
}
