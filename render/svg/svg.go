// Package svg reads SVG images into vector drawings (render/vector) that
// the PDF writer draws as paths and text. It reads the static subset
// documents need: shapes, paths, groups with transforms, the view box,
// fills and strokes, linear and radial gradients, use/defs, text, and a
// simple style sheet. Anything else (filters, masks, clipping, scripts,
// animation, embedded pictures and anything outside the file) is left out
// with a warning naming it, never fetched and never a failure. Work is
// bounded: elements, nesting, path commands and text are counted.
package svg

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"folio/render/vector"
)

// Bounds on what one image may make the reader do.
const (
	MaxBytes     = 2 << 20 // the source
	MaxElements  = 50_000  // elements in the file
	MaxDepth     = 64      // nesting of elements
	maxDrawn     = 50_000  // elements drawn, <use> copies included
	maxTextRuns  = 5_000   // runs of text (each is shaped when drawn)
	maxCommands  = 500_000 // path commands over the whole image
	maxTextBytes = 200_000 // characters of text
	maxUseDepth  = 8       // <use> inside what a <use> copies
	maxWarnings  = 20
	maxDash      = 64 // numbers of a dash array
	maxPoints    = 200_000
)

// Result is an image read: the drawing and what was left out of it.
type Result struct {
	Drawing *vector.Drawing
	// Warnings name every feature left out, each once.
	Warnings []string
}

// node is an element of the file, or a run of its text (name "").
type node struct {
	name     string
	attr     map[string]string
	children []*node
	text     string
}

// Parse reads an SVG image. It fails only when the file is not an SVG
// image it can read at all (not XML, no <svg> root, past the bounds).
func Parse(data []byte) (res *Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("SVG image cannot be read: %v", r)
		}
	}()
	return parse(data)
}

// parse is Parse without its guard against panics, for the fuzz test.
func parse(data []byte) (*Result, error) {
	if len(data) > MaxBytes {
		return nil, fmt.Errorf("SVG image is %d bytes, at most %d are read", len(data), MaxBytes)
	}
	root, err := readTree(data)
	if err != nil {
		return nil, err
	}
	r := &reader{ids: map[string]*node{}, drawn: maxDrawn, commands: maxCommands, text: maxTextBytes, runs: maxTextRuns, points: maxPoints, warned: map[string]bool{}}
	r.index(root, 0)
	d := &vector.Drawing{}
	r.d = d
	r.viewport(root, d)
	st := defaultStyle()
	r.element(root, st, vector.Identity, 0, true)
	return &Result{Drawing: d, Warnings: r.warnings}, nil
}

// readTree parses the XML into nodes, refusing declarations, deep nesting
// and too many elements. Entities other than XML's own are not expanded.
func readTree(data []byte) (*node, error) {
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	dec.CharsetReader = func(label string, r io.Reader) (io.Reader, error) {
		if l := strings.ToLower(label); l == "utf-8" || l == "us-ascii" {
			return r, nil
		}
		return nil, fmt.Errorf("encoding %q is not supported, use UTF-8", label)
	}
	var root *node
	var stack []*node
	elements := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("SVG image is not well-formed XML: %v", firstLine(err.Error()))
		}
		switch t := tok.(type) {
		case xml.StartElement:
			elements++
			if elements > MaxElements {
				return nil, fmt.Errorf("SVG image has more than %d elements", MaxElements)
			}
			if len(stack) >= MaxDepth {
				return nil, fmt.Errorf("SVG image nests elements more than %d deep", MaxDepth)
			}
			n := &node{name: t.Name.Local, attr: make(map[string]string, len(t.Attr))}
			if t.Name.Space != "" && t.Name.Space != "http://www.w3.org/2000/svg" {
				n.name = "{foreign}" + t.Name.Local
			}
			for _, a := range t.Attr {
				key := a.Name.Local
				if a.Name.Space == "http://www.w3.org/1999/xlink" || a.Name.Space == "xlink" {
					key = "xlink:" + key
				} else if a.Name.Space != "" && a.Name.Space != "xmlns" && a.Name.Local != "space" {
					continue // attributes of other vocabularies (Inkscape, Illustrator)
				}
				n.attr[key] = a.Value
			}
			if len(stack) == 0 {
				if root != nil {
					return nil, errors.New("SVG image has more than one root element")
				}
				if n.name != "svg" {
					return nil, fmt.Errorf("the root element is <%s>, not <svg>", clip(t.Name.Local, 30))
				}
				root = n
			} else {
				p := stack[len(stack)-1]
				p.children = append(p.children, n)
			}
			stack = append(stack, n)
		case xml.EndElement:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case xml.CharData:
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				if k := len(p.children); k > 0 && p.children[k-1].name == "" {
					p.children[k-1].text += string(t)
				} else {
					p.children = append(p.children, &node{text: string(t)})
				}
			}
		}
	}
	if root == nil {
		return nil, errors.New("SVG image has no <svg> element")
	}
	return root, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return clip(s, 200)
}

// reader turns the tree into a drawing.
type reader struct {
	d        *vector.Drawing
	ids      map[string]*node
	rules    sheet
	order    int
	drawn    int // elements it may still draw
	commands int // path commands it may still add
	text     int // text bytes it may still add
	runs     int // runs of text it may still add
	points   int
	warnings []string
	warned   map[string]bool
	vw, vh   float64 // the viewport's size, for percentages
	useDepth int
	stopped  bool // a bound was reached: nothing more is drawn
}

// warn records a feature left out, once.
func (r *reader) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if r.warned[msg] || len(r.warnings) >= maxWarnings {
		return
	}
	r.warned[msg] = true
	r.warnings = append(r.warnings, msg)
}

// index finds the elements with ids and the style sheets.
func (r *reader) index(n *node, depth int) {
	if n.name == "" {
		return
	}
	if id := n.attr["id"]; id != "" {
		if _, dup := r.ids[id]; !dup {
			r.ids[id] = n
		}
	}
	if n.name == "style" {
		var css strings.Builder
		for _, c := range n.children {
			css.WriteString(c.text)
		}
		rules, skipped := parseCSS(css.String(), &r.order)
		for _, rule := range rules {
			if !r.rules.add(rule) {
				r.warn("style sheets with more than %d rules are cut there", maxRules)
				break
			}
		}
		for _, s := range skipped {
			r.warn("CSS selector or rule %q is not supported: its styles are left out", s)
		}
	}
	for _, c := range n.children {
		r.index(c, depth+1)
	}
}

// viewport reads the root's size, view box and preserveAspectRatio.
func (r *reader) viewport(root *node, d *vector.Drawing) {
	vb := numbers(root.attr["viewBox"], 4)
	hasVB := len(vb) == 4 && vb[2] > 0 && vb[3] > 0
	w, wok := length(root.attr["width"], 0, 16)
	h, hok := length(root.attr["height"], 0, 16)
	if strings.HasSuffix(strings.TrimSpace(root.attr["width"]), "%") {
		wok = false
	}
	if strings.HasSuffix(strings.TrimSpace(root.attr["height"]), "%") {
		hok = false
	}
	switch {
	case wok && hok:
	case hasVB && wok:
		h = w * vb[3] / vb[2]
	case hasVB && hok:
		w = h * vb[2] / vb[3]
	case hasVB:
		w, h = vb[2], vb[3]
	default:
		if !wok {
			w = 300
		}
		if !hok {
			h = 150
		}
	}
	if !(w > 0) || !(h > 0) || math.IsInf(w, 0) || math.IsInf(h, 0) {
		w, h = 300, 150
	}
	d.Width, d.Height = w, h
	if hasVB {
		d.ViewBox = [4]float64{vb[0], vb[1], vb[2], vb[3]}
	} else {
		d.ViewBox = [4]float64{0, 0, w, h}
	}
	r.vw, r.vh = d.ViewBox[2], d.ViewBox[3]
	d.Aspect = parseAspect(root.attr["preserveAspectRatio"])
}

// parseAspect reads preserveAspectRatio ("xMidYMid meet" by default).
func parseAspect(s string) vector.Aspect {
	a := vector.Aspect{AlignX: 1, AlignY: 1}
	f := strings.Fields(s)
	if len(f) > 0 && f[0] == "defer" {
		f = f[1:]
	}
	if len(f) == 0 {
		return a
	}
	if f[0] == "none" {
		return vector.Aspect{None: true}
	}
	if len(f[0]) == 8 && f[0][0] == 'x' && f[0][4] == 'Y' {
		pos := map[string]int{"Min": 0, "Mid": 1, "Max": 2}
		if x, ok := pos[f[0][1:4]]; ok {
			a.AlignX = x
		}
		if y, ok := pos[f[0][5:8]]; ok {
			a.AlignY = y
		}
	}
	if len(f) > 1 && f[1] == "slice" {
		a.Slice = true
	}
	return a
}

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

// unsupported names elements left out, with why.
var unsupported = map[string]string{
	"filter": "filters", "mask": "masks", "clipPath": "clipping paths", "pattern": "patterns",
	"marker": "markers", "script": "scripts", "foreignObject": "embedded HTML (foreignObject)",
	"animate": "animation", "animateTransform": "animation", "animateMotion": "animation", "set": "animation",
	"image": "embedded pictures (<image>)", "textPath": "text on a path", "iframe": "embedded documents",
	"video": "video", "audio": "audio", "canvas": "canvas",
}

// ignored are elements that draw nothing by themselves.
var ignored = map[string]bool{
	"title": true, "desc": true, "metadata": true, "style": true, "defs": true, "symbol": true,
	"linearGradient": true, "radialGradient": true, "stop": true, "font": true, "font-face": true,
	"glyph": true, "missing-glyph": true, "cursor": true, "view": true,
}

// element draws n and its children with the parent's style and transform.
func (r *reader) element(n *node, parent *style, ctm vector.Matrix, depth int, root bool) {
	if n.name == "" || r.stopped {
		return
	}
	if r.drawn--; r.drawn < 0 {
		r.stop("the SVG image draws more than %d elements (counting <use> copies): the rest is left out", maxDrawn)
		return
	}
	if strings.HasPrefix(n.name, "{foreign}") {
		return // another vocabulary's element (sodipodi:namedview)
	}
	if why, ok := unsupported[n.name]; ok {
		r.warn("%s are not supported: <%s> is left out", why, n.name)
		return
	}
	if ignored[n.name] {
		return
	}
	st, props := r.compute(n, parent)
	if d := strings.TrimSpace(props["display"]); d == "none" {
		return
	}
	if !root {
		if t, ok := props["transform"]; ok {
			m, ok := parseTransform(t)
			if !ok {
				r.warn("a transform could not be read: %q", clip(t, 40))
			}
			ctm = m.Then(ctm)
		}
	}
	switch n.name {
	case "svg":
		if !root {
			ctm = r.nestedViewport(n, st).Then(ctm)
		}
		r.children(n, st, ctm, depth)
	case "g", "a", "switch":
		r.children(n, st, ctm, depth)
	case "use":
		r.use(n, st, ctm, depth)
	case "text":
		r.textElement(n, st, ctm)
	case "path", "rect", "circle", "ellipse", "line", "polyline", "polygon":
		r.shape(n, st, ctm)
	default:
		r.warn("<%s> is not an SVG element the reader knows: it is left out", clip(n.name, 30))
	}
}

func (r *reader) stop(format string, args ...any) {
	r.warn(format, args...)
	r.stopped = true
}

func (r *reader) children(n *node, st *style, ctm vector.Matrix, depth int) {
	for _, c := range n.children {
		r.element(c, st, ctm, depth+1, false)
	}
}

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
