package render

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// summaryRow is one row of a table's "summary": a label and a value below
// the table, the value in one column (the last by default) and the label
// beside it, such as an invoice's subtotal, tax and total. In XLSX the
// value is a live formula when the row has one, with the value as its
// cached result.
type summaryRow struct {
	label, value *textTemplate
	// formula is the spreadsheet formula as written: {key} and {key±n}
	// are cells of the table's columns in this row (or n rows away),
	// {key:rows} the cells of that column over the table's rows, and
	// {{ expression }} a number from the values.
	formula *textTemplate
	column  int  // the value's column
	bold    bool // the value in bold (the label always is)
}

// parseSummary reads "summary": [{label, value, formula, column, bold}].
func (c *compiler) parseSummary(path string, props object, e *tableElement, keys map[string]int) {
	if !props.present("summary") {
		return
	}
	path += ".summary"
	items, ok := c.array(path, props.raw("summary"))
	if !ok {
		return
	}
	for i, raw := range items {
		ipath := fmt.Sprintf("%s[%d]", path, i)
		o, ok := c.object(ipath, raw)
		if !ok {
			continue
		}
		r := &summaryRow{label: &textTemplate{}, value: &textTemplate{}, column: len(e.columns) - 1}
		if s, ok := c.str(o, ipath, "label"); ok {
			r.label = c.compileText(ipath+".label", s)
		}
		if s, ok := c.str(o, ipath, "value"); ok {
			r.value = c.compileText(ipath+".value", s)
		} else if !o.present("value") {
			c.add(ipath+".value", "is required, e.g. \"{{ total }}\"")
		}
		if key, ok := c.str(o, ipath, "column"); ok {
			at, known := keys[key]
			if !known {
				c.add(ipath+".column", "%q is the key of no column of this table", clip(key, 40))
			}
			r.column = at
		}
		if s, ok := c.str(o, ipath, "formula"); ok {
			r.formula = c.compileText(ipath+".formula", s)
			// Checked with every placeholder a number and every range one
			// row long; the real ones are known when the table is drawn.
			if _, err := summaryFormula(r.formula, nil, r.column, keys, 0, 1); err != nil {
				c.add(ipath+".formula", "%v", err)
			}
		}
		if b, ok := c.boolean(o, ipath, "bold"); ok {
			r.bold = b
		}
		e.summary = append(e.summary, r)
	}
}

// summaryFormula writes a summary row's formula for a cell in column col:
// placeholders become numbers (ev nil: 0), {key:rows} the n data rows that
// end above rows above the cell, then the rest is read as a column formula.
func summaryFormula(tt *textTemplate, eval func(*expression) (any, error), col int, keys map[string]int, above, n int) (*cellFormula, error) {
	var b strings.Builder
	for _, p := range tt.parts {
		if p.expr == nil {
			b.WriteString(p.literal)
			continue
		}
		x := 0.0
		if eval != nil {
			v, err := eval(p.expr)
			if err != nil {
				return nil, err
			}
			f, ok := number(v)
			if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
				// Only numbers: text from the request must not write formula code.
				return nil, &ExpressionError{Path: p.expr.path, Expression: p.expr.src,
					Message: fmt.Sprintf("a placeholder in a formula must give a number, got %s", describe(v))}
			}
			x = f
		}
		b.WriteString(strconv.FormatFloat(x, 'f', -1, 64))
	}
	src := b.String()
	// {key:rows} → {key-first}:{key-last}, relative to the summary row.
	var out strings.Builder
	for {
		open := strings.IndexByte(src, '{')
		if open < 0 {
			out.WriteString(src)
			break
		}
		end := strings.IndexByte(src[open:], '}')
		if end < 0 {
			out.WriteString(src)
			break
		}
		token := strings.ReplaceAll(src[open+1:open+end], " ", "")
		out.WriteString(src[:open])
		if key, ok := strings.CutSuffix(token, ":rows"); ok {
			if _, known := keys[key]; !known {
				return nil, fmt.Errorf("{%s} names no column: use the key of a column of this table", clip(token, 40))
			}
			fmt.Fprintf(&out, "{%s-%d}:{%s-%d}", key, above+n, key, above+1)
		} else {
			out.WriteString(src[open : open+end+1])
		}
		src = src[open+end+1:]
	}
	return parseFormula(out.String(), col, keys)
}

// tableKeys maps the keys of a table's columns to their positions.
func (e *tableElement) tableKeys() map[string]int {
	keys := map[string]int{}
	for i, col := range e.columns {
		if col.key != "" {
			keys[col.key] = i
		}
	}
	return keys
}

// summaryValues evaluates the summary rows: labels, values and, with
// formulas, the formula of each (rowsAbove: the table rows between the
// first summary row and the last data row; n: the data rows).
func (r *run) summaryValues(e *tableElement, env map[string]any, withFormulas bool, rowsAbove, n int) (labels []string, values []any, formulas []*cellFormula, err error) {
	keys := e.tableKeys()
	eval := func(x *expression) (any, error) { return r.ev.run(x, env) }
	for i, s := range e.summary {
		label, err := s.label.render(r.ev, env)
		if err != nil {
			return nil, nil, nil, err
		}
		v, err := s.value.value(r.ev, env)
		if err != nil {
			return nil, nil, nil, err
		}
		labels, values = append(labels, label), append(values, v)
		var f *cellFormula
		if withFormulas && s.formula != nil && n > 0 {
			if f, err = summaryFormula(s.formula, eval, s.column, keys, rowsAbove+i, n); err != nil {
				return nil, nil, nil, err
			}
		}
		formulas = append(formulas, f)
	}
	return labels, values, formulas, nil
}

// summaryBoxes lays out the summary rows of a PDF table: each label bold
// and right-aligned across the columns left of its value, the value in its
// column's format and alignment.
func (p *pdfWriter) summaryBoxes(e *tableElement, env map[string]any, widths []float64, aligns []string) ([]*box, error) {
	labels, values, _, err := p.summaryValues(e, env, false, 0, 0)
	if err != nil {
		return nil, err
	}
	var out []*box
	for i, s := range e.summary {
		left := 0.0
		for _, w := range widths[:s.column] {
			left += w
		}
		total := left
		for _, w := range widths[s.column:] {
			total += w
		}
		col := e.columns[s.column]
		lst, vst := e.style, e.style
		lst.bold, vst.bold = true, s.bold
		vw := widths[s.column]
		pad := min(cellPadX, vw/6)
		label := p.split(pdfText(labels[i]), lst, max(left-2*cellPadX, 1))
		value := p.split(pdfText(col.format.display(values[i])), vst, vw-2*pad)
		lines := max(len(label), len(value), 1)
		lh := max(lineHeight(lst), lineHeight(vst))
		h := float64(lines)*lh + 2*cellPadY
		align := aligns[s.column]
		out = append(out, &box{w: total, h: h, draw: func(x, y float64) {
			for k, line := range label {
				p.drawText(lst, line, x+cellPadX, y+cellPadY+float64(k)*lh, max(left-2*cellPadX, 1), "R")
			}
			for k, line := range value {
				p.drawText(vst, line, x+left+pad, y+cellPadY+float64(k)*lh, vw-2*pad, align)
			}
		}})
	}
	return out, nil
}

// summaryCells are the XLSX rows of a table's summary: the label in the
// column left of the value (bold, right-aligned), the value typed in its
// column's format, with its formula.
func (x *xlsxWriter) summaryCells(e *tableElement, env map[string]any, base xstyle, rowsAbove, n int) ([][]xcell, error) {
	labels, values, formulas, err := x.summaryValues(e, env, true, rowsAbove, n)
	if err != nil {
		return nil, err
	}
	var rows [][]xcell
	for i, s := range e.summary {
		cells := make([]xcell, len(e.columns))
		vst := base
		vst.bold = s.bold
		cells[s.column] = typedCell(values[i], e.columns[s.column].format, vst, true)
		cells[s.column].formula = formulas[i]
		if s.column > 0 {
			lst := base
			lst.bold, lst.align = true, "R"
			label := xlsxText(labels[i])
			cells[s.column-1] = xcell{v: label, style: lst, fit: displayWidth(label)}
			if label == "" {
				cells[s.column-1].v = nil
			}
		}
		rows = append(rows, cells)
	}
	return rows, nil
}
