package assets_test

import (
	"io/fs"
	"slices"
	"strings"
	"testing"

	"folio/assets"
	"folio/render/text"
)

// TestEmbeddedFonts checks every embedded font the way the engine will
// use it on first draw: it decompresses, parses and subsets, and the
// characters it has are exactly those fonts/coverage.bin says (which the
// engine trusts for fallback and missing-character warnings without
// loading the font). After replacing or adding a font, run
// go generate ./assets.
func TestEmbeddedFonts(t *testing.T) {
	set := assets.Fonts()
	n := 0
	for _, fam := range append(slices.Clone(set.Families), set.Fallbacks...) {
		if fam.Regular == nil {
			t.Errorf("%s: no regular face", fam.Name)
		}
		for _, f := range []*assets.FontFile{fam.Regular, fam.Bold, fam.Italic, fam.BoldItalic} {
			if f == nil {
				continue
			}
			n++
			b, err := f.Bytes()
			if err != nil {
				t.Fatalf("%s: %v", f.Name, err)
			}
			face, err := text.ParseFace(f.Name, b)
			if err != nil {
				t.Fatalf("%s: %v", f.Name, err)
			}
			if err := face.Check(); err != nil {
				t.Errorf("%s: %v", f.Name, err)
			}
			if got := face.Coverage(); !slices.Equal(got, f.Coverage) {
				t.Errorf("%s: coverage.bin has %d ranges, the font %d: run go generate ./assets", f.Name, len(f.Coverage)/2, len(got)/2)
			}
			again, _ := f.Bytes()
			if &again[0] != &b[0] {
				t.Errorf("%s: decompressed twice", f.Name)
			}
		}
	}
	// Every embedded font file is in the set.
	files := 0
	fs.WalkDir(assets.FontFS(), ".", func(p string, d fs.DirEntry, err error) error {
		if strings.HasSuffix(p, ".ttf.zst") {
			files++
		}
		return nil
	})
	if files != n {
		t.Errorf("%d font files embedded, %d in the font set", files, n)
	}
	if len(assets.FontLicences()) < 4 {
		t.Errorf("licences: %d", len(assets.FontLicences()))
	}
}
