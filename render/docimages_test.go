package render

import (
	"bytes"
	"flag"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

var docImages = flag.Bool("docimages", false, "rewrite the pictures in ../docs/images from the layout golden cases")

// crop is part of a PDF page, in millimetres from its top left corner.
type crop struct {
	page       int
	x, y, w, h float64
}

// docPictures are the pictures docs/templates.md shows: each a grid of
// page parts rendered by pdftoppm, side by side in rows.
var docPictures = []struct {
	file, golden string
	dpi          int
	rows         [][]crop
}{
	{"layout-page-numbers.png", "page-numbers", 70, [][]crop{{{1, 10, 10, 190, 70}, {2, 10, 125, 190, 70}}}},
	{"layout-page-numbers-flow.png", "page-numbers-flow", 70, [][]crop{{{1, 10, 246.5, 190, 44}, {2, 10, 10, 190, 44}}, {{4, 10, 251.5, 190, 39}, {5, 10, 10, 190, 39}}}},
	{"layout-sections-on.png", "sections-on", 50, [][]crop{{{1, 0, 0, 210, 297}, {2, 0, 0, 210, 297}}}},
	{"layout-continued.png", "table-continued", 80, [][]crop{{{1, 15, 222, 180, 60}, {2, 15, 15, 180, 60}}, {{2, 15, 222, 180, 60}}}},
	{"layout-keep-together.png", "keep-together", 60, [][]crop{{{1, 10, 150, 190, 140}, {2, 10, 10, 190, 140}}}},
	{"layout-widows-orphans.png", "widows-orphans", 70, [][]crop{{{2, 15, 230, 180, 50}, {3, 15, 15, 180, 30}}, {{5, 15, 240, 180, 40}, {6, 15, 15, 180, 30}}}},
	{"layout-totals.png", "table-totals", 70, [][]crop{{{1, 10, 10, 277, 190}}, {{2, 10, 10, 277, 45}}}},
}

// TestDocImages renders the pictures of docs/templates.md with -docimages.
func TestDocImages(t *testing.T) {
	if !*docImages {
		t.Skip("run with -docimages to rewrite docs/images")
	}
	needTool(t, "pdftoppm")
	for _, pic := range docPictures {
		def, input := LoadCase(t, filepath.Join("testdata", pic.golden))
		pdf, _ := MustRenderFormat(t, MustCompile(t, def), input, PDF, Options{})
		path := writeTemp(t, pdf)
		const gap = 12
		var rows [][]image.Image
		width, height := 0, 0
		for _, row := range pic.rows {
			var imgs []image.Image
			w, h := 0, 0
			for _, c := range row {
				img := renderCrop(t, path, pic.dpi, c)
				imgs = append(imgs, img)
				w += img.Bounds().Dx() + gap
				h = max(h, img.Bounds().Dy())
			}
			rows = append(rows, imgs)
			width = max(width, w+gap)
			height += h + gap
		}
		out := image.NewGray(image.Rect(0, 0, width, height+gap))
		draw.Draw(out, out.Bounds(), image.NewUniform(color.Gray{0xd8}), image.Point{}, draw.Src)
		y := gap
		for _, imgs := range rows {
			x, h := gap, 0
			for _, img := range imgs {
				r := img.Bounds().Add(image.Pt(x, y).Sub(img.Bounds().Min))
				draw.Draw(out, r, img, img.Bounds().Min, draw.Src)
				x += img.Bounds().Dx() + gap
				h = max(h, img.Bounds().Dy())
			}
			y += h + gap
		}
		var buf bytes.Buffer
		if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, out); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("..", "docs", "images", pic.file), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// renderCrop renders part of one page with pdftoppm.
func renderCrop(t *testing.T, pdf string, dpi int, c crop) image.Image {
	t.Helper()
	px := func(mm float64) string { return strconv.Itoa(int(mm / 25.4 * float64(dpi))) }
	out := filepath.Join(t.TempDir(), "crop")
	args := []string{"-png", "-gray", "-r", strconv.Itoa(dpi), "-f", strconv.Itoa(c.page), "-l", strconv.Itoa(c.page),
		"-x", px(c.x), "-y", px(c.y), "-W", px(c.w), "-H", px(c.h), "-singlefile", pdf, out}
	if b, err := exec.Command("pdftoppm", args...).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v: %s", err, b)
	}
	raw, err := os.ReadFile(out + ".png")
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return img
}
