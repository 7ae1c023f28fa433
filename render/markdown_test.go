package render

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// markdownSample is Markdown using every construct the component draws.
const markdownSample = "# Monthly report\n\nSales grew **12 %** in *March*, see [the dashboard](https://example.com/dash) or ~~old~~ `code()` and mail <ops@example.com>.\n\n" +
	"## Highlights\n\n- First point\n- Second point with a longer text that wraps over more than one line of the page, to check the indentation of wrapped lines\n  1. nested one\n  2. nested two\n- Third\n\n" +
	"> Quoted words\n> on two lines\n\n---\n\n| Region | Sales | Share |\n|:-------|------:|:-----:|\n| North | 1 200 | 40 % |\n| South | **900** | 30 % |\n\n" +
	"```\nfunc main() {\n\tprintln(\"hi\")\n}\n```\n\n<b>raw html</b> stays text. Jump to [the top](#monthly-report).\n"

func markdownSchema(content string) string {
	c, _ := json.Marshal(content)
	return `{"sections":[{"id":"s","components":[{"type":"markdown","props":{"content":` + string(c) + `}}]}]}`
}

func TestMarkdownPDFText(t *testing.T) {
	tpl := MustCompile(t, schemaDef(markdownSchema(markdownSample)))
	pdf := MustRender(t, tpl, nil, Options{})
	if dir := os.Getenv("FOLIO_MD_OUT"); dir != "" {
		os.WriteFile(dir+"/md.pdf", pdf, 0o644)
	}
	got := ExtractText(t, pdf)
	for _, want := range []string{"Monthly report", "Sales grew 12 % in March, see the dashboard", "code()", "First point", "nested one", "Quoted words on two lines", "Region", "North", "1 200", "func main() {", `println("hi")`, "<b>raw html</b> stays text."} {
		if !strings.Contains(got, want) {
			t.Errorf("pdftotext lacks %q:\n%s", want, got)
		}
	}
}

// sheetXML returns the XML of sheet n of a workbook.
func sheetXML(tb testing.TB, data []byte, n int) string {
	tb.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		tb.Fatal(err)
	}
	rc, err := zr.Open("xl/worksheets/sheet" + strconv.Itoa(n) + ".xml")
	if err != nil {
		tb.Fatal(err)
	}
	defer rc.Close()
	raw, _ := io.ReadAll(rc)
	return string(raw)
}

func TestMarkdownXLSX(t *testing.T) {
	tpl := MustCompile(t, schemaDef(markdownSchema(markdownSample)))
	data, _ := MustRenderFormat(t, tpl, nil, XLSX, Options{})
	f, err := excelize.OpenReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sheet := f.GetSheetList()[0]
	rows, err := f.GetRows(sheet)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, r := range rows {
		all = append(all, strings.Join(r, "|"))
	}
	got := strings.Join(all, "\n")
	for _, want := range []string{
		"Monthly report",
		"Sales grew 12 % in March, see the dashboard (https://example.com/dash) or old code() and mail ops@example.com.",
		"• First point", "    1. nested one", "> Quoted words on two lines",
		"Region|Sales|Share", "South|900|30 %", "func main() {", `    println("hi")`,
		"<b>raw html</b> stays text. Jump to the top.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("sheet lacks %q:\n%s", want, got)
		}
	}
	// The styles are rich-text runs in the cell, read from the sheet XML.
	xml := sheetXML(t, data, 1)
	for _, want := range []*regexp.Regexp{
		richRun("b", "12 %"), richRun("i", "March"), richRun("strike", "old"),
		richRun(`rFont val="Courier New"`, `code\(\)`), richRun(`u val="single"`, "the dashboard"),
	} {
		if !want.MatchString(xml) {
			t.Errorf("sheet XML lacks %s", want)
		}
	}
}

func TestMarkdownTableCells(t *testing.T) {
	schema := `{"sections":[{"id":"s","components":[{"type":"table","props":{"rows":"items","columns":[
		{"header":"Item","value":"{{ row.name }}"},
		{"header":"Note","value":"{{ row.note }}","markdown":true}]}}]}]}`
	tpl := MustCompile(t, Definition{Schema: json.RawMessage(schema), Variables: []Variable{{Name: "items", Type: "array"}}})
	input := map[string]any{"items": []any{
		map[string]any{"name": "Pen", "note": "**blue** ink, see [spec](https://example.com/pen)"},
		map[string]any{"name": "Pad", "note": "- one\n- two"},
	}}
	pdf := MustRender(t, tpl, input, Options{})
	text := ExtractText(t, pdf)
	for _, want := range []string{"blue ink, see spec", "• one", "• two"} {
		if !strings.Contains(text, want) {
			t.Errorf("pdftotext lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "**") {
		t.Errorf("Markdown marks printed:\n%s", text)
	}
	_, links := ReadQPDF(t, pdf)
	if len(links) != 1 || links[0].URI != "https://example.com/pen" {
		t.Errorf("links %+v, want one to https://example.com/pen", links)
	}
	data, _ := MustRenderFormat(t, tpl, input, XLSX, Options{})
	xml := sheetXML(t, data, 1)
	if !richRun("b", "blue").MatchString(xml) {
		t.Errorf("the Markdown cell has no bold run:\n%s", xml)
	}
	// A link a value brings is checked like one in the template.
	input["items"] = []any{map[string]any{"name": "x", "note": "[run](javascript:alert(1))"}}
	values, err := tpl.Values(input)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tpl.Render(context.Background(), io.Discard, PDF, values, Options{})
	var ee *ExpressionError
	if !errors.As(err, &ee) || ee.Path != "schema.sections[0].components[0].props.columns[1].value" || !strings.Contains(ee.Message, "javascript") {
		t.Errorf("Render = %v, want an error at the Markdown column naming the javascript: scheme", err)
	}
}

func TestLinkValidation(t *testing.T) {
	comp := func(s string) string { return `{"sections":[{"id":"s","components":[` + s + `]}]}` }
	for _, tc := range []struct {
		name, schema, path, msg string
	}{
		{"markdown javascript link", markdownSchema("[x](javascript:alert(1))"), "schema.sections[0].components[0].props.content", "javascript: scheme"},
		{"markdown relative link", markdownSchema("[x](page.html)"), "schema.sections[0].components[0].props.content", "neither an http, https or mailto URL nor a #anchor"},
		{"markdown on text", comp(`{"type":"text","props":{"content":"[x](file:///etc/passwd)","markdown":true}}`), "schema.sections[0].components[0].props.content", "file: scheme"},
		{"text link", comp(`{"type":"text","props":{"content":"x","link":"ftp://example.com"}}`), "schema.sections[0].components[0].props.link", "ftp: scheme"},
		{"heading link without host", comp(`{"type":"heading","props":{"content":"x","link":"https://"}}`), "schema.sections[0].components[0].props.link", "has no host"},
		{"bad anchor link", comp(`{"type":"text","props":{"content":"x","link":"#two words"}}`), "schema.sections[0].components[0].props.link", "names no valid anchor"},
		{"bad anchor", comp(`{"type":"text","anchor":"a b","props":{"content":"x"}}`), "schema.sections[0].components[0].anchor", "letters, digits"},
		{"link with markdown", comp(`{"type":"text","props":{"content":"x","link":"https://example.com","markdown":true}}`), "schema.sections[0].components[0].props.link", "cannot be used"},
		{"toc level", comp(`{"type":"toc","props":{"maxLevel":9}}`), "schema.sections[0].components[0].props.maxLevel", "from 1 to 6"},
		{"markdown needs content", comp(`{"type":"markdown","props":{}}`), "schema.sections[0].components[0].props.content", "is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := MustEngine(t).Compile(schemaDef(tc.schema))
			var se *SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("Compile = %v, want a *SchemaError", err)
			}
			for _, is := range se.Issues {
				if is.Path == tc.path && strings.Contains(is.Message, tc.msg) {
					return
				}
			}
			t.Errorf("issues %+v, want %s: ...%s...", se.Issues, tc.path, tc.msg)
		})
	}
	// Links made by placeholders are checked when drawn.
	tpl := MustCompile(t, Definition{Schema: json.RawMessage(comp(`{"type":"text","props":{"content":"x","link":"{{ url }}"}}`)), Variables: []Variable{{Name: "url", Type: "string"}}})
	values, err := tpl.Values(map[string]any{"url": "javascript:alert(1)"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = tpl.Render(context.Background(), io.Discard, PDF, values, Options{})
	var ee *ExpressionError
	if !errors.As(err, &ee) || ee.Path != "schema.sections[0].components[0].props.link" {
		t.Errorf("Render = %v, want an error at props.link", err)
	}
}

func TestTextImageLinksAndAnchors(t *testing.T) {
	png := pngDataURI(t, 40, 20)
	schema := `{"sections":[{"id":"s","components":[
		{"type":"text","props":{"content":"Visit the site","link":"https://example.com/site?a=1&b=2"}},
		{"type":"image","props":{"src":"` + png + `","width":20,"link":"mailto:team@example.com"}},
		{"type":"text","props":{"content":"Go to the terms","link":"#terms"}},
		{"type":"text","props":{"content":"Nowhere","link":"#missing"}},
		{"type":"heading","props":{"content":"Über uns","level":1}},
		{"type":"heading","props":{"content":"Skipped level","level":3}},
		{"type":"pageBreak"},
		{"type":"text","anchor":"terms","props":{"content":"The terms."}},
		{"type":"heading","props":{"content":"Über uns","level":2}}
	]}]}`
	pdf := MustRender(t, MustCompile(t, schemaDef(schema)), nil, Options{})
	outline, links := ReadQPDF(t, pdf)
	if got, want := strings.Join(flatOutline(outline, 1), "\n"), "1:Über uns@1\n2:Skipped level@1\n2:Über uns@2"; got != want {
		t.Errorf("outline:\n%s\nwant:\n%s", got, want)
	}
	var got []string
	for _, l := range links {
		if l.URI != "" {
			got = append(got, l.URI)
		} else {
			got = append(got, "page "+strconv.Itoa(l.Target))
		}
	}
	// #missing names no anchor: no annotation rather than one to nowhere.
	if want := "https://example.com/site?a=1&b=2 mailto:team@example.com page 2"; strings.Join(got, " ") != want {
		t.Errorf("links %q, want %q", strings.Join(got, " "), want)
	}
	// The image's link covers the image: 20 mm wide.
	for _, l := range links {
		if l.URI == "mailto:team@example.com" {
			if w := (l.Rect[2] - l.Rect[0]) * 25.4 / 72; w < 19.9 || w > 20.1 {
				t.Errorf("image link is %.2f mm wide, want 20", w)
			}
		}
	}
}

// richRun matches a rich-text run in sheet XML whose properties hold the
// element tag (with its attributes) and whose text is text.
func richRun(tag, text string) *regexp.Regexp {
	return regexp.MustCompile(`<r><rPr>(?:<[^/>][^>]*>|</[^r][^>]*>)*<` + tag + `[ />]` + `(?:[^<]*</[A-Za-z]+>)?(?:<[^/>][^>]*>|</[^r][^>]*>)*</rPr><t[^>]*>` + text + `</t></r>`)
}

// TestMarkdownHostile feeds the Markdown that makes goldmark's cost grow
// with the square of its size (deep nesting on one line or by
// indentation, thousands of unclosed links or emphasis marks in one
// paragraph, megabyte lines): each is tamed before parsing (tameMarkdown)
// and keeps its words. Should taming break, this test takes minutes
// instead of a second.
func TestMarkdownHostile(t *testing.T) {
	var indent, quotes strings.Builder
	for i := 0; i < 2000; i++ {
		indent.WriteString(strings.Repeat("  ", i%400) + "- item\n")
		quotes.WriteString(strings.Repeat("> ", i%200) + "quoted\n")
	}
	for _, tc := range []struct {
		name, md, want string
	}{
		{"nested lists on one line", strings.Repeat("- ", 100000) + "end", "end"},
		{"nested quotes on one line", strings.Repeat(">", 200000) + " end", "end"},
		{"lists nested by indentation", indent.String(), "item"},
		{"quotes on every line", quotes.String(), "quoted"},
		{"unclosed links", strings.Repeat("[a](", 100000) + " end", "end"},
		{"nested links", strings.Repeat("[", 50000) + "x" + strings.Repeat("](#a)", 50000) + " end", "end"},
		{"emphasis marks", strings.Repeat("*a **b ", 50000) + strings.Repeat("** c*", 50000) + " end", "end"},
		{"code marks", strings.Repeat("`a ``b ", 100000) + " end", "end"},
		{"html openings", strings.Repeat("<a href=", 100000) + " end", "end"},
		{"a wide table", "|" + strings.Repeat("a|", 20000) + "\n|" + strings.Repeat("-|", 20000) + "\n" + strings.Repeat("|b", 20000) + "|\n\nend", "end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			blocks := parseMarkdown(markdownText(tc.md))
			text := plainText(flatSpans(blocks))
			if !strings.Contains(text, tc.want) {
				t.Errorf("the text lost %q: ...%s", tc.want, text[max(len(text)-200, 0):])
			}
		})
	}
	// Fenced code keeps its marks, however many.
	code := "```\n" + strings.Repeat("[x](", 1000) + "\n```\n"
	if got := parseMarkdown(code); len(got) != 1 || got[0].code != strings.Repeat("[x](", 1000) {
		t.Errorf("fenced code changed: %+v", got)
	}
}
