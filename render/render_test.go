package render

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"folio/assets"

	"github.com/xuri/excelize/v2"
)

var (
	engineOnce sync.Once
	engine     *Engine
	engineErr  error
)

// scaled stretches a wall-clock bound for the race detector's build. The
// bounds catch a limit that fails to stop a render at all, which ten times
// the time still does.
func scaled(d time.Duration) time.Duration {
	if raceEnabled {
		return 10 * d
	}
	return d
}

// MustEngine returns an engine with the embedded fonts (Noto and the
// fallbacks of package assets), built once per test binary.
func MustEngine(tb testing.TB) *Engine {
	tb.Helper()
	engineOnce.Do(func() {
		engine, engineErr = NewEngine(embeddedFonts())
	})
	if engineErr != nil {
		tb.Fatalf("NewEngine: %v", engineErr)
	}
	return engine
}

// MustCompile compiles a definition whose schema is given as JSON text.
func MustCompile(tb testing.TB, def Definition) *Template {
	tb.Helper()
	tpl, err := MustEngine(tb).Compile(def)
	if err != nil {
		tb.Fatalf("Compile: %v", err)
	}
	return tpl
}

// MustRender checks values and renders a PDF.
func MustRender(tb testing.TB, tpl *Template, input map[string]any, opts Options) []byte {
	tb.Helper()
	values, err := tpl.Values(input)
	if err != nil {
		tb.Fatalf("Values: %v", err)
	}
	var buf bytes.Buffer
	stats, err := tpl.Render(context.Background(), &buf, PDF, values, opts)
	if err != nil {
		tb.Fatalf("Render: %v", err)
	}
	if got, want := stats.Bytes, int64(buf.Len()); got != want {
		tb.Errorf("stats.Bytes = %d, want %d", got, want)
	}
	return buf.Bytes()
}

// schemaDef wraps schema JSON in a definition.
func schemaDef(schema string) Definition {
	return Definition{Schema: json.RawMessage(schema)}
}

// needTool skips the test when a poppler tool is missing.
func needTool(tb testing.TB, name string) {
	tb.Helper()
	if _, err := exec.LookPath(name); err != nil {
		tb.Skipf("%s not installed", name)
	}
}

func writeTemp(tb testing.TB, pdf []byte) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "doc.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// ExtractText returns the text pdftotext finds in a PDF.
func ExtractText(tb testing.TB, pdf []byte, args ...string) string {
	tb.Helper()
	needTool(tb, "pdftotext")
	args = append(append([]string{"-enc", "UTF-8"}, args...), writeTemp(tb, pdf), "-")
	out, err := exec.Command("pdftotext", args...).CombinedOutput()
	if err != nil {
		tb.Fatalf("pdftotext: %v: %s", err, out)
	}
	return string(out)
}

// PDFInfo returns pdfinfo's fields, e.g. "Pages" and "Page size".
func PDFInfo(tb testing.TB, pdf []byte) map[string]string {
	tb.Helper()
	needTool(tb, "pdfinfo")
	out, err := exec.Command("pdfinfo", writeTemp(tb, pdf)).CombinedOutput()
	if err != nil {
		tb.Fatalf("pdfinfo: %v: %s", err, out)
	}
	info := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			info[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return info
}

// PageCount returns the number of pages pdfinfo reports.
func PageCount(tb testing.TB, pdf []byte) int {
	tb.Helper()
	n, err := strconv.Atoi(PDFInfo(tb, pdf)["Pages"])
	if err != nil {
		tb.Fatalf("pdfinfo pages: %v", err)
	}
	return n
}

var bboxWord = regexp.MustCompile(`<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">`)

// WordBoxes returns every word's box (in points) as pdftotext -bbox reports it.
func WordBoxes(tb testing.TB, pdf []byte) [][4]float64 {
	tb.Helper()
	var boxes [][4]float64
	for _, m := range bboxWord.FindAllStringSubmatch(ExtractText(tb, pdf, "-bbox"), -1) {
		var box [4]float64
		for i := range box {
			box[i], _ = strconv.ParseFloat(m[i+1], 64)
		}
		boxes = append(boxes, box)
	}
	return boxes
}

// DumpXLSX describes a workbook as text, one line per non-empty cell with
// its type, style and value, so tests compare content and types, never bytes:
//
//	sheet "Items" frozen=1 widths=A:12,B:30
//	A1 text bold "Invoice"
//	B2 number [#,##0.00] 12.5
//	C2 date [yyyy-mm-dd] 2024-03-01
//	D2 bool TRUE
func DumpXLSX(tb testing.TB, data []byte) string {
	tb.Helper()
	f, err := excelize.OpenReader(bytes.NewReader(data))
	if err != nil {
		tb.Fatalf("excelize cannot open the workbook: %v", err)
	}
	defer f.Close()
	var b strings.Builder
	for _, sheet := range f.GetSheetList() {
		fmt.Fprintf(&b, "sheet %q", sheet)
		if panes, err := f.GetPanes(sheet); err == nil && panes.Freeze {
			fmt.Fprintf(&b, " frozen=%d", panes.YSplit)
		}
		rows, err := f.GetRows(sheet)
		if err != nil {
			tb.Fatalf("rows of %s: %v", sheet, err)
		}
		var widths []string
		maxCols := 0
		for _, r := range rows {
			maxCols = max(maxCols, len(r))
		}
		for c := 1; c <= maxCols; c++ {
			col, _ := excelize.ColumnNumberToName(c)
			if w, err := f.GetColWidth(sheet, col); err == nil && w != 9.140625 && w != 8.43 {
				widths = append(widths, fmt.Sprintf("%s:%g", col, w))
			}
		}
		if len(widths) > 0 {
			fmt.Fprintf(&b, " widths=%s", strings.Join(widths, ","))
		}
		if ref := sheetXMLAttr(tb, data, sheetIndex(f, sheet), "autoFilter", "ref"); ref != "" {
			fmt.Fprintf(&b, " autofilter=%s", ref)
		}
		if lvl := sheetXMLAttr(tb, data, sheetIndex(f, sheet), "sheetFormatPr", "outlineLevelRow"); lvl != "" {
			fmt.Fprintf(&b, " outline=%s", lvl)
		}
		b.WriteString("\n")
		for r, row := range rows {
			if lvl, err := f.GetRowOutlineLevel(sheet, r+1); err == nil && lvl > 0 {
				fmt.Fprintf(&b, "row %d level %d\n", r+1, lvl)
			}
			for c := range row {
				ref, _ := excelize.CoordinatesToCellName(c+1, r+1)
				b.WriteString(describeCell(tb, f, sheet, ref))
			}
		}
	}
	return b.String()
}

func describeCell(tb testing.TB, f *excelize.File, sheet, ref string) string {
	typ, err := f.GetCellType(sheet, ref)
	if err != nil {
		tb.Fatalf("cell type %s!%s: %v", sheet, ref, err)
	}
	raw, _ := f.GetCellValue(sheet, ref, excelize.Options{RawCellValue: true})
	shown, _ := f.GetCellValue(sheet, ref)
	if raw == "" && typ == excelize.CellTypeUnset {
		return ""
	}
	var attrs []string
	numFmt := ""
	if id, err := f.GetCellStyle(sheet, ref); err == nil && id != 0 {
		if st, err := f.GetStyle(id); err == nil {
			if st.Font != nil && st.Font.Bold {
				attrs = append(attrs, "bold")
			}
			if st.Font != nil && st.Font.Italic {
				attrs = append(attrs, "italic")
			}
			if st.CustomNumFmt != nil {
				numFmt = *st.CustomNumFmt
			}
		}
	}
	kind, value := "text", strconv.Quote(raw)
	switch typ {
	case excelize.CellTypeBool:
		kind, value = "bool", strings.ToUpper(map[string]string{"1": "true", "0": "false"}[raw])
	case excelize.CellTypeNumber, excelize.CellTypeUnset:
		kind, value = "number", raw
		if strings.ContainsAny(numFmt, "yd") {
			kind, value = "date", shown
		}
	case excelize.CellTypeDate:
		kind, value = "date", shown
	}
	if numFmt != "" {
		attrs = append(attrs, "["+numFmt+"]")
	}
	if formula, err := f.GetCellFormula(sheet, ref); err == nil && formula != "" {
		attrs = append(attrs, "="+formula)
	}
	if len(attrs) > 0 {
		kind += " " + strings.Join(attrs, " ")
	}
	return fmt.Sprintf("%s %s %s\n", ref, kind, value)
}

// MustRenderFormat checks values and renders in format.
func MustRenderFormat(tb testing.TB, tpl *Template, input map[string]any, format Format, opts Options) ([]byte, Stats) {
	tb.Helper()
	values, err := tpl.Values(input)
	if err != nil {
		tb.Fatalf("Values: %v", err)
	}
	var buf bytes.Buffer
	stats, err := tpl.Render(context.Background(), &buf, format, values, opts)
	if err != nil {
		tb.Fatalf("Render %s: %v", format, err)
	}
	return buf.Bytes(), stats
}

// sheetIndex is the position (from 1) of a sheet in the workbook.
func sheetIndex(f *excelize.File, sheet string) int {
	for i, name := range f.GetSheetList() {
		if name == sheet {
			return i + 1
		}
	}
	return 0
}

// sheetXMLAttr reads attribute attr of the first element named elem in the
// XML of sheet n (xl/worksheets/sheetN.xml), straight from the package:
// excelize has no getter for the autofilter or the outline level.
func sheetXMLAttr(tb testing.TB, data []byte, n int, elem, attr string) string {
	tb.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		tb.Fatal(err)
	}
	rc, err := zr.Open("xl/worksheets/sheet" + strconv.Itoa(n) + ".xml")
	if err != nil {
		return ""
	}
	defer rc.Close()
	raw, _ := io.ReadAll(rc)
	m := regexp.MustCompile(`<` + elem + `\b[^>]*\b` + attr + `="([^"]*)"`).FindSubmatch(raw)
	if m == nil {
		return ""
	}
	return string(m[1])
}

// embeddedFonts converts the font set of package assets.
func embeddedFonts() Fonts {
	set := assets.Fonts()
	conv := func(list []assets.FontFamily) []FontFamily {
		out := make([]FontFamily, len(list))
		for i, f := range list {
			out[i].Name = f.Name
			for s, file := range []*assets.FontFile{f.Regular, f.Bold, f.Italic, f.BoldItalic} {
				if file != nil {
					out[i].Lazy[s] = &FontFile{Name: file.Name, Coverage: file.Coverage, Load: file.Bytes}
				}
			}
		}
		return out
	}
	return Fonts{Families: conv(set.Families), Fallbacks: conv(set.Fallbacks)}
}
