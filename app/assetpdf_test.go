package app

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readAsset(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "assets", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// minimalPDF writes objs as objects 1..n of a PDF with a correct
// cross-reference table; object 1 is the catalog.
func minimalPDF(objs ...string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// pageObjects are a catalog, a page tree and one page with pageExtra in
// its dictionary and catalogExtra in the catalog's, plus more objects.
func pageObjects(catalogExtra, pageExtra string, more ...string) []string {
	content := "BT /F1 12 Tf 72 720 Td (Hello) Tj ET"
	return append([]string{
		"<< /Type /Catalog /Pages 2 0 R " + catalogExtra + " >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> " + pageExtra + " >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}, more...)
}

// TestCheckPDFRefusals: encrypted, hostile and broken PDFs are refused on
// upload with ERR_ASSET_002 saying why.
func TestCheckPDFRefusals(t *testing.T) {
	deep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"user password", readAsset(t, "enc-user.pdf"), "encrypted"},
		{"owner password", readAsset(t, "enc-owner.pdf"), "encrypted"},
		{"javascript open action", minimalPDF(pageObjects("/OpenAction << /S /JavaScript /JS (app.alert(1)) >>", "")...), "JavaScript"},
		{"javascript link", minimalPDF(pageObjects("", "/Annots [6 0 R]", "<< /Type /Annot /Subtype /Link /Rect [0 0 10 10] /A << /S /JavaScript /JS (x) >> >>")...), "JavaScript"},
		{"launch action", minimalPDF(pageObjects("", "/AA << /O << /S /Launch /F (calc.exe) >> >>")...), "launches a program"},
		{"embedded file", minimalPDF(pageObjects("/Names << /EmbeddedFiles << /Names [(a.exe) 6 0 R] >> >>", "",
			"<< /Type /Filespec /F (a.exe) /EF << /F 7 0 R >> >>", "<< /Type /EmbeddedFile /Length 2 >>\nstream\nMZ\nendstream")...), "embedded files"},
		{"deep nesting", minimalPDF(pageObjects("/Deep "+deep, "")...), "PDF"},
		{"page tree loop", minimalPDF("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [2 0 R] /Count 1 >>"), "PDF"},
		{"count lies", minimalPDF("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [] /Count 100000 >>"), "PDF"},
		{"no pages", minimalPDF("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [] /Count 0 >>"), "PDF"},
		{"garbage body", []byte("%PDF-1.7\n" + strings.Repeat("garbage ", 1000) + "\n%%EOF\n"), "PDF"},
		{"truncated", readAsset(t, "terms.pdf")[:4000], "EOF"},
		{"javascript in an object stream", readAsset(t, "js-objstm.pdf"), "JavaScript"},
		{"millions of values in an object stream", readAsset(t, "values-objstm.pdf"), "values"},
		{"millions of values", minimalPDF(pageObjects("/Wide ["+strings.Repeat("1 ", 1_100_000)+"]", "")...), "values"},
	}
	for _, c := range cases {
		_, err := checkWithin(t, c.data)
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		e, ok := err.(*Error)
		if !ok || e.Code != ECodeAssetInvalid {
			t.Errorf("%s: %v, want ERR_ASSET_002", c.name, err)
			continue
		}
		if !strings.Contains(e.Message, c.want) {
			t.Errorf("%s: %q does not say %q", c.name, e.Message, c.want)
		}
	}
}

// FuzzAssetPDF feeds the PDF check mutations of real and hostile PDFs: it
// must answer (accept, or refuse with an ERR_ASSET_ error) and never panic
// or hang; what it accepts can be merged.
func FuzzAssetPDF(f *testing.F) {
	for _, name := range []string{"cover.pdf", "terms-objstm.pdf", "enc-user.pdf"} {
		b, err := os.ReadFile(filepath.Join("testdata", "assets", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(minimalPDF(pageObjects("", "")...))
	f.Add(minimalPDF(pageObjects("/OpenAction << /S /JavaScript /JS (x) >>", "")...))
	f.Add(minimalPDF("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [2 0 R] /Count 1 >>"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := checkWithin(t, data)
		if err != nil && ErrorCode(err) == "" {
			t.Fatalf("not an *Error: %v", err)
		}
	})
}
