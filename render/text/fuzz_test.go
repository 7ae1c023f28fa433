package text

import (
	"os"
	"testing"

	"folio/assets"
)

// FuzzFont feeds font files, as a team could upload them, to the parser,
// the upload check, layout and the subsetter: nothing may panic, and a
// font the check accepts must lay out and subset.
func FuzzFont(f *testing.F) {
	set := assets.Fonts()
	for _, file := range []*assets.FontFile{set.Fallbacks[1].Regular, set.Fallbacks[3].Regular} { // Noto Sans Hebrew and Thai, small
		b, err := file.Bytes()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, name := range []string{"testdata/tiny.ttf", "../../app/testdata/assets/cfftest.otf"} { // glyf and CFF outlines
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("OTTO\x00\x01\x00\x00"))
	f.Add([]byte("\x00\x01\x00\x00\x00\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for i := range 2 { // an operator's collection: each member is checked like a file
			if b, err := CollectionFont(data, i); err == nil {
				_ = CheckFont("fuzz", b)
			}
		}
		if err := CheckFont("fuzz", data); err != nil {
			return
		}
		face, err := ParseFace("fuzz", data)
		if err != nil {
			t.Fatalf("CheckFont accepted a font ParseFace refuses: %v", err)
		}
		reg := NewRegistry()
		if err := reg.AddFamily("Fuzz", face); err != nil {
			t.Fatal(err)
		}
		lines := reg.Layout("Abc fi ffl שלום مرحبا 中文 😀 Q10", "", Regular, 5000)
		var ids []uint16
		for _, l := range lines {
			for _, r := range l.Runs {
				for _, g := range r.Glyph {
					ids = append(ids, g.ID)
				}
			}
		}
		_, _, _ = face.Subset(append([]uint16{0}, ids...))
		_ = reg.Missing("", "A€")
	})
}
