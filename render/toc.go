package render

import (
	"strconv"
	"strings"
)

// tocElement is a table of contents: the document's headings (heading
// components and Markdown headings) with their page numbers, dotted
// leaders and links. It lists what the document's last layout pass
// drew, so a document with one is laid out until the list agrees with
// the pages (see renderPDF).
type tocElement struct {
	title    *textTemplate // nil: no title
	maxLevel int
	style    textStyle
}

// Table of contents defaults and geometry (millimetres).
const (
	defaultTOCLevel = 3
	tocIndent       = 5 // each level below the first
	tocNumberGap    = 2 // between the leaders and the page number
)

func (e *tocElement) fontStyles() fontStyle { return styleOf(false, false) | styleOf(true, false) }

func (e *tocElement) refs() elementRefs {
	if e.title == nil {
		return elementRefs{}
	}
	return elementRefs{texts: []*textTemplate{e.title}}
}

func parseTOC(c *compiler, path string, props object, _ depth) element {
	e := &tocElement{maxLevel: defaultTOCLevel, style: c.parseStyle(path, props, textStyle{size: defaultFontSize, align: "L"})}
	if src, ok := c.str(props, path, "title"); ok {
		e.title = c.compileText(path+".title", src)
	}
	if f, ok := c.number(props, path, "maxLevel"); ok {
		if f != float64(int(f)) || f < 1 || f > 6 {
			c.add(path+".maxLevel", "must be a whole number from 1 to 6")
		} else {
			e.maxLevel = int(f)
		}
	}
	return e
}

// hasTOC reports whether any of the components, or any inside them, is a
// table of contents.
func hasTOC(list []*component) bool {
	for _, c := range list {
		if _, ok := c.elem.(*tocElement); ok {
			return true
		}
		for _, child := range c.elem.refs().children {
			if hasTOC(child) {
				return true
			}
		}
	}
	return false
}

// sameHeadings reports whether two layouts drew the same headings on
// the same pages.
func sameHeadings(a, b []heading) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// layoutTOC lists the headings of the previous layout pass: one box per
// line, the last line of each entry with leaders and the page number,
// the whole entry a link to its heading.
func (p *pdfWriter) layoutTOC(e *tocElement, env map[string]any, w float64, s sink) error {
	if e.title != nil {
		ts := e.style
		ts.size = e.style.size * mdHeadingScale[2]
		ts.bold = true
		if err := p.layoutText(e.title, ts, 0, headingAfter+1, lineGlue{maxWidows, maxWidows, true}, env, w, s); err != nil {
			return err
		}
	}
	top := 0
	for _, h := range p.tocIn {
		if h.level <= e.maxLevel && (top == 0 || h.level < top) {
			top = h.level
		}
	}
	lh := lineHeight(e.style)
	// pitch is the leaders' pitch in st: a dot and a space (a line's
	// trailing space has no width).
	pitch := func(st textStyle) float64 {
		return lineWidth(p.split(". .", st, 0)[0], st) - lineWidth(p.split(".", st, 0)[0], st)
	}
	dotW := pitch(e.style)
	var boxes []*box
	for _, h := range p.tocIn {
		if h.level > e.maxLevel {
			continue
		}
		st := e.style
		st.bold = h.level == top
		indent := min(float64(h.level-top)*tocIndent, w/3)
		num := p.split(strconv.Itoa(h.page), st, 0)[0]
		numW := lineWidth(num, st)
		tw := max(w-indent-numW-tocNumberGap-3*dotW, 10)
		lines := p.split(pdfText(h.title), st, tw)
		dotW := pitch(st)
		anchor := "#" + h.anchor
		for i, line := range lines {
			line, last := line, i == len(lines)-1
			b := &box{w: w, h: lh, glue: !last, draw: func(x, y float64) {
				p.drawText(st, line, x+indent, y, tw, "L")
				if last {
					from := x + indent + lineWidth(line, st) + dotW/2
					to := x + w - numW - tocNumberGap
					if n := int((to - from) / dotW); n > 0 {
						leaders := strings.TrimSpace(strings.Repeat(". ", n))
						p.drawText(st, p.split(leaders, st, 0)[0], from, y, to-from, "R")
					}
					p.drawText(st, num, x+w-numW, y, numW, "L")
				}
				p.linkArea(anchor, x+indent, y, w-indent, lh)
			}}
			if i == 0 {
				b.before = 0.6
			}
			boxes = append(boxes, b)
		}
	}
	if len(boxes) > 0 {
		boxes[len(boxes)-1].after = blockAfter
	}
	for _, b := range boxes {
		if err := s.add(b); err != nil {
			return err
		}
	}
	return nil
}
