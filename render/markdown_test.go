package render

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
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
