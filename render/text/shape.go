package text

import (
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/go-text/typesetting/di"
	"github.com/go-text/typesetting/font"
	"github.com/go-text/typesetting/shaping"
	"golang.org/x/image/math/fixed"
	xbidi "golang.org/x/text/unicode/bidi"
)

// Units: text is shaped at a size of 1000, so advances and offsets are in
// thousandths of an em, the unit of PDF glyph space; a width in points is
// units * fontSize / 1000.
const shapeSize = 1000

// Glyph is one positioned glyph of a run.
type Glyph struct {
	ID               uint16
	Advance          float32 // thousandths of an em
	XOffset, YOffset float32
	// Cluster is the index in the paragraph's runes of the first
	// character this glyph's cluster stands for, Runes their count; the
	// glyphs of one cluster share both.
	Cluster, Runes int
}

// Run is a sequence of glyphs in one face and one direction, in visual
// order (left to right).
type Run struct {
	Face  *Face
	RTL   bool
	Glyph []Glyph
	Text  []rune  // the whole paragraph, logical order; clusters index it
	Width float32 // thousandths of an em
	// Tag is the Tag of the Span the run comes from (LayoutSpans); 0 for
	// plain text.
	Tag int
}

// ClusterText returns the characters glyph g stands for.
func (r *Run) ClusterText(g Glyph) string {
	if g.Cluster < 0 || g.Cluster+g.Runes > len(r.Text) || g.Runes <= 0 {
		return ""
	}
	return string(r.Text[g.Cluster : g.Cluster+g.Runes])
}

// ClusterRunes returns the characters glyph g stands for; the slice is
// shared and must not be modified.
func (r *Run) ClusterRunes(g Glyph) []rune {
	if g.Cluster < 0 || g.Cluster+g.Runes > len(r.Text) || g.Runes <= 0 {
		return nil
	}
	return r.Text[g.Cluster : g.Cluster+g.Runes]
}

// LogicalText returns the characters the run stands for, in logical order.
func (r *Run) LogicalText() string {
	if len(r.Glyph) == 0 {
		return ""
	}
	lo, hi := len(r.Text), 0
	for _, g := range r.Glyph {
		lo = min(lo, g.Cluster)
		hi = max(hi, g.Cluster+g.Runes)
	}
	if lo >= hi || hi > len(r.Text) {
		return ""
	}
	return string(r.Text[lo:hi])
}

// Line is one laid-out line: runs in visual order, left to right.
type Line struct {
	Runs  []Run
	Width float32 // thousandths of an em
	RTL   bool    // the paragraph's base direction is right to left
	Text  string  // the line's characters in logical order
}

// Bidi reports whether the line holds right-to-left text.
func (l *Line) Bidi() bool {
	if l.RTL {
		return true
	}
	for i := range l.Runs {
		if l.Runs[i].RTL {
			return true
		}
	}
	return false
}

// WidthAt is the line's width in points at font size size.
func (l *Line) WidthAt(size float64) float64 { return float64(l.Width) * size / shapeSize }

// worker holds the per-goroutine state go-text needs: its shaper, the
// segmenter and line wrapper, and one font.Face per Face (font.Face is
// not safe for concurrent use).
type worker struct {
	shaper  shaping.HarfbuzzShaper
	seg     shaping.Segmenter
	wrap    shaping.LineWrapper
	faces   map[*Face]*font.Face
	back    map[*font.Face]*Face
	fontmap fontmap
}

type fontmap struct {
	w     *worker
	reg   *Registry
	fam   *Family
	style Style
}

// ResolveFace implements shaping.Fontmap: a character the family lacks
// comes from the first fallback that has it; one no font has is drawn
// (as the missing-glyph box) by the family's own face.
func (m *fontmap) ResolveFace(r rune) *font.Face {
	f := m.reg.faceFor(m.fam, m.style, r)
	if f == nil {
		f = m.reg.drawable(m.fam, m.style)
	}
	return m.w.face(f)
}

func (w *worker) face(f *Face) *font.Face {
	ff, ok := w.faces[f]
	if !ok {
		ff = font.NewFace(f.ready().font)
		w.faces[f] = ff
		w.back[ff] = f
	}
	return ff
}

var workers = sync.Pool{New: func() any {
	w := &worker{faces: map[*Face]*font.Face{}, back: map[*font.Face]*Face{}}
	w.fontmap.w = w
	return w
}}

// cache holds laid-out text by (text, family, style, width): invoices
// repeat the same words in every row and every document.
var cache = newLineCache[cacheKey]()

// A lineCache holds laid-out lines by key, up to maxCached entries; it is
// emptied when full.
type lineCache[K comparable] struct {
	sync.RWMutex
	m map[K][]Line
}

func newLineCache[K comparable]() *lineCache[K] { return &lineCache[K]{m: map[K][]Line{}} }

func (c *lineCache[K]) get(k K) ([]Line, bool) {
	c.RLock()
	lines, ok := c.m[k]
	c.RUnlock()
	return lines, ok
}

func (c *lineCache[K]) put(k K, lines []Line) {
	c.Lock()
	if len(c.m) >= maxCached {
		clear(c.m)
	}
	c.m[k] = lines
	c.Unlock()
}

type cacheKey struct {
	text  string
	fam   *Family
	reg   *Registry
	style Style
	width float32
	max   int
}

// maxCached bounds the layout cache; it is emptied when full. Texts
// longer than maxCachedText are not kept.
const (
	maxCached     = 1 << 14
	maxCachedText = 1 << 12
)

// maxParagraph is the most bytes of a paragraph laid out at once.
const maxParagraph = 1 << 13

// Layout breaks s into lines no wider than maxWidth (thousandths of an
// em; 0 or less: no wrapping) in the given family and style, "" being
// the default family. Each "\n" starts a paragraph; each paragraph has
// its own base direction (UBA rules P2-P3). It returns at least one line.
// The lines are shared and must not be modified.
func (r *Registry) Layout(s, family string, style Style, maxWidth float32) []Line {
	return r.LayoutMax(s, family, style, maxWidth, 0)
}

// LayoutMax is Layout that stops after about maxLines lines (0: no
// limit): a caller that cannot place more (a page limit) need not pay
// for shaping the rest of a huge text.
func (r *Registry) LayoutMax(s, family string, style Style, maxWidth float32, maxLines int) []Line {
	fam, ok := r.Family(family)
	if !ok {
		fam, _ = r.Family("")
	}
	if fam == nil {
		return []Line{{}}
	}
	if maxWidth <= 0 || maxWidth > 1e7 {
		maxWidth = 1e7
	}
	key := cacheKey{s, fam, r, style, maxWidth, maxLines}
	lines, ok := cache.get(key)
	if ok {
		return lines
	}
	w := workers.Get().(*worker)
	w.fontmap.reg, w.fontmap.fam, w.fontmap.style = r, fam, style
	for len(s) > 0 && (maxLines <= 0 || len(lines) < maxLines) {
		para, rest, _ := strings.Cut(s, "\n")
		for len(para) > maxParagraph && (maxLines <= 0 || len(lines) < maxLines) {
			// Bidi resolution and line breaking cost more than linear
			// time on some input: a very long paragraph is laid out in
			// pieces cut at a space (each piece starts a line).
			cut := strings.LastIndexByte(para[:maxParagraph], ' ') + 1
			if cut < maxParagraph/2 {
				cut = maxParagraph
				for cut > 0 && !utf8.RuneStart(para[cut]) {
					cut--
				}
			}
			lines = w.layoutParagraph(lines, para[:cut], maxWidth)
			para = para[cut:]
		}
		if len(para) > maxParagraph {
			break // stopped at maxLines
		}
		lines = w.layoutParagraph(lines, para, maxWidth)
		if len(rest) == 0 && len(para) < len(s) { // text ends with a line break
			lines = append(lines, Line{})
		}
		s = rest
	}
	w.fontmap.reg, w.fontmap.fam = nil, nil
	workers.Put(w)
	if len(lines) == 0 {
		lines = []Line{{}}
	}
	if len(key.text) > maxCachedText {
		return lines
	}
	cache.put(key, lines)
	return lines
}

// baseRTL applies rules P2 and P3 of the Unicode Bidirectional Algorithm:
// the first strong character sets the paragraph's direction.
func baseRTL(text []rune) bool {
	for _, c := range text {
		if c < 0x80 {
			if unicode.IsLetter(c) {
				return false
			}
			continue
		}
		p, _ := xbidi.LookupRune(c)
		switch p.Class() {
		case xbidi.L:
			return false
		case xbidi.R, xbidi.AL:
			return true
		}
	}
	return false
}

func (w *worker) layoutParagraph(out []Line, para string, maxWidth float32) []Line {
	text := []rune(para)
	if len(text) == 0 {
		return append(out, Line{})
	}
	rtl := baseRTL(text)
	dir := di.DirectionLTR
	if rtl {
		dir = di.DirectionRTL
	}
	in := shaping.Input{Text: text, RunStart: 0, RunEnd: len(text), Direction: dir, Size: fixed.I(shapeSize)}
	inputs := w.seg.Split(in, &w.fontmap)
	outs := make([]shaping.Output, len(inputs))
	for i, run := range inputs {
		outs[i] = w.shaper.Shape(run)
	}
	cfg := shaping.WrapConfig{Direction: dir, BreakPolicy: shaping.WhenNecessary, DisableTrailingWhitespaceTrim: true}
	wrapped, _ := w.wrap.WrapParagraphF(cfg, fixed.Int26_6(maxWidth*64), text, shaping.NewSliceIterator(outs))
	for _, l := range wrapped {
		out = append(out, w.line(l, text, rtl, nil))
	}
	return out
}

// line converts a wrapped go-text line into a Line in visual order,
// leaving out trailing white space (it takes no room at a line's end).
// tags, when not nil, holds each rune's span tag.
func (w *worker) line(l shaping.Line, text []rune, rtl bool, tags []int) Line {
	if len(l) == 0 {
		return Line{RTL: rtl}
	}
	start, end := l[0].Runes.Offset, l[0].Runes.Offset
	for _, o := range l {
		start = min(start, o.Runes.Offset)
		end = max(end, o.Runes.Offset+o.Runes.Count)
	}
	end = min(end, len(text))
	trim := end
	for trim > start && unicode.IsSpace(text[trim-1]) {
		trim--
	}
	runs := make([]Run, 0, len(l))
	order := make([]int, len(l))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return l[order[a]].VisualIndex < l[order[b]].VisualIndex })
	var width float32
	for _, i := range order {
		o := l[i]
		run := Run{Face: w.back[o.Face], RTL: o.Direction.Progression() == di.TowardTopLeft, Text: text}
		if o.Runes.Offset < len(tags) {
			run.Tag = tags[o.Runes.Offset]
		}
		run.Glyph = make([]Glyph, 0, len(o.Glyphs))
		for _, g := range o.Glyphs {
			if g.ClusterIndex >= trim {
				continue
			}
			gl := Glyph{
				ID:      uint16(g.GlyphID),
				Advance: float32(g.Advance) / 64,
				XOffset: float32(g.XOffset) / 64,
				YOffset: float32(g.YOffset) / 64,
				Cluster: g.ClusterIndex,
				Runes:   g.RuneCount,
			}
			run.Glyph = append(run.Glyph, gl)
			run.Width += gl.Advance
		}
		if len(run.Glyph) == 0 || run.Face == nil {
			continue
		}
		width += run.Width
		runs = append(runs, run)
	}
	return Line{Runs: runs, Width: width, RTL: rtl, Text: string(text[start:trim])}
}
