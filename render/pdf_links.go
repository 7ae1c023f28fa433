package render

import (
	"strconv"
	"strings"
)

// Links, anchors, bookmarks and the headings a table of contents lists,
// in PDF. Anchors and bookmarks are set when the box that carries them is
// drawn, so they point at the page and height it lands on.

// mark is what drawing a box records: an anchor, and for a heading a
// bookmark at its level and an entry for the table of contents.
type mark struct {
	anchor string
	auto   bool // anchor is a heading's slug: numbered when it repeats
	title  string
	level  int // heading level; 0 for an anchor only
}

// heading is a heading as drawn: what a table of contents lists.
type heading struct {
	title  string
	level  int
	page   int
	anchor string
}

// pdfLinks is the state of a document's links.
type pdfLinks struct {
	ids      map[string]int  // fpdf link ids by anchor name
	set      map[string]bool // anchors placed
	slugs    map[string]int  // automatic anchors used, for numbering repeats
	headings []heading       // in the order drawn
	outline  int             // the level of the last bookmark, -1 before the first
	marginal bool            // laying out a header or footer: no marks
}

func (p *pdfWriter) linksState() *pdfLinks {
	if p.links == nil {
		p.links = &pdfLinks{ids: map[string]int{}, set: map[string]bool{}, slugs: map[string]int{}, outline: -1}
	}
	return p.links
}

// anchorID returns the fpdf link id of an anchor, placed or not yet.
func (p *pdfWriter) anchorID(name string) int {
	l := p.linksState()
	id, ok := l.ids[name]
	if !ok {
		id = p.f.AddLink()
		l.ids[name] = id
	}
	return id
}

// linkArea makes the area x, y, w, h of the current page a link to
// target: a URL, or "#anchor" (left out when no anchor has that name).
func (p *pdfWriter) linkArea(target string, x, y, w, h float64) {
	if w <= 0 || h <= 0 {
		return
	}
	if name, ok := strings.CutPrefix(target, "#"); ok {
		p.f.Link(x, y, w, h, p.anchorID(name))
		return
	}
	p.f.LinkString(x, y, w, h, target)
}

// markBox makes b record m when it is drawn. Headers and footers, drawn
// on every page, record nothing.
func (p *pdfWriter) markBox(b *box, m mark) {
	l := p.linksState()
	if l.marginal {
		return
	}
	draw := b.draw
	b.draw = func(x, y float64) {
		p.place(m, y)
		if draw != nil {
			draw(x, y)
		}
	}
}

// place records m at height y of the current page.
func (p *pdfWriter) place(m mark, y float64) {
	l := p.linksState()
	page := p.f.PageNo()
	name := m.anchor
	if m.auto {
		n := l.slugs[name]
		l.slugs[name] = n + 1
		if n > 0 {
			name += "-" + strconv.Itoa(n)
		}
	}
	if name != "" && !l.set[name] {
		l.set[name] = true
		p.f.SetLink(p.anchorID(name), y, page)
	}
	if m.level <= 0 {
		return
	}
	title := strings.Join(strings.Fields(m.title), " ")
	// An outline level is at most one below the one before it.
	level := min(m.level-1, l.outline+1)
	l.outline = level
	p.f.BookmarkUTF16(title, level, y)
	l.headings = append(l.headings, heading{title: title, level: m.level, page: page, anchor: name})
}

// markSink marks the first box a component adds.
type markSink struct {
	sink
	p    *pdfWriter
	m    mark
	done bool
}

func (s *markSink) add(b *box) error {
	if !s.done && !b.breakPage {
		s.done = true
		s.p.markBox(b, s.m)
	}
	return s.sink.add(b)
}

func (s *markSink) columns(cols [][]*box, xs []float64, w float64) error {
	if !s.done {
		for _, col := range cols {
			if len(col) > 0 {
				s.done = true
				s.p.markBox(col[0], s.m)
				break
			}
		}
	}
	return s.sink.columns(cols, xs, w)
}

// resolveLink renders a component's "link" in env and checks it; "" when
// the component has none or it renders empty.
func (p *pdfWriter) resolveLink(c *component, tt *textTemplate, env map[string]any) (string, error) {
	if tt == nil {
		return "", nil
	}
	s, err := tt.render(p.ev, env)
	if err != nil {
		return "", err
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	if err := checkLink(s); err != nil {
		return "", contentError(c, "link", tt, err)
	}
	return s, nil
}

// linked returns st with the component's link, rendered in env.
func (p *pdfWriter) linked(c *component, st textStyle, link *textTemplate, env map[string]any) (textStyle, error) {
	target, err := p.resolveLink(c, link, env)
	st.link = target
	return st, err
}

// headingSink makes a heading component's first line record the heading:
// a bookmark, an entry of the table of contents and the anchor its text
// makes.
func (p *pdfWriter) headingSink(e *headingElement, env map[string]any, s sink) (sink, error) {
	title, err := e.content.render(p.ev, env)
	if err != nil || strings.TrimSpace(title) == "" {
		return s, err
	}
	title = pdfText(title)
	return &markSink{sink: s, p: p, m: mark{title: title, level: e.level, anchor: slug(title), auto: true}}, nil
}
