package render

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goitalic"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/gofont/goregular"
)

// cffFamily is a family drawn by a font with CFF outlines, chosen as
// "CFF Test"; FOLIO_CFF_FONT names another .otf (or .ttc:index) to try.
func cffEngine(tb testing.TB, file string, index int) *Engine {
	tb.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	if b, err = CollectionFont(b, index); err != nil {
		tb.Fatal(err)
	}
	e, err := MustEngine(tb).WithFonts(FontFamily{Name: "CFF Test", Regular: b})
	if err != nil {
		tb.Fatalf("WithFonts: %v", err)
	}
	return e
}

// TestCFFFontsAreEmbeddedAsSubsets draws text with a font with CFF
// (PostScript) outlines and checks with poppler that it is embedded as a
// tagged CFF subset with a ToUnicode map that gives the text back, and
// that the page shows ink where the text is.
func TestCFFFontsAreEmbeddedAsSubsets(t *testing.T) {
	needTool(t, "pdftotext")
	file, text := filepath.Join("..", "app", "testdata", "assets", "cfftest.otf"), "Q10中" // the characters the test font has
	index := 0
	if f := os.Getenv("FOLIO_CFF_FONT"); f != "" {
		file, text = f, "Invoice 2026 请在十四天内付款 Größe"
		if i := strings.LastIndex(f, ".ttc:"); i > 0 {
			file, index = f[:i+4], int(f[i+5]-'0')
		}
	}
	e := cffEngine(t, file, index)
	tpl, err := e.Compile(schemaDef(`{"fontFamily":"CFF Test","sections":[{"id":"b","components":[
		{"type":"text","props":{"content":"` + text + `","style":{"fontSize":40}}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	pdf := MustRender(t, tpl, nil, Options{})
	names := fonts(t, pdf)
	found := false
	for _, n := range names {
		found = found || n == "CFFTest-Regular"
	}
	if !found {
		t.Fatalf("fonts %v lack the CFF font", names)
	}
	if !strings.Contains(string(pdf), "/CIDFontType0C") || !strings.Contains(string(pdf), "/Subtype /CIDFontType0 ") {
		t.Fatal("the CFF font is not embedded as CIDFontType0C")
	}
	if got := normalise(ExtractText(t, pdf)); got != normalise(text) {
		t.Fatalf("pdftotext = %q, want %q", got, text)
	}
	// A second reader: Ghostscript draws the embedded program, not a
	// substitute (it refuses programs poppler's FreeType accepts).
	needTool(t, "gs")
	out, err := exec.Command("gs", "-q", "-dNOPAUSE", "-dBATCH", "-dSAFER", "-sDEVICE=png16m", "-r40",
		"-sOutputFile="+filepath.Join(t.TempDir(), "gs.png"), writeTemp(t, pdf)).CombinedOutput()
	if err != nil || strings.Contains(string(out), "Warning") || strings.Contains(string(out), "substitute") {
		t.Fatalf("gs: %v\n%s", err, out)
	}
	if dir := os.Getenv("FOLIO_CFF_PNG"); dir != "" {
		os.WriteFile(filepath.Join(dir, "cff.pdf"), pdf, 0o644)
	}
	img := rasterize(t, pdf, 40)
	ink := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Min.Y+b.Dy()/4; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, _, _, _ := img.At(x, y).RGBA(); r < 0x8000 {
				ink++
			}
		}
	}
	if ink < 50 {
		t.Fatalf("the CFF glyphs draw no ink (%d dark pixels)", ink)
	}
}

// otherDocPictures are the pictures of docs/templates.md that tests other
// than the golden cases' draw (with -docimages).
var otherDocPictures = map[string]bool{"fonts-own.png": true} // TestDocImageOwnFonts

// TestDocImageOwnFonts draws the picture of docs/templates.md's fonts
// section with -docimages: families of a team's or an operator's own
// (Go, Go Mono; the CFF test font) beside the built-in fallbacks.
func TestDocImageOwnFonts(t *testing.T) {
	if !*docImages {
		t.Skip("run with -docimages to rewrite docs/images")
	}
	needTool(t, "pdftoppm")
	cff, err := os.ReadFile(filepath.Join("..", "app", "testdata", "assets", "cfftest.otf"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := MustEngine(t).WithFonts(
		FontFamily{Name: "Go", Regular: goregular.TTF, Bold: gobold.TTF, Italic: goitalic.TTF},
		FontFamily{Name: "Go Mono", Regular: gomono.TTF},
		FontFamily{Name: "CFF Test", Regular: cff})
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := e.Compile(schemaDef(`{"fontFamily":"Go","sections":[{"id":"b","components":[
		{"type":"heading","props":{"content":"Brand report: fontFamily \"Go\""}},
		{"type":"text","props":{"content":"Uploaded TrueType fonts, grouped by family: regular, bold and italic. Kunde: محمد بن سلمان, 請求書 ✅"}},
		{"type":"text","props":{"content":"Italic from the family's italic file.","style":{"italic":true}}},
		{"type":"text","fontFamily":"Go Mono","props":{"content":"fontFamily \"Go Mono\": INV-2026-0017   1,234.56"}},
		{"type":"text","props":{"content":"Below, a test font with CFF (PostScript) outlines, which has only these four characters:"}},
		{"type":"text","fontFamily":"CFF Test","props":{"content":"Q10中","style":{"fontSize":14}}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	pdf := MustRender(t, tpl, nil, Options{})
	if os.Getenv("FOLIO_CFF_PNG") != "" {
		os.WriteFile(filepath.Join(os.Getenv("FOLIO_CFF_PNG"), "own.pdf"), pdf, 0o644)
	}
	dir := t.TempDir()
	out, err := exec.Command("pdftoppm", "-png", "-r", "80", "-f", "1", "-l", "1", "-singlefile",
		"-x", "40", "-y", "40", "-W", "560", "-H", "175", writeTemp(t, pdf), filepath.Join(dir, "p")).CombinedOutput()
	if err != nil {
		t.Fatalf("pdftoppm: %v %s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "p.png"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("..", "docs", "images", "fonts-own.png"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}
