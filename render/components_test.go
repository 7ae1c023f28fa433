package render

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skip2/go-qrcode"
)

// PageText returns the layout text pdftotext reads on page n alone.
func PageText(tb testing.TB, pdf []byte, n int) string {
	tb.Helper()
	return ExtractText(tb, pdf, "-layout", "-f", itoa(n), "-l", itoa(n))
}

// Rasterize renders page 1 at dpi with pdftoppm, in grey. It reads
// pdftoppm's raw PGM rather than a PNG: at 254 dpi a page is 6 million
// pixels, and inflating and unfiltering them in Go took most of a QR or
// barcode test's 10 s under the race detector.
func Rasterize(tb testing.TB, pdf []byte, dpi int) image.Image {
	tb.Helper()
	needTool(tb, "pdftoppm")
	dir := tb.TempDir()
	in := filepath.Join(dir, "doc.pdf")
	if err := os.WriteFile(in, pdf, 0o600); err != nil {
		tb.Fatal(err)
	}
	out := filepath.Join(dir, "page")
	if b, err := exec.Command("pdftoppm", "-gray", "-r", itoa(dpi), "-f", "1", "-l", "1", "-singlefile", in, out).CombinedOutput(); err != nil {
		tb.Fatalf("pdftoppm: %v: %s", err, b)
	}
	raw, err := os.ReadFile(out + ".pgm")
	if err != nil {
		tb.Fatal(err)
	}
	img, err := decodePGM(raw)
	if err != nil {
		tb.Fatal(err)
	}
	return img
}

// decodePGM reads a binary PGM ("P5", 8-bit grey, as pdftoppm -gray
// writes it) into an image.Gray over the same bytes.
func decodePGM(raw []byte) (*image.Gray, error) {
	r := bytes.NewReader(raw)
	var magic string
	var w, h, maxval int
	if _, err := fmt.Fscan(r, &magic, &w, &h, &maxval); err != nil || magic != "P5" || maxval != 255 || w <= 0 || h <= 0 {
		return nil, fmt.Errorf("not an 8-bit binary PGM (%q %d×%d, max %d): %v", magic, w, h, maxval, err)
	}
	pix := raw[len(raw)-r.Len()+1:] // one white-space byte ends the header
	if len(pix) != w*h {
		return nil, fmt.Errorf("PGM of %d×%d pixels holds %d bytes", w, h, len(pix))
	}
	return &image.Gray{Pix: pix, Stride: w, Rect: image.Rect(0, 0, w, h)}, nil
}

// dark reports whether the pixel at (x, y) millimetres is dark, at 10 px/mm.
func dark(img image.Image, x, y float64) bool {
	r, _, _, _ := img.At(int(x*10), int(y*10)).RGBA()
	return r < 0x8000
}

func TestTableRepeatsHeaderAndNeverSplitsRows(t *testing.T) {
	def, input := LoadCase(t, filepath.Join("testdata", "table-pages"))
	pdf := MustRender(t, MustCompile(t, def), input, Options{})
	pages := PageCount(t, pdf)
	if pages < 3 {
		t.Fatalf("pages = %d, want the table to span at least 3", pages)
	}
	rowStart := regexp.MustCompile(`^\s*(\d+)\s+row (\d+) `)
	seen := map[int]int{} // row → page
	for n := 1; n <= pages; n++ {
		lines := nonEmptyLines(PageText(t, pdf, n))
		first := 0
		if n == 1 {
			first = 1 // the heading
		}
		if n <= pages && len(lines) > first && !strings.HasPrefix(strings.Join(strings.Fields(lines[first]), " "), "No. Text Double") {
			if !(n == pages && strings.TrimSpace(lines[0]) == "END OF TABLE") {
				t.Errorf("page %d starts with %q, want the table header", n, lines[first])
			}
		}
		wrapped := 0
		for i, line := range lines {
			if m := rowStart.FindStringSubmatch(line); m != nil {
				row, _ := strconv.Atoi(m[1])
				seen[row] = n
				if strings.Contains(line, "wraps") {
					wrapped++
					// A wrapped row's last line ends "is long" on the same page.
					if i+2 >= len(lines) || !strings.HasSuffix(strings.TrimSpace(lines[i+2]), "is long") {
						t.Errorf("page %d: row %d does not end on the same page", n, row)
					}
				}
			}
		}
		if got := strings.Count(PageText(t, pdf, n), "is long\n"); got != wrapped {
			t.Errorf("page %d: %d wrapped rows start but %d end", n, wrapped, got)
		}
	}
	for row := 1; row <= 120; row++ {
		if seen[row] == 0 {
			t.Errorf("row %d missing", row)
		}
	}
}

func TestTableRowTallerThanAPageIsBrokenOverPages(t *testing.T) {
	tpl := MustCompile(t, schemaDef(`{"sections":[{"id":"b","components":[{"type":"table","props":{"rows":"rows","columns":[
		{"header":"Id","value":"{{ row.id }}","width":15},{"header":"Text","value":"{{ row.text }}"}]}}]}]}`))
	text := strings.Repeat("many words in one enormous cell ", 600)
	pdf := MustRender(t, tpl, map[string]any{"rows": []any{map[string]any{"id": 1, "text": text}, map[string]any{"id": 2, "text": "short"}}}, Options{})
	pages := PageCount(t, pdf)
	if pages < 2 {
		t.Fatalf("pages = %d, want the giant row over several", pages)
	}
	for n := 1; n <= pages; n++ {
		if !strings.HasPrefix(strings.TrimSpace(PageText(t, pdf, n)), "Id") {
			t.Errorf("page %d lacks the header", n)
		}
	}
	if got := strings.Count(strings.Join(strings.Fields(ExtractText(t, pdf)), " "), "enormous"); got != 600 {
		t.Errorf("found %d of 600 words: text was lost", got)
	}
	assertInsidePage(t, pdf)
}

// assertInsidePage checks that every word lies inside the page.
func assertInsidePage(t *testing.T, pdf []byte) {
	t.Helper()
	for _, b := range WordBoxes(t, pdf) {
		if b[0] < 0 || b[1] < 0 || b[2] > 595.3 || b[3] > 841.9 {
			t.Errorf("word box %v leaves the A4 page", b)
		}
	}
}

func TestImagesAreEmbeddedOnceAndSized(t *testing.T) {
	needTool(t, "pdfimages")
	def, input := LoadCase(t, filepath.Join("testdata", "image"))
	pdf, stats := MustRenderFormat(t, MustCompile(t, def), input, PDF, Options{})
	if stats.Images != 3 {
		t.Errorf("stats.Images = %d, want 3 (the same PNG three times counts once)", stats.Images)
	}
	out, err := exec.Command("pdfimages", "-list", writeTemp(t, pdf)).CombinedOutput()
	if err != nil {
		t.Fatalf("pdfimages: %v: %s", err, out)
	}
	// page num type width height color comp bpc enc interp object ID x-ppi y-ppi …
	var got []string
	objects := map[string]bool{}
	for _, line := range nonEmptyLines(string(out))[2:] {
		f := strings.Fields(line)
		if f[2] != "image" {
			continue
		}
		objects[f[10]] = true
		got = append(got, fmt.Sprintf("%sx%s@%s", f[3], f[4], f[12]))
	}
	// 60x30 px at 96 dpi natural size; 60 mm wide (25 ppi); JPEG 20 mm high
	// (51 ppi); 50x10 mm box keeps proportions: 10 mm high (76 ppi); the
	// 16-bit PNG converted, 40 mm wide (13 ppi).
	want := []string{"60x30@96", "60x30@25", "40x40@51", "60x30@76", "20x10@13"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("images = %v, want %v", got, want)
	}
	if len(objects) != 3 {
		t.Errorf("%d image objects, want 3", len(objects))
	}
}

func TestImageErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"not a data URI", "ftp://example.com/logo.png", "must be a data URI"},
		{"plain http", "http://example.com/logo.png", "must use https://"},
		{"gif", "data:image/gif;base64,R0lGODlhAQABAAAAACw=", "not supported"},
		{"bad base64", "data:image/png;base64,%%%", "not valid base64"},
		{"not an image", "data:image/png;base64,aGVsbG8=", "neither PNG, JPEG nor WebP"},
		{"truncated png", "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAADwAAAAeCAYAAAB", "cannot be read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A literal source is checked when the template is saved…
			_, err := MustEngine(t).Compile(schemaDef(`{"sections":[{"id":"b","components":[{"type":"image","props":{"src":` + quote(tt.src) + `}}]}]}`))
			assertIssue(t, err, "schema.sections[0].components[0].props.src", tt.want)
			// …one from a variable when the document is rendered.
			tpl := MustCompile(t, schemaDef(`{"sections":[{"id":"b","components":[{"type":"image","props":{"src":"{{ logo }}"}}]}]}`))
			_, err = tpl.Render(t.Context(), &bytes.Buffer{}, PDF, map[string]any{"logo": tt.src}, Options{})
			assertExpressionError(t, err, "schema.sections[0].components[0].props.src", tt.want)
		})
	}
}

func TestImageTooManyPixels(t *testing.T) {
	// A valid PNG header claiming 20000×20000 pixels: refused before decoding.
	var buf bytes.Buffer
	buf.Write(pngSignature)
	chunk := []byte{'I', 'H', 'D', 'R', 0, 0, 0x4e, 0x20, 0, 0, 0x4e, 0x20, 8, 2, 0, 0, 0}
	buf.Write([]byte{0, 0, 0, 13})
	buf.Write(chunk)
	buf.Write(binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE(chunk)))
	_, err := readImageHeader(buf.Bytes())
	if err == nil || !strings.Contains(err.Error(), "20000×20000 pixels") {
		t.Errorf("err = %v, want the size refused", err)
	}
}

func TestQRCodeModulesAreDrawn(t *testing.T) {
	const value = "https://example.com/i/2024-0042"
	tpl := MustCompile(t, schemaDef(`{"sections":[{"id":"b","components":[{"type":"qrcode","props":{"value":"{{ v }}","size":40}}]}]}`))
	pdf := MustRender(t, tpl, map[string]any{"v": value}, Options{})
	q, err := qrcode.New(value, qrcode.Medium)
	if err != nil {
		t.Fatal(err)
	}
	bits := q.Bitmap()
	img := Rasterize(t, pdf, 254)
	m := 40.0 / float64(len(bits))
	wrong := 0
	for r, row := range bits {
		for c, bit := range row {
			if dark(img, 20+(float64(c)+0.5)*m, 20+(float64(r)+0.5)*m) != bit {
				wrong++
			}
		}
	}
	if wrong > 0 {
		t.Errorf("%d of %d modules drawn wrong", wrong, len(bits)*len(bits))
	}
}

func TestBarcodeBarsAreDrawn(t *testing.T) {
	const value = "INV-2024-0042"
	tpl := MustCompile(t, schemaDef(`{"sections":[{"id":"b","components":[{"type":"barcode","props":{"value":"{{ v }}","width":80}}]}]}`))
	pdf := MustRender(t, tpl, map[string]any{"v": value}, Options{})
	bits, err := code128Modules(value)
	if err != nil {
		t.Fatal(err)
	}
	// Code 128: start B (11010010000) … stop (1100011101011).
	if s := bitString(bits); !strings.HasPrefix(s, "11010010000") || !strings.HasSuffix(s, "1100011101011") {
		t.Errorf("modules %s lack the start B and stop patterns", s)
	}
	img := Rasterize(t, pdf, 254)
	mw := 80.0 / float64(len(bits)+2*barcodeQuiet)
	wrong := 0
	for i, bit := range bits {
		if dark(img, 20+(float64(barcodeQuiet+i)+0.5)*mw, 27) != bit {
			wrong++
		}
	}
	if wrong > 0 {
		t.Errorf("%d of %d modules drawn wrong", wrong, len(bits))
	}
	if !strings.Contains(ExtractText(t, pdf), value) {
		t.Error("the value is not printed under the bars")
	}
}

func bitString(bits []bool) string {
	var b strings.Builder
	for _, bit := range bits {
		b.WriteByte("01"[btoi(bit)])
	}
	return b.String()
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestCodeErrors(t *testing.T) {
	tests := []struct {
		name, component, want string
	}{
		{"barcode non-ASCII", `{"type":"barcode","props":{"value":"Grüße"}}`, "printable ASCII only"},
		{"barcode too long", `{"type":"barcode","props":{"value":"` + strings.Repeat("1", 81) + `"}}`, "maximum 80"},
		{"qrcode too long", `{"type":"qrcode","props":{"value":"` + strings.Repeat("x", 3000) + `","level":"H"}}`, "QR code"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := MustEngine(t).Compile(schemaDef(`{"sections":[{"id":"b","components":[` + tt.component + `]}]}`))
			assertIssue(t, err, "schema.sections[0].components[0].props.value", tt.want)
		})
	}
	tpl := MustCompile(t, schemaDef(`{"sections":[{"id":"b","components":[{"type":"barcode","props":{"value":"{{ v }}"}}]}]}`))
	_, err := tpl.Render(t.Context(), &bytes.Buffer{}, PDF, map[string]any{"v": "Ωμέγα"}, Options{})
	assertExpressionError(t, err, "schema.sections[0].components[0].props.value", "printable ASCII")
}

func assertIssue(t *testing.T, err error, path, msg string) {
	t.Helper()
	se, ok := err.(*SchemaError)
	if !ok {
		t.Fatalf("err = %v, want a *SchemaError", err)
	}
	for _, is := range se.Issues {
		if is.Path == path && strings.Contains(is.Message, msg) {
			return
		}
	}
	t.Errorf("issues %v lack %s: …%s…", se.Issues, path, msg)
}

func assertExpressionError(t *testing.T, err error, path, msg string) {
	t.Helper()
	xe, ok := err.(*ExpressionError)
	if !ok {
		t.Fatalf("err = %v, want an *ExpressionError", err)
	}
	if xe.Path != path || !strings.Contains(xe.Message, msg) {
		t.Errorf("got %s: %s, want %s: …%s…", xe.Path, xe.Message, path, msg)
	}
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if strings.TrimSpace(line) != "" && line != "\f" {
			out = append(out, line)
		}
	}
	return out
}

func TestHeaderTallerThanAThirdOfThePageIsCut(t *testing.T) {
	tpl := MustCompile(t, schemaDef(`{"sections":[
		{"id":"h","role":"header","components":[{"type":"table","props":{"rows":"rows","columns":[{"header":"H","value":"header row {{ row }}"}]}}]},
		{"id":"b","components":[{"type":"text","props":{"content":"BODY TEXT"}}]}]}`))
	start := time.Now()
	pdf := MustRender(t, tpl, map[string]any{"rows": numbers(100000)}, Options{})
	if d := time.Since(start); d > scaled(5*time.Second) {
		t.Errorf("took %v: the cut-off rows should not be laid out", d)
	}
	text := ExtractText(t, pdf)
	if !strings.Contains(text, "BODY TEXT") || !strings.Contains(text, "header row 1\n") || strings.Contains(text, "header row 100\n") {
		t.Errorf("want the body and the first header rows only, got:\n%s", clip(text, 2000))
	}
	assertInsidePage(t, pdf)
	// A third of the 257 mm between the margins holds about 13 rows of 6.2 mm.
	if n := strings.Count(text, "header row "); n < 10 || n > 14 {
		t.Errorf("%d header rows shown, want the 10-14 that fit a third of the page", n)
	}
}

// TestExampleInvoiceCodesScan reads the example invoice's payment QR code
// (EPC format) and Code 128 barcode with an independent decoder, zbarimg,
// from the page as pdftoppm draws it at 200 dpi.
func TestExampleInvoiceCodesScan(t *testing.T) {
	needTool(t, "pdftoppm")
	needTool(t, "zbarimg")
	ex, input := LoadExample(t, "invoice")
	pdf := MustRender(t, MustCompile(t, ex.Definition), input, Options{})
	dir := t.TempDir()
	in := filepath.Join(dir, "invoice.pdf")
	if err := os.WriteFile(in, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("pdftoppm", "-png", "-r", "200", "-f", "1", "-l", "1", "-singlefile", in, filepath.Join(dir, "page")).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v: %s", err, b)
	}
	out, err := exec.Command("zbarimg", "-q", "--raw", "-Sdisable", "-Sqrcode.enable", filepath.Join(dir, "page.png")).Output()
	if err != nil {
		t.Fatalf("zbarimg found no QR code: %v", err)
	}
	want := "BCD\n002\n1\nSCT\nCOBADEFFXXX\nFolio Demo GmbH\nDE89370400440532013000\nEUR3530.14\n\n\nINV-2026-0042"
	if got := strings.TrimRight(string(out), "\n"); got != want {
		t.Errorf("QR code reads %q, want %q", got, want)
	}
	out, err = exec.Command("zbarimg", "-q", "-Sdisable", "-Scode128.enable", filepath.Join(dir, "page.png")).Output()
	if err != nil || strings.TrimSpace(string(out)) != "CODE-128:INV-2026-0042" {
		t.Errorf("barcode reads %q (%v), want CODE-128:INV-2026-0042", out, err)
	}
}
