package render

import (
	"math"

	"folio/render/text"
)

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
	cats := cp.d.categories
	lines = make([]text.Line, len(cats))
	// Labels one line high apart at most: with less room than that, every
	// step-th one is written, upright, and only those are shaped (a
	// chart may have thousands of categories).
	step = max(int(math.Ceil(lh*1.05/slot)), 1)
	widest := 0.0
	if step == 1 {
		for i, c := range cats {
			lines[i] = cp.text(c, st)
			widest = max(widest, lineWidth(lines[i], st))
		}
		if widest <= slot*0.92 {
			return lines, false, 1, lh
		}
	}
	widest = 0
	for i := 0; i < len(cats); i += step {
		if step > 1 || lineWidth(lines[i], st) > maxLen {
			lines[i] = cp.fit(cats[i], st, maxLen)
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

// stack calls draw for each series' non-zero value of category i with
// the span it covers when stacked: positive values pile up from zero,
// negative ones down from it.
func (d *chartData) stack(i int, draw func(s *seriesData, v, from, to float64)) {
	pos, neg := 0.0, 0.0
	for k := range d.series {
		s := &d.series[k]
		v := s.values[i]
		if math.IsNaN(v) || v == 0 {
			continue
		}
		from := &pos
		if v < 0 {
			from = &neg
		}
		draw(s, v, *from, *from+v)
		*from += v
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
			d.stack(i, func(s *seriesData, v, from, to float64) {
				y0, y1 := yAt(from), yAt(to)
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
			})
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
			if e.showValues && bw+chartGap*2 >= lh {
				label := cp.text(valueLabel(v, e.yAxis, cp.p.t.fmt), st)
				if lineWidth(label, st) <= bw+chartGap*2 || ns == 1 && lineWidth(label, st) <= slot {
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
	// Labels a line high apart: only every step-th one is written, and shaped.
	step := max(int(math.Ceil(lh/((a.h-bottom)/float64(max(n, 1))))), 1)
	for i := 0; i < n; i += step {
		cats[i] = cp.fit(d.categories[i], st, maxCat)
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
	for i := 0; i < n; i += step {
		cp.label(cats[i], st, plot.x-chartGap, plot.y+(float64(i)+0.5)*slot-lh/2, "R")
	}
	ns := len(d.series)
	for i := range d.categories {
		cy := plot.y + float64(i)*slot
		if e.stacked {
			bh := slot * 0.62
			y := cy + (slot-bh)/2
			d.stack(i, func(s *seriesData, _, from, to float64) {
				x0, x1 := xAt(from), xAt(to)
				f.SetFillColor(s.color[0], s.color[1], s.color[2])
				f.Rect(min(x0, x1), y, math.Abs(x1-x0), bh, "F")
			})
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
