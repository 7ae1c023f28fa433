package main

import (
	"bytes"
	"image/color"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/image/font/gofont/gobold"
)

// postFile sends a dashboard form with a file, as the browser's
// enctype="multipart/form-data" forms do.
func (d *dashHTTP) postFile(path, fileName string, data []byte, fields map[string]string) *http.Response {
	d.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("csrf", d.csrf())
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	fw, _ := mw.CreateFormFile("file", fileName)
	fw.Write(data)
	mw.Close()
	req, _ := http.NewRequest("POST", d.s.URL()+path, &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	res, err := d.c.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(b))
	return res
}

// TestDashboardAssets: the Assets page uploads an image and a font, lists
// them with kind, size and the templates using them, refuses a hostile
// file and the deletion of an asset in use with a clear message, and
// deletes one that is not.
func TestDashboardAssets(t *testing.T) {
	s := startServer(t)
	u := s.verifiedUser("Ana")
	c := dashClient(t, s)
	c.login(u)
	c.page("/app/assets") // sets the CSRF cookie

	logo := assetPNG(t, 24, 12, color.NRGBA{0, 90, 200, 255})
	if flash := c.flash(c.postFile("/app/assets", "logo.png", logo, map[string]string{"name": "logo"})); !strings.Contains(flash, "asset:logo") {
		t.Fatalf("upload: %q", flash)
	}
	if flash := c.flash(c.postFile("/app/assets", "Go-Bold.ttf", gobold.TTF, nil)); !strings.Contains(flash, "Uploaded Go-Bold.ttf") {
		t.Fatalf("font upload: %q", flash)
	}
	flash := c.flash(c.postFile("/app/assets", "x.svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), nil))
	if !strings.Contains(flash, "scripts and embedded documents are not accepted") || !strings.Contains(flash, "ERR_ASSET_002") {
		t.Fatalf("hostile upload: %q", flash)
	}
	s.createTemplate(u.token, "Brochure", imageTemplate("asset:logo"))

	page := c.page("/app/assets")
	for _, want := range []string{`<code>asset:logo</code>`, "24×12 px", "Go · normal · 600", ">Brochure</a>", "no template", `id="asset-storage"`} {
		if !strings.Contains(page, want) {
			t.Fatalf("assets page lacks %q:\n%s", want, page)
		}
	}
	ids := regexp.MustCompile(`action="/app/assets/(ast_[A-Za-z0-9]+)/delete" data-confirm="Delete “([^”]+)”`).FindAllStringSubmatch(page, -1)
	byName := map[string]string{}
	for _, m := range ids {
		byName[m[2]] = m[1]
	}
	if len(byName) != 2 {
		t.Fatalf("delete buttons: %v", ids)
	}
	img := c.get("/app/assets/" + byName["logo"] + "/content?inline=1")
	if img.StatusCode != 200 || img.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("thumbnail: %d %v", img.StatusCode, img.Header)
	}

	flash = c.flash(c.post("/app/assets/"+byName["logo"]+"/delete", url.Values{"csrf": {c.csrf()}}))
	if !strings.Contains(flash, "is used by 1 template: Brochure; take it out of that template") || !strings.Contains(flash, "ERR_ASSET_003") {
		t.Fatalf("in-use delete: %q", flash)
	}
	if flash := c.flash(c.post("/app/assets/"+byName["Go-Bold.ttf"]+"/delete", url.Values{"csrf": {c.csrf()}})); flash != "Asset deleted." {
		t.Fatalf("delete: %q", flash)
	}
	blue := assetPNG(t, 6, 6, color.NRGBA{0, 0, 255, 255})
	if flash := c.flash(c.postFile("/app/assets/"+byName["logo"]+"/replace", "blue.png", blue, nil)); !strings.Contains(flash, "Replaced the file of logo") {
		t.Fatalf("replace: %q", flash)
	}
	if page := c.page("/app/assets?kind=font"); !strings.Contains(page, "No assets of this kind") {
		t.Fatalf("font filter after delete:\n%s", page)
	}
	if page := c.page("/app/usage"); !strings.Contains(page, `<a href="/app/assets">assets</a>`) && !strings.Contains(page, "no asset storage limit") {
		t.Fatalf("usage page lacks asset storage:\n%s", page)
	}
}
