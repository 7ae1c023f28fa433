package render

import (
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The tests in this file check what styles look like, through poppler
// (pdffonts, pdftotext -bbox, pdfinfo, pdftoppm) rather than through the
// engine's own figures. Positions are in points; 1 mm = 72/25.4 pt.

const mm = 72 / 25.4

// word is one word pdftotext -bbox found, with its box in points
// (origin at the top left of the page).
type word struct {
	text                   string
	xMin, yMin, xMax, yMax float64
}

func (w word) height() float64         { return w.yMax - w.yMin }
func (w word) centre() float64         { return (w.xMin + w.xMax) / 2 }
func (w word) String() string          { return strconv.Quote(w.text) }
func (w word) width() float64          { return w.xMax - w.xMin }
func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

var bboxWordText = regexp.MustCompile(`<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>`)

// words returns the words of a PDF's first page with their boxes.
func words(tb testing.TB, pdf []byte) []word {
	tb.Helper()
	var out []word
	page := strings.SplitN(ExtractText(tb, pdf, "-bbox", "-f", "1", "-l", "1"), "</page>", 2)[0]
	for _, m := range bboxWordText.FindAllStringSubmatch(page, -1) {
		w := word{text: m[5]}
		for i, v := range []*float64{&w.xMin, &w.yMin, &w.xMax, &w.yMax} {
			*v, _ = strconv.ParseFloat(m[i+1], 64)
		}
		out = append(out, w)
	}
	return out
}

// findWord returns the only word with text.
func findWord(tb testing.TB, list []word, text string) word {
	tb.Helper()
	var found []word
	for _, w := range list {
		if w.text == text {
			found = append(found, w)
		}
	}
	if len(found) != 1 {
		tb.Fatalf("word %q found %d times in %v", text, len(found), list)
	}
	return found[0]
}

// pageSize returns the first page's size in points, from pdfinfo.
func pageSize(tb testing.TB, pdf []byte) (w, h float64) {
	tb.Helper()
	size := PDFInfo(tb, pdf)["Page size"] // "595.28 x 841.89 pts (A4)"
	if _, err := fmt.Sscanf(size, "%f x %f", &w, &h); err != nil {
		tb.Fatalf("pdfinfo page size %q: %v", size, err)
	}
	return w, h
}

// fonts lists the fonts pdffonts finds, by name.
func fonts(tb testing.TB, pdf []byte) []string {
	tb.Helper()
	needTool(tb, "pdffonts")
	out, err := exec.Command("pdffonts", writeTemp(tb, pdf)).CombinedOutput()
	if err != nil {
		tb.Fatalf("pdffonts: %v: %s", err, out)
	}
	var names []string
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for _, line := range lines[min(2, len(lines)):] { // a header and a rule first
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if !regexp.MustCompile(`yes +yes +yes`).MatchString(line) {
			tb.Errorf("font %s is not embedded as a subset with a ToUnicode map: %s", f[0], line)
		}
		tag, name, ok := strings.Cut(f[0], "+")
		if !ok || !regexp.MustCompile(`^[A-Z]{6}$`).MatchString(tag) {
			tb.Errorf("font %s has no subset tag (PDF 32000-1 9.6.4)", f[0])
		}
		names = append(names, name)
	}
	return names
}

// rasterize renders a PDF's first page with pdftoppm at dpi.
func rasterize(tb testing.TB, pdf []byte, dpi int) image.Image {
	tb.Helper()
	needTool(tb, "pdftoppm")
	dir := tb.TempDir()
	out, err := exec.Command("pdftoppm", "-png", "-r", strconv.Itoa(dpi), "-f", "1", "-l", "1", "-singlefile", writeTemp(tb, pdf), filepath.Join(dir, "page")).CombinedOutput()
	if err != nil {
		tb.Fatalf("pdftoppm: %v: %s", err, out)
	}
	f, err := os.Open(filepath.Join(dir, "page.png"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		tb.Fatal(err)
	}
	return img
}

// inkColours returns the colours of the inked pixels (not near white)
// inside a word's box, as 8-bit RGB.
func inkColours(img image.Image, w word, dpi int) [][3]int {
	scale := float64(dpi) / 72
	var out [][3]int
	for y := int(w.yMin * scale); y <= int(w.yMax*scale); y++ {
		for x := int(w.xMin * scale); x <= int(w.xMax*scale); x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			c := [3]int{int(r >> 8), int(g >> 8), int(b >> 8)}
			if c[0]+c[1]+c[2] < 600 {
				out = append(out, c)
			}
		}
	}
	return out
}

func styleDoc(components ...string) Definition {
	return schemaDef(`{"sections":[{"id":"b","components":[` + strings.Join(components, ",") + `]}]}`)
}

func styledText(content, style string) string {
	return `{"type":"text","props":{"content":"` + content + `","style":{` + style + `}}}`
}

func TestPDFEmbedsTheFontOfEachStyle(t *testing.T) {
	tests := []struct {
		name  string
		style string
		want  []string
	}{
		{"plain", ``, []string{"NotoSans-Regular"}},
		{"bold", `"bold":true`, []string{"NotoSans-Bold"}},
		{"italic", `"italic":true`, []string{"NotoSans-Italic"}},
		{"bold italic", `"bold":true,"italic":true`, []string{"NotoSans-BoldItalic"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pdf := MustRender(t, MustCompile(t, styleDoc(styledText("styled", tt.style))), nil, Options{})
			got := fonts(t, pdf)
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("fonts = %v, want %v", got, tt.want)
			}
		})
	}
	// A heading is bold whatever its style says.
	pdf := MustRender(t, MustCompile(t, styleDoc(`{"type":"heading","props":{"content":"Title","style":{"bold":false}}}`)), nil, Options{})
	if got := fonts(t, pdf); !contains(got, "NotoSans-Bold") {
		t.Errorf("heading fonts = %v, want the bold font", got)
	}
}

func TestPDFBoldTextIsDrawnBold(t *testing.T) {
	// The test fonts are Go Regular and Go Bold: bold glyphs are wider, so
	// the same word takes more room when it is drawn with the bold font.
	pdf := MustRender(t, MustCompile(t, styleDoc(
		styledText("Weight", ``),
		styledText("Weight", `"bold":true`),
	)), nil, Options{})
	list := words(t, pdf)
	if len(list) != 2 {
		t.Fatalf("words = %v", list)
	}
	if regular, bold := list[0], list[1]; bold.width() < regular.width()*1.03 {
		t.Errorf("bold word %.2f pt wide, regular %.2f pt: bold is not drawn with the bold font", bold.width(), regular.width())
	}
}

func TestPDFAlignment(t *testing.T) {
	for _, page := range []struct {
		name      string
		setup     string
		margin    float64 // left and right, mm
		wantW     float64 // page width, pt
		wantH     float64
		sizeLabel string
	}{
		{"A4 portrait", `"pageSize":"A4","orientation":"portrait"`, 20, 595.28, 841.89, "A4"},
		{"A4 landscape", `"pageSize":"A4","orientation":"landscape","margins":{"left":30,"right":30}`, 30, 841.89, 595.28, "A4"},
		{"Letter portrait", `"pageSize":"Letter","margins":{"left":12.7,"right":12.7}`, 12.7, 612, 792, "letter"},
	} {
		t.Run(page.name, func(t *testing.T) {
			def := schemaDef(`{` + page.setup + `,"sections":[{"id":"b","components":[` +
				styledText("Left", `"align":"left"`) + `,` +
				styledText("Centred", `"align":"center"`) + `,` +
				styledText("Right", `"align":"right"`) + `,` +
				`{"type":"heading","props":{"content":"Headline","style":{"align":"right"}}}]}]}`)
			pdf := MustRender(t, MustCompile(t, def), nil, Options{})
			w, h := pageSize(t, pdf)
			if !near(w, page.wantW, 0.5) || !near(h, page.wantH, 0.5) {
				t.Fatalf("page is %.2f x %.2f pt, want %.2f x %.2f", w, h, page.wantW, page.wantH)
			}
			if got := PDFInfo(t, pdf)["Page size"]; !strings.Contains(got, "("+page.sizeLabel+")") {
				t.Errorf("pdfinfo page size %q, want %s", got, page.sizeLabel)
			}
			left, right := page.margin*mm, w-page.margin*mm
			list := words(t, pdf)
			if l := findWord(t, list, "Left"); !near(l.xMin, left, 1.5) {
				t.Errorf("left-aligned text starts at %.2f pt, want the left margin %.2f", l.xMin, left)
			}
			if c := findWord(t, list, "Centred"); !near(c.centre(), w/2, 1.5) {
				t.Errorf("centred text is centred on %.2f pt, want %.2f (the middle of the page between equal margins)", c.centre(), w/2)
			}
			for _, text := range []string{"Right", "Headline"} {
				if r := findWord(t, list, text); !near(r.xMax, right, 1.5) {
					t.Errorf("right-aligned %q ends at %.2f pt, want the right margin %.2f", text, r.xMax, right)
				}
			}
		})
	}
}

func TestPDFMargins(t *testing.T) {
	def := schemaDef(`{"pageSize":"A4","margins":{"top":35,"left":40,"right":10,"bottom":20},"sections":[{"id":"b","components":[` +
		styledText("First", ``) + `,` + styledText("Last", `"align":"right"`) + `]}]}`)
	pdf := MustRender(t, MustCompile(t, def), nil, Options{})
	w, _ := pageSize(t, pdf)
	list := words(t, pdf)
	first, last := findWord(t, list, "First"), findWord(t, list, "Last")
	if !near(first.xMin, 40*mm, 1.5) {
		t.Errorf("text starts at x %.2f pt, want the 40 mm left margin (%.2f)", first.xMin, 40*mm)
	}
	// Noto's ascender (1.069 em, room for stacked accents) reaches a
	// little above the line box; readers box words by it.
	if first.yMin < 35*mm-0.15*defaultFontSize || first.yMin > 35*mm+defaultFontSize {
		t.Errorf("first line's top at y %.2f pt, want just below the 35 mm top margin (%.2f)", first.yMin, 35*mm)
	}
	if !near(last.xMax, w-10*mm, 1.5) {
		t.Errorf("right-aligned text ends at %.2f pt, want the 10 mm right margin (%.2f)", last.xMax, w-10*mm)
	}
}

func TestPDFFontSizes(t *testing.T) {
	pdf := MustRender(t, MustCompile(t, styleDoc(
		styledText("Size11", ``),
		styledText("Size22", `"fontSize":22`),
		styledText("Size8", `"fontSize":8`),
		`{"type":"heading","props":{"content":"Level1","level":1}}`,
		`{"type":"heading","props":{"content":"Level2","level":2}}`,
		`{"type":"heading","props":{"content":"Level3","level":3}}`,
		`{"type":"heading","props":{"content":"Level3at30","level":3,"style":{"fontSize":30}}}`,
	)), nil, Options{})
	list := words(t, pdf)
	base := findWord(t, list, "Size11")
	// A word's box is as tall as the font's line at its size, so heights
	// scale with the size in points.
	for _, tt := range []struct {
		text string
		size float64
	}{{"Size22", 22}, {"Size8", 8}, {"Level1", 20}, {"Level2", 16}, {"Level3", 13}, {"Level3at30", 30}} {
		w := findWord(t, list, tt.text)
		if got, want := w.height()/base.height(), tt.size/defaultFontSize; !near(got, want, want*0.03) {
			t.Errorf("%s: box %.2f pt tall, %.3f times the 11 pt text, want %.3f (%g pt)", tt.text, w.height(), got, want, tt.size)
		}
	}
}

func TestPDFTextColour(t *testing.T) {
	const dpi = 144
	pdf := MustRender(t, MustCompile(t, styleDoc(
		styledText("Black", `"fontSize":20`),
		styledText("Red", `"fontSize":20,"color":"#cc0000"`),
		styledText("Blue", `"fontSize":20,"bold":true,"color":"#1f4ecc"`),
	)), nil, Options{})
	img := rasterize(t, pdf, dpi)
	list := words(t, pdf)
	for _, tt := range []struct {
		text string
		want [3]int
	}{{"Black", [3]int{0, 0, 0}}, {"Red", [3]int{0xcc, 0, 0}}, {"Blue", [3]int{0x1f, 0x4e, 0xcc}}} {
		ink := inkColours(img, findWord(t, list, tt.text), dpi)
		if len(ink) < 20 {
			t.Fatalf("%s: %d inked pixels, want the word drawn", tt.text, len(ink))
		}
		// Glyph edges blend with the white page; the core of the strokes
		// has the colour itself. Count the pixels within 30 of it per channel.
		solid := 0
		for _, c := range ink {
			if near(float64(c[0]), float64(tt.want[0]), 30) && near(float64(c[1]), float64(tt.want[1]), 30) && near(float64(c[2]), float64(tt.want[2]), 30) {
				solid++
			}
		}
		if solid < len(ink)/4 {
			t.Errorf("%s: %d of %d inked pixels are #%02x%02x%02x; first pixels %v", tt.text, solid, len(ink), tt.want[0], tt.want[1], tt.want[2], ink[:min(5, len(ink))])
		}
	}
}
