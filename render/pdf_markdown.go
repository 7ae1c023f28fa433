package render

import (
	"strings"

	"folio/render/text"
)

// Markdown geometry, in millimetres.
const (
	listIndent  = 6   // each list level
	quoteIndent = 5   // each block quote level
	quoteBar    = 0.8 // the bar left of quoted text
	mdCellPad   = 1.5 // inside table cells
	monoFamily  = "Noto Sans Mono"
	codeScale   = 0.9 // code blocks' size against the text's
)

// mdHeadingScale is the size of Markdown heading levels 1 to 6 against
// the component's text size.
var mdHeadingScale = [...]float64{1: 1.8, 2: 1.45, 3: 1.2, 4: 1.05, 5: 1, 6: 0.95}

// Colours of Markdown decorations.
var (
	linkColor  = [3]int{0x1a, 0x5f, 0xb4}
	codeFill   = [3]int{0xee, 0xee, 0xee}
	quoteColor = [3]int{0xcc, 0xcc, 0xcc}
	ruleColor  = [3]int{0xbb, 0xbb, 0xbb}
	headerFill = [3]int{0xf0, 0xf0, 0xf0}
)

// richLook is how the runs of one span are drawn (text.Span.Tag indexes
// a paragraph's looks).
type richLook struct {
	link         string // destination; "" for none
	code, strike bool
}

// richText is a paragraph made ready for the text path: its spans and
// the look of each.
type richText struct {
	spans []text.Span
	looks []richLook
}

// mono returns the family code is drawn in: the monospaced family when
// the engine has it, else the text's own.
func (p *pdfWriter) mono(st textStyle) string {
	if _, ok := p.fonts.Family(monoFamily); ok {
		return monoFamily
	}
	return st.family
}

// rich turns Markdown spans into text spans in style st.
func (p *pdfWriter) rich(spans []mdSpan, st textStyle) richText {
	var rt richText
	for _, sp := range spans {
		fam := st.family
		if sp.code {
			fam = p.mono(st)
		}
		rt.spans = append(rt.spans, text.Span{Text: sp.text, Family: fam, Style: text.StyleOf(st.bold || sp.bold, st.italic || sp.italic), Tag: len(rt.looks)})
		rt.looks = append(rt.looks, richLook{link: sp.link, code: sp.code, strike: sp.strike})
	}
	return rt
}

// splitRich lays a rich paragraph out in lines no wider than width.
func (p *pdfWriter) splitRich(rt richText, st textStyle, width float64) []text.Line {
	maxLines := p.limits.Pages*int(p.pageH/lineHeight(st)+1) + 1
	return p.fonts.LayoutSpans(rt.spans, float32(width/(st.size*pointInMM)*1000), maxLines)
}

// layoutMarkdown lays out a Markdown component.
func (p *pdfWriter) layoutMarkdown(c *component, e *markdownElement, env map[string]any, w float64, s sink) error {
	blocks, err := e.markdownBlocks(p.run, c, env)
	if err != nil || len(blocks) == 0 {
		return err
	}
	return p.layoutBlocks(blocks, e.style, w, s)
}

// layoutBlocks lays Markdown blocks out in style st, one box per line
// (and per table row), so they break across pages like any text.
func (p *pdfWriter) layoutBlocks(blocks []mdBlock, st textStyle, w float64, s sink) error {
	for i, b := range blocks {
		indent := float64(b.list)*listIndent + float64(b.quote)*quoteIndent
		indent = min(indent, w/2)
		bw := max(w-indent, 10)
		bridge := i+1 < len(blocks) && blocks[i+1].quote >= b.quote
		var boxes []*box
		switch b.kind {
		case mdPara:
			boxes = p.mdParagraph(b, st, bw, indent, lineGlue{defaultWidows, defaultWidows, false})
			gap := 0.45 * lineHeight(st)
			if b.tight && i+1 < len(blocks) && blocks[i+1].list > 0 {
				gap = 0.5
			}
			if len(boxes) > 0 {
				boxes[len(boxes)-1].after = gap
			}
		case mdHeading:
			hs := st
			hs.size = st.size * mdHeadingScale[b.level]
			hs.bold = true
			boxes = p.mdParagraph(b, hs, bw, indent, lineGlue{maxWidows, maxWidows, true})
			if len(boxes) > 0 {
				boxes[0].before = headingBefore
				boxes[len(boxes)-1].after = headingAfter
				p.markBox(boxes[0], mark{title: plainText(b.spans), level: b.level, anchor: slug(plainText(b.spans)), auto: true})
			}
		case mdRule:
			boxes = []*box{{w: w, h: 0.3, before: 3, after: 3, draw: func(x, y float64) {
				p.f.SetFillColor(ruleColor[0], ruleColor[1], ruleColor[2])
				p.f.Rect(x+indent, y, bw, 0.3, "F")
			}}}
		case mdCode:
			boxes = p.mdCode(b, st, bw, indent)
		case mdTable:
			boxes = p.mdTable(b, st, bw, indent)
		}
		if len(boxes) == 0 {
			continue
		}
		if b.quote > 0 {
			for k, bx := range boxes {
				p.quoteBars(bx, b.quote, k < len(boxes)-1 || bridge)
			}
		}
		if i == len(blocks)-1 {
			boxes[len(boxes)-1].after = max(boxes[len(boxes)-1].after, textAfter)
		}
		for _, bx := range boxes {
			if err := s.add(bx); err != nil {
				return err
			}
		}
	}
	return nil
}

// mdParagraph lays out a paragraph or heading at indent, with its list
// marker left of the first line.
func (p *pdfWriter) mdParagraph(b mdBlock, st textStyle, bw, indent float64, g lineGlue) []*box {
	rt := p.rich(b.spans, st)
	lines := p.splitRich(rt, st, bw)
	if len(b.spans) == 0 && b.marker == "" {
		return nil
	}
	lh := lineHeight(st)
	boxes := make([]*box, 0, len(lines))
	for i, line := range lines {
		line := line
		bx := &box{w: bw + indent, h: lh, glue: g.glued(i, len(lines))}
		first := i == 0
		bx.draw = func(x, y float64) {
			if first && b.marker != "" {
				ms := st
				ms.bold, ms.italic = false, false
				m := p.split(b.marker, ms, 0)[0]
				p.drawText(ms, m, x+indent-listIndent, y, listIndent-1.5, "R")
			}
			p.drawRich(st, line, rt.looks, x+indent, y, bw, st.align)
		}
		boxes = append(boxes, bx)
	}
	return boxes
}

// mdCode lays out a code block: monospaced lines on a grey ground.
func (p *pdfWriter) mdCode(b mdBlock, st textStyle, bw, indent float64) []*box {
	cs := st
	cs.size = st.size * codeScale
	cs.bold, cs.italic = false, false
	cs.family = p.mono(st)
	cs.align = "L"
	lh := lineHeight(cs)
	pad := 1.5
	var boxes []*box
	for _, src := range strings.Split(strings.ReplaceAll(b.code, "\t", "    "), "\n") {
		for _, line := range p.split(src, cs, bw-2*pad) {
			line := line
			boxes = append(boxes, &box{w: bw + indent, h: lh, draw: func(x, y float64) {
				p.f.SetFillColor(codeFill[0], codeFill[1], codeFill[2])
				p.f.Rect(x+indent, y, bw, lh, "F")
				p.drawText(cs, line, x+indent+pad, y, bw-2*pad, "L")
			}})
		}
	}
	if len(boxes) > 0 {
		boxes[0].before = 1
		boxes[len(boxes)-1].after = 0.45 * lineHeight(st)
	}
	return boxes
}

// quoteBars draws the bars of q block quote levels left of bx; bridge
// extends them over the space below it.
func (p *pdfWriter) quoteBars(bx *box, q int, bridge bool) {
	draw := bx.draw
	bx.draw = func(x, y float64) {
		h := bx.h
		if bridge {
			h += bx.after
		}
		p.f.SetFillColor(quoteColor[0], quoteColor[1], quoteColor[2])
		for k := 0; k < q; k++ {
			p.f.Rect(x+float64(k)*quoteIndent+1, y, quoteBar, h, "F")
		}
		if draw != nil {
			draw(x, y)
		}
	}
}

// mdTable lays out a GFM table: columns as wide as their content when
// that fits, else shared in proportion; one box per row, the header row
// repeated on every page the table reaches.
func (p *pdfWriter) mdTable(b mdBlock, st textStyle, bw, indent float64) []*box {
	cols := 0
	for _, row := range b.rows {
		cols = max(cols, len(row))
	}
	if cols == 0 {
		return nil
	}
	hs := st
	hs.bold = true
	natural := make([]float64, cols)
	for r, row := range b.rows {
		cst := st
		if r == 0 {
			cst = hs
		}
		for k, cell := range row {
			for _, l := range p.splitRich(p.rich(cell, cst), cst, 0) {
				natural[k] = max(natural[k], lineWidth(l, cst)+2*mdCellPad+0.5)
			}
		}
	}
	total := 0.0
	for k := range natural {
		natural[k] = max(natural[k], 8)
		total += natural[k]
	}
	widths := natural
	if total > bw {
		widths = make([]float64, cols)
		for k := range natural {
			widths[k] = bw * natural[k] / total
		}
		total = bw
	}
	lh := lineHeight(st)
	rowBox := func(row [][]mdSpan, cst textStyle, header bool) *box {
		cells := make([][]text.Line, cols)
		looks := make([][]richLook, cols)
		n := 1
		for k := 0; k < cols; k++ {
			var spans []mdSpan
			if k < len(row) {
				spans = row[k]
			}
			rt := p.rich(spans, cst)
			cells[k], looks[k] = p.splitRich(rt, cst, widths[k]-2*mdCellPad), rt.looks
			n = max(n, len(cells[k]))
		}
		h := float64(n)*lh + 2*mdCellPad
		return &box{w: bw + indent, h: h, draw: func(x, y float64) {
			x += indent
			if header {
				p.f.SetFillColor(headerFill[0], headerFill[1], headerFill[2])
				p.f.Rect(x, y, total, h, "F")
			}
			p.f.SetDrawColor(ruleColor[0], ruleColor[1], ruleColor[2])
			p.f.SetLineWidth(0.2)
			cx := x
			for k := 0; k < cols; k++ {
				p.f.Rect(cx, y, widths[k], h, "D")
				align := "L"
				if k < len(b.aligns) {
					align = b.aligns[k]
				}
				for j, line := range cells[k] {
					p.drawRich(cst, line, looks[k], cx+mdCellPad, y+mdCellPad+float64(j)*lh, widths[k]-2*mdCellPad, align)
				}
				cx += widths[k]
			}
		}}
	}
	head := rowBox(b.rows[0], hs, true)
	if len(b.rows) == 1 {
		head.before, head.after = 1, blockAfter
		return []*box{head}
	}
	var boxes []*box
	for r, row := range b.rows[1:] {
		bx := rowBox(row, st, false)
		bx.header = head
		bx.first = r == 0
		boxes = append(boxes, bx)
	}
	boxes[0].before = 1
	boxes[len(boxes)-1].after = blockAfter
	return boxes
}

// drawRich draws one line of a rich paragraph: each run in its span's
// look (code on a grey ground, links blue, underlined and clickable,
// struck-through text with a line through it).
func (p *pdfWriter) drawRich(st textStyle, line text.Line, looks []richLook, x, y, w float64, align string) {
	if len(line.Runs) == 0 {
		return
	}
	p.charge(int64(12*len(line.Text)) + textOpBytes)
	x = alignedX(line, st, x, w, align)
	lh := lineHeight(st)
	em := st.size * pointInMM
	baseline := y + lh/2 + 0.3*em
	for i := range line.Runs {
		r := &line.Runs[i]
		var look richLook
		if r.Tag >= 0 && r.Tag < len(looks) {
			look = looks[r.Tag]
		}
		rw := float64(r.Width) * st.size / 1000 * pointInMM
		if look.code {
			p.f.SetFillColor(codeFill[0], codeFill[1], codeFill[2])
			p.f.Rect(x, baseline-0.85*em, rw, 1.1*em, "F")
		}
		color := st.color
		if look.link != "" {
			color = linkColor
		}
		p.f.SetTextColor(color[0], color[1], color[2])
		p.showRun(r, st.size, x, baseline)
		if look.strike || look.link != "" {
			p.f.SetFillColor(color[0], color[1], color[2])
			if look.strike {
				p.f.Rect(x, baseline-0.3*em, rw, 0.05*em, "F")
			}
			if look.link != "" {
				p.f.Rect(x, baseline+0.1*em, rw, 0.05*em, "F")
				p.linkArea(look.link, x, y, rw, lh)
			}
		}
		x += rw
	}
}
