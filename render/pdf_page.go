package render

// emitBody lays out one top-level body component instance. Components
// that read "page", or ask for keepTogether, are laid out as one block that
// moves to the next page rather than being split.
func (p *pdfWriter) emitBody(c *component, env map[string]any) error {
	if c.pageAware || c.keepTogether {
		return p.layoutKept(c, env, p.contentW)
	}
	return p.layout(c, env, p.contentW, p.body)
}

// withPage returns env with "page" set to n.
func withPage(env map[string]any, n int) map[string]any {
	out := copyEnv(env, 1)
	out["page"] = n
	return out
}

// collectOne lays one component instance out into boxes without placing them.
func (p *pdfWriter) collectOne(c *component, env map[string]any, w float64) ([]*box, error) {
	s := &collectSink{p: p, maxH: float64(p.limits.Pages+1) * p.pageH}
	err := p.layout(c, env, w, s)
	return s.boxes, err
}

// layoutKept places a component as one block: on this page when it fits
// (together with boxes held back for it, such as a heading kept with it),
// else at the top of the next page. A component that reads "page" is laid
// out again for the page it lands on, so the number it shows is that
// page's. A block taller than a page cannot be kept together: it flows
// like any other component, showing the number of the page it starts on.
func (p *pdfWriter) layoutKept(c *component, env map[string]any, w float64) error {
	iterations := p.iterations
	page := p.f.PageNo()
	boxes, err := p.collectOne(c, withPage(env, page), w)
	if err != nil || len(boxes) == 0 {
		return err
	}
	if seqHeight(boxes) > p.bottom-p.bodyTop+epsilon {
		p.iterations = iterations // the loops inside are laid out again
		return p.layout(c, withPage(env, page), w, p.body)
	}
	group := append(append([]*box{}, p.body.held...), boxes...)
	if !p.fits(p.y, group) {
		held := p.body.held
		p.body.held = nil
		if len(held) > 0 && seqHeight(group) > p.bottom-p.bodyTop+epsilon {
			// The held boxes and the block do not fit one page together:
			// the held ones stay here.
			for _, b := range held {
				if err := p.body.place(b); err != nil {
					return err
				}
			}
			held = nil
		}
		first := boxes[0]
		if len(held) > 0 {
			first = held[0]
		}
		if p.y > p.bodyTop+epsilon {
			if err := p.body.breakBefore(p.m.left, first); err != nil {
				return err
			}
		}
		p.body.held = held
		if c.pageAware && p.f.PageNo() != page {
			p.iterations = iterations
			if boxes, err = p.collectOne(c, withPage(env, p.f.PageNo()), w); err != nil {
				return err
			}
		}
	}
	for i, b := range boxes {
		b.glue = i < len(boxes)-1 || b.glue
		if err := p.body.add(b); err != nil {
			return err
		}
	}
	return nil
}
