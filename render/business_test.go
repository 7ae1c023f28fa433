package render

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pdfaChecker is the structural PDF/A checker (testdata/pdfa/check.py,
// pikepdf and fontTools on Debian's Python).
const pdfaPython = "/usr/bin/python3"

// CheckPDFA runs the structural PDF/A checker and returns its violations.
func CheckPDFA(tb testing.TB, pdf []byte, part, conformance string) []string {
	tb.Helper()
	if err := exec.Command(pdfaPython, "-c", "import pikepdf, fontTools").Run(); err != nil {
		tb.Skip("python3-pikepdf and python3-fonttools not installed")
	}
	script, err := filepath.Abs(filepath.Join("testdata", "pdfa", "check.py"))
	if err != nil {
		tb.Fatal(err)
	}
	out, err := exec.Command(pdfaPython, script, writeTemp(tb, pdf), part, conformance).CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		tb.Fatalf("check.py: %v: %s", err, out)
	}
	if err != nil && exit.ExitCode() != 1 {
		tb.Fatalf("check.py failed: %v: %s", err, out)
	}
	return nonEmptyLines(string(out))
}

// QPDF runs qpdf with args on pdf and returns its output; it fails the
// test when qpdf exits with an error (2), not on warnings (3).
func QPDF(tb testing.TB, pdf []byte, args ...string) (string, error) {
	tb.Helper()
	needTool(tb, "qpdf")
	out, err := exec.Command("qpdf", append(args, writeTemp(tb, pdf))...).CombinedOutput()
	return string(out), err
}

// alphaPNG is a data URI of a PNG with a translucent alpha channel.
func alphaPNG(tb testing.TB) string {
	tb.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 40, 20))
	for y := 0; y < 20; y++ {
		for x := 0; x < 40; x++ {
			img.Set(x, y, color.NRGBA{R: 0, G: 90, B: 200, A: uint8(60 + 4*x)})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		tb.Fatal(err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
}

func businessTemplate(tb testing.TB, extra string) *Template {
	tb.Helper()
	schema := `{` + extra + `"metadata":{"title":"Invoice {{n}}","author":"ACME GmbH","subject":"November","keywords":"invoice, 2026","language":"de-DE","creationDate":"2026-11-02T09:30:00+01:00"},
	"sections":[
	 {"id":"f","role":"footer","components":[{"type":"text","props":{"content":"Page {{page}} of {{pages}}"}}]},
	 {"id":"s","components":[{"type":"heading","props":{"content":"Rechnung {{n}}"}},
	  {"type":"text","props":{"content":"Grüße, Ελληνικά, Русский — 12,50 €"}},
	  {"type":"image","props":{"src":"` + alphaPNG(tb) + `","width":40}},
	  {"type":"table","props":{"rows":"{{lines}}","columns":[{"header":"Item","value":"{{row.name}}"},{"header":"Price","value":"{{row.price}}","align":"right"}]}},
	  {"type":"pageBreak"},{"type":"text","props":{"content":"second page"}},
	  {"type":"pageBreak"},{"type":"text","props":{"content":"third page"}}]}]}`
	return MustCompile(tb, Definition{Schema: json.RawMessage(schema)})
}

var businessValues = map[string]any{"n": "2026-0042", "lines": []any{
	map[string]any{"name": "Beratung", "price": "1.200,00 €"}, map[string]any{"name": "Reise", "price": "80,00 €"}}}

func mustOptions(tb testing.TB, r PDFRequest) PDFOptions {
	tb.Helper()
	o, err := ParsePDFOptions(r)
	if err != nil {
		tb.Fatalf("ParsePDFOptions: %v", err)
	}
	return o
}

func TestPDFAPassesStructuralChecks(t *testing.T) {
	for _, level := range []string{"2b", "3b", "2u", "3u"} {
		t.Run(level, func(t *testing.T) {
			tpl := businessTemplate(t, `"pdfa":"`+level+`","watermark":{"text":"COPY","opacity":0.25},`)
			pdf := MustRender(t, tpl, businessValues, Options{})
			if v := CheckPDFA(t, pdf, level[:1], strings.ToUpper(level[1:])); len(v) > 0 {
				t.Errorf("PDF/A-%s violations:\n%s", level, strings.Join(v, "\n"))
			}
			if out, err := QPDF(t, pdf, "--check"); err != nil {
				t.Errorf("qpdf --check: %v\n%s", err, out)
			}
			fonts := runTool(t, "pdffonts", pdf)
			for _, line := range nonEmptyLines(fonts)[2:] {
				if f := strings.Fields(line); len(f) < 7 || f[len(f)-5] != "yes" || f[len(f)-3] != "yes" {
					t.Errorf("pdffonts: a font not embedded or without ToUnicode: %q", line)
				}
			}
			meta := runTool(t, "pdfinfo", pdf, "-meta")
			for _, want := range []string{"<pdfaid:part>" + level[:1] + "</pdfaid:part>", "<pdfaid:conformance>" + strings.ToUpper(level[1:]) + "</pdfaid:conformance>", ">Invoice 2026-0042</rdf:li>"} {
				if !strings.Contains(meta, want) {
					t.Errorf("XMP lacks %s:\n%s", want, meta)
				}
			}
		})
	}
}

// TestPDFACheckerFindsViolations makes sure the checker is not a rubber
// stamp: a document without pdfa breaks the rules it checks.
func TestPDFACheckerFindsViolations(t *testing.T) {
	pdf := MustRender(t, businessTemplate(t, ""), businessValues, Options{})
	v := strings.Join(CheckPDFA(t, pdf, "2", "B"), "\n")
	for _, rule := range []string{"6.2.3-1 no GTS_PDFA1 output intent", "6.6.4-1 pdfaid:part", "6.2.4.3-2"} {
		if !strings.Contains(v, rule) {
			t.Errorf("checker did not report %q; reported:\n%s", rule, v)
		}
	}
	o := mustOptions(t, PDFRequest{Encrypt: json.RawMessage(`{"userPassword":"x"}`)})
	enc := MustRender(t, businessTemplate(t, ""), businessValues, Options{PDF: o})
	if v := strings.Join(CheckPDFA(t, enc, "2", "B"), "\n"); !strings.Contains(v, "6.1.3-2") {
		t.Errorf("checker did not report encryption: %s", v)
	}
}

// runTool runs a poppler tool on pdf (pdftotext writes to standard output).
func runTool(tb testing.TB, tool string, pdf []byte, args ...string) string {
	tb.Helper()
	needTool(tb, tool)
	args = append(args, writeTemp(tb, pdf))
	if tool == "pdftotext" {
		args = append(args, "-")
	}
	out, err := exec.Command(tool, args...).CombinedOutput()
	if err != nil {
		tb.Fatalf("%s: %v: %s", tool, err, out)
	}
	return string(out)
}

func TestDocumentMetadataInInfoAndXMP(t *testing.T) {
	tpl := businessTemplate(t, "")
	pdf := MustRender(t, tpl, businessValues, Options{})
	info := PDFInfo(t, pdf)
	for k, want := range map[string]string{"Title": "Invoice 2026-0042", "Author": "ACME GmbH", "Subject": "November", "Keywords": "invoice, 2026",
		"CreationDate": "Mon Nov  2 08:30:00 2026 UTC", "ModDate": "Mon Nov  2 08:30:00 2026 UTC"} {
		if got := info[k]; got != want {
			t.Errorf("schema metadata: pdfinfo %s = %q, want %q", k, got, want)
		}
	}
	// The request's documentMetadata wins, field by field.
	o := mustOptions(t, PDFRequest{DocumentMetadata: json.RawMessage(`{"title":"Gutschrift <1> & \"2\"","keywords":"credit","language":"fr-CH","creationDate":"2026-12-01","modificationDate":"2026-12-03T10:00:00Z"}`)})
	pdf = MustRender(t, tpl, businessValues, Options{PDF: o})
	info = PDFInfo(t, pdf)
	for k, want := range map[string]string{"Title": `Gutschrift <1> & "2"`, "Author": "ACME GmbH", "Keywords": "credit",
		"CreationDate": "Tue Dec  1 00:00:00 2026 UTC", "ModDate": "Thu Dec  3 10:00:00 2026 UTC"} {
		if got := info[k]; got != want {
			t.Errorf("request metadata: pdfinfo %s = %q, want %q", k, got, want)
		}
	}
	meta := runTool(t, "pdfinfo", pdf, "-meta")
	for _, want := range []string{"Gutschrift &lt;1&gt; &amp; &quot;2&quot;</rdf:li>", "<rdf:li>fr-CH</rdf:li>", "<xmp:ModifyDate>2026-12-03T10:00:00Z</xmp:ModifyDate>"} {
		if !strings.Contains(meta, want) {
			t.Errorf("XMP lacks %s:\n%s", want, meta)
		}
	}
	if !strings.Contains(string(pdf), "/Lang ") || !bytes.Contains(pdf, []byte("(fr-CH)")) {
		t.Error("catalog /Lang is not fr-CH")
	}
}

func TestEncryptAES256(t *testing.T) {
	tpl := businessTemplate(t, "")
	o := mustOptions(t, PDFRequest{Encrypt: json.RawMessage(`{"userPassword":"s3cret pass","ownerPassword":"owner-Ω","permissions":["print"]}`)})
	pdf := MustRender(t, tpl, businessValues, Options{PDF: o})
	if bytes.Contains(pdf, []byte("s3cret")) || bytes.Contains(pdf, []byte("Rechnung")) {
		t.Fatal("password or text readable in the encrypted file")
	}
	out, err := QPDF(t, pdf, "--show-encryption", "--password=s3cret pass")
	if err != nil {
		t.Fatalf("qpdf --show-encryption: %v\n%s", err, out)
	}
	for _, want := range []string{"R = 6", "Supplied password is user password", "print high resolution: allowed", "extract for any purpose: not allowed",
		"modify anything: not allowed", "stream encryption method: AESv3", "string encryption method: AESv3"} {
		if !strings.Contains(out, want) {
			t.Errorf("qpdf --show-encryption lacks %q:\n%s", want, out)
		}
	}
	if out, err := QPDF(t, pdf, "--check", "--password=s3cret pass"); err != nil {
		t.Errorf("qpdf --check: %v\n%s", err, out)
	}
	if out, _ := QPDF(t, pdf, "--show-encryption", "--password=owner-Ω"); !strings.Contains(out, "Supplied password is owner password") {
		t.Errorf("owner password not accepted:\n%s", out)
	}
	text := runTool(t, "pdftotext", pdf, "-upw", "s3cret pass", "-enc", "UTF-8", "-f", "1", "-l", "1")
	if !strings.Contains(text, "Rechnung 2026-0042") || !strings.Contains(text, "Русский") {
		t.Errorf("pdftotext with the password reads:\n%s", text)
	}
	if info := runTool(t, "pdfinfo", pdf, "-upw", "s3cret pass"); !strings.Contains(info, "Title:           Invoice 2026-0042") {
		t.Errorf("pdfinfo with the password:\n%s", info)
	}
	needTool(t, "pdftotext")
	if out, err := exec.Command("pdftotext", writeTemp(t, pdf), "-").CombinedOutput(); err == nil {
		t.Errorf("pdftotext without the password succeeded:\n%s", out)
	}
	// Permissions: none at all; copy and modify.
	for _, tc := range []struct{ perms, allowed, denied string }{
		{`[]`, "", "print high resolution: allowed"},
		{`["copy","modify"]`, "modify other: allowed", "print low resolution: allowed"},
	} {
		o := mustOptions(t, PDFRequest{Encrypt: json.RawMessage(`{"ownerPassword":"o","permissions":` + tc.perms + `}`)})
		pdf := MustRender(t, tpl, businessValues, Options{PDF: o})
		out, err := QPDF(t, pdf, "--show-encryption")
		if err != nil {
			t.Fatalf("qpdf: %v\n%s", err, out)
		}
		if !strings.Contains(out, tc.allowed) || strings.Contains(out, tc.denied) {
			t.Errorf("permissions %s: qpdf says\n%s", tc.perms, out)
		}
		// No user password: opens without one.
		if text := runTool(t, "pdftotext", pdf, "-enc", "UTF-8"); !strings.Contains(text, "second page") {
			t.Errorf("owner-only document does not open without a password: %s", text)
		}
	}
}

func TestWatermarkPagesAndImages(t *testing.T) {
	tpl := businessTemplate(t, `"watermark":{"text":"CONFIDENTIAL","pages":"odd","color":"#0000ff","opacity":0.5},`)
	pdf := MustRender(t, tpl, businessValues, Options{})
	for n, want := range map[int]bool{1: true, 2: false, 3: true} {
		if got := strings.Contains(strings.ReplaceAll(PageText(t, pdf, n), "\n", ""), "CONFIDENTIAL") ||
			strings.Contains(strings.Join(strings.Fields(ExtractText(t, pdf, "-raw", "-f", itoa(n), "-l", itoa(n))), ""), "CONFIDENTIAL"); got != want {
			t.Errorf("page %d shows the watermark: %v, want %v", n, got, want)
		}
	}
	// The page image: blue-tinted pixels on the diagonal of page 1.
	if blue := bluePixels(t, pdf, 1); blue < 500 {
		t.Errorf("page 1 has %d blue pixels, want the watermark's", blue)
	}
	if blue := bluePixels(t, pdf, 2); blue > 0 {
		t.Errorf("page 2 has %d blue pixels, want none", blue)
	}
	// An image watermark, at the top right of the last page.
	img := `"watermark":{"image":"` + alphaPNG(t) + `","pages":"last","position":"top-right","angle":0,"width":60,"opacity":0.8},`
	pdf = MustRender(t, businessTemplate(t, img), businessValues, Options{})
	if out := runTool(t, "pdfimages", pdf, "-list"); strings.Count(out, "\n") < 4 {
		t.Errorf("pdfimages -list:\n%s", out)
	}
}

// bluePixels counts pixels of page n (at 30 dpi) that are clearly blue.
func bluePixels(tb testing.TB, pdf []byte, n int) int {
	tb.Helper()
	needTool(tb, "pdftoppm")
	base := filepath.Join(tb.TempDir(), "page")
	if out, err := exec.Command("pdftoppm", "-png", "-r", "30", "-f", itoa(n), "-l", itoa(n), "-singlefile", writeTemp(tb, pdf), base).CombinedOutput(); err != nil {
		tb.Fatalf("pdftoppm: %v: %s", err, out)
	}
	out, err := os.ReadFile(base + ".png")
	if err != nil {
		tb.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(out))
	if err != nil {
		tb.Fatal(err)
	}
	count := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if bl > 0xc000 && r < 0xb000 && g < 0xb000 && bl > r+0x2000 {
				count++
			}
		}
	}
	return count
}

func TestDraftOnPreviews(t *testing.T) {
	tpl := businessTemplate(t, "")
	draft := MustRender(t, tpl, businessValues, Options{PDF: PDFOptions{Draft: true}})
	if text := ExtractText(t, draft, "-raw"); !strings.Contains(strings.Join(strings.Fields(text), ""), "DRAFT") {
		t.Errorf("a draft render lacks DRAFT:\n%s", text)
	}
	off := mustOptions(t, PDFRequest{Watermark: json.RawMessage(`false`)})
	off.Draft = true
	if text := ExtractText(t, MustRender(t, tpl, businessValues, Options{PDF: off}), "-raw"); strings.Contains(text, "DRAFT") || strings.Contains(text, "D R A F T") {
		t.Errorf("watermark false still shows DRAFT:\n%s", text)
	}
	own := businessTemplate(t, `"watermark":{"text":"SAMPLE"},`)
	text := strings.Join(strings.Fields(ExtractText(t, MustRender(t, own, businessValues, Options{PDF: PDFOptions{Draft: true}}), "-raw")), "")
	if strings.Contains(text, "DRAFT") || !strings.Contains(text, "SAMPLE") {
		t.Errorf("the template's watermark should replace DRAFT:\n%s", text)
	}
}

func TestPDFAAndEncryptRefused(t *testing.T) {
	tpl := businessTemplate(t, `"pdfa":"3b",`)
	o := mustOptions(t, PDFRequest{Encrypt: json.RawMessage(`{"userPassword":"x"}`)})
	err := tpl.CheckPDFOptions(o)
	var se *SchemaError
	if !errors.As(err, &se) || se.Issues[0].Path != "encrypt" || !strings.Contains(se.Issues[0].Message, "PDF/A forbids encryption") {
		t.Fatalf("CheckPDFOptions = %v", err)
	}
	values, _ := tpl.Values(businessValues)
	var buf bytes.Buffer
	if _, err := tpl.Render(context.Background(), &buf, PDF, values, Options{PDF: o}); !errors.As(err, &se) {
		t.Errorf("Render = %v, want the schema error", err)
	}
	// "pdfa": "none" in the request lifts the template's.
	o = mustOptions(t, PDFRequest{PDFA: json.RawMessage(`"none"`), Encrypt: json.RawMessage(`{"userPassword":"x"}`)})
	if err := tpl.CheckPDFOptions(o); err != nil {
		t.Errorf("with pdfa none: %v", err)
	}
}

func TestPDFOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  PDFRequest
		path string
		msg  string
	}{
		{"pdfa 1b", PDFRequest{PDFA: json.RawMessage(`"1b"`)}, "pdfa", `must be one of "2b"`},
		{"pdfa number", PDFRequest{PDFA: json.RawMessage(`2`)}, "pdfa", "must be one of"},
		{"opacity", PDFRequest{Watermark: json.RawMessage(`{"text":"X","opacity":1.5}`)}, "watermark.opacity", "at most 1"},
		{"angle", PDFRequest{Watermark: json.RawMessage(`{"text":"X","angle":"steep"}`)}, "watermark.angle", "must be a number"},
		{"position", PDFRequest{Watermark: json.RawMessage(`{"text":"X","position":"middle"}`)}, "watermark.position", "must be one of"},
		{"pages", PDFRequest{Watermark: json.RawMessage(`{"text":"X","pages":"some"}`)}, "watermark.pages", "must be one of"},
		{"both", PDFRequest{Watermark: json.RawMessage(`{"text":"X","image":"asset:logo"}`)}, "watermark", "choose one"},
		{"neither", PDFRequest{Watermark: json.RawMessage(`{"opacity":0.3}`)}, "watermark", "needs text or image"},
		{"string", PDFRequest{Watermark: json.RawMessage(`"DRAFT"`)}, "watermark", "must be an object"},
		{"unknown key", PDFRequest{Watermark: json.RawMessage(`{"text":"X","opcity":0.3}`)}, "watermark.opcity", "did you mean opacity"},
		{"bad image", PDFRequest{Watermark: json.RawMessage(`{"image":"data:image/png;base64,AAAA"}`)}, "watermark.image", ""},
		{"no password", PDFRequest{Encrypt: json.RawMessage(`{"permissions":["print"]}`)}, "encrypt", "needs userPassword"},
		{"rc4", PDFRequest{Encrypt: json.RawMessage(`{"userPassword":"x","algorithm":"rc4"}`)}, "encrypt.algorithm", "RC4"},
		{"permission", PDFRequest{Encrypt: json.RawMessage(`{"userPassword":"x","permissions":["print","fly"]}`)}, "encrypt.permissions[1]", `"print", "copy" or "modify"`},
		{"long password", PDFRequest{Encrypt: json.RawMessage(`{"userPassword":"` + strings.Repeat("p", 128) + `"}`)}, "encrypt.userPassword", "at most 127"},
		{"pdfa and encrypt", PDFRequest{PDFA: json.RawMessage(`"2b"`), Encrypt: json.RawMessage(`{"userPassword":"x"}`)}, "encrypt", "PDF/A forbids encryption"},
		{"language", PDFRequest{DocumentMetadata: json.RawMessage(`{"language":"english please"}`)}, "documentMetadata.language", "language tag"},
		{"date", PDFRequest{DocumentMetadata: json.RawMessage(`{"creationDate":"yesterday"}`)}, "documentMetadata.creationDate", "must be a date"},
		{"title type", PDFRequest{DocumentMetadata: json.RawMessage(`{"title":7}`)}, "documentMetadata.title", "must be a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParsePDFOptions(tc.req)
			var se *SchemaError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want a *SchemaError", err)
			}
			for _, is := range se.Issues {
				if is.Path == tc.path && strings.Contains(is.Message, tc.msg) {
					return
				}
			}
			t.Errorf("issues %+v, want %s: …%s…", se.Issues, tc.path, tc.msg)
		})
	}
	// The schema: the same checks at schema paths, and no encrypt.
	_, err := MustEngine(t).Compile(Definition{Schema: json.RawMessage(`{"pdfa":"1a","watermark":{"text":"X","opacity":0},"encrypt":{"userPassword":"x"},"sections":[{"id":"s","components":[]}]}`)})
	var se *SchemaError
	if !errors.As(err, &se) {
		t.Fatalf("Compile = %v", err)
	}
	got := map[string]bool{}
	for _, is := range se.Issues {
		got[is.Path] = true
	}
	for _, p := range []string{"schema.pdfa", "schema.watermark.opacity", "schema.encrypt.userPassword"} {
		if !got[p] {
			t.Errorf("Compile issues %+v lack %s", se.Issues, p)
		}
	}
}

// FuzzParsePDFOptions: no request options make the parser or a render panic.
func FuzzParsePDFOptions(f *testing.F) {
	f.Add(`"2b"`, `{"text":"DRAFT","angle":45,"opacity":0.2}`, `{"userPassword":"x","permissions":["print"]}`, `{"title":"T","creationDate":"2026-01-01"}`)
	f.Add(`"none"`, `false`, `{"ownerPassword":"o","permissions":[]}`, `{"language":"de-CH"}`)
	f.Add(`null`, `{"image":"data:image/png;base64,iVBORw0KGgo=","pages":"last","position":"top-left"}`, `[]`, `"x"`)
	tpl := MustCompile(f, Definition{Schema: json.RawMessage(`{"sections":[{"id":"s","components":[{"type":"text","props":{"content":"x"}}]}]}`)})
	values, err := tpl.Values(map[string]any{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, pdfa, watermark, encrypt, meta string) {
		o, err := ParsePDFOptions(PDFRequest{PDFA: json.RawMessage(pdfa), Watermark: json.RawMessage(watermark), Encrypt: json.RawMessage(encrypt), DocumentMetadata: json.RawMessage(meta)})
		if err != nil {
			return
		}
		if _, err := tpl.Render(context.Background(), io.Discard, PDF, values, Options{PDF: o}); err != nil && strings.Contains(err.Error(), "internal error") {
			t.Fatalf("render: %v", err)
		}
	})
}
