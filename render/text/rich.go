package text

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-text/typesetting/di"
	"github.com/go-text/typesetting/shaping"
	"golang.org/x/image/math/fixed"
)

// Span is a piece of a rich paragraph (Markdown's bold, italic or code)
// drawn in one family and style. Tag is the caller's: the runs laid out
// from the span carry it, so the caller knows how to decorate them (a
// colour, a link, a line through).
type Span struct {
	Text   string
	Family string // "" is the default family
	Style  Style
	Tag    int
}

// LayoutSpans breaks a paragraph made of spans into lines no wider than
// maxWidth (thousandths of an em; 0 or less: no wrapping), stopping after
// about maxLines lines (0: no limit). All spans share one font size. Line
// breaks fall where UAX #14 allows across the spans, so "**bold**," keeps
// its comma; the paragraph has one base direction. "\n" in a span starts
// a new line. It returns at least one line.
func (r *Registry) LayoutSpans(spans []Span, maxWidth float32, maxLines int) []Line {
	if maxWidth <= 0 || maxWidth > 1e7 {
		maxWidth = 1e7
	}
	key := richKey{reg: r, width: maxWidth, max: maxLines}
	if key.spans = spansKey(spans); key.spans != "" {
		if lines, ok := richCache.get(key); ok {
			return lines
		}
	}
	lines := r.layoutSpans(spans, maxWidth, maxLines)
	if key.spans != "" {
		richCache.put(key, lines)
	}
	return lines
}

// richCache holds laid-out rich paragraphs: a document with a table of
// contents is laid out more than once, and reports repeat their Markdown.
var richCache = newLineCache[richKey]()

type richKey struct {
	spans string
	reg   *Registry
	width float32
	max   int
}

// spansKey writes spans as a cache key; "" when they are too long to keep.
func spansKey(spans []Span) string {
	n := 0
	for _, sp := range spans {
		n += len(sp.Text) + len(sp.Family) + 8
	}
	if n > maxCachedText {
		return ""
	}
	var b strings.Builder
	b.Grow(n)
	for _, sp := range spans {
		b.WriteString(sp.Family)
		b.WriteByte(0)
		b.WriteString(strconv.Itoa(int(sp.Style)))
		b.WriteByte(0)
		b.WriteString(strconv.Itoa(sp.Tag))
		b.WriteByte(0)
		b.WriteString(sp.Text)
		b.WriteByte(1)
	}
	return b.String()
}

func (r *Registry) layoutSpans(spans []Span, maxWidth float32, maxLines int) []Line {
	var lines []Line
	w := workers.Get().(*worker)
	defer func() {
		w.fontmap.reg, w.fontmap.fam = nil, nil
		workers.Put(w)
	}()
	for _, para := range richParagraphs(spans) {
		if maxLines > 0 && len(lines) >= maxLines {
			break
		}
		lines = w.layoutSpans(r, lines, para, maxWidth)
	}
	if len(lines) == 0 {
		lines = []Line{{}}
	}
	return lines
}

// richParagraphs cuts spans at "\n" and into pieces of at most
// maxParagraph bytes (bidi resolution and line breaking cost more than
// linear time on some input): each piece starts a line.
func richParagraphs(spans []Span) [][]Span {
	var out [][]Span
	var cur []Span
	size := 0
	flush := func() {
		out = append(out, cur)
		cur, size = nil, 0
	}
	for _, sp := range spans {
		for {
			part, rest, nl := strings.Cut(sp.Text, "\n")
			for len(part) > 0 {
				room := maxParagraph - size
				if room <= 0 {
					flush()
					room = maxParagraph
				}
				cut := len(part)
				if cut > room {
					cut = strings.LastIndexByte(part[:room], ' ') + 1
					if cut < room/2 {
						cut = room
						for cut > 0 && !utf8.RuneStart(part[cut]) {
							cut--
						}
					}
					if cut == 0 {
						flush()
						continue
					}
				}
				piece := sp
				piece.Text = part[:cut]
				cur = append(cur, piece)
				size += cut
				part = part[cut:]
			}
			if !nl {
				break
			}
			flush()
			sp.Text = rest
		}
	}
	if len(cur) > 0 || len(out) == 0 {
		flush()
	}
	return out
}

// layoutSpans lays out one paragraph of spans, each shaped with its own
// family and style, and wraps them together.
func (w *worker) layoutSpans(r *Registry, out []Line, spans []Span, maxWidth float32) []Line {
	var text []rune
	var tags []int
	for _, sp := range spans {
		for _, c := range sp.Text {
			text = append(text, c)
			tags = append(tags, sp.Tag)
		}
	}
	if len(text) == 0 {
		return append(out, Line{})
	}
	rtl := baseRTL(text)
	dir := di.DirectionLTR
	if rtl {
		dir = di.DirectionRTL
	}
	var outs []shaping.Output
	at := 0
	for _, sp := range spans {
		n := utf8.RuneCountInString(sp.Text)
		if n == 0 {
			continue
		}
		fam, ok := r.Family(sp.Family)
		if !ok {
			fam, _ = r.Family("")
		}
		if fam == nil {
			return append(out, Line{})
		}
		w.fontmap.reg, w.fontmap.fam, w.fontmap.style = r, fam, sp.Style
		in := shaping.Input{Text: text, RunStart: at, RunEnd: at + n, Direction: dir, Size: fixed.I(shapeSize)}
		for _, run := range w.seg.Split(in, &w.fontmap) {
			outs = append(outs, w.shaper.Shape(run))
		}
		at += n
	}
	cfg := shaping.WrapConfig{Direction: dir, BreakPolicy: shaping.WhenNecessary, DisableTrailingWhitespaceTrim: true}
	wrapped, _ := w.wrap.WrapParagraphF(cfg, fixed.Int26_6(maxWidth*64), text, shaping.NewSliceIterator(outs))
	for _, l := range wrapped {
		out = append(out, w.line(l, text, rtl, tags))
	}
	return out
}
