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
}

// clipped runs draw inside a clipping rectangle when clip is set.
func (p *pdfWriter) clipped(x, y, w, h float64, clip bool, draw func()) {
	if clip {
		p.f.ClipRect(x, y, w, max(h, 0), false)
		defer p.f.ClipEnd()
	}
	draw()
}

// collect lays components out into boxes without placing them.
func (p *pdfWriter) collect(list []*component, env map[string]any, w float64) ([]*box, error) {
	s := &collectSink{p: p, maxH: float64(p.limits.Pages+1) * p.pageH}
	err := p.walk(list, env, func(c *component, env map[string]any) error {
		return p.layout(c, env, w, s)
	})
	return s.boxes, err
}

// collectMarginal lays out a header or footer; it stops once the content
// is taller than the part that will be shown.
func (p *pdfWriter) collectMarginal(list []*component, env map[string]any) ([]*box, error) {
	s := &collectSink{p: p, maxH: p.maxMarginalHeight(), clip: true}
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
		if b.header != nil && b.first {
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

// bodySink flows boxes onto the pages of the body.
type bodySink struct{ p *pdfWriter }

func (s *bodySink) add(b *box) error {
	p := s.p
	if p.tryPlace(&p.y, p.m.left, b) {
		return p.err
	}
	if err := p.newPage(); err != nil {
		return err
	}
	p.tryPlace(&p.y, p.m.left, b)
	return p.err
}

// columns fills the columns page by page: each column takes boxes until one
// does not fit, then all continue on a new page.
func (s *bodySink) columns(cols [][]*box, xs []float64, _ float64) error {
	p := s.p
	next := make([]int, len(cols))
	start := p.y
	for {
		end, pending := start, false
		for i, col := range cols {
			y := start
			for next[i] < len(col) && p.tryPlace(&y, p.m.left+xs[i], col[next[i]]) {
				next[i]++
			}
			if next[i] < len(col) {
				pending = true
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

// tryPlace draws b at *y if it fits above the bottom of the body, or
// anyway (cut off at the bottom) when *y is the top of the page. It
// reports whether b was placed and moves *y below it.
func (p *pdfWriter) tryPlace(y *float64, x float64, b *box) bool {
	atTop := *y <= p.bodyTop+epsilon
	if b.breakPage {
		return atTop
	}
	top := *y
	if !atTop {
		top += b.before
	}
	withHeader := b.header != nil && (b.first || atTop)
	need := b.h
	if withHeader {
		need += b.header.h
	}
	if top+need > p.bottom+epsilon && !atTop {
		return false
	}
	if withHeader {
		b.header.draw(x, top)
		top += b.header.h
	}
	if b.draw != nil {
		p.clipped(x, top, b.w, p.bottom-top, top+b.h > p.bottom+epsilon, func() { b.draw(x, top) })
	}
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
