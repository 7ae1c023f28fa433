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

// FuzzCFF feeds CFF tables to the CFF subsetter directly (the font
// check's parse is slow to fuzz through): nothing may panic, and a
// subset it writes must itself subset again.
func FuzzCFF(f *testing.F) {
	if b, err := os.ReadFile("../../app/testdata/assets/cfftest.otf"); err == nil {
		if sf, err := readSFNT(b); err == nil && sf.cff != nil {
			f.Add(sf.cff, uint16(sf.numGlyphs))
			if sub, err := subsetCFF(sf.cff, sf.numGlyphs, []uint16{0, 1, 2}); err == nil {
				f.Add(sub, uint16(3))
			}
		}
	}
	f.Add([]byte{1, 0, 4, 4, 0, 0}, uint16(1))
	f.Fuzz(func(t *testing.T, data []byte, n uint16) {
		if n == 0 || n > 4096 {
			return
		}
		olds := []uint16{0, n - 1, n / 2}
		sub, err := subsetCFF(data, int(n), olds)
		if err != nil {
			return
		}
		if _, err := subsetCFF(sub, len(olds), []uint16{0, 2}); err != nil {
			t.Fatalf("a subset does not subset again: %v", err)
		}
	})
}
