package svg

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/image/colornames"

	"folio/render/vector"
)

// properties are the presentation properties an element sets, from its
// attributes, the style sheet and its style attribute, in that order of
// strength.
type properties map[string]string

// styleProps are the presentation properties the reader knows; any other
// attribute is the element's own (x, width, d) or unknown.
var styleProps = map[string]bool{
	"fill": true, "fill-opacity": true, "fill-rule": true, "stroke": true, "stroke-width": true,
	"stroke-opacity": true, "stroke-linecap": true, "stroke-linejoin": true, "stroke-miterlimit": true,
	"stroke-dasharray": true, "stroke-dashoffset": true, "opacity": true, "color": true,
	"font-family": true, "font-size": true, "font-weight": true, "font-style": true, "font": true,
	"text-anchor": true, "visibility": true, "display": true, "stop-color": true, "stop-opacity": true,
	"clip-path": true, "mask": true, "filter": true, "marker-start": true, "marker-mid": true,
	"marker-end": true, "marker": true, "transform": true,
}

// parseDeclarations reads "fill: red; stroke: blue" into props.
func parseDeclarations(s string, props properties) {
	for _, decl := range strings.Split(s, ";") {
		k, v, ok := strings.Cut(decl, ":")
		if !ok {
			continue
		}
		k = strings.ToLower(strings.TrimSpace(k))
		v = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "!important"))
		if k != "" && v != "" {
			props[k] = v
		}
	}
}

// cssRule is one rule of a <style> sheet with a simple selector: an
// element name, a .class, an #id, or a name with a class (rect.big).
type cssRule struct {
	tag, class, id string
	specificity    int
	order          int
	decls          properties
}

// parseCSS reads the rules of a style sheet it understands; it returns
// what it left out, for a warning.
func parseCSS(sheet string, order *int) (rules []cssRule, skipped []string) {
	sheet = stripComments(sheet)
	for len(sheet) > 0 {
		open := strings.IndexByte(sheet, '{')
		if open < 0 {
			break
		}
		close := strings.IndexByte(sheet[open:], '}')
		if close < 0 {
			break
		}
		selectors := strings.TrimSpace(sheet[:open])
		body := sheet[open+1 : open+close]
		sheet = sheet[open+close+1:]
		if strings.HasPrefix(selectors, "@") {
			skipped = append(skipped, clip(selectors, 30))
			if strings.Contains(body, "{") { // a nested block (@media): skip to its end
				if end := strings.IndexByte(sheet, '}'); end >= 0 {
					sheet = sheet[end+1:]
				}
			}
			continue
		}
		decls := properties{}
		parseDeclarations(body, decls)
		for _, sel := range strings.Split(selectors, ",") {
			sel = strings.TrimSpace(sel)
			r, ok := simpleSelector(sel)
			if !ok {
				skipped = append(skipped, clip(sel, 30))
				continue
			}
			*order++
			r.order, r.decls = *order, decls
			rules = append(rules, r)
		}
	}
	return rules, skipped
}

func simpleSelector(sel string) (cssRule, bool) {
	if sel == "" || strings.ContainsAny(sel, " >+~[:*") {
		return cssRule{}, false
	}
	var r cssRule
	switch {
	case strings.HasPrefix(sel, "#"):
		r.id, r.specificity = sel[1:], 100
	case strings.Contains(sel, "."):
		tag, class, _ := strings.Cut(sel, ".")
		if strings.Contains(class, ".") || class == "" {
			return cssRule{}, false
		}
		r.tag, r.class, r.specificity = tag, class, 10
		if tag != "" {
			r.specificity++
		}
	default:
		r.tag, r.specificity = sel, 1
	}
	return r, true
}

func stripComments(s string) string {
	for {
		i := strings.Index(s, "/*")
		if i < 0 {
			return s
		}
		j := strings.Index(s[i+2:], "*/")
		if j < 0 {
			return s[:i]
		}
		s = s[:i] + s[i+2+j+2:]
	}
}

// sheet holds the rules of the style sheets, indexed by what they select
// so that matching an element costs what matches it, not every rule.
type sheet struct {
	byID, byClass, byTag map[string][]cssRule
	n                    int
}

// maxRules bounds the rules read from the style sheets.
const maxRules = 2000

func (s *sheet) add(r cssRule) bool {
	if s.n >= maxRules {
		return false
	}
	if s.byID == nil {
		s.byID, s.byClass, s.byTag = map[string][]cssRule{}, map[string][]cssRule{}, map[string][]cssRule{}
	}
	s.n++
	switch {
	case r.id != "":
		s.byID[r.id] = append(s.byID[r.id], r)
	case r.class != "":
		s.byClass[r.class] = append(s.byClass[r.class], r)
	default:
		s.byTag[r.tag] = append(s.byTag[r.tag], r)
	}
	return true
}

// matching returns the declarations of the rules an element matches, the
// weakest first.
func (s *sheet) matching(n *node) []properties {
	if s.n == 0 {
		return nil
	}
	var hits []cssRule
	if id := n.attr["id"]; id != "" {
		hits = append(hits, s.byID[id]...)
	}
	classes := strings.Fields(n.attr["class"])
	for i, c := range classes {
		if i >= 16 || contains(classes[:i], c) {
			continue
		}
		for _, r := range s.byClass[c] {
			if r.tag == "" || r.tag == n.name {
				hits = append(hits, r)
			}
		}
	}
	hits = append(hits, s.byTag[n.name]...)
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].specificity != hits[j].specificity {
			return hits[i].specificity < hits[j].specificity
		}
		return hits[i].order < hits[j].order
	})
	out := make([]properties, len(hits))
	for i, h := range hits {
		out[i] = h.decls
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// paintSpec is a fill or stroke before its gradient is resolved.
type paintSpec struct {
	none    bool
	current bool   // currentColor
	url     string // a gradient's id
	color   vector.Color
	// fallback is the colour after url(#id), or none.
	fallbackNone bool
}

// parsePaint reads a fill or stroke value; ok is false for a value it
// does not understand (the property is then ignored, as in CSS).
func parsePaint(s string) (paintSpec, bool) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "none", "transparent":
		return paintSpec{none: true}, true
	case "currentcolor":
		return paintSpec{current: true}, true
	}
	if strings.HasPrefix(s, "url(") {
		end := strings.IndexByte(s, ')')
		if end < 0 {
			return paintSpec{}, false
		}
		ref := strings.Trim(strings.TrimSpace(s[4:end]), `"'`)
		p := paintSpec{url: ref, fallbackNone: true}
		if rest := strings.TrimSpace(s[end+1:]); rest != "" {
			if fb, ok := parsePaint(rest); ok && fb.url == "" {
				p.fallbackNone, p.color, p.current = fb.none, fb.color, fb.current
			}
		}
		return p, true
	}
	c, ok := parseColor(s)
	return paintSpec{color: c}, ok
}

// parseColor reads #rgb, #rrggbb, rgb(), rgba() (alpha ignored) and the
// CSS colour names.
func parseColor(s string) (vector.Color, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if strings.HasPrefix(s, "#") {
		h := s[1:]
		if len(h) == 4 || len(h) == 8 { // with alpha: the alpha is ignored
			h = h[:len(h)*3/4]
		}
		switch len(h) {
		case 3:
			v, err := strconv.ParseUint(h, 16, 16)
			if err != nil {
				return vector.Color{}, false
			}
			return vector.Color{R: uint8(v>>8) * 17, G: uint8(v>>4&15) * 17, B: uint8(v&15) * 17}, true
		case 6:
			v, err := strconv.ParseUint(h, 16, 32)
			if err != nil {
				return vector.Color{}, false
			}
			return vector.Color{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v)}, true
		}
		return vector.Color{}, false
	}
	if strings.HasPrefix(s, "rgb(") || strings.HasPrefix(s, "rgba(") {
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if end < open {
			return vector.Color{}, false
		}
		parts := strings.FieldsFunc(s[open+1:end], func(r rune) bool { return r == ',' || r == ' ' || r == '/' })
		if len(parts) < 3 {
			return vector.Color{}, false
		}
		var ch [3]uint8
		for i := 0; i < 3; i++ {
			p := parts[i]
			percent := strings.HasSuffix(p, "%")
			v, err := strconv.ParseFloat(strings.TrimSuffix(p, "%"), 64)
			if err != nil || math.IsNaN(v) {
				return vector.Color{}, false
			}
			if percent {
				v = v * 255 / 100
			}
			ch[i] = uint8(math.Round(math.Max(0, math.Min(255, v))))
		}
		return vector.Color{R: ch[0], G: ch[1], B: ch[2]}, true
	}
	if c, ok := colornames.Map[s]; ok {
		return vector.Color{R: c.R, G: c.G, B: c.B}, true
	}
	return vector.Color{}, false
}

// parseOpacity reads a number from 0 to 1 or a percentage.
func parseOpacity(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	scale := 1.0
	if strings.HasSuffix(s, "%") {
		s, scale = s[:len(s)-1], 0.01
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) {
		return 0, false
	}
	return math.Max(0, math.Min(1, v*scale)), true
}

// Pixels a unit, at 96 a inch (CSS).
var unitPx = map[string]float64{"": 1, "px": 1, "pt": 96.0 / 72, "pc": 16, "mm": 96 / 25.4, "cm": 96 / 2.54, "in": 96}

// length reads an SVG length in user units; percent is what 100% is,
// em the font size. ok is false for anything else.
func length(s string, percent, em float64) (float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	i := len(s)
	for i > 0 && (s[i-1] >= 'a' && s[i-1] <= 'z' || s[i-1] >= 'A' && s[i-1] <= 'Z' || s[i-1] == '%') {
		i--
	}
	num, unit := s[:i], strings.ToLower(s[i:])
	n := numberScanner{s: num}
	v, ok := n.number()
	if !ok || n.i != len(num) {
		return 0, false
	}
	switch unit {
	case "%":
		return v * percent / 100, true
	case "em":
		return v * em, true
	case "ex":
		return v * em / 2, true
	}
	k, ok := unitPx[unit]
	if !ok {
		return 0, false
	}
	return v * k, true
}

// parseTransform reads a transform list: matrix, translate, scale,
// rotate, skewX and skewY, applied right to left as SVG says. ok is false
// when the list cannot be read (the element is then drawn untransformed,
// like a browser does).
func parseTransform(s string) (vector.Matrix, bool) {
	m := vector.Identity
	s = strings.TrimSpace(s)
	for s != "" {
		open := strings.IndexByte(s, '(')
		end := strings.IndexByte(s, ')')
		if open < 0 || end < open {
			return vector.Identity, false
		}
		name := strings.TrimSpace(s[:open])
		args := numbers(s[open+1:end], 7)
		s = strings.TrimLeft(s[end+1:], " \t\r\n,")
		var t vector.Matrix
		switch {
		case name == "matrix" && len(args) == 6:
			t = vector.Matrix{args[0], args[1], args[2], args[3], args[4], args[5]}
		case name == "translate" && len(args) == 1:
			t = vector.Translate(args[0], 0)
		case name == "translate" && len(args) == 2:
			t = vector.Translate(args[0], args[1])
		case name == "scale" && len(args) == 1:
			t = vector.Scale(args[0], args[0])
		case name == "scale" && len(args) == 2:
			t = vector.Scale(args[0], args[1])
		case name == "rotate" && len(args) == 1:
			t = vector.Rotate(args[0])
		case name == "rotate" && len(args) == 3:
			t = vector.Translate(-args[1], -args[2]).Then(vector.Rotate(args[0])).Then(vector.Translate(args[1], args[2]))
		case name == "skewX" && len(args) == 1:
			t = vector.SkewX(args[0])
		case name == "skewY" && len(args) == 1:
			t = vector.SkewY(args[0])
		default:
			return vector.Identity, false
		}
		// The list's first transform is the outermost: it applies last.
		m = t.Then(m)
	}
	return m, m.Finite()
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
