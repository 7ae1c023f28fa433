package main

import (
	"encoding/json"
	"image/color"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestDashboardEditorAssetPicker: the template editor lists the team's
// assets (with a thumbnail for a picture) and inserts the chosen one's
// asset:<name> at the code editor's cursor, over its selection; the template saved from the
// editor draws that asset, and the asset lists the template using it.
func TestDashboardEditorAssetPicker(t *testing.T) {
	chromiumPath(t)
	s := startServer(t)
	u := s.verifiedUser("Pia")
	s.must(200, "POST", "/api/assets", u.token, map[string]any{"name": "logo", "contentBase64": b64(assetPNG(t, 40, 20, color.RGBA{0, 90, 200, 255}))})
	s.must(200, "POST", "/api/assets", u.token, map[string]any{"name": "mark", "contentBase64": b64([]byte(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><rect width="10" height="10" fill="#0f766e"/></svg>`))})
	id := s.createTemplate(u.token, "Letterhead", imageTemplate("https://example.com/old-logo.png")).str("id")

	b := newBrowser(t, s)
	con := watchConsole(b)
	b.login(u.email, u.password)
	b.open("/app/templates/" + id)
	b.waitJS("the code editor", `!!(document.querySelector(".cm-schema") && document.querySelector(".cm-schema").CodeMirror)`)
	listed := get(b, "the picker's entries", chromedp.Evaluate[[]string](`[...document.querySelectorAll("#asset-picker [data-insert]")].map((e) => e.dataset.insert)`))
	if strings.Join(listed, " ") != "asset:logo asset:mark" {
		t.Fatalf("the picker lists %q, want asset:logo and asset:mark", listed)
	}
	if n := get(b, "thumbnails", chromedp.Evaluate[int](`document.querySelectorAll("#asset-picker img.thumb").length`)); n != 1 {
		t.Errorf("%d thumbnails, want the PNG's", n)
	}

	// The old URL selected, then Insert for the logo: the reference replaces it.
	b.do("select the old source", selectText("schema", `"src"`, "https://example.com/old-logo.png"))
	b.do("open the picker", chromedp.Click(chromedp.CSS("#asset-picker summary")))
	b.do("insert the logo", chromedp.Click(chromedp.CSS(`#asset-picker [data-insert="asset:logo"]`)))
	text := get(b, "the schema", chromedp.Evaluate[string](cmJS("schema", "return cm.getValue();")))
	var schema struct {
		Sections []struct {
			Components []struct {
				Type  string         `json:"type"`
				Props map[string]any `json:"props"`
			} `json:"components"`
		} `json:"sections"`
	}
	if err := json.Unmarshal([]byte(text), &schema); err != nil {
		t.Fatalf("the schema after inserting is not JSON: %v\n%s", err, text)
	}
	if src := schema.Sections[0].Components[1].Props["src"]; src != "asset:logo" {
		t.Fatalf(`image src = %q after inserting, want "asset:logo":\n%s`, src, text)
	}
	if hidden := get(b, "the unsaved badge", chromedp.Evaluate[bool](`document.querySelector("#unsaved-badge").hidden`)); hidden {
		t.Error("inserting did not mark the template unsaved")
	}

	// Saved from the editor, the template draws the logo and the asset
	// says who uses it.
	b.submit("#save")
	b.waitJS("the saved editor", `document.querySelector("#flash") && document.querySelector("#flash").textContent.includes("Saved")`)
	con.check(t, "while inserting an asset")
	b.checkClean()
	key := s.createKey(u.token, nil)
	g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "pdf"})
	_, _, pdf := s.download(g.str("downloadUrl"))
	if out, _ := poppler(t, pdf, "pdfimages", "-list"); !strings.Contains(out, "   40    20 ") {
		t.Errorf("the saved template does not draw the 40×20 logo:\n%s", out)
	}
	assets := s.must(200, "GET", "/api/assets?kind=image", u.token, nil)
	if !strings.Contains(string(assets.raw), `"name":"Letterhead"`) {
		t.Errorf("the logo does not list the template using it: %s", assets.raw)
	}
}
