package render

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/json"
	"image/color"
	"io"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// pageContent returns the inflated streams of a PDF, concatenated: its
// pages' content among them.
func pageContent(tb testing.TB, pdf []byte) string {
	tb.Helper()
	var out strings.Builder
	for rest := pdf; ; {
		i := bytes.Index(rest, []byte("stream\n"))
		if i < 0 {
			break
		}
		rest = rest[i+len("stream\n"):]
		j := bytes.Index(rest, []byte("endstream"))
		if j < 0 {
			break
		}
		zr, err := zlib.NewReader(bytes.NewReader(rest[:j]))
		if err == nil {
			b, _ := io.ReadAll(zr)
			out.Write(b)
			out.WriteByte('\n')
		}
		rest = rest[j:]
	}
	return out.String()
}

// The page holds the drawing's own operators: curves, a clip to the box,
// an even-odd fill, a dash pattern, the gradients as shadings and the
// opacity as graphics states.
func TestSVGOperators(t *testing.T) {
	tpl := MustCompile(t, svgSchema(t, readShowcase(t), `,"width":170`))
	pdf := MustRender(t, tpl, nil, Options{})
	content := pageContent(t, pdf)
	for _, op := range []string{" c ", "re W n", " f* ", "] 0 d ", " sh ", " gs", " cm ", " B", " S", "1 J 1 j"} {
		if !strings.Contains(content, op) {
			t.Errorf("page content has no %q", op)
		}
	}
	if n := strings.Count(string(pdf), "/ShadingType"); n != 2 {
		t.Errorf("%d shadings, want 2 (the sky and the sun)", n)
	}
	if !strings.Contains(string(pdf), "/FunctionType 3") {
		t.Errorf("the three-stop gradient has no stitching function")
	}
}

// Markup with placeholders is read when a render draws it; markup from a
// variable too; an svg src names an asset, a data URI or a URL.
func TestSVGSources(t *testing.T) {
	dynamic := MustCompile(t, svgSchema(t, `<svg xmlns="http://www.w3.org/2000/svg" width="100" height="20"><text x="0" y="15">Hello {{ name }}</text></svg>`, ""))
	if text := ExtractText(t, MustRender(t, dynamic, map[string]any{"name": "Ada & Bob"}, Options{})); !strings.Contains(text, "Hello Ada & Bob") {
		t.Errorf("dynamic text: %q", text)
	}
	// Values are text, never markup.
	if text := ExtractText(t, MustRender(t, dynamic, map[string]any{"name": `</text><rect width="9"/>`}, Options{})); !strings.Contains(text, `Hello </text><rect width="9"/>`) {
		t.Errorf("markup in a value: %q", text)
	}

	markup := `<svg xmlns="http://www.w3.org/2000/svg" width="80" height="20"><text x="0" y="15">From a data URI</text></svg>`
	uri := "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(markup))
	def := schemaDef(`{"sections":[{"id":"body","components":[
		{"type":"svg","props":{"src":"` + uri + `"}},
		{"type":"image","props":{"src":"data:image/svg+xml,` + url.PathEscape(strings.ReplaceAll(markup, "data URI", "image src")) + `","width":40}},
		{"type":"svg","props":{"src":"asset:drawing"}}]}]}`)
	tpl := MustCompile(t, def)
	assets := Options{Assets: func(ref string) (string, []byte, error) {
		return "image", []byte(strings.ReplaceAll(markup, "a data URI", "asset:"+ref)), nil
	}}
	text := ExtractText(t, MustRender(t, tpl, nil, assets))
	for _, want := range []string{"From a data URI", "From a image src", "From asset:drawing"} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in %q", want, text)
		}
	}
	// A PNG asset in an svg component is refused, pointing at image.
	png := Options{Assets: func(string) (string, []byte, error) {
		return "image", pngFile(4, 4, 8, 2, false, func(x, y int) color.NRGBA64 { return color.NRGBA64{A: 0xffff} }), nil
	}}
	_, err := tpl.Render(t.Context(), &bytes.Buffer{}, PDF, nil, png)
	assertExpressionError(t, err, "schema.sections[0].components[2].props.src", "is not an SVG image: draw it with an image component")

	for _, bad := range []struct{ props, want string }{
		{`{"content":"<svg","width":10}`, "not well-formed"},
		{`{"content":"<svg/>","src":"asset:x"}`, "not both"},
		{`{}`, "is required"},
		{`{"src":"ftp://example.com/a.svg"}`, "must be asset:"},
		{`{"src":"http://example.com/a.svg"}`, "must use https://"},
		{`{"content":"<html/>"}`, "not <svg>"},
	} {
		_, err := MustEngine(t).Compile(schemaDef(`{"sections":[{"id":"body","components":[{"type":"svg","props":` + bad.props + `}]}]}`))
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want %q", bad.props, err, bad.want)
		}
	}
}

// Sizes: width alone keeps the proportions, both give the box, none is the
// natural size at 96 dpi, and nothing is wider than the column.
func TestSVGSize(t *testing.T) {
	for _, tc := range []struct {
		props string
		w, h  float64 // millimetres
	}{
		{``, 96 * pixelMM, 48 * pixelMM},
		{`,"width":50`, 50, 25},
		{`,"height":10`, 20, 10},
		{`,"width":40,"height":40`, 40, 40},
		{`,"width":400`, 170, 85},
	} {
		tpl := MustCompile(t, svgSchema(t, `<svg xmlns="http://www.w3.org/2000/svg" width="96" height="48"><rect width="96" height="48" fill="#000"/></svg>`, tc.props))
		content := pageContent(t, MustRender(t, tpl, nil, Options{}))
		// The clip rectangle is the box, in points.
		k := 72 / 25.4
		want := []float64{20 * k, (297 - 20 - tc.h) * k, tc.w * k, tc.h * k}
		i := strings.Index(content, "re W n")
		if i < 0 {
			t.Fatalf("%s: no clip in %s", tc.props, content)
		}
		fields := strings.Fields(content[:i])
		got := fields[len(fields)-4:]
		for j, g := range got {
			v, _ := strconv.ParseFloat(g, 64)
			if math.Abs(v-want[j]) > 0.01 {
				t.Errorf("%s: clip %v, want %v", tc.props, got, want)
				break
			}
		}
	}
}

// BenchmarkSVGShowcase renders the one-page document with the showcase
// SVG (gradients, arcs, text, about 40 items).
func BenchmarkSVGShowcase(b *testing.B) {
	tpl := MustCompile(b, svgSchema(b, readShowcase(b), `,"width":170`))
	for b.Loop() {
		if _, err := tpl.Render(b.Context(), io.Discard, PDF, nil, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
