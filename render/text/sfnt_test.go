package text

import (
	"bytes"
	"encoding/binary"
	"testing"
	"unicode/utf16"
)

// TestSubsetWithoutHinting: a subset of Noto Sans Regular leaves out the
// hinting programs (fpgm, prep, cvt) and every glyph's instructions, and
// keeps every outline as it was: a simple glyph's contours, flags and
// coordinates byte for byte, a composite's components with the same
// placement (only the instructions flag cleared).
func TestSubsetWithoutHinting(t *testing.T) {
	s, size := notoSFNT(t)
	if s.keepHints {
		t.Fatal("Noto Sans taken for a tricky font")
	}
	const n = 400
	olds := make([]uint16, n)
	for i := range olds {
		olds[i] = uint16(i)
	}
	sub, subSize := subsetOf(t, s, olds)
	for _, tag := range []string{"fpgm", "prep", "cvt "} {
		if s.tables[tag] == nil {
			t.Fatalf("the original has no %q table: nothing to leave out", tag)
		}
		if sub.tables[tag] != nil {
			t.Errorf("the subset keeps %q", tag)
		}
	}
	var instructions, composites int
	for gid := range n {
		old, err := s.glyph(gid)
		if err != nil {
			t.Fatal(err)
		}
		g, err := sub.glyph(gid)
		if err != nil {
			t.Fatal(err)
		}
		if len(old) < 10 {
			if len(g) != len(old) {
				t.Errorf("glyph %d: empty glyph became %d bytes", gid, len(g))
			}
			continue
		}
		if !bytes.Equal(g[:10], old[:10]) {
			t.Errorf("glyph %d: header changed", gid)
			continue
		}
		contours := int(int16(binary.BigEndian.Uint16(old)))
		if contours >= 0 {
			p := 10 + 2*contours
			il := int(binary.BigEndian.Uint16(old[p:]))
			instructions += il
			if got := binary.BigEndian.Uint16(g[p:]); got != 0 {
				t.Errorf("glyph %d keeps %d bytes of instructions", gid, got)
			}
			// The glyph's end may carry padding; the outline is the rest.
			want := old[p+2+il:]
			if !bytes.HasPrefix(g[p+2:], want) || len(g[p+2:])-len(want) > 3 {
				t.Errorf("glyph %d: outline changed", gid)
			}
			continue
		}
		composites++
		for p, q := 10, 10; ; {
			of := binary.BigEndian.Uint16(old[p:])
			nf := binary.BigEndian.Uint16(g[q:])
			if nf != of&^weHaveInstructions {
				t.Fatalf("glyph %d: component flags %#x, want %#x", gid, nf, of&^weHaveInstructions)
			}
			oc, nc := binary.BigEndian.Uint16(old[p+2:]), binary.BigEndian.Uint16(g[q+2:])
			if (oc < n && nc != oc) || (oc >= n && nc < n) {
				t.Errorf("glyph %d: component %d became %d", gid, oc, nc)
			}
			size := componentLen(int(of))
			if !bytes.Equal(old[p+4:p+size], g[q+4:q+size]) {
				t.Errorf("glyph %d: component placement changed", gid)
			}
			p, q = p+size, q+size
			if of&moreComponents == 0 {
				if len(g)-q > 3 {
					t.Errorf("glyph %d: %d bytes after its last component", gid, len(g)-q)
				}
				break
			}
		}
	}
	if instructions == 0 || composites == 0 {
		t.Fatalf("%d bytes of instructions and %d composites in the original glyphs: the test checks nothing", instructions, composites)
	}
	if subSize > size {
		t.Fatalf("subset of %d bytes from a %d-byte font", subSize, size)
	}
}

// TestTrickyFontKeepsHinting: a family FreeType treats as tricky (its
// hinting places the strokes) keeps its hinting in subsets; others do not.
func TestTrickyFontKeepsHinting(t *testing.T) {
	for _, c := range []struct {
		family string
		tricky bool
	}{{"MingLiU", true}, {"PMingLiU-ExtB", true}, {"DFKai-SB", true}, {"Noto Sans", false}, {"Arial", false}} {
		if got := trickyFont(nameTable(c.family)); got != c.tricky {
			t.Errorf("%q: tricky %v, want %v", c.family, got, c.tricky)
		}
	}
	if trickyFont(nil) || trickyFont([]byte{0, 0, 0, 9, 0, 1}) {
		t.Error("a missing or cut name table taken for a tricky font")
	}

	s, _ := notoSFNT(t)
	s.keepHints = true
	sub, _ := subsetOf(t, s, []uint16{0, 36, 37})
	if !bytes.Equal(sub.tables["fpgm"], s.tables["fpgm"]) {
		t.Error("a tricky font's subset lost its fpgm")
	}
	old, _ := s.glyph(36)
	g, _ := sub.glyph(1)
	if !bytes.HasPrefix(g, old) {
		t.Error("a tricky font's glyph lost its instructions")
	}
}

// nameTable is a name table with one Windows (UTF-16BE) family name.
func nameTable(family string) []byte {
	str := utf16.Encode([]rune(family))
	b := binary.BigEndian.AppendUint16(nil, 0) // format
	b = binary.BigEndian.AppendUint16(b, 1)    // count
	b = binary.BigEndian.AppendUint16(b, 6+12) // stringOffset
	for _, v := range []int{3, 1, 0x409, 1, 2 * len(str), 0} {
		b = binary.BigEndian.AppendUint16(b, uint16(v))
	}
	for _, r := range str {
		b = binary.BigEndian.AppendUint16(b, r)
	}
	return b
}

// notoSFNT reads Noto Sans Regular's table directory; size is the file's.
func notoSFNT(t *testing.T) (s *sfnt, size int) {
	t.Helper()
	data, err := notoSans(t).Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if s, err = readSFNT(data); err != nil {
		t.Fatal(err)
	}
	return s, len(data)
}

// subsetOf cuts the subset of olds from s and reads it back.
func subsetOf(t *testing.T, s *sfnt, olds []uint16) (sub *sfnt, size int) {
	t.Helper()
	raw, err := s.subset(olds)
	if err != nil {
		t.Fatal(err)
	}
	if sub, err = readSFNT(raw); err != nil {
		t.Fatal(err)
	}
	return sub, len(raw)
}
