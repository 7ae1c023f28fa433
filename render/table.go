package render

import (
	"encoding/json"
	"fmt"
	"strings"
)

// tableElement is a table with one row per element of an array.
type tableElement struct {
	rows       *expression // yields the array
	as         string      // the element's name in cell templates, "row" by default
	columns    []*tableColumn
	showHeader bool
	bordered   bool
	style      textStyle // cells; the header is the same style in bold
	// continuedBottom and continuedTop are the rows drawn at the bottom and
	// top of a page break inside the table; nil draws none.
	continuedBottom, continuedTop *textTemplate
	carry                         *expression // "carryForward": summed row by row, shown in the continued rows
	groupBy                       *expression // rows with equal values form a group with a subtotal row
	subtotalLabel, totalLabel     *textTemplate
	autoFilter                    bool          // XLSX: an autofilter on the header row
	summary                       []*summaryRow // rows below the table: subtotal, tax, total
}

// Names the table's own templates see.
const (
	groupName   = "group"   // subtotalLabel: the group's value
	carriedName = "carried" // continuedLabel: the running subtotal
)

// Default labels of the rows tables add.
const (
	defaultCarriedLabel  = "Carried forward"
	defaultBroughtLabel  = "Brought forward"
	defaultSubtotalLabel = "Subtotal {{ group }}"
	defaultTotalLabel    = "Total"
)

// hasTotals reports whether any column asks for a total.
func (e *tableElement) hasTotals() bool {
	for _, col := range e.columns {
		if col.total != "" {
			return true
		}
	}
	return false
}

// continued reports whether the table draws continued rows at page breaks.
func (e *tableElement) continued() bool { return e.continuedBottom != nil }

// tableColumn is one table column.
type tableColumn struct {
	header  *textTemplate
	value   *textTemplate
	width   float64 // millimetres; 0 shares the width left over
	share   float64 // fraction of the table width, from a "25%" width
	align   string  // "L", "C" or "R"
	format  cellFormat
	key     string       // names the column in formulas: {key}
	source  string       // "formula" as written, resolved once every column is known
	formula *cellFormula // XLSX: the cell's formula; its cached value is value
	total   string       // "sum", "average", "count", "min" or "max"; "" for none
	// markdown: the cells' text is Markdown ("markdown": true).
	markdown bool
}

// Table defaults.
const (
	defaultRowName   = "row"
	rowIndexName     = "rowIndex"
	defaultTableSize = 9.5
)

func (e *tableElement) fontStyles() fontStyle {
	return e.style.fontStyles() | styleOf(true, e.style.italic)
}

func (e *tableElement) refs() elementRefs {
	r := elementRefs{}
	if e.rows != nil {
		r.exprs = append(r.exprs, e.rows)
	}
	for _, x := range []*expression{e.carry, e.groupBy} {
		if x != nil {
			r.exprs = append(r.exprs, x)
		}
	}
	for _, tt := range []*textTemplate{e.continuedBottom, e.continuedTop, e.subtotalLabel, e.totalLabel} {
		if tt != nil {
			r.texts = append(r.texts, tt)
		}
	}
	for _, col := range e.columns {
		r.texts = append(r.texts, col.header, col.value)
	}
	for _, s := range e.summary {
		r.texts = append(r.texts, s.label, s.value)
		if s.formula != nil {
			r.texts = append(r.texts, s.formula)
		}
	}
	return r
}

func parseTable(c *compiler, path string, props object, _ depth) element {
	e := &tableElement{as: defaultRowName, showHeader: true, bordered: true, autoFilter: true}
	if src, ok := c.str(props, path, "rows"); ok {
		e.rows = c.compileExpr(path+".rows", unwrapPlaceholder(src))
	} else if !props.present("rows") {
		c.add(path+".rows", "is required: an expression that yields an array, e.g. \"items\"")
	}
	if as, ok := c.str(props, path, "as"); ok {
		if msg := checkName(as); msg != "" {
			c.add(path+".as", "%s", msg)
		}
		e.as = as
	}
	if b, ok := c.boolean(props, path, "showHeader"); ok {
		e.showHeader = b
	}
	if b, ok := c.boolean(props, path, "bordered"); ok {
		e.bordered = b
	}
	e.style = c.parseStyle(path, props, textStyle{size: defaultTableSize, align: "L"})
	if !props.present("columns") {
		c.add(path+".columns", "is required")
		return e
	}
	items, ok := c.array(path+".columns", props.raw("columns"))
	if !ok {
		return e
	}
	switch {
	case len(items) == 0:
		c.add(path+".columns", "must hold at least one column")
	case len(items) > c.limits.Columns:
		c.add(path+".columns", "has %d columns, maximum %d", len(items), c.limits.Columns)
		return e
	}
	shares := 0.0
	for i, item := range items {
		cpath := fmt.Sprintf("%s.columns[%d]", path, i)
		col := c.parseColumn(cpath, item)
		if col == nil {
			continue
		}
		shares += col.share
		e.columns = append(e.columns, col)
	}
	if shares > 1.0001 {
		c.add(path+".columns", "percentage widths add up to more than 100%%")
	}
	c.parseTableExtras(path, props, e)
	return e
}

func (c *compiler) parseColumn(path string, raw []byte) *tableColumn {
	o, ok := c.object(path, raw)
	if !ok {
		return nil
	}
	col := &tableColumn{header: &textTemplate{}, value: &textTemplate{}}
	if s, ok := c.str(o, path, "header"); ok {
		col.header = c.compileText(path+".header", s)
	}
	if s, ok := c.str(o, path, "value"); ok {
		col.value = c.compileText(path+".value", s)
	} else if !o.present("value") {
		c.add(path+".value", "is required, e.g. \"{{ row.name }}\"")
	}
	if f, ok := c.str(o, path, "format"); ok {
		format, err := parseCellFormat(f, c.locale())
		if err != nil {
			c.add(path+".format", "%v", err)
		}
		col.format = format
	}
	col.width, col.share = c.width(o, path, "width")
	if key, ok := c.str(o, path, "key"); ok {
		if msg := checkName(key); msg != "" {
			c.add(path+".key", "%s", msg)
		} else if key == "row" {
			c.add(path+".key", "\"row\" is reserved: {row} is the row number in formulas")
		}
		col.key = key
	}
	if f, ok := c.str(o, path, "formula"); ok {
		col.source = f
	}
	col.total = c.oneOf(o, path, "total", "", totalFuncs...)
	if md, ok := c.boolean(o, path, "markdown"); ok {
		col.markdown = md
		if md && col.format.numeric() {
			c.add(path+".markdown", "cannot be used with a number or date format")
		}
	}
	col.align = "L"
	if col.format.numeric() {
		col.align = "R"
	}
	switch c.oneOf(o, path, "align", "", "left", "center", "right") {
	case "left":
		col.align = "L"
	case "center":
		col.align = "C"
	case "right":
		col.align = "R"
	}
	return col
}

// width reads a width in millimetres (a number) or as a share of the
// available width ("25%").
func (c *compiler) width(o object, path, key string) (mm, share float64) {
	if !o.present(key) {
		return 0, 0
	}
	if s, ok := c.strQuiet(o, key); ok {
		s = strings.TrimSpace(s)
		var pct float64
		if n, err := fmt.Sscanf(s, "%g%%", &pct); err != nil || n != 1 || !strings.HasSuffix(s, "%") || pct <= 0 || pct > 100 {
			c.add(path+"."+key, "must be millimetres (a number) or a percentage such as \"25%%\"")
			return 0, 0
		}
		return 0, pct / 100
	}
	f, ok := c.number(o, path, key)
	if !ok {
		return 0, 0
	}
	if f <= 0 || f > maxLength {
		c.add(path+"."+key, "must be between 0 and %d (millimetres)", maxLength)
		return 0, 0
	}
	return f, 0
}

// maxLength bounds lengths in millimetres (widths, heights, sizes):
// larger than any supported page.
const maxLength = 500

// length reads an optional length in millimetres within [lo, hi].
func (c *compiler) length(o object, path, key string, lo, hi, def float64) float64 {
	f, ok := c.number(o, path, key)
	if !ok {
		return def
	}
	if f < lo || f > hi {
		c.add(path+"."+key, "must be between %g and %g (millimetres)", lo, hi)
		return def
	}
	return f
}

// strQuiet reads a string field without reporting a type mismatch.
func (c *compiler) strQuiet(o object, key string) (string, bool) {
	raw := o.raw(key)
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	ok := json.Unmarshal(raw, &s) == nil
	return s, ok
}

// unwrapPlaceholder lets an expression prop be written as "{{ items }}" too.
func unwrapPlaceholder(src string) string {
	s := strings.TrimSpace(src)
	if strings.HasPrefix(s, "{{") && strings.HasSuffix(s, "}}") && strings.Count(s, "{{") == 1 {
		return s[2 : len(s)-2]
	}
	return src
}

// columnWidths divides width among the columns: fixed widths first, then
// percentages, then equal shares of what is left; the result is scaled
// down when it would not fit.
func columnWidths(cols []*tableColumn, width float64) []float64 {
	out := make([]float64, len(cols))
	used, free := 0.0, 0
	for i, col := range cols {
		switch {
		case col.width > 0:
			out[i] = col.width
		case col.share > 0:
			out[i] = col.share * width
		default:
			free++
			continue
		}
		used += out[i]
	}
	if free > 0 {
		rest := max(width-used, 0) / float64(free)
		// Columns without a width get at least a tenth of the table.
		rest = max(rest, width/10)
		for i, col := range cols {
			if col.width == 0 && col.share == 0 {
				out[i] = rest
				used += rest
			}
		}
	}
	if used > width {
		for i := range out {
			out[i] *= width / used
		}
	}
	return out
}
