package render

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"folio/render/text"
)

// loadedFaces lists the faces of e's families and fallbacks parsed so far.
func loadedFaces(e *Engine) []string {
	var out []string
	seen := map[*text.Face]bool{}
	fams := e.fonts.Fallbacks()
	for _, n := range e.fonts.Names() {
		f, _ := e.fonts.Family(n)
		fams = append(fams, f)
	}
	for _, fam := range fams {
		for _, f := range fam.Faces {
			if f != nil && !seen[f] && f.Loaded() {
				seen[f] = true
				out = append(out, f.Name())
			}
		}
	}
	return out
}

// TestFontsLoadLazily checks that creating the engine parses no embedded
// font, that a Latin invoice loads only Noto Sans, that missing-character
// warnings need no fallback font loaded, and that a page of another
// script loads the fallback it draws with.
func TestFontsLoadLazily(t *testing.T) {
	before := text.Loads.Load()
	e, err := NewEngine(embeddedFonts())
	if err != nil {
		t.Fatal(err)
	}
	if n := text.Loads.Load() - before; n != 0 {
		t.Fatalf("NewEngine parsed %d fonts; want none", n)
	}
	if got := e.fonts.Missing("", "Grüße 中文 مرحبا ✅ 😀 \U000F0000"); len(got) != 1 || got[0] != 0xF0000 {
		t.Errorf("Missing = %q; want only U+F0000", got)
	}
	if l := loadedFaces(e); len(l) != 0 {
		t.Fatalf("checking coverage loaded %v", l)
	}

	render := func(def Definition, vars map[string]any) {
		t.Helper()
		tpl, err := e.Compile(def)
		if err != nil {
			t.Fatal(err)
		}
		v, err := tpl.Values(vars)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := tpl.Render(context.Background(), &buf, PDF, v, Options{}); err != nil {
			t.Fatal(err)
		}
	}
	render(invoiceDefinition(), invoiceInput(20))
	for _, name := range loadedFaces(e) {
		if !strings.HasPrefix(name, "NotoSans-") {
			t.Errorf("a Latin invoice loaded %s; want Noto Sans only", name)
		}
	}

	// Concurrent first uses of one face parse it once.
	before = text.Loads.Load()
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			render(schemaDef(worldTemplate), worldInvoices[9].vars()) // Hindi
		}()
	}
	wg.Wait()
	loaded := loadedFaces(e)
	if !strings.Contains(strings.Join(loaded, " "), "NotoSansDevanagari-") {
		t.Errorf("a Hindi page did not load Noto Sans Devanagari: %v", loaded)
	}
	if strings.Contains(strings.Join(loaded, " "), "WenQuanYi") {
		t.Errorf("a Hindi page loaded the CJK font: %v", loaded)
	}
	if n := text.Loads.Load() - before; int(n) > len(loaded) {
		t.Errorf("%d parses for %d faces", n, len(loaded))
	}
}
