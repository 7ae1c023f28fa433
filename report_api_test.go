package main

import (
	"encoding/json"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tocLine is a line of the printed contents: a title, dotted leaders and
// a page number, as pdftotext reads it.
var tocLine = regexp.MustCompile(`^\s*(\S.*?)\s*(?:\. ?){3,}\s*(\d+)\s*$`)

// TestMonthlyReportEndToEnd renders the shipped monthly report through the
// API with everything it can show: a logo from the team's assets, a cover
// picture fetched from an https URL, its SVG mark, Markdown with a link,
// three charts, bookmarks and a table of contents. Independent readers
// check the result: pdftotext for the text and for the contents' page
// numbers against the pages the headings are on, qpdf for the link
// annotations and the outline, pdfimages for the two pictures, and the
// XLSX's own XML for the native charts and the cells they draw.
func TestMonthlyReportEndToEnd(t *testing.T) {
	is := startImageServer(t)
	s := startServer(t, func(c *Config) {
		c.ImageURLAllowPrivate = true
		c.ImageURLCA = is.caFile
		c.ImageURLTimeout = 5 * time.Second
	})
	u := s.signup("Reporter")
	key := s.createKey(u.token, nil)
	s.must(200, "POST", "/api/assets", u.token, map[string]any{"name": "logo", "contentBase64": b64(assetPNG(t, 60, 20, color.RGBA{20, 60, 200, 255}))})

	var tpl, vars map[string]any
	readJSON(t, filepath.Join("testdata", "templates", "monthly-report.json"), &tpl)
	readJSON(t, filepath.Join("testdata", "templates", "monthly-report.vars.json"), &vars)
	created := s.must(200, "POST", "/api/templates", u.token, tpl)
	if w, _ := created.get("warnings").([]any); len(w) != 0 {
		t.Errorf("the example has warnings: %v", w)
	}
	vars["logo"] = "asset:logo"
	vars["coverImage"] = is.url + "/cover.png"
	generate := func(format string) []byte {
		t.Helper()
		g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": created.str("id"), "format": format, "variables": vars})
		code, _, body := s.download(g.str("downloadUrl"))
		if code != 200 {
			t.Fatalf("download %s: %d", format, code)
		}
		return body
	}
	pdf := generate("pdf")
	if dir := os.Getenv("FOLIO_KEEP_REPORT"); dir != "" {
		os.WriteFile(filepath.Join(dir, "monthly-report.pdf"), pdf, 0o600)
	}
	if got := is.requests("/cover.png"); len(got) != 1 {
		t.Errorf("the cover picture was fetched %d times, want once", len(got))
	}

	// Text, page by page.
	pages := strings.Split(strings.TrimRight(pdfText(t, pdf), "\f\n"), "\f")
	if len(pages) != 3 {
		t.Fatalf("%d pages, want 3", len(pages))
	}
	all := blanks.ReplaceAllString(strings.Join(pages, "\n"), " ")
	for _, want := range []string{
		"Folio Demo GmbH", "Contents", "Sales report November 2026", "Change on last month 7.0%",
		"(regional figures)", "Revenue share by region", "Daily revenue and refunds", "Revenue by product",
		"DACH 1,012 €48,210.50 52.6%", "Confidential · Page 3 of 3",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the report lacks %q:\n%s", want, all)
		}
	}

	// The contents list each heading with the page it is on.
	headingPage := func(title string) int {
		for i, p := range pages {
			for _, line := range strings.Split(p, "\n") {
				if strings.TrimSpace(line) == title {
					return i + 1
				}
			}
		}
		return 0
	}
	toc := map[string]int{}
	var order []string
	for _, line := range strings.Split(pages[0], "\n") {
		if m := tocLine.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[2])
			toc[m[1]] = n
			order = append(order, m[1])
		}
	}
	wantTOC := []string{"Sales report November 2026", "Revenue by region", "Daily sales", "Top products"}
	if strings.Join(order, "|") != strings.Join(wantTOC, "|") {
		t.Fatalf("contents list %q, want %q:\n%s", order, wantTOC, pages[0])
	}
	headingPages := map[string]int{}
	for _, title := range wantTOC {
		headingPages[title] = headingPage(title)
		if headingPages[title] == 0 || toc[title] != headingPages[title] {
			t.Errorf("contents give %q page %d; the heading is on page %d", title, toc[title], headingPages[title])
		}
	}
	if headingPages["Daily sales"] != 2 || headingPages["Top products"] != 3 {
		t.Errorf("heading pages %v", headingPages)
	}

	// The outline: the title at the top, the sections below it, each
	// pointing at its heading's page; the Markdown link and the contents'
	// links are annotations.
	var q struct {
		Outlines []qpdfOutline     `json:"outlines"`
		Qpdf     []json.RawMessage `json:"qpdf"` // a header, then the objects
	}
	js := qpdfJSON(t, pdf)
	if err := json.Unmarshal([]byte(js), &q); err != nil || len(q.Qpdf) != 2 {
		t.Fatalf("qpdf --json=2: %v", err)
	}
	var objects map[string]struct {
		Value map[string]any `json:"value"`
	}
	if err := json.Unmarshal(q.Qpdf[1], &objects); err != nil {
		t.Fatal(err)
	}
	if len(q.Outlines) != 1 || q.Outlines[0].Title != wantTOC[0] || q.Outlines[0].Page != 1 {
		t.Fatalf("outline %+v, want one top entry %q on page 1", q.Outlines, wantTOC[0])
	}
	var kids []string
	for _, k := range q.Outlines[0].Kids {
		kids = append(kids, k.Title)
		if k.Page != headingPages[k.Title] {
			t.Errorf("bookmark %q points at page %d, the heading is on page %d", k.Title, k.Page, headingPages[k.Title])
		}
	}
	if strings.Join(kids, "|") != strings.Join(wantTOC[1:], "|") {
		t.Errorf("bookmarks below the title: %q, want %q", kids, wantTOC[1:])
	}
	// Page objects in order, to read where the first page's links go.
	var pageRefs []any
	for _, o := range objects {
		if o.Value["/Type"] == "/Pages" && o.Value["/Parent"] == nil {
			pageRefs, _ = o.Value["/Kids"].([]any)
		}
	}
	first, _ := objects["obj:"+toString(pageRefs[0])].Value["/Annots"].([]any)
	var uris []string
	var jumps []int
	for _, a := range first {
		annot, _ := a.(map[string]any)
		if annot == nil || annot["/Subtype"] != "/Link" {
			continue
		}
		if act, ok := annot["/A"].(map[string]any); ok && act["/S"] == "/URI" {
			uris = append(uris, toString(act["/URI"]))
		}
		if dest, ok := annot["/Dest"].([]any); ok && len(dest) > 0 {
			for i, p := range pageRefs {
				if p == dest[0] {
					jumps = append(jumps, i+1)
				}
			}
		}
	}
	if strings.Join(uris, " ") != "u:https://example.com/reports/2026-11" {
		t.Errorf("first page's URI links %q, want the regional figures", uris)
	}
	var wantJumps []int
	for _, title := range wantTOC {
		wantJumps = append(wantJumps, headingPages[title])
	}
	if !slices.Equal(jumps, wantJumps) {
		t.Errorf("the contents' links jump to pages %v, want %v", jumps, wantJumps)
	}

	// Two pictures: the asset logo (60×20) and the cover from the URL
	// (90×40); the SVG mark and the charts are vectors.
	list, _ := poppler(t, pdf, "pdfimages", "-list")
	var sizes []string
	for _, line := range strings.Split(list, "\n")[2:] {
		f := strings.Fields(line)
		if len(f) > 4 && f[2] == "image" {
			sizes = append(sizes, f[3]+"x"+f[4])
		}
	}
	sort.Strings(sizes)
	if strings.Join(sizes, " ") != "60x20 90x40" {
		t.Errorf("images %v, want the logo 60x20 and the cover 90x40:\n%s", sizes, list)
	}

	// XLSX: three native charts over the sheets' cells, as openpyxl reads
	// them: the chart's class, its ranges and the first cells they cover.
	xlsx := generate("xlsx")
	path := filepath.Join(t.TempDir(), "report.xlsx")
	if err := os.WriteFile(path, xlsx, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("/usr/bin/python3", "-c", reportChartsScript, path).CombinedOutput()
	if err != nil {
		t.Fatalf("openpyxl (python3-openpyxl is needed): %v\n%s", err, out)
	}
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	want := []*regexp.Regexp{
		regexp.MustCompile(`^Summary DoughnutChart 'Summary'!\$[A-Z]+\$\d+:\$[A-Z]+\$\d+ 'Summary'!\$[A-Z]+\$\d+:\$[A-Z]+\$\d+ DACH 48210.5 4$`),
		regexp.MustCompile(`^Summary LineChart 'Summary'!\$[A-Z]+\$\d+:\$[A-Z]+\$\d+ 'Summary'!\$[A-Z]+\$\d+:\$[A-Z]+\$\d+ 1 Nov 4754.43 30$`),
		regexp.MustCompile(`^Top products BarChart 'Top products'!\$[A-Z]+\$\d+:\$[A-Z]+\$\d+ 'Top products'!\$[A-Z]+\$\d+:\$[A-Z]+\$\d+ Growth plan 23840 10$`),
	}
	if len(got) != len(want) {
		t.Fatalf("charts in the workbook:\n%s", out)
	}
	for i, re := range want {
		if !re.MatchString(got[i]) {
			t.Errorf("chart %d: %q does not match %s", i+1, got[i], re)
		}
	}
}

// reportChartsScript prints each chart of a workbook: sheet, class, the
// first series' category and value ranges, their first cells and the
// number of values.
const reportChartsScript = `
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
        s = ch.series[0]
        cat = s.cat.strRef.f if s.cat.strRef else s.cat.numRef.f
        val = s.val.numRef.f
        print(ws.title, type(ch).__name__, cat, val, cells(cat)[0], cells(val)[0], len(cells(val)))
`

// qpdfOutline is an outline entry of qpdf --json=2.
type qpdfOutline struct {
	Title string        `json:"title"`
	Page  int           `json:"destpageposfrom1"`
	Kids  []qpdfOutline `json:"kids"`
}

func toString(v any) string {
	s, _ := v.(string)
	return s
}
