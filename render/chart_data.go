package render

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// chartData is a chart's data once evaluated: what both output formats draw.
type chartData struct {
	title          string
	xTitle, yTitle string
	empty          string // the note an empty chart shows
	categories     []string
	series         []seriesData
}

// seriesData is one series' label, colour and values; NaN is a missing
// value (a gap in a line, no bar). xs are a scatter series' x values.
type seriesData struct {
	label  string
	color  [3]int
	values []float64
	xs     []float64
}

// points is the number of values the chart holds.
func (d *chartData) points() int {
	n := 0
	for _, s := range d.series {
		n += len(s.values)
	}
	return n
}

// isEmpty reports whether the chart has nothing to draw.
func (d *chartData) isEmpty() bool {
	for _, s := range d.series {
		for _, v := range s.values {
			if !math.IsNaN(v) {
				return false
			}
		}
	}
	return true
}

// evalChart evaluates a chart's data in env.
func (r *run) evalChart(c *component, e *chartElement, env map[string]any) (*chartData, error) {
	d := &chartData{}
	var err error
	text := func(tt *textTemplate) string {
		if tt == nil || err != nil {
			return ""
		}
		var s string
		s, err = tt.render(r.ev, env)
		return clip(strings.TrimSpace(s), maxChartLabel)
	}
	d.title, d.xTitle, d.yTitle, d.empty = text(e.title), text(e.xAxis.title), text(e.yAxis.title), text(e.empty)
	if err != nil {
		return nil, err
	}
	var items []any
	if e.items != nil {
		v, err := r.ev.run(e.items, env)
		if err != nil {
			return nil, err
		}
		items, err = chartItems(c, e, v)
		if err != nil {
			return nil, err
		}
	}
	// Item environments share one map: a chart's expressions only read.
	var itemEnv map[string]any
	if items != nil {
		itemEnv = make(map[string]any, len(env)+2)
		for k, v := range env {
			itemEnv[k] = v
		}
	}
	each := func(x *expression, fn func(i int, v any) error) error {
		for i, item := range items {
			itemEnv[e.as], itemEnv["index"] = item, i
			v, err := r.ev.run(x, itemEnv)
			if err != nil {
				return err
			}
			if err := fn(i, v); err != nil {
				return err
			}
		}
		return nil
	}
	switch {
	case e.category != nil:
		d.categories = make([]string, len(items))
		err = each(e.category, func(i int, v any) error {
			d.categories[i] = chartLabel(v)
			return nil
		})
	case e.categories != nil:
		var v any
		if v, err = r.ev.run(e.categories, env); err == nil {
			list, ok := toList(v)
			if !ok {
				return nil, chartValueError(c, "categories", e.categories, fmt.Sprintf("chart categories need an array, got %s", describe(v)))
			}
			if len(list) > maxChartPoints {
				return nil, chartValueError(c, "categories", e.categories, fmt.Sprintf("a chart draws at most %d categories, got %d: aggregate the data first (groupBy, take)", maxChartPoints, len(list)))
			}
			d.categories = make([]string, len(list))
			for i, x := range list {
				d.categories[i] = chartLabel(x)
			}
		}
	case e.litCats != nil:
		d.categories = e.litCats
	}
	if err != nil {
		return nil, err
	}
	for i, s := range e.series {
		sd := seriesData{color: e.colorOf(i)}
		if sd.label, err = s.label.render(r.ev, env); err != nil {
			return nil, err
		}
		sd.label = clip(strings.TrimSpace(sd.label), maxChartLabel)
		if sd.label == "" && !e.pie() {
			sd.label = "Series " + strconv.Itoa(i+1)
		}
		prop := fmt.Sprintf("series[%d]", i)
		if sd.values, err = r.chartNumbers(c, prop, "value", "values", s.value, s.values, s.litVals, s.hasLit, len(items), each, env); err != nil {
			return nil, err
		}
		if e.kind == chartScatter {
			if sd.xs, err = r.chartNumbers(c, prop, "x", "xValues", s.x, s.xValues, s.litXs, s.hasLitXs, len(items), each, env); err != nil {
				return nil, err
			}
			n := min(len(sd.xs), len(sd.values))
			sd.xs, sd.values = sd.xs[:n], sd.values[:n]
		}
		d.series = append(d.series, sd)
		if n := d.points(); n > maxChartPoints {
			return nil, &ExpressionError{Path: c.path + ".props.series", Message: fmt.Sprintf("a chart draws at most %d values in all, got %d or more: aggregate the data first (groupBy, take)", maxChartPoints, n)}
		}
	}
	if e.kind != chartScatter {
		// Every series has a value for every category: missing ones are gaps.
		n := len(d.categories)
		for _, s := range d.series {
			n = max(n, len(s.values))
		}
		for len(d.categories) < n {
			d.categories = append(d.categories, strconv.Itoa(len(d.categories)+1))
		}
		for i := range d.series {
			for len(d.series[i].values) < n {
				d.series[i].values = append(d.series[i].values, math.NaN())
			}
		}
	}
	return d, nil
}

// chartItems turns "items" into a list: an array as it is, an object's
// entries in key order as {key, value} (groupBy's result), nothing for nil.
func chartItems(c *component, e *chartElement, v any) ([]any, error) {
	if m, ok := v.(map[string]any); ok {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make([]any, len(keys))
		for i, k := range keys {
			out[i] = map[string]any{"key": k, "value": m[k]}
		}
		v = out
	} else if rv := reflect.ValueOf(v); rv.Kind() == reflect.Map {
		// groupBy yields map[any][]any: keys sorted by their text, numbers
		// by value.
		keys := rv.MapKeys()
		sort.Slice(keys, func(i, j int) bool {
			a, b := keys[i].Interface(), keys[j].Interface()
			fa, oka := number(a)
			fb, okb := number(b)
			if oka && okb {
				return fa < fb
			}
			return formatValue(a) < formatValue(b)
		})
		if len(keys) > maxChartPoints {
			return nil, chartValueError(c, "items", e.items, fmt.Sprintf("a chart draws at most %d items, got %d: aggregate the data first (groupBy, take)", maxChartPoints, len(keys)))
		}
		out := make([]any, len(keys))
		for i, k := range keys {
			out[i] = map[string]any{"key": k.Interface(), "value": rv.MapIndex(k).Interface()}
		}
		v = out
	}
	n, ok := listLen(v)
	if !ok {
		return nil, chartValueError(c, "items", e.items, fmt.Sprintf("chart items need an array or an object, got %s", describe(v)))
	}
	if n > maxChartPoints {
		return nil, chartValueError(c, "items", e.items, fmt.Sprintf("a chart draws at most %d items, got %d: aggregate the data first (groupBy, take)", maxChartPoints, n))
	}
	list, _ := toList(v)
	return list, nil
}

// chartNumbers evaluates one series' numbers: per item, from an array
// expression, or as written into the template.
func (r *run) chartNumbers(c *component, prop, key, arrayKey string, each, array *expression, lit []float64, hasLit bool,
	items int, loop func(*expression, func(int, any) error) error, env map[string]any) ([]float64, error) {
	switch {
	case each != nil:
		out := make([]float64, items)
		err := loop(each, func(i int, v any) error {
			f, ok := chartNumber(v)
			if !ok {
				return chartValueError(c, prop+"."+key, each, fmt.Sprintf("chart values must be numbers, got %s for item %d", describe(v), i+1))
			}
			out[i] = f
			return nil
		})
		return out, err
	case array != nil:
		v, err := r.ev.run(array, env)
		if err != nil {
			return nil, err
		}
		list, ok := toList(v)
		if !ok {
			return nil, chartValueError(c, prop+"."+arrayKey, array, fmt.Sprintf("chart values need an array of numbers, got %s", describe(v)))
		}
		if len(list) > maxChartPoints {
			return nil, chartValueError(c, prop+"."+arrayKey, array, fmt.Sprintf("a chart draws at most %d values, got %d: aggregate the data first (groupBy, take)", maxChartPoints, len(list)))
		}
		out := make([]float64, len(list))
		for i, x := range list {
			f, ok := chartNumber(x)
			if !ok {
				return nil, chartValueError(c, prop+"."+arrayKey, array, fmt.Sprintf("chart values must be numbers, got %s at position %d", describe(x), i+1))
			}
			out[i] = f
		}
		return out, nil
	case hasLit:
		return lit, nil
	}
	return nil, nil
}

// chartNumber reads a value: a number or numeric text; nil is missing (NaN).
func chartNumber(v any) (float64, bool) {
	if v == nil {
		return math.NaN(), true
	}
	if s, ok := v.(string); ok && strings.TrimSpace(s) == "" {
		return math.NaN(), true
	}
	f, ok := number(v)
	if ok && math.Abs(f) > 1e15 {
		return 0, false // beyond what an axis can show
	}
	return f, ok
}

// chartLabel is the text of a category.
func chartLabel(v any) string {
	return clip(strings.TrimSpace(formatValue(v)), maxChartLabel)
}

func chartValueError(c *component, prop string, x *expression, msg string) error {
	src := ""
	if x != nil {
		src = clip(x.src, 200)
	}
	return &ExpressionError{Path: c.path + ".props." + prop, Expression: src, Message: msg}
}
