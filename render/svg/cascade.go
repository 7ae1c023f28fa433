package svg

import (
	"math"
	"strings"

	"folio/render/vector"
)

// style is the computed presentation of an element: inherited properties
// plus the product of its ancestors' opacity.
type style struct {
	fill          paintSpec
	fillOpacity   float64
	evenOdd       bool
	stroke        paintSpec
	strokeWidth   float64
	strokeOpacity float64
	cap, join     int
	miter         float64
	dash          []float64
	dashOffset    float64
	fontFamily    string
	fontSize      float64
	bold, italic  bool
	anchor        int
	color         vector.Color
	hidden        bool // visibility: hidden
	opacity       float64
}

func defaultStyle() *style {
	return &style{fillOpacity: 1, stroke: paintSpec{none: true}, strokeWidth: 1, strokeOpacity: 1, miter: 4, fontSize: 16, opacity: 1}
}

// compute applies an element's properties to a copy of its parent's style.
func (r *reader) compute(n *node, parent *style) (*style, properties) {
	props := properties{}
	for k, v := range n.attr {
		if styleProps[k] {
			props[k] = v
		}
	}
	for _, decls := range r.rules.matching(n) {
		for k, v := range decls {
			props[k] = v
		}
	}
	if s := n.attr["style"]; s != "" {
		parseDeclarations(s, props)
	}
	st := *parent
	if v, ok := props["color"]; ok {
		if c, ok := parseColor(v); ok {
			st.color = c
		}
	}
	if v, ok := props["font"]; ok {
		r.warn("the font shorthand property is not supported: use font-family, font-size, font-weight and font-style")
		_ = v
	}
	if v, ok := props["font-size"]; ok {
		if fs, ok := length(v, parent.fontSize, parent.fontSize); ok && fs > 0 {
			st.fontSize = fs
		}
	}
	for k, v := range props {
		v = strings.TrimSpace(v)
		if v == "inherit" {
			continue
		}
		switch k {
		case "fill":
			if p, ok := parsePaint(v); ok {
				st.fill = p
			}
		case "stroke":
			if p, ok := parsePaint(v); ok {
				st.stroke = p
			}
		case "fill-opacity":
			if o, ok := parseOpacity(v); ok {
				st.fillOpacity = o
			}
		case "stroke-opacity":
			if o, ok := parseOpacity(v); ok {
				st.strokeOpacity = o
			}
		case "opacity":
			if o, ok := parseOpacity(v); ok {
				st.opacity = parent.opacity * o
			}
		case "fill-rule":
			st.evenOdd = v == "evenodd"
		case "stroke-width":
			if w, ok := length(v, diag(r.vw, r.vh), st.fontSize); ok && w >= 0 {
				st.strokeWidth = w
			}
		case "stroke-linecap":
			st.cap = map[string]int{"round": vector.CapRound, "square": vector.CapSquare}[v]
		case "stroke-linejoin":
			st.join = map[string]int{"round": vector.JoinRound, "bevel": vector.JoinBevel}[v]
			if v == "arcs" || v == "miter-clip" {
				st.join = vector.JoinMiter
			}
		case "stroke-miterlimit":
			if m := numbers(v, 1); len(m) == 1 && m[0] >= 1 {
				st.miter = m[0]
			}
		case "stroke-dasharray":
			st.dash = nil
			if v != "none" {
				d := dashes(v, diag(r.vw, r.vh), st.fontSize)
				if d == nil {
					break
				}
				st.dash = d
			}
		case "stroke-dashoffset":
			if o, ok := length(v, diag(r.vw, r.vh), st.fontSize); ok {
				st.dashOffset = o
			}
		case "font-family":
			st.fontFamily = v
		case "font-weight":
			st.bold = v == "bold" || v == "bolder" || (len(v) == 3 && v >= "600" && v <= "900")
		case "font-style":
			st.italic = v == "italic" || v == "oblique"
		case "text-anchor":
			st.anchor = map[string]int{"middle": vector.AnchorMiddle, "end": vector.AnchorEnd}[v]
		case "visibility":
			st.hidden = v == "hidden" || v == "collapse"
		case "clip-path", "mask", "filter":
			if v != "none" {
				r.warn("%s is not supported: the element is drawn without it", k)
			}
		case "marker", "marker-start", "marker-mid", "marker-end":
			if v != "none" {
				r.warn("markers are not supported: lines are drawn without them")
			}
		}
	}
	return &st, props
}

// dashes reads a dash array; nil when it is invalid or all zero (a solid line).
func dashes(s string, percent, em float64) []float64 {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
	if len(fields) == 0 || len(fields) > maxDash {
		return nil
	}
	var out []float64
	sum := 0.0
	for _, f := range fields {
		v, ok := length(f, percent, em)
		if !ok || v < 0 {
			return nil
		}
		out = append(out, v)
		sum += v
	}
	if sum <= 0 {
		return nil
	}
	if len(out)%2 == 1 {
		out = append(out, out...)
	}
	return out
}

func diag(w, h float64) float64 { return math.Sqrt((w*w + h*h) / 2) }
