package render

import "fmt"

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
// than a whole page.
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
		texts := make([]string, len(e.columns))
		for i, col := range e.columns {
			t, err := col.header.render(p.ev, env)
			if err != nil {
				return err
			}
			texts[i] = pdfText(t)
		}
		// A header taller than a third of the page is cut to that.
		header = p.rowBoxes(texts, widths, hst, aligns, e.bordered, true, p.maxMarginalHeight())[0]
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
	rowEnv := copyEnv(env, 2)
	texts := make([]string, len(e.columns))
	for i, item := range items {
		if i&63 == 0 {
			if err := p.ctx.Err(); err != nil {
				return err
			}
		}
		rowEnv[e.as] = item
		rowEnv[rowIndexName] = i
		for j, col := range e.columns {
			v, err := col.value.value(p.ev, rowEnv)
			if err != nil {
				return err
			}
			texts[j] = pdfText(col.format.display(v))
		}
		boxes := p.rowBoxes(texts, widths, e.style, aligns, e.bordered, false, maxRow)
		for k, b := range boxes {
			b.header = header
			if i == 0 && k == 0 {
				b.first, b.before = true, tableBefore
			}
			if i == len(items)-1 && k == len(boxes)-1 {
				b.after = blockAfter
			}
			if err := s.add(b); err != nil {
				return err
			}
		}
	}
	return nil
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

// rowBoxes lays out one table row. A row taller than maxH is split into
// several boxes so that no part is taller than maxH.
func (p *pdfWriter) rowBoxes(texts []string, widths []float64, st textStyle, aligns []string, bordered, header bool, maxH float64) []*box {
	lh := lineHeight(st)
	cells := make([][]string, len(texts))
	pads := make([]float64, len(texts))
	lines := 1
	for i, t := range texts {
		pads[i] = min(cellPadX, widths[i]/6)
		cells[i] = p.split(t, st, widths[i]-2*pads[i])
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
					p.drawText(st, cells[i][k], cx+pads[i], y+cellPadY+float64(k-from)*lh, cw-2*pads[i], aligns[i])
				}
				cx += cw
			}
		}})
	}
	return boxes
}
