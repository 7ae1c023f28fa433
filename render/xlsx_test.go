package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
)

// OpenXLSX renders tpl as a workbook and opens it with excelize.
func OpenXLSX(tb testing.TB, tpl *Template, input map[string]any) (*excelize.File, Stats) {
	tb.Helper()
	data, stats := MustRenderFormat(tb, tpl, input, XLSX, Options{})
	f, err := excelize.OpenReader(bytes.NewReader(data))
	if err != nil {
		tb.Fatalf("open workbook: %v", err)
	}
	tb.Cleanup(func() { f.Close() })
	return f, stats
}

func TestXLSXTableCellsAreTyped(t *testing.T) {
	tpl := MustCompile(t, schemaDef(`{"sections":[{"id":"items","name":"Items","components":[
		{"type":"heading","props":{"content":"Orders"}},
		{"type":"table","props":{"rows":"rows","columns":[
			{"header":"Name","value":"{{ row.name }}"},
			{"header":"Qty","value":"{{ row.qty }}"},
			{"header":"Price","value":"{{ row.price }}","format":"currency:EUR"},
			{"header":"Date","value":"{{ row.date }}"},
			{"header":"Paid","value":"{{ row.paid }}"},
			{"header":"Label","value":"{{ row.qty }} pcs"},
			{"header":"Code","value":"{{ row.code }}"}]}}]}]}`))
	f, stats := OpenXLSX(t, tpl, map[string]any{"rows": []any{
		map[string]any{"name": "Tea", "qty": 2, "price": 1.5, "date": "2024-03-01", "paid": true, "code": "00123"},
		map[string]any{"name": "A much longer product name", "qty": 10, "price": 1234.5, "date": "2024-12-31T08:30:00Z", "paid": false, "code": "12"},
	}})
	if stats.Rows != 4 || stats.Sheets != 1 {
		t.Errorf("stats = %+v, want 4 rows on 1 sheet", stats)
	}
	cellType := func(ref string) excelize.CellType {
		typ, err := f.GetCellType("Items", ref)
		if err != nil {
			t.Fatal(err)
		}
		return typ
	}
	numFmt := func(ref string) string {
		id, _ := f.GetCellStyle("Items", ref)
		st, err := f.GetStyle(id)
		if err != nil || st.CustomNumFmt == nil {
			return ""
		}
		return *st.CustomNumFmt
	}
	raw := func(ref string) string {
		v, _ := f.GetCellValue("Items", ref, excelize.Options{RawCellValue: true})
		return v
	}
	shown := func(ref string) string {
		v, _ := f.GetCellValue("Items", ref)
		return v
	}
	tests := []struct {
		ref, raw, shown, numFmt string
		typ                     excelize.CellType
	}{
		{"A3", "Tea", "Tea", "", excelize.CellTypeInlineString},
		{"B3", "2", "2", "", excelize.CellTypeUnset}, // numbers carry no t attribute
		{"C4", "1234.5", "€1,234.50", `"€"#,##0.00;-"€"#,##0.00`, excelize.CellTypeUnset},
		{"D3", "45352", "2024-03-01", "yyyy-mm-dd", excelize.CellTypeUnset},
		{"D4", "45657.354166666664", "2024-12-31 08:30:00", "yyyy-mm-dd hh:mm:ss", excelize.CellTypeUnset},
		{"E3", "1", "TRUE", "", excelize.CellTypeBool},
		{"E4", "0", "FALSE", "", excelize.CellTypeBool},
		{"F3", "2 pcs", "2 pcs", "", excelize.CellTypeInlineString},
		{"G3", "00123", "00123", "", excelize.CellTypeInlineString}, // numeric text stays text
	}
	for _, tt := range tests {
		if got := cellType(tt.ref); got != tt.typ {
			t.Errorf("%s type = %v, want %v", tt.ref, got, tt.typ)
		}
		if got := raw(tt.ref); got != tt.raw {
			t.Errorf("%s raw = %q, want %q", tt.ref, got, tt.raw)
		}
		if got := shown(tt.ref); got != tt.shown {
			t.Errorf("%s shown = %q, want %q", tt.ref, got, tt.shown)
		}
		if got := numFmt(tt.ref); got != tt.numFmt {
			t.Errorf("%s format = %q, want %q", tt.ref, got, tt.numFmt)
		}
	}
	// The header row is bold and frozen; the heading above it is frozen too.
	id, _ := f.GetCellStyle("Items", "A2")
	if st, _ := f.GetStyle(id); st == nil || st.Font == nil || !st.Font.Bold {
		t.Error("header cell A2 is not bold")
	}
	if panes, _ := f.GetPanes("Items"); !panes.Freeze || panes.YSplit != 2 {
		t.Errorf("panes = %+v, want rows 1-2 frozen", panes)
	}
	// Widths fit the content.
	wa, _ := f.GetColWidth("Items", "A")
	wb, _ := f.GetColWidth("Items", "B")
	if wa < float64(len("A much longer product name")) || wb != minColumnWidth {
		t.Errorf("widths A=%g B=%g, want A to fit its longest name and B the minimum", wa, wb)
	}
}

func TestXLSXSheets(t *testing.T) {
	tpl := MustCompile(t, schemaDef(`{"sections":[
		{"id":"h","role":"header","components":[{"type":"text","props":{"content":"not in the workbook"}}]},
		{"id":"a","name":"Sales: Q1/Q2 [draft]?","components":[{"type":"text","props":{"content":"a"}},{"type":"pageBreak"},{"type":"text","props":{"content":"a2"}}]},
		{"id":"b","name":"sales_ q1_q2 _draft__","components":[]},
		{"id":"c","name":"'A name far longer than the thirty-one characters Excel allows'"},
		{"id":"history","name":"History"},
		{"id":"e","name":"   "}]}`))
	f, stats := OpenXLSX(t, tpl, nil)
	want := []string{"Sales_ Q1_Q2 _draft__", "Sales_ Q1_Q2 _draft__ (2)", "sales_ q1_q2 _draft__ 2", "A name far longer than the thir", "History 2", "e"}
	if got := f.GetSheetList(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("sheets = %q, want %q", got, want)
	}
	if stats.Sheets != len(want) {
		t.Errorf("stats.Sheets = %d, want %d", stats.Sheets, len(want))
	}
	if v, _ := f.GetCellValue(want[1], "A1"); v != "a2" {
		t.Errorf("after the page break A1 = %q, want a2", v)
	}
}

func TestXLSXColumnsSideBySide(t *testing.T) {
	tpl := MustCompile(t, schemaDef(`{"sections":[{"id":"s","components":[{"type":"columns","props":{"children":[
		[{"type":"keyValue","props":{"items":[{"label":"From","value":"ACME"},{"label":"Tax id","value":"DE123"}]}}],
		[{"type":"text","props":{"content":"To:\nΩμέγα Trading"}}]]}}]}]}`))
	f, _ := OpenXLSX(t, tpl, nil)
	rows, _ := f.GetRows("s")
	want := [][]string{{"From", "ACME", "", "To:"}, {"Tax id", "DE123", "", "Ωμέγα Trading"}}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("rows = %q, want %q", rows, want)
	}
}

func TestXLSXLimits(t *testing.T) {
	rows := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = map[string]any{"n": i}
		}
		return out
	}
	table := `{"sections":[{"id":"s","components":[{"type":"table","props":{"rows":"rows","columns":[{"header":"N","value":"{{ row.n }}"}]}}]}]}`
	wide := make([]string, 30)
	for i := range wide {
		wide[i] = `{"type":"text","props":{"content":"x"}}`
	}
	columns := `{"sections":[{"id":"s","components":[{"type":"columns","props":{"children":[[` + strings.Join(wide[:1], ",") + `],[{"type":"table","props":{"rows":"rows","columns":[` +
		strings.Repeat(`{"value":"{{ row.n }}"},`, 49) + `{"value":"x"}]}}]]}}]}]}`
	tests := []struct {
		name      string
		schema    string
		input     map[string]any
		limits    Limits
		wantLimit string
		wantCode  string
		wantMsg   string
	}{
		{"rows", table, map[string]any{"rows": rows(10000)}, Limits{}, LimitRows, "ERR_LIMIT_003",
			"spreadsheet row limit exceeded: 10001 rows, maximum 10000"},
		{"rows, lowered", table, map[string]any{"rows": rows(10)}, Limits{Rows: 5}, LimitRows, "ERR_LIMIT_003", ""},
		{"columns", columns, map[string]any{"rows": rows(2)}, Limits{}, LimitColumns, "ERR_LIMIT_005",
			"spreadsheet column limit exceeded: 52 columns, maximum 50"},
		{"sheets", sections(11), nil, Limits{}, LimitSheets, "ERR_LIMIT_004", "spreadsheet sheet limit exceeded: 11 sheets, maximum 10"},
		{"sheets, by page breaks", `{"sections":[{"id":"s","components":[` + strings.Repeat(`{"type":"text","props":{"content":"x"}},{"type":"pageBreak"},`, 10) +
			`{"type":"text","props":{"content":"x"}}]}]}`, nil, Limits{}, LimitSheets, "ERR_LIMIT_004", ""},
		{"cell characters", `{"sections":[{"id":"s","components":[{"type":"text","props":{"content":"{{ text }}"}}]}]}`,
			map[string]any{"text": strings.Repeat("ü", 32768)}, Limits{}, LimitCellChars, "ERR_LIMIT_016",
			"spreadsheet cell content exceeded: 32768 characters, maximum 32767"},
		{"output size", table, map[string]any{"rows": rows(3000)}, Limits{Bytes: 10000}, LimitBytes, "ERR_LIMIT_006", ""},
		{"loop iterations", `{"sections":[{"id":"s","components":[{"type":"text","each":"rows","props":{"content":"{{ item.n }}"}}]}]}`,
			map[string]any{"rows": rows(1001)}, Limits{}, LimitLoopIterations, "ERR_LIMIT_007", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl := MustCompile(t, schemaDef(tt.schema))
			values, err := tpl.Values(tt.input)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			_, err = tpl.Render(context.Background(), &buf, XLSX, values, Options{Limits: tt.limits})
			var le *LimitError
			if !errors.As(err, &le) {
				t.Fatalf("err = %v, want a *LimitError", err)
			}
			if le.Limit != tt.wantLimit || le.Code != tt.wantCode {
				t.Errorf("got %s/%s, want %s/%s", le.Code, le.Limit, tt.wantCode, tt.wantLimit)
			}
			if tt.wantMsg != "" && le.Error() != tt.wantMsg {
				t.Errorf("message = %q, want %q", le.Error(), tt.wantMsg)
			}
			if le.Actual <= le.Max {
				t.Errorf("actual %d should exceed max %d", le.Actual, le.Max)
			}
			if buf.Len() != 0 {
				t.Errorf("wrote %d bytes on failure", buf.Len())
			}
		})
	}
}

// sections returns a schema with n empty body sections.
func sections(n int) string {
	list := make([]string, n)
	for i := range list {
		list[i] = fmt.Sprintf(`{"id":"s%d"}`, i)
	}
	return `{"sections":[` + strings.Join(list, ",") + `]}`
}

func TestRenderTimeouts(t *testing.T) {
	tpl := MustCompile(t, schemaDef(`{"sections":[{"id":"s","components":[{"type":"text","props":{"content":"x"}}]}]}`))
	for _, format := range []Format{PDF, XLSX} {
		limits := Limits{PDFTimeout: time.Nanosecond, XLSXTimeout: time.Nanosecond}
		_, err := tpl.Render(context.Background(), &bytes.Buffer{}, format, nil, Options{Limits: limits})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: err = %v, want context.DeadlineExceeded", format, err)
		}
	}
	if d := DefaultLimits(); d.PDFTimeout != 60*time.Second || d.XLSXTimeout != 120*time.Second {
		t.Errorf("default timeouts %v/%v, want 60s/120s", d.PDFTimeout, d.XLSXTimeout)
	}
}

func TestXLSXIsReproducible(t *testing.T) {
	def, input := LoadCase(t, "testdata/table")
	tpl := MustCompile(t, def)
	a, _ := MustRenderFormat(t, tpl, input, XLSX, Options{})
	b, _ := MustRenderFormat(t, tpl, input, XLSX, Options{})
	if !bytes.Equal(a, b) {
		t.Error("two renders of the same workbook differ")
	}
}

func TestXLSXTextIsCleaned(t *testing.T) {
	if got, want := xlsxText("a\x00b\r\nc\x1fd\uffff\xffe"), "ab\ncde"; got != want {
		t.Errorf("xlsxText = %q, want %q", got, want)
	}
	if got := sanitizeSheetName("''"); got != "Sheet" {
		t.Errorf("sanitizeSheetName('') = %q", got)
	}
}

// TestXLSXCellsNameTheFontFamily checks that cells of a component or
// schema with a fontFamily name that family (a reader's system
// substitutes a font it lacks), and that other cells keep the
// application's default font.
func TestXLSXCellsNameTheFontFamily(t *testing.T) {
	tpl := MustCompile(t, schemaDef(`{"fontFamily":"noto serif","sections":[{"id":"b","components":[
		{"type":"text","props":{"content":"Serif by the schema"}},
		{"type":"text","fontFamily":"Noto Sans Mono","props":{"content":"Mono"}},
		{"type":"table","fontFamily":"Noto Sans","props":{"rows":"items","columns":[{"header":"Item","value":"{{row.n}}"}]}}]}]}`))
	f, _ := OpenXLSX(t, tpl, map[string]any{"items": []any{map[string]any{"n": "a"}}})
	sheet := f.GetSheetList()[0]
	family := func(ref string) string {
		id, _ := f.GetCellStyle(sheet, ref)
		st, _ := f.GetStyle(id)
		if st == nil || st.Font == nil {
			return ""
		}
		return st.Font.Family
	}
	for ref, want := range map[string]string{"A1": "Noto Serif", "A2": "Noto Sans Mono", "A3": "Noto Sans", "A4": "Noto Sans"} {
		if got := family(ref); got != want {
			v, _ := f.GetCellValue(sheet, ref)
			t.Errorf("%s (%q) font = %q, want %q", ref, v, got, want)
		}
	}
	plain, _ := OpenXLSX(t, MustCompile(t, schemaDef(`{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"x"}}]}]}`)), nil)
	if id, _ := plain.GetCellStyle(plain.GetSheetList()[0], "A1"); id != 0 {
		t.Errorf("a cell without a fontFamily has style %d, want the default", id)
	}
}
