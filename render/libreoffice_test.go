package render

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/csv"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
)

// TestLibreOfficeRecalculatesTotals checks the workbooks' formulas with an
// independent spreadsheet engine: LibreOffice opens each workbook with the
// cached values of its formulas removed, so it must compute every one, and
// converts it to CSV. Its results must equal the cached values Folio wrote
// and the totals the PDF of the same template shows. Skipped without
// LibreOffice (Debian: apt-get install libreoffice-calc-nogui).
func TestLibreOfficeRecalculatesTotals(t *testing.T) {
	soffice := needCalc(t)
	type workbookCase struct {
		name  string
		def   Definition
		input map[string]any
	}
	var cases []workbookCase
	for _, name := range []string{"table-totals", "table-continued"} {
		def, input := LoadCase(t, filepath.Join("testdata", name))
		cases = append(cases, workbookCase{name, def, input})
	}
	// The issue's own form: column letters written in the formula, in a
	// table grouped by region below a heading, so the rows the formulas
	// name are shifted by the heading and by the subtotal rows.
	def, input := letterFormulaCase()
	cases = append(cases, workbookCase{"letter-formulas-grouped", def, input})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			def, input := tc.def, tc.input
			tpl := MustCompile(t, def)
			pdf, _ := MustRenderFormat(t, tpl, input, PDF, Options{})
			pdfText := PDFPages(t, pdf)
			workbook, _ := MustRenderFormat(t, tpl, input, XLSX, Options{})
			table := firstTable(t, tpl)

			f, err := excelize.OpenReader(bytes.NewReader(workbook))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sheet := f.GetSheetList()[0]
			stripped, removed := withoutCachedValues(t, workbook)
			if removed == 0 {
				t.Fatal("the workbook has no formulas")
			}
			got := libreOfficeCSV(t, soffice, stripped)

			rows, err := f.GetRows(sheet)
			if err != nil {
				t.Fatal(err)
			}
			formulas, totals := 0, 0
			for r := range rows {
				var line []string
				hasTotal := false
				for c := range table.columns {
					ref, _ := excelize.CoordinatesToCellName(c+1, r+1)
					formula, _ := f.GetCellFormula(sheet, ref)
					if formula == "" {
						continue
					}
					formulas++
					cached, _ := f.GetCellValue(sheet, ref, excelize.Options{RawCellValue: true})
					lo := cell(got, r, c)
					want, _ := strconv.ParseFloat(cached, 64)
					have, ok := libreOfficeNumber(lo, want)
					if !ok || !nearlyEqual(have, want) {
						t.Errorf("%s =%s: LibreOffice computes %q, Folio cached %s", ref, formula, lo, cached)
					}
					if strings.HasPrefix(formula, "SUBTOTAL(") {
						hasTotal = true
					}
				}
				if !hasTotal {
					continue
				}
				// The PDF's total row, written from LibreOffice's results.
				totals++
				for c, col := range table.columns {
					lo := cell(got, r, c)
					switch {
					case c == table.labelColumn():
						line = append(line, lo)
					case col.total == "count":
						n, _ := strconv.ParseFloat(lo, 64)
						line = append(line, groupedFloat(n))
					case col.total != "":
						line = append(line, col.format.display(libreOfficeValue(lo, col.format)))
					}
				}
				if want := strings.Join(line, " "); !strings.Contains(pdfText, "\n"+want+"\n") {
					t.Errorf("the PDF lacks the total row LibreOffice computes: %q", want)
				}
			}
			if formulas != removed || totals == 0 {
				t.Errorf("checked %d formulas of %d and %d total rows", formulas, removed, totals)
			}
			if tc.name == "letter-formulas-grouped" && (totals != 4 || !strings.Contains(strings.Join(formulaTexts(t, f, sheet), "\n"), "B3*C3")) {
				t.Errorf("want 3 subtotal rows and a total row, and =B{row}*C{row} resolved per row: %d totals, formulas %v", totals, formulaTexts(t, f, sheet))
			}
		})
	}
}

// letterFormulaCase is a grouped table whose Amount column is
// "=B{row}*C{row}", below a heading.
func letterFormulaCase() (Definition, map[string]any) {
	def := schemaDef(`{"sections":[{"id":"b","name":"Orders","components":[
		{"type":"heading","props":{"content":"Orders by region"}},
		{"type":"table","props":{"rows":"orders","groupBy":"region","subtotalLabel":"{{ group }} total","totalLabel":"All regions",
			"columns":[
				{"header":"Item","value":"{{ row.item }}"},
				{"header":"Qty","value":"{{ row.qty }}","format":"number","total":"sum"},
				{"header":"Price","value":"{{ row.price }}","format":"currency:EUR","total":"average"},
				{"header":"Amount","value":"{{ row.qty * row.price }}","formula":"=B{row}*C{row}","format":"currency:EUR","total":"sum"}]}}]}]}`)
	regions := []string{"North", "South", "East"}
	var orders []any
	for i := range 31 {
		orders = append(orders, map[string]any{"item": "Item " + strconv.Itoa(i+1), "region": regions[(i*7)%3],
			"qty": i%9 + 1, "price": float64(i*37%2000)/100 + 0.99})
	}
	return def, map[string]any{"orders": orders}
}

// formulaTexts lists the formulas of a sheet's cells.
func formulaTexts(t *testing.T, f *excelize.File, sheet string) []string {
	t.Helper()
	rows, err := f.GetRows(sheet)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for r, row := range rows {
		for c := range row {
			ref, _ := excelize.CoordinatesToCellName(c+1, r+1)
			if fx, _ := f.GetCellFormula(sheet, ref); fx != "" {
				out = append(out, ref+" "+fx)
			}
		}
	}
	return out
}

// firstTable is the first table of a template's first body section.
func firstTable(t *testing.T, tpl *Template) *tableElement {
	t.Helper()
	for _, c := range tpl.body[0].components {
		if e, ok := c.elem.(*tableElement); ok {
			return e
		}
	}
	t.Fatal("no table")
	return nil
}

func cell(rows [][]string, r, c int) string {
	if r < len(rows) && c < len(rows[r]) {
		return rows[r][c]
	}
	return ""
}

func nearlyEqual(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b))
}

// libreOfficeNumber reads a CSV value LibreOffice wrote: a number, a
// percentage, or a date (US order) as a serial number.
func libreOfficeNumber(s string, _ float64) (float64, bool) {
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, "%") {
		f, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
		return f / 100, err == nil
	}
	if d, err := time.Parse("01/02/2006", s); err == nil {
		return excelSerial(d), true
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// libreOfficeValue reads a CSV value as the cell value a format displays.
func libreOfficeValue(s string, f cellFormat) any {
	if f.kind == kindDate {
		if d, err := time.Parse("01/02/2006", s); err == nil {
			return d
		}
	}
	n, _ := libreOfficeNumber(s, 0)
	return n
}

var cachedValue = regexp.MustCompile(`(<f>[^<]*</f>)<v>[^<]*</v>`)

// withoutCachedValues removes the cached results of every formula.
func withoutCachedValues(t *testing.T, data []byte) ([]byte, int) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	removed := 0
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		content, _ := io.ReadAll(rc)
		rc.Close()
		if strings.HasPrefix(f.Name, "xl/worksheets/") {
			removed += len(cachedValue.FindAll(content, -1))
			content = cachedValue.ReplaceAll(content, []byte("$1"))
		}
		w, err := zw.Create(f.Name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(content)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), removed
}

// libreOfficeProfile makes LibreOffice recalculate workbooks on load and
// write dates in US order, whatever the machine's settings.
const libreOfficeProfile = `<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>0</value></prop></item>
<item oor:path="/org.openoffice.Setup/L10N"><prop oor:name="ooSetupSystemLocale" oor:op="fuse"><value>en-US</value></prop></item>
</oor:items>
`

// libreOfficeCSV converts the first sheet of a workbook to CSV with
// needCalc returns LibreOffice's soffice, or skips the test when it is
// not installed, or installed without Calc (Debian's Writer alone, as the
// peer comparison in docs/peers installs it, answers every spreadsheet
// with "source file could not be loaded").
func needCalc(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"soffice", "libreoffice"} {
		p, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		// Debian's layout: Calc's module is libsclo.so beside soffice.bin.
		if prog := "/usr/lib/libreoffice/program"; fileExists(prog+"/soffice.bin") && !fileExists(prog+"/libsclo.so") {
			t.Skip("LibreOffice is installed without Calc, so spreadsheets cannot be recalculated independently; install libreoffice-calc-nogui to run this test")
		}
		return p
	}
	t.Skip("LibreOffice (soffice) is not installed, so spreadsheets are not recalculated independently; install libreoffice-calc-nogui to run this test")
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// soffice --headless --convert-to csv and returns its rows.
func libreOfficeCSV(t *testing.T, soffice string, workbook []byte) [][]string {
	t.Helper()
	return libreOfficeExport(t, soffice, workbook, false)
}

// libreOfficeExport converts a workbook's first sheet to CSV: the cells'
// values, or with asShown the text LibreOffice displays for them.
func libreOfficeExport(t *testing.T, soffice string, workbook []byte, asShown bool) [][]string {
	t.Helper()
	dir := t.TempDir()
	profile := filepath.Join(dir, "profile")
	if err := os.MkdirAll(filepath.Join(profile, "user"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(profile, "user", "registrymodifications.xcu"), []byte(libreOfficeProfile), 0o644); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "book.xlsx")
	if err := os.WriteFile(in, workbook, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Comma-separated, UTF-8, cell values rather than their formatted text
	// (unless asShown).
	cmd := exec.CommandContext(ctx, soffice, "--headless", "--norestore", "-env:UserInstallation=file://"+profile,
		"--convert-to", "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,"+strconv.FormatBool(asShown)+",false,false",
		"--outdir", dir, in)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("soffice: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "book.csv"))
	if err != nil {
		t.Fatalf("soffice wrote no CSV: %v", err)
	}
	r := csv.NewReader(bytes.NewReader(raw))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestLibreOfficeShowsLocaleFormats opens the German invoice's workbook in
// LibreOffice and reads what its cells show: the euro after the amount
// with two decimals, dates in the German pattern, and German month names
// through the format's language id. The separators are the reader's
// system's, so either kind is accepted. Skipped without LibreOffice.
func TestLibreOfficeShowsLocaleFormats(t *testing.T) {
	soffice := needCalc(t)
	def := schemaDef(`{"locale":"de-DE","sections":[{"id":"b","components":[{"type":"table","props":{"rows":"rows","columns":[
		{"header":"Amount","value":"{{ row.a }}","format":"currency:EUR"},
		{"header":"Yen","value":"{{ row.a }}","format":"currency:JPY"},
		{"header":"Due","value":"{{ row.d }}","format":"date"},
		{"header":"Long","value":"{{ row.d }}","format":"date:long"},
		{"header":"Share","value":"{{ row.p }}","format":"percent:1"}]}}]}]}`)
	input := map[string]any{"rows": []any{map[string]any{"a": 612345.5, "d": "2026-12-09", "p": 0.19}}}
	workbook, _ := MustRenderFormat(t, MustCompile(t, def), input, XLSX, Options{})
	rows := libreOfficeExport(t, soffice, workbook, true)
	t.Logf("LibreOffice shows %q", rows)
	if len(rows) < 2 || len(rows[1]) < 5 {
		t.Fatalf("LibreOffice shows %q", rows)
	}
	for i, want := range []*regexp.Regexp{
		regexp.MustCompile(`^612[.,]345[.,]50\x{a0}€$`),
		regexp.MustCompile(`^612[.,]346\x{a0}¥$`),
		regexp.MustCompile(`^09\.12\.2026$`),
		regexp.MustCompile(`^9\. Dezember 2026$`),
		regexp.MustCompile(`^19[.,]0\x{a0}%$`),
	} {
		if !want.MatchString(rows[1][i]) {
			t.Errorf("column %d shows %q, want %s", i+1, rows[1][i], want)
		}
	}
}
