package svg

import (
	"strings"

	"folio/render/vector"
)

// gradient resolves url(#id) to a linear or radial gradient, following
// href to the gradients it inherits from. nil when there is none to paint
// with: the paint is then its fallback.
func (r *reader) gradient(ref string) *vector.Gradient {
	if !strings.HasPrefix(ref, "#") {
		r.warn("references outside the image are not fetched: %q is left out", clip(ref, 60))
		return nil
	}
	n, ok := r.ids[ref[1:]]
	if !ok {
		r.warn("%q names no element of the image: it is painted with its fallback", clip(ref, 60))
		return nil
	}
	if n.name != "linearGradient" && n.name != "radialGradient" {
		if why, ok := unsupported[n.name]; ok {
			r.warn("%s are not supported: %q is painted with its fallback", why, clip(ref, 60))
		} else {
			r.warn("%q is a <%s>, not a gradient: it is painted with its fallback", clip(ref, 60), clip(n.name, 30))
		}
		return nil
	}
	// The chain of gradients: attributes and stops come from the first
	// that has them.
	chain := []*node{n}
	for len(chain) < maxUseDepth {
		last := chain[len(chain)-1]
		h := last.attr["href"]
		if h == "" {
			h = last.attr["xlink:href"]
		}
		next, ok := r.ids[strings.TrimPrefix(h, "#")]
		if !strings.HasPrefix(h, "#") || !ok || (next.name != "linearGradient" && next.name != "radialGradient") {
			break
		}
		loop := false
		for _, c := range chain {
			loop = loop || c == next
		}
		if loop {
			break
		}
		chain = append(chain, next)
	}
	attr := func(k string) (string, bool) {
		for _, c := range chain {
			if v, ok := c.attr[k]; ok {
				return v, true
			}
		}
		return "", false
	}
	g := &vector.Gradient{Radial: n.name == "radialGradient", Transform: vector.Identity}
	units, _ := attr("gradientUnits")
	g.BoundingBox = units != "userSpaceOnUse"
	pw, ph := r.vw, r.vh
	if g.BoundingBox {
		pw, ph = 1, 1
	}
	num := func(k, def string, percent float64) float64 {
		v, ok := attr(k)
		if !ok {
			v = def
		}
		// In bounding-box units a plain number is a fraction of the box
		// and a percentage one of 1.
		f, ok := length(v, percent, 16)
		if !ok {
			f, _ = length(def, percent, 16)
		}
		return f
	}
	if g.Radial {
		g.CX, g.CY = num("cx", "50%", pw), num("cy", "50%", ph)
		g.R = num("r", "50%", diag(pw, ph))
		g.FX, g.FY = g.CX, g.CY
		if _, ok := attr("fx"); ok {
			g.FX = num("fx", "50%", pw)
		}
		if _, ok := attr("fy"); ok {
			g.FY = num("fy", "50%", ph)
		}
	} else {
		g.X1, g.Y1 = num("x1", "0%", pw), num("y1", "0%", ph)
		g.X2, g.Y2 = num("x2", "100%", pw), num("y2", "0%", ph)
	}
	if t, ok := attr("gradientTransform"); ok {
		m, ok := parseTransform(t)
		if !ok {
			r.warn("a gradientTransform could not be read: %q", clip(t, 40))
		}
		g.Transform = m
	}
	if sm, _ := attr("spreadMethod"); sm == "reflect" || sm == "repeat" {
		r.warn("gradient spreadMethod %q is not supported: the end colours are extended instead", sm)
	}
	for _, c := range chain {
		g.Stops = r.stops(c)
		if len(g.Stops) > 0 {
			break
		}
	}
	if len(g.Stops) == 0 {
		return nil
	}
	return g
}

// stops reads a gradient's <stop> elements, offsets kept in order.
func (r *reader) stops(n *node) []vector.Stop {
	var out []vector.Stop
	last := 0.0
	for _, c := range n.children {
		if c.name != "stop" || len(out) >= 256 {
			continue
		}
		props := properties{}
		for _, k := range []string{"stop-color", "stop-opacity"} {
			if v, ok := c.attr[k]; ok {
				props[k] = v
			}
		}
		for _, decls := range r.rules.matching(c) {
			for k, v := range decls {
				props[k] = v
			}
		}
		parseDeclarations(c.attr["style"], props)
		s := vector.Stop{Opacity: 1}
		if v, ok := props["stop-color"]; ok {
			if col, ok := parseColor(v); ok {
				s.Color = col
			}
		}
		if v, ok := props["stop-opacity"]; ok {
			if o, ok := parseOpacity(v); ok {
				s.Opacity = o
			}
		}
		if s.Opacity < 1 {
			r.warn("gradient stop opacity is not supported: stops are drawn opaque")
		}
		if off, ok := parseOpacity(c.attr["offset"]); ok {
			s.Offset = off
		}
		s.Offset = max(s.Offset, last)
		last = s.Offset
		out = append(out, s)
	}
	return out
}
