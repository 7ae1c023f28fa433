package render

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"

	"github.com/go-pdf/fpdf"
)

// Layout constants, in millimetres unless named otherwise.
const (
	lineSpacing    = 1.25 // line height as a multiple of the font size
	pointInMM      = 25.4 / 72
	textAfter      = 1.5
	headingBefore  = 3
	headingAfter   = 2
	headerGap      = 4 // between the header and the body
	footerGap      = 4 // between the body and the footer
	pageCountAlias = "{nb}"
)

// fixedDate is written as the PDF's creation date when Options.Created is
// zero: render has no clock, and a fixed date keeps output reproducible.
var fixedDate = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// pdfWriter lays out one PDF document.
type pdfWriter struct {
	*run
	t        *Template
	f        *fpdf.Fpdf
	values   map[string]any // the evaluation environment of the body
	headers  []*component
	footers  []*component
	pageW    float64
	pageH    float64
	m        margins
	contentW float64
	bottom   float64 // lowest y body lines may reach
	bodyTop  float64 // y where the body starts on the current page
	pages    any     // the value of "pages" in headers and footers
	err      error   // first error raised inside an fpdf callback
}

// textBlock is laid-out text: its lines already fit the content width.
type textBlock struct {
	lines         []string
	style         textStyle
	lineH         float64
	before, after float64
}

func (b *textBlock) height(first bool) float64 {
	h := float64(len(b.lines))*b.lineH + b.after
	if !first {
		h += b.before
	}
	return h
}

func (t *Template) renderPDF(ctx context.Context, w io.Writer, values map[string]any, limits Limits, created time.Time) (Stats, error) {
	var pages any
	if t.pagesInExpression {
		// A header or footer computes with the page total: count the pages first.
		first, err := t.layoutPDF(ctx, values, limits, created, 0)
		if err != nil {
			return Stats{}, err
		}
		pages = first.f.PageNo()
	}
	p, err := t.layoutPDF(ctx, values, limits, created, pages)
	if err != nil {
		return Stats{}, err
	}
	var buf bytes.Buffer
	if err := p.f.Output(&buf); err != nil {
		return Stats{}, fmt.Errorf("render: writing PDF: %w", err)
	}
	if p.err != nil { // raised by the last footer, drawn on Output
		return Stats{}, p.err
	}
	if int64(buf.Len()) > limits.Bytes {
		return Stats{}, newLimitError(LimitBytes, int64(buf.Len()), limits.Bytes)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return Stats{}, err
	}
	return Stats{Pages: p.f.PageNo(), Bytes: int64(buf.Len())}, nil
}

// layoutPDF draws every page; pages is the "pages" value for headers and
// footers, or nil to use fpdf's page-count alias.
func (t *Template) layoutPDF(ctx context.Context, values map[string]any, limits Limits, created time.Time, pages any) (*pdfWriter, error) {
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
		headers: componentsOf(doc.sectionsWithRole(roleHeader)),
		footers: componentsOf(doc.sectionsWithRole(roleFooter)),
		m:       doc.margins,
		pages:   pages,
	}
	p.values = p.ev.env(values, 0)
	p.pageW, p.pageH = f.GetPageSize()
	p.contentW = p.pageW - p.m.left - p.m.right

	if created.IsZero() {
		created = fixedDate
	}
	f.SetCreationDate(created)
	f.SetModificationDate(created)
	f.SetCatalogSort(true)
	f.SetProducer("Folio", true)
	f.SetMargins(p.m.left, p.m.top, p.m.right)
	f.SetAutoPageBreak(false, p.m.bottom)
	f.SetCellMargin(0)
	for _, s := range fpdfStyles {
		if t.styles&s.bit != 0 {
			f.AddUTF8FontFromBytes(fontFamily, s.name, t.engine.fonts[s.bit])
		}
	}
	if pages == nil && (len(p.headers) > 0 || len(p.footers) > 0) {
		f.AliasNbPages(pageCountAlias)
		p.pages = pageCountAlias
	}
	f.SetFont(fontFamily, "", defaultFontSize)
	if f.Err() {
		return nil, fmt.Errorf("render: preparing PDF: %w", f.Error())
	}

	footerH, err := p.blocksHeight(p.footers, p.pageEnv(1))
	if err != nil {
		return nil, err
	}
	p.bottom = p.pageH - p.m.bottom
	if footerH > 0 {
		p.bottom -= footerH + footerGap
	}
	f.SetHeaderFuncMode(p.header, false)
	f.SetFooterFunc(p.footer)

	if err := p.newPage(); err != nil {
		return nil, err
	}
	for _, s := range doc.sectionsWithRole(roleBody) {
		if err := p.walk(s.components, p.values, p.flowComponent); err != nil {
			return nil, err
		}
	}
	if f.Err() {
		return nil, fmt.Errorf("render: drawing PDF: %w", f.Error())
	}
	return p, nil
}

func componentsOf(sections []*section) []*component {
	var out []*component
	for _, s := range sections {
		out = append(out, s.components...)
	}
	return out
}

// pageEnv is the environment of headers and footers: the values plus
// "page" and "pages".
func (p *pdfWriter) pageEnv(page int) map[string]any {
	env := make(map[string]any, len(p.values)+2)
	for k, v := range p.values {
		env[k] = v
	}
	env["page"] = page
	env["pages"] = p.pages
	return env
}

// newPage starts a page, refusing to go past the page limit.
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
	p.bodyTop = p.f.GetY()
	return nil
}

// header draws the header sections at the top margin (fpdf callback).
func (p *pdfWriter) header() {
	if p.err != nil || len(p.headers) == 0 {
		return
	}
	blocks, err := p.layoutBlocks(p.headers, p.pageEnv(p.f.PageNo()))
	if err != nil {
		p.err = err
		return
	}
	y := p.drawBlocks(blocks, p.m.top)
	p.f.SetY(y + headerGap)
}

// footer draws the footer sections so they end at the bottom margin (fpdf callback).
func (p *pdfWriter) footer() {
	if p.err != nil || len(p.footers) == 0 {
		return
	}
	blocks, err := p.layoutBlocks(p.footers, p.pageEnv(p.f.PageNo()))
	if err != nil {
		p.err = err
		return
	}
	h := 0.0
	for i, b := range blocks {
		h += b.height(i == 0)
	}
	p.drawBlocks(blocks, p.pageH-p.m.bottom-h)
}

// blocksHeight measures components drawn as a header or footer.
func (p *pdfWriter) blocksHeight(list []*component, env map[string]any) (float64, error) {
	blocks, err := p.layoutBlocks(list, env)
	if err != nil {
		return 0, err
	}
	h := 0.0
	for i, b := range blocks {
		h += b.height(i == 0)
	}
	return h, nil
}

func (p *pdfWriter) layoutBlocks(list []*component, env map[string]any) ([]*textBlock, error) {
	var blocks []*textBlock
	err := p.walk(list, env, func(c *component, env map[string]any) error {
		b, err := p.layout(c, env)
		if b != nil {
			blocks = append(blocks, b)
		}
		return err
	})
	return blocks, err
}

// drawBlocks draws blocks from y down without page breaks; it returns the
// y below the last one.
func (p *pdfWriter) drawBlocks(blocks []*textBlock, y float64) float64 {
	for i, b := range blocks {
		if i > 0 {
			y += b.before
		}
		for _, line := range b.lines {
			p.drawLine(b, line, y)
			y += b.lineH
		}
		y += b.after
	}
	return y
}

// flowComponent draws a body component, breaking pages as it goes.
func (p *pdfWriter) flowComponent(c *component, env map[string]any) error {
	b, err := p.layout(c, env)
	if err != nil || b == nil {
		return err
	}
	y := p.f.GetY()
	if y > p.bodyTop {
		y += b.before
	}
	for _, line := range b.lines {
		if y+b.lineH > p.bottom && y > p.bodyTop {
			if err := p.newPage(); err != nil {
				return err
			}
			y = p.bodyTop
		}
		p.drawLine(b, line, y)
		y += b.lineH
	}
	p.f.SetY(y + b.after)
	return p.err
}

// layout evaluates a component and wraps its text; it returns nil for
// components that draw nothing.
func (p *pdfWriter) layout(c *component, env map[string]any) (*textBlock, error) {
	var (
		tt            *textTemplate
		st            textStyle
		before, after float64
	)
	switch e := c.elem.(type) {
	case *textElement:
		tt, st, after = e.content, e.style, textAfter
	case *headingElement:
		tt, st, before, after = e.content, e.style, headingBefore, headingAfter
	default:
		return nil, nil
	}
	text, err := tt.render(p.ev, env)
	if err != nil {
		return nil, err
	}
	text = pdfText(text)
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	p.setFont(st)
	return &textBlock{
		lines:  p.f.SplitText(text, p.contentW),
		style:  st,
		lineH:  st.size * pointInMM * lineSpacing,
		before: before,
		after:  after,
	}, nil
}

func (p *pdfWriter) setFont(st textStyle) {
	bit := styleOf(st.bold, st.italic)
	name := ""
	for _, s := range fpdfStyles {
		if s.bit == bit && p.t.styles&bit != 0 {
			name = s.name
		}
	}
	p.f.SetFont(fontFamily, name, st.size)
}

func (p *pdfWriter) drawLine(b *textBlock, line string, y float64) {
	p.setFont(b.style)
	p.f.SetTextColor(b.style.color[0], b.style.color[1], b.style.color[2])
	p.f.SetXY(p.m.left, y)
	p.f.CellFormat(p.contentW, b.lineH, line, "", 0, b.style.align, false, 0, "")
}

// pdfText makes text safe for fpdf's UTF-8 fonts: line breaks become "\n",
// tabs spaces, other control characters disappear, and characters outside
// the Basic Multilingual Plane (which fpdf cannot measure) become U+FFFD.
func pdfText(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	clean := true
	for _, r := range s {
		if r >= 0xFFFE || (r < 0x20 && r != '\n') || unicode.IsControl(r) && r != '\n' {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
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
		case r >= 0xFFFE:
			b.WriteRune(unicode.ReplacementChar)
		case unicode.IsControl(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
