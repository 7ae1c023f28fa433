package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"

	"folio/render/internal/fpdf"
	"folio/render/text"
)

// Layout constants, in millimetres unless named otherwise.
const (
	lineSpacing    = 1.25 // line height as a multiple of the font size
	pointInMM      = 25.4 / 72
	textAfter      = 1.5
	headingBefore  = 3
	headingAfter   = 2
	blockAfter     = 3 // below tables, images, codes, key/value blocks and columns
	headerGap      = 4 // between the header and the body
	footerGap      = 4 // between the body and the footer
	pageCountAlias = "{nb}"
	epsilon        = 0.01
)

// fixedDate is written as the document's creation date when neither
// Options.Created nor the schema's metadata gives one: render has no
// clock, and a fixed date keeps output reproducible.
var fixedDate = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// pdfWriter lays out one PDF document.
type pdfWriter struct {
	*run
	t        *Template
	f        *fpdf.Fpdf
	values   map[string]any // the evaluation environment of the body
	headers  []*section
	footers  []*section
	body     *bodySink
	pageW    float64
	pageH    float64
	m        margins
	contentW float64
	bottom   float64        // lowest y body boxes may reach
	bodyTop  float64        // y where the body starts on the current page
	y        float64        // where the next body box goes
	pageEnd  float64        // lowest y drawn on by the body on the current page
	pages    any            // the value of "pages"
	total    int            // the page count from an earlier pass; 0 when not known
	err      error          // first error raised inside an fpdf callback
	images   map[any]string // embedded images (by SHA-256), QR codes and barcodes (by value)
	imgBytes int64
	decoded  map[string]*imageData // images decoded from data URIs and assets, by source
	assets   AssetResolver
	fetch    ImageFetcher        // image sources that are https URLs (Options.Fetch)
	vec      *vectorState        // SVG drawings and gradients (vector_pdf.go)
	qrs      map[string][][]bool // QR modules by level and value
	fonts    *text.Registry      // the families and fallbacks this document draws with
	glyphs   []fpdf.ShowGlyph    // reused by drawText
	counted  []countedLine       // lines showing the page count, drawn when it is known
	bars     map[string][]bool   // barcode modules by value
	links    *pdfLinks           // anchors, bookmarks and headings drawn (pdf_links.go)
	tocIn    []heading           // the headings a table of contents lists: the last pass's
	wm       *watermark          // stamped over the pages when they are done (watermark.go)
	// offset is what "page" adds to a generated page's number, and extra
	// what "pages" adds to their count: the pages attached before, and
	// before and after, when countAttachedPages is set (merge.go).
	offset, extra int
}

// shown is the number "page" shows on generated page n.
func (p *pdfWriter) shown(n int) int { return n + p.offset }

// headingsDrawn returns the headings the layout drew.
func (p *pdfWriter) headingsDrawn() []heading {
	if p.links == nil {
		return nil
	}
	return p.links.headings
}

// alignedX is where a line of width w's box starting at x begins: right or
// centre alignment move it, and a right-to-left line that no style aligned
// explicitly sits on the right.
func alignedX(line text.Line, st textStyle, x, w float64, align string) float64 {
	if line.RTL && !st.alignSet && align == "L" && st.align == "L" {
		align = "R"
	}
	switch lw := lineWidth(line, st); align {
	case "R":
		x += w - lw
	case "C":
		x += (w - lw) / 2
	}
	return x
}

// MaxLayoutPasses bounds how often a document whose layout depends on its
// own page count is laid out again to agree with it.
const MaxLayoutPasses = 3

// maxTOCPasses bounds the layout passes of a document with a table of
// contents: one to find the headings, one to make room for them, one to
// check, and one more should a page number's width move a line.
const maxTOCPasses = 4

func (t *Template) renderPDF(ctx context.Context, w io.Writer, values map[string]any, limits Limits, info docInfo) (Stats, error) {
	if err := info.loadAttachments(); err != nil {
		return Stats{}, err
	}
	merging := info
	if info.biz.attached != nil {
		// The merged file is encrypted, not the generated one (merge.go).
		info.biz.encrypt = nil
	}
	var pages any
	if t.pagesInExpression {
		// Something computes with the page total, or a header or footer is
		// drawn on the last page only: count the pages first, then lay out
		// again with the count until it agrees (a last-page footer can push
		// the end onto one more page).
		pages = 0
	}
	var p *pdfWriter
	err := t.layoutPDF(ctx, values, limits, info, pages, nil, &p)
	passes := MaxLayoutPasses
	if t.hasTOC {
		// A table of contents lists the headings of the pass before: the
		// first pass finds them, the next ones until the list agrees
		// with the pages (the contents take room, moving what follows).
		passes = maxTOCPasses
	}
	for pass := 1; err == nil && pass < passes; pass++ {
		settled := !t.pagesInExpression || pass > 1 && p.f.PageNo() == p.total
		if t.hasTOC && !sameHeadings(p.headingsDrawn(), p.tocIn) {
			settled = false
		}
		if settled {
			break
		}
		next := pages
		if t.pagesInExpression {
			next = p.f.PageNo()
		}
		err = t.layoutPDF(ctx, values, limits, info, next, p.headingsDrawn(), &p)
	}
	if err != nil {
		return p.stats(0), err
	}
	// fpdf assembles the file in a buffer of its own before writing it here.
	buf := &limitedBuffer{max: limits.Bytes, mem: &p.mem, copies: 2}
	if err := p.f.Output(buf); err != nil {
		if buf.over {
			return p.stats(buf.n), newLimitError(LimitBytes, buf.n, limits.Bytes)
		}
		if buf.err != nil {
			return p.stats(buf.n), buf.err
		}
		return p.stats(0), fmt.Errorf("render: writing PDF: %w", err)
	}
	if p.err != nil { // raised by the last footer, drawn on Output
		return p.stats(0), p.err
	}
	if buf.over {
		return p.stats(buf.n), newLimitError(LimitBytes, buf.n, limits.Bytes)
	}
	out := buf.Bytes()
	st := p.stats(int64(buf.Len()))
	if at := merging.biz.attached; at != nil {
		// pdfcpu holds each file parsed, and the merged one is written
		// beside the generated one.
		if err := p.mem.hold(4*(at.bytes+int64(len(out))) + 2*int64(len(out))); err != nil {
			return st, err
		}
		merged, err := merging.mergeAttached(out)
		if err != nil {
			return st, err
		}
		if int64(len(merged)) > limits.Bytes {
			return st, newLimitError(LimitBytes, int64(len(merged)), limits.Bytes)
		}
		out = merged
		st.Pages += at.pagesBefore + at.pagesAfter
		st.AttachedPagesBefore, st.AttachedPagesAfter = at.pagesBefore, at.pagesAfter
		st.Bytes = int64(len(out))
		st.Memory = p.mem.peak
	}
	if k, ok := w.(Keeper); ok {
		k.Keep(out) // out is this render's own buffer: no copy
	} else if _, err := w.Write(out); err != nil {
		return Stats{}, err
	}
	// The last pass was laid out with the count of the one before.
	st.PagesUnsettled = t.pagesInExpression && p.f.PageNo() != p.total ||
		t.hasTOC && !sameHeadings(p.headingsDrawn(), p.tocIn)
	return st, nil
}

// stats are the figures of the document as far as it got; p may be nil.
func (p *pdfWriter) stats(bytes int64) Stats {
	if p == nil {
		return Stats{}
	}
	return Stats{Pages: p.f.PageNo(), Images: len(p.images), Bytes: bytes, Memory: p.mem.peak}
}

// A Keeper is a writer that may keep the bytes it is given. Render hands a
// PDF's bytes, a buffer of that render's own that it no longer uses, to
// Keep instead of writing a copy of them: a caller that keeps the whole
// document in memory (a job's worker) saves an allocation and a copy of
// its size. Other formats, and writers that are not Keepers, get Write.
type Keeper interface {
	io.Writer
	Keep(b []byte)
}

// limitedBuffer collects output and fails once it grows past max bytes,
// or when its copies of the output exceed the render's memory budget.
type limitedBuffer struct {
	bytes.Buffer
	max    int64
	n      int64 // bytes offered, including refused ones
	over   bool
	mem    *memoryMeter // nil: not counted
	copies int64        // copies of the output held while it is written
	err    error        // the memory budget was exceeded
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.n += int64(len(p))
	if b.over || int64(b.Len()+len(p)) > b.max {
		b.over = true
		return 0, errOutputTooLarge
	}
	if b.mem != nil && b.err == nil {
		b.err = b.mem.hold(int64(len(p)) * max(b.copies, 1))
	}
	if b.err != nil {
		return 0, b.err
	}
	return b.Buffer.Write(p)
}

var errOutputTooLarge = errors.New("output too large")

// layoutPDF draws every page into *out; pages is the "pages" value, or nil
// to use fpdf's page-count alias. *out is set as soon as the writer exists,
// so the figures reached are known when a limit stops the layout.
func (t *Template) layoutPDF(ctx context.Context, values map[string]any, limits Limits, info docInfo, pages any, toc []heading, out **pdfWriter) error {
	doc := t.doc
	orientation := "P"
	if doc.orientation == "landscape" {
		orientation = "L"
	}
	f := fpdf.NewCustom(&fpdf.InitType{OrientationStr: orientation, UnitStr: "mm", SizeStr: doc.pageSize})
	p := &pdfWriter{
		run:     newRun(ctx, limits),
		t:       t,
		f:       f,
		headers: t.headerSections,
		footers: t.footerSections,
		m:       doc.margins,
		pages:   pages,
		images:  map[any]string{},
		decoded: map[string]*imageData{},
		assets:  info.assets,
		fetch:   info.fetch,
		qrs:     map[string][][]bool{},
		fonts:   t.engine.fonts,
		bars:    map[string][]bool{},
		tocIn:   toc,
	}
	*out = p
	p.offset, p.extra = info.biz.pageOffsets()
	if n, ok := pages.(int); ok {
		p.total = n
		p.pages = n + p.extra
	}
	p.values = p.ev.env(values, 2)
	p.pageW, p.pageH = f.GetPageSize()
	p.contentW = p.pageW - p.m.left - p.m.right

	f.SetCreationDate(info.created)
	f.SetModificationDate(info.biz.modified)
	f.SetCatalogSort(true)
	f.SetProducer("Folio", true)
	f.SetCreator("Folio", true)
	if info.title != "" {
		f.SetTitle(info.title, true)
	}
	if info.author != "" {
		f.SetAuthor(info.author, true)
	}
	if info.subject != "" {
		f.SetSubject(info.subject, true)
	}
	if info.keywords != "" {
		f.SetKeywords(info.keywords, true)
	}
	if info.language != "" {
		f.SetLang(info.language)
	}
	if err := p.applyBusiness(info); err != nil {
		return err
	}
	f.SetMargins(p.m.left, p.m.top, p.m.right)
	f.SetAutoPageBreak(false, p.m.bottom)
	f.SetCellMargin(0)
	if pages == nil && t.usesPages {
		f.AliasNbPages(pageCountAlias)
		p.pages = pageCountAlias
	}
	// The body sees "page" (updated as pages start) and "pages" too.
	p.values["pages"] = p.pages
	if f.Err() {
		return fmt.Errorf("render: preparing PDF: %w", f.Error())
	}

	f.SetCloseHook(func() { p.drawCounted(); p.drawWatermark() })
	f.SetHeaderFuncMode(p.header, false)
	f.SetFooterFunc(p.footer)

	if err := p.newPage(); err != nil {
		return err
	}
	p.body = &bodySink{p: p}
	for _, s := range t.body {
		err := p.walk(s.components, p.values, func(c *component, env map[string]any) error {
			return p.emitBody(c, env)
		})
		if err != nil {
			return err
		}
	}
	if err := p.endBody(); err != nil {
		return err
	}
	if f.Err() {
		return fmt.Errorf("render: drawing PDF: %w", f.Error())
	}
	return nil
}

// pageEnv is the environment of headers and footers: the values plus
// "page" and "pages".
func (p *pdfWriter) pageEnv(page int) map[string]any {
	env := make(map[string]any, len(p.values)+2)
	for k, v := range p.values {
		env[k] = v
	}
	env["page"] = p.shown(page)
	env["pages"] = p.pages
	return env
}

// maxMarginalHeight is the most a header or a footer may take: a third of
// the space between the margins. Anything taller is cut off.
func (p *pdfWriter) maxMarginalHeight() float64 {
	return (p.pageH - p.m.top - p.m.bottom) / 3
}

// newPage starts a page, refusing to go past the page limit. The body
// ends above the footer drawn on that page.
func (p *pdfWriter) newPage() error {
	if n := p.f.PageNo(); n >= p.limits.Pages {
		return newLimitError(LimitPages, int64(n+1), int64(p.limits.Pages))
	}
	if err := p.ctx.Err(); err != nil {
		return err
	}
	p.f.AddPage()
	if p.err != nil {
		return p.err
	}
	n := p.f.PageNo()
	p.values["page"] = p.shown(n)
	p.bodyTop = p.f.GetY()
	p.y = p.bodyTop
	p.pageEnd = p.bodyTop
	h, err := p.footerHeight(n, p.total)
	if err != nil {
		return err
	}
	p.bottom = p.pageH - p.m.bottom - h
	return nil
}

// marginals returns the components of the header or footer sections drawn
// on page n of pages (0: not known).
func marginals(secs []*section, n, pages int) []*component {
	var out []*component
	for _, s := range secs {
		if s.shownOn(n, pages) {
			out = append(out, s.components...)
		}
	}
	return out
}

// footerHeight is the room the footer of page n takes above the bottom
// margin, with the gap to the body.
func (p *pdfWriter) footerHeight(n, pages int) (float64, error) {
	list := marginals(p.footers, n, pages)
	if len(list) == 0 {
		return 0, nil
	}
	boxes, err := p.collectMarginal(list, p.pageEnv(n))
	if err != nil {
		return 0, err
	}
	if h := min(seqHeight(boxes), p.maxMarginalHeight()); h > 0 {
		return h + footerGap, nil
	}
	return 0, nil
}

// endBody places what the body still holds back and makes sure the footer
// of the last page has room: when the last page's footer (a section drawn
// "on": "last") is taller than the body leaves free, it goes on a page of
// its own.
func (p *pdfWriter) endBody() error {
	if err := p.body.flush(); err != nil {
		return err
	}
	n := p.f.PageNo()
	h, err := p.footerHeight(n, n)
	if err != nil {
		return err
	}
	if p.pageEnd > p.pageH-p.m.bottom-h+epsilon && p.pageEnd > p.bodyTop+epsilon {
		return p.newPage()
	}
	return nil
}

// header draws the header sections at the top margin (fpdf callback).
func (p *pdfWriter) header() {
	p.f.SetY(p.m.top)
	list := marginals(p.headers, p.f.PageNo(), p.total)
	if p.err != nil || len(list) == 0 {
		return
	}
	boxes, err := p.collectMarginal(list, p.pageEnv(p.f.PageNo()))
	if err != nil {
		p.err = err
		return
	}
	h := min(seqHeight(boxes), p.maxMarginalHeight())
	p.clipped(p.m.left, p.m.top, p.contentW, h, seqHeight(boxes) > h+epsilon, func() {
		p.drawSeq(boxes, p.m.left, p.m.top)
	})
	if h > 0 {
		p.f.SetY(p.m.top + h + headerGap)
	}
}

// footer draws the footer sections so they end at the bottom margin (fpdf callback).
func (p *pdfWriter) footer() {
	list := marginals(p.footers, p.f.PageNo(), p.total)
	if p.err != nil || len(list) == 0 {
		return
	}
	boxes, err := p.collectMarginal(list, p.pageEnv(p.f.PageNo()))
	if err != nil {
		p.err = err
		return
	}
	full := seqHeight(boxes)
	h := min(full, p.maxMarginalHeight())
	top := p.pageH - p.m.bottom - h
	p.clipped(p.m.left, top, p.contentW, h, full > h+epsilon, func() {
		p.drawSeq(boxes, p.m.left, top)
	})
}

// textStyle helpers shared by the component layouts.

// lineHeight is the height of one line of text in style st.
func lineHeight(st textStyle) float64 { return st.size * pointInMM * lineSpacing }

// split lays text out in lines no wider than width (millimetres) in style
// st, through the one text path (fonts, fallback, bidi, shaping, UAX #14
// line breaking); it always returns at least one line.
func (p *pdfWriter) split(s string, st textStyle, width float64) []text.Line {
	// No document holds more lines than its page limit allows.
	maxLines := p.limits.Pages*int(p.pageH/lineHeight(st)+1) + 1
	return p.fonts.LayoutMax(s, st.family, text.StyleOf(st.bold, st.italic), float32(width/(st.size*pointInMM)*1000), maxLines)
}

// lineWidth is the width of a laid-out line in millimetres.
func lineWidth(l text.Line, st textStyle) float64 { return l.WidthAt(st.size) * pointInMM }

// drawText draws one laid-out line in a cell of width w whose top is y.
// A right-to-left paragraph whose style does not set an alignment is
// aligned right.
func (p *pdfWriter) drawText(st textStyle, line text.Line, x, y, w float64, align string) {
	if len(line.Runs) == 0 {
		return
	}
	p.charge(int64(12*len(line.Text)) + textOpBytes)
	if p.pages == pageCountAlias && strings.Contains(line.Text, pageCountAlias) {
		// The page count is known once every page is laid out.
		p.counted = append(p.counted, countedLine{p.f.PageNo(), st, line.Text, x, y, w, align})
		return
	}
	x = alignedX(line, st, x, w, align)
	p.f.SetTextColor(st.color[0], st.color[1], st.color[2])
	baseline := y + lineHeight(st)/2 + 0.3*st.size*pointInMM
	if st.link != "" {
		p.linkArea(st.link, x, y, lineWidth(line, st), lineHeight(st))
	}
	for i := range line.Runs {
		r := &line.Runs[i]
		p.showRun(r, st.size, x, baseline)
		x += float64(r.Width) * st.size / 1000 * pointInMM
	}
}

// showRun draws the glyphs of one run at size from x on the baseline.
func (p *pdfWriter) showRun(r *text.Run, size, x, baseline float64) {
	p.glyphs = p.glyphs[:0]
	var text []rune
	seen := -1
	for _, g := range r.Glyph {
		if g.Cluster != seen {
			text, seen = r.ClusterRunes(g), g.Cluster
			if r.RTL && g.Runes > 1 {
				// A ligature of right-to-left letters (lam-alef):
				// readers spread its characters left to right over
				// the glyph, then reorder the line by direction.
				text = reverseRunes(text)
			}
		}
		p.glyphs = append(p.glyphs, fpdf.ShowGlyph{ID: g.ID, Advance: float64(g.Advance), XOffset: float64(g.XOffset),
			YOffset: float64(g.YOffset), Cluster: g.Cluster, Text: text})
	}
	p.f.ShowGlyphs(pdfFace{r.Face}, size, x, baseline, p.glyphs)
}

// pdfText makes text safe for fpdf's UTF-8 fonts: line breaks become "\n",
// tabs spaces, other control characters disappear, and characters outside
// noncharacters U+FFFE and U+FFFF become U+FFFD.
func pdfText(s string) string {
	clean := true
	for _, r := range s {
		if r == 0xFFFE || r == 0xFFFF || (r < 0x20 && r != '\n') || unicode.IsControl(r) && r != '\n' {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteRune(r)
		case r == '\r' || r == '\v' || r == '\f':
			b.WriteByte('\n')
		case r == '\t':
			b.WriteByte(' ')
		case r == 0xFFFE || r == 0xFFFF:
			b.WriteRune(unicode.ReplacementChar)
		case unicode.IsControl(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Estimated bytes of PDF page content per drawing operation, counted
// against the memory budget as pages are drawn.
const (
	textOpBytes = 96 // one line of text: position, font, colour, show
	rectOpBytes = 40 // one rectangle
)

// charge counts page content against the memory budget; it is called
// while drawing, so an exceeded budget is kept in p.err.
func (p *pdfWriter) charge(n int64) {
	if err := p.mem.hold(n); err != nil && p.err == nil {
		p.err = err
	}
}

// pdfFace draws a text.Face through fpdf's glyph fonts.
type pdfFace struct{ *text.Face }

func (f pdfFace) Metrics() fpdf.GlyphFontMetrics { return fpdf.GlyphFontMetrics(f.Face.Metrics()) }

// countedLine is a line that shows the page count ({{pages}} read alone),
// drawn once the count is known.
type countedLine struct {
	page    int
	st      textStyle
	text    string
	x, y, w float64
	align   string
}

// drawCounted draws the lines showing the page count (fpdf close hook).
func (p *pdfWriter) drawCounted() {
	last := p.f.PageNo()
	total := strconv.Itoa(last + p.extra)
	for _, c := range p.counted {
		p.f.SetPage(c.page)
		p.f.SetTextColor(c.st.color[0], c.st.color[1], c.st.color[2])
		p.f.RawWriteStr("q " + p.f.TextColorOp())
		line := p.split(strings.ReplaceAll(c.text, pageCountAlias, total), c.st, 0)[0]
		p.drawText(c.st, line, c.x, c.y, c.w, c.align)
		p.f.RawWriteStr("Q")
	}
	p.counted = nil
	p.f.SetPage(last)
}

func reverseRunes(s []rune) []rune {
	rs := make([]rune, len(s))
	for i, r := range s {
		rs[len(s)-1-i] = r
	}
	return rs
}
