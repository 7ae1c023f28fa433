package render

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// Chart kinds ("chartType").
const (
	chartBar     = "bar"
	chartLine    = "line"
	chartArea    = "area"
	chartPie     = "pie"
	chartDonut   = "donut"
	chartScatter = "scatter"
)

var chartKinds = []string{chartBar, chartLine, chartArea, chartPie, chartDonut, chartScatter}

// Chart bounds. A chart draws at most maxChartPoints values in all (a
// point per category and series): more cannot be told apart on a page,
// and the data should be aggregated first (groupBy, take).
const (
	maxChartSeries   = 20
	maxChartPoints   = 5000
	maxChartColors   = 50
	defaultChartFont = 8   // points
	defaultChartH    = 80  // millimetres, when no height is given
	minChartSide     = 20  // millimetres
	maxChartLabel    = 200 // characters of a category or series label kept
	chartAs          = "item"
	defaultEmptyNote = "No data"
)

// defaultPalette is the colours of series (and pie slices) when neither
// the chart's "colors" nor the schema's "palette" gives any: ten hues that
// stay apart in print and for most colour-blind readers (Tableau 10).
var defaultPalette = [][3]int{
	{0x4E, 0x79, 0xA7}, {0xF2, 0x8E, 0x2B}, {0xE1, 0x57, 0x59}, {0x76, 0xB7, 0xB2}, {0x59, 0xA1, 0x4F},
	{0xED, 0xC9, 0x48}, {0xB0, 0x7A, 0xA1}, {0xFF, 0x9D, 0xA7}, {0x9C, 0x75, 0x5F}, {0xBA, 0xB0, 0xAC},
}

// chartElement is a chart: bars, lines, areas, a pie or donut, or points,
// drawn as vectors with real text in PDF and as a native chart over the
// cells it writes in XLSX.
type chartElement struct {
	kind       string
	stacked    bool // bar, area: series on top of each other
	horizontal bool // bar: bars grow to the right
	title      *textTemplate
	// items yields the data, one category per element (bound to "as");
	// an object's entries are taken in key order as {key, value}.
	items      *expression
	as         string
	category   *expression // per item: the category label
	categories *expression // or an array of labels
	litCats    []string    // or labels written into the template
	series     []*chartSeries
	xAxis      chartAxis
	yAxis      chartAxis
	legend     string // "bottom", "right", "top" or "none"; "" decides by the data
	colors     [][3]int
	width      float64 // millimetres; 0 is the content width
	height     float64 // millimetres; 0 is defaultChartH
	align      string
	style      textStyle // labels; the title is bold and larger
	empty      *textTemplate
	showValues bool // values on bars and percentages on slices
}

// chartSeries is one series: its values per item ("value"), as an array
// ("values", an expression or numbers written into the template), and for
// scatter charts the x values likewise ("x", "xValues").
type chartSeries struct {
	label    *textTemplate
	value    *expression
	values   *expression
	litVals  []float64 // NaN for null
	hasLit   bool
	x        *expression
	xValues  *expression
	litXs    []float64
	hasLitXs bool
	color    [3]int
	colorSet bool
}

// chartAxis is one axis's title, number format, bounds and gridlines.
type chartAxis struct {
	title     *textTemplate
	format    cellFormat
	formatSet bool
	min, max  float64 // NaN: from the data
	gridlines bool
}

func (e *chartElement) fontStyles() fontStyle {
	return e.style.fontStyles() | styleOf(true, e.style.italic)
}

func (e *chartElement) refs() elementRefs {
	r := elementRefs{}
	for _, x := range []*expression{e.items, e.category, e.categories} {
		if x != nil {
			r.exprs = append(r.exprs, x)
		}
	}
	for _, tt := range []*textTemplate{e.title, e.xAxis.title, e.yAxis.title, e.empty} {
		if tt != nil {
			r.texts = append(r.texts, tt)
		}
	}
	for _, s := range e.series {
		r.texts = append(r.texts, s.label)
		for _, x := range []*expression{s.value, s.values, s.x, s.xValues} {
			if x != nil {
				r.exprs = append(r.exprs, x)
			}
		}
	}
	return r
}

// boundNames are the names the chart's per-item expressions see.
func (e *chartElement) boundNames() []string { return []string{e.as, "index"} }

// pie reports whether the chart is a pie or a donut.
func (e *chartElement) pie() bool { return e.kind == chartPie || e.kind == chartDonut }

func parseChart(c *compiler, path string, props object, _ depth) element {
	e := &chartElement{as: chartAs, kind: chartBar}
	if s, ok := c.str(props, path, "chartType"); ok {
		kind := strings.ToLower(strings.TrimSpace(s))
		if !contains(chartKinds, kind) {
			c.add(path+".chartType", "unknown chart type %q: use %s", clip(s, 40), strings.Join(chartKinds, ", "))
		} else {
			e.kind = kind
		}
	} else if !props.present("chartType") {
		c.add(path+".chartType", "is required: one of %s", strings.Join(chartKinds, ", "))
	}
	if b, ok := c.boolean(props, path, "stacked"); ok {
		e.stacked = b
		if b && e.kind != chartBar && e.kind != chartArea {
			c.add(path+".stacked", "applies to bar and area charts")
		}
	}
	if b, ok := c.boolean(props, path, "horizontal"); ok {
		e.horizontal = b
		if b && e.kind != chartBar {
			c.add(path+".horizontal", "applies to bar charts")
		}
	}
	if b, ok := c.boolean(props, path, "showValues"); ok {
		e.showValues = b
	}
	if s, ok := c.str(props, path, "title"); ok {
		e.title = c.compileText(path+".title", s)
	}
	if s, ok := c.str(props, path, "emptyText"); ok {
		e.empty = c.compileText(path+".emptyText", s)
	} else {
		e.empty = c.compileText(path+".emptyText", defaultEmptyNote)
	}
	if src, ok := c.str(props, path, "items"); ok {
		e.items = c.compileExpr(path+".items", unwrapPlaceholder(src))
	}
	if as, ok := c.str(props, path, "as"); ok {
		if msg := checkName(as); msg != "" {
			c.add(path+".as", "%s", msg)
		}
		e.as = as
	}
	if src, ok := c.str(props, path, "category"); ok {
		e.category = c.compileExpr(path+".category", unwrapPlaceholder(src))
		if e.items == nil {
			c.add(path+".category", "needs \"items\": it is evaluated for each item")
		}
	}
	if props.present("categories") {
		e.categories, e.litCats = c.chartLabels(path+".categories", props.raw("categories"))
		if e.category != nil {
			c.add(path+".categories", "give either \"category\" (for each item) or \"categories\", not both")
		}
	}
	c.parseChartSeries(path, props, e)
	e.xAxis = c.parseChartAxis(path+".xAxis", props, "xAxis")
	e.yAxis = c.parseChartAxis(path+".yAxis", props, "yAxis")
	e.legend = c.oneOf(props, path, "legend", "", "bottom", "right", "top", "none")
	e.colors = c.chartColors(path+".colors", props, "colors")
	if e.colors == nil {
		e.colors = c.palette
	}
	e.width = c.length(props, path, "width", minChartSide, maxLength, 0)
	e.height = c.length(props, path, "height", minChartSide, maxLength, 0)
	e.align = c.alignment(props, path)
	e.style = c.parseStyle(path, props, textStyle{size: defaultChartFont, align: "L", color: [3]int{0x33, 0x33, 0x33}})
	return e
}

// parseChartSeries reads "series": [{label, value | values, x | xValues, color}].
func (c *compiler) parseChartSeries(path string, props object, e *chartElement) {
	if !props.present("series") {
		c.add(path+".series", "is required: [{\"label\": \"Revenue\", \"value\": \"item.revenue\"}]")
		return
	}
	items, ok := c.array(path+".series", props.raw("series"))
	if !ok {
		return
	}
	switch {
	case len(items) == 0:
		c.add(path+".series", "must hold at least one series")
		return
	case len(items) > maxChartSeries:
		c.add(path+".series", "has %d series, maximum %d", len(items), maxChartSeries)
		return
	case e.pie() && len(items) > 1:
		c.add(path+".series", "a %s chart draws one series", e.kind)
	}
	for i, raw := range items {
		spath := fmt.Sprintf("%s.series[%d]", path, i)
		o, ok := c.object(spath, raw)
		if !ok {
			continue
		}
		s := &chartSeries{label: &textTemplate{}}
		if lbl, ok := c.str(o, spath, "label"); ok {
			s.label = c.compileText(spath+".label", lbl)
		}
		s.value, s.values, s.litVals, s.hasLit = c.chartValues(spath, o, "value", "values", e)
		if s.value == nil && s.values == nil && !s.hasLit && !o.present("value") && !o.present("values") {
			c.add(spath, "needs \"value\" (an expression evaluated for each item, e.g. \"item.revenue\") or \"values\" (an array of numbers, or an expression that yields one)")
		}
		if e.kind == chartScatter {
			s.x, s.xValues, s.litXs, s.hasLitXs = c.chartValues(spath, o, "x", "xValues", e)
			if s.x == nil && s.xValues == nil && !s.hasLitXs && !o.present("x") && !o.present("xValues") {
				c.add(spath, "a scatter series needs \"x\" (for each item) or \"xValues\" beside its values")
			}
		}
		if col, ok := c.str(o, spath, "color"); ok {
			rgb, valid := parseColor(col)
			if !valid {
				c.add(spath+".color", "must be a colour written #rrggbb")
			}
			s.color, s.colorSet = rgb, valid
		}
		e.series = append(e.series, s)
	}
}

// chartValues reads a series' per-item expression (key) or its array
// (arrayKey): an expression or numbers written into the template.
func (c *compiler) chartValues(path string, o object, key, arrayKey string, e *chartElement) (each, array *expression, lit []float64, hasLit bool) {
	if src, ok := c.str(o, path, key); ok {
		each = c.compileExpr(path+"."+key, unwrapPlaceholder(src))
		if e.items == nil {
			c.add(path+"."+key, "needs the chart's \"items\": it is evaluated for each item (or give \"%s\", an array)", arrayKey)
		}
	}
	if !o.present(arrayKey) {
		return each, nil, nil, false
	}
	apath := path + "." + arrayKey
	if each != nil {
		c.add(apath, "give either %q or %q, not both", key, arrayKey)
	}
	raw := o.raw(arrayKey)
	var src string
	if json.Unmarshal(raw, &src) == nil {
		return each, c.compileExpr(apath, unwrapPlaceholder(src)), nil, false
	}
	list, ok := c.array(apath, raw)
	if !ok {
		return each, nil, nil, false
	}
	if len(list) > maxChartPoints {
		c.add(apath, "has %d values, maximum %d", len(list), maxChartPoints)
		return each, nil, nil, false
	}
	lit = make([]float64, len(list))
	for i, v := range list {
		var f *float64
		if err := json.Unmarshal(v, &f); err != nil {
			c.add(fmt.Sprintf("%s[%d]", apath, i), "must be a number or null")
			continue
		}
		lit[i] = math.NaN()
		if f != nil {
			lit[i] = *f
		}
	}
	return each, nil, lit, true
}

// chartLabels reads "categories": an expression yielding an array, or an
// array of labels written into the template.
func (c *compiler) chartLabels(path string, raw json.RawMessage) (*expression, []string) {
	var src string
	if json.Unmarshal(raw, &src) == nil {
		return c.compileExpr(path, unwrapPlaceholder(src)), nil
	}
	list, ok := c.array(path, raw)
	if !ok {
		return nil, nil
	}
	if len(list) > maxChartPoints {
		c.add(path, "has %d labels, maximum %d", len(list), maxChartPoints)
		return nil, nil
	}
	out := make([]string, len(list))
	for i, v := range list {
		var x any
		if err := json.Unmarshal(v, &x); err != nil {
			continue
		}
		switch x.(type) {
		case map[string]any, []any:
			c.add(fmt.Sprintf("%s[%d]", path, i), "must be text or a number")
			continue
		}
		out[i] = clip(formatValue(x), maxChartLabel)
		c.checkGlyphs(fmt.Sprintf("%s[%d]", path, i), out[i])
	}
	return nil, out
}

// parseChartAxis reads an axis: {title, format, min, max, gridlines}.
func (c *compiler) parseChartAxis(path string, props object, key string) chartAxis {
	// xAxis is the categories' axis (a scatter chart's x values), yAxis
	// the values', whichever way the bars point; gridlines mark values.
	a := chartAxis{min: math.NaN(), max: math.NaN(), gridlines: key == "yAxis"}
	if !props.present(key) {
		return a
	}
	o, ok := c.object(path, props.raw(key))
	if !ok {
		return a
	}
	if s, ok := c.str(o, path, "title"); ok {
		a.title = c.compileText(path+".title", s)
	}
	if s, ok := c.str(o, path, "format"); ok {
		f, err := parseCellFormat(s, c.locale())
		switch {
		case err != nil:
			c.add(path+".format", "%v", err)
		case !f.numeric():
			c.add(path+".format", "an axis shows numbers: use number, number:2, currency:EUR or percent")
		default:
			a.format, a.formatSet = f, true
		}
	}
	for _, b := range []struct {
		key string
		v   *float64
	}{{"min", &a.min}, {"max", &a.max}} {
		if f, ok := c.number(o, path, b.key); ok {
			if math.Abs(f) > 1e15 {
				c.add(path+"."+b.key, "must be between -1e15 and 1e15")
				continue
			}
			*b.v = f
		}
	}
	if !math.IsNaN(a.min) && !math.IsNaN(a.max) && a.min >= a.max {
		c.add(path+".max", "must be greater than min")
	}
	if b, ok := c.boolean(o, path, "gridlines"); ok {
		a.gridlines = b
	}
	return a
}

// chartColors reads an array of "#rrggbb" colours; nil when absent.
func (c *compiler) chartColors(path string, o object, key string) [][3]int {
	if !o.present(key) {
		return nil
	}
	list, ok := c.array(path, o.raw(key))
	if !ok {
		return nil
	}
	if len(list) == 0 || len(list) > maxChartColors {
		c.add(path, "must hold 1 to %d colours", maxChartColors)
		return nil
	}
	out := make([][3]int, 0, len(list))
	for i, raw := range list {
		var s string
		rgb, valid := [3]int{}, false
		if json.Unmarshal(raw, &s) == nil {
			rgb, valid = parseColor(s)
		}
		if !valid {
			c.add(fmt.Sprintf("%s[%d]", path, i), "must be a colour written #rrggbb")
			continue
		}
		out = append(out, rgb)
	}
	return out
}

// parsePalette reads the schema's "palette": the colours charts use when
// they give none of their own.
func (c *compiler) parsePalette(o object) {
	c.palette = c.chartColors("schema.palette", o, "palette")
}

// colorOf is the colour of series (or slice) i.
func (e *chartElement) colorOf(i int) [3]int {
	if !e.pie() && i < len(e.series) && e.series[i].colorSet {
		return e.series[i].color
	}
	pal := e.colors
	if len(pal) == 0 {
		pal = defaultPalette
	}
	return pal[i%len(pal)]
}
