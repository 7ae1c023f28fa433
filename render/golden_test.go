package render

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// TestGolden renders every testdata/<case>/template.json with its
// vars.json to PDF and XLSX and compares what comes back out: the text
// pdftotext reads page by page (pdf.golden) and every cell with its type
// and number format (xlsx.golden). Run with -update to rewrite the golden
// files after a deliberate change, then review the diff. pdf.golden starts
// with pdfinfo's page count and page size.
func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "*", "template.json"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases found: %v", err)
	}
	for _, path := range dirs {
		dir := filepath.Dir(path)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			def, input := LoadCase(t, dir)
			tpl := MustCompile(t, def)
			pdf, stats := MustRenderFormat(t, tpl, input, PDF, Options{})
			info := PDFInfo(t, pdf)
			text := PDFPages(t, pdf)
			if pages := itoa(strings.Count(text, "--- page ")); info["Pages"] != pages || itoa(stats.Pages) != pages {
				t.Errorf("pdfinfo says %s pages, stats %d, pdftotext found %s", info["Pages"], stats.Pages, pages)
			}
			got := "pages: " + info["Pages"] + "\nsize: " + info["Page size"] + "\n" + text
			CompareGolden(t, filepath.Join(dir, "pdf.golden"), got)
			xlsx, _ := MustRenderFormat(t, tpl, input, XLSX, Options{})
			CompareGolden(t, filepath.Join(dir, "xlsx.golden"), DumpXLSX(t, xlsx))
		})
	}
}

// LoadCase reads a template definition (the body of POST /api/templates:
// extra fields such as name and outputFormats are ignored) and, when
// present, its vars.json next to it.
func LoadCase(tb testing.TB, dir string) (Definition, map[string]any) {
	tb.Helper()
	var def Definition
	MustReadJSON(tb, filepath.Join(dir, "template.json"), &def)
	var input map[string]any
	if _, err := os.Stat(filepath.Join(dir, "vars.json")); err == nil {
		MustReadJSON(tb, filepath.Join(dir, "vars.json"), &input)
	}
	return def, input
}

// MustReadJSON decodes a JSON file into v.
func MustReadJSON(tb testing.TB, path string, v any) {
	tb.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
}

var spaces = regexp.MustCompile(`[ \t]+`)

// PDFPages returns pdftotext's layout text with a "--- page N ---" line
// before every page, runs of blanks squeezed to one space and empty lines
// dropped, so it holds every row of a table on one line.
func PDFPages(tb testing.TB, pdf []byte) string {
	tb.Helper()
	var b strings.Builder
	pages := strings.Split(ExtractText(tb, pdf, "-layout"), "\f")
	for i, page := range pages {
		if i == len(pages)-1 && strings.TrimSpace(page) == "" {
			break // pdftotext ends every page with a form feed
		}
		b.WriteString("--- page " + itoa(i+1) + " ---\n")
		for _, line := range strings.Split(page, "\n") {
			line = strings.TrimSpace(spaces.ReplaceAllString(line, " "))
			if line != "" {
				b.WriteString(line + "\n")
			}
		}
	}
	return b.String()
}

// CompareGolden compares got with the golden file, or rewrites the file
// with -update.
func CompareGolden(tb testing.TB, path, got string) {
	tb.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run go test -run TestGolden -update to create it)", err)
	}
	if got != string(want) {
		tb.Errorf("%s differs (run with -update to accept):\n%s", path, lineDiff(string(want), got))
	}
}

// lineDiff lists the first lines that differ.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < 10; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			b.WriteString("line " + itoa(i+1) + ":\n  want " + wl + "\n  got  " + gl + "\n")
			shown++
		}
	}
	return b.String()
}
