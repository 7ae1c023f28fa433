package render

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

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
// like any other component, and each of its lines, table rows and
// key/value pairs shows the page it is drawn on (see repaged).
func (p *pdfWriter) layoutKept(c *component, env map[string]any, w float64) error {
	iterations := p.iterations
	page := p.f.PageNo()
	boxes, err := p.collectOne(c, withPage(env, p.shown(page)), w)
	if err != nil || len(boxes) == 0 {
		return err
	}
	if seqHeight(boxes) > p.bottom-p.bodyTop+epsilon {
		p.iterations = iterations // the loops inside are laid out again
		return p.layout(c, withPage(env, p.shown(page)), w, p.body)
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
			if boxes, err = p.collectOne(c, withPage(env, p.shown(p.f.PageNo())), w); err != nil {
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

// Blocks that flow over pages. A table row, a key/value pair or a line of
// text is laid out once, for the page its block starts on; when what it
// shows reads "page" and it is drawn on a later page, it is laid out again
// for that page just before it is placed (box.repage), so the number it
// shows is the page it is drawn on.

// envPage is the page number env was laid out for; 0 when it has none.
func envPage(env map[string]any) int {
	n, _ := env["page"].(int)
	return n
}

// repaged makes boxes, laid out in env, lay themselves out again when they
// are drawn on a page other than env's: remake lays the same content out
// in an environment whose "page" is that page, and the k-th box takes the
// height and drawing of the k-th box remake returns (a row taller than a
// page is several boxes).
func (p *pdfWriter) repaged(boxes []*box, env map[string]any, remake func(env map[string]any) ([]*box, error)) {
	own := copyEnv(env, 0)
	for k, b := range boxes {
		laidOut := envPage(env)
		b.repage = func(n int) {
			if n == laidOut || p.err != nil {
				return
			}
			own["page"] = n
			again, err := remake(own)
			if err != nil {
				p.err = err
				return
			}
			laidOut = n
			if k < len(again) {
				b.h, b.draw = again[k].h, again[k].draw
			} else {
				b.h, b.draw = 0, nil
			}
		}
	}
}

// pagedText is a paragraph whose placeholders read "page". It is wrapped
// once, for the page it starts on; a line drawn on another page shows the
// placeholders that lie wholly within it rendered again for that page, so
// words never move between lines. A placeholder whose text wraps over two
// lines keeps the value of the page the paragraph starts on.
type pagedText struct {
	p      *pdfWriter
	tt     *textTemplate
	env    map[string]any
	page   int        // the page the text was rendered for
	parts  []string   // each part's text as rendered
	spans  [][2]int   // each part's runes in text: [from, to)
	text   []rune     // the text as rendered
	starts []int      // the rune where each line starts; nil when unknown
	ends   []int      // the rune after each line's last
	byPage [][]string // parts rendered again, by page
}

// newPagedText renders tt part by part in env.
func (p *pdfWriter) newPagedText(tt *textTemplate, env map[string]any) (*pagedText, string, error) {
	pt := &pagedText{p: p, tt: tt, env: copyEnv(env, 0), page: envPage(env)}
	parts, err := pt.render(pt.env)
	if err != nil {
		return nil, "", err
	}
	pt.parts = parts
	var b strings.Builder
	at := 0
	for _, s := range parts {
		n := utf8.RuneCountInString(s)
		pt.spans = append(pt.spans, [2]int{at, at + n})
		at += n
		b.WriteString(s)
	}
	text := b.String()
	pt.text = []rune(text)
	return pt, text, nil
}

// render renders every part of the template in env, as text for the PDF.
func (pt *pagedText) render(env map[string]any) ([]string, error) {
	out := make([]string, len(pt.tt.parts))
	for i, part := range pt.tt.parts {
		if part.expr == nil {
			out[i] = pdfText(part.literal)
			continue
		}
		v, err := pt.p.ev.run(part.expr, env)
		if err != nil {
			return nil, err
		}
		out[i] = pdfText(formatValue(v))
	}
	return out, nil
}

// locate finds where each wrapped line lies in the text: the splitter
// keeps the runes of a line and drops the space (or newline) it breaks
// at. When a line cannot be found, lines are drawn as they were wrapped.
func (pt *pagedText) locate(lines []string) {
	pos := 0
	starts, ends := make([]int, len(lines)), make([]int, len(lines))
	for i, line := range lines {
		l := []rune(line)
		switch {
		case i > 0 && pos < len(pt.text) && unicode.IsSpace(pt.text[pos]) && runesAt(pt.text, pos+1, l):
			pos++
		case runesAt(pt.text, pos, l):
		default:
			return
		}
		starts[i], ends[i] = pos, pos+len(l)
		pos += len(l)
	}
	pt.starts, pt.ends = starts, ends
}

// runesAt reports whether text holds l at offset at.
func runesAt(text []rune, at int, l []rune) bool {
	if at+len(l) > len(text) {
		return false
	}
	for i, r := range l {
		if text[at+i] != r {
			return false
		}
	}
	return true
}

// line returns line i of the paragraph as drawn on page n: the parts that
// read "page" and lie wholly within the line rendered for page n. A part
// belongs to the line its first rune is on.
func (pt *pagedText) line(i, n int, laidOut string) (string, error) {
	if pt.starts == nil || n == pt.page {
		return laidOut, nil
	}
	for len(pt.byPage) <= n {
		pt.byPage = append(pt.byPage, nil)
	}
	parts := pt.byPage[n]
	if parts == nil {
		env := copyEnv(pt.env, 0)
		env["page"] = n
		var err error
		if parts, err = pt.render(env); err != nil {
			return "", err
		}
		pt.byPage[n] = parts
	}
	from, to := pt.starts[i], pt.ends[i]
	next := len(pt.text) + 1
	if i+1 < len(pt.starts) {
		next = pt.starts[i+1]
	}
	var b strings.Builder
	pos := from
	for j, sp := range pt.spans {
		part := pt.tt.parts[j]
		if part.expr == nil || !contains(part.expr.names, "page") || sp[0] < from || sp[0] >= next || sp[1] > to {
			continue
		}
		b.WriteString(string(pt.text[pos:sp[0]]))
		b.WriteString(parts[j])
		pos = sp[1]
	}
	b.WriteString(string(pt.text[pos:to]))
	return b.String(), nil
}

// repageLine makes the box of line i draw the line as it reads on the
// page it is drawn on.
func (pt *pagedText) repageLine(b *box, i int, laidOut string, draw func(line string) func(x, y float64)) {
	if pt.starts == nil {
		return
	}
	p := pt.p
	b.repage = func(n int) {
		if p.err != nil {
			return
		}
		line, err := pt.line(i, n, laidOut)
		if err != nil {
			p.err = err
			return
		}
		b.draw = draw(line)
	}
}
