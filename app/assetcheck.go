package app

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-text/typesetting/di"
	"github.com/go-text/typesetting/font"
	ot "github.com/go-text/typesetting/font/opentype"
	"github.com/go-text/typesetting/font/opentype/tables"
	"github.com/go-text/typesetting/language"
	"github.com/go-text/typesetting/shaping"
	"golang.org/x/image/math/fixed"

	"folio/render"
	"folio/render/pdfmerge"
)

// Upload bounds per kind of asset. A font of a CJK script is 10-20 MB; a
// PDF for attachBefore/After is a few pages; SVG is text and stays small.
const (
	MaxAssetBytes = 20 << 20 // the largest asset of any kind (fonts, PDFs)
	MaxImageBytes = 10 << 20 // PNG, JPEG, WebP
	MaxSVGBytes   = 2 << 20
	// maxSVGElements and maxSVGDepth bound an SVG's tree so that a reader
	// (the engine's, later) never walks a bomb.
	maxSVGElements = 50_000
	maxSVGDepth    = 64
	// maxFontGlyphs is more than any real font has (65,535 is the format's
	// own limit; a variable CJK font has about 65,000).
	maxFontGlyphs = 65_535
)

// checked is an upload whose bytes passed the checks of their kind.
type checked struct {
	kind, format, contentType string
	width, height             int
	font                      *FontInfo
	// decode, when set, reads the pixels once decodeCost bytes of memory
	// are reserved (AssetService.upload), so a broken raster is refused now.
	decode     func() error
	decodeCost int64
}

// errAsset refuses an upload: what is wrong and what to do.
func errAsset(format string, args ...any) *Error {
	return &Error{Code: ECodeAssetInvalid, Message: fmt.Sprintf(format, args...)}
}

// checkAsset sniffs the kind of data from its bytes (never from a declared
// type or file name) and checks it as that kind.
func checkAsset(data []byte) (c *checked, err error) {
	// The parsers below return errors for what they understand; a panic in
	// one is a hostile or broken file, refused like any other.
	defer func() {
		if r := recover(); r != nil {
			c, err = nil, errAsset("the file is damaged and cannot be read (%v)", r)
		}
	}()
	if len(data) == 0 {
		return nil, errAsset("the file is empty")
	}
	if len(data) > MaxAssetBytes {
		return nil, errTooLarge(len(data), MaxAssetBytes, "an asset")
	}
	head := data[:min(len(data), 16)]
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")), bytes.HasPrefix(head, []byte("\xff\xd8\xff")):
		return checkRaster(data)
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return checkRaster(data)
	case bytes.HasPrefix(head, []byte("%PDF-")):
		return checkPDF(data)
	case bytes.HasPrefix(head, []byte("\x00\x01\x00\x00")), bytes.HasPrefix(head, []byte("true")), bytes.HasPrefix(head, []byte("OTTO")):
		return checkFont(data)
	case bytes.HasPrefix(head, []byte("ttcf")):
		return nil, errAsset("font collections (.ttc, .otc) are not accepted: upload each font of the collection as its own .ttf or .otf file")
	case bytes.HasPrefix(head, []byte("wOFF")), bytes.HasPrefix(head, []byte("wOF2")):
		return nil, errAsset("web fonts (WOFF, WOFF2) are not accepted: upload the font as .ttf or .otf")
	case looksLikeXML(data):
		return checkSVG(data)
	}
	return nil, errAsset("the file is not a PNG, JPEG, WebP or SVG image, a TTF or OTF font, or a PDF (its type is read from its first bytes)")
}

func errTooLarge(size, limit int, what string) *Error {
	return (&Error{Code: ECodeAssetTooLarge, Message: fmt.Sprintf("the file is %s; %s may be at most %s", sizeText(int64(size)), what, sizeText(int64(limit)))}).
		WithInfo("maxBytes", limit, "actualBytes", size)
}

// sizeText writes a byte count for people: 512 bytes, 1.5 MB, 2 GB.
func sizeText(n int64) string {
	switch {
	case n < 1<<10:
		return Plural(n, "byte")
	case n < 1<<20:
		return trimZero(float64(n)/(1<<10)) + " KB"
	case n < 1<<30:
		return trimZero(float64(n)/(1<<20)) + " MB"
	}
	return trimZero(float64(n)/(1<<30)) + " GB"
}

func trimZero(f float64) string {
	return strings.TrimSuffix(strconv.FormatFloat(f, 'f', 1, 64), ".0")
}

// checkRaster checks a PNG, JPEG or WebP as a render will draw it.
func checkRaster(data []byte) (*checked, error) {
	if len(data) > MaxImageBytes {
		return nil, errTooLarge(len(data), MaxImageBytes, "an image")
	}
	info, err := render.CheckImage(data)
	if err != nil {
		return nil, errAsset("%s", upperFirst(err.Error()))
	}
	ct := "image/" + info.Format
	return &checked{kind: AssetImage, format: info.Format, contentType: ct, width: info.Width, height: info.Height,
		decode: func() error { return render.DecodeImage(data) }, decodeCost: info.Cost}, nil
}

// checkPDF reads a PDF as attachBefore/attachAfter will (pdfmerge.Inspect,
// with pdfcpu): parsed and validated within bounds (20 MB, 500 pages,
// 200,000 objects, nesting 64, 10 s), not encrypted, without active
// content, and merged and written once on trial. A panic inside the
// library is a refusal (checkAsset recovers too).
func checkPDF(data []byte) (*checked, error) {
	if len(data) < 8 || !(data[5] == '1' || data[5] == '2') || data[6] != '.' {
		return nil, errAsset("the PDF header is not %%PDF-1.x or %%PDF-2.0")
	}
	tail := data[max(0, len(data)-1024):]
	if !bytes.Contains(tail, []byte("%%EOF")) {
		return nil, errAsset("the PDF has no %%%%EOF marker at its end: it is truncated or not a PDF")
	}
	if _, err := pdfmerge.Inspect(data); err != nil {
		return nil, errAsset("%s", upperFirst(err.Error()))
	}
	return &checked{kind: AssetPDF, format: "pdf", contentType: "application/pdf"}, nil
}

// looksLikeXML reports whether data starts (after a byte-order mark and
// white space) with markup.
func looksLikeXML(data []byte) bool {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	data = bytes.TrimLeft(data, " \t\r\n")
	return len(data) > 0 && data[0] == '<'
}

// svgForbidden are elements an SVG asset may not hold: scripts, other
// documents, and HTML.
var svgForbidden = map[string]bool{"script": true, "foreignobject": true, "iframe": true, "embed": true, "object": true, "handler": true, "listener": true}

// checkSVG reads an SVG completely: well-formed XML with an <svg> root,
// no DOCTYPE (so no entities), no scripts or event handlers, and no
// reference outside the file (href, xlink:href and CSS url() may name only
// "#fragments" in the file or data:image URIs).
func checkSVG(data []byte) (*checked, error) {
	if len(data) > MaxSVGBytes {
		return nil, errTooLarge(len(data), MaxSVGBytes, "an SVG image")
	}
	if !utf8.Valid(data) {
		return nil, errAsset("the SVG is not UTF-8 text")
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	dec.CharsetReader = func(label string, r io.Reader) (io.Reader, error) {
		if l := strings.ToLower(label); l == "utf-8" || l == "us-ascii" {
			return r, nil
		}
		return nil, fmt.Errorf("encoding %q is not supported, use UTF-8", label)
	}
	c := &checked{kind: AssetImage, format: "svg", contentType: "image/svg+xml"}
	depth, elements, root := 0, 0, false
	inStyle := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, errAsset("the SVG is not well-formed XML: %v", err)
		}
		switch t := tok.(type) {
		case xml.Directive:
			return nil, errAsset("the SVG holds a DOCTYPE or another <!...> declaration; remove it (entities and external DTDs are not accepted)")
		case xml.ProcInst:
			if t.Target != "xml" {
				return nil, errAsset("the SVG holds the processing instruction <?%s ...?>; remove it", clip(t.Target, 30))
			}
		case xml.StartElement:
			depth++
			elements++
			name := strings.ToLower(t.Name.Local)
			if depth == 1 {
				if name != "svg" {
					return nil, errAsset("the file is XML but its root element is <%s>, not <svg>", clip(t.Name.Local, 30))
				}
				root = true
				c.width, c.height = svgLength(t.Attr, "width"), svgLength(t.Attr, "height")
			}
			if depth > maxSVGDepth {
				return nil, errAsset("the SVG nests elements more than %d deep", maxSVGDepth)
			}
			if elements > maxSVGElements {
				return nil, errAsset("the SVG has more than %d elements", maxSVGElements)
			}
			if svgForbidden[name] {
				return nil, errAsset("the SVG holds a <%s> element; scripts and embedded documents are not accepted", t.Name.Local)
			}
			inStyle = name == "style"
			for _, a := range t.Attr {
				if err := checkSVGAttr(t.Name.Local, a); err != nil {
					return nil, err
				}
			}
		case xml.EndElement:
			depth--
			inStyle = false
		case xml.CharData:
			if inStyle {
				if err := checkCSS("<style>", string(t)); err != nil {
					return nil, err
				}
			}
		}
	}
	if !root {
		return nil, errAsset("the SVG has no <svg> element")
	}
	return c, nil
}

// checkSVGAttr refuses event handlers and references outside the file.
func checkSVGAttr(elem string, a xml.Attr) error {
	name := strings.ToLower(a.Name.Local)
	switch {
	case strings.HasPrefix(name, "on"):
		return errAsset("the SVG element <%s> has the event handler %s; scripts are not accepted", elem, a.Name.Local)
	case name == "href" || name == "src":
		v := strings.TrimSpace(a.Value)
		if !localRef(v) {
			return errAsset("the SVG element <%s> refers to %q; only #fragments in the file and data:image URIs are accepted", elem, clip(v, 60))
		}
	case name == "style":
		return checkCSS("<"+elem+"> style", a.Value)
	default:
		if strings.Contains(strings.ToLower(a.Value), "url(") {
			return checkCSS("<"+elem+"> "+a.Name.Local, a.Value)
		}
	}
	return nil
}

// localRef reports whether an SVG reference stays in the file.
func localRef(v string) bool {
	l := strings.ToLower(v)
	return v == "" || strings.HasPrefix(v, "#") ||
		strings.HasPrefix(l, "data:image/png;") || strings.HasPrefix(l, "data:image/jpeg;") || strings.HasPrefix(l, "data:image/webp;")
}

// checkCSS refuses style text that imports or fetches anything.
func checkCSS(where, css string) error {
	l := strings.ToLower(css)
	if strings.Contains(l, "@import") {
		return errAsset("the SVG's %s uses @import; only styles inside the file are accepted", where)
	}
	for rest := l; ; {
		i := strings.Index(rest, "url(")
		if i < 0 {
			return nil
		}
		rest = rest[i+4:]
		v := strings.Trim(strings.TrimSpace(rest), `"'`)
		if !localRef(v) {
			end := strings.IndexAny(rest, ")")
			if end < 0 {
				end = len(rest)
			}
			return errAsset("the SVG's %s refers to url(%s); only #fragments in the file and data:image URIs are accepted", where, clip(strings.TrimSpace(rest[:end]), 60))
		}
	}
}

// svgLength reads a width or height attribute in user units (px), 0 when
// absent or relative.
func svgLength(attrs []xml.Attr, name string) int {
	for _, a := range attrs {
		if a.Name.Local == name {
			v := strings.TrimSuffix(strings.TrimSpace(a.Value), "px")
			if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 && f < 1e6 {
				return int(f + 0.5)
			}
		}
	}
	return 0
}

// FontInfo describes a font asset: what the text engine matches a
// fontFamily and style against.
type FontInfo struct {
	Family string `json:"family"`
	// Style is "normal" or "italic"; Weight is 100-900 (400 regular, 700 bold).
	Style  string `json:"style"`
	Weight int    `json:"weight"`
	Glyphs int    `json:"glyphs"`
	// Outlines is "truetype" (glyf) or "cff" (PostScript outlines).
	Outlines string `json:"outlines"`
}

// checkFont parses a TTF or OTF font completely enough that the text
// engine will not fail on it later: the tables a renderer reads (cmap,
// head, hhea and hmtx, maxp, name, and glyf/loca or CFF) must be present
// and parse, every glyph's outline must load, and a short text must shape.
func checkFont(data []byte) (*checked, error) {
	ld, err := ot.NewLoader(bytes.NewReader(data))
	if err != nil {
		return nil, errAsset("the font cannot be read: %v", err)
	}
	need := []string{"cmap", "head", "hhea", "hmtx", "maxp", "name"}
	for _, tag := range need {
		if !ld.HasTable(ot.MustNewTag(tag)) {
			return nil, errAsset("the font has no %q table, which every font needs; it is damaged or not a complete font", tag)
		}
	}
	raw := func(tag string) []byte {
		b, _ := ld.RawTable(ot.MustNewTag(tag))
		return b
	}
	head, _, err := tables.ParseHead(raw("head"))
	if err != nil {
		return nil, errAsset("the font's head table cannot be read: %v", err)
	}
	if u := head.UnitsPerEm; u < 16 || u > 16384 {
		return nil, errAsset("the font's units per em is %d; fonts use 16 to 16384", u)
	}
	maxp, _, err := tables.ParseMaxp(raw("maxp"))
	if err != nil {
		return nil, errAsset("the font's maxp table cannot be read: %v", err)
	}
	glyphs := int(maxp.NumGlyphs)
	if glyphs < 1 || glyphs > maxFontGlyphs {
		return nil, errAsset("the font declares %d glyphs", glyphs)
	}
	hhea, _, err := tables.ParseHhea(raw("hhea"))
	if err != nil {
		return nil, errAsset("the font's hhea table cannot be read: %v", err)
	}
	if n := int(hhea.NumOfLongMetrics); n < 1 || n > glyphs {
		return nil, errAsset("the font's hhea table declares %d metrics for %d glyphs", n, glyphs)
	}
	if _, _, err := tables.ParseHmtx(raw("hmtx"), int(hhea.NumOfLongMetrics), glyphs-int(hhea.NumOfLongMetrics)); err != nil {
		return nil, errAsset("the font's hmtx table (glyph widths) cannot be read: %v", err)
	}
	outlines := ""
	switch {
	case ld.HasTable(ot.MustNewTag("glyf")):
		loca, err := tables.ParseLoca(raw("loca"), glyphs, head.IndexToLocFormat == 1)
		if err != nil || len(loca) == 0 {
			return nil, errAsset("the font's loca table (glyph offsets) cannot be read: %v", err)
		}
		if _, err := tables.ParseGlyf(raw("glyf"), loca); err != nil {
			return nil, errAsset("the font's glyf table (outlines) cannot be read: %v", err)
		}
		outlines = "truetype"
	case ld.HasTable(ot.MustNewTag("CFF ")):
		outlines = "cff"
	case ld.HasTable(ot.MustNewTag("CFF2")):
		return nil, errAsset("the font has variable PostScript outlines (CFF2), which documents cannot embed yet; upload a static OTF or a TTF of it")
	default:
		return nil, errAsset("the font has no outlines (no glyf or CFF table); bitmap-only and colour-only fonts are not accepted")
	}
	if _, _, err := tables.ParseName(raw("name")); err != nil {
		return nil, errAsset("the font's name table cannot be read: %v", err)
	}
	f, err := font.NewFont(ld)
	if err != nil {
		return nil, errAsset("the font cannot be read: %v", err)
	}
	desc := f.Describe()
	family := strings.TrimSpace(desc.Family)
	if family == "" || !utf8.ValidString(family) {
		return nil, errAsset("the font has no family name in its name table")
	}
	face := font.NewFace(f)
	// Every glyph once: the outline and advance a renderer will ask for.
	for gid := 0; gid < glyphs; gid++ {
		face.HorizontalAdvance(font.GID(gid))
		if _, ok := face.GlyphDataOutline(font.GID(gid)); !ok {
			return nil, errAsset("the outline of glyph %d of the font cannot be read; the font is damaged", gid)
		}
	}
	// A cmap's ranges may span the whole code space: look at a bounded
	// number of characters for one that maps to a glyph.
	mapped := 0
	it := f.Cmap.Iter()
	for n := 0; n < 1<<16 && mapped == 0 && it.Next(); n++ {
		r, _ := it.Char()
		if gid, ok := face.NominalGlyph(r); ok && int(gid) < glyphs {
			mapped++
		}
	}
	if mapped == 0 {
		return nil, errAsset("the font maps no characters to glyphs (its cmap table is empty)")
	}
	if err := shapeSample(face); err != nil {
		return nil, errAsset("the font cannot shape text: %v", err)
	}
	if family = clip(family, 120); len(family) == 0 {
		family = "font"
	}
	style := "normal"
	if desc.Aspect.Style == font.StyleItalic {
		style = "italic"
	}
	weight := int(desc.Aspect.Weight)
	if weight < 1 || weight > 1000 { // OpenType's range; anything else is a damaged OS/2 table
		weight = 400
	}
	format, ct := "ttf", "font/ttf"
	if outlines == "cff" {
		format, ct = "otf", "font/otf"
	}
	return &checked{kind: AssetFont, format: format, contentType: ct,
		font: &FontInfo{Family: family, Style: style, Weight: weight, Glyphs: glyphs, Outlines: outlines}}, nil
}

// shapeSample shapes a short Latin text with the font, as the text engine
// will: a damaged layout table (GSUB, GPOS, kern) shows here.
func shapeSample(face *font.Face) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	text := []rune("Folio Invoice 1,234.56 fi ffl AV Wa \u00e9\u00df")
	out := (&shaping.HarfbuzzShaper{}).Shape(shaping.Input{Text: text, RunEnd: len(text), Direction: di.DirectionLTR,
		Face: face, Size: fixed.I(12), Script: language.Latin, Language: language.NewLanguage("en")})
	if len(out.Glyphs) == 0 {
		return fmt.Errorf("no glyphs came out")
	}
	return nil
}

// upperFirst capitalises a message from another layer.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return strings.ToUpper(string(r)) + s[n:]
}

// clip shortens s to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
