package render

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// svgSchema is a PDF with one svg component holding markup.
func svgSchema(tb testing.TB, markup string, extra string) Definition {
	tb.Helper()
	content, err := json.Marshal(markup)
	if err != nil {
		tb.Fatal(err)
	}
	return schemaDef(`{"sections":[{"id":"body","components":[{"type":"svg","props":{"content":` + string(content) + extra + `}}]}]}`)
}

func readShowcase(tb testing.TB) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "svg", "showcase.svg"))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// pdfImagesList returns the rows of pdfimages -list (after its header).
func pdfImagesList(tb testing.TB, pdf []byte) []string {
	tb.Helper()
	needTool(tb, "pdfimages")
	out, err := exec.Command("pdfimages", "-list", writeTemp(tb, pdf)).CombinedOutput()
	if err != nil {
		tb.Fatalf("pdfimages: %v: %s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 2 {
		return nil
	}
	return lines[2:]
}

// An SVG is drawn as vectors: its text is real text pdftotext finds, no
// raster image is embedded, and the page holds path operators.
func TestSVGDrawnAsVectors(t *testing.T) {
	tpl := MustCompile(t, svgSchema(t, readShowcase(t), `,"width":170`))
	pdf := MustRender(t, tpl, nil, Options{})
	if os.Getenv("SVG_OUT") != "" {
		os.WriteFile(os.Getenv("SVG_OUT"), pdf, 0o644)
	}
	text := ExtractText(t, pdf)
	for _, want := range []string{"month", "value", "Folio vector text", "selectable, searchable"} {
		if !strings.Contains(text, want) {
			t.Errorf("pdftotext misses %q:\n%s", want, text)
		}
	}
	if imgs := pdfImagesList(t, pdf); len(imgs) != 0 {
		t.Errorf("pdfimages lists images, want none: %q", imgs)
	}
	// The filter is left out with a warning naming it.
	var found bool
	for _, w := range tpl.Warnings() {
		if strings.Contains(w.Message, "filter") {
			found = true
		}
	}
	if !found {
		t.Errorf("no warning names the filter: %v", tpl.Warnings())
	}
}
