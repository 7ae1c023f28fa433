package render

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"folio/render/expr/locale"
)

// chartDef is a schema with one chart of the given props.
func chartDef(props string) Definition {
	return schemaDef(`{"sections":[{"id":"b","components":[{"type":"chart","props":` + props + `}]}]}`)
}

// TestChartSchemaErrors checks that bad chart props are schema errors at
// their JSON paths, with messages that say what to write instead.
func TestChartSchemaErrors(t *testing.T) {
	const at = "schema.sections[0].components[0].props"
	cases := []struct {
		name, props, path, message string
	}{
		{"no type", `{"series":[{"values":[1]}]}`, at + ".chartType", "is required"},
		{"unknown type", `{"chartType":"radar","series":[{"values":[1]}]}`, at + ".chartType", `unknown chart type "radar": use bar, line, area, pie, donut, scatter`},
		{"no series", `{"chartType":"bar"}`, at + ".series", "is required"},
		{"empty series", `{"chartType":"bar","series":[]}`, at + ".series", "at least one series"},
		{"series without values", `{"chartType":"bar","series":[{"label":"A"}]}`, at + ".series[0]", `needs "value"`},
		{"text among values", `{"chartType":"line","series":[{"values":[1,"two",3]}]}`, at + ".series[0].values[1]", "must be a number or null"},
		{"value without items", `{"chartType":"bar","series":[{"value":"item.x"}]}`, at + ".series[0].value", `needs the chart's "items"`},
		{"value and values", `{"chartType":"bar","items":"rows","series":[{"value":"item.x","values":[1]}]}`, at + ".series[0].values", "not both"},
		{"bad colour", `{"chartType":"bar","series":[{"values":[1],"color":"red"}]}`, at + ".series[0].color", "#rrggbb"},
		{"bad palette entry", `{"chartType":"bar","colors":["#123456","blue"],"series":[{"values":[1]}]}`, at + ".colors[1]", "#rrggbb"},
		{"horizontal line", `{"chartType":"line","horizontal":true,"series":[{"values":[1]}]}`, at + ".horizontal", "bar charts"},
		{"stacked pie", `{"chartType":"pie","stacked":true,"series":[{"values":[1]}]}`, at + ".stacked", "bar and area"},
		{"two pie series", `{"chartType":"donut","series":[{"values":[1]},{"values":[2]}]}`, at + ".series", "one series"},
		{"date axis", `{"chartType":"bar","yAxis":{"format":"date"},"series":[{"values":[1]}]}`, at + ".yAxis.format", "axis shows numbers"},
		{"min above max", `{"chartType":"bar","yAxis":{"min":10,"max":5},"series":[{"values":[1]}]}`, at + ".yAxis.max", "greater than min"},
		{"scatter without x", `{"chartType":"scatter","series":[{"values":[1]}]}`, at + ".series[0]", `needs "x"`},
		{"bad legend", `{"chartType":"bar","legend":"left","series":[{"values":[1]}]}`, at + ".legend", "bottom, right, top, none"},
		{"too small", `{"chartType":"bar","height":5,"series":[{"values":[1]}]}`, at + ".height", "between 20"},
		{"category without items", `{"chartType":"bar","category":"item.x","series":[{"values":[1]}]}`, at + ".category", `needs "items"`},
		{"nested categories", `{"chartType":"bar","categories":["a",["b"]],"series":[{"values":[1,2]}]}`, at + ".categories[1]", "text or a number"},
		{"bad expression", `{"chartType":"bar","items":"rows[","category":"item.x","series":[{"value":"item.y"}]}`, at + ".items", ""},
		{"too many series", `{"chartType":"line","series":[` + strings.Repeat(`{"values":[1]},`, maxChartSeries) + `{"values":[1]}]}`, at + ".series", "maximum 20"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := MustEngine(t).Compile(chartDef(tc.props))
			var se *SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("Compile = %v, want a schema error", err)
			}
			for _, is := range se.Issues {
				if is.Path == tc.path && strings.Contains(is.Message, tc.message) {
					return
				}
			}
			t.Errorf("no issue at %s containing %q in %v", tc.path, tc.message, se.Issues)
		})
	}
	bad := schemaDef(`{"palette":["#zzz"],"sections":[]}`)
	if _, err := MustEngine(t).Compile(bad); err == nil || !strings.Contains(err.Error(), "schema.palette[0]") {
		t.Errorf("palette: Compile = %v", err)
	}
	// The loop names a chart binds are no undeclared variables.
	def := chartDef(`{"chartType":"bar","items":"rows","as":"r","category":"r.name","series":[{"value":"r.v * index"}]}`)
	def.Variables = []Variable{{Name: "rows", Type: "array"}}
	if w := MustCompile(t, def).Warnings(); len(w) > 0 {
		t.Errorf("warnings: %v", w)
	}
}

// TestChartRenderErrors checks that data a chart cannot draw stops the
// render with an error at the prop it came from, never a panic.
func TestChartRenderErrors(t *testing.T) {
	const at = "schema.sections[0].components[0].props"
	many := make([]any, maxChartPoints+1)
	for i := range many {
		many[i] = map[string]any{"v": i}
	}
	cases := []struct {
		name, props string
		vars        map[string]any
		path, msg   string
	}{
		{"text value", `{"chartType":"bar","items":"rows","category":"item.n","series":[{"value":"item.v"}]}`,
			map[string]any{"rows": []any{map[string]any{"n": "a", "v": 1}, map[string]any{"n": "b", "v": "lots"}}}, at + ".series[0].value", `got text "lots" for item 2`},
		{"items not a list", `{"chartType":"bar","items":"rows","series":[{"value":"item.v"}]}`,
			map[string]any{"rows": 5}, at + ".items", "need an array or an object"},
		{"values not a list", `{"chartType":"line","series":[{"values":"rows"}]}`,
			map[string]any{"rows": "1,2,3"}, at + ".series[0].values", "array of numbers"},
		{"object among values", `{"chartType":"line","series":[{"values":"rows"}]}`,
			map[string]any{"rows": []any{1, map[string]any{}}}, at + ".series[0].values", "at position 2"},
		{"too many points", `{"chartType":"line","items":"rows","series":[{"value":"item.v"}]}`,
			map[string]any{"rows": many}, at + ".items", "at most 5000"},
		{"too many in all", `{"chartType":"line","series":[{"values":"a"},{"values":"a"}]}`,
			map[string]any{"a": many[:3000]}, at + ".series", "at most 5000 values in all"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "too many in all" {
				nums := make([]any, 3000)
				for i := range nums {
					nums[i] = float64(i)
				}
				tc.vars = map[string]any{"a": nums}
			}
			tpl := MustCompile(t, chartDef(tc.props))
			for _, format := range []Format{PDF, XLSX} {
				var buf bytes.Buffer
				_, err := tpl.Render(t.Context(), &buf, format, tc.vars, Options{})
				var xe *ExpressionError
				if !errors.As(err, &xe) || xe.Path != tc.path || !strings.Contains(xe.Message, tc.msg) {
					t.Errorf("%s: Render = %v, want an expression error at %s containing %q", format, err, tc.path, tc.msg)
				}
			}
		})
	}
}

// TestChartEmpty checks that a chart without data draws its frame and
// note in the PDF and an empty table in the workbook.
func TestChartEmpty(t *testing.T) {
	tpl := MustCompile(t, chartDef(`{"chartType":"pie","title":"Shares","items":"rows","category":"item.n","series":[{"value":"item.v"}],"emptyText":"Nothing sold in {{ month }}"}`))
	for _, vars := range []map[string]any{
		{"month": "May"},
		{"month": "May", "rows": []any{}},
		{"month": "May", "rows": []any{map[string]any{"n": "a", "v": nil}}},
		{"month": "May", "rows": []any{map[string]any{"n": "a", "v": 0}, map[string]any{"n": "b", "v": -3}}},
	} {
		text := ExtractText(t, MustRender(t, tpl, vars, Options{}))
		if !strings.Contains(text, "Shares") || !strings.Contains(text, "Nothing sold in May") {
			t.Errorf("%v: pdftotext = %q", vars, text)
		}
		MustRenderFormat(t, tpl, vars, XLSX, Options{})
	}
}

// TestChartPDF renders the chart golden case (every chart type, German
// locale, non-Latin labels) and reads it back: pdftotext finds titles,
// axis titles, locale-formatted ticks, category labels (level and
// upright), legends and slice shares; pdffonts shows the fonts embedded;
// the pages look like their golden pictures (run with -update to redraw
// testdata/chart/page-*.png, then look at them).
func TestChartPDF(t *testing.T) {
	needTool(t, "pdftoppm")
	def, input := LoadCase(t, filepath.Join("testdata", "chart"))
	tpl := MustCompile(t, def)
	if w := tpl.Warnings(); len(w) > 0 {
		t.Errorf("warnings: %v", w)
	}
	pdf := MustRender(t, tpl, input, Options{})
	text := normalise(ExtractText(t, pdf))
	for _, want := range []string{
		"Umsatz nach Monat", "Kanäle (gestapelt)", "Bestellungen pro Tag", "Besucher nach Quelle", "Anteil nach Region", "Tarife", "Top-Produkte", "Preis und Absatz",
		"Euro", "Monat", "Anzahl", "Umsatz in Euro", "Preis", "Stück", // axis titles, upright ones included
		"150.000 €", "100.000", "5.000", "1.500 €", "48.200", // ticks and values in de-DE
		"Januar", "Dezember", "Q1", "Q4", "01.11.", // categories
		"2025", "2026", "Online", "Handel", "Partner", "Suche", "Empfehlung", "DACH", "Россия", "日本", "Free", "Starter", // legends
		"45 %", "30", // shares and the donut's total
		"Folio Pro Jahresli…", "Λογισμικό Add-on",
		"Leeres Diagramm", "Keine Daten für diesen Zeitraum",
	} {
		if !strings.Contains(text, normalise(want)) {
			t.Errorf("pdftotext lacks %q", want)
		}
	}
	if names := fonts(t, pdf); len(names) == 0 {
		t.Error("no fonts embedded")
	}
	path := writeTemp(t, pdf)
	for page := 1; page <= 2; page++ {
		img := renderCrop(t, path, 60, crop{page: page, w: 210, h: 297})
		golden := filepath.Join("testdata", "chart", "page-"+strconv.Itoa(page)+".png")
		if *update {
			var buf bytes.Buffer
			if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, img); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		raw, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run with -update)", err)
		}
		old, err := png.Decode(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		if differ, blocks := blockDifference(old, img); differ*200 > blocks {
			t.Errorf("page %d differs from %s in %d of %d blocks (run with -update and look at it)", page, golden, differ, blocks)
		}
	}
}

// TestChartScale checks the axis steps and their labels.
func TestChartScale(t *testing.T) {
	cases := []struct {
		lo, hi, length, space float64
		zero                  bool
		want                  string
	}{
		{0, 122000, 100, 10, true, "0 25000 50000 75000 100000 125000"},
		{65000, 122000, 40, 8, true, "0 25000 50000 75000 100000 125000"},
		{0.13, 0.87, 50, 10, false, "0 0.2 0.4 0.6 0.8 1"},
		{-3, 7, 60, 10, true, "-4 -2 0 2 4 6 8"},
		{5, 5, 60, 10, true, "0 1 2 3 4 5"},
		{math.NaN(), math.NaN(), 60, 10, false, "0 0.2 0.4 0.6 0.8 1"},
	}
	for _, tc := range cases {
		s := fitScale(tc.lo, tc.hi, tc.length, tc.space, tc.zero, math.NaN(), math.NaN())
		var got []string
		for _, v := range s.ticks {
			got = append(got, strconv.FormatFloat(v, 'f', -1, 64))
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("fitScale(%g, %g, %g, %g) = %s, want %s", tc.lo, tc.hi, tc.length, tc.space, strings.Join(got, " "), tc.want)
		}
	}
	de := &formatting{loc: locale.MustParse("de-DE")}
	eur, _ := parseCellFormat("currency:EUR", de.loc)
	pct, _ := parseCellFormat("percent", de.loc)
	for _, tc := range []struct {
		v        float64
		decimals int
		a        chartAxis
		f        *formatting
		want     string
	}{
		{1234.5, 1, chartAxis{}, de, "1.234,5"},
		{1234.5, 1, chartAxis{}, defaultFormatting, "1,234.5"},
		{20000, 0, chartAxis{format: eur, formatSet: true}, de, "20.000 €"},
		{2.5, 1, chartAxis{format: eur, formatSet: true}, de, "2,5 €"},
		{0.25, 2, chartAxis{format: pct, formatSet: true}, de, "25 %"},
		{0.125, 3, chartAxis{format: pct, formatSet: true}, de, "12,5 %"},
	} {
		if got := strings.ReplaceAll(tickLabel(tc.v, tc.decimals, tc.a, tc.f), "\u00a0", " "); got != tc.want {
			t.Errorf("tickLabel(%g, %d) = %q, want %q", tc.v, tc.decimals, got, tc.want)
		}
	}
}

// xmlNode is a generic XML element, read without excelize.
type xmlNode struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Content  string     `xml:",chardata"`
	Children []xmlNode  `xml:",any"`
}

func (n *xmlNode) find(local string) []*xmlNode {
	var out []*xmlNode
	for i := range n.Children {
		c := &n.Children[i]
		if c.XMLName.Local == local {
			out = append(out, c)
		}
		out = append(out, c.find(local)...)
	}
	return out
}

func (n *xmlNode) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// workbookXML reads a workbook's parts straight from the zip.
type workbookXML struct {
	parts   map[string][]byte
	strings []string
}

func readWorkbookXML(t *testing.T, data []byte) *workbookXML {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	w := &workbookXML{parts: map[string][]byte{}}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		w.parts[f.Name], _ = io.ReadAll(rc)
		rc.Close()
	}
	if raw, ok := w.parts["xl/sharedStrings.xml"]; ok {
		root := w.node(t, raw)
		for _, si := range root.find("si") {
			var b strings.Builder
			for _, tn := range si.find("t") {
				b.WriteString(tn.Content)
			}
			w.strings = append(w.strings, b.String())
		}
	}
	return w
}

func (w *workbookXML) node(t *testing.T, raw []byte) *xmlNode {
	t.Helper()
	var n xmlNode
	if err := xml.Unmarshal(raw, &n); err != nil {
		t.Fatal(err)
	}
	return &n
}

// cells returns a sheet part's cells by reference, as text.
func (w *workbookXML) cells(t *testing.T, part string) map[string]string {
	t.Helper()
	out := map[string]string{}
	root := w.node(t, w.parts[part])
	for _, c := range root.find("c") {
		v := ""
		if vs := c.find("v"); len(vs) > 0 {
			v = vs[0].Content
		}
		switch c.attr("t") {
		case "s":
			i, _ := strconv.Atoi(v)
			v = w.strings[i]
		case "inlineStr":
			v = ""
			for _, tn := range c.find("t") {
				v += tn.Content
			}
		}
		out[c.attr("r")] = v
	}
	return out
}

var rangeRef = regexp.MustCompile(`^'(.+)'!\$([A-Z]+)\$(\d+)(?::\$([A-Z]+)\$(\d+))?$`)

// rangeValues returns the values of the cells a chart formula refers to.
func rangeValues(t *testing.T, cells map[string]string, ref string) []string {
	t.Helper()
	m := rangeRef.FindStringSubmatch(ref)
	if m == nil {
		t.Fatalf("reference %q is not a sheet range", ref)
	}
	col, from := m[2], m[3]
	to := from
	if m[4] != "" {
		if m[4] != col {
			t.Fatalf("reference %q spans columns", ref)
		}
		to = m[5]
	}
	a, _ := strconv.Atoi(from)
	b, _ := strconv.Atoi(to)
	var out []string
	for r := a; r <= b; r++ {
		out = append(out, cells[col+strconv.Itoa(r)])
	}
	return out
}

// TestChartXLSX reads the chart golden case's workbook as XML, without
// excelize: every chart is a native chart of the right type in a drawing
// of the sheet, and its series' names, categories and values refer to
// cells that hold the labels and numbers of the data.
func TestChartXLSX(t *testing.T) {
	def, input := LoadCase(t, filepath.Join("testdata", "chart"))
	data, _ := MustRenderFormat(t, MustCompile(t, def), input, XLSX, Options{})
	w := readWorkbookXML(t, data)
	if !bytes.Contains(w.parts["xl/worksheets/sheet1.xml"], []byte("<drawing ")) {
		t.Fatal("the sheet has no drawing")
	}
	cells := w.cells(t, "xl/worksheets/sheet1.xml")
	var charts []string
	for name := range w.parts {
		if strings.HasPrefix(name, "xl/charts/chart") {
			charts = append(charts, name)
		}
	}
	sort.Slice(charts, func(i, j int) bool {
		return len(charts[i]) < len(charts[j]) || len(charts[i]) == len(charts[j]) && charts[i] < charts[j]
	})
	type want struct {
		element, detail string // the plot's element and its barDir/grouping
		series          []string
		first           []string // the first series' first categories and values
	}
	months := input["months"].([]any)
	monthName := func(i int) string { return months[i].(map[string]any)["name"].(string) }
	monthValue := func(i int, key string) string {
		return strconv.FormatFloat(months[i].(map[string]any)[key].(float64), 'f', -1, 64)
	}
	wants := []want{
		{"barChart", "col clustered", []string{"2025", "2026"}, []string{monthName(0), monthValue(0, "prev")}},
		{"barChart", "col stacked", []string{"Online", "Handel", "Partner"}, []string{monthName(0), monthValue(0, "online")}},
		{"lineChart", "", []string{"Bestellungen", "Retouren"}, []string{"01.11.", "49"}},
		{"areaChart", "stacked", []string{"Suche", "Direkt", "Empfehlung"}, []string{"Q1", "1200.5"}},
		{"pieChart", "", []string{"Umsatz"}, []string{"DACH", "41250.5"}},
		{"doughnutChart", "", []string{"Kunden"}, []string{"Free", "14"}},
		{"barChart", "bar clustered", []string{"Umsatz"}, []string{"Folio Pro Jahreslizenz", "48200"}},
		{"scatterChart", "", []string{"Produkte"}, []string{"480", "100"}},
	}
	if len(charts) != len(wants)+1 {
		t.Fatalf("%d charts (%v), want %d (the empty chart is one too)", len(charts), charts, len(wants)+1)
	}
	for i, wt := range wants {
		root := w.node(t, w.parts[charts[i]])
		plots := root.find(wt.element)
		if len(plots) != 1 {
			t.Errorf("%s: no %s", charts[i], wt.element)
			continue
		}
		var detail []string
		for _, k := range []string{"barDir", "grouping"} {
			if n := plots[0].find(k); len(n) > 0 {
				detail = append(detail, n[0].attr("val"))
			}
		}
		if got := strings.Join(detail, " "); wt.detail != "" && got != wt.detail {
			t.Errorf("%s: %s", charts[i], got)
		}
		sers := plots[0].find("ser")
		var names []string
		for _, s := range sers {
			names = append(names, rangeValues(t, cells, s.find("tx")[0].find("f")[0].Content)...)
		}
		if strings.Join(names, "|") != strings.Join(wt.series, "|") {
			t.Errorf("%s: series %q, want %q", charts[i], names, wt.series)
		}
		catTag, valTag := "cat", "val"
		if wt.element == "scatterChart" {
			catTag, valTag = "xVal", "yVal"
		}
		cats := rangeValues(t, cells, sers[0].find(catTag)[0].find("f")[0].Content)
		vals := rangeValues(t, cells, sers[0].find(valTag)[0].find("f")[0].Content)
		if len(cats) != len(vals) || len(cats) == 0 {
			t.Errorf("%s: %d categories, %d values", charts[i], len(cats), len(vals))
			continue
		}
		if cats[0] != wt.first[0] || vals[0] != wt.first[1] {
			t.Errorf("%s: first point %q %q, want %q", charts[i], cats[0], vals[0], wt.first)
		}
	}
	// The data ranges cover every category: twelve months, thirty days.
	root := w.node(t, w.parts[charts[0]])
	if got := rangeValues(t, cells, root.find("cat")[0].find("f")[0].Content); len(got) != 12 || got[11] != monthName(11) {
		t.Errorf("months: %q", got)
	}
	root = w.node(t, w.parts[charts[2]])
	if got := rangeValues(t, cells, root.find("val")[0].find("f")[0].Content); len(got) != 30 {
		t.Errorf("days: %d values", len(got))
	}
	// A missing value is an empty cell, which the chart shows as a gap.
	root = w.node(t, w.parts[charts[3]])
	if got := rangeValues(t, cells, root.find("ser")[2].find("val")[0].find("f")[0].Content); strings.Join(got, "|") != "300||520|610" {
		t.Errorf("area with a gap: %q", got)
	}
}

// TestExampleReportCharts checks the monthly report example's three
// charts: their titles, legends and ticks in the PDF, and a native
// doughnut and line chart on the Summary sheet and a bar chart on Top
// products, over the cells that hold the example's figures.
func TestExampleReportCharts(t *testing.T) {
	ex, input := LoadExample(t, "monthly-report")
	tpl := MustCompile(t, ex.Definition)
	text := normalise(ExtractText(t, MustRender(t, tpl, input, Options{})))
	for _, want := range []string{"Revenue share by region", "Daily revenue and refunds", "Revenue by product", "Revenue (EUR)",
		"DACH", "Nordics", "Refunds", "€7,500", "1 Nov", "Growth plan", "23,840"} {
		if !strings.Contains(text, normalise(want)) {
			t.Errorf("pdftotext lacks %q", want)
		}
	}
	data, _ := MustRenderFormat(t, tpl, input, XLSX, Options{})
	w := readWorkbookXML(t, data)
	for _, c := range []struct {
		chart, sheet, element, first, value string
	}{
		{"xl/charts/chart1.xml", "xl/worksheets/sheet1.xml", "doughnutChart", "DACH", "48210.5"},
		{"xl/charts/chart2.xml", "xl/worksheets/sheet1.xml", "lineChart", "1 Nov", "4754.43"},
		{"xl/charts/chart3.xml", "xl/worksheets/sheet3.xml", "barChart", "Growth plan", "23840"},
	} {
		root := w.node(t, w.parts[c.chart])
		plot := root.find(c.element)
		if len(plot) != 1 {
			t.Errorf("%s: no %s", c.chart, c.element)
			continue
		}
		cells := w.cells(t, c.sheet)
		ser := plot[0].find("ser")[0]
		cats := rangeValues(t, cells, ser.find("cat")[0].find("f")[0].Content)
		vals := rangeValues(t, cells, ser.find("val")[0].find("f")[0].Content)
		if len(cats) == 0 || cats[0] != c.first || vals[0] != c.value {
			t.Errorf("%s: first point %q %q, want %q %q", c.chart, cats, vals, c.first, c.value)
		}
	}
}

// openpyxlScript prints every chart of a workbook as openpyxl reads it:
// sheet, chart class, bar direction and grouping, then per series its
// name's cell, its categories' and values' ranges and the values of the
// cells those ranges cover.
const openpyxlScript = `
import sys, openpyxl
from openpyxl.utils.cell import range_boundaries
wb = openpyxl.load_workbook(sys.argv[1])
def cells(ref):
    sheet, rng = ref.rsplit('!', 1)
    ws = wb[sheet.strip("'")]
    c1, r1, c2, r2 = range_boundaries(rng.replace('$', ''))
    return [ws.cell(row=r, column=c).value for r in range(r1, r2 + 1) for c in range(c1, c2 + 1)]
for ws in wb.worksheets:
    for ch in ws._charts:
        print(ws.title, type(ch).__name__, getattr(ch, 'barDir', ''), getattr(ch, 'grouping', ''))
        for s in ch.series:
            cat = s.cat or s.xVal
            val = s.val or s.yVal
            catref = cat.strRef.f if cat.strRef else cat.numRef.f
            print(' ', cells(s.tx.strRef.f), cells(catref)[:2], cells(val.numRef.f)[:2], len(cells(val.numRef.f)))
`

// TestChartXLSXOpenpyxl reads the chart golden case's workbook with
// openpyxl, an implementation independent of excelize: every chart is
// found with its type, and its series refer to cells holding the data.
func TestChartXLSXOpenpyxl(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import openpyxl").Run(); err != nil {
		t.Skip("python3-openpyxl not installed")
	}
	def, input := LoadCase(t, filepath.Join("testdata", "chart"))
	data, _ := MustRenderFormat(t, MustCompile(t, def), input, XLSX, Options{})
	path := filepath.Join(t.TempDir(), "charts.xlsx")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("/usr/bin/python3", "-c", openpyxlScript, path).CombinedOutput()
	if err != nil {
		t.Fatalf("openpyxl: %v\n%s", err, out)
	}
	got := string(out)
	for _, want := range []string{
		"Diagramme BarChart col clustered\n  ['2025'] ['Januar', 'Februar'] [65679.28, 71652.9] 12\n",
		"Diagramme BarChart col stacked\n  ['Online'] ['Januar', 'Februar']",
		"Diagramme LineChart  standard\n  ['Bestellungen'] ['01.11.', '02.11.'] [49, 47] 30\n",
		"Diagramme AreaChart  stacked\n  ['Suche'] ['Q1', 'Q2'] [1200.5, 1850] 4\n",
		"Diagramme PieChart  \n  ['Umsatz'] ['DACH', 'Benelux'] [41250.5, 18900] 6\n",
		"Diagramme DoughnutChart  \n  ['Kunden'] ['Free', 'Growth'] [14, 5] 4\n",
		"Diagramme BarChart bar clustered\n  ['Umsatz'] ['Folio Pro Jahreslizenz', 'Vorlagenpaket Rechnungen'] [48200, 21350] 6\n",
		"Diagramme ScatterChart  \n  ['Produkte'] [480, 49] [100, 435] 6\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("openpyxl lacks %q in:\n%s", want, got)
		}
	}
}

// TestChartColors checks where colours come from, in the PDF's pixels
// and the workbook's chart XML: a series' own color, then the chart's
// colors, then the schema's palette.
func TestChartColors(t *testing.T) {
	needTool(t, "pdftoppm")
	tpl := MustCompile(t, schemaDef(`{"palette":["#ff0000","#00c000"],"sections":[{"id":"b","components":[
		{"type":"chart","props":{"chartType":"bar","categories":["a","b"],"series":[{"label":"P","values":[5,6]},{"label":"S","values":[4,3],"color":"#0000ff"}],"height":40}},
		{"type":"chart","props":{"chartType":"pie","colors":["#ffff00"],"categories":["a"],"series":[{"values":[1]}],"height":30}}]}]}`))
	pdf := MustRender(t, tpl, nil, Options{})
	out := filepath.Join(t.TempDir(), "page")
	if b, err := exec.Command("pdftoppm", "-png", "-r", "30", "-f", "1", "-l", "1", "-singlefile", writeTemp(t, pdf), out).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v: %s", err, b)
	}
	raw, err := os.ReadFile(out + ".png")
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			r, g, bl = r>>8, g>>8, bl>>8
			switch {
			case r > 220 && g < 40 && bl < 40:
				count["red (palette)"]++
			case bl > 220 && r < 40 && g < 40:
				count["blue (series color)"]++
			case r > 220 && g > 220 && bl < 40:
				count["yellow (chart colors)"]++
			case g > 170 && r < 40 && bl < 40:
				count["green (unused)"]++
			}
		}
	}
	for _, want := range []string{"red (palette)", "blue (series color)", "yellow (chart colors)"} {
		if count[want] < 20 {
			t.Errorf("%s: %d pixels (%v)", want, count[want], count)
		}
	}
	if count["green (unused)"] > 0 {
		t.Errorf("the palette's second colour is drawn: %v", count)
	}
	data, _ := MustRenderFormat(t, tpl, nil, XLSX, Options{})
	w := readWorkbookXML(t, data)
	for part, want := range map[string][]string{"xl/charts/chart1.xml": {"FF0000", "0000FF"}, "xl/charts/chart2.xml": {"FFFF00"}} {
		root := w.node(t, w.parts[part])
		var got []string
		for _, ser := range root.find("ser") {
			for _, c := range ser.find("srgbClr") {
				got = append(got, c.attr("val"))
				break
			}
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: series colours %v, want %v", part, got, want)
		}
	}
}
