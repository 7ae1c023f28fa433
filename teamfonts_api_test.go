package main

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
	"golang.org/x/image/font/gofont/gosmallcaps"
)

// embeddedFonts lists the fonts of a PDF as poppler's pdffonts sees them:
// name -> "emb sub" flags ("yes yes" for an embedded subset).
func embeddedFonts(t testing.TB, pdf []byte) map[string]string {
	t.Helper()
	if _, err := exec.LookPath("pdffonts"); err != nil {
		t.Fatalf("pdffonts is needed (apt-get install poppler-utils): %v", err)
	}
	f := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(f, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("pdffonts", f).CombinedOutput()
	if err != nil {
		t.Fatalf("pdffonts: %v\n%s", err, out)
	}
	fonts := map[string]string{}
	for _, line := range strings.Split(string(out), "\n")[2:] {
		fs := strings.Fields(line)
		if len(fs) < 6 {
			continue
		}
		name := fs[0]
		if i := strings.IndexByte(name, '+'); i == 6 {
			name = name[i+1:]
		}
		// name type... encoding emb sub uni object ID
		n := len(fs)
		fonts[name] = fs[n-5] + " " + fs[n-4]
	}
	return fonts
}

// fontTemplate draws a heading and a paragraph in the schema's family and
// a line in a component's.
func fontTemplate(schemaFamily, lineFamily string) map[string]any {
	schema := map[string]any{"sections": []any{map[string]any{"id": "body", "components": []any{
		map[string]any{"type": "heading", "props": map[string]any{"content": "Brand report"}},
		map[string]any{"type": "text", "props": map[string]any{"content": "Hello {{name}}"}},
		map[string]any{"type": "text", "fontFamily": lineFamily, "props": map[string]any{"content": "Order 1234"}},
	}}}}
	if schemaFamily != "" {
		schema["fontFamily"] = schemaFamily
	}
	return map[string]any{"outputFormats": []string{"pdf", "xlsx"}, "schema": schema,
		"variables": []any{map[string]any{"name": "name", "type": "string", "required": true}}}
}

// TestTeamFonts checks that a team's uploaded fonts are chosen by family
// name and by asset name in generate, preview, dry run, batch and
// validate-schema; that replacing or deleting one takes effect on the
// next request; and that another team can neither see nor use them.
func TestTeamFonts(t *testing.T) {
	s := startServer(t)
	a := s.signup("branda")
	keyA := s.createKey(a.token, nil)
	s.must(200, "POST", "/api/assets", a.token, map[string]any{"name": "go-regular.ttf", "contentBase64": b64(goregular.TTF)})
	s.must(200, "POST", "/api/assets", a.token, map[string]any{"name": "go-bold.ttf", "contentBase64": b64(gobold.TTF)})
	mono := s.must(200, "POST", "/api/assets", a.token, map[string]any{"name": "mono.ttf", "contentBase64": b64(gomono.TTF)})

	tpl := s.createTemplate(a.token, "Branded", fontTemplate("Go", "asset:mono.ttf"))
	if w := string(tpl.raw); strings.Contains(w, "unknown font family") {
		t.Fatalf("save warns: %s", w)
	}
	vars := map[string]any{"name": "Ada"}
	generate := func(key string) []byte {
		t.Helper()
		g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": vars})
		_, _, pdf := s.download(g.str("downloadUrl"))
		return pdf
	}
	wantFonts := func(what string, pdf []byte, want ...string) {
		t.Helper()
		got := embeddedFonts(t, pdf)
		for _, w := range want {
			if got[w] != "yes yes" {
				t.Errorf("%s: %s is not an embedded subset: %v", what, w, got)
			}
		}
		if text := pdfText(t, pdf); !strings.Contains(text, "Brand report") || !strings.Contains(text, "Hello Ada") || !strings.Contains(text, "Order 1234") {
			t.Errorf("%s: text:\n%s", what, text)
		}
	}
	// The heading is bold: the family's bold file draws it.
	wantFonts("generate", generate(keyA), "Go-Regular", "Go-Bold", "GoMono-Regular")

	prev := s.do("POST", "/api/templates/"+tpl.str("id")+"/preview", a.token, map[string]any{"variables": vars})
	if prev.status != 200 {
		t.Fatalf("preview: %d %s", prev.status, prev.raw)
	}
	wantFonts("preview", prev.raw, "Go-Regular", "Go-Bold", "GoMono-Regular")

	dry := s.must(200, "POST", "/api/v1/documents/generate?dryRun=true", keyA, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": vars})
	if dry.str("valid") != "true" {
		t.Fatalf("dry run: %s", dry.raw)
	}
	b := s.must(200, "POST", "/api/v1/documents/generate/batch", keyA, map[string]any{"templateId": tpl.str("id"), "format": "pdf",
		"documents": []any{map[string]any{"variables": vars}}})
	batch := s.waitBatch(keyA, b.str("batchId"))
	for _, d := range batch.get("documents").([]any) {
		j := s.waitJob(keyA, d.(map[string]any)["jobId"].(string))
		_, _, pdf := s.download(j.str("downloadUrl"))
		wantFonts("batch", pdf, "Go-Regular", "Go-Bold", "GoMono-Regular")
	}

	v := s.must(200, "POST", "/api/templates/validate-schema", a.token, map[string]any{"templateType": "attachment", "schema": fontTemplate("go", mono.str("id"))["schema"]})
	if v.str("valid") != "true" {
		t.Fatalf("validate-schema by family and asset id: %s", v.raw)
	}
	// An unknown family lists the team's fonts with the built-in ones.
	v = s.must(200, "POST", "/api/templates/validate-schema", a.token, map[string]any{"templateType": "attachment", "schema": fontTemplate("Brand Serif", "Go")["schema"]})
	if msg := string(v.raw); v.str("valid") != "false" || !strings.Contains(msg, "Noto Sans") || !strings.Contains(msg, "Go Mono") || !strings.Contains(msg, "mono.ttf") {
		t.Fatalf("unknown family: %s", msg)
	}

	// Another team sees none of them, by family, asset name or id.
	bTeam := s.signup("brandb")
	for _, fam := range []string{"Go", "asset:mono.ttf", "mono.ttf", mono.str("id"), "asset:" + mono.str("id")} {
		v := s.must(200, "POST", "/api/templates/validate-schema", bTeam.token, map[string]any{"templateType": "attachment", "schema": fontTemplate(fam, "Noto Serif")["schema"]})
		if v.str("valid") != "false" || strings.Contains(string(v.raw), "Go Mono") || strings.Contains(string(v.raw), "mono.ttf\"") {
			t.Fatalf("team B with %q: %s", fam, v.raw)
		}
		body := fontTemplate(fam, "Noto Serif")
		body["name"] = "Stolen " + fam
		s.wantError(s.do("POST", "/api/templates", bTeam.token, body), 400, "ERR_TMPL_008")
	}
	// A template of B's own that A's team font would satisfy does not draw with it.
	own := s.createTemplate(bTeam.token, "Plain", fontTemplate("", "Noto Serif"))
	keyB := s.createKey(bTeam.token, nil)
	g := s.must(200, "POST", "/api/v1/documents/generate", keyB, map[string]any{"templateId": own.str("id"), "format": "pdf", "variables": vars})
	_, _, pdf := s.download(g.str("downloadUrl"))
	for name := range embeddedFonts(t, pdf) {
		if strings.HasPrefix(name, "Go") {
			t.Fatalf("team B's document embeds %s", name)
		}
	}

	// Replacing mono.ttf (chosen by asset name) changes the next document.
	s.must(200, "PUT", "/api/assets/"+mono.str("id"), a.token, map[string]any{"contentBase64": b64(goitalic.TTF)})
	pdf = generate(keyA)
	if fonts := embeddedFonts(t, pdf); fonts["GoMono-Regular"] != "" || fonts["Go-Italic"] != "yes yes" {
		t.Fatalf("after replacing mono.ttf with Go Italic: %v", fonts)
	}
	// A new upload is selectable at once.
	s.must(200, "POST", "/api/assets", a.token, map[string]any{"name": "caps.ttf", "contentBase64": b64(gosmallcaps.TTF)})
	s.must(200, "POST", "/api/templates/validate-schema", a.token, map[string]any{"templateType": "attachment", "schema": fontTemplate("Go Smallcaps", "Go")["schema"]})

	// A font the template names as asset:mono.ttf cannot be deleted; one it
	// names by family can, and the family is unknown at once.
	s.wantError(s.do("DELETE", "/api/assets/"+mono.str("id"), a.token, nil), 400, "ERR_ASSET_003")
	s.must(200, "PUT", "/api/assets/"+mono.str("id"), a.token, map[string]any{"contentBase64": b64(gomono.TTF)})
	list := s.must(200, "GET", "/api/assets?kind=font", a.token, nil)
	for _, as := range list.get("data").([]any) {
		m := as.(map[string]any)
		if m["name"] == "go-regular.ttf" || m["name"] == "go-bold.ttf" {
			s.must(204, "DELETE", "/api/assets/"+m["id"].(string), a.token, nil)
		}
	}
	r := s.do("POST", "/api/v1/documents/generate", keyA, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": vars})
	s.wantError(r, 400, "ERR_TMPL_008")
	if !strings.Contains(string(r.raw), `unknown font family \"Go\"`) {
		t.Fatalf("after deleting the Go files: %s", r.raw)
	}
}
