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
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-text/typesetting/font"
)

// Face is one font file. It is safe for concurrent use: shaping state
// lives in per-goroutine workers, see Shaper.
//
// A face made by NewLazyFace knows only which characters it has until it
// is first drawn or measured: then, once, its bytes are loaded and parsed
// (go-text parses every glyph outline up front, which for the embedded
// CJK and symbol fonts costs tens of megabytes and most of a second).
type Face struct {
	name string // PostScript-safe name, used as the PDF BaseFont

	cov    []uint32 // lazy faces: covered characters, sorted inclusive ranges lo, hi, lo, hi...
	load   func() ([]byte, error)
	once   sync.Once
	err    error // why a lazy face could not be loaded
	loaded atomic.Bool

	// Set by parse (at once for ParseFace, on first use for lazy faces).
	font    *font.Font
	sf      *sfnt
	metrics Metrics

	mu      sync.Mutex
	subsets map[string]subsetFile // compressed subset files by glyph list, bounded
}

// Name is the font's PostScript-style name (no spaces), as embedded.
func (f *Face) Name() string { return f.name }

// ParseFace parses a TrueType font file. name names the face in errors
// and in PDF files. A malformed or hostile file returns an error; it
// never panics.
func ParseFace(name string, data []byte) (*Face, error) {
	f := &Face{name: psName(name)}
	if err := f.parse(name, data); err != nil {
		return nil, err
	}
	f.once.Do(func() {}) // parsed
	return f, nil
}

// NewLazyFace returns a face that is loaded and parsed on first use.
// coverage lists the characters it has as sorted, inclusive ranges
// (lo, hi, lo, hi, ...), as Coverage of the parsed face returns them, so
// fallback and missing-character checks need not load it; load returns
// the TrueType bytes (kept for as long as the face: subsets are cut from
// them).
//
// With coverage nil the face is not known until loaded: the first
// question about it (Covers) loads it, and a face that fails to load
// covers nothing, so its characters come from the fallback chain (an
// operator's or a team's font that turns out damaged is skipped, never
// a failed render).
func NewLazyFace(name string, coverage []uint32, load func() ([]byte, error)) *Face {
	return &Face{name: psName(name), cov: coverage, load: load}
}

// Loads counts the faces parsed so far, lazily or not (for tests).
var Loads atomic.Int64

// ready loads and parses a lazy face once; it panics if the face cannot
// be loaded (embedded fonts are checked by tests; a render recovers the
// panic as an internal error).
func (f *Face) ready() {
	if !f.usable() {
		panic(fmt.Sprintf("text: font %s cannot be loaded: %v", f.name, f.err))
	}
}

// usable loads a lazy face once and reports whether it can be drawn
// with; unlike ready it never panics.
func (f *Face) usable() bool {
	f.once.Do(func() {
		data, err := f.load()
		if err == nil {
			err = f.parse(f.name, data)
		}
		f.err = err
	})
	return f.err == nil
}

// Err loads a lazy face if need be and says why it cannot be drawn with
// (nil when it can).
func (f *Face) Err() error {
	f.usable()
	return f.err
}

// Loaded reports whether the face has been parsed.
func (f *Face) Loaded() bool { return f.loaded.Load() }

// parse reads data into f; it never panics.
func (f *Face) parse(name string, data []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("font %s: unreadable font: %v", name, r)
		}
	}()
	sf, err := readSFNT(data)
	if err != nil {
		return fmt.Errorf("font %s: %w", name, err)
	}
	fnt, err := font.ParseTTF(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("font %s: unreadable font: %w", name, err)
	}
	if fnt.Upem() == 0 {
		return fmt.Errorf("font %s: %w", name, errMalformed)
	}
	var m Metrics
	scale := func(v int) int { return v * 1000 / sf.upem }
	head := sf.tables["head"]
	for i := range m.BBox {
		v, _ := u16(head, 36+2*i)
		m.BBox[i] = scale(int(int16(v)))
	}
	hhea := sf.tables["hhea"]
	asc, _ := u16(hhea, 4)
	desc, _ := u16(hhea, 6)
	m.Ascent, m.Descent = scale(int(int16(asc))), scale(int(int16(desc)))
	m.CapHeight = m.Ascent
	if os2 := sf.tables["OS/2"]; len(os2) >= 90 {
		if v, ok := u16(os2, 88); ok && v > 0 {
			m.CapHeight = scale(int(int16(v)))
		}
	}
	if post := sf.tables["post"]; len(post) >= 8 {
		v, _ := u16(post, 4)
		m.ItalicAngle = int(int16(v))
	}
	m.Flags = 4 // symbolic: glyphs outside the standard Latin set
	if m.ItalicAngle != 0 {
		m.Flags |= 64
	}
	if _, ok := fnt.Font.NominalGlyph(' '); !ok && fnt.Font.Cmap == nil {
		return fmt.Errorf("font %s: no character map", name)
	}
	f.font, f.sf, f.metrics = fnt.Font, sf, m
	f.subsets = map[string]subsetFile{}
	f.loaded.Store(true)
	Loads.Add(1)
	return nil
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

// Covers reports whether the face has a glyph for r. It does not load a
// lazy face.
func (f *Face) Covers(r rune) bool {
	if f.load != nil && f.cov != nil {
		return inRanges(f.cov, uint32(r))
	}
	if f.load != nil && !f.usable() {
		return false
	}
	_, ok := f.font.NominalGlyph(r)
	return ok
}

// inRanges reports whether c is in one of the sorted inclusive ranges.
func inRanges(cov []uint32, c uint32) bool {
	n := len(cov) / 2
	i := sort.Search(n, func(i int) bool { return cov[2*i+1] >= c })
	return i < n && cov[2*i] <= c
}

// Coverage returns the characters the face has glyphs for as sorted,
// inclusive ranges (lo, hi, lo, hi, ...): what NewLazyFace needs to know
// of a font without loading it.
func (f *Face) Coverage() []uint32 {
	if f.load != nil && f.cov != nil {
		return f.cov
	}
	if f.load != nil && !f.usable() {
		return nil
	}
	var rs []uint32
	for it := f.font.Cmap.Iter(); it.Next(); {
		r, _ := it.Char()
		if _, ok := f.font.NominalGlyph(r); ok && r >= 0 {
			rs = append(rs, uint32(r))
		}
	}
	slices.Sort(rs)
	var out []uint32
	for _, r := range rs {
		if n := len(out); n > 0 && out[n-1]+1 >= r {
			out[n-1] = max(out[n-1], r)
			continue
		}
		out = append(out, r, r)
	}
	return out
}

// Advance is the advance width of glyph gid in thousandths of an em.
func (f *Face) Advance(gid uint16) int {
	f.ready()
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
// them) and its uncompressed length; for a CFF face (CFF), a CID-keyed
// CFF font program whose glyph and CID i is olds[i]. The result is shared and must not
// be modified.
func (f *Face) Subset(olds []uint16) ([]byte, int, error) {
	key := make([]byte, 2*len(olds))
	for i, g := range olds {
		key[2*i], key[2*i+1] = byte(g>>8), byte(g)
	}
	f.ready()
	f.mu.Lock()
	b, ok := f.subsets[string(key)]
	f.mu.Unlock()
	if ok {
		return b.z, b.n, nil
	}
	for i, g := range olds {
		if int(g) >= f.sf.numGlyphs { // a glyph the font does not have (a shaper's marker): draw .notdef
			olds = append([]uint16(nil), olds...)
			for k := i; k < len(olds); k++ {
				if int(olds[k]) >= f.sf.numGlyphs {
					olds[k] = 0
				}
			}
			break
		}
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

// CFF reports whether the face has CFF (PostScript) outlines: its
// subsets are CFF font programs (PDF FontFile3, CIDFontType0C), not
// TrueType files.
func (f *Face) CFF() bool {
	f.ready()
	return f.sf.cff != nil
}

// Metrics returns the face's font descriptor values for PDF.
func (f *Face) Metrics() Metrics {
	f.ready()
	return f.metrics
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
func (f *Face) Check() (err error) {
	name := f.name
	if f.load != nil {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("%v", r)
			}
		}()
		f.ready()
	}
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
