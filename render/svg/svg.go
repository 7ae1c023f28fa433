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
