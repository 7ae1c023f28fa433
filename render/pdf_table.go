package render

import (
	"fmt"

	"folio/render/text"
)

// Table geometry in millimetres.
const (
	cellPadX    = 1.5
	cellPadY    = 1
	tableBorder = 0.2
	tableBefore = 1
)

var (
	tableLineColor   = [3]int{0xaa, 0xaa, 0xaa}
	tableHeaderColor = [3]int{0xee, 0xee, 0xee}
)

// layoutTable lays out a table row by row; a row that starts a page gets
// the header again, and a row only breaks over pages when it is taller
// than a whole page. Groups end with a subtotal row, totals come last, and
// a table asked to draws "continued" rows where it breaks.
func (p *pdfWriter) layoutTable(c *component, e *tableElement, env map[string]any, w float64, s sink) error {
	items, err := evalRows(p.run, c, e, env)
	if err != nil {
		return err
	}
	widths := columnWidths(e.columns, w)
	aligns := make([]string, len(e.columns))
	for i, col := range e.columns {
		aligns[i] = col.align
	}
	hst := e.style
	hst.bold = true
	var header *box
	if e.showHeader {
		headerBoxes := func(env map[string]any) ([]*box, error) {
			texts := make([]string, len(e.columns))
			for i, col := range e.columns {
				t, err := col.header.render(p.ev, env)
				if err != nil {
					return nil, err
				}
				texts[i] = pdfText(t)
			}
			// A header taller than a third of the page is cut to that.
			return p.rowBoxes(texts, widths, hst, aligns, nil, e.bordered, true, p.maxMarginalHeight())[:1], nil
		}
		boxes, err := headerBoxes(env)
		if err != nil {
			return err
		}
		header = boxes[0]
		if e.headerReadsPage() {
			p.repaged(boxes, env, headerBoxes)
		}
	}
	if len(items) == 0 {
		if header != nil {
			header.before, header.after = tableBefore, blockAfter
			return s.add(header)
		}
		return nil
	}
	maxRow := p.bottom - p.bodyTop
	if header != nil {
		maxRow -= header.h
	}
	groups, err := groupRows(p.run, e, env, items)
	if err != nil {
		return err
	}
	flow, err := p.newTableFlow(e, env, widths)
	if err != nil {
		return err
	}
	if flow != nil {
		maxRow -= 2 * flow.h
	}
	maxRow = max(maxRow, 10)
	// Boxes are handed on one behind, so the last one can be marked.
	var prev *box
	carried := 0.0
	emit := func(boxes []*box) error {
		for _, b := range boxes {
			b.header, b.table, b.carried = header, flow, carried
			if prev == nil {
				b.first, b.before = true, tableBefore
			} else if err := s.add(prev); err != nil {
				return err
			}
			prev = b
		}
		return nil
	}
	totals := newAggregates(e.columns)
	rowEnv := copyEnv(env, 2)
	texts := make([]string, len(e.columns))
	// A row that reads "page" is laid out again on the page it lands on.
	rowsReadPage := e.rowsReadPage()
	md := e.markdownColumns()
	rowAgain := func(env map[string]any) ([]*box, error) {
		texts := make([]string, len(e.columns))
		for j, col := range e.columns {
			v, err := col.value.value(p.ev, env)
			if err != nil {
				return nil, err
			}
			texts[j] = pdfText(col.format.display(v))
		}
		return p.rowBoxes(texts, widths, e.style, aligns, md, e.bordered, false, maxRow), nil
	}
	n := 0
	for _, g := range groups {
		sub := newAggregates(e.columns)
		for _, item := range g.items {
			if n&63 == 0 {
				if err := p.ctx.Err(); err != nil {
					return err
				}
			}
			rowEnv[e.as] = item
			rowEnv[rowIndexName] = n
			n++
			for j, col := range e.columns {
				v, err := col.value.value(p.ev, rowEnv)
				if err != nil {
					return err
				}
				texts[j] = pdfText(col.format.display(v))
				if totals[j] != nil {
					typed, _ := col.format.typed(v)
					totals[j].add(typed)
					sub[j].add(typed)
				}
			}
			if err := checkMarkdownCells(c, e, texts); err != nil {
				return err
			}
			boxes := p.rowBoxes(texts, widths, e.style, aligns, md, e.bordered, false, maxRow)
			if rowsReadPage {
				p.repaged(boxes, rowEnv, rowAgain)
			}
			if err := emit(boxes); err != nil {
				return err
			}
			if e.carry != nil {
				x, err := carryValue(p.run, c, e, rowEnv)
				if err != nil {
					return err
				}
				carried = roundSum(carried + x)
			}
		}
		if e.groupBy != nil {
			genv := copyEnv(env, 1)
			genv[groupName] = g.key
			boxes, err := p.labelledTotal(e, e.subtotalLabel, genv, sub, widths, aligns, false, maxRow)
			if err != nil {
				return err
			}
			if err := emit(boxes); err != nil {
				return err
			}
		}
	}
	if e.hasTotals() {
		boxes, err := p.labelledTotal(e, e.totalLabel, env, totals, widths, aligns, true, maxRow)
		if err != nil {
			return err
		}
		if err := emit(boxes); err != nil {
			return err
		}
	}
	if len(e.summary) > 0 {
		boxes, err := p.summaryBoxes(e, env, widths, aligns)
		if err != nil {
			return err
		}
		if err := emit(boxes); err != nil {
			return err
		}
	}
	prev.after, prev.lastOfTable = blockAfter, true
	return s.add(prev)
}

// labelledTotal lays out a subtotal or total row labelled label, which
// is laid out again on the page it lands on when the label reads "page".
func (p *pdfWriter) labelledTotal(e *tableElement, label *textTemplate, env map[string]any, aggs []*aggregate, widths []float64, aligns []string, grand bool, maxH float64) ([]*box, error) {
	again := func(env map[string]any) ([]*box, error) {
		text, err := label.render(p.ev, env)
		if err != nil {
			return nil, err
		}
		return p.totalBoxes(e, text, aggs, widths, aligns, grand, maxH), nil
	}
	boxes, err := again(env)
	if err == nil && label.usesName("page") {
		p.repaged(boxes, env, again)
	}
	return boxes, err
}

// headerReadsPage reports whether a header cell reads "page".
func (e *tableElement) headerReadsPage() bool {
	for _, col := range e.columns {
		if col.header.usesName("page") {
			return true
		}
	}
	return false
}

// rowsReadPage reports whether a cell of the rows reads "page".
func (e *tableElement) rowsReadPage() bool {
	for _, col := range e.columns {
		if col.value.usesName("page") {
			return true
		}
	}
	return false
}

// totalBoxes lays out a subtotal or total row: the label in the first
// column without a total, each total in its column's format. The total row
// looks like the header; subtotal rows are bold.
func (p *pdfWriter) totalBoxes(e *tableElement, label string, aggs []*aggregate, widths []float64, aligns []string, grand bool, maxH float64) []*box {
	texts := make([]string, len(e.columns))
	for i, col := range e.columns {
		if aggs[i] != nil {
			texts[i] = pdfText(aggs[i].display(col.format))
		}
	}
	if at := e.labelColumn(); at >= 0 {
		texts[at] = pdfText(label)
	}
	st := e.style
	st.bold = true
	return p.rowBoxes(texts, widths, st, aligns, nil, e.bordered, grand, maxH)
}

// tableFlow draws the "continued" rows of one table.
type tableFlow struct {
	p           *pdfWriter
	e           *tableElement
	env         map[string]any
	widths      []float64
	carryCol    int // -1: no running subtotal
	bottom, top *textTemplate
	st          textStyle
	h           float64
}

// newTableFlow prepares the continued rows of a table, or returns nil when
// it has none.
func (p *pdfWriter) newTableFlow(e *tableElement, env map[string]any, widths []float64) (*tableFlow, error) {
	if !e.continued() {
		return nil, nil
	}
	st := e.style
	st.italic = true
	f := &tableFlow{p: p, e: e, env: copyEnv(env, 2), widths: widths, carryCol: e.carryColumn(),
		bottom: e.continuedBottom, top: e.continuedTop, st: st, h: lineHeight(st) + 2*cellPadY}
	// Check the labels now, so a broken one fails the render rather than a
	// page break.
	for _, tt := range []*textTemplate{f.bottom, f.top} {
		if _, err := f.label(tt, 1, 0); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// label renders a continued row's label for a page and running subtotal.
func (f *tableFlow) label(tt *textTemplate, page int, carried float64) (string, error) {
	f.env["page"] = page
	f.env[carriedName] = carried
	return tt.render(f.p.ev, f.env)
}

// drawRow draws a continued row at (x, y): the label across the columns
// before the running subtotal's column (or after it, when it is the first;
// or across the table without one), the subtotal in its column's format.
func (f *tableFlow) drawRow(tt *textTemplate, x, y, carried float64) {
	p := f.p
	text, err := f.label(tt, p.shown(p.f.PageNo()), carried)
	if err != nil {
		if p.err == nil {
			p.err = err
		}
		return
	}
	n := len(f.widths)
	from, to := 0, n // columns the label spans
	switch {
	case f.carryCol > 0:
		to = f.carryCol
	case f.carryCol == 0:
		from = 1
	}
	lx, lw := x, 0.0
	for i, cw := range f.widths {
		if i < from {
			lx += cw
		} else if i < to {
			lw += cw
		}
	}
	p.f.SetLineWidth(tableBorder)
	p.f.SetDrawColor(tableLineColor[0], tableLineColor[1], tableLineColor[2])
	if f.e.bordered && lw > 0 {
		p.f.Rect(lx, y, lw, f.h, "D")
	}
	if lw > 0 {
		pad := min(cellPadX, lw/6)
		line := p.split(pdfText(text), f.st, lw-2*pad)[0]
		p.drawText(f.st, line, lx+pad, y+cellPadY, lw-2*pad, "L")
	}
	cx := x
	for i, cw := range f.widths {
		if i < from || i >= to {
			if f.e.bordered {
				p.f.Rect(cx, y, cw, f.h, "D")
			}
			if i == f.carryCol {
				col := f.e.columns[i]
				pad := min(cellPadX, cw/6)
				v := col.format.display(carried)
				p.drawText(f.st, p.split(pdfText(v), f.st, cw-2*pad)[0], cx+pad, y+cellPadY, cw-2*pad, col.align)
			}
		}
		cx += cw
	}
}

// evalRows evaluates a table's rows expression to its elements.
func evalRows(r *run, c *component, e *tableElement, env map[string]any) ([]any, error) {
	if e.rows == nil {
		return nil, nil
	}
	v, err := r.ev.run(e.rows, env)
	if err != nil {
		return nil, err
	}
	items, ok := toList(v)
	if !ok {
		return nil, &ExpressionError{Path: c.path + ".props.rows", Expression: e.rows.src,
			Message: fmt.Sprintf("table rows need an array, got %s", describe(v))}
	}
	return items, nil
}

// copyEnv copies an evaluation environment with room for extra names.
func copyEnv(env map[string]any, extra int) map[string]any {
	out := make(map[string]any, len(env)+extra)
	for k, v := range env {
		out[k] = v
	}
	return out
}

// rowBoxes lays out one table row; md marks the columns whose text is
// Markdown (nil: none). A row taller than maxH is split into several
// boxes so that no part is taller than maxH.
func (p *pdfWriter) rowBoxes(texts []string, widths []float64, st textStyle, aligns []string, md []bool, bordered, header bool, maxH float64) []*box {
	lh := lineHeight(st)
	cells := make([][]text.Line, len(texts))
	looks := make([][]richLook, len(texts))
	pads := make([]float64, len(texts))
	lines := 1
	for i, t := range texts {
		pads[i] = min(cellPadX, widths[i]/6)
		if i < len(md) && md[i] {
			rt := p.rich(flatSpans(parseMarkdown(markdownText(t))), st)
			cells[i], looks[i] = p.splitRich(rt, st, widths[i]-2*pads[i]), rt.looks
		} else {
			cells[i] = p.split(t, st, widths[i]-2*pads[i])
		}
		lines = max(lines, len(cells[i]))
	}
	per := lines
	if float64(lines)*lh+2*cellPadY > maxH {
		per = max(1, int((maxH-2*cellPadY)/lh))
	}
	total := 0.0
	for _, cw := range widths {
		total += cw
	}
	var boxes []*box
	for from := 0; from < lines; from += per {
		to := min(from+per, lines)
		h := float64(to-from)*lh + 2*cellPadY
		boxes = append(boxes, &box{w: total, h: h, draw: func(x, y float64) {
			p.charge(rectOpBytes * int64(len(widths)))
			p.f.SetLineWidth(tableBorder)
			p.f.SetDrawColor(tableLineColor[0], tableLineColor[1], tableLineColor[2])
			p.f.SetFillColor(tableHeaderColor[0], tableHeaderColor[1], tableHeaderColor[2])
			cx := x
			for i, cw := range widths {
				switch {
				case header && bordered:
					p.f.Rect(cx, y, cw, h, "FD")
				case header:
					p.f.Rect(cx, y, cw, h, "F")
				case bordered:
					p.f.Rect(cx, y, cw, h, "D")
				}
				for k := from; k < to && k < len(cells[i]); k++ {
					if looks[i] != nil {
						p.drawRich(st, cells[i][k], looks[i], cx+pads[i], y+cellPadY+float64(k-from)*lh, cw-2*pads[i], aligns[i])
						continue
					}
					p.drawText(st, cells[i][k], cx+pads[i], y+cellPadY+float64(k-from)*lh, cw-2*pads[i], aligns[i])
				}
				cx += cw
			}
		}})
	}
	return boxes
}
