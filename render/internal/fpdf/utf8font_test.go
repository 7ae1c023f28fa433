package fpdf

import (
	"bytes"
	"compress/zlib"
	"io"
	"math/rand"
	"strings"
	"sync"
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

const sampleText = "Grüße, Ωμέγα, Москва — €1,234.50 fi ﬁ ÅåÇç"

func mustParse(tb testing.TB, ttf []byte) *ParsedUTF8Font {
	tb.Helper()
	pf, err := ParseUTF8Font(ttf)
	if err != nil {
		tb.Fatalf("ParseUTF8Font: %v", err)
	}
	return pf
}

func inflate(tb testing.TB, b []byte) []byte {
	tb.Helper()
	zr, err := zlib.NewReader(bytes.NewReader(b))
	if err != nil {
		tb.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// TestSubsetKeepsGlyphs checks that the subset is a valid TrueType font
// whose glyphs, reached through the CIDToGIDMap, have the outlines and
// advances of the original.
func TestSubsetKeepsGlyphs(t *testing.T) {
	for name, ttf := range map[string][]byte{"regular": goregular.TTF, "bold": gobold.TTF} {
		pf := mustParse(t, ttf)
		var set runeSet
		for _, r := range sampleText {
			set.add(r)
		}
		sub, err := pf.subset(&set)
		if err != nil {
			t.Fatal(err)
		}
		file := inflate(t, sub.file)
		if len(file) != sub.fileLen {
			t.Errorf("%s: Length1 %d, file %d bytes", name, sub.fileLen, len(file))
		}
		cidToGID := inflate(t, sub.cidToGID)
		maxRune := 0
		for _, r := range sampleText {
			maxRune = max(maxRune, int(r))
		}
		if len(cidToGID) != 2*(maxRune+1) {
			t.Fatalf("%s: CIDToGIDMap of %d bytes, want %d", name, len(cidToGID), 2*(maxRune+1))
		}
		orig, err := sfnt.Parse(ttf)
		if err != nil {
			t.Fatal(err)
		}
		cut, err := sfnt.Parse(file)
		if err != nil {
			t.Fatalf("%s: subset does not parse: %v", name, err)
		}
		if n := cut.NumGlyphs(); n >= orig.NumGlyphs() || n < 20 {
			t.Errorf("%s: subset has %d glyphs of %d", name, n, orig.NumGlyphs())
		}
		var b sfnt.Buffer
		for _, r := range sampleText {
			og, err := orig.GlyphIndex(&b, r)
			if err != nil || og == 0 {
				continue // not in the font
			}
			gid := sfnt.GlyphIndex(int(cidToGID[2*r])<<8 | int(cidToGID[2*r+1]))
			if gid == 0 {
				t.Errorf("%s: %q has no glyph in the subset", name, r)
				continue
			}
			if cg, _ := cut.GlyphIndex(&b, r); cg != gid {
				t.Errorf("%s: %q: subset cmap says glyph %d, CIDToGIDMap %d", name, r, cg, gid)
			}
			want, err := orig.LoadGlyph(&b, og, fixed.I(1000), nil)
			if err != nil {
				t.Fatal(err)
			}
			want = append(sfnt.Segments(nil), want...)
			got, err := cut.LoadGlyph(&b, gid, fixed.I(1000), nil)
			if err != nil {
				t.Fatalf("%s: %q: %v", name, r, err)
			}
			if len(got) != len(want) {
				t.Errorf("%s: %q: %d segments, want %d", name, r, len(got), len(want))
			} else {
				for i := range got {
					if got[i] != want[i] {
						t.Errorf("%s: %q: segment %d differs", name, r, i)
						break
					}
				}
			}
			wa, _ := orig.GlyphAdvance(&b, og, fixed.I(1000), font.HintingNone)
			ga, _ := cut.GlyphAdvance(&b, gid, fixed.I(1000), font.HintingNone)
			if wa != ga {
				t.Errorf("%s: %q: advance %v, want %v", name, r, ga, wa)
			}
		}
	}
}

func TestSubsetsAreCached(t *testing.T) {
	pf := mustParse(t, goregular.TTF)
	var a, b runeSet
	for _, r := range "abc" {
		a.add(r)
		b.add(r)
	}
	s1, _ := pf.subset(&a)
	s2, _ := pf.subset(&b)
	if s1 != s2 {
		t.Error("the same runes built a second subset")
	}
	b.add('d')
	if s3, _ := pf.subset(&b); s3 == s1 {
		t.Error("different runes share a subset")
	}
	for i := 0; i < 3*maxCachedSubsets; i++ {
		var s runeSet
		s.add(rune('A' + i))
		s.add(rune(0x400 + i))
		if _, err := pf.subset(&s); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(pf.subsets); n > maxCachedSubsets {
		t.Errorf("%d subsets cached, want at most %d", n, maxCachedSubsets)
	}
}

// TestSharedFontConcurrently writes documents in parallel from one parsed
// font (run with -race).
func TestSharedFontConcurrently(t *testing.T) {
	pf := mustParse(t, goregular.TTF)
	var wg sync.WaitGroup
	outs := make([][]byte, 8)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := New("P", "mm", "A4", "")
			f.AddUTF8FontParsed("f", "", pf)
			f.AddUTF8FontParsed("f", "B", pf)
			f.SetFont("f", "", 12)
			f.AddPage()
			f.Cell(100, 10, strings.Repeat(sampleText[:i+1], 2))
			f.SetFont("f", "B", 12)
			f.Cell(100, 10, sampleText)
			var buf bytes.Buffer
			if err := f.Output(&buf); err != nil {
				t.Error(err)
			}
			outs[i] = buf.Bytes()
		}()
	}
	wg.Wait()
	for i, out := range outs {
		if !bytes.HasPrefix(out, []byte("%PDF-")) {
			t.Errorf("document %d is not a PDF", i)
		}
	}
}

// TestStylesHaveTheirOwnID checks that one parsed font added under two
// styles gets two resource names.
func TestStylesHaveTheirOwnID(t *testing.T) {
	pf := mustParse(t, goregular.TTF)
	f := New("P", "mm", "A4", "")
	f.AddUTF8FontParsed("f", "", pf)
	f.AddUTF8FontParsed("f", "B", pf)
	if f.fonts["f"].i == f.fonts["fB"].i {
		t.Error("regular and bold share a font id")
	}
}

func TestParseRefusesBrokenFonts(t *testing.T) {
	for name, ttf := range map[string][]byte{
		"empty":     nil,
		"short":     goregular.TTF[:10],
		"OpenType":  append([]byte("OTTO"), goregular.TTF[4:]...),
		"directory": goregular.TTF[:200],
	} {
		if _, err := ParseUTF8Font(ttf); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

// FuzzParseUTF8Font corrupts a font: parsing and writing a document with
// it may fail but must not panic.
func FuzzParseUTF8Font(f *testing.F) {
	f.Add(uint32(0), byte(0), uint16(0))
	f.Add(uint32(12+16*3+8), byte(0xFF), uint16(0))
	f.Fuzz(func(t *testing.T, at uint32, v byte, cut uint16) {
		checkCorrupt(t, goregular.TTF, int(at), v, int(cut))
	})
}

// TestCorruptFonts runs random corruptions like FuzzParseUTF8Font.
func TestCorruptFonts(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	n := 300
	if testing.Short() {
		n = 30
	}
	dir := 12 + 16*int(goregular.TTF[5]) // the table directory, where damage matters most
	for i := 0; i < n; i++ {
		at := rng.Intn(dir)
		if i%3 == 0 {
			at = rng.Intn(len(goregular.TTF))
		}
		checkCorrupt(t, goregular.TTF, at, byte(rng.Intn(256)), rng.Intn(4)*rng.Intn(len(goregular.TTF)))
	}
}

func checkCorrupt(t *testing.T, ttf []byte, at int, v byte, cut int) {
	b := bytes.Clone(ttf)
	if cut > 0 && cut < len(b) {
		b = b[:len(b)-cut]
	}
	if len(b) > 0 {
		b[at%len(b)] = v
	}
	pf, err := ParseUTF8Font(b)
	if err != nil {
		return
	}
	doc := New("P", "mm", "A4", "")
	doc.AddUTF8FontParsed("f", "", pf)
	doc.SetFont("f", "", 12)
	doc.AddPage()
	doc.Cell(100, 10, sampleText)
	_ = doc.Output(io.Discard)
}

func BenchmarkSubsetMiss(b *testing.B) {
	pf := mustParse(b, goregular.TTF)
	var set runeSet
	for _, r := range "Grüße, Ωμέγα, Москва — €1,234.50 0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ" {
		set.add(r)
	}
	runes := set.runes()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := pf.makeSubset(runes); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSubsetPostHasNoGlyphNames checks the subset's post table is the
// 32-byte version 3 (no glyph names, which would name the wrong glyphs).
func TestSubsetPostHasNoGlyphNames(t *testing.T) {
	pf := mustParse(t, goregular.TTF)
	var set runeSet
	set.add('a')
	sub, err := pf.subset(&set)
	if err != nil {
		t.Fatal(err)
	}
	file := inflate(t, sub.file)
	r := &ttfReader{b: file}
	for i := 0; i < r.u16(4); i++ {
		rec := 12 + 16*i
		if string(file[rec:rec+4]) == "post" {
			if off, n := r.u32(rec+8), r.u32(rec+12); n != 32 || r.u32(off) != 0x00030000 {
				t.Errorf("post table: %d bytes, version %#x", n, r.u32(off))
			}
			return
		}
	}
	t.Error("no post table")
}
