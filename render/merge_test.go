package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"folio/render/pdfmerge"
)

// attachAssets serves PDFs rendered by the engine as the assets a
// template attaches: "cover" (one page), "terms" (two pages), a PDF/A
// cover and an image.
func attachAssets(tb testing.TB) AssetResolver {
	tb.Helper()
	doc := func(extra, body string) []byte {
		return MustRender(tb, MustCompile(tb, Definition{Schema: json.RawMessage(`{` + extra + `"sections":[{"id":"s","components":[` + body + `]}]}`)}), nil, Options{})
	}
	assets := map[string][]byte{
		"cover":   doc("", `{"type":"heading","props":{"content":"COVER SHEET"}}`),
		"terms":   doc("", `{"type":"heading","props":{"content":"TERMS ONE"}},{"type":"pageBreak"},{"type":"text","props":{"content":"TERMS TWO"}}`),
		"a-cover": doc(`"pdfa":"2b",`, `{"type":"heading","props":{"content":"ARCHIVED COVER"}}`),
	}
	return func(ref string) (string, []byte, error) {
		if ref == "logo" {
			return "image", []byte("\x89PNG"), nil
		}
		if b, ok := assets[ref]; ok {
			return "pdf", b, nil
		}
		return "", nil, fmt.Errorf("asset:%s not found", ref)
	}
}

// pageTexts reads each page's text with pdftotext.
func pageTexts(tb testing.TB, pdf []byte, args ...string) []string {
	tb.Helper()
	text := runTool(tb, "pdftotext", pdf, append([]string{"-enc", "UTF-8", "-layout"}, args...)...)
	pages := strings.Split(text, "\f")
	if n := len(pages); n > 0 && strings.TrimSpace(pages[n-1]) == "" {
		pages = pages[:n-1]
	}
	return pages
}

func TestAttachBeforeAndAfter(t *testing.T) {
	assets := attachAssets(t)
	for _, tc := range []struct {
		name, extra string
		request     PDFRequest
		footers     []string // the footer of each generated page
	}{
		{"not counted (default)", `"attachBefore":["asset:cover"],"attachAfter":["asset:terms"],`, PDFRequest{},
			[]string{"Page 1 of 3", "Page 2 of 3", "Page 3 of 3"}},
		{"counted", `"attachBefore":["asset:cover"],"attachAfter":["asset:terms"],"countAttachedPages":true,`, PDFRequest{},
			[]string{"Page 2 of 6", "Page 3 of 6", "Page 4 of 6"}},
		{"request over the schema", `"attachBefore":["asset:terms"],`,
			PDFRequest{AttachBefore: json.RawMessage(`["asset:cover"]`), AttachAfter: json.RawMessage(`["asset:terms"]`), CountAttachedPages: json.RawMessage(`true`)},
			[]string{"Page 2 of 6", "Page 3 of 6", "Page 4 of 6"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tpl := businessTemplate(t, tc.extra)
			pdf, st := MustRenderFormat(t, tpl, businessValues, PDF, Options{Assets: assets, PDF: mustOptions(t, tc.request)})
			if st.Pages != 6 || st.AttachedPagesBefore != 1 || st.AttachedPagesAfter != 2 {
				t.Errorf("stats: %+v", st)
			}
			pages := pageTexts(t, pdf)
			if len(pages) != 6 {
				t.Fatalf("pdftotext finds %d pages:\n%s", len(pages), strings.Join(pages, "\n----\n"))
			}
			wants := []string{"COVER SHEET", "Rechnung 2026-0042", "second page", "third page", "TERMS ONE", "TERMS TWO"}
			for i, want := range wants {
				if !strings.Contains(pages[i], want) {
					t.Errorf("page %d lacks %q:\n%s", i+1, want, pages[i])
				}
			}
			for i, want := range tc.footers {
				if !strings.Contains(pages[i+1], want) {
					t.Errorf("generated page %d lacks %q:\n%s", i+1, want, pages[i+1])
				}
			}
			if info := runTool(t, "pdfinfo", pdf); !strings.Contains(info, "Pages:           6") || !strings.Contains(info, "Title:           Invoice 2026-0042") ||
				!strings.Contains(info, "Author:          ACME GmbH") {
				t.Errorf("pdfinfo:\n%s", info)
			}
			if out, err := QPDF(t, pdf, "--check"); err != nil {
				t.Errorf("qpdf --check: %v\n%s", err, out)
			}
			// The generated document's outline (its heading) still leads
			// to its first page, now the second.
			var js struct {
				Outlines []struct {
					Title        string `json:"title"`
					DestPageFrom int    `json:"destpageposfrom1"`
				} `json:"outlines"`
			}
			out, err := QPDF(t, pdf, "--json", "--json-key=outlines")
			if err != nil {
				t.Fatalf("qpdf --json: %v", err)
			}
			if err := json.Unmarshal([]byte(out), &js); err != nil {
				t.Fatalf("qpdf --json: %v\n%s", err, out)
			}
			if len(js.Outlines) != 1 || js.Outlines[0].Title != "Rechnung 2026-0042" || js.Outlines[0].DestPageFrom != 2 {
				t.Errorf("outline: %+v", js.Outlines)
			}
			if meta := runTool(t, "pdfinfo", pdf, "-meta"); !strings.Contains(meta, ">Invoice 2026-0042</rdf:li>") {
				t.Errorf("XMP metadata lost:\n%s", meta)
			}
		})
	}
}

// TestAttachedPagesInExpressions: a document whose layout reads "pages"
// (a last-page footer) counts the attached pages when asked, and still
// settles.
func TestAttachedPagesInExpressions(t *testing.T) {
	schema := `{"attachAfter":["asset:terms"],"countAttachedPages":true,"sections":[
	 {"id":"f","role":"footer","components":[{"type":"text","props":{"content":"{{page}}/{{pages}} {{ pages > 3 ? 'long' : 'short' }}"}}]},
	 {"id":"s","components":[{"type":"text","props":{"content":"BODY {{ page }} of {{ pages }}"}},{"type":"pageBreak"},{"type":"text","props":{"content":"two"}}]}]}`
	tpl := MustCompile(t, Definition{Schema: json.RawMessage(schema)})
	pdf, st := MustRenderFormat(t, tpl, nil, PDF, Options{Assets: attachAssets(t)})
	if st.PagesUnsettled || st.Pages != 4 {
		t.Errorf("stats: %+v", st)
	}
	pages := pageTexts(t, pdf)
	if !strings.Contains(pages[0], "BODY 1 of 4") || !strings.Contains(pages[0], "1/4 long") || !strings.Contains(pages[1], "2/4 long") {
		t.Errorf("pages:\n%s", strings.Join(pages, "\n----\n"))
	}
}

func TestAttachEncryptsTheMergedFile(t *testing.T) {
	tpl := businessTemplate(t, `"attachBefore":["asset:cover"],"attachAfter":["asset:terms"],`)
	o := mustOptions(t, PDFRequest{Encrypt: json.RawMessage(`{"userPassword":"s3cret pass","ownerPassword":"owner-Ω","permissions":["print"]}`)})
	pdf := MustRender(t, tpl, businessValues, Options{Assets: attachAssets(t), PDF: o})
	if strings.Contains(string(pdf), "COVER") || strings.Contains(string(pdf), "s3cret") {
		t.Fatal("text or password readable in the encrypted file")
	}
	out, err := QPDF(t, pdf, "--show-encryption", "--password=s3cret pass")
	if err != nil {
		t.Fatalf("qpdf --show-encryption: %v\n%s", err, out)
	}
	for _, want := range []string{"R = 6", "Supplied password is user password", "print high resolution: allowed", "extract for any purpose: not allowed",
		"modify anything: not allowed", "stream encryption method: AESv3", "string encryption method: AESv3", "file encryption method: AESv3"} {
		if !strings.Contains(out, want) {
			t.Errorf("qpdf --show-encryption lacks %q:\n%s", want, out)
		}
	}
	if out, _ := QPDF(t, pdf, "--show-encryption", "--password=owner-Ω"); !strings.Contains(out, "Supplied password is owner password") {
		t.Errorf("owner password not accepted:\n%s", out)
	}
	pages := pageTexts(t, pdf, "-upw", "s3cret pass")
	if len(pages) != 6 || !strings.Contains(pages[0], "COVER SHEET") || !strings.Contains(pages[1], "Rechnung 2026-0042") || !strings.Contains(pages[5], "TERMS TWO") {
		t.Errorf("pdftotext -upw reads:\n%s", strings.Join(pages, "\n----\n"))
	}
	if info := runTool(t, "pdfinfo", pdf, "-upw", "s3cret pass"); !strings.Contains(info, "Title:           Invoice 2026-0042") || !strings.Contains(info, "Pages:           6") {
		t.Errorf("pdfinfo with the password:\n%s", info)
	}
	if out, err := QPDF(t, pdf, "--check", "--password=s3cret pass"); err != nil {
		t.Errorf("qpdf --check: %v\n%s", err, out)
	}
}

func TestAttachWithPDFA(t *testing.T) {
	assets := attachAssets(t)
	// A cover that does not claim PDF/A is refused.
	tpl := businessTemplate(t, `"pdfa":"2b","attachBefore":["asset:cover"],`)
	_, err := tpl.Render(t.Context(), &strings.Builder{}, PDF, businessValues, Options{Assets: assets})
	var ae *AttachmentError
	if !errors.As(err, &ae) || ae.Path != "attachBefore[0]" || !strings.Contains(ae.Msg, "PDF/A") {
		t.Fatalf("a plain PDF attached to a PDF/A document: %v", err)
	}
	// A PDF/A cover is taken, and the merged file passes the checks.
	tpl = businessTemplate(t, `"pdfa":"2b","attachBefore":["asset:a-cover"],"attachAfter":["asset:a-cover"],`)
	pdf := MustRender(t, tpl, businessValues, Options{Assets: assets})
	if v := CheckPDFA(t, pdf, "2", "B"); len(v) > 0 {
		t.Errorf("merged PDF/A-2b violations:\n%s", strings.Join(v, "\n"))
	}
	pages := pageTexts(t, pdf)
	if len(pages) != 5 || !strings.Contains(pages[0], "ARCHIVED COVER") || !strings.Contains(pages[4], "ARCHIVED COVER") {
		t.Errorf("pages:\n%s", strings.Join(pages, "\n----\n"))
	}
	if meta := runTool(t, "pdfinfo", pdf, "-meta"); !strings.Contains(meta, "<pdfaid:part>2</pdfaid:part>") || !strings.Contains(meta, ">Invoice 2026-0042</rdf:li>") {
		t.Errorf("XMP:\n%s", meta)
	}
}

func TestAttachErrors(t *testing.T) {
	assets := attachAssets(t)
	for _, tc := range []struct{ schema, want string }{
		{`"attachBefore":"asset:cover",`, "schema.attachBefore: must be an array"},
		{`"attachBefore":["cover"],`, `schema.attachBefore[0]: must be "asset:<name or id>"`},
		{`"attachAfter":[1],`, `schema.attachAfter[0]: must be a string`},
		{`"countAttachedPages":"yes",`, `schema.countAttachedPages: must be true or false`},
	} {
		_, err := MustEngine(t).Compile(Definition{Schema: json.RawMessage(`{` + tc.schema + `"sections":[{"id":"s","components":[]}]}`)})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %s", tc.schema, err, tc.want)
		}
	}
	if _, err := ParsePDFOptions(PDFRequest{AttachAfter: json.RawMessage(`["asset:a","asset:b","asset:c","asset:d","asset:e","asset:f","asset:g","asset:h","asset:i","asset:j","asset:k"]`)}); err == nil ||
		!strings.Contains(err.Error(), "attachAfter: lists 11 PDFs, at most 10") {
		t.Errorf("11 attachments: %v", err)
	}
	for _, tc := range []struct{ ref, want string }{
		{"logo", "is a image asset, not a PDF"},
		{"missing", "asset:missing not found"},
	} {
		tpl := businessTemplate(t, `"attachAfter":["asset:`+tc.ref+`"],`)
		_, err := tpl.Render(t.Context(), &strings.Builder{}, PDF, businessValues, Options{Assets: assets})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.ref, err)
		}
	}
}

// TestMergeKeepsTheCatalog: the generated document's catalog entries that
// the e-invoice and signature work rely on (associated files, embedded
// files, XMP metadata, output intents, language) are the merged file's;
// the attachments bring their pages only.
func TestMergeKeepsTheCatalog(t *testing.T) {
	if err := exec.Command(pdfaPython, "-c", "import pikepdf").Run(); err != nil {
		t.Skip("python3-pikepdf not installed")
	}
	tpl := businessTemplate(t, `"pdfa":"3b",`)
	gen := MustRender(t, tpl, businessValues, Options{})
	// What the e-invoice step adds: factur-x.xml as an embedded and
	// associated file (written here with pikepdf).
	withXML := filepath.Join(t.TempDir(), "facturx.pdf")
	if out, err := exec.Command(pdfaPython, "-c", `import pikepdf, sys
p = pikepdf.open(sys.argv[1])
p.attachments["factur-x.xml"] = pikepdf.AttachedFileSpec(p, b"<rsm:CrossIndustryInvoice/>", filename="factur-x.xml", mime_type="text/xml", mod_date="D:20261126000000Z")
spec = p.Root.Names.EmbeddedFiles.Names[1]
spec.AFRelationship = pikepdf.Name.Data
p.Root.AF = pikepdf.Array([spec])
p.save(sys.argv[2])`, writeTemp(t, gen), withXML).CombinedOutput(); err != nil {
		t.Fatalf("pikepdf: %v\n%s", err, out)
	}
	generated, err := os.ReadFile(withXML)
	if err != nil {
		t.Fatal(err)
	}
	assets := attachAssets(t)
	open := func(ref string) *pdfmerge.Attachment {
		_, data, _ := assets(ref)
		a, err := pdfmerge.Open(data)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	merged, err := pdfmerge.Merge(generated, []*pdfmerge.Attachment{open("a-cover")}, []*pdfmerge.Attachment{open("terms")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	path := writeTemp(t, merged)
	out, err := exec.Command(pdfaPython, "-c", `import pikepdf, sys
p = pikepdf.open(sys.argv[1])
r = p.Root
print(sorted(k for k in r.keys()))
print(r.Lang, len(p.pages), r.AF[0].F, r.OutputIntents[0].S)`, path).CombinedOutput()
	if err != nil {
		t.Fatalf("pikepdf: %v\n%s", err, out)
	}
	for _, want := range []string{"'/AF'", "'/Lang'", "'/Metadata'", "'/Names'", "'/OutputIntents'", "'/Outlines'", "de-DE 6 factur-x.xml /GTS_PDFA1"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("merged catalog lacks %s:\n%s", want, out)
		}
	}
	if list := runTool(t, "pdfdetach", merged, "-list"); !strings.Contains(list, "factur-x.xml") {
		t.Errorf("pdfdetach -list:\n%s", list)
	}
	if v := CheckPDFA(t, merged, "3", "B"); len(v) > 0 {
		t.Errorf("merged PDF/A-3b with factur-x.xml:\n%s", strings.Join(v, "\n"))
	}
}
