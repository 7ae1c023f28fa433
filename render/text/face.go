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

	cov  []uint32 // lazy faces: covered characters, sorted inclusive ranges lo, hi, lo, hi...
	load func() ([]byte, error)

	loadMu sync.Mutex // held while a lazy face loads
	err    error      // why a lazy face could not be loaded (under loadMu; for good)

	// st is the parsed face: set at once by ParseFace, on first use for a
	// lazy face, and taken away again by UnloadFaces for a lazy face of
	// the bundled fonts (the next use parses it again). A caller keeps the
	// state it loaded for as long as it needs it, so an unload never
	// changes what a running render reads; a reload parses the same bytes
	// into the same glyphs.
	st atomic.Pointer[faceState]
}

// faceState is what parsing a face's bytes gives.
type faceState struct {
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
	st, err := parseFace(name, data)
	if err != nil {
		return nil, err
	}
	f.st.Store(st)
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
func (f *Face) ready() *faceState {
	if st := f.st.Load(); st != nil {
		return st
	}
	st, err := f.loadState()
	if err != nil {
		panic(fmt.Sprintf("text: font %s cannot be loaded: %v", f.name, err))
	}
	return st
}

// usable loads a lazy face if need be and reports whether it can be
// drawn with; unlike ready it never panics.
func (f *Face) usable() bool {
	if f.st.Load() != nil {
		return true
	}
	_, err := f.loadState()
	return err == nil
}

// loadState loads and parses a lazy face that is not loaded: once when
// that fails, again after an unload.
func (f *Face) loadState() (*faceState, error) {
	f.loadMu.Lock()
	defer f.loadMu.Unlock()
	if st := f.st.Load(); st != nil {
		return st, nil
	}
	if f.err != nil {
		return nil, f.err
	}
	data, err := f.load()
	var st *faceState
	if err == nil {
		st, err = parseFace(f.name, data)
	}
	if err != nil {
		f.err = err
		return nil, err
	}
	f.st.Store(st)
	if f.cov != nil {
		unloadable.add(f)
	}
	return st, nil
}

// Err loads a lazy face if need be and says why it cannot be drawn with
// (nil when it can).
func (f *Face) Err() error {
	_, err := f.loadState()
	return err
}

// Loaded reports whether the face is parsed now.
func (f *Face) Loaded() bool { return f.st.Load() != nil }

// unloadable holds the lazy faces of the bundled fonts (those made with
// their coverage) that are loaded now: UnloadFaces lets them go. A
// team's or operator's file (no coverage given) stays loaded: reading it
// again could fail (a file store away), where the bundled bytes cannot.
var unloadable = faceSet{faces: map[*Face]struct{}{}}

type faceSet struct {
	mu    sync.Mutex
	faces map[*Face]struct{}
}

func (u *faceSet) add(f *Face) {
	u.mu.Lock()
	u.faces[f] = struct{}{}
	u.mu.Unlock()
}

// UnloadFaces lets the parsed bundled faces go (the idle trim, once a
// load has ended: go-text keeps every glyph outline of a parsed face,
// several megabytes for the fonts an invoice uses); each is parsed again
// on its next use. Renders running meanwhile keep the state they hold.
// It returns how many faces it unloaded.
func UnloadFaces() int {
	unloadable.mu.Lock()
	defer unloadable.mu.Unlock()
	n := 0
	for f := range unloadable.faces {
		f.loadMu.Lock()
		if f.st.Swap(nil) != nil {
			n++
		}
		f.loadMu.Unlock()
		delete(unloadable.faces, f)
	}
	return n
}

// parseFace parses data; it never panics.
func parseFace(name string, data []byte) (st *faceState, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("font %s: unreadable font: %v", name, r)
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
		return nil, fmt.Errorf("font %s: no character map", name)
	}
	Loads.Add(1)
	return &faceState{font: fnt.Font, sf: sf, metrics: m, subsets: map[string]subsetFile{}}, nil
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
	_, ok := f.ready().font.NominalGlyph(r)
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
	st := f.ready()
	var rs []uint32
	for it := st.font.Cmap.Iter(); it.Next(); {
		r, _ := it.Char()
		if _, ok := st.font.NominalGlyph(r); ok && r >= 0 {
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
	sf := f.ready().sf
	if int(gid) >= sf.numGlyphs {
		return 0
	}
	adv, _ := sf.hmetric(int(gid))
	return adv * 1000 / sf.upem
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
	st := f.ready()
	st.mu.Lock()
	b, ok := st.subsets[string(key)]
	st.mu.Unlock()
	if ok {
		return b.z, b.n, nil
	}
	for i, g := range olds {
		if int(g) >= st.sf.numGlyphs { // a glyph the font does not have (a shaper's marker): draw .notdef
			olds = append([]uint16(nil), olds...)
			for k := i; k < len(olds); k++ {
				if int(olds[k]) >= st.sf.numGlyphs {
					olds[k] = 0
				}
			}
			break
		}
	}
	raw, err := st.sf.subset(olds)
	if err != nil {
		return nil, 0, fmt.Errorf("font %s: %w", f.name, err)
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(raw)
	zw.Close()
	b = subsetFile{z.Bytes(), len(raw)}
	st.mu.Lock()
	if len(st.subsets) >= maxCachedSubsets {
		clear(st.subsets)
	}
	st.subsets[string(key)] = b
	st.mu.Unlock()
	return b.z, b.n, nil
}

// CFF reports whether the face has CFF (PostScript) outlines: its
// subsets are CFF font programs (PDF FontFile3, CIDFontType0C), not
// TrueType files.
func (f *Face) CFF() bool {
	return f.ready().sf.cff != nil
}

// Metrics returns the face's font descriptor values for PDF.
func (f *Face) Metrics() Metrics {
	return f.ready().metrics
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
	}
	st := f.ready()
	gid, ok := st.font.NominalGlyph('A')
	if !ok {
		for r := rune(0x21); r < 0x10000 && !ok; r++ {
			gid, ok = st.font.NominalGlyph(r)
		}
	}
	if !ok {
		return fmt.Errorf("font %s: no characters mapped to glyphs", name)
	}
	if _, err := st.sf.subset([]uint16{0, uint16(gid)}); err != nil {
		return fmt.Errorf("font %s: %w", name, err)
	}
	return nil
}

var errNoFace = errors.New("text: no font")
