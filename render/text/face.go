// Package text is the one text path of the document engine: fonts and
// their fallback chain, segmentation into runs by font, script and
// direction (the Unicode Bidirectional Algorithm), shaping with
// go-text/typesetting's HarfBuzz port, and line breaking per UAX #14.
// Tables, headers, footers, key/value lists and every other component
// that measures or draws text go through it, so every script is drawn,
// measured and extracted the same way.
package text

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/go-text/typesetting/font"
)

// Face is one parsed font file. It is safe for concurrent use: shaping
// state lives in per-goroutine workers, see Shaper.
type Face struct {
	name string // PostScript-safe name, used as the PDF BaseFont
	font *font.Font
	sf   *sfnt

	// Metrics in thousandths of an em (PDF glyph space).
	Ascent, Descent, CapHeight int
	BBox                       [4]int
	ItalicAngle                int
	Flags                      int

	mu      sync.Mutex
	subsets map[string]subsetFile // compressed subset files by glyph list, bounded
}

// Name is the font's PostScript-style name (no spaces), as embedded.
func (f *Face) Name() string { return f.name }

// ParseFace parses a TrueType font file. name names the face in errors
// and in PDF files. A malformed or hostile file returns an error; it
// never panics.
func ParseFace(name string, data []byte) (face *Face, err error) {
	defer func() {
		if r := recover(); r != nil {
			face, err = nil, fmt.Errorf("font %s: unreadable font: %v", name, r)
		}
	}()
	sf, err := readSFNT(data)
	if err != nil {
		return nil, fmt.Errorf("font %s: %w", name, err)
	}
	fnt, err := font.ParseTTF(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("font %s: unreadable font: %w", name, err)
	}
	if fnt.Upem() == 0 {
		return nil, fmt.Errorf("font %s: %w", name, errMalformed)
	}
	f := &Face{name: psName(name), font: fnt.Font, sf: sf, subsets: map[string]subsetFile{}}
	scale := func(v int) int { return v * 1000 / sf.upem }
	head := sf.tables["head"]
	for i := range f.BBox {
		v, _ := u16(head, 36+2*i)
		f.BBox[i] = scale(int(int16(v)))
	}
	hhea := sf.tables["hhea"]
	asc, _ := u16(hhea, 4)
	desc, _ := u16(hhea, 6)
	f.Ascent, f.Descent = scale(int(int16(asc))), scale(int(int16(desc)))
	f.CapHeight = f.Ascent
	if os2 := sf.tables["OS/2"]; len(os2) >= 90 {
		if v, ok := u16(os2, 88); ok && v > 0 {
			f.CapHeight = scale(int(int16(v)))
		}
	}
	if post := sf.tables["post"]; len(post) >= 8 {
		v, _ := u16(post, 4)
		f.ItalicAngle = int(int16(v))
	}
	f.Flags = 4 // symbolic: glyphs outside the standard Latin set
	if f.ItalicAngle != 0 {
		f.Flags |= 64
	}
	if _, ok := f.font.NominalGlyph(' '); !ok && f.font.Cmap == nil {
		return nil, fmt.Errorf("font %s: no character map", name)
	}
	return f, nil
}

// psName turns a file or family name into a PostScript name.
func psName(s string) string {
	s = strings.TrimSuffix(strings.TrimSuffix(s, ".ttf"), ".otf")
	var b strings.Builder
	for _, r := range s {
		if r > ' ' && r < 127 && !strings.ContainsRune("()<>[]{}/%#", r) {
			b.WriteRune(r)
		}
		if b.Len() >= 60 {
			break
		}
	}
	if b.Len() == 0 {
		return "Font"
	}
	return b.String()
}

// Covers reports whether the face has a glyph for r.
func (f *Face) Covers(r rune) bool {
	_, ok := f.font.NominalGlyph(r)
	return ok
}

// Advance is the advance width of glyph gid in thousandths of an em.
func (f *Face) Advance(gid uint16) int {
	if int(gid) >= f.sf.numGlyphs {
		return 0
	}
	adv, _ := f.sf.hmetric(int(gid))
	return adv * 1000 / f.sf.upem
}

// maxCachedSubsets bounds the subsets kept per face (documents of one
// template use the same glyphs again and again).
const maxCachedSubsets = 64

// Metrics are the values of a PDF font descriptor, in thousandths of an em.
type Metrics struct {
	Ascent, Descent, CapHeight, ItalicAngle, Flags int
	BBox                                           [4]int
}

type subsetFile struct {
	z []byte
	n int
}

// Subset returns a zlib-compressed TrueType file holding glyphs olds[0],
// olds[1], ... as glyphs 0, 1, ... (composite glyph components follow
// them) and its uncompressed length. The result is shared and must not
// be modified.
func (f *Face) Subset(olds []uint16) ([]byte, int, error) {
	key := make([]byte, 2*len(olds))
	for i, g := range olds {
		key[2*i], key[2*i+1] = byte(g>>8), byte(g)
	}
	f.mu.Lock()
	b, ok := f.subsets[string(key)]
	f.mu.Unlock()
	if ok {
		return b.z, b.n, nil
	}
	raw, err := f.sf.subset(olds)
	if err != nil {
		return nil, 0, fmt.Errorf("font %s: %w", f.name, err)
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(raw)
	zw.Close()
	b = subsetFile{z.Bytes(), len(raw)}
	f.mu.Lock()
	if len(f.subsets) >= maxCachedSubsets {
		clear(f.subsets)
	}
	f.subsets[string(key)] = b
	f.mu.Unlock()
	return b.z, b.n, nil
}

// Metrics returns the face's font descriptor values for PDF.
func (f *Face) Metrics() Metrics {
	return Metrics{Ascent: f.Ascent, Descent: f.Descent, CapHeight: f.CapHeight, ItalicAngle: f.ItalicAngle, Flags: f.Flags, BBox: f.BBox}
}

// CheckFont parses data as a font and subsets it once, the way a render
// will, so an upload can be refused with a clear error.
func CheckFont(name string, data []byte) error {
	f, err := ParseFace(name, data)
	if err != nil {
		return err
	}
	return f.Check()
}

// Check subsets the face once, the way a render will, and reports why it
// cannot be drawn with.
func (f *Face) Check() error {
	name := f.name
	gid, ok := f.font.NominalGlyph('A')
	if !ok {
		for r := rune(0x21); r < 0x10000 && !ok; r++ {
			gid, ok = f.font.NominalGlyph(r)
		}
	}
	if !ok {
		return fmt.Errorf("font %s: no characters mapped to glyphs", name)
	}
	if _, err := f.sf.subset([]uint16{0, uint16(gid)}); err != nil {
		return fmt.Errorf("font %s: %w", name, err)
	}
	return nil
}

var errNoFace = errors.New("text: no font")
