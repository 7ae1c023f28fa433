package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"io"
	"mime/multipart"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/image/font/gofont/goregular"

	"folio/app"
)

// assetPNG is a w×h PNG of one colour.
func assetPNG(t testing.TB, w, h int, c color.Color) []byte {
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
	return b.Bytes()
}

// uploadAsset sends a multipart upload (file and, when not "", name).
func (s *testServer) uploadAsset(method, path, token, fileName string, data []byte, name string, headers ...string) resp {
	s.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", fileName)
	fw.Write(data)
	if name != "" {
		mw.WriteField("name", name)
	}
	mw.Close()
	return s.do(method, path, token, buf.Bytes(), append([]string{"Content-Type", mw.FormDataContentType()}, headers...)...)
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// imageTemplate draws the image src once.
func imageTemplate(src string) map[string]any {
	return map[string]any{
		"outputFormats": []string{"pdf", "xlsx"},
		"schema": map[string]any{"sections": []any{map[string]any{"id": "body", "components": []any{
			map[string]any{"type": "heading", "props": map[string]any{"content": "Report"}},
			map[string]any{"type": "image", "props": map[string]any{"src": src, "width": 40}},
		}}}},
	}
}

// TestAssetLifecycle uploads, lists, reads, downloads, replaces, renames
// and deletes assets through the API.
func TestAssetLifecycle(t *testing.T) {
	s := startServer(t)
	u := s.signup("Assets")
	logo := assetPNG(t, 30, 20, color.NRGBA{200, 30, 30, 255})

	up := s.uploadAsset("POST", "/api/assets", u.token, "logo.png", logo, "")
	if up.status != 200 {
		t.Fatalf("upload: %d %s", up.status, up.raw)
	}
	id := up.str("id")
	if !strings.HasPrefix(id, "ast_") || up.str("name") != "logo.png" || up.str("kind") != "image" || up.str("format") != "png" ||
		up.str("contentType") != "image/png" || up.get("size").(float64) != float64(len(logo)) || up.str("width") != "30" ||
		up.str("reference") != "asset:logo.png" || up.str("contentUrl") != "/api/assets/"+id+"/content" {
		t.Fatalf("upload answer: %s", up.raw)
	}
	s.must(200, "PATCH", "/api/assets/"+id, u.token, map[string]any{"name": "logo"})

	font := s.must(200, "POST", "/api/assets", u.token, map[string]any{"name": "Brand Sans", "contentBase64": b64(goregular.TTF)})
	if font.str("kind") != "font" || font.str("font.family") != "Go" || font.str("font.weight") != "400" || font.str("font.outlines") != "truetype" {
		t.Fatalf("font answer: %s", font.raw)
	}
	s.wantError(s.do("POST", "/api/assets", u.token, map[string]any{"contentBase64": b64(logo)}), 400, "ERR_VALID_005")
	s.wantError(s.do("POST", "/api/assets", u.token, map[string]any{"name": "x"}), 400, "ERR_VALID_005")
	s.wantError(s.do("POST", "/api/assets", u.token, map[string]any{"name": "x", "contentBase64": "%%%"}), 400, "ERR_VALID_003")
	s.wantError(s.do("POST", "/api/assets", u.token, map[string]any{"name": "ast_x", "contentBase64": b64(logo)}), 400, "ERR_VALID_003")
	dup := s.do("POST", "/api/assets", u.token, map[string]any{"name": "logo", "contentBase64": b64(logo)})
	s.wantError(dup, 400, "ERR_ASSET_006")

	l := s.must(200, "GET", "/api/assets", u.token, nil)
	if l.str("meta.total") != "2" || len(l.get("data").([]any)) != 2 {
		t.Fatalf("list: %s", l.raw)
	}
	if l = s.must(200, "GET", "/api/assets?kind=font", u.token, nil); l.str("meta.total") != "1" {
		t.Fatalf("fonts: %s", l.raw)
	}
	s.wantError(s.do("GET", "/api/assets?kind=video", u.token, nil), 400, "ERR_VALID_003")
	if g := s.must(200, "GET", "/api/assets/logo", u.token, nil); g.str("id") != id { // by name
		t.Fatalf("get by name: %s", g.raw)
	}

	c := s.must(200, "GET", "/api/assets/"+id+"/content", u.token, nil)
	if !bytes.Equal(c.raw, logo) || c.header.Get("Content-Type") != "image/png" || !strings.HasPrefix(c.header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("content: %v %d bytes", c.header, len(c.raw))
	}

	// Replace: same id, new bytes; another kind is refused.
	blue := assetPNG(t, 8, 8, color.NRGBA{0, 0, 255, 255})
	r := s.uploadAsset("PUT", "/api/assets/"+id, u.token, "blue.png", blue, "")
	if r.status != 200 || r.str("id") != id || r.str("name") != "logo" || r.str("width") != "8" || r.str("sha256") == up.str("sha256") {
		t.Fatalf("replace: %d %s", r.status, r.raw)
	}
	if c := s.must(200, "GET", "/api/assets/"+id+"/content", u.token, nil); !bytes.Equal(c.raw, blue) {
		t.Fatal("content not replaced")
	}
	s.wantError(s.do("PUT", "/api/assets/"+id, u.token, map[string]any{"contentBase64": b64(goregular.TTF)}), 400, "ERR_ASSET_002")
	s.wantError(s.do("PATCH", "/api/assets/"+id, u.token, map[string]any{"name": "Brand Sans"}), 400, "ERR_ASSET_006")

	// API keys: reads with the read set, writes with manage_templates.
	reader := s.createKey(u.token, nil)
	s.must(200, "GET", "/api/assets", reader, nil)
	s.wantError(s.do("POST", "/api/assets", reader, map[string]any{"name": "k", "contentBase64": b64(logo)}), 403, "ERR_AUTH_005")
	s.wantError(s.do("DELETE", "/api/assets/"+id, reader, nil), 403, "ERR_AUTH_005")
	writer := s.createKey(u.token, map[string]bool{"manage_templates": true})
	s.must(200, "POST", "/api/assets", writer, map[string]any{"name": "k", "contentBase64": b64(logo)})

	s.must(204, "DELETE", "/api/assets/"+id, u.token, nil)
	s.wantError(s.do("GET", "/api/assets/"+id, u.token, nil), 404, "ERR_ASSET_001")
	s.wantError(s.do("GET", "/api/assets/"+id+"/content", u.token, nil), 404, "ERR_ASSET_001")
	s.wantError(s.do("DELETE", "/api/assets/"+id, u.token, nil), 404, "ERR_ASSET_001")
	s.wantError(s.do("GET", "/api/assets", "", nil), 401, "ERR_AUTH_003")
}

// TestAssetRefusals sends hostile and unsupported files: each is refused
// with ERR_ASSET_002 and a message that says what is wrong.
func TestAssetRefusals(t *testing.T) {
	s := startServer(t)
	u := s.signup("Hostile")
	otf, err := os.ReadFile("app/testdata/assets/cfftest.otf")
	if err != nil {
		t.Fatal(err)
	}
	s.must(200, "POST", "/api/assets", u.token, map[string]any{"name": "cff", "contentBase64": b64(otf)})
	cases := []struct{ name, data, code, want string }{
		{"truncated font", string(goregular.TTF[:5000]), "ERR_ASSET_002", "font"},
		{"collection", "ttcf\x00\x01\x00\x00\x00\x00\x00\x01\x00\x00\x00\x0c", "ERR_ASSET_002", ".ttc"},
		{"script svg", `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.cookie)</script></svg>`, "ERR_ASSET_002", "<script>"},
		{"external svg", `<svg xmlns="http://www.w3.org/2000/svg"><image href="http://169.254.169.254/latest"/></svg>`, "ERR_ASSET_002", "169.254.169.254"},
		{"entity svg", `<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg xmlns="http://www.w3.org/2000/svg">&x;</svg>`, "ERR_ASSET_002", "DOCTYPE"},
		{"html", "<html><script>x</script></html>", "ERR_ASSET_002", "not <svg>"},
		{"exe", "MZ\x90\x00\x03", "ERR_ASSET_002", "not a PNG, JPEG, WebP or SVG image, a TTF or OTF font, or a PDF"},
		{"empty", "", "ERR_ASSET_002", "empty"},
		{"broken png", "\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR", "ERR_ASSET_002", "PNG"},
	}
	for _, c := range cases {
		r := s.uploadAsset("POST", "/api/assets", u.token, c.name, []byte(c.data), c.name)
		s.wantError(r, 400, c.code)
		if !strings.Contains(r.str("message"), c.want) {
			t.Errorf("%s: message %q does not say %q", c.name, r.str("message"), c.want)
		}
	}
	big := make([]byte, app.MaxAssetBytes+10)
	copy(big, "%PDF-1.4\n")
	s.wantError(s.uploadAsset("POST", "/api/assets", u.token, "big.pdf", big, "big"), 400, "ERR_ASSET_005")
	s.wantError(s.do("POST", "/api/assets", u.token, map[string]any{"name": "big", "contentBase64": b64(big)}), 400, "ERR_ASSET_005")
	if l := s.must(200, "GET", "/api/assets", u.token, nil); l.str("meta.total") != "1" {
		t.Fatalf("refused files were kept: %s", l.raw)
	}
}

// TestAssetQuota fills a plan's asset storage: the upload past it is
// refused with ERR_QUOTA_012 (429), a replacement counts without the old
// bytes, and the usage API shows used and limit.
func TestAssetQuota(t *testing.T) {
	free := app.Plans["free"]
	small := free
	small.AssetBytes = 40 << 10
	app.Plans["free"] = small
	t.Cleanup(func() { app.Plans["free"] = free })
	s := startServer(t, func(c *Config) { c.DefaultPlan = "free" })
	u := s.signup("Quota")
	pdf := func(n int) []byte { return paddedPDF(t, n) }
	s.must(200, "POST", "/api/assets", u.token, map[string]any{"name": "a", "contentBase64": b64(pdf(30 << 10))})
	r := s.do("POST", "/api/assets", u.token, map[string]any{"name": "b", "contentBase64": b64(pdf(11 << 10))})
	s.wantError(r, 429, "ERR_QUOTA_012")
	if r.str("relatedInfo.limitBytes") != "40960" || r.str("relatedInfo.usedBytes") != "30720" || r.str("relatedInfo.plan") != "free" ||
		!strings.Contains(r.str("message"), "asset storage") {
		t.Fatalf("quota error: %s", r.raw)
	}
	s.must(200, "POST", "/api/assets", u.token, map[string]any{"name": "b", "contentBase64": b64(pdf(10 << 10))})
	// Replacing a (30 KB) with 29 KB fits: its old bytes do not count.
	s.must(200, "PUT", "/api/assets/a", u.token, map[string]any{"contentBase64": b64(pdf(29 << 10))})
	s.wantError(s.do("PUT", "/api/assets/a", u.token, map[string]any{"contentBase64": b64(pdf(31 << 10))}), 429, "ERR_QUOTA_012")
	us := s.must(200, "GET", "/api/v1/analytics/usage", u.token, nil)
	if us.str("assetStorage.usedBytes") != "39936" || us.str("assetStorage.limitBytes") != "40960" || us.str("assetStorage.assets") != "2" {
		t.Fatalf("usage: %s", us.raw)
	}
}

// TestAssetInUse references an asset from a template: the PDF draws it,
// deleting it is refused while the working copy or the published version
// uses it, and allowed once neither does.
func TestAssetInUse(t *testing.T) {
	s := startServer(t)
	u := s.signup("InUse")
	key := s.createKey(u.token, nil)
	id := s.must(200, "POST", "/api/assets", u.token, map[string]any{"name": "logo", "contentBase64": b64(assetPNG(t, 40, 20, color.NRGBA{10, 120, 10, 255}))}).str("id")
	report := s.createTemplate(u.token, "Report", imageTemplate("asset:logo"))
	if strings.Contains(string(report.raw), "no asset") {
		t.Fatalf("warning for an asset the team has: %s", report.raw)
	}
	tpl := report.str("id")
	byID := s.createTemplate(u.token, "By id", imageTemplate("asset:"+id)).str("id")

	g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl, "format": "pdf"})
	_, _, pdf := s.download(g.str("downloadUrl"))
	if n := pdfImageCount(t, pdf); n != 1 {
		t.Fatalf("the PDF embeds %d images, want the logo", n)
	}
	x := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl, "format": "xlsx"})
	if x.str("status") != "completed" {
		t.Fatalf("xlsx: %s", x.raw)
	}

	r := s.do("DELETE", "/api/assets/logo", u.token, nil)
	s.wantError(r, 400, "ERR_ASSET_003")
	used := r.get("relatedInfo.templates").([]any)
	if len(used) != 2 || !strings.Contains(r.str("message"), "By id, Report") {
		t.Fatalf("in use: %s", r.raw)
	}
	if a := s.must(200, "GET", "/api/assets/"+id, u.token, nil); len(a.get("usedBy").([]any)) != 2 {
		t.Fatalf("usedBy: %s", a.raw)
	}

	// Published, then the draft drops the image: the version still uses it.
	s.must(200, "POST", "/api/templates/"+tpl+"/publish", u.token, nil)
	s.must(200, "PUT", "/api/templates/"+tpl, u.token, map[string]any{"schema": invoiceTemplate["schema"]})
	s.must(200, "DELETE", "/api/templates/"+byID, u.token, nil)
	r = s.do("DELETE", "/api/assets/"+id, u.token, nil)
	s.wantError(r, 400, "ERR_ASSET_003")
	if len(r.get("relatedInfo.templates").([]any)) != 1 {
		t.Fatalf("in use by the published version: %s", r.raw)
	}
	s.must(200, "POST", "/api/templates/"+tpl+"/publish", u.token, nil)
	s.must(204, "DELETE", "/api/assets/"+id, u.token, nil)

	// A template naming a missing asset saves, and its documents fail saying which.
	created := s.createTemplate(u.token, "Gone", imageTemplate("asset:logo"))
	if !strings.Contains(string(created.raw), "asset:logo: the team has no asset with that name or id") {
		t.Fatalf("no warning for a missing asset: %s", created.raw)
	}
	gone := created.str("id")
	f := s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": gone, "format": "pdf"})
	s.wantError(f, 404, "ERR_ASSET_001")
	if !strings.Contains(f.str("message"), "asset:logo not found") {
		t.Fatalf("missing asset: %s", f.raw)
	}
	font := s.must(200, "POST", "/api/assets", u.token, map[string]any{"name": "logo", "contentBase64": b64(goregular.TTF)})
	f = s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": gone, "format": "pdf"})
	s.wantError(f, 400, "ERR_TMPL_024")
	if !strings.Contains(f.str("message"), "is a font asset, not an image") {
		t.Fatalf("font as image: %s", f.raw)
	}
	_ = font
}

// TestAssetTenancy: another team cannot list, read, download, replace,
// rename, delete or draw a team's assets; its reference to one does not
// hold it either.
func TestAssetTenancy(t *testing.T) {
	s := startServer(t)
	a, b := s.signup("TeamA"), s.signup("TeamB")
	logo := assetPNG(t, 10, 10, color.Black)
	id := s.must(200, "POST", "/api/assets", a.token, map[string]any{"name": "logo", "contentBase64": b64(logo)}).str("id")

	if l := s.must(200, "GET", "/api/assets", b.token, nil); l.str("meta.total") != "0" {
		t.Fatalf("B lists A's assets: %s", l.raw)
	}
	for _, ref := range []string{id, "logo"} {
		s.wantError(s.do("GET", "/api/assets/"+ref, b.token, nil), 404, "ERR_ASSET_001")
		s.wantError(s.do("GET", "/api/assets/"+ref+"/content", b.token, nil), 404, "ERR_ASSET_001")
		s.wantError(s.do("PUT", "/api/assets/"+ref, b.token, map[string]any{"contentBase64": b64(logo)}), 404, "ERR_ASSET_001")
		s.wantError(s.do("PATCH", "/api/assets/"+ref, b.token, map[string]any{"name": "mine"}), 404, "ERR_ASSET_001")
		s.wantError(s.do("DELETE", "/api/assets/"+ref, b.token, nil), 404, "ERR_ASSET_001")
	}
	// B names A's asset by id: its documents do not get it, and A may still delete it.
	keyB := s.createKey(b.token, nil)
	borrow := s.createTemplate(b.token, "Borrow", imageTemplate("asset:"+id))
	if !strings.Contains(string(borrow.raw), "the team has no asset") {
		t.Fatalf("B's reference to A's asset is not warned about: %s", borrow.raw)
	}
	tpl := borrow.str("id")
	s.wantError(s.do("POST", "/api/v1/documents/generate", keyB, map[string]any{"templateId": tpl, "format": "pdf"}), 404, "ERR_ASSET_001")
	s.wantError(s.do("POST", "/api/templates/"+tpl+"/preview", b.token, map[string]any{"format": "pdf"}), 404, "ERR_ASSET_001")
	s.must(204, "DELETE", "/api/assets/"+id, a.token, nil)

	// B uploads its own "logo": same name, another team, no conflict.
	s.must(200, "POST", "/api/assets", b.token, map[string]any{"name": "logo", "contentBase64": b64(logo)})
}

// TestAssetExportImport exports a template with the asset it names and
// imports it into another team: the asset comes along, a name taken by
// other bytes is renamed and the schema follows, the same bytes are reused.
func TestAssetExportImport(t *testing.T) {
	s := startServer(t)
	a, b := s.signup("Exporter"), s.signup("Importer")
	logo := assetPNG(t, 12, 12, color.NRGBA{1, 2, 3, 255})
	id := s.must(200, "POST", "/api/assets", a.token, map[string]any{"name": "logo", "contentBase64": b64(logo)}).str("id")
	tpl := s.createTemplate(a.token, "Letter", imageTemplate("asset:"+id)).str("id")
	exp := s.must(200, "GET", "/api/templates/"+tpl+"/export", a.token, nil)
	assets := exp.get("assets").([]any)
	if len(assets) != 1 || assets[0].(map[string]any)["ref"] != id || assets[0].(map[string]any)["name"] != "logo" {
		t.Fatalf("export assets: %s", truncate(exp.raw, 500))
	}
	importFile := func(token string) resp {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		fw, _ := mw.CreateFormFile("file", "letter.json")
		fw.Write(exp.raw)
		mw.Close()
		return s.must(200, "POST", "/api/templates/import", token, buf.Bytes(), "Content-Type", mw.FormDataContentType())
	}
	// B has another "logo": the imported one becomes "logo (Imported)".
	s.must(200, "POST", "/api/assets", b.token, map[string]any{"name": "logo", "contentBase64": b64(assetPNG(t, 5, 5, color.White))})
	imp := importFile(b.token)
	got := s.must(200, "GET", "/api/templates/"+imp.str("templateId"), b.token, nil)
	if !strings.Contains(string(got.raw), `"asset:logo (Imported)"`) {
		t.Fatalf("imported schema: %s", got.raw)
	}
	c := s.must(200, "GET", "/api/assets/logo%20(Imported)/content", b.token, nil)
	if !bytes.Equal(c.raw, logo) {
		t.Fatal("imported asset bytes differ")
	}
	if u := s.must(200, "GET", "/api/assets/logo%20(Imported)", b.token, nil); len(u.get("usedBy").([]any)) != 1 {
		t.Fatalf("usedBy after import: %s", u.raw)
	}
	// A second import reuses the asset: same bytes, no third copy.
	importFile(b.token)
	if l := s.must(200, "GET", "/api/assets", b.token, nil); l.str("meta.total") != "2" {
		t.Fatalf("assets after the second import: %s", l.raw)
	}
	keyB := s.createKey(b.token, nil)
	g := s.must(200, "POST", "/api/v1/documents/generate", keyB, map[string]any{"templateId": imp.str("templateId"), "format": "pdf"})
	_, _, pdf := s.download(g.str("downloadUrl"))
	if n := pdfImageCount(t, pdf); n != 1 {
		t.Fatalf("imported template draws %d images", n)
	}
}

// TestAssetBackupRestore: a backup without --with-files still holds the
// assets (a team's own files, not documents Folio can make again); a
// server started on the restored directory serves them.
func TestAssetBackupRestore(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	s := startServerIn(t, data)
	u := s.signup("Backup")
	logo := assetPNG(t, 9, 9, color.NRGBA{9, 9, 9, 255})
	s.must(200, "POST", "/api/assets", u.token, map[string]any{"name": "logo", "contentBase64": b64(logo)})
	out := filepath.Join(t.TempDir(), "backup.tar.gz")
	if code, stdout, stderr := runCLI(t, "admin", "backup", "--data", data, "--out", out); code != 0 {
		t.Fatalf("backup: %d %q %q", code, stdout, stderr)
	}
	s.Close()

	restored := filepath.Join(t.TempDir(), "restored")
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	assets := 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(h.Name, "files/assets/") {
			assets++
		}
		p := filepath.Join(restored, filepath.FromSlash(h.Name))
		os.MkdirAll(filepath.Dir(p), 0o700)
		b, _ := io.ReadAll(tr)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if assets != 1 {
		t.Fatalf("the backup holds %d asset files, want 1", assets)
	}
	s2 := startServerIn(t, restored)
	tok := s2.must(200, "POST", "/api/auth/login", "", map[string]any{"email": u.email, "password": u.password}).str("accessToken")
	if c := s2.must(200, "GET", "/api/assets/logo/content", tok, nil); !bytes.Equal(c.raw, logo) {
		t.Fatal("the restored asset differs")
	}
}
