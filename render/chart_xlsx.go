package render

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/xuri/excelize/v2"
)

// In a workbook a chart is its data, written as a small table where the
// chart sits in the sheet (a header row of series labels, then one row
// per category), and a native chart anchored beside that table whose
// series refer to its cells: change a number and the chart follows,
// restyle the chart in the spreadsheet application. Blank rows below the
// table leave room for the chart, so what follows starts under it.

// Spreadsheet chart geometry.
const (
	xlsxRowPixels   = 20  // a row of the default height (15 points) at 96 dpi
	xlsxColPixels   = 56  // a column at its narrowest fitted width, about
	xlsxChartWidth  = 480 // pixels, when the chart gives no width
	xlsxChartMaxPix = 2000
	// chartCellBytes estimates the chart XML and the drawing a value adds.
	chartCellBytes = 160
	// xlsxChartBytes is what excelize holds for a chart (its chart and
	// drawing models) until the workbook is written: about 120 KB of peak
	// heap a chart, measured with 100 and 400 charts of a loop.
	xlsxChartBytes = 128 << 10
)

// xlsxChart is a chart waiting for its table's position: the sheet writer
// adds it when it writes the cell that carries it (the table's top left
// cell), which fixes the cell ranges it refers to.
type xlsxChart struct {
	e       *chartElement
	d       *chartData
	rows    int // data rows below the header row
	titled  bool
	formats struct{ x, y string } // number formats of x (scatter) and y values
}

// chartRows writes a chart's table and leaves room for the chart.
func (x *xlsxWriter) chartRows(c *component, e *chartElement, env map[string]any, out rowSink) error {
	d, err := x.evalChart(c, e, env)
	if err != nil {
		return err
	}
	if err := x.mem.hold(int64(d.points()+len(d.categories))*chartCellBytes + xlsxChartBytes); err != nil {
		return err
	}
	ch := &xlsxChart{e: e, d: d}
	if e.yAxis.formatSet {
		ch.formats.y = e.yAxis.format.excel
	}
	if e.xAxis.formatSet {
		ch.formats.x = e.xAxis.format.excel
	}
	bold := xstyle{bold: true}
	head := xstyle{bold: true, header: true}
	written := 0
	if d.title != "" {
		if err := out.row([]xcell{{v: xlsxText(d.title), style: xstyle{bold: true, size: 12}}}); err != nil {
			return err
		}
		written++
		ch.titled = true
	}
	scatter := e.kind == chartScatter
	// The header: the categories' title, then each series' label (a
	// scatter series has an x and a y column).
	header := []xcell{{v: textOrNil(d.xTitle), style: head, chart: ch}}
	if scatter {
		header = header[:0]
		for _, s := range d.series {
			xt := d.xTitle
			if xt == "" {
				xt = "x"
			}
			header = append(header, xcell{v: xlsxText(xt), style: head}, xcell{v: xlsxText(s.label), style: head})
		}
		header[0].chart = ch
	} else {
		for _, s := range d.series {
			header = append(header, xcell{v: textOrNil(s.label), style: head, fit: displayWidth(s.label)})
		}
	}
	// Blank cells to the right claim the chart's width, so columns
	// beside the chart start after it.
	wPx, _ := ch.size()
	for k := len(header); k < ch.cols()+1+int(math.Ceil(float64(wPx)/xlsxColPixels))+1; k++ {
		header = append(header, xcell{})
	}
	if err := out.row(header); err != nil {
		return err
	}
	written++
	n := len(d.categories)
	if scatter {
		n = 0
		for _, s := range d.series {
			n = max(n, len(s.values))
		}
	}
	ch.rows = n
	num := func(v float64, format string) xcell {
		if math.IsNaN(v) {
			return xcell{}
		}
		return xcell{v: v, style: xstyle{numFmt: format}}
	}
	for i := 0; i < n; i++ {
		var r []xcell
		if scatter {
			for _, s := range d.series {
				if i < len(s.values) {
					r = append(r, num(s.xs[i], ch.formats.x), num(s.values[i], ch.formats.y))
				} else {
					r = append(r, xcell{}, xcell{})
				}
			}
		} else {
			cat := xlsxText(d.categories[i])
			r = append(r, xcell{v: cat, style: bold, fit: displayWidth(cat)})
			for _, s := range d.series {
				r = append(r, num(s.values[i], ch.formats.y))
			}
		}
		if err := out.row(trimRow(r)); err != nil {
			return err
		}
		written++
	}
	_, hPx := ch.size()
	room := int(math.Ceil(float64(hPx)/xlsxRowPixels)) + 1
	for ; written < room; written++ {
		if err := out.row(nil); err != nil {
			return err
		}
	}
	return out.row(nil)
}

// size is the chart's size in pixels at 96 dpi.
func (ch *xlsxChart) size() (w, h uint) {
	px := func(mm, def float64) uint {
		if mm <= 0 {
			return uint(def)
		}
		return uint(min(mm/25.4*96, xlsxChartMaxPix))
	}
	height := ch.e.height
	if height <= 0 {
		height = defaultChartH
	}
	return px(ch.e.width, xlsxChartWidth), px(height, 0)
}

// cols is how many columns the chart's table takes.
func (ch *xlsxChart) cols() int {
	if ch.e.kind == chartScatter {
		return 2 * len(ch.d.series)
	}
	return 1 + len(ch.d.series)
}

// addChart adds a chart whose table's header row starts at column col,
// row row (both from 1) of the sheet.
func (x *xlsxWriter) addChart(sheet string, col, row int, ch *xlsxChart) error {
	e, d := ch.e, ch.d
	ref := func(c, r1, r2 int) string {
		name, _ := excelize.ColumnNumberToName(c)
		q := "'" + strings.ReplaceAll(sheet, "'", "''") + "'"
		if r1 == r2 {
			return fmt.Sprintf("%s!$%s$%d", q, name, r1)
		}
		return fmt.Sprintf("%s!$%s$%d:$%s$%d", q, name, r1, name, r2)
	}
	first, last := row+1, row+max(ch.rows, 1)
	vary := e.pie() // one colour a slice; a series keeps its colour
	chart := &excelize.Chart{ShowBlanksAs: "gap", VaryColors: &vary}
	w, h := ch.size()
	chart.Dimension = excelize.ChartDimension{Width: w, Height: h}
	switch e.kind {
	case chartBar:
		chart.Type = excelize.Col
		switch {
		case e.horizontal && e.stacked:
			chart.Type = excelize.BarStacked
		case e.horizontal:
			chart.Type = excelize.Bar
		case e.stacked:
			chart.Type = excelize.ColStacked
		}
		if e.stacked {
			overlap := 100
			chart.Overlap = &overlap
		}
	case chartLine:
		chart.Type = excelize.Line
	case chartArea:
		chart.Type = excelize.Area
		if e.stacked {
			chart.Type = excelize.AreaStacked
		}
	case chartPie:
		chart.Type = excelize.Pie
	case chartDonut:
		chart.Type = excelize.Doughnut
		chart.HoleSize = 58
	case chartScatter:
		chart.Type = excelize.Scatter
	}
	hex := func(c [3]int) []string { return []string{fmt.Sprintf("%02X%02X%02X", c[0], c[1], c[2])} }
	for i, s := range d.series {
		cs := excelize.ChartSeries{}
		if e.kind == chartScatter {
			cs.Name = ref(col+2*i+1, row, row)
			cs.Categories = ref(col+2*i, first, last)
			cs.Values = ref(col+2*i+1, first, last)
			cs.Marker = excelize.ChartMarker{Symbol: "circle", Size: 6, Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: hex(s.color)}}
		} else {
			cs.Name = ref(col+1+i, row, row)
			cs.Categories = ref(col, first, last)
			cs.Values = ref(col+1+i, first, last)
			cs.Fill = excelize.Fill{Type: "pattern", Pattern: 1, Color: hex(s.color)}
			if e.kind == chartLine {
				cs.Line = excelize.LineOptions{Width: 1.75}
				cs.Marker = excelize.ChartMarker{Symbol: "circle", Size: 5, Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: hex(s.color)}}
			}
		}
		if e.pie() {
			for j := range d.categories {
				cs.DataPoint = append(cs.DataPoint, excelize.ChartDataPoint{Index: j, Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: hex(e.colorOf(j))}})
			}
		}
		chart.Series = append(chart.Series, cs)
	}
	if d.title != "" {
		chart.Title = excelize.ChartTitle{Paragraph: []excelize.RichTextRun{{Text: d.title, Font: &excelize.Font{Bold: true, Size: 12}}}}
	}
	legend := e.legend
	if legend == "" {
		switch {
		case e.pie():
			legend = "right"
		case len(d.series) > 1:
			legend = "bottom"
		default:
			legend = "none"
		}
	}
	chart.Legend = excelize.ChartLegend{Position: legend}
	if e.pie() {
		chart.PlotArea = excelize.ChartPlotArea{ShowPercent: !e.showValues, ShowVal: e.showValues}
	} else {
		chart.PlotArea = excelize.ChartPlotArea{ShowVal: e.showValues}
		chart.XAxis = xlsxAxis(e.xAxis, d.xTitle, e.kind == chartScatter)
		chart.YAxis = xlsxAxis(e.yAxis, d.yTitle, true)
	}
	at, err := excelize.CoordinatesToCellName(col+ch.cols()+1, row)
	if err != nil {
		return fmt.Errorf("render: chart position: %w", err)
	}
	if err := x.f.AddChart(sheet, at, chart); err != nil {
		return fmt.Errorf("render: adding chart: %w", err)
	}
	return nil
}

// xlsxAxis maps an axis: its title, gridlines, bounds and, for values,
// its number format.
func xlsxAxis(a chartAxis, title string, values bool) excelize.ChartAxis {
	ax := excelize.ChartAxis{MajorGridLines: a.gridlines}
	if title != "" {
		ax.Title = excelize.ChartTitle{Paragraph: []excelize.RichTextRun{{Text: title}}}
	}
	if !values {
		return ax
	}
	if !math.IsNaN(a.min) {
		v := a.min
		ax.Minimum = &v
	}
	if !math.IsNaN(a.max) {
		v := a.max
		ax.Maximum = &v
	}
	if a.formatSet && a.format.excel != "" {
		ax.NumFmt = excelize.ChartNumFmt{CustomNumFmt: a.format.excel}
	}
	return ax
}

// textOrNil is a cell value: the text, or nothing when it is empty.
func textOrNil(s string) any {
	if s = xlsxText(s); s != "" {
		return s
	}
	return nil
}

// defaultType is one <Default> entry of [Content_Types].xml.
var defaultType = regexp.MustCompile(`<Default [^>]*?(?:/>|></Default>)`)

// sortContentTypes puts the <Default> entries of [Content_Types].xml in
// a fixed order: excelize adds the image types of a drawing (a chart's)
// from a map, so the same workbook would come out as different bytes.
// Anything else is left as it is.
func sortContentTypes(b []byte) []byte {
	loc := defaultType.FindAllIndex(b, -1)
	if len(loc) < 2 {
		return b
	}
	start, end := loc[0][0], loc[len(loc)-1][1]
	list := make([]string, len(loc))
	n := 0
	for i, l := range loc {
		list[i] = string(b[l[0]:l[1]])
		n += len(list[i])
	}
	if n != end-start {
		return b // not one run of entries: leave it
	}
	sort.Strings(list)
	out := make([]byte, 0, len(b))
	out = append(out, b[:start]...)
	for _, s := range list {
		out = append(out, s...)
	}
	return append(out, b[end:]...)
}

// copyRewritten copies a part of a package into zw through fn.
func copyRewritten(zw *zip.Writer, f *zip.File, fn func([]byte) []byte) error {
	rc, err := f.Open()
	if err != nil {
		return err
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return err
	}
	out := fn(data)
	if bytes.Equal(out, data) {
		raw, err := f.OpenRaw()
		if err != nil {
			return err
		}
		dst, err := zw.CreateRaw(&f.FileHeader)
		if err != nil {
			return err
		}
		_, err = io.Copy(dst, raw)
		return err
	}
	w, err := zw.CreateHeader(&zip.FileHeader{Name: f.Name, Method: f.Method, Modified: f.Modified})
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}
