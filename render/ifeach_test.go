package render

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os/exec"
	"strings"
	"testing"
)

// solidPNG is a w×h PNG of one colour as a data URI.
func solidPNG(tb testing.TB, w, h int, c color.Color) string {
	tb.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		tb.Fatal(err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
}

// drawnImages counts the images pdfimages -list finds on the pages.
func drawnImages(tb testing.TB, pdf []byte) int {
	tb.Helper()
	needTool(tb, "pdfimages")
	out, err := exec.Command("pdfimages", "-list", writeTemp(tb, pdf)).CombinedOutput()
	if err != nil {
		tb.Fatalf("pdfimages: %v: %s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return max(0, len(lines)-2) // a header and a rule first
}

// darkBands counts the dark horizontal bands a vertical line at x mm
// crosses on page 1 (rasterized at 10 px/mm).
func darkBands(tb testing.TB, pdf []byte, x float64) int {
	tb.Helper()
	img := Rasterize(tb, pdf, 254)
	bands, in := 0, false
	for y := 0; y < img.Bounds().Dy(); y++ {
		d := dark(img, x, float64(y)/10)
		if d && !in {
			bands++
		}
		in = d
	}
	return bands
}

// TestIfAndEachOnEveryComponent checks that "if" and "each" work the same
// on every component: each draws one instance per element with the element
// in scope (under "as" when given), if draws it or not, and a false if
// skips the whole loop.
func TestIfAndEachOnEveryComponent(t *testing.T) {
	images := []any{
		solidPNG(t, 30, 10, color.RGBA{200, 0, 0, 255}),
		solidPNG(t, 30, 10, color.RGBA{0, 200, 0, 255}),
		solidPNG(t, 30, 10, color.RGBA{0, 0, 200, 255}),
	}
	// count says how many instances of the component a rendered PDF shows.
	words := func(prefix string) func(*testing.T, []byte) int {
		return func(t *testing.T, pdf []byte) int {
			n := 0
			for _, w := range strings.Fields(ExtractText(t, pdf)) {
				if strings.HasPrefix(w, prefix) {
					n++
				}
			}
			return n
		}
	}
	tests := []struct {
		kind      string
		component string // %s is where "if", "each" and "as" go; the loop variable is "n"
		count     func(*testing.T, []byte) int
	}{
		{"heading", `{"type":"heading",%s"props":{"content":"Head{{ n }}","level":2}}`, words("Head")},
		{"table", `{"type":"table",%s"props":{"rows":"[n, n * 10]","columns":[{"header":"TableHead{{ n }}","value":"Cell{{ row }}"}]}}`, words("TableHead")},
		{"keyValue", `{"type":"keyValue",%s"props":{"items":[{"label":"Label{{ n }}","value":"Value{{ n * 2 }}"}]}}`, words("Label")},
		{"barcode", `{"type":"barcode",%s"props":{"value":"CODE-{{ n }}","showText":true}}`, words("CODE-")},
		{"image", `{"type":"image",%s"props":{"src":"{{ pictures[n - 1] }}","width":30}}`, func(t *testing.T, pdf []byte) int { return drawnImages(t, pdf) }},
		{"divider", `{"type":"divider",%s"props":{"color":"#000000","thickness":1}}`, func(t *testing.T, pdf []byte) int { return darkBands(t, pdf, 150) }},
	}
	variants := []struct {
		name  string
		attrs string
		want  int
	}{
		{"each", `"each":"numbers","as":"n",`, 3},
		{"each over an empty list", `"each":"none","as":"n",`, 0},
		{"if true", `"if":"show && n == 2",`, 1},
		{"if false", `"if":"!show",`, 0},
		{"if true around each", `"if":"show","each":"numbers","as":"n",`, 3},
		{"if false around each", `"if":"len(numbers) > 5","each":"numbers","as":"n",`, 0},
	}
	input := map[string]any{"numbers": []any{1, 2, 3}, "none": []any{}, "show": true, "n": 2, "pictures": images}
	for _, tt := range tests {
		for _, v := range variants {
			t.Run(tt.kind+"/"+v.name, func(t *testing.T) {
				def := styleDoc(`{"type":"text","props":{"content":"Before"}}`, fmt.Sprintf(tt.component, v.attrs), `{"type":"text","props":{"content":"After"}}`)
				pdf := MustRender(t, MustCompile(t, def), input, Options{})
				if got := tt.count(t, pdf); got != v.want {
					t.Errorf("%s drawn %d times, want %d", tt.kind, got, v.want)
				}
				if text := ExtractText(t, pdf); !strings.Contains(text, "Before") || !strings.Contains(text, "After") {
					t.Errorf("the components around it are missing:\n%s", text)
				}
			})
		}
	}
	// Each instance sees its own element.
	def := styleDoc(
		`{"type":"heading","each":"numbers","as":"n","props":{"content":"Head{{ n }}"}}`,
		`{"type":"table","each":"numbers","as":"n","props":{"rows":"[n * 10]","columns":[{"header":"T{{ n }}","value":"Cell{{ row }}"}]}}`,
		`{"type":"keyValue","each":"numbers","props":{"items":[{"label":"L{{ item }}","value":"V{{ item * 2 }}"}]}}`,
		`{"type":"barcode","each":"numbers","props":{"value":"CODE-{{ item }}"}}`,
	)
	text := strings.Join(strings.Fields(ExtractText(t, MustRender(t, MustCompile(t, def), input, Options{}))), " ")
	for _, want := range []string{"Head1 Head2 Head3", "T1 Cell10", "T2 Cell20", "T3 Cell30", "L1 V2", "L2 V4", "L3 V6", "CODE-1", "CODE-2", "CODE-3"} {
		if !strings.Contains(text, want) {
			t.Errorf("%q not found in %q", want, text)
		}
	}
}
