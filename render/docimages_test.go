package render

import (
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var docImages = flag.Bool("docimages", false, "rewrite the pictures in ../docs/images from the layout golden cases")

// crop is part of a PDF page, in millimetres from its top left corner;
// golden, when set, names another golden case than the picture's.
type crop struct {
	page       int
	x, y, w, h float64
	golden     string
}

// docPictureSpec is one picture docs/templates.md shows: a grid of page
// parts of a golden case's PDF, rendered by pdftoppm, side by side in rows.
type docPictureSpec struct {
	file, golden string
	dpi          int
	rows         [][]crop
}

// docPictures are the pictures docs/templates.md shows.
var docPictures = []docPictureSpec{
	{"layout-page-numbers.png", "page-numbers", 70, [][]crop{{{1, 10, 10, 190, 70, ""}, {2, 10, 125, 190, 70, ""}}}},
	{"layout-page-numbers-flow.png", "page-numbers-flow", 70, [][]crop{{{1, 10, 246.5, 190, 44, ""}, {2, 10, 10, 190, 44, ""}}, {{4, 10, 251.5, 190, 39, ""}, {5, 10, 10, 190, 39, ""}}}},
	{"layout-sections-on.png", "sections-on", 50, [][]crop{{{1, 0, 0, 210, 297, ""}, {2, 0, 0, 210, 297, ""}}}},
	{"layout-continued.png", "table-continued", 80, [][]crop{{{1, 15, 222, 180, 60, ""}, {2, 15, 15, 180, 60, ""}}, {{2, 15, 222, 180, 60, ""}}}},
	{"layout-keep-together.png", "keep-together", 60, [][]crop{{{1, 10, 150, 190, 140, ""}, {2, 10, 10, 190, 140, ""}}}},
	{"layout-widows-orphans.png", "widows-orphans", 70, [][]crop{{{2, 15, 230, 180, 50, ""}, {3, 15, 15, 180, 30, ""}}, {{5, 15, 240, 180, 40, ""}, {6, 15, 15, 180, 30, ""}}}},
	{"layout-totals.png", "table-totals", 70, [][]crop{{{1, 10, 10, 277, 190, ""}}, {{2, 10, 10, 277, 45, ""}}}},
	{"locale-invoice.png", "invoice-de-DE", 80, [][]crop{{{1, 15, 15, 180, 84, ""}, {1, 15, 15, 180, 84, "invoice-en-IN"}}}},
	{"markdown-toc.png", "markdown", 70, [][]crop{{{1, 15, 15, 180, 60, ""}, {2, 15, 15, 180, 60, ""}}, {{2, 15, 75, 180, 60, ""}, {2, 15, 135, 180, 60, ""}}}},
	{"chart.png", "chart", 60, [][]crop{{{1, 15, 28, 180, 196, ""}}, {{2, 15, 15, 180, 100, ""}}}},
	{"svg-showcase.png", "svg-showcase", 80, [][]crop{{{1, 12, 12, 186, 122, ""}}}},
}

// docImagesText is the text of every picture's page parts, written by
// -docimages together with the pictures, so TestDocImagesMatchGoldenCases
// notices when a golden case no longer draws what its picture shows.
var docImagesText = filepath.Join("testdata", "docimages.golden")

// TestDocImages renders the pictures of docs/templates.md with -docimages.
func TestDocImages(t *testing.T) {
	if !*docImages {
		t.Skip("run with -docimages to rewrite docs/images")
	}
	needTool(t, "pdftoppm")
	var texts strings.Builder
	for _, pic := range docPictures {
		img, text := docPicture(t, pic)
		var buf bytes.Buffer
		if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("..", "docs", "images", pic.file), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		texts.WriteString(text)
	}
	if err := os.WriteFile(docImagesText, []byte(texts.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDocImagesMatchGoldenCases checks that the pictures in docs/images
// are still what their golden cases draw: every picture is shown by
// docs/templates.md and made from a golden case; the text in its page
// parts is the text recorded when it was made (docimages.golden: exact,
// and the same with any poppler); and the picture made now has the same
// size and, block by block, nearly the same ink as the one in docs/images
// (a tolerance for anti-aliasing that differs between poppler versions;
// a moved row or page break changes far more).
func TestDocImagesMatchGoldenCases(t *testing.T) {
	if raceEnabled {
		// One goroutine; the golden cases it draws are rendered under -race
		// by TestGolden, and the rest is comparing pixels (29 s of the race
		// step at load 10).
		t.Skip("compares pictures in one goroutine; run without -race")
	}
	needTool(t, "pdftoppm")
	doc := MustReadFile(t, filepath.Join("..", "docs", "templates.md"))
	files, err := filepath.Glob(filepath.Join("..", "docs", "images", "*.png"))
	if err != nil {
		t.Fatal(err)
	}
	made := map[string]bool{}
	for _, pic := range docPictures {
		made[pic.file] = true
		if !strings.Contains(doc, "](images/"+pic.file+")") {
			t.Errorf("docs/templates.md does not show %s", pic.file)
		}
	}
	for _, f := range files {
		if !made[filepath.Base(f)] && !otherDocPictures[filepath.Base(f)] {
			t.Errorf("docs/images/%s is made by no golden case (docPictures)", filepath.Base(f))
		}
	}
	var texts strings.Builder
	for _, pic := range docPictures {
		t.Run(pic.file, func(t *testing.T) {
			img, text := docPicture(t, pic)
			texts.WriteString(text)
			raw, err := os.ReadFile(filepath.Join("..", "docs", "images", pic.file))
			if err != nil {
				t.Fatal(err)
			}
			old, err := png.Decode(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			if differ, blocks := blockDifference(old, img); differ*200 > blocks {
				t.Errorf("docs/images/%s differs from what %s draws now in %d of %d blocks (run go test ./render -run TestDocImages -docimages)",
					pic.file, pic.golden, differ, blocks)
			}
		})
	}
	want := MustReadFile(t, docImagesText)
	if got := texts.String(); got != want {
		t.Errorf("the golden cases no longer draw what docs/images shows (run go test ./render -run TestDocImages -docimages):\n%s", lineDiff(want, got))
	}
}

// blockDifference compares two grey pictures of the same size in blocks
// of 8×8 pixels: it counts the blocks whose mean grey level differs by
// more than 16 of 255 (anti-aliasing moves a block's mean by a few; a
// table shifted by 6 mm changes about 1% of the blocks, and the test
// allows 0.5%). Pictures of different sizes differ
// everywhere.
func blockDifference(a, b image.Image) (differ, blocks int) {
	const size = 8
	ab, bb := a.Bounds(), b.Bounds()
	if ab.Dx() != bb.Dx() || ab.Dy() != bb.Dy() {
		return 1, 1
	}
	mean := func(img image.Image, x0, y0 int) int {
		r := img.Bounds()
		sum, n := 0, 0
		for y := y0; y < min(y0+size, r.Dy()); y++ {
			for x := x0; x < min(x0+size, r.Dx()); x++ {
				sum += int(color.GrayModel.Convert(img.At(r.Min.X+x, r.Min.Y+y)).(color.Gray).Y)
				n++
			}
		}
		return sum / n
	}
	for y := 0; y < ab.Dy(); y += size {
		for x := 0; x < ab.Dx(); x += size {
			blocks++
			if d := mean(a, x, y) - mean(b, x, y); d > 16 || d < -16 {
				differ++
			}
		}
	}
	return differ, blocks
}

// docPicture renders one picture from its golden case: a grid of page
// parts rendered by pdftoppm, side by side in rows, and the text
// pdftotext reads in those parts.
func docPicture(t *testing.T, pic docPictureSpec) (image.Image, string) {
	t.Helper()
	pdfs := map[string][]byte{}
	paths := map[string]string{}
	render := func(golden string) ([]byte, string) {
		if golden == "" {
			golden = pic.golden
		}
		if _, ok := pdfs[golden]; !ok {
			def, input := LoadCase(t, filepath.Join("testdata", golden))
			pdfs[golden], _ = MustRenderFormat(t, MustCompile(t, def), input, PDF, Options{})
			paths[golden] = writeTemp(t, pdfs[golden])
		}
		return pdfs[golden], paths[golden]
	}
	const gap = 12
	var rows [][]image.Image
	var text strings.Builder
	text.WriteString("=== " + pic.file + "\n")
	width, height := 0, 0
	for _, row := range pic.rows {
		var imgs []image.Image
		w, h := 0, 0
		for _, c := range row {
			pdf, path := render(c.golden)
			img := renderCrop(t, path, pic.dpi, c)
			imgs = append(imgs, img)
			w += img.Bounds().Dx() + gap
			h = max(h, img.Bounds().Dy())
			if c.golden != "" {
				text.WriteString("--- " + c.golden + "\n")
			}
			text.WriteString(fmt.Sprintf("--- page %d, %g %g %g %g\n", c.page, c.x, c.y, c.w, c.h))
			text.WriteString(cropText(t, pdf, c))
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
	return out, text.String()
}

// cropText is the text of part of a page, one squeezed line per line.
func cropText(t *testing.T, pdf []byte, c crop) string {
	t.Helper()
	pt := func(mm float64) string { return strconv.Itoa(int(mm / 25.4 * 72)) }
	raw := ExtractText(t, pdf, "-layout", "-r", "72", "-f", strconv.Itoa(c.page), "-l", strconv.Itoa(c.page),
		"-x", pt(c.x), "-y", pt(c.y), "-W", pt(c.w), "-H", pt(c.h))
	var b strings.Builder
	for _, line := range strings.Split(raw, "\n") {
		if line = strings.TrimSpace(spaces.ReplaceAllString(strings.Trim(line, "\f"), " ")); line != "" {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
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
