package render

import (
	"strings"
	"testing"
)

// TestRTLRunsInLTRTextExtractInLogicalOrder checks that a right-to-left
// run inside a left-to-right paragraph (an Arabic name in a German
// sentence, a Hebrew phrase before a number) comes back from pdftotext
// in logical order, words and letters, in its default and -layout modes.
// (Its -raw mode lists text in drawing order by definition.) Marking such
// runs with /ActualText in logical order, as PDF 32000-1 §14.9.4 means
// it, makes poppler 22 reverse them: see docs/decisions.md, "Right-to-left
// runs and ActualText".
func TestRTLRunsInLTRTextExtractInLogicalOrder(t *testing.T) {
	lines := []string{
		"Rechnung für محمد بن سلمان aus Riad, Betrag 12,50 €.",
		"Kunde: שלום עליכם 2026 und mehr",
		"Name: عبد الله الأحمد, Kundennummer 4711",
	}
	content := strings.Join(lines, `"}},{"type":"text","props":{"content":"`)
	tpl := MustCompile(t, schemaDef(`{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"`+content+`"}}]}]}`))
	pdf := MustRender(t, tpl, nil, Options{})
	for _, mode := range [][]string{nil, {"-layout"}} {
		got := normalise(ExtractText(t, pdf, mode...))
		for _, l := range lines {
			if !strings.Contains(got, normalise(l)) {
				t.Errorf("pdftotext %v: %q is not in logical order in\n%s", mode, l, got)
			}
		}
	}
}
