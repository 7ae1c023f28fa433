package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pdfAsset reads a PDF of app/testdata/assets.
func pdfAsset(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("app", "testdata", "assets", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// contract is a two-page template with page numbers in its footer that
// attaches a cover before and the terms after.
func contract(before, after string, extra map[string]any) map[string]any {
	schema := map[string]any{
		"metadata":     map[string]any{"title": "Contract {{number}}", "author": "ACME GmbH"},
		"attachBefore": []any{before},
		"attachAfter":  []any{after},
		"sections": []any{
			map[string]any{"id": "f", "role": "footer", "components": []any{map[string]any{"type": "text", "props": map[string]any{"content": "Page {{page}} of {{pages}}"}}}},
			map[string]any{"id": "body", "components": []any{
				map[string]any{"type": "heading", "props": map[string]any{"content": "Contract {{number}}"}},
				map[string]any{"type": "pageBreak"},
				map[string]any{"type": "text", "props": map[string]any{"content": "Signatures"}},
			}},
		},
	}
	for k, v := range extra {
		schema[k] = v
	}
	return map[string]any{"name": "Contract", "outputFormats": []string{"pdf", "xlsx"}, "schema": schema,
		"variables": []any{map[string]any{"name": "number", "type": "string", "required": true}}}
}

// pdfPages reads each page's text with pdftotext.
func pdfPages(t *testing.T, pdf []byte, args ...string) []string {
	t.Helper()
	text, ok := poppler(t, pdf, "pdftotext", append([]string{"-layout"}, args...)...)
	if !ok {
		t.Fatalf("pdftotext: %s", text)
	}
	pages := strings.Split(text, "\f")
	if n := len(pages); n > 0 && strings.TrimSpace(pages[n-1]) == "" {
		pages = pages[:n-1]
	}
	return pages
}

// wantContractPages checks the order of a merged contract's pages and the
// numbers its generated pages show.
func wantContractPages(t *testing.T, pdf []byte, footers []string, args ...string) {
	t.Helper()
	pages := pdfPages(t, pdf, args...)
	want := []string{"COVER SHEET", "Contract 2026-7", "Signatures", "TERMS ONE", "TERMS TWO"}
	if len(pages) != len(want) {
		t.Fatalf("%d pages, want %d:\n%s", len(pages), len(want), strings.Join(pages, "\n----\n"))
	}
	for i, w := range want {
		if !strings.Contains(pages[i], w) {
			t.Errorf("page %d lacks %q:\n%s", i+1, w, pages[i])
		}
	}
	for i, f := range footers {
		if !strings.Contains(pages[i+1], f) {
			t.Errorf("generated page %d lacks %q:\n%s", i+1, f, pages[i+1])
		}
	}
}

func TestAttachPDFsThroughAPI(t *testing.T) {
	s := startServer(t)
	u := s.verifiedUser("lawyer")
	key := s.createKey(u.token, nil)

	// Upload: real PDFs pass, an encrypted or hostile one is refused.
	cover := s.uploadAsset("POST", "/api/assets", u.token, "cover.pdf", pdfAsset(t, "cover.pdf"), "cover")
	if cover.status != 200 || cover.str("kind") != "pdf" {
		t.Fatalf("upload cover: %d %s", cover.status, cover.raw)
	}
	termsID := s.must(200, "POST", "/api/assets", u.token, map[string]any{"name": "terms", "contentBase64": b64(pdfAsset(t, "terms-objstm.pdf"))}).str("id")
	r := s.uploadAsset("POST", "/api/assets", u.token, "locked.pdf", pdfAsset(t, "enc-user.pdf"), "locked")
	s.wantError(r, 400, "ERR_ASSET_002")
	if !strings.Contains(r.str("message"), "encrypted") {
		t.Errorf("encrypted PDF: %s", r.raw)
	}
	js := []byte("%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R /OpenAction << /S /JavaScript /JS (app.alert(1)) >> >>\nendobj\n" +
		"2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>\nendobj\n" +
		"trailer\n<< /Root 1 0 R >>\n%%EOF\n")
	r = s.do("POST", "/api/assets", u.token, map[string]any{"name": "js", "contentBase64": b64(js)})
	s.wantError(r, 400, "ERR_ASSET_002")
	if !strings.Contains(r.str("message"), "JavaScript") {
		t.Errorf("JavaScript PDF: %s", r.raw)
	}

	tpl := s.createTemplate(u.token, "Contract", contract("asset:cover", "asset:"+termsID, nil))
	id := tpl.str("id")
	vars := map[string]any{"number": "2026-7"}

	t.Run("single: cover, generated pages, terms; page numbers not counted", func(t *testing.T) {
		g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "pdf", "variables": vars})
		_, _, pdf := s.download(g.str("downloadUrl"))
		wantContractPages(t, pdf, []string{"Page 1 of 2", "Page 2 of 2"})
		info, _ := poppler(t, pdf, "pdfinfo")
		for _, want := range []string{"Pages:           5", "Title:           Contract 2026-7", "Author:          ACME GmbH"} {
			if !strings.Contains(info, want) {
				t.Errorf("pdfinfo lacks %q:\n%s", want, info)
			}
		}
		out, ok := poppler(t, pdf, "qpdf", "--json", "--json-key=outlines")
		var o struct {
			Outlines []struct {
				Title string `json:"title"`
				Page  int    `json:"destpageposfrom1"`
			} `json:"outlines"`
		}
		if !ok || json.Unmarshal([]byte(out), &o) != nil || len(o.Outlines) != 1 || o.Outlines[0].Title != "Contract 2026-7" || o.Outlines[0].Page != 2 {
			t.Errorf("outline: %s", out)
		}
	})

	t.Run("single: the request counts the attached pages", func(t *testing.T) {
		g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "pdf", "variables": vars, "countAttachedPages": true})
		_, _, pdf := s.download(g.str("downloadUrl"))
		wantContractPages(t, pdf, []string{"Page 2 of 5", "Page 3 of 5"})
	})

	t.Run("async: encrypted after the merge", func(t *testing.T) {
		const pw = "pw-Merge-48213"
		a := s.must(200, "POST", "/api/v1/documents/generate?async=true", key, map[string]any{"templateId": id, "format": "pdf", "variables": vars,
			"encrypt": map[string]any{"userPassword": pw, "ownerPassword": "owner-Merge-1", "permissions": []string{"print"}}})
		j := s.waitJob(key, a.str("jobId"))
		_, _, pdf := s.download(j.str("downloadUrl"))
		enc, ok := poppler(t, pdf, "qpdf", "--show-encryption", "--password="+pw)
		if !ok || !strings.Contains(enc, "R = 6") || !strings.Contains(enc, "file encryption method: AESv3") || !strings.Contains(enc, "print high resolution: allowed") ||
			!strings.Contains(enc, "modify anything: not allowed") {
			t.Errorf("qpdf --show-encryption:\n%s", enc)
		}
		wantContractPages(t, pdf, []string{"Page 1 of 2"}, "-upw", pw)
		if out, ok := poppler(t, pdf, "pdftotext"); ok {
			t.Errorf("opens without the password: %s", out)
		}
	})

	t.Run("batch, preview and dry run", func(t *testing.T) {
		b := s.must(200, "POST", "/api/v1/documents/generate/batch", key, map[string]any{"templateId": id, "format": "pdf",
			"attachBefore": []any{}, "documents": []any{map[string]any{"variables": vars}, map[string]any{"variables": map[string]any{"number": "2026-8"}},
				map[string]any{"variables": map[string]any{"number": "2026-9"}, "filename": "Third contract"}}})
		if b.str("combinedUrl") != "" {
			t.Errorf("a processing batch shows a combined file: %s", b.raw)
		}
		batch := s.waitBatch(key, b.str("batchId"))
		docs, _ := batch.get("documents").([]any)
		if len(docs) != 3 {
			t.Fatalf("batch: %s", batch.raw)
		}
		// The batch as one file, a bookmark per document over its own.
		url := batch.str("combinedUrl")
		if url == "" || batch.str("combinedExpiresAt") == "" {
			t.Fatalf("no combinedUrl: %s", batch.raw)
		}
		status, h, combined := s.download(url)
		if status != 200 || h.Get("Content-Type") != "application/pdf" {
			t.Fatalf("combined: %d %s", status, combined)
		}
		if info, _ := poppler(t, combined, "pdfinfo"); !strings.Contains(info, "Pages:           12") {
			t.Errorf("combined pdfinfo:\n%s", info)
		}
		out, _ := poppler(t, combined, "qpdf", "--json", "--json-key=outlines")
		var o struct {
			Outlines []struct {
				Title string `json:"title"`
				Page  int    `json:"destpageposfrom1"`
				Kids  []struct {
					Title string `json:"title"`
					Page  int    `json:"destpageposfrom1"`
				} `json:"kids"`
			} `json:"outlines"`
		}
		if err := json.Unmarshal([]byte(out), &o); err != nil || len(o.Outlines) != 3 {
			t.Fatalf("combined outline: %v %s", err, out)
		}
		for i, want := range []struct {
			title string
			page  int
			kid   string
		}{{"1. Contract 2026-7", 1, "Contract 2026-7"}, {"2. Contract 2026-8", 5, "Contract 2026-8"}, {"3. Third contract", 9, "Contract 2026-9"}} {
			got := o.Outlines[i]
			if got.Title != want.title || got.Page != want.page || len(got.Kids) != 1 || got.Kids[0].Title != want.kid || got.Kids[0].Page != want.page {
				t.Errorf("bookmark %d: %+v, want %+v", i+1, got, want)
			}
		}
		if pages := pdfPages(t, combined); len(pages) != 12 || !strings.Contains(pages[4], "Contract 2026-8") || !strings.Contains(pages[11], "TERMS TWO") {
			t.Errorf("combined pages:\n%s", strings.Join(pages, "\n----\n"))
		}
		s.wantDownloadDenied(strings.Replace(url, "signature=", "signature=0", 1))
		// Encrypted documents are not combined: each has its own passwords.
		e := s.must(200, "POST", "/api/v1/documents/generate/batch", key, map[string]any{"templateId": id, "format": "pdf",
			"documents": []any{map[string]any{"variables": vars, "encrypt": map[string]any{"userPassword": "pw-Comb-1"}}}})
		eb := s.waitBatch(key, e.str("batchId"))
		if eb.str("combinedUrl") == "" {
			t.Fatalf("no combinedUrl: %s", eb.raw)
		}
		s.wantError(s.do("GET", eb.str("combinedUrl"), "", nil), 400, "ERR_VALID_003")
		s.wantDownloadDenied(strings.Replace(strings.Replace(url, "/batches/", "/jobs/", 1), "/combined?", "/download?", 1))
		_, _, pdf := s.download(docs[1].(map[string]any)["downloadUrl"].(string))
		pages := pdfPages(t, pdf)
		if len(pages) != 4 || !strings.Contains(pages[0], "Contract 2026-8") || !strings.Contains(pages[3], "TERMS TWO") {
			t.Errorf("batch document without the cover:\n%s", strings.Join(pages, "\n----\n"))
		}

		p := s.do("POST", "/api/templates/"+id+"/preview", u.token, map[string]any{"variables": vars})
		if p.status != 200 || p.header.Get("X-Folio-Pages") != "5" {
			t.Fatalf("preview: %d %s %s", p.status, p.header.Get("X-Folio-Pages"), p.raw)
		}
		pages = pdfPages(t, p.raw)
		if len(pages) != 5 || !strings.Contains(pages[0], "COVER SHEET") {
			t.Errorf("preview pages:\n%s", strings.Join(pages, "\n----\n"))
		}
		// DRAFT stamps the generated pages, not the attached ones.
		for page, want := range map[string]bool{"1": false, "2": true, "3": true, "4": false} {
			text, _ := poppler(t, p.raw, "pdftotext", "-raw", "-f", page, "-l", page)
			if got := strings.Contains(strings.Join(strings.Fields(text), ""), "DRAFT"); got != want {
				t.Errorf("preview page %s: DRAFT %v, want %v:\n%s", page, got, want, text)
			}
		}

		d := s.must(200, "POST", "/api/v1/documents/generate?dryRun=true", key, map[string]any{"templateId": id, "format": "pdf", "variables": vars})
		if d.get("valid") != true || d.str("predicted.pages") != "5" || d.str("predicted.attachedPages.before") != "1" || d.str("predicted.attachedPages.after") != "2" {
			t.Errorf("dry run: %s", d.raw)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		r := s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "xlsx", "variables": vars, "attachAfter": []any{"asset:terms"}})
		s.wantError(r, 400, "ERR_VALID_003")
		r = s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "pdf", "variables": vars, "attachAfter": []any{"terms"}})
		s.wantError(r, 400, "ERR_VALID_003")
		if r.str("relatedInfo.field") != "attachAfter[0]" {
			t.Errorf("attachAfter without asset: %s", r.raw)
		}
		r = s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "pdf", "variables": vars, "attachAfter": []any{"asset:nothing"}})
		s.wantError(r, 404, "ERR_ASSET_001")
		// PDF/A takes only PDF/A attachments.
		r = s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "pdf", "variables": vars, "pdfa": "2b"})
		s.wantError(r, 400, "ERR_ASSET_002")
		if r.str("relatedInfo.field") != "attachBefore[0]" || !strings.Contains(r.str("message"), "PDF/A") {
			t.Errorf("PDF/A with a plain cover: %s", r.raw)
		}
		s.must(200, "POST", "/api/assets", u.token, map[string]any{"name": "archived cover", "contentBase64": b64(pdfAsset(t, "pdfa-cover.pdf"))})
		g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "pdf", "variables": vars, "pdfa": "2b",
			"attachBefore": []any{"asset:archived cover"}, "attachAfter": []any{}})
		_, _, pdf := s.download(g.str("downloadUrl"))
		if v := pdfaViolations(t, pdf, "2", "B"); v != "" {
			t.Errorf("merged PDF/A-2b:\n%s", v)
		}
		// An asset a template attaches cannot be deleted.
		r = s.do("DELETE", "/api/assets/cover", u.token, nil)
		s.wantError(r, 400, "ERR_ASSET_003")
	})

	t.Run("tenancy: another team cannot attach the team's PDFs", func(t *testing.T) {
		b := s.verifiedUser("other")
		keyB := s.createKey(b.token, nil)
		coverID := cover.str("id")
		borrow := s.createTemplate(b.token, "Borrow", contract("asset:"+coverID, "asset:terms", nil)).str("id")
		r := s.do("POST", "/api/v1/documents/generate", keyB, map[string]any{"templateId": borrow, "format": "pdf", "variables": vars})
		s.wantError(r, 404, "ERR_ASSET_001")
		// B's own template, with A's PDFs named in the request, by id and by name.
		own := s.createTemplate(b.token, "Own", contract("asset:mine", "asset:mine", nil)).str("id")
		s.must(200, "POST", "/api/assets", b.token, map[string]any{"name": "mine", "contentBase64": b64(pdfAsset(t, "cover.pdf"))})
		for _, ref := range []string{"asset:" + coverID, "asset:" + termsID, "asset:terms"} {
			r := s.do("POST", "/api/v1/documents/generate", keyB, map[string]any{"templateId": own, "format": "pdf", "variables": vars, "attachAfter": []any{ref}})
			s.wantError(r, 404, "ERR_ASSET_001")
			r = s.do("POST", "/api/templates/"+own+"/preview", b.token, map[string]any{"variables": vars, "attachBefore": []any{ref}})
			s.wantError(r, 404, "ERR_ASSET_001")
		}
		g := s.must(200, "POST", "/api/v1/documents/generate", keyB, map[string]any{"templateId": own, "format": "pdf", "variables": vars})
		_, _, pdf := s.download(g.str("downloadUrl"))
		if pages := pdfPages(t, pdf); len(pages) != 4 {
			t.Errorf("B's own attachments: %d pages", len(pages))
		}
	})
}

// paddedPDF is a valid one-page PDF of exactly n bytes: its content
// stream is padded with spaces.
func paddedPDF(t *testing.T, n int) []byte {
	t.Helper()
	build := func(pad int) []byte {
		content := "BT /F1 12 Tf 72 720 Td (Quota) Tj ET" + strings.Repeat(" ", pad)
		objs := []string{
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
			"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
			fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content),
			"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		}
		var b bytes.Buffer
		b.WriteString("%PDF-1.4\n")
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
	pad := 0
	for range 5 {
		b := build(pad)
		if len(b) == n {
			return b
		}
		pad += n - len(b)
		if pad < 0 {
			t.Fatalf("a PDF of %d bytes is too small", n)
		}
	}
	t.Fatalf("no PDF of exactly %d bytes", n)
	return nil
}
