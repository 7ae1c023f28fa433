package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// layoutCases are the golden cases of the page-aware layout features.
var layoutCases = []string{"page-numbers", "page-numbers-flow", "sections-on", "table-continued", "keep-together", "widows-orphans", "table-totals"}

// renderCase renders a golden case to PDF and reads every page back on its
// own with pdftotext -f N -l N, squeezed like the golden file.
func renderCase(t *testing.T, name string) (pages []string, stats Stats) {
	t.Helper()
	def, input := LoadCase(t, filepath.Join("testdata", name))
	pdf, stats := MustRenderFormat(t, MustCompile(t, def), input, PDF, Options{})
	if n := PageCount(t, pdf); n != stats.Pages {
		t.Fatalf("pdfinfo: %d pages, stats: %d", n, stats.Pages)
	}
	for n := 1; n <= stats.Pages; n++ {
		var lines []string
		for _, line := range strings.Split(PageText(t, pdf, n), "\n") {
			if line = strings.TrimSpace(spaces.ReplaceAllString(strings.Trim(line, "\f"), " ")); line != "" {
				lines = append(lines, line)
			}
		}
		pages = append(pages, strings.Join(lines, "\n"))
	}
	return pages, stats
}

// TestLayoutPagesOneByOne reads every page of the layout cases back with
// pdftotext -f N -l N and compares it with that page of pdf.golden.
func TestLayoutPagesOneByOne(t *testing.T) {
	for _, name := range layoutCases {
		t.Run(name, func(t *testing.T) {
			pages, _ := renderCase(t, name)
			golden := MustReadFile(t, filepath.Join("testdata", name, "pdf.golden"))
			parts := regexp.MustCompile(`(?m)^--- page \d+ ---\n`).Split(golden, -1)[1:]
			if len(parts) != len(pages) {
				t.Fatalf("%d pages, pdf.golden has %d", len(pages), len(parts))
			}
			for i, want := range parts {
				if got := pages[i]; got != strings.TrimSpace(want) {
					t.Errorf("page %d read alone differs:\n%s", i+1, lineDiff(strings.TrimSpace(want), got))
				}
			}
		})
	}
}

func TestPageNumbersInTheBody(t *testing.T) {
	pages, _ := renderCase(t, "page-numbers")
	printed := regexp.MustCompile(`\[printed on page (\d+) of (\d+)\]`)
	seen := 0
	for i, page := range pages {
		for _, m := range printed.FindAllStringSubmatch(page, -1) {
			seen++
			if m[1] != itoa(i+1) || m[2] != itoa(len(pages)) {
				t.Errorf("page %d says %q", i+1, m[0])
			}
		}
	}
	if seen != 18 {
		t.Errorf("%d entries found, want 18", seen)
	}
	first, last := pages[0], pages[len(pages)-1]
	if !strings.Contains(first, "this paragraph is on page 1.") || !strings.Contains(first, "has "+itoa(len(pages))+" pages") {
		t.Errorf("first page:\n%s", first)
	}
	if strings.Contains(first, "Shown only when") || !strings.Contains(last, "Shown only when it lands after page 1.") ||
		!strings.Contains(last, "This is the last page.") || strings.Contains(strings.Join(pages, "\n"), "More pages follow") {
		t.Errorf("conditions on page and pages went wrong:\n%s", last)
	}
}

// Blocks taller than a page (a 120-row table, a paragraph, a key/value
// block) show on every row, line and pair the page it is drawn on, read
// back page by page; the table's continuedLabel is one text for both
// continued rows.
func TestPageNumbersInBlocksThatSpanPages(t *testing.T) {
	pages, _ := renderCase(t, "page-numbers-flow")
	total := len(pages)
	marks := []struct {
		name string
		re   *regexp.Regexp
		want int // how many in the document
	}{
		{"table row", regexp.MustCompile(`Item \d{3} p(\d+)/(\d+)`), 120},
		{"paragraph line", regexp.MustCompile(`\[on\s+page\s+(\d+)\]`), 160},
		{"key/value pair", regexp.MustCompile(`Pair \d+ on page (\d+)`), 70},
	}
	for _, m := range marks {
		seen, on := 0, map[int]bool{}
		for i, page := range pages {
			for _, got := range m.re.FindAllStringSubmatch(page, -1) {
				seen++
				on[i+1] = true
				if got[1] != itoa(i+1) || len(got) > 2 && got[2] != itoa(total) {
					t.Errorf("%s on page %d of %d says %q", m.name, i+1, total, got[0])
				}
			}
		}
		if seen != m.want || len(on) < 2 {
			t.Errorf("%d %ss found on %d pages, want %d over several pages", seen, m.name, len(on), m.want)
		}
	}
	// The table breaks three times: the same label closes the page it
	// leaves ("continued (page 1)") and opens the next one ("continued (page 2)").
	breaks := 0
	for i, page := range pages {
		lines := strings.Split(page, "\n")
		n := i + 1
		if strings.Contains(page, "Item ") && !strings.Contains(page, "Item 120") {
			breaks++
			if got := lines[len(lines)-2]; got != "continued (page "+itoa(n)+")" {
				t.Errorf("page %d: the table breaks, but the line above the footer is %q", n, got)
			}
		}
		if n > 1 && strings.Contains(page, "Item ") {
			if lines[0] != "No. Item Printed on" || lines[1] != "continued (page "+itoa(n)+")" {
				t.Errorf("page %d starts %q / %q, want the header and the continued row", n, lines[0], lines[1])
			}
		}
	}
	if breaks != 3 {
		t.Errorf("the table breaks %d times, want 3", breaks)
	}
}

func TestSectionsOnFirstLastNotFirst(t *testing.T) {
	pages, _ := renderCase(t, "sections-on")
	if len(pages) < 2 {
		t.Fatalf("want several pages, got %d", len(pages))
	}
	for i, page := range pages {
		n, last := i+1, i == len(pages)-1
		cover := strings.Contains(page, "Account statement 2026-10")
		running := strings.Contains(page, "(continued)")
		more := strings.Contains(page, "Continued on page "+itoa(n+1))
		totals := strings.Contains(page, "Transactions 62") && strings.Contains(page, "Total €")
		if cover != (n == 1) || running != (n > 1) || more != !last || totals != last {
			t.Errorf("page %d: cover %v, running head %v, continued %v, totals %v:\n%s", n, cover, running, more, totals, page)
		}
		if !strings.Contains(page, "Page "+itoa(n)+" of "+itoa(len(pages))) {
			t.Errorf("page %d lacks its page number", n)
		}
	}
}

// A footer drawn on the last page only that does not fit below the body
// gets a page of its own, and the page count agrees with it.
func TestLastPageFooterThatDoesNotFitGetsItsOwnPage(t *testing.T) {
	def, input := LoadCase(t, filepath.Join("testdata", "sections-on"))
	rows := input["rows"].([]any)
	for len(rows) < 70 {
		rows = append(rows, rows[len(rows)-1])
	}
	input["rows"] = rows[:70] // fills page 2 to the bottom
	pdf, stats := MustRenderFormat(t, MustCompile(t, def), input, PDF, Options{})
	last := PageText(t, pdf, stats.Pages)
	if stats.Pages != 3 || !strings.Contains(last, "Total") || strings.Contains(last, "Transfer") ||
		!strings.Contains(last, "Page 3 of 3") || !strings.Contains(PageText(t, pdf, 2), "Continued on page 3") {
		t.Errorf("%d pages; last page:\n%s", stats.Pages, last)
	}
}

var (
	euro       = regexp.MustCompile(`(-?)€([\d,]+\.\d\d)`)
	carriedRow = regexp.MustCompile(`Carried forward to page (\d+) (-?€[\d,]+\.\d\d)`)
	broughtRow = regexp.MustCompile(`Brought forward from page (\d+) (-?€[\d,]+\.\d\d)`)
)

// cents parses "€1,234.50" or "-€3.00".
func cents(t *testing.T, s string) int64 {
	t.Helper()
	m := euro.FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("%q is not an amount", s)
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(strings.ReplaceAll(m[2], ",", ""), ".", ""), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if m[1] == "-" {
		n = -n
	}
	return n
}

func TestContinuedRowsCarryTheRunningSubtotal(t *testing.T) {
	pages, _ := renderCase(t, "table-continued")
	if len(pages) < 3 {
		t.Fatalf("want the table over at least 3 pages, got %d", len(pages))
	}
	sum := int64(0)
	payment := regexp.MustCompile(`Card payment \d+ (-?€[\d,]+\.\d\d)`)
	for i, page := range pages {
		n := i + 1
		lines := strings.Split(page, "\n")
		if n > 1 && strings.Contains(page, "Card payment") {
			m := broughtRow.FindStringSubmatch(lines[1])
			if lines[0] != "Date Description Amount" || m == nil || m[1] != itoa(n-1) || cents(t, m[2]) != sum {
				t.Errorf("page %d starts %q / %q, want the header and brought forward %d", n, lines[0], lines[1], sum)
			}
		}
		for _, m := range payment.FindAllStringSubmatch(page, -1) {
			sum += cents(t, m[1])
		}
		m := carriedRow.FindStringSubmatch(lines[len(lines)-1])
		if strings.Contains(page, "Total") || !strings.Contains(page, "Card payment") {
			if m != nil {
				t.Errorf("page %d: the table ends here, but it says %q", n, m[0])
			}
			continue
		}
		if m == nil || m[1] != itoa(n+1) || cents(t, m[2]) != sum {
			t.Errorf("page %d ends %q, want carried forward %d", n, lines[len(lines)-1], sum)
		}
	}
	total := regexp.MustCompile(`Total (-?€[\d,]+\.\d\d)`).FindStringSubmatch(strings.Join(pages, "\n"))
	if total == nil || cents(t, total[1]) != sum {
		t.Errorf("total %v, want %d", total, sum)
	}
}

func TestKeepTogetherMovesBlocksWhole(t *testing.T) {
	pages, _ := renderCase(t, "keep-together")
	for i, page := range pages {
		// Every block on this page says it starts here.
		for _, m := range regexp.MustCompile(`\(block starts on page\s+(\d+)\)`).FindAllStringSubmatch(strings.ReplaceAll(page, "\nBerlin ", " "), -1) {
			if m[1] != itoa(i+1) {
				t.Errorf("page %d holds a block that says %q", i+1, m[0])
			}
		}
		if strings.Count(page, "Order A-") != 2*strings.Count(page, "Customer ") {
			t.Errorf("page %d splits an order block:\n%s", i+1, page)
		}
	}
	last := pages[len(pages)-1]
	if !strings.Contains(last, "Line Product") || !strings.Contains(last, "12 Product L") {
		t.Errorf("the table kept together should be whole on the last page:\n%s", last)
	}
}

func TestWidowAndOrphanControl(t *testing.T) {
	pages, _ := renderCase(t, "widows-orphans")
	count := func(page, start string) int { // lines of the paragraph starting with start on page
		n, in := 0, false
		for _, line := range strings.Split(page, "\n") {
			if strings.HasPrefix(line, "Paragraph ") || strings.HasPrefix(line, "A heading") || strings.HasPrefix(line, "The same") || strings.HasPrefix(line, "Orphan control") {
				in = strings.HasPrefix(line, start)
			}
			if in {
				n++
			}
		}
		return n
	}
	if strings.Contains(pages[0], "Paragraph A") {
		t.Errorf("orphan control: paragraph A should start on page 2:\n%s", pages[0])
	}
	if n := len(strings.Split(pages[2], "\n")); n < 2 {
		t.Errorf("widow control: page 3 should start with at least 2 lines, got:\n%s", pages[2])
	}
	if !strings.HasPrefix(pages[1], "Paragraph A") || count(pages[1], "Paragraph B") < 2 {
		t.Errorf("page 2:\n%s", pages[1])
	}
	if count(pages[3], "Paragraph C") != 1 || len(strings.Split(pages[5], "\n")) != 1 {
		t.Errorf("without control one line is left at the bottom (page 4) and carried over (page 6):\n%s\n---\n%s", pages[3], pages[5])
	}
	if pages[6] != "" || !strings.HasPrefix(pages[7], "A heading never ends a page\nParagraph E") {
		t.Errorf("the heading should move with its paragraph:\n%q\n%q", pages[6], pages[7])
	}
}

func TestTotalsAndSubtotalsInPDF(t *testing.T) {
	pages, _ := renderCase(t, "table-totals")
	text := strings.Join(pages, "\n")
	for _, want := range []string{
		"North total 25.07.2026 186 €42.26 €7,699.13 0.0% 5",
		"South total 26.08.2026 169 €67.04 €11,400.06 0.0% 6",
		"East total 27.09.2026 200 €72.99 €14,039.42 0.0% 7",
		"Grand total 27.09.2026 555 €60.76 €33,138.61 0.0% 18",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
}

func TestLayoutSchemaErrors(t *testing.T) {
	cases := []struct{ schema, path, msg string }{
		{`{"sections":[{"id":"b","on":"first","components":[]}]}`, "schema.sections[0].on", "header and footer"},
		{`{"sections":[{"id":"f","role":"footer","on":"odd","components":[]}]}`, "schema.sections[0].on", "must be one of"},
		{`{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"x","widows":0}}]}]}`, "schema.sections[0].components[0].props.widows", "from 1 to 10"},
		{`{"sections":[{"id":"b","components":[{"type":"text","keepTogether":"yes","props":{"content":"x"}}]}]}`, "schema.sections[0].components[0].keepTogether", "true or false"},
		{`{"sections":[{"id":"b","components":[{"type":"table","props":{"rows":"r","columns":[{"value":"{{ row }}","formula":"B{row}"}]}}]}]}`, "schema.sections[0].components[0].props.columns[0].formula", "must start with ="},
		{`{"sections":[{"id":"b","components":[{"type":"table","props":{"rows":"r","columns":[{"value":"{{ row }}","formula":"={qty}*2"}]}}]}]}`, "schema.sections[0].components[0].props.columns[0].formula", "names no column"},
		{`{"sections":[{"id":"b","components":[{"type":"table","props":{"rows":"r","columns":[{"value":"{{ row }}","formula":"=A{row"}]}}]}]}`, "schema.sections[0].components[0].props.columns[0].formula", "not closed"},
		{`{"sections":[{"id":"b","components":[{"type":"table","props":{"rows":"r","columns":[{"value":"{{ row }}","total":"median"}]}}]}]}`, "schema.sections[0].components[0].props.columns[0].total", "must be one of"},
		{`{"sections":[{"id":"b","components":[{"type":"table","props":{"rows":"r","columns":[{"key":"a","value":"1"},{"key":"a","value":"2"}]}}]}]}`, "schema.sections[0].components[0].props.columns[1].key", "earlier column"},
		{`{"sections":[{"id":"b","components":[{"type":"table","props":{"rows":"r","columns":[{"key":"row","value":"1"}]}}]}]}`, "schema.sections[0].components[0].props.columns[0].key", "reserved"},
		{`{"sections":[{"id":"b","components":[{"type":"table","props":{"rows":"r","continuedLabel":{},"columns":[{"value":"1"}]}}]}]}`, "schema.sections[0].components[0].props.continuedLabel", "needs"},
		{`{"sections":[{"id":"b","components":[{"type":"table","props":{"rows":"r","carryForward":"row.a +","columns":[{"value":"1"}]}}]}]}`, "schema.sections[0].components[0].props.carryForward", ""},
		{`{"sections":[{"id":"b","components":[{"type":"table","props":{"rows":"r","groupBy":"(","columns":[{"value":"1"}]}}]}]}`, "schema.sections[0].components[0].props.groupBy", ""},
	}
	for _, tc := range cases {
		_, err := MustEngine(t).Compile(schemaDef(tc.schema))
		assertIssue(t, err, tc.path, tc.msg)
	}
}

func TestCarryForwardNeedsNumbers(t *testing.T) {
	tpl := MustCompile(t, schemaDef(`{"sections":[{"id":"b","components":[{"type":"table","props":{"rows":"r","carryForward":"row.a",
		"columns":[{"header":"A","value":"{{ row.a }}"}]}}]}]}`))
	values, _ := tpl.Values(map[string]any{"r": []any{map[string]any{"a": 1}, map[string]any{"a": "x"}}})
	_, err := tpl.Render(t.Context(), &strings.Builder{}, PDF, values, Options{})
	assertExpressionError(t, err, "schema.sections[0].components[0].props.carryForward", "needs a number")
}

// Formulas written with column keys stay right when the table sits beside
// another column of a columns component.
func TestFormulaReferencesFollowTheTable(t *testing.T) {
	tpl := MustCompile(t, schemaDef(`{"sections":[{"id":"b","name":"S","components":[
		{"type":"columns","props":{"children":[
			[{"type":"text","props":{"content":"left"}}],
			[{"type":"table","props":{"rows":"r","columns":[
				{"header":"Q","key":"q","value":"{{ row.q }}","total":"sum"},
				{"header":"P","key":"p","value":"{{ row.p }}"},
				{"header":"A","value":"{{ row.q * row.p }}","formula":"={q}*{p}+0*{row}","total":"sum"}]}}]]}}]}]}`))
	x, _ := MustRenderFormat(t, tpl, map[string]any{"r": []any{map[string]any{"q": 2, "p": 3.5}, map[string]any{"q": 1, "p": 4}}}, XLSX, Options{})
	dump := DumpXLSX(t, x)
	for _, want := range []string{
		`E2 number =C2*D2+0*2 7`,
		`E3 number =C3*D3+0*3 4`,
		`C4 number bold =SUBTOTAL(9,C2:C3) 3`,
		`E4 number bold =SUBTOTAL(9,E2:E3) 11`,
	} {
		if !strings.Contains(dump, want+"\n") {
			t.Errorf("missing %q in:\n%s", want, dump)
		}
	}
	if strings.Contains(dump, "autofilter") {
		t.Errorf("a table inside columns gets no autofilter:\n%s", dump)
	}
}

func TestPageIsOneInWorkbooks(t *testing.T) {
	tpl := MustCompile(t, schemaDef(`{"sections":[{"id":"b","components":[{"type":"text","if":"page == 1","props":{"content":"page {{page}} of {{pages}}"}}]}]}`))
	x, _ := MustRenderFormat(t, tpl, nil, XLSX, Options{})
	if dump := DumpXLSX(t, x); !strings.Contains(dump, `A1 text "page 1 of 1"`) {
		t.Errorf("got:\n%s", dump)
	}
}

// Limit errors say how far the render got, for dry runs.
func TestStatsOnLimitErrors(t *testing.T) {
	tpl := MustCompile(t, schemaDef(`{"sections":[{"id":"b","components":[{"type":"spacer","each":"items","props":{"height":200}}]}]}`))
	values, _ := tpl.Values(map[string]any{"items": numbers(40)})
	st, err := tpl.Render(t.Context(), &strings.Builder{}, PDF, values, Options{Limits: Limits{Pages: 3}})
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitPages || st.Pages != 3 {
		t.Fatalf("got %+v, %v", st, err)
	}
}

// MustReadFile reads a file as text.
func MustReadFile(tb testing.TB, path string) string {
	tb.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return string(raw)
}

// Non-default widows and orphans (3), read back page by page: a spacer
// leaves room for a given number of a ten-line paragraph's lines at the
// bottom of page 1 (found by laying it out without control), and the
// control moves lines so that at least three stay on each page.
func TestWidowsAndOrphansOfThree(t *testing.T) {
	var lines []string
	for i := 1; i <= 10; i++ {
		lines = append(lines, fmt.Sprintf("Line %02d", i))
	}
	content, _ := json.Marshal(strings.Join(lines, "\n"))
	split := func(spacer float64, control int) [2]int { // the paragraph's lines on pages 1 and 2
		t.Helper()
		def := schemaDef(fmt.Sprintf(`{"sections":[{"id":"b","components":[{"type":"spacer","props":{"height":%g}},
			{"type":"text","props":{"content":%s,"widows":%d,"orphans":%d}}]}]}`, spacer, content, control, control))
		pdf, st := MustRenderFormat(t, MustCompile(t, def), nil, PDF, Options{})
		var got [2]int
		for n := 1; n <= st.Pages && n <= 2; n++ {
			got[n-1] = strings.Count(PageText(t, pdf, n), "Line ")
		}
		if got[0]+got[1] != 10 || st.Pages > 2 {
			t.Fatalf("spacer %g, control %d: %v lines on %d pages", spacer, control, got, st.Pages)
		}
		return got
	}
	room := func(lines int) float64 { // a spacer that leaves room for lines lines
		t.Helper()
		for h := 200.0; h <= 250; h += 0.5 {
			if split(h, 1)[0] == lines {
				return h
			}
		}
		t.Fatalf("no spacer leaves room for %d lines", lines)
		return 0
	}
	for _, tc := range []struct {
		room       int
		two, three [2]int
		what       string
	}{
		{2, [2]int{2, 8}, [2]int{0, 10}, "two lines at the bottom are too few orphans: the paragraph moves"},
		{8, [2]int{8, 2}, [2]int{7, 3}, "two lines on the next page are too few widows: one more moves"},
	} {
		h := room(tc.room)
		if got := split(h, 2); got != tc.two {
			t.Errorf("room for %d lines, default control: %v, want %v", tc.room, got, tc.two)
		}
		if got := split(h, 3); got != tc.three {
			t.Errorf("room for %d lines, widows and orphans 3 (%s): %v, want %v", tc.room, tc.what, got, tc.three)
		}
	}
}

// A document whose page count depends on itself in a way that never
// settles (a page break only when there are fewer than two pages) keeps
// its last layout and says so; one that settles does not.
func TestPagesThatDoNotSettleAreReported(t *testing.T) {
	flip := MustCompile(t, schemaDef(`{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"A"}},
		{"type":"pageBreak","if":"pages < 2"},{"type":"text","props":{"content":"B of {{ pages }}"}}]}]}`))
	_, st := MustRenderFormat(t, flip, nil, PDF, Options{})
	if !st.PagesUnsettled {
		t.Errorf("the page count flips between 1 and 2, but the stats say it settled: %+v", st)
	}
	def, input := LoadCase(t, filepath.Join("testdata", "sections-on"))
	if _, st := MustRenderFormat(t, MustCompile(t, def), input, PDF, Options{}); st.PagesUnsettled {
		t.Errorf("sections-on settles: %+v", st)
	}
}
