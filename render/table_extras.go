package render

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/xuri/excelize/v2"
)

// Totals a column may ask for ("total"), with the number of Excel's
// SUBTOTAL function for each: SUBTOTAL leaves out nested subtotals and rows
// an autofilter hides, like the total row of an Excel table.
var totalFuncs = []string{"sum", "average", "count", "min", "max"}

var subtotalNumbers = map[string]int{"average": 1, "count": 3, "max": 4, "min": 5, "sum": 9}

// maxFormula is Excel's limit on the length of a formula.
const maxFormula = 8192

// parseTableExtras reads the props beyond rows and columns: continued rows,
// the running subtotal, groups, totals, the autofilter, and the columns'
// formulas (which may name other columns by key).
func (c *compiler) parseTableExtras(path string, props object, e *tableElement) {
	if props.present("continuedLabel") {
		c.parseContinuedLabel(path+".continuedLabel", props.raw("continuedLabel"), e)
	}
	if src, ok := c.str(props, path, "carryForward"); ok {
		e.carry = c.compileExpr(path+".carryForward", unwrapPlaceholder(src))
		if e.continuedBottom == nil {
			e.continuedBottom = c.compileText(path+".continuedLabel", defaultCarriedLabel)
			e.continuedTop = c.compileText(path+".continuedLabel", defaultBroughtLabel)
		}
	}
	if src, ok := c.str(props, path, "groupBy"); ok {
		src = unwrapPlaceholder(src)
		if name := strings.TrimSpace(src); identifierPattern.MatchString(name) && name != e.as && !exprKeywords[name] {
			src = e.as + "." + name // a bare field name is a field of the row
		}
		e.groupBy = c.compileExpr(path+".groupBy", src)
		label := defaultSubtotalLabel
		if s, ok := c.str(props, path, "subtotalLabel"); ok {
			label = s
		}
		e.subtotalLabel = c.compileText(path+".subtotalLabel", label)
	}
	label := defaultTotalLabel
	if s, ok := c.str(props, path, "totalLabel"); ok {
		label = s
	}
	e.totalLabel = c.compileText(path+".totalLabel", label)
	if b, ok := c.boolean(props, path, "autoFilter"); ok {
		e.autoFilter = b
	}
	keys := map[string]int{}
	for i, col := range e.columns {
		if col.key == "" {
			continue
		}
		if _, dup := keys[col.key]; dup {
			c.add(fmt.Sprintf("%s.columns[%d].key", path, i), "%q is the key of an earlier column", col.key)
		}
		keys[col.key] = i
	}
	for i, col := range e.columns {
		if col.source == "" {
			continue
		}
		f, err := parseFormula(col.source, i, keys)
		if err != nil {
			c.add(fmt.Sprintf("%s.columns[%d].formula", path, i), "%v", err)
			continue
		}
		col.formula = f
	}
	if len(e.columns) > 0 {
		c.parseSummary(path, props, e, keys)
	}
}

// parseContinuedLabel reads "continuedLabel": one text for both rows, or
// {"bottom": "...", "top": "..."}.
func (c *compiler) parseContinuedLabel(path string, raw json.RawMessage, e *tableElement) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		e.continuedBottom = c.compileText(path, s)
		e.continuedTop = e.continuedBottom
		return
	}
	o, ok := c.object(path, raw)
	if !ok {
		return
	}
	bottom, top := "", ""
	if v, ok := c.str(o, path, "bottom"); ok {
		bottom = v
	}
	if v, ok := c.str(o, path, "top"); ok {
		top = v
	}
	if bottom == "" && top == "" {
		c.add(path, "needs \"bottom\" or \"top\" text (or be a text itself)")
		return
	}
	e.continuedBottom = c.compileText(path+".bottom", bottom)
	e.continuedTop = c.compileText(path+".top", top)
}

// cellFormula is a spreadsheet formula whose references are relative to
// the cell holding it, so it stays right wherever the sheet places the
// table (side by side with other columns, after other rows).
type cellFormula struct {
	parts []formulaPart
}

// formulaPart is literal text or a reference relative to the formula's cell.
type formulaPart struct {
	text     string
	ref      bool // a cell reference: column dc and row dr away
	rowOnly  bool // only the row number, dr away ({row})
	dc, dr   int
	absolute bool // ref: with $ signs
}

// resolve writes the formula for the cell in column col and row row (from 1).
func (f *cellFormula) resolve(col, row int) string {
	var b strings.Builder
	for _, p := range f.parts {
		switch {
		case p.rowOnly:
			b.WriteString(strconv.Itoa(max(row+p.dr, 1)))
		case p.ref:
			name, err := excelize.ColumnNumberToName(max(col+p.dc, 1))
			if err != nil {
				name = "A"
			}
			b.WriteString(name)
			b.WriteString(strconv.Itoa(max(row+p.dr, 1)))
		default:
			b.WriteString(p.text)
		}
	}
	return b.String()
}

// parseFormula reads a column formula such as "=B{row}*C{row}" or
// "={qty}*{price}": {row} (or {row-1}, {row+2}) is the row's number and
// {key} (or {key-1}) the cell of the column with that key in the row.
func parseFormula(src string, col int, keys map[string]int) (*cellFormula, error) {
	s := strings.TrimSpace(src)
	if !strings.HasPrefix(s, "=") || len(s) < 2 {
		return nil, fmt.Errorf("must start with = (an Excel formula such as \"=B{row}*C{row}\")")
	}
	if len(s) > maxFormula {
		return nil, fmt.Errorf("is longer than Excel's %d characters", maxFormula)
	}
	for _, r := range s {
		if r < 0x20 {
			return nil, fmt.Errorf("must be one line without control characters")
		}
	}
	f := &cellFormula{}
	rest := s[1:]
	for rest != "" {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			f.parts = append(f.parts, formulaPart{text: rest})
			break
		}
		if open > 0 {
			f.parts = append(f.parts, formulaPart{text: rest[:open]})
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("{ is not closed with }")
		}
		token := strings.ReplaceAll(rest[open+1:open+end], " ", "")
		rest = rest[open+end+1:]
		name, offset := token, 0
		if i := strings.IndexAny(token, "+-"); i > 0 {
			n, err := strconv.Atoi(token[i:])
			if err != nil || n < -1000 || n > 1000 {
				return nil, fmt.Errorf("{%s}: the offset must be a whole number, e.g. {row-1}", token)
			}
			name, offset = token[:i], n
		}
		if name == "row" {
			f.parts = append(f.parts, formulaPart{rowOnly: true, dr: offset})
			continue
		}
		at, ok := keys[name]
		if !ok {
			return nil, fmt.Errorf("{%s} names no column: use {row} or the key of a column of this table", clip(token, 40))
		}
		f.parts = append(f.parts, formulaPart{ref: true, dc: at - col, dr: offset})
	}
	return f, nil
}

// subtotalFormula is SUBTOTAL over the n cells above the formula's cell.
func subtotalFormula(fn string, n int) *cellFormula {
	return &cellFormula{parts: []formulaPart{
		{text: "SUBTOTAL(" + strconv.Itoa(subtotalNumbers[fn]) + ","},
		{ref: true, dr: -n}, {text: ":"}, {ref: true, dr: -1}, {text: ")"},
	}}
}

// aggregate accumulates one column's total the way the spreadsheet's
// SUBTOTAL computes it: numbers and dates (as serial numbers) count for
// sum, average, min and max; every non-empty cell counts for count.
type aggregate struct {
	fn       string
	sum      float64
	min, max float64
	numbers  int
	filled   int
	dates    bool // every number seen was a date
	minT     time.Time
	maxT     time.Time
}

func newAggregates(cols []*tableColumn) []*aggregate {
	out := make([]*aggregate, len(cols))
	for i, col := range cols {
		if col.total != "" {
			out[i] = &aggregate{fn: col.total, dates: true}
		}
	}
	return out
}

// add counts a cell's spreadsheet value (from cellFormat.typed).
func (a *aggregate) add(v any) {
	if a == nil || v == nil {
		return
	}
	if s, ok := v.(string); ok && s == "" {
		return
	}
	a.filled++
	var x float64
	switch t := v.(type) {
	case float64:
		x, a.dates = t, false
	case int:
		x, a.dates = float64(t), false
	case time.Time:
		x = excelSerial(t)
		if a.minT.IsZero() || t.Before(a.minT) {
			a.minT = t
		}
		if a.maxT.IsZero() || t.After(a.maxT) {
			a.maxT = t
		}
	default:
		return
	}
	if a.numbers == 0 || x < a.min {
		a.min = x
	}
	if a.numbers == 0 || x > a.max {
		a.max = x
	}
	a.sum += x
	a.numbers++
}

// value is the total as a cell value: a number, a date for min and max of
// dates, nil when it has none (an average of no numbers).
func (a *aggregate) value() any {
	if a == nil {
		return nil
	}
	var x float64
	switch a.fn {
	case "count":
		return a.filled
	case "sum":
		x = a.sum
	case "average":
		if a.numbers == 0 {
			return nil
		}
		x = a.sum / float64(a.numbers)
	case "min", "max":
		if a.numbers == 0 {
			x = 0
		} else if x = a.min; a.fn == "max" {
			x = a.max
		}
		if a.dates && a.numbers > 0 {
			if a.fn == "max" {
				return a.maxT
			}
			return a.minT
		}
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return x
}

// display is the total as PDF text in the column's format; counts are
// plain numbers whatever the column shows.
func (a *aggregate) display(f cellFormat) string {
	v := a.value()
	if a != nil && a.fn == "count" {
		return groupedFloat(float64(a.filled))
	}
	return f.display(v)
}

// excelDay0 is day 0 of spreadsheet serial dates (1900 date system).
var excelDay0 = time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)

// excelSerial is a time as a spreadsheet serial number.
func excelSerial(t time.Time) float64 {
	return float64(t.Sub(excelDay0)) / float64(24*time.Hour)
}

// rowGroup is the rows of a table that share a groupBy value, in the
// order they came.
type rowGroup struct {
	key   any
	items []any
}

// groupRows splits items by the table's groupBy value, groups in order of
// first appearance; without groupBy all items are one group.
func groupRows(r *run, e *tableElement, env map[string]any, items []any) ([]*rowGroup, error) {
	if e.groupBy == nil {
		return []*rowGroup{{items: items}}, nil
	}
	rowEnv := copyEnv(env, 2)
	var groups []*rowGroup
	index := map[string]*rowGroup{}
	for i, item := range items {
		rowEnv[e.as] = item
		rowEnv[rowIndexName] = i
		v, err := r.ev.run(e.groupBy, rowEnv)
		if err != nil {
			return nil, err
		}
		k := formatValue(v)
		g := index[k]
		if g == nil {
			g = &rowGroup{key: v}
			index[k] = g
			groups = append(groups, g)
		}
		g.items = append(g.items, item)
	}
	return groups, nil
}

// carryValue evaluates carryForward for one row: a number, nil as 0.
func carryValue(r *run, c *component, e *tableElement, rowEnv map[string]any) (float64, error) {
	v, err := r.ev.run(e.carry, rowEnv)
	if err != nil || v == nil {
		return 0, err
	}
	x, ok := number(v)
	if !ok {
		return 0, &ExpressionError{Path: c.path + ".props.carryForward", Expression: e.carry.src,
			Message: fmt.Sprintf("carryForward needs a number for every row, got %s", describe(v))}
	}
	return x, nil
}

// labelColumn is where the label of a total or subtotal row goes: the
// first column without a total, or -1 when every column has one.
func (e *tableElement) labelColumn() int {
	for i, col := range e.columns {
		if col.total == "" {
			return i
		}
	}
	return -1
}

// carryColumn is the column that shows the running subtotal in continued
// rows: the one whose value is the carryForward expression, else the last
// numeric column, else the last column; -1 without carryForward.
func (e *tableElement) carryColumn() int {
	if e.carry == nil {
		return -1
	}
	want := strings.Join(strings.Fields(e.carry.src), "")
	for i, col := range e.columns {
		if len(col.value.parts) == 1 && col.value.parts[0].expr != nil &&
			strings.Join(strings.Fields(col.value.parts[0].expr.src), "") == want {
			return i
		}
	}
	for i := len(e.columns) - 1; i >= 0; i-- {
		if e.columns[i].format.numeric() {
			return i
		}
	}
	return len(e.columns) - 1
}

// roundSum keeps running sums of decimal amounts from showing binary
// noise (0.1 + 0.2): ten decimal places are more than any format shows.
func roundSum(x float64) float64 {
	if math.Abs(x) >= 1e6 {
		return x
	}
	return math.Round(x*1e10) / 1e10
}
