package render

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/gobolditalic"
	"golang.org/x/image/font/gofont/goitalic"
	"golang.org/x/image/font/gofont/goregular"
)

var (
	engineOnce sync.Once
	engine     *Engine
	engineErr  error
)

// MustEngine returns an engine with the Go fonts, built once per test binary.
func MustEngine(tb testing.TB) *Engine {
	tb.Helper()
	engineOnce.Do(func() {
		engine, engineErr = NewEngine(Fonts{Regular: goregular.TTF, Bold: gobold.TTF, Italic: goitalic.TTF, BoldItalic: gobolditalic.TTF})
	})
	if engineErr != nil {
		tb.Fatalf("NewEngine: %v", engineErr)
	}
	return engine
}

// MustCompile compiles a definition whose schema is given as JSON text.
func MustCompile(tb testing.TB, def Definition) *Template {
	tb.Helper()
	tpl, err := MustEngine(tb).Compile(def)
	if err != nil {
		tb.Fatalf("Compile: %v", err)
	}
	return tpl
}

// MustRender checks values and renders a PDF.
func MustRender(tb testing.TB, tpl *Template, input map[string]any, opts Options) []byte {
	tb.Helper()
	values, err := tpl.Values(input)
	if err != nil {
		tb.Fatalf("Values: %v", err)
	}
	var buf bytes.Buffer
	stats, err := tpl.Render(context.Background(), &buf, PDF, values, opts)
	if err != nil {
		tb.Fatalf("Render: %v", err)
	}
	if got, want := stats.Bytes, int64(buf.Len()); got != want {
		tb.Errorf("stats.Bytes = %d, want %d", got, want)
	}
	return buf.Bytes()
}

// schemaDef wraps schema JSON in a definition.
func schemaDef(schema string) Definition {
	return Definition{Schema: json.RawMessage(schema)}
}

// needTool skips the test when a poppler tool is missing.
func needTool(tb testing.TB, name string) {
	tb.Helper()
	if _, err := exec.LookPath(name); err != nil {
		tb.Skipf("%s not installed", name)
	}
}

func writeTemp(tb testing.TB, pdf []byte) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "doc.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// ExtractText returns the text pdftotext finds in a PDF.
func ExtractText(tb testing.TB, pdf []byte, args ...string) string {
	tb.Helper()
	needTool(tb, "pdftotext")
	args = append(append([]string{"-enc", "UTF-8"}, args...), writeTemp(tb, pdf), "-")
	out, err := exec.Command("pdftotext", args...).CombinedOutput()
	if err != nil {
		tb.Fatalf("pdftotext: %v: %s", err, out)
	}
	return string(out)
}

// PDFInfo returns pdfinfo's fields, e.g. "Pages" and "Page size".
func PDFInfo(tb testing.TB, pdf []byte) map[string]string {
	tb.Helper()
	needTool(tb, "pdfinfo")
	out, err := exec.Command("pdfinfo", writeTemp(tb, pdf)).CombinedOutput()
	if err != nil {
		tb.Fatalf("pdfinfo: %v: %s", err, out)
	}
	info := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			info[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return info
}

// PageCount returns the number of pages pdfinfo reports.
func PageCount(tb testing.TB, pdf []byte) int {
	tb.Helper()
	n, err := strconv.Atoi(PDFInfo(tb, pdf)["Pages"])
	if err != nil {
		tb.Fatalf("pdfinfo pages: %v", err)
	}
	return n
}

var bboxWord = regexp.MustCompile(`<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">`)

// WordBoxes returns every word's box (in points) as pdftotext -bbox reports it.
func WordBoxes(tb testing.TB, pdf []byte) [][4]float64 {
	tb.Helper()
	var boxes [][4]float64
	for _, m := range bboxWord.FindAllStringSubmatch(ExtractText(tb, pdf, "-bbox"), -1) {
		var box [4]float64
		for i := range box {
			box[i], _ = strconv.ParseFloat(m[i+1], 64)
		}
		boxes = append(boxes, box)
	}
	return boxes
}
