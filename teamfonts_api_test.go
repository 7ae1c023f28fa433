package main

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"io"
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

	// XLSX cells name the families by their typeface names, also the one
	// chosen by its asset's name.
	g := s.must(200, "POST", "/api/v1/documents/generate", keyA, map[string]any{"templateId": tpl.str("id"), "format": "xlsx", "variables": vars})
	_, _, xlsx := s.download(g.str("downloadUrl"))
	zr, err := zip.NewReader(bytes.NewReader(xlsx), int64(len(xlsx)))
	if err != nil {
		t.Fatal(err)
	}
	var styles []byte
	for _, f := range zr.File {
		if f.Name == "xl/styles.xml" {
			rc, _ := f.Open()
			styles, _ = io.ReadAll(rc)
			rc.Close()
		}
	}
	if !bytes.Contains(styles, []byte(`<name val="Go"></name>`)) || !bytes.Contains(styles, []byte(`<name val="Go Mono"></name>`)) {
		t.Fatalf("XLSX styles name no Go fonts:\n%.600s", styles[max(0, bytes.Index(styles, []byte("<fonts"))):])
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

	// An OpenType font with CFF outlines is embedded as a CFF subset (the
	// test font says it is italic).
	cff, err := os.ReadFile("app/testdata/assets/cfftest.otf")
	if err != nil {
		t.Fatal(err)
	}
	s.must(200, "POST", "/api/assets", a.token, map[string]any{"name": "cff.otf", "contentBase64": b64(cff)})
	cffTpl := fontTemplate("asset:cff.otf", "asset:cff.otf")
	cffTpl["schema"].(map[string]any)["sections"].([]any)[0].(map[string]any)["components"] = []any{
		map[string]any{"type": "text", "props": map[string]any{"content": "Q10"}}} // what the test font draws
	prev = s.do("POST", "/api/templates/"+s.createTemplate(a.token, "CFF", cffTpl).str("id")+"/preview", a.token, map[string]any{"variables": vars})
	if fonts := embeddedFonts(t, prev.raw); fonts["CFFTest-Italic"] != "yes yes" || !strings.Contains(string(prev.raw), "/CIDFontType0C") {
		t.Fatalf("CFF font asset: %d %v", prev.status, fonts)
	}
	if text := pdfText(t, prev.raw); !strings.Contains(text, "Q10") {
		t.Fatalf("CFF font asset text:\n%s", text)
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
	g = s.must(200, "POST", "/api/v1/documents/generate", keyB, map[string]any{"templateId": own.str("id"), "format": "pdf", "variables": vars})
	_, _, pdf := s.download(g.str("downloadUrl"))
	for name := range embeddedFonts(t, pdf) {
		if strings.HasPrefix(name, "Go") {
			t.Fatalf("team B's document embeds %s", name)
		}
	}

	// An export carries the font named as asset:mono.ttf; importing it
	// stores the font in team B, whose document then draws with it.
	monoOnly := s.createTemplate(a.token, "Mono only", fontTemplate("", "asset:mono.ttf"))
	ex := s.must(200, "GET", "/api/templates/"+monoOnly.str("id")+"/export", a.token, nil)
	raw := ex.raw
	im := s.upload("/api/templates/import", bTeam.token, raw, nil)
	if im.str("status") != "created" {
		t.Fatalf("import into team B: %s", im.raw)
	}
	g = s.must(200, "POST", "/api/v1/documents/generate", keyB, map[string]any{"templateId": im.str("templateId"), "format": "pdf", "variables": vars})
	_, _, pdf = s.download(g.str("downloadUrl"))
	if fonts := embeddedFonts(t, pdf); fonts["GoMono-Regular"] != "yes yes" {
		t.Fatalf("team B's imported template: %v", fonts)
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

// makeCollection joins font files into a font collection (.ttc): a header
// with each font's offset, then each file with its table offsets moved.
func makeCollection(t testing.TB, fonts ...[]byte) []byte {
	t.Helper()
	out := []byte("ttcf\x00\x01\x00\x00")
	out = binary.BigEndian.AppendUint32(out, uint32(len(fonts)))
	head := len(out) + 4*len(fonts)
	at := head
	for _, f := range fonts {
		out = binary.BigEndian.AppendUint32(out, uint32(at))
		at += (len(f) + 3) &^ 3
	}
	for _, f := range fonts {
		base := len(out)
		g := append([]byte(nil), f...)
		n := int(binary.BigEndian.Uint16(g[4:]))
		for i := range n {
			rec := g[12+16*i:]
			binary.BigEndian.PutUint32(rec[8:], binary.BigEndian.Uint32(rec[8:])+uint32(base))
		}
		out = append(out, g...)
		for len(out)%4 != 0 {
			out = append(out, 0)
		}
	}
	return out
}

// damageGlyphs overwrites a font's outlines, leaving its name table: the
// index reads it, the check on first use refuses it.
func damageGlyphs(t testing.TB, f []byte) []byte {
	t.Helper()
	g := append([]byte(nil), f...)
	n := int(binary.BigEndian.Uint16(g[4:]))
	for i := range n {
		rec := g[12+16*i:]
		if string(rec[:4]) == "glyf" {
			off, ln := binary.BigEndian.Uint32(rec[8:]), binary.BigEndian.Uint32(rec[12:])
			for k := off; k < off+ln; k++ {
				g[k] = 0xff
			}
			return g
		}
	}
	t.Fatal("no glyf table")
	return nil
}

// TestOperatorFonts checks --font-dir: fonts in the directories (and in a
// collection) are families every team may choose; files that are not
// fonts, or fail the upload checks when first drawn, are skipped (their
// text falls back to the built-in fonts), never a failed start or render.
func TestOperatorFonts(t *testing.T) {
	dir, more := t.TempDir(), t.TempDir()
	write := func(dir, name string, b []byte) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(dir, "go/Go-Mono.ttf", gomono.TTF)
	write(dir, "go/collection.ttc", makeCollection(t, goregular.TTF, gobold.TTF))
	write(dir, "junk.ttf", []byte("not a font at all"))
	write(dir, "notes.txt", []byte("ignored"))
	write(more, "Damaged-Italic.ttf", damageGlyphs(t, goitalic.TTF))
	write(more, "NotoSans-Fake.ttf", gosmallcaps.TTF) // family "Go Smallcaps"
	s := startServer(t, func(c *Config) { c.FontDirs = fontDirs{list: []string{dir, more}} })

	for _, name := range []string{"opa", "opb"} {
		u := s.signup(name)
		key := s.createKey(u.token, nil)
		tpl := s.createTemplate(u.token, "Operator fonts", fontTemplate("Go", "Go Mono"))
		g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": map[string]any{"name": "Ada"}})
		_, _, pdf := s.download(g.str("downloadUrl"))
		fonts := embeddedFonts(t, pdf)
		for _, want := range []string{"Go-Regular", "Go-Bold", "GoMono-Regular"} {
			if fonts[want] != "yes yes" {
				t.Fatalf("team %s: %s is not an embedded subset: %v", name, want, fonts)
			}
		}
		if text := pdfText(t, pdf); !strings.Contains(text, "Brand report") || !strings.Contains(text, "Order 1234") {
			t.Fatalf("team %s: text:\n%s", name, text)
		}
	}

	// The damaged italic is indexed as Go's italic; drawing italic text
	// with it fails its check, so the text is drawn by the built-in fonts.
	u := s.signup("opc")
	key := s.createKey(u.token, nil)
	tpl := fontTemplate("Go", "Go")
	comps := tpl["schema"].(map[string]any)["sections"].([]any)[0].(map[string]any)["components"].([]any)
	comps[2].(map[string]any)["props"].(map[string]any)["style"] = map[string]any{"italic": true}
	ct := s.createTemplate(u.token, "Damaged", tpl)
	g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": ct.str("id"), "format": "pdf", "variables": map[string]any{"name": "Ada"}})
	_, _, pdf := s.download(g.str("downloadUrl"))
	fonts := embeddedFonts(t, pdf)
	if fonts["Go-Italic"] != "" || fonts["NotoSans-Italic"] != "yes yes" {
		t.Fatalf("damaged italic: %v", fonts)
	}
	if text := pdfText(t, pdf); !strings.Contains(text, "Order 1234") {
		t.Fatalf("damaged italic lost the text:\n%s", text)
	}
	v := s.must(200, "POST", "/api/templates/validate-schema", u.token, map[string]any{"templateType": "attachment", "schema": fontTemplate("Nope", "Go Smallcaps")["schema"]})
	if !strings.Contains(string(v.raw), "Go Smallcaps") || !strings.Contains(string(v.raw), "Go Mono") {
		t.Fatalf("unknown family does not list the operator's: %s", v.raw)
	}
}

// TestFontDirFlags checks --font-dir and FOLIO_FONT_DIR: the variable
// holds a list, the flag repeats, and dirs on the command line replace
// the environment's.
func TestFontDirFlags(t *testing.T) {
	t.Setenv("FOLIO_FONT_DIR", "/env/a"+string(os.PathListSeparator)+"/env/b")
	parse := func(args ...string) []string {
		var c Config
		fs := newFlagSet()
		c.flags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return c.FontDirs.list
	}
	if got := parse(); strings.Join(got, ",") != "/env/a,/env/b" {
		t.Fatalf("from the environment: %q", got)
	}
	if got := parse("--font-dir", "/x", "--font-dir", "/y", "--system-fonts"); strings.Join(got, ",") != "/x,/y" {
		t.Fatalf("from flags: %q", got)
	}
}
