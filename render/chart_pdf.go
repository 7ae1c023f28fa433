package render

import (
	"math"
	"strconv"
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
	st := cp.st
	lh := lineHeight(st)
	row := lh * 1.15
	swatch := func(c [3]int, x, y float64) {
		cp.p.f.SetFillColor(c[0], c[1], c[2])
		cp.p.f.Rect(x, y+(lh-chartSwatch)/2, chartSwatch, chartSwatch, "F")
	}
	if pos == "right" {
		colW := min(a.w*0.38, 55.0)
		lines := make([]text.Line, len(entries))
		widest := 0.0
		for i, en := range entries {
			lines[i] = cp.fit(en.label, st, colW-chartSwatch-chartGap)
			widest = max(widest, lineWidth(lines[i], st))
		}
		colW = min(colW, widest+chartSwatch+chartGap)
		n := min(len(entries), max(int(a.h/row), 1))
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
	for _, en := range entries {
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

// valueRange is the lowest and highest value the value axis must show:
// with stacking, the sums of the negative and positive parts.
func (cp *chartPainter) valueRange() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	d := cp.d
	if cp.e.stacked {
		for i := range d.categories {
			pos, neg := 0.0, 0.0
			for _, s := range d.series {
				if v := s.values[i]; v > 0 {
					pos += v
				} else if v < 0 {
					neg += v
				}
			}
			lo, hi = min(lo, neg), max(hi, pos)
		}
		return lo, hi
	}
	for _, s := range d.series {
		for _, v := range s.values {
			if !math.IsNaN(v) {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
	}
	return lo, hi
}

// valueScale makes the value axis's scale for an axis length in millimetres.
func (cp *chartPainter) valueScale(length, labelSpace float64) chartScale {
	lo, hi := cp.valueRange()
	withZero := cp.e.kind == chartBar || cp.e.kind == chartArea || cp.e.stacked
	return fitScale(lo, hi, length, labelSpace, withZero, cp.e.yAxis.min, cp.e.yAxis.max)
}

// ticks are a scale's labels, shaped.
func (cp *chartPainter) ticks(s chartScale, a chartAxis) ([]text.Line, float64) {
	lines := make([]text.Line, len(s.ticks))
	widest := 0.0
	for i, v := range s.ticks {
		lines[i] = cp.text(tickLabel(v, s.decimals, a, cp.p.t.fmt), cp.st)
		widest = max(widest, lineWidth(lines[i], cp.st))
	}
	return lines, widest
}

// categoryLabels decides how category labels fit slots slot wide: level,
// or turned upright (a quarter turn, which text extraction reads like
// level text, unlike a slant) and shortened to maxLen, and every step-th
// one when even that crowds them. It returns the shaped labels and the
// height they take below the axis.
func (cp *chartPainter) categoryLabels(slot, maxLen float64) (lines []text.Line, turned bool, step int, height float64) {
	st := cp.st
	lh := lineHeight(st)
	lines = make([]text.Line, len(cp.d.categories))
	widest := 0.0
	for i, c := range cp.d.categories {
		lines[i] = cp.text(c, st)
		widest = max(widest, lineWidth(lines[i], st))
	}
	if widest <= slot*0.92 {
		return lines, false, 1, lh
	}
	step = max(int(math.Ceil(lh*1.05/slot)), 1)
	widest = 0
	for i, c := range cp.d.categories {
		if lineWidth(lines[i], st) > maxLen {
			lines[i] = cp.fit(c, st, maxLen)
		}
		widest = max(widest, lineWidth(lines[i], st))
	}
	return lines, true, step, widest
}

// axisTitle style: the labels' in grey.
func (cp *chartPainter) titleStyle() textStyle {
	st := cp.st
	st.color = chartMuted
	return st
}

// cartesian draws vertical bars, lines, areas and scatter charts.
func (cp *chartPainter) cartesian(a rect) {
	e, d, f := cp.e, cp.d, cp.p.f
	st := cp.st
	lh := lineHeight(st)
	tst := cp.titleStyle()
	left, bottom := 0.0, 0.0
	if d.yTitle != "" {
		left += lh + chartGap
	}
	if d.xTitle != "" {
		bottom += lh + chartGap
	}
	scatter := e.kind == chartScatter
	// The value axis first, with a guess at the room the labels below take.
	guess := bottom + lh + chartGap
	ys := cp.valueScale(a.h-guess-lh/2, lh*2.2)
	yLines, yWidest := cp.ticks(ys, e.yAxis)
	left += yWidest + chartGap
	plot := rect{a.x + left, a.y + lh/2, a.w - left - 2, 0}
	var xs chartScale
	var xLines []text.Line
	var catLines []text.Line
	turned, step := false, 1
	n := len(d.categories)
	if scatter {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, s := range d.series {
			for i, v := range s.xs {
				if !math.IsNaN(v) && !math.IsNaN(s.values[i]) {
					lo, hi = min(lo, v), max(hi, v)
				}
			}
		}
		xs = newScale(lo, hi, 2, false, e.xAxis.min, e.xAxis.max)
		_, xWidest := cp.ticks(xs, e.xAxis)
		xs = fitScale(lo, hi, plot.w, xWidest+6, false, e.xAxis.min, e.xAxis.max)
		xLines, xWidest = cp.ticks(xs, e.xAxis)
		plot.w = a.x + a.w - plot.x - max(xWidest/2, 2)
		bottom += lh + chartGap
	} else {
		var height float64
		catLines, turned, step, height = cp.categoryLabels(plot.w/float64(max(n, 1)), min(30, a.h*0.3))
		bottom += height + chartGap
	}
	plot.h = a.y + a.h - bottom - plot.y
	if plot.h < 5 || plot.w < 5 {
		return
	}
	if plot.h < a.h-guess-lh/2-1 {
		// Turned labels took more room than guessed: the ticks again.
		ys = cp.valueScale(plot.h, lh*2.2)
		yLines, _ = cp.ticks(ys, e.yAxis)
	}
	yAt := func(v float64) float64 { return plot.y + plot.h - ys.pos(v)*plot.h }
	// Gridlines and ticks.
	f.SetLineWidth(chartGridW)
	f.SetDrawColor(chartGridColor[0], chartGridColor[1], chartGridColor[2])
	for i, v := range ys.ticks {
		y := yAt(v)
		if e.yAxis.gridlines {
			f.Line(plot.x, y, plot.x+plot.w, y)
		}
		cp.label(yLines[i], st, plot.x-chartGap, y-lh/2, "R")
	}
	slot := plot.w / float64(max(n, 1))
	xAt := func(i int) float64 { return plot.x + (float64(i)+0.5)*slot }
	if scatter {
		for i, v := range xs.ticks {
			x := plot.x + xs.pos(v)*plot.w
			if e.xAxis.gridlines {
				f.Line(x, plot.y, x, plot.y+plot.h)
			}
			cp.label(xLines[i], st, x, plot.y+plot.h+chartGap, "C")
		}
	} else {
		for i := 0; i < n; i += step {
			x := xAt(i)
			if e.xAxis.gridlines {
				f.Line(x, plot.y, x, plot.y+plot.h)
			}
			if turned {
				cp.rotated(catLines[i], st, x, plot.y+plot.h+chartGap, 90, "R")
			} else {
				cp.label(catLines[i], st, x, plot.y+plot.h+chartGap, "C")
			}
		}
	}
	switch e.kind {
	case chartBar:
		cp.verticalBars(plot, slot, yAt)
	case chartLine, chartArea:
		cp.lines(plot, xAt, yAt)
	case chartScatter:
		cp.points(plot, xs, yAt)
	}
	// The axes over the data: the value axis's zero (or its lowest end).
	base := yAt(max(ys.lo, min(ys.hi, 0)))
	f.SetLineWidth(chartAxisW)
	f.SetDrawColor(chartAxisColor[0], chartAxisColor[1], chartAxisColor[2])
	f.Line(plot.x, base, plot.x+plot.w, base)
	f.Line(plot.x, plot.y, plot.x, plot.y+plot.h)
	if d.yTitle != "" {
		line := cp.fit(d.yTitle, tst, plot.h)
		cp.rotated(line, tst, a.x+lh/2, plot.y+plot.h/2, 90, "C")
	}
	if d.xTitle != "" {
		cp.label(cp.fit(d.xTitle, tst, plot.w), tst, plot.x+plot.w/2, a.y+a.h-lh, "C")
	}
}

// verticalBars draws grouped or stacked bars.
func (cp *chartPainter) verticalBars(plot rect, slot float64, yAt func(float64) float64) {
	e, d, f := cp.e, cp.d, cp.p.f
	st := cp.st
	lh := lineHeight(st)
	ns := len(d.series)
	for i := range d.categories {
		cx := plot.x + float64(i)*slot
		if e.stacked {
			bw := slot * 0.62
			x := cx + (slot-bw)/2
			pos, neg := 0.0, 0.0
			for _, s := range d.series {
				v := s.values[i]
				if math.IsNaN(v) || v == 0 {
					continue
				}
				from := &pos
				if v < 0 {
					from = &neg
				}
				y0, y1 := yAt(*from), yAt(*from+v)
				*from += v
				f.SetFillColor(s.color[0], s.color[1], s.color[2])
				top, h := min(y0, y1), math.Abs(y1-y0)
				f.Rect(x, top, bw, h, "F")
				if e.showValues && h > lh {
					label := cp.text(valueLabel(v, e.yAxis, cp.p.t.fmt), st)
					if lineWidth(label, st) < bw {
						wst := st
						wst.color = contrastText(s.color)
						cp.label(label, wst, x+bw/2, top+h/2-lh/2, "C")
					}
				}
			}
			continue
		}
		group := slot * 0.76
		bw := group / float64(ns)
		gap := min(bw*0.08, 0.4)
		for j, s := range d.series {
			v := s.values[i]
			if math.IsNaN(v) {
				continue
			}
			x := cx + (slot-group)/2 + float64(j)*bw
			y0, y1 := yAt(0), yAt(v)
			top, h := min(y0, y1), math.Abs(y1-y0)
			f.SetFillColor(s.color[0], s.color[1], s.color[2])
			f.Rect(x+gap/2, top, bw-gap, h, "F")
			if e.showValues {
				label := cp.text(valueLabel(v, e.yAxis, cp.p.t.fmt), st)
				if lineWidth(label, st) <= bw+chartGap*2 || ns == 1 {
					y := top - lh
					if v < 0 {
						y = top + h
					}
					cp.label(label, st, x+bw/2, y, "C")
				}
			}
		}
	}
}

// lines draws line and area series, stacked when asked.
func (cp *chartPainter) lines(plot rect, xAt func(int) float64, yAt func(float64) float64) {
	e, d, f := cp.e, cp.d, cp.p.f
	n := len(d.categories)
	below := make([]float64, n) // the stack under the current series
	for _, s := range d.series {
		tops := make([]float64, n)
		for i, v := range s.values {
			switch {
			case math.IsNaN(v) && (e.kind == chartArea || e.stacked):
				tops[i] = below[i]
			case math.IsNaN(v):
				tops[i] = math.NaN()
			case e.stacked:
				tops[i] = below[i] + v
			default:
				tops[i] = v
			}
		}
		if e.kind == chartArea && n > 0 {
			path := cp.newPath()
			for i := 0; i < n; i++ {
				path.to(i == 0, xAt(i), yAt(tops[i]))
			}
			for i := n - 1; i >= 0; i-- {
				base := 0.0
				if e.stacked {
					base = below[i]
				}
				path.to(false, xAt(i), yAt(base))
			}
			f.SetFillColor(s.color[0], s.color[1], s.color[2])
			alpha := 0.35
			if e.stacked {
				alpha = 0.75
			}
			f.SetAlpha(alpha, "Normal")
			cp.paint(path, "h f")
			f.SetAlpha(1, "Normal")
		}
		f.SetDrawColor(s.color[0], s.color[1], s.color[2])
		f.SetLineWidth(chartLineW)
		f.SetLineCapStyle("round")
		f.SetLineJoinStyle("round")
		path := cp.newPath()
		start := true
		count := 0
		for i, v := range tops {
			if math.IsNaN(v) {
				start = true
				continue
			}
			path.to(start, xAt(i), yAt(v))
			start = false
			count++
		}
		cp.paint(path, "S")
		if count <= maxMarkers && e.kind == chartLine {
			f.SetFillColor(s.color[0], s.color[1], s.color[2])
			for i, v := range tops {
				if !math.IsNaN(v) {
					f.Circle(xAt(i), yAt(v), chartMarkerR, "F")
				}
			}
		}
		if e.showValues && count <= maxMarkers {
			st := cp.st
			lh := lineHeight(st)
			for i, v := range s.values {
				if !math.IsNaN(v) {
					cp.label(cp.text(valueLabel(v, e.yAxis, cp.p.t.fmt), st), st, xAt(i), yAt(tops[i])-lh-0.6, "C")
				}
			}
		}
		if e.stacked {
			for i := range below {
				if !math.IsNaN(tops[i]) {
					below[i] = tops[i]
				}
			}
		}
	}
}

// points draws a scatter chart's series.
func (cp *chartPainter) points(plot rect, xs chartScale, yAt func(float64) float64) {
	f := cp.p.f
	f.SetAlpha(0.85, "Normal")
	for _, s := range cp.d.series {
		f.SetFillColor(s.color[0], s.color[1], s.color[2])
		for i, v := range s.values {
			x := s.xs[i]
			if math.IsNaN(v) || math.IsNaN(x) {
				continue
			}
			px, py := plot.x+xs.pos(x)*plot.w, yAt(v)
			if px < plot.x-epsilon || px > plot.x+plot.w+epsilon || py < plot.y-epsilon || py > plot.y+plot.h+epsilon {
				continue // outside the axes' fixed bounds
			}
			f.Circle(px, py, chartDotR, "F")
		}
	}
	f.SetAlpha(1, "Normal")
}

// horizontalBars draws bars growing to the right, categories down the left.
func (cp *chartPainter) horizontalBars(a rect) {
	e, d, f := cp.e, cp.d, cp.p.f
	st := cp.st
	lh := lineHeight(st)
	tst := cp.titleStyle()
	n := len(d.categories)
	left, bottom := 0.0, lh+chartGap
	if d.xTitle != "" {
		left += lh + chartGap
	}
	if d.yTitle != "" {
		bottom += lh + chartGap
	}
	maxCat := a.w * 0.3
	cats := make([]text.Line, n)
	widest := 0.0
	for i, c := range d.categories {
		cats[i] = cp.fit(c, st, maxCat)
		widest = max(widest, lineWidth(cats[i], st))
	}
	left += widest + chartGap
	plot := rect{a.x + left, a.y, a.w - left - 3, a.h - bottom}
	if plot.w < 5 || plot.h < 5 {
		return
	}
	xs := cp.valueScale(plot.w, 20)
	_, tw := cp.ticks(xs, e.yAxis)
	xs = cp.valueScale(plot.w, tw+6)
	tLines, tw := cp.ticks(xs, e.yAxis)
	right := max(tw/2, 3)
	if e.showValues && !e.stacked {
		// Room for the value written after the longest bar.
		lo, hi := cp.valueRange()
		for _, v := range []float64{lo, hi} {
			right = max(right, lineWidth(cp.text(valueLabel(v, e.yAxis, cp.p.t.fmt), st), st)+chartGap)
		}
	}
	plot.w = a.x + a.w - plot.x - right
	xAt := func(v float64) float64 { return plot.x + xs.pos(v)*plot.w }
	f.SetLineWidth(chartGridW)
	f.SetDrawColor(chartGridColor[0], chartGridColor[1], chartGridColor[2])
	for i, v := range xs.ticks {
		x := xAt(v)
		if e.yAxis.gridlines {
			f.Line(x, plot.y, x, plot.y+plot.h)
		}
		cp.label(tLines[i], st, x, plot.y+plot.h+chartGap, "C")
	}
	slot := plot.h / float64(max(n, 1))
	step := max(int(math.Ceil(lh/slot)), 1)
	for i := 0; i < n; i += step {
		cp.label(cats[i], st, plot.x-chartGap, plot.y+(float64(i)+0.5)*slot-lh/2, "R")
	}
	ns := len(d.series)
	for i := range d.categories {
		cy := plot.y + float64(i)*slot
		if e.stacked {
			bh := slot * 0.62
			y := cy + (slot-bh)/2
			pos, neg := 0.0, 0.0
			for _, s := range d.series {
				v := s.values[i]
				if math.IsNaN(v) || v == 0 {
					continue
				}
				from := &pos
				if v < 0 {
					from = &neg
				}
				x0, x1 := xAt(*from), xAt(*from+v)
				*from += v
				f.SetFillColor(s.color[0], s.color[1], s.color[2])
				f.Rect(min(x0, x1), y, math.Abs(x1-x0), bh, "F")
			}
			continue
		}
		group := slot * 0.76
		bh := group / float64(ns)
		gap := min(bh*0.08, 0.4)
		for j, s := range d.series {
			v := s.values[i]
			if math.IsNaN(v) {
				continue
			}
			y := cy + (slot-group)/2 + float64(j)*bh
			x0, x1 := xAt(0), xAt(v)
			f.SetFillColor(s.color[0], s.color[1], s.color[2])
			f.Rect(min(x0, x1), y+gap/2, math.Abs(x1-x0), bh-gap, "F")
			if e.showValues && bh >= lh*0.8 {
				label := cp.text(valueLabel(v, e.yAxis, cp.p.t.fmt), st)
				if v >= 0 {
					cp.label(label, st, x1+chartGap/2, y+bh/2-lh/2, "L")
				} else {
					cp.label(label, st, x1-chartGap/2, y+bh/2-lh/2, "R")
				}
			}
		}
	}
	f.SetLineWidth(chartAxisW)
	f.SetDrawColor(chartAxisColor[0], chartAxisColor[1], chartAxisColor[2])
	base := xAt(max(xs.lo, min(xs.hi, 0)))
	f.Line(base, plot.y, base, plot.y+plot.h)
	f.Line(plot.x, plot.y+plot.h, plot.x+plot.w, plot.y+plot.h)
	if d.xTitle != "" {
		cp.rotated(cp.fit(d.xTitle, tst, plot.h), tst, a.x+lh/2, plot.y+plot.h/2, 90, "C")
	}
	if d.yTitle != "" {
		cp.label(cp.fit(d.yTitle, tst, plot.w), tst, plot.x+plot.w/2, a.y+a.h-lh, "C")
	}
}

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
		if v/total >= minSliceLabel || e.showValues {
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
			// Only where the slice is wide enough at that radius.
			if arc := sweep * math.Pi / 180 * lr; arc > lineWidth(line, st)*1.15 || sweep > 300 {
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
	if inner > 0 {
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
