package svg

import (
	"strings"
	"unicode"

	"folio/render/vector"
)

// textElement draws a <text> and its <tspan>s as runs of real text: each
// run starts where its x and y put it, or after the run before it.
func (r *reader) textElement(n *node, st *style, ctm vector.Matrix) {
	var runs []*vector.Text
	pos := &pending{hasX: true, hasY: true}
	r.textRuns(n, st, ctm, &runs, pos)
	// White space collapses across the runs, as in HTML.
	prevSpace := true
	kept := runs[:0]
	for _, t := range runs {
		s := collapse(t.Text)
		if prevSpace || !t.PenX {
			s = strings.TrimLeft(s, " ")
		}
		if s == "" {
			continue
		}
		prevSpace = strings.HasSuffix(s, " ")
		t.Text = s
		kept = append(kept, t)
	}
	if len(kept) > 0 {
		last := kept[len(kept)-1]
		last.Text = strings.TrimRight(last.Text, " ")
	}
	for _, t := range kept {
		if t.Text == "" {
			continue
		}
		if r.text -= len(t.Text); r.text < 0 {
			r.stop("the SVG image holds more than %d bytes of text: the rest is left out", maxTextBytes)
			return
		}
		if r.runs--; r.runs < 0 {
			r.stop("the SVG image holds more than %d runs of text: the rest is left out", maxTextRuns)
			return
		}
		r.d.Items = append(r.d.Items, vector.Item{Text: t})
	}
}

// pending is where the next run of text goes, as the elements around it
// set it.
type pending struct {
	x, y, dx, dy float64
	hasX, hasY   bool
}

// textRuns collects the runs of n (a <text> or <tspan>).
func (r *reader) textRuns(n *node, st *style, ctm vector.Matrix, runs *[]*vector.Text, pos *pending) {
	if x, ok := firstLength(n.attr["x"], r.vw, st.fontSize); ok {
		pos.x, pos.hasX = x, true
	}
	if y, ok := firstLength(n.attr["y"], r.vh, st.fontSize); ok {
		pos.y, pos.hasY = y, true
	}
	if dx, ok := firstLength(n.attr["dx"], r.vw, st.fontSize); ok {
		pos.dx += dx
	}
	if dy, ok := firstLength(n.attr["dy"], r.vh, st.fontSize); ok {
		pos.dy += dy
	}
	if n.attr["rotate"] != "" || n.attr["textLength"] != "" {
		r.warn("text rotate and textLength are not supported: the text is set normally")
	}
	for _, c := range n.children {
		if r.stopped {
			return
		}
		switch {
		case c.name == "":
			t := r.run(c.text, st, ctm)
			if t == nil {
				continue
			}
			t.X, t.Y, t.PenX, t.PenY, t.DX, t.DY = pos.x, pos.y, !pos.hasX, !pos.hasY, pos.dx, pos.dy
			*pos = pending{}
			*runs = append(*runs, t)
		case c.name == "tspan" || c.name == "a":
			if r.drawn--; r.drawn < 0 {
				r.stop("the SVG image draws more than %d elements: the rest is left out", maxDrawn)
				return
			}
			cst, props := r.compute(c, st)
			if strings.TrimSpace(props["display"]) == "none" {
				continue
			}
			r.textRuns(c, cst, ctm, runs, pos)
		default:
			if why, ok := unsupported[c.name]; ok {
				r.warn("%s are not supported: <%s> is left out", why, c.name)
			}
		}
	}
}

// run is one piece of text in style st, or nil when it draws nothing.
func (r *reader) run(s string, st *style, ctm vector.Matrix) *vector.Text {
	if st.hidden || s == "" {
		return nil
	}
	fill := r.paint(st.fill, st, st.fillOpacity, "fill")
	if fill != nil && fill.Gradient != nil {
		r.warn("gradient fills of text are not supported: the text is drawn in the gradient's last colour")
		fill = &vector.Paint{Color: fill.Color, Opacity: fill.Opacity}
	}
	if fill == nil {
		if st.stroke.none {
			return nil
		}
		r.warn("outlined text (stroke without fill) is drawn filled")
		fill = r.paint(st.stroke, st, st.strokeOpacity, "stroke")
		if fill == nil {
			return nil
		}
	}
	return &vector.Text{Text: s, Size: st.fontSize, Family: st.fontFamily, Bold: st.bold, Italic: st.italic,
		Anchor: st.anchor, Fill: fill, Transform: ctm}
}

// firstLength reads the first of a list of lengths (x="10 20 30" places
// each character; only the first is used).
func firstLength(s string, percent, em float64) (float64, bool) {
	f := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
	if len(f) == 0 {
		return 0, false
	}
	return length(f[0], percent, em)
}

// collapse turns runs of white space into one space.
func collapse(s string) string {
	var b strings.Builder
	space := false
	for _, c := range s {
		if unicode.IsSpace(c) {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(c)
	}
	if space {
		b.WriteByte(' ')
	}
	return b.String()
}
