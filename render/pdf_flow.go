package render

import "errors"

// box is laid-out content of a known height and width that is drawn in one
// piece: a line of text, a table row, an image. The body flows boxes onto
// pages; a box never straddles a page break.
type box struct {
	w, h          float64
	before, after float64 // space above (dropped at the top of a page) and below
	draw          func(x, y float64)
	// header is a table's header row: it is drawn before this box when the
	// box is the table's first row or starts a page.
	header    *box
	first     bool
	breakPage bool // a pageBreak: the next box starts a new page
	// glue keeps the box on the page of the next one (widow and orphan
	// control, keepTogether, a heading kept with what follows).
	glue bool
	// table is set on a table's body rows when the table draws continued
	// rows at its page breaks; carried is the running subtotal before the
	// row, and lastOfTable marks the table's last row, which needs no room
	// for a continued row below it.
	table       *tableFlow
	carried     float64
	lastOfTable bool
	// repage lays the box out again for the page it is about to be drawn
	// on, when what it shows reads "page" (see pdf_page.go); nil otherwise.
	repage func(page int)
}

// onPage prepares b to be drawn on page n.
func (b *box) onPage(n int) {
	if b != nil && b.repage != nil {
		b.repage(n)
	}
}

// clipped runs draw inside a clipping rectangle when clip is set.
func (p *pdfWriter) clipped(x, y, w, h float64, clip bool, draw func()) {
	if clip {
		p.f.ClipRect(x, y, w, max(h, 0), false)
		defer p.f.ClipEnd()
	}
	draw()
}

// collect lays components out into boxes without placing them. The boxes
// of a component with keepTogether are glued, so a column that flows over
// pages keeps them on one page.
func (p *pdfWriter) collect(list []*component, env map[string]any, w float64) ([]*box, error) {
	s := &collectSink{p: p, maxH: float64(p.limits.Pages+1) * p.pageH}
	err := p.walk(list, env, func(c *component, env map[string]any) error {
		from := len(s.boxes)
		if err := p.layout(c, env, w, s); err != nil {
			return err
		}
		if c.keepTogether {
			for _, b := range s.boxes[from:max(len(s.boxes)-1, from)] {
				b.glue = true
			}
		}
		return nil
	})
	return s.boxes, err
}

// collectMarginal lays out a header or footer; it stops once the content
// is taller than the part that will be shown.
func (p *pdfWriter) collectMarginal(list []*component, env map[string]any) ([]*box, error) {
	s := &collectSink{p: p, maxH: p.maxMarginalHeight(), clip: true}
	p.linksState().marginal = true
	defer func() { p.linksState().marginal = false }()
	err := p.walk(list, env, func(c *component, env map[string]any) error {
		return p.layout(c, env, p.contentW, s)
	})
	if errors.Is(err, errSinkFull) {
		err = nil
	}
	return s.boxes, err
}

// errSinkFull stops laying out content that would be cut off anyway.
var errSinkFull = errors.New("render: no more room")

// seqHeight is the height of boxes drawn one below the other.
func seqHeight(boxes []*box) float64 {
	h := 0.0
	for i, b := range boxes {
		if i > 0 {
			h += b.before
		}
		if b.header != nil && b.first {
			h += b.header.h
		}
		h += b.h
		if i < len(boxes)-1 {
			h += b.after
		}
	}
	return h
}

// drawSeq draws boxes one below the other without page breaks.
func (p *pdfWriter) drawSeq(boxes []*box, x, y float64) {
	for i, b := range boxes {
		if i > 0 {
			y += b.before
		}
		b.onPage(p.shown(p.f.PageNo()))
		if b.header != nil && b.first {
			b.header.onPage(p.shown(p.f.PageNo()))
			b.header.draw(x, y)
			y += b.header.h
		}
		if b.draw != nil {
			b.draw(x, y)
		}
		y += b.h + b.after
	}
}

// sink receives laid-out boxes: the body places them on pages, columns and
// headers collect them.
type sink interface {
	add(b *box) error
	// columns places column contents side by side; xs are offsets from the
	// left edge of the area of width w.
	columns(cols [][]*box, xs []float64, w float64) error
}

// bodySink flows boxes onto the pages of the body. Boxes glued to the
// next are held back until the group is complete, then the group moves to
// a new page as a whole when it does not fit on this one.
type bodySink struct {
	p    *pdfWriter
	held []*box
}

func (s *bodySink) add(b *box) error {
	if b.glue || len(s.held) > 0 {
		s.held = append(s.held, b)
		if b.glue {
			return nil
		}
		return s.flush()
	}
	return s.place(b)
}

// flush places the boxes held back.
func (s *bodySink) flush() error {
	group := s.held
	s.held = nil
	if len(group) == 0 {
		return nil
	}
	p := s.p
	if len(group) > 1 && !p.fits(p.y, group) && seqHeight(group) <= p.bottom-p.bodyTop+epsilon {
		if err := s.breakBefore(p.m.left, group[0]); err != nil {
			return err
		}
	}
	for _, b := range group {
		if err := s.place(b); err != nil {
			return err
		}
	}
	return nil
}

// place draws b on this page, or on the next when it does not fit.
func (s *bodySink) place(b *box) error {
	p := s.p
	if p.tryPlace(&p.y, p.m.left, b) {
		return p.err
	}
	if err := s.breakBefore(p.m.left, b); err != nil {
		return err
	}
	p.tryPlace(&p.y, p.m.left, b)
	return p.err
}

// breakBefore ends the page before b: a table row that continues on the
// next page first gets its "continued" row at the bottom of this one.
func (s *bodySink) breakBefore(x float64, b *box) error {
	p := s.p
	if p.y > p.bodyTop+epsilon {
		p.continuedBelow(x, p.y, b)
	}
	return p.newPage()
}

// continuedBelow draws the "continued" row of b's table at y when b is a
// row of a table that breaks before it.
func (p *pdfWriter) continuedBelow(x, y float64, b *box) {
	if b.table != nil && !b.first && !b.breakPage {
		b.table.drawRow(b.table.bottom, x, y, b.carried)
		p.pageEnd = max(p.pageEnd, min(y+b.table.h, p.bottom))
	}
}

// fits reports whether boxes placed one below the other from y fit above
// the bottom of the body.
func (p *pdfWriter) fits(y float64, boxes []*box) bool {
	if len(boxes) == 0 {
		return true
	}
	atTop := y <= p.bodyTop+epsilon
	if !atTop {
		y += boxes[0].before
	}
	h := seqHeight(boxes)
	if b := boxes[0]; b.header != nil && !b.first && atTop {
		h += b.header.h
	}
	if last := boxes[len(boxes)-1]; last.table != nil && !last.lastOfTable {
		h += last.table.h
	}
	return atTop || y+h <= p.bottom+epsilon
}

// columns fills the columns page by page: each column takes boxes until one
// does not fit, then all continue on a new page. Glued boxes move together.
func (s *bodySink) columns(cols [][]*box, xs []float64, _ float64) error {
	if err := s.flush(); err != nil {
		return err
	}
	p := s.p
	next := make([]int, len(cols))
	start := p.y
	for {
		end, pending := start, false
		for i, col := range cols {
			y := start
			x := p.m.left + xs[i]
			for next[i] < len(col) {
				group := glued(col, next[i])
				if len(group) > 1 && !p.fits(y, group) && seqHeight(group) <= p.bottom-p.bodyTop+epsilon {
					break
				}
				placed := 0
				for _, b := range group {
					if !p.tryPlace(&y, x, b) {
						break
					}
					placed++
				}
				next[i] += placed
				if placed < len(group) {
					break
				}
			}
			if next[i] < len(col) {
				pending = true
				if y > p.bodyTop+epsilon {
					p.continuedBelow(x, y, col[next[i]])
				}
			}
			end = max(end, y)
		}
		if p.err != nil {
			return p.err
		}
		if !pending {
			p.y = end + blockAfter
			return nil
		}
		if err := p.newPage(); err != nil {
			return err
		}
		start = p.bodyTop
	}
}

// glued returns the group of boxes starting at col[i]: it and the boxes
// glued to it.
func glued(col []*box, i int) []*box {
	j := i
	for j < len(col)-1 && col[j].glue {
		j++
	}
	return col[i : j+1]
}

// tryPlace draws b at *y if it fits above the bottom of the body, or
// anyway (cut off at the bottom) when *y is the top of the page. It
// reports whether b was placed and moves *y below it. A table row keeps
// room below it for the table's "continued" row, and a row that starts a
// page gets the table's header and "continued" row above it.
func (p *pdfWriter) tryPlace(y *float64, x float64, b *box) bool {
	atTop := *y <= p.bodyTop+epsilon
	if b.breakPage {
		return atTop
	}
	top := *y
	if !atTop {
		top += b.before
	}
	b.onPage(p.shown(p.f.PageNo()))
	withHeader := b.header != nil && (b.first || atTop)
	if withHeader {
		b.header.onPage(p.shown(p.f.PageNo()))
	}
	continuedAbove := b.table != nil && atTop && !b.first
	need := b.h
	if withHeader {
		need += b.header.h
	}
	if continuedAbove {
		need += b.table.h
	}
	if b.table != nil && !b.lastOfTable {
		need += b.table.h // room for the continued row should the next row not fit
	}
	if top+need > p.bottom+epsilon && !atTop {
		return false
	}
	if withHeader {
		b.header.draw(x, top)
		top += b.header.h
	}
	if continuedAbove {
		b.table.drawRow(b.table.top, x, top, b.carried)
		top += b.table.h
	}
	if b.draw != nil {
		p.clipped(x, top, b.w, p.bottom-top, top+b.h > p.bottom+epsilon, func() { b.draw(x, top) })
	}
	p.pageEnd = max(p.pageEnd, min(top+b.h, p.bottom))
	*y = top + b.h + b.after
	return true
}

// collectSink gathers boxes for columns, headers and footers.
type collectSink struct {
	p     *pdfWriter
	boxes []*box
	total float64
	maxH  float64 // more than this cannot fit the page limit, or is cut off
	clip  bool    // past maxH, stop quietly (headers and footers are cut off)
}

func (s *collectSink) add(b *box) error {
	if s.clip && s.total > s.maxH {
		return errSinkFull
	}
	s.total += b.before + b.h + b.after
	if !s.clip && s.total > s.maxH {
		// Far more than the allowed pages could hold: stop before laying out more.
		return newLimitError(LimitPages, int64(s.p.limits.Pages+1), int64(s.p.limits.Pages))
	}
	s.boxes = append(s.boxes, b)
	return nil
}

// columns inside columns, headers and footers become one box whose
// columns are drawn without page breaks.
func (s *collectSink) columns(cols [][]*box, xs []float64, w float64) error {
	h := 0.0
	for _, col := range cols {
		h = max(h, seqHeight(col))
	}
	p := s.p
	return s.add(&box{w: w, h: h, after: blockAfter, draw: func(x, y float64) {
		for i, col := range cols {
			p.drawSeq(col, x+xs[i], y)
		}
	}})
}
