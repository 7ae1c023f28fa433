package svg

import (
	"errors"
	"strings"

	"folio/render/vector"
)

// nestedViewport places a nested <svg>: its x and y, and its view box in
// its width and height (no clipping).
func (r *reader) nestedViewport(n *node, st *style) vector.Matrix {
	x, _ := length(n.attr["x"], r.vw, st.fontSize)
	y, _ := length(n.attr["y"], r.vh, st.fontSize)
	m := vector.Translate(x, y)
	vb := numbers(n.attr["viewBox"], 4)
	w, wok := length(n.attr["width"], r.vw, st.fontSize)
	h, hok := length(n.attr["height"], r.vh, st.fontSize)
	if len(vb) == 4 && vb[2] > 0 && vb[3] > 0 && wok && hok && w > 0 && h > 0 {
		d := vector.Drawing{ViewBox: [4]float64{vb[0], vb[1], vb[2], vb[3]}, Aspect: parseAspect(n.attr["preserveAspectRatio"])}
		m = d.Fit(w, h).Then(m)
	}
	return m
}

// href is the fragment a use or gradient points to; external references
// are never fetched.
func (r *reader) href(n *node) (*node, bool) {
	ref := n.attr["href"]
	if ref == "" {
		ref = n.attr["xlink:href"]
	}
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, false
	}
	if !strings.HasPrefix(ref, "#") {
		r.warn("references outside the image are not fetched: %q is left out", clip(ref, 60))
		return nil, false
	}
	t, ok := r.ids[ref[1:]]
	if !ok {
		r.warn("%q names no element of the image: it is left out", clip(ref, 60))
	}
	return t, ok
}

// use draws the element a <use> names, moved by its x and y.
func (r *reader) use(n *node, st *style, ctm vector.Matrix, depth int) {
	t, ok := r.href(n)
	if !ok {
		return
	}
	if r.useDepth >= maxUseDepth {
		r.warn("<use> copies nested more than %d deep are left out", maxUseDepth)
		return
	}
	x, _ := length(n.attr["x"], r.vw, st.fontSize)
	y, _ := length(n.attr["y"], r.vh, st.fontSize)
	ctm = vector.Translate(x, y).Then(ctm)
	r.useDepth++
	defer func() { r.useDepth-- }()
	if t.name == "symbol" {
		sst, _ := r.compute(t, st)
		vb := numbers(t.attr["viewBox"], 4)
		w, wok := length(n.attr["width"], r.vw, st.fontSize)
		h, hok := length(n.attr["height"], r.vh, st.fontSize)
		if len(vb) == 4 && vb[2] > 0 && vb[3] > 0 {
			if !wok || w <= 0 {
				w = vb[2]
			}
			if !hok || h <= 0 {
				h = vb[3]
			}
			d := vector.Drawing{ViewBox: [4]float64{vb[0], vb[1], vb[2], vb[3]}, Aspect: parseAspect(t.attr["preserveAspectRatio"])}
			ctm = d.Fit(w, h).Then(ctm)
		}
		r.children(t, sst, ctm, depth)
		return
	}
	r.element(t, st, ctm, depth+1, false)
}

// shape draws a basic shape or a path.
func (r *reader) shape(n *node, st *style, ctm vector.Matrix) {
	p := &vector.Path{}
	a := func(k string, percent float64) float64 {
		v, _ := length(n.attr[k], percent, st.fontSize)
		return v
	}
	switch n.name {
	case "path":
		if err := parsePath(n.attr["d"], p, &r.commands); err != nil {
			if errors.Is(err, errPathBudget) {
				r.stop("the SVG image has more than %d path commands: the rest is left out", maxCommands)
			} else {
				r.warn("path data could not be read to its end (%v): the path is drawn up to there", err)
			}
		}
	case "rect":
		w, h := a("width", r.vw), a("height", r.vh)
		if w <= 0 || h <= 0 {
			return
		}
		rx, rxok := length(n.attr["rx"], r.vw, st.fontSize)
		ry, ryok := length(n.attr["ry"], r.vh, st.fontSize)
		if rxok && !ryok {
			ry = rx
		} else if ryok && !rxok {
			rx = ry
		}
		p.RoundedRect(a("x", r.vw), a("y", r.vh), w, h, rx, ry)
	case "circle":
		rad := a("r", diag(r.vw, r.vh))
		if rad <= 0 {
			return
		}
		p.Ellipse(a("cx", r.vw), a("cy", r.vh), rad, rad)
	case "ellipse":
		rx, ry := a("rx", r.vw), a("ry", r.vh)
		if rx <= 0 || ry <= 0 {
			return
		}
		p.Ellipse(a("cx", r.vw), a("cy", r.vh), rx, ry)
	case "line":
		p.MoveTo(a("x1", r.vw), a("y1", r.vh))
		p.LineTo(a("x2", r.vw), a("y2", r.vh))
	case "polyline", "polygon":
		pts := numbers(n.attr["points"], max(0, min(maxPoints, r.points)))
		r.points -= len(pts)
		if len(pts) < 4 {
			return
		}
		p.MoveTo(pts[0], pts[1])
		for i := 2; i+1 < len(pts); i += 2 {
			p.LineTo(pts[i], pts[i+1])
		}
		if n.name == "polygon" {
			p.Close()
		}
	}
	r.commands -= p.Len() / 4 // shapes cost too, a little
	if p.Empty() || st.hidden {
		return
	}
	sh := &vector.Shape{Path: p, EvenOdd: st.evenOdd, Transform: ctm}
	sh.Fill = r.paint(st.fill, st, st.fillOpacity, "fill")
	if n.name == "line" || n.name == "polyline" {
		// An open line has no inside; a browser fills a polyline, though.
		if n.name == "line" {
			sh.Fill = nil
		}
	}
	if sp := r.paint(st.stroke, st, st.strokeOpacity, "stroke"); sp != nil && st.strokeWidth > 0 {
		sh.Stroke = &vector.Stroke{Paint: *sp, Width: st.strokeWidth, Cap: st.cap, Join: st.join, MiterLimit: st.miter,
			Dash: st.dash, DashOffset: st.dashOffset}
	}
	if sh.Fill == nil && sh.Stroke == nil {
		return
	}
	r.d.Items = append(r.d.Items, vector.Item{Shape: sh})
}

// paint resolves a fill or stroke: a colour, currentColor or a gradient.
func (r *reader) paint(ps paintSpec, st *style, opacity float64, what string) *vector.Paint {
	alpha := opacity * st.opacity
	switch {
	case ps.none:
		return nil
	case ps.current:
		return &vector.Paint{Color: st.color, Opacity: alpha}
	case ps.url != "":
		if g := r.gradient(ps.url); g != nil {
			if what == "stroke" {
				r.warn("gradient strokes are not supported: they are drawn in the gradient's middle colour")
				return &vector.Paint{Color: g.Stops[len(g.Stops)/2].Color, Opacity: alpha}
			}
			return &vector.Paint{Gradient: g, Color: g.Stops[len(g.Stops)-1].Color, Opacity: alpha}
		}
		if ps.fallbackNone {
			return nil
		}
		if ps.current {
			return &vector.Paint{Color: st.color, Opacity: alpha}
		}
	}
	return &vector.Paint{Color: ps.color, Opacity: alpha}
}
