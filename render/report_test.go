package render

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// solidPNGDataURI is a data URI of a w×h PNG of one colour.
func solidPNGDataURI(t *testing.T, w, h int, c color.Color) string {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes())
}

// TestMonthlyReportPages compares the monthly report example's pages,
// with a logo and a cover picture given (as data URIs here; an asset and
// an https URL through the API in TestMonthlyReportEndToEnd), with their
// golden pictures: the SVG mark, the contents, the key figures beside
// the cover, the Markdown commentary and the charts (run with -update to
// redraw them, and look at them).
func TestMonthlyReportPages(t *testing.T) {
	ex, input := LoadExample(t, "monthly-report")
	input["logo"] = solidPNGDataURI(t, 60, 20, color.NRGBA{20, 60, 200, 255})
	input["coverImage"] = solidPNGDataURI(t, 90, 40, color.NRGBA{30, 160, 90, 255})
	pdf, stats := MustRenderFormat(t, MustCompile(t, ex.Definition), input, PDF, Options{})
	if stats.Pages != 3 {
		t.Fatalf("pages = %d, want 3", stats.Pages)
	}
	path := writeTemp(t, pdf)
	for page := 1; page <= 3; page++ {
		img := renderCrop(t, path, 60, crop{page: page, w: 210, h: 297})
		golden := filepath.Join("testdata", "monthly-report", "page-"+strconv.Itoa(page)+".png")
		if *update {
			var buf bytes.Buffer
			if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, img); err != nil {
				t.Fatal(err)
			}
			os.MkdirAll(filepath.Dir(golden), 0o755)
			if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		raw, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run with -update)", err)
		}
		old, err := png.Decode(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		if differ, blocks := blockDifference(old, img); differ*200 > blocks {
			t.Errorf("page %d differs from %s in %d of %d blocks (run with -update and look at it)", page, golden, differ, blocks)
		}
	}
}
