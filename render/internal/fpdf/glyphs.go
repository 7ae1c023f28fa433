package fpdf

// Folio addition: fonts drawn by glyph ID. Shaped text (Arabic joining,
// ligatures, Devanagari conjuncts) is a sequence of glyphs, not of
// characters, so these fonts are Type0 fonts with a CIDFontType2
// descendant, Identity-H encoding and CID = glyph ID of a subset that
// holds only the glyphs a document draws (PDF 32000-1 §9.7.4), tagged
// ABCDEF+ (§9.6.4), with a ToUnicode CMap from each glyph to the text it
// stands for (§9.10.3).

import (
	"crypto/sha256"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
)

// GlyphFont is a TrueType font drawn by glyph ID.
type GlyphFont interface {
	Name() string // PostScript name, without subset tag
	// Subset returns a zlib-compressed TrueType file holding glyphs
	// olds[i] as glyph i, and the length of the file uncompressed.
	Subset(olds []uint16) (z []byte, n int, err error)
	// Advance is the advance width of a glyph of the original font, in
	// thousandths of an em.
	Advance(gid uint16) int
	// Descriptor values, in thousandths of an em.
	Metrics() GlyphFontMetrics
	// CFF reports a font with PostScript outlines: Subset returns a
	// CID-keyed CFF font program (glyph and CID i is olds[i]), embedded
	// as FontFile3 /CIDFontType0C under a CIDFontType0.
	CFF() bool
}

// GlyphFontMetrics are the values of a font descriptor.
type GlyphFontMetrics struct {
	Ascent, Descent, CapHeight, ItalicAngle, Flags int
	BBox                                           [4]int
}

// glyphFont is one glyph font used by the document.
type glyphFont struct {
	font  GlyphFont
	res   string            // resource name, "G1"
	ids   map[uint16]uint16 // original glyph ID -> CID (subset glyph ID)
	olds  []uint16          // CID -> original glyph ID
	text  []string          // CID -> text it stands for ("" unknown)
	objN  int
	order int
}

// ShowGlyph is one glyph to draw: its original glyph ID, its advance and
// offsets from shaping (thousandths of an em), its cluster (the glyphs
// standing for the same characters share one number, and follow one
// another) and the characters its cluster stands for, in logical order.
type ShowGlyph struct {
	ID               uint16
	Advance          float64
	XOffset, YOffset float64
	Cluster          int
	Text             []rune
}

func (f *Fpdf) glyphFontFor(gf GlyphFont) *glyphFont {
	if f.glyphFonts == nil {
		f.glyphFonts = map[GlyphFont]*glyphFont{}
	}
	g, ok := f.glyphFonts[gf]
	if !ok {
		g = &glyphFont{font: gf, res: "G" + strconv.Itoa(len(f.glyphFonts)+1), ids: map[uint16]uint16{0: 0},
			olds: []uint16{0}, text: []string{""}, order: len(f.glyphFonts)}
		f.glyphFonts[gf] = g
	}
	return g
}

// cid returns the subset glyph ID of original glyph id.
func (g *glyphFont) cid(id uint16) uint16 {
	c, ok := g.ids[id]
	if !ok {
		if len(g.olds) >= 0xFFFF {
			return 0
		}
		c = uint16(len(g.olds))
		g.ids[id] = c
		g.olds = append(g.olds, id)
		g.text = append(g.text, "")
	}
	return c
}

// ShowGlyphs draws glyphs of font gf at size points, starting at (x, y)
// on the baseline, in user units, in the current text colour, glyphs in
// visual order (left to right), as shaped.
//
// Text extraction reads a glyph through the font's ToUnicode map, which
// holds one text per glyph: the first cluster a glyph is drawn for
// alone. A cluster the map cannot tell (several glyphs, as in a base
// letter with marks, or a glyph mapped to other text before) is marked
// as standing for its characters (a /Span with /ActualText), cluster by
// cluster, so readers still put right-to-left clusters in order.
func (f *Fpdf) ShowGlyphs(gf GlyphFont, size, x, y float64, glyphs []ShowGlyph) {
	if f.err != nil || len(glyphs) == 0 {
		return
	}
	g := f.glyphFontFor(gf)
	var b strings.Builder
	b.Grow(32 + 12*len(glyphs))
	if f.colorFlag {
		b.WriteString("q ")
		b.WriteString(f.color.text.str)
		b.WriteByte(' ')
	}
	buf := append(f.fmt.buf[:0], "BT /"...)
	buf = append(buf, g.res...)
	buf = append(buf, ' ')
	buf = strconv.AppendFloat(buf, size, 'f', 2, 64)
	buf = append(buf, " Tf "...)
	buf = strconv.AppendFloat(buf, x*f.k, 'f', 2, 64)
	buf = append(buf, ' ')
	buf = strconv.AppendFloat(buf, (f.h-y)*f.k, 'f', 2, 64)
	buf = append(buf, " Td ["...)
	b.Write(buf)
	rise := 0.0
	pending := 0.0 // adjustment before the next glyph, thousandths of an em (TJ sign)
	for i := 0; i < len(glyphs); {
		j := i + 1
		for j < len(glyphs) && glyphs[j].Cluster == glyphs[i].Cluster {
			j++
		}
		first := g.cid(glyphs[i].ID)
		text := glyphs[i].Text
		span := false
		switch {
		case j-i == 1 && g.text[first] == "":
			g.text[first] = string(text)
		case j-i == 1 && sameText(g.text[first], text):
		case len(text) > 0:
			span = true
			b.WriteString("] TJ ")
			writeActualText(&b, string(text))
			b.WriteString("[")
		}
		for k, gl := range glyphs[i:j] {
			if gl.YOffset != rise {
				b.WriteString("] TJ ")
				fmt.Fprintf(&b, "%.2f Ts [", gl.YOffset*size/1000)
				rise = gl.YOffset
			}
			pending -= gl.XOffset
			buf = buf[:0]
			if pending > 0.05 || pending < -0.05 {
				buf = strconv.AppendFloat(buf, pending, 'f', 1, 64)
			}
			c := first
			if k > 0 {
				c = g.cid(gl.ID)
			}
			buf = append(buf, '<', hexDigit[c>>12], hexDigit[c>>8&15], hexDigit[c>>4&15], hexDigit[c&15], '>')
			b.Write(buf)
			pending = float64(gf.Advance(gl.ID)) + gl.XOffset - gl.Advance
		}
		if span {
			b.WriteString("] TJ EMC [")
		}
		i = j
	}
	f.fmt.buf = buf
	b.WriteString("] TJ")
	if rise != 0 {
		b.WriteString(" 0 Ts")
	}
	b.WriteString(" ET")
	if f.colorFlag {
		b.WriteString(" Q")
	}
	f.out(b.String())
}

// putGlyphFonts writes the glyph fonts, their subsets and maps.
func (f *Fpdf) putGlyphFonts() {
	for _, g := range f.glyphFontList() {
		z, n, err := g.font.Subset(g.olds)
		if err != nil {
			f.err = err
			return
		}
		m := g.font.Metrics()
		name := subsetTag(g.font.Name(), g.olds) + "+" + g.font.Name()

		g.objN = f.n + 1
		f.newobj()
		f.outf("<</Type /Font /Subtype /Type0 /BaseFont /%s /Encoding /Identity-H /DescendantFonts [%d 0 R] /ToUnicode %d 0 R>>", name, f.n+1, f.n+2)
		f.out("endobj")

		f.newobj()
		var w strings.Builder
		w.WriteString("[0 [")
		for i, old := range g.olds {
			if i > 0 {
				w.WriteByte(' ')
			}
			w.WriteString(strconv.Itoa(g.font.Advance(old)))
		}
		w.WriteString("]]")
		cff := g.font.CFF()
		if cff {
			f.outf("<</Type /Font /Subtype /CIDFontType0 /BaseFont /%s /CIDSystemInfo <</Registry %s /Ordering %s /Supplement 0>> /FontDescriptor %d 0 R /W %s>>", name, f.textstring("Adobe"), f.textstring("Identity"), f.n+2, w.String())
		} else {
			f.outf("<</Type /Font /Subtype /CIDFontType2 /BaseFont /%s /CIDSystemInfo <</Registry %s /Ordering %s /Supplement 0>> /FontDescriptor %d 0 R /CIDToGIDMap /Identity /W %s>>", name, f.textstring("Adobe"), f.textstring("Identity"), f.n+2, w.String())
		}
		f.out("endobj")

		f.newobj()
		cmap := toUnicodeCMap(g.text)
		f.outf("<</Length %d>>", len(cmap))
		f.putstream([]byte(cmap))
		f.out("endobj")

		f.newobj()
		file := "FontFile2"
		if cff {
			file = "FontFile3"
		}
		f.outf("<</Type /FontDescriptor /FontName /%s /Flags %d /FontBBox [%d %d %d %d] /ItalicAngle %d /Ascent %d /Descent %d /CapHeight %d /StemV 80 /%s %d 0 R>>",
			name, m.Flags, m.BBox[0], m.BBox[1], m.BBox[2], m.BBox[3], m.ItalicAngle, m.Ascent, m.Descent, m.CapHeight, file, f.n+1)
		f.out("endobj")

		f.newobj()
		if cff {
			f.outf("<</Length %d /Filter /FlateDecode /Subtype /CIDFontType0C>>", len(z))
		} else {
			f.outf("<</Length %d /Filter /FlateDecode /Length1 %d>>", len(z), n)
		}
		f.putstream(z)
		f.out("endobj")
	}
}

// subsetTag derives the six capital letters of a subset's tag from the
// font and the glyphs it holds, so the same subset gets the same tag.
func subsetTag(name string, olds []uint16) string {
	h := sha256.New()
	h.Write([]byte(name))
	for _, g := range olds {
		h.Write([]byte{byte(g >> 8), byte(g)})
	}
	sum := h.Sum(nil)
	tag := make([]byte, 6)
	for i := range tag {
		tag[i] = 'A' + sum[i]%26
	}
	return string(tag)
}

// toUnicodeCMap maps each CID to its text.
func toUnicodeCMap(text []string) string {
	b := make([]byte, 0, 400+24*len(text))
	b = append(b, "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n/CIDSystemInfo <</Registry (Adobe) /Ordering (UCS) /Supplement 0>> def\n/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n"...)
	hex4 := func(b []byte, v uint16) []byte {
		return append(b, hexDigit[v>>12], hexDigit[v>>8&15], hexDigit[v>>4&15], hexDigit[v&15])
	}
	var cids []int
	for cid, t := range text {
		if t != "" {
			cids = append(cids, cid)
		}
	}
	for len(cids) > 0 {
		n := min(len(cids), 100)
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, " beginbfchar\n"...)
		for _, cid := range cids[:n] {
			b = append(b, '<')
			b = hex4(b, uint16(cid))
			b = append(b, "> <"...)
			for _, u := range utf16.Encode([]rune(text[cid])) {
				b = hex4(b, u)
			}
			b = append(b, ">\n"...)
		}
		b = append(b, "endbfchar\n"...)
		cids = cids[n:]
	}
	b = append(b, "endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend"...)
	return string(b)
}

// glyphFontList lists the glyph fonts in the order they were first used.
func (f *Fpdf) glyphFontList() []*glyphFont {
	list := make([]*glyphFont, 0, len(f.glyphFonts))
	for _, g := range f.glyphFonts {
		list = append(list, g)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].order < list[j].order })
	return list
}

func writeActualText(b *strings.Builder, text string) {
	b.WriteString("/Span <</ActualText <FEFF")
	for _, u := range utf16.Encode([]rune(text)) {
		fmt.Fprintf(b, "%04X", u)
	}
	b.WriteString(">>> BDC ")
}

// SetCloseHook sets a function called when the document is closed, after
// the last page's footer, while pages can still be drawn on (SetPage).
func (f *Fpdf) SetCloseHook(fn func()) { f.closeHook = fn }

// TextColorOp returns the operator setting the current text colour.
func (f *Fpdf) TextColorOp() string { return f.color.text.str }

const hexDigit = "0123456789ABCDEF"

// sameText reports whether s holds the runes rs.
func sameText(s string, rs []rune) bool {
	i := 0
	for _, r := range s {
		if i >= len(rs) || rs[i] != r {
			return false
		}
		i++
	}
	return i == len(rs)
}
