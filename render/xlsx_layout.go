package render

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// headingCellSizes are the font sizes of heading levels 1 to 3 in a sheet.
var headingCellSizes = [...]float64{1: 16, 2: 14, 3: 12}

// layout turns one component instance into spreadsheet rows.
func (x *xlsxWriter) layout(c *component, env map[string]any, out rowSink) error {
	switch e := c.elem.(type) {
	case *textElement:
		return x.textRows(e.content, x.cellStyle(e.style, 0), env, out)
	case *headingElement:
		return x.textRows(e.content, x.cellStyle(e.style, headingCellSizes[e.level]), env, out)
	case *tableElement:
		return x.tableRows(c, e, env, out)
	case *keyValueElement:
		return x.keyValueRows(e, env, out)
	case *dividerElement, *spacerElement:
		return out.row(nil)
	case *pageBreakElement:
		return out.pageBreak()
	case *columnsElement:
		return x.columnRows(e, env, out)
	case *markdownElement:
		return x.markdownRows(c, e, env, out)
	case *chartElement:
		return x.chartRows(c, e, env, out)
	}
	return nil // images, QR codes and barcodes have no spreadsheet form
}

// cellStyle maps a text style to a cell style; size 0 keeps the default
// unless the template set one. A font family the template chose is named
// in the cell by its typeface name (the reader's system substitutes a
// font it lacks); without one the cell keeps the application's default.
func (x *xlsxWriter) cellStyle(st textStyle, size float64) xstyle {
	xs := xstyle{bold: st.bold, italic: st.italic, size: size, align: st.align}
	if st.family != "" && x.t.engine != nil && x.t.engine.fonts != nil {
		if fam, ok := x.t.engine.fonts.Family(st.family); ok {
			xs.font = fam.Typeface()
		}
	}
	if xs.align == "L" {
		xs.align = ""
	}
	if size == 0 && st.size != defaultFontSize {
		xs.size = st.size
	}
	if st.color != ([3]int{}) {
		xs.color = fmt.Sprintf("%02X%02X%02X", st.color[0], st.color[1], st.color[2])
	}
	return xs
}

// textRows writes text as one cell per line, each in its own row.
func (x *xlsxWriter) textRows(tt *textTemplate, st xstyle, env map[string]any, out rowSink) error {
	text, err := tt.render(x.ev, env)
	if err != nil {
		return err
	}
	text = xlsxText(text)
	if strings.TrimSpace(text) == "" {
		return nil
	}
	for _, line := range strings.Split(text, "\n") {
		if err := out.row([]xcell{{v: line, style: st}}); err != nil {
			return err
		}
	}
	return nil
}

// typedCell makes a cell from a value: typed when it is a lone placeholder's
// value, text otherwise. fit asks for the cell's display width.
func typedCell(v any, f cellFormat, st xstyle, fit bool) xcell {
	val, numFmt := f.typed(v)
	if s, ok := val.(string); ok {
		if clean := xlsxText(s); clean != s {
			val = clean
		}
		st.wrap = strings.Contains(s, "\n")
	}
	st.numFmt = numFmt
	c := xcell{v: val, style: st}
	if fit && v != nil {
		c.fit = displayWidth(f.display(v))
	}
	return c
}

// needsFit reports whether cells going to out still decide column widths:
// not once a sheet has fixed them.
func needsFit(out rowSink) bool {
	s, ok := out.(*sheetWriter)
	return !ok || !s.started
}

// displayWidth is how many characters wide a cell's text is; for text over
// several lines, its longest line.
func displayWidth(s string) int {
	w := 0
	for _, line := range strings.Split(s, "\n") {
		w = max(w, utf8.RuneCountInString(line))
	}
	return max(w, 1)
}

// tableRows writes a table: its header, one row per element (grouped,
// with a subtotal row per group), and its total row. Formulas and totals
// become spreadsheet formulas with the values the PDF shows as their
// cached results.
func (x *xlsxWriter) tableRows(c *component, e *tableElement, env map[string]any, out rowSink) error {
	items, err := evalRows(x.run, c, e, env)
	if err != nil {
		return err
	}
	base := x.cellStyle(e.style, 0)
	base.size, base.align = 0, ""
	if e.showHeader {
		hst := base
		hst.bold, hst.header = true, true
		cells := make([]xcell, len(e.columns))
		for i, col := range e.columns {
			text, err := col.header.render(x.ev, env)
			if err != nil {
				return err
			}
			text = xlsxText(text)
			cells[i] = xcell{v: text, style: hst, fit: displayWidth(text)}
			if text == "" {
				cells[i].v = nil
			}
		}
		if err := out.header(cells); err != nil {
			return err
		}
	}
	groups, err := groupRows(x.run, e, env, items)
	if err != nil {
		return err
	}
	level := 0
	if e.groupBy != nil {
		level = 2
	}
	totals := newAggregates(e.columns)
	rowEnv := copyEnv(env, 2)
	written, n := 0, 0 // rows below the header; elements so far
	for _, g := range groups {
		sub := newAggregates(e.columns)
		for _, item := range g.items {
			if n&63 == 0 {
				if err := x.ctx.Err(); err != nil {
					return err
				}
			}
			rowEnv[e.as] = item
			rowEnv[rowIndexName] = n
			n++
			fit := needsFit(out)
			cells := make([]xcell, len(e.columns))
			for j, col := range e.columns {
				v, err := col.value.value(x.ev, rowEnv)
				if err != nil {
					return err
				}
				st := base
				if col.align != "L" && !col.format.numeric() {
					st.align = col.align
				}
				cells[j] = typedCell(v, col.format, st, fit)
				if col.markdown {
					cells[j] = markdownCell(formatValue(v), st, fit)
				}
				cells[j].formula = col.formula
				if totals[j] != nil {
					totals[j].add(cells[j].v)
					sub[j].add(cells[j].v)
				}
			}
			if err := out.grouped(cells, level); err != nil {
				return err
			}
			written++
		}
		if e.groupBy != nil {
			genv := copyEnv(env, 1)
			genv[groupName] = g.key
			label, err := e.subtotalLabel.render(x.ev, genv)
			if err != nil {
				return err
			}
			st := base
			st.bold = true
			if err := out.grouped(x.totalCells(e, label, sub, len(g.items), st), 1); err != nil {
				return err
			}
			written++
		}
	}
	if e.showHeader && e.autoFilter {
		out.filter(len(e.columns), written)
	}
	above := 0 // rows between the data rows and the summary
	if e.hasTotals() && n > 0 {
		label, err := e.totalLabel.render(x.ev, env)
		if err != nil {
			return err
		}
		st := base
		st.bold, st.total = true, true
		if err := out.row(x.totalCells(e, label, totals, written, st)); err != nil {
			return err
		}
		above = 1
	}
	if len(e.summary) > 0 && n > 0 {
		rows, err := x.summaryCells(e, env, base, above, written)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if err := out.row(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// totalCells is a subtotal or total row: the label in the first column
// without a total, and in every column with one a SUBTOTAL formula over
// the span rows above it, with the total as its cached value.
func (x *xlsxWriter) totalCells(e *tableElement, label string, aggs []*aggregate, span int, st xstyle) []xcell {
	cells := make([]xcell, len(e.columns))
	for i, col := range e.columns {
		a := aggs[i]
		if a == nil {
			continue
		}
		format := col.format
		if a.fn == "count" {
			format = cellFormat{}
		}
		cells[i] = typedCell(a.value(), format, st, false)
		cells[i].formula = subtotalFormula(a.fn, span)
	}
	if at := e.labelColumn(); at >= 0 {
		label = xlsxText(label)
		cells[at] = xcell{v: label, style: st, fit: displayWidth(label)}
	}
	return cells
}

func (x *xlsxWriter) keyValueRows(e *keyValueElement, env map[string]any, out rowSink) error {
	base := x.cellStyle(e.style, 0)
	base.size, base.align = 0, ""
	lst := base
	lst.bold = true
	for _, it := range e.items {
		label, err := it.label.render(x.ev, env)
		if err != nil {
			return err
		}
		v, err := it.value.value(x.ev, env)
		if err != nil {
			return err
		}
		label = xlsxText(label)
		if strings.TrimSpace(label) == "" && v == nil {
			continue
		}
		row := []xcell{{v: label, style: lst, fit: displayWidth(label)}, typedCell(v, it.format, base, true)}
		if err := out.row(row); err != nil {
			return err
		}
	}
	return nil
}

// rowCollector gathers the rows of one column of a columns component.
type rowCollector struct {
	x    *xlsxWriter
	rows [][]xcell
}

func (r *rowCollector) row(cells []xcell) error {
	if len(r.rows)+1 > r.x.limits.Rows {
		return newLimitError(LimitRows, int64(len(r.rows)+1), int64(r.x.limits.Rows))
	}
	r.rows = append(r.rows, cells)
	return nil
}

func (r *rowCollector) header(cells []xcell) error         { return r.row(cells) }
func (r *rowCollector) pageBreak() error                   { return nil }
func (r *rowCollector) grouped(cells []xcell, _ int) error { return r.row(cells) }
func (r *rowCollector) filter(int, int)                    {}

// columnRows lays columns side by side: each column's rows become cells
// next to the previous column's, one empty column apart.
func (x *xlsxWriter) columnRows(e *columnsElement, env map[string]any, out rowSink) error {
	blocks := make([][][]xcell, len(e.children))
	widths := make([]int, len(e.children))
	height := 0
	for i, child := range e.children {
		col := &rowCollector{x: x}
		err := x.walk(child, env, func(c *component, env map[string]any) error {
			return x.layout(c, env, col)
		})
		if err != nil {
			return err
		}
		blocks[i] = col.rows
		widths[i] = 1
		for _, r := range col.rows {
			widths[i] = max(widths[i], len(r))
		}
		height = max(height, len(col.rows))
	}
	for r := 0; r < height; r++ {
		var row []xcell
		for i, block := range blocks {
			if i > 0 {
				row = append(row, xcell{})
			}
			var cells []xcell
			if r < len(block) {
				cells = block[r]
			}
			row = append(row, cells...)
			for k := len(cells); k < widths[i]; k++ {
				row = append(row, xcell{})
			}
		}
		if err := out.row(trimRow(row)); err != nil {
			return err
		}
	}
	return nil
}

// trimRow drops empty cells at the end of a row.
func trimRow(r []xcell) []xcell {
	for len(r) > 0 && r[len(r)-1].empty() {
		r = r[:len(r)-1]
	}
	return r
}

// xlsxText removes what XML 1.0 cannot hold (control characters other
// than tab and line breaks, U+FFFE, U+FFFF, broken UTF-8) and turns \r\n
// into \n.
func xlsxText(s string) string {
	clean := true
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r < 0x20 && r != '\t' && r != '\n') || r == 0xFFFE || r == 0xFFFF || (r == utf8.RuneError && size == 1) {
			clean = false
			break
		}
		i += size
	}
	if clean {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\r':
			return '\n'
		case r < 0x20 && r != '\t' && r != '\n', r == 0xFFFE, r == 0xFFFF, r == utf8.RuneError:
			return -1
		}
		return r
	}, s)
}
