package render

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// qpdfDoc is what qpdf --json=2 says about a PDF's pages, outline and
// link annotations.
type qpdfDoc struct {
	Outlines []qpdfOutline `json:"outlines"`
	Pages    []struct {
		Object string `json:"object"`
		Pos    int    `json:"pageposfrom1"`
	} `json:"pages"`
	QPDF []json.RawMessage `json:"qpdf"`
}

type qpdfOutline struct {
	Title string        `json:"title"`
	Page  int           `json:"destpageposfrom1"`
	Kids  []qpdfOutline `json:"kids"`
}

// pdfLink is a link annotation: a URI, or the page (from 1) it jumps to.
type pdfLink struct {
	Page   int // the page the annotation is on
	URI    string
	Target int
	Rect   [4]float64
}

// ReadQPDF reads a PDF's outline and links with qpdf, an independent reader.
func ReadQPDF(tb testing.TB, pdf []byte) (outline []qpdfOutline, links []pdfLink) {
	tb.Helper()
	needTool(tb, "qpdf")
	out, err := exec.Command("qpdf", "--json=2", writeTemp(tb, pdf)).Output()
	if err != nil {
		tb.Fatalf("qpdf --json: %v: %s", err, out)
	}
	var doc qpdfDoc
	if err := json.Unmarshal(out, &doc); err != nil {
		tb.Fatalf("qpdf json: %v", err)
	}
	var objects map[string]struct {
		Value map[string]json.RawMessage `json:"value"`
	}
	if len(doc.QPDF) < 2 || json.Unmarshal(doc.QPDF[1], &objects) != nil {
		tb.Fatalf("qpdf json: no objects")
	}
	pageOf := map[string]int{}
	for _, pg := range doc.Pages {
		pageOf[pg.Object] = pg.Pos
	}
	for _, pg := range doc.Pages {
		var annots []struct {
			Subtype string     `json:"/Subtype"`
			Rect    [4]float64 `json:"/Rect"`
			Dest    []any      `json:"/Dest"`
			A       struct {
				URI string `json:"/URI"`
			} `json:"/A"`
		}
		raw := objects["obj:"+pg.Object].Value["/Annots"]
		if raw == nil {
			continue
		}
		if err := json.Unmarshal(raw, &annots); err != nil {
			tb.Fatalf("annotations of page %d: %v: %s", pg.Pos, err, raw)
		}
		for _, a := range annots {
			if a.Subtype != "/Link" {
				continue
			}
			l := pdfLink{Page: pg.Pos, URI: strings.TrimPrefix(a.A.URI, "u:"), Rect: a.Rect}
			if len(a.Dest) > 0 {
				ref, _ := a.Dest[0].(string)
				l.Target = pageOf[ref]
			}
			links = append(links, l)
		}
	}
	return doc.Outlines, links
}

// flatOutline writes an outline as "level:title@page" lines.
func flatOutline(items []qpdfOutline, level int) []string {
	var out []string
	for _, it := range items {
		out = append(out, strconv.Itoa(level)+":"+it.Title+"@"+strconv.Itoa(it.Page))
		out = append(out, flatOutline(it.Kids, level+1)...)
	}
	return out
}

func TestMarkdownLinksAndOutline(t *testing.T) {
	tpl := MustCompile(t, schemaDef(markdownSchema(markdownSample)))
	pdf := MustRender(t, tpl, nil, Options{})
	outline, links := ReadQPDF(t, pdf)
	if got, want := strings.Join(flatOutline(outline, 1), "\n"), "1:Monthly report@1\n2:Highlights@1"; got != want {
		t.Errorf("outline:\n%s\nwant:\n%s", got, want)
	}
	var uris []string
	internal := 0
	for _, l := range links {
		if l.URI != "" {
			uris = append(uris, l.URI)
		} else if l.Target == 1 {
			internal++
		}
	}
	if got, want := strings.Join(uris, " "), "https://example.com/dash mailto:ops@example.com"; got != want {
		t.Errorf("URI links: %s, want %s", got, want)
	}
	if internal != 1 {
		t.Errorf("%d links to page 1 (#monthly-report), want 1: %+v", internal, links)
	}
}

// tocSchema is a document whose table of contents comes first and lists
// headings that start on later pages; filler paragraphs push them on.
func tocSchema(chapters, fill int) string {
	var comps []string
	comps = append(comps, `{"type":"toc","props":{"title":"Contents","maxLevel":2}}`, `{"type":"pageBreak"}`)
	para := strings.Repeat("Words that fill the page so the chapters land on different pages. ", 12)
	for i := 1; i <= chapters; i++ {
		comps = append(comps, `{"type":"heading","props":{"content":"Chapter `+strconv.Itoa(i)+`","level":1}}`)
		md := "## Part " + strconv.Itoa(i) + ".1\n\n" + para + "\n\n### Detail " + strconv.Itoa(i) + "\n\n" + para
		c, _ := json.Marshal(md)
		comps = append(comps, `{"type":"markdown","props":{"content":`+string(c)+`}}`)
		for k := 0; k < fill; k++ {
			comps = append(comps, `{"type":"text","props":{"content":"`+para+`"}}`)
		}
	}
	return `{"sections":[{"id":"s","components":[` + strings.Join(comps, ",") + `]}]}`
}

// tocEntries reads "title .... page" lines from pdftotext's layout text.
var tocLine = regexp.MustCompile(`(?m)^\s*((?:Chapter|Part) \d+(?:\.\d+)?)\s*(?:\. ?){3,}\s*(\d+)\s*$`)

func TestTOCPageNumbers(t *testing.T) {
	for _, tc := range []struct {
		name            string
		chapters, fill  int
		wantTOCPagesMin int
	}{
		{"one page of contents", 6, 2, 1},
		{"contents over two pages", 40, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tpl := MustCompile(t, schemaDef(tocSchema(tc.chapters, tc.fill)))
			pdf := MustRender(t, tpl, nil, Options{})
			outline, links := ReadQPDF(t, pdf)
			// Where each heading is, by the outline (qpdf).
			at := map[string]int{}
			var walk func([]qpdfOutline)
			walk = func(items []qpdfOutline) {
				for _, it := range items {
					at[it.Title] = it.Page
					walk(it.Kids)
				}
			}
			walk(outline)
			if len(at) != 3*tc.chapters {
				t.Fatalf("outline has %d headings, want %d", len(at), 3*tc.chapters)
			}
			// What the contents print (pdftotext), page by page.
			pages, _ := strconv.Atoi(PDFInfo(t, pdf)["Pages"])
			listed, tocPages := 0, 0
			for pg := 1; pg <= pages; pg++ {
				text := ExtractText(t, pdf, "-layout", "-f", strconv.Itoa(pg), "-l", strconv.Itoa(pg))
				found := tocLine.FindAllStringSubmatch(text, -1)
				if len(found) > 0 {
					tocPages++
				}
				for _, m := range found {
					want, ok := at[m[1]]
					if !ok {
						t.Errorf("contents list %q, not in the outline (%q)", m[1], m[0])
						continue
					}
					if got, _ := strconv.Atoi(m[2]); got != want {
						t.Errorf("contents say %s is on page %d; the outline says %d", m[1], got, want)
					}
					listed++
				}
			}
			if want := 2 * tc.chapters; listed != want { // maxLevel 2: chapters and parts
				t.Errorf("contents list %d entries, want %d", listed, want)
			}
			if tocPages < tc.wantTOCPagesMin {
				t.Errorf("contents take %d pages, want at least %d", tocPages, tc.wantTOCPagesMin)
			}
			// Each entry links to its heading's page.
			jumps := 0
			for _, l := range links {
				if l.Target > 0 && l.Page <= tocPages {
					jumps++
				}
			}
			if jumps != 2*tc.chapters {
				t.Errorf("%d links on the contents pages, want %d", jumps, 2*tc.chapters)
			}
		})
	}
}

// TestMonthlyReportExampleLinksAndOutline checks the example report: its
// commentary is Markdown with a link, and its headings are the outline
// and the lines of its contents.
func TestMonthlyReportExampleLinksAndOutline(t *testing.T) {
	ex, input := LoadExample(t, "monthly-report")
	pdf, _ := MustRenderFormat(t, MustCompile(t, ex.Definition), input, PDF, Options{})
	outline, links := ReadQPDF(t, pdf)
	if got, want := strings.Join(flatOutline(outline, 1), "\n"), "1:Sales report November 2026@1\n2:Revenue by region@1\n2:Daily sales@2\n2:Top products@3"; got != want {
		t.Errorf("outline:\n%s\nwant:\n%s", got, want)
	}
	// Page 1 holds the contents, a link per heading to its page, and the
	// commentary's link.
	var targets []int
	var uris []string
	for _, l := range links {
		if l.Page != 1 {
			t.Errorf("a link on page %d: %+v", l.Page, l)
		}
		if l.URI != "" {
			uris = append(uris, l.URI)
		} else {
			targets = append(targets, l.Target)
		}
	}
	if fmt.Sprint(targets) != "[1 1 2 3]" || fmt.Sprint(uris) != "[https://example.com/reports/2026-11]" {
		t.Errorf("links %+v, want the contents' jumps to pages 1 1 2 3 and the commentary's link", links)
	}
}

// TestValidAnchorMatchesPattern checks validAnchor against the regular
// expression it replaced, on names of every kind.
func TestValidAnchorMatchesPattern(t *testing.T) {
	re := regexp.MustCompile(`^[\p{L}\p{N}_.:-]{1,100}$`)
	names := []string{"", "a", "intro", "Größe", "第一章", "٣", "Ⅻ", "x_y.z:1-2", "a b", "a#b", "a/b", "é\u0301", "\xff", "a\xffb",
		strings.Repeat("a", 100), strings.Repeat("a", 101), strings.Repeat("ü", 100), strings.Repeat("ü", 101), "½", "😀", "-", "\u00a0"}
	for _, n := range names {
		if got, want := validAnchor(n), re.MatchString(n); got != want {
			t.Errorf("validAnchor(%q) = %v, the pattern says %v", n, got, want)
		}
	}
}
