package render

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

// component is one schema component: an element plus the optional
// "if" condition and "each"/"as" repetition every component may carry.
type component struct {
	kind string
	path string
	cond *expression // "if": rendered only when truthy
	each *expression // "each": rendered once per element
	as   string      // the element's name inside the loop (default "item")
	elem element
	// keepTogether moves the component to the next PDF page rather than
	// splitting it ("keepTogether": true, on the component or in its props).
	keepTogether bool
	// pageAware marks a body component that reads "page": it is laid out
	// with the number of the page it lands on, and kept on that page.
	pageAware bool
	// anchor names the component as the target of "#anchor" links.
	anchor string
}

// element is what a component draws; the output formats switch on its
// concrete type.
type element interface {
	// fontStyles are the font styles the element can draw with.
	fontStyles() fontStyle
	// refs lists the text templates, expressions and child components the
	// element holds, so checks can look inside every element alike.
	refs() elementRefs
}

// elementRefs is what an element refers to.
type elementRefs struct {
	texts    []*textTemplate
	exprs    []*expression
	children [][]*component
}

// elementParser reads a component's props. Components with children call
// c.parseComponent for them with d one level deeper.
type elementParser func(c *compiler, path string, props object, d depth) element

// elementParsers is the component catalogue.
var elementParsers map[string]elementParser

func init() {
	// Assigned in init because parseColumns parses components recursively.
	elementParsers = map[string]elementParser{
		"text":      parseText,
		"heading":   parseHeading,
		"table":     parseTable,
		"image":     parseImage,
		"svg":       parseSVGComponent,
		"qrcode":    parseQRCode,
		"barcode":   parseBarcode,
		"keyValue":  parseKeyValue,
		"divider":   parseDivider,
		"spacer":    parseSpacer,
		"pageBreak": parsePageBreak,
		"columns":   parseColumns,
		"markdown":  parseMarkdownComponent,
		"toc":       parseTOC,
		"chart":     parseChart,
	}
}

// depth is how deeply a component sits: container levels, enclosing loops
// and enclosing conditions (each counting the component's own if/each).
type depth struct {
	nesting, loops, conds int
}

func (d depth) max(o depth) depth {
	return depth{max(d.nesting, o.nesting), max(d.loops, o.loops), max(d.conds, o.conds)}
}

// defaultAs is the loop variable name when "each" has no "as".
const defaultAs = "item"

var identifierPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// exprKeywords cannot be used as names.
var exprKeywords = map[string]bool{
	"true": true, "false": true, "nil": true, "let": true, "if": true, "else": true,
	"in": true, "not": true, "and": true, "or": true, "matches": true, "contains": true,
	"startsWith": true, "endsWith": true,
}

// checkName returns why name cannot name a variable, or "".
func checkName(name string) string {
	switch {
	case name == "":
		return "is required"
	case !identifierPattern.MatchString(name):
		return "must start with a letter or _ and hold only letters, digits and _"
	case strings.HasPrefix(name, reservedPrefix):
		return "must not start with " + reservedPrefix
	case exprKeywords[name]:
		return "is a reserved word"
	}
	return ""
}

func (c *compiler) parseComponent(path string, raw json.RawMessage, d depth) *component {
	c.components++
	o, ok := c.object(path, raw)
	if !ok {
		return nil
	}
	comp := &component{path: path}
	kind, ok := c.str(o, path, "type")
	if !ok {
		if !o.present("type") {
			c.add(path+".type", "is required")
		}
		o.markAll() // without a type, no key is known or unknown
		return nil
	}
	parse, known := elementParsers[kind]
	if !known {
		c.add(path+".type", "unknown component type %q", clip(kind, 40))
		o.markAll() // the type is the mistake, not its props
		return nil
	}
	comp.kind = kind
	if src, ok := c.str(o, path, "if"); ok {
		comp.cond = c.compileExpr(path+".if", src)
		d.conds++
	}
	if src, ok := c.str(o, path, "each"); ok {
		comp.each = c.compileExpr(path+".each", src)
		d.loops++
		comp.as = defaultAs
		if as, ok := c.str(o, path, "as"); ok {
			if msg := checkName(as); msg != "" {
				c.add(path+".as", "%s", msg)
			}
			comp.as = as
		}
	} else if o.present("as") {
		c.add(path+".as", "needs \"each\"")
	}
	c.checkDepth(path, d)
	props := object{}
	if o.present("props") {
		if props, ok = c.object(path+".props", o.raw("props")); !ok {
			return nil
		}
	}
	outer := c.family
	for _, at := range []struct {
		o    object
		path string
	}{{o, path}, {props, path + ".props"}} {
		if fam, ok := c.str(at.o, at.path, "fontFamily"); ok {
			c.family = c.checkFamily(at.path+".fontFamily", fam)
		}
	}
	comp.elem = parse(c, path+".props", props, d)
	c.family = outer
	if comp.elem == nil {
		return nil
	}
	for _, at := range []struct {
		o    object
		path string
	}{{o, path}, {props, path + ".props"}} {
		if b, ok := c.boolean(at.o, at.path, "keepTogether"); ok && b {
			comp.keepTogether = true
		}
		if a := c.parseAnchor(at.o, at.path); a != "" {
			comp.anchor = a
		}
	}
	c.styles |= comp.elem.fontStyles()
	return comp
}

// checkDepth records the deepest position seen and reports positions
// deeper than the limits allow.
func (c *compiler) checkDepth(path string, d depth) {
	c.depth = c.depth.max(d)
	if d.nesting > c.limits.NestingDepth {
		c.add(path, "is nested %d levels deep, maximum %d", d.nesting, c.limits.NestingDepth)
	}
	if d.loops > c.limits.LoopDepth {
		c.add(path+".each", "is inside %d loops, maximum %d", d.loops, c.limits.LoopDepth)
	}
	if d.conds > c.limits.ConditionalDepth {
		c.add(path+".if", "is inside %d conditions, maximum %d", d.conds, c.limits.ConditionalDepth)
	}
}

// textStyle is how text is drawn.
type textStyle struct {
	size         float64 // points
	bold, italic bool
	color        [3]int
	align        string // fpdf alignment: "L", "C" or "R"
	alignSet     bool   // align was given: right-to-left text is not aligned right by itself
	family       string // font family; "" is the document's (or the engine's) default
	link         string // PDF: the text is a link to this URL or #anchor
}

const defaultFontSize = 11

// headingSizes are the font sizes of heading levels 1 to 3, in points.
var headingSizes = [...]float64{1: 20, 2: 16, 3: 13}

func (s textStyle) fontStyles() fontStyle { return styleOf(s.bold, s.italic) }

// parseStyle reads props.style {fontSize, bold, italic, color, align} over base.
func (c *compiler) parseStyle(path string, props object, base textStyle) textStyle {
	st := base
	st.family = c.family
	if !props.present("style") {
		return st
	}
	path += ".style"
	o, ok := c.object(path, props.raw("style"))
	if !ok {
		return st
	}
	if size, ok := c.number(o, path, "fontSize"); ok {
		if size < 4 || size > 96 {
			c.add(path+".fontSize", "must be between 4 and 96 (points)")
		} else {
			st.size = size
		}
	}
	if b, ok := c.boolean(o, path, "bold"); ok {
		st.bold = b
	}
	if i, ok := c.boolean(o, path, "italic"); ok {
		st.italic = i
	}
	if col, ok := c.str(o, path, "color"); ok {
		rgb, valid := parseColor(col)
		if !valid {
			c.add(path+".color", "must be a colour written #rrggbb")
		}
		st.color = rgb
	}
	if fam, ok := c.str(o, path, "fontFamily"); ok {
		st.family = c.checkFamily(path+".fontFamily", fam)
	}
	st.alignSet = o.present("align")
	switch c.oneOf(o, path, "align", "left", "left", "center", "right") {
	case "center":
		st.align = "C"
	case "right":
		st.align = "R"
	default:
		st.align = "L"
	}
	return st
}

// parseColor reads "#rrggbb" or "#rgb".
func parseColor(s string) ([3]int, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "#")
	if len(s) == 3 {
		s = string([]byte{s[0], s[0], s[1], s[1], s[2], s[2]})
	}
	if len(s) != 6 {
		return [3]int{}, false
	}
	n, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		return [3]int{}, false
	}
	return [3]int{int(n >> 16 & 0xff), int(n >> 8 & 0xff), int(n & 0xff)}, true
}

// content reads the required props.content text template.
func (c *compiler) content(path string, props object) *textTemplate {
	src, ok := c.str(props, path, "content")
	if !ok {
		if !props.present("content") {
			c.add(path+".content", "is required")
		}
		return &textTemplate{}
	}
	return c.compileText(path+".content", src)
}

// textElement is a paragraph that wraps.
type textElement struct {
	content *textTemplate
	style   textStyle
	link    *textTemplate // "link": a URL or #anchor; nil for none
	// orphans and widows are the fewest lines of the paragraph left at the
	// bottom of a page and carried to the top of the next when it breaks.
	orphans, widows int
}

// Widow and orphan control: the default and the most lines one may ask for.
const (
	defaultWidows = 2
	maxWidows     = 10
)

// lineCount reads an optional count of lines in [1, maxWidows].
func (c *compiler) lineCount(o object, path, key string) int {
	f, ok := c.number(o, path, key)
	if !ok {
		return defaultWidows
	}
	if f != float64(int(f)) || f < 1 || f > maxWidows {
		c.add(path+"."+key, "must be a whole number of lines from 1 to %d", maxWidows)
		return defaultWidows
	}
	return int(f)
}

func (e *textElement) fontStyles() fontStyle { return e.style.fontStyles() }
func (e *textElement) refs() elementRefs     { return elementRefs{texts: withLink(e.content, e.link)} }

func parseText(c *compiler, path string, props object, _ depth) element {
	e := &textElement{
		content: c.content(path, props),
		style:   c.parseStyle(path, props, textStyle{size: defaultFontSize, align: "L"}),
		orphans: c.lineCount(props, path, "orphans"),
		widows:  c.lineCount(props, path, "widows"),
		link:    c.parseLink(props, path),
	}
	if md, ok := c.boolean(props, path, "markdown"); ok && md {
		if e.link != nil {
			c.add(path+".link", "cannot be used with \"markdown\": true; write the links in the Markdown")
		}
		return c.markdown(path, e.content, e.style)
	}
	return e
}

// withLink lists a text and its link template, when there is one.
func withLink(content, link *textTemplate) []*textTemplate {
	if link == nil {
		return []*textTemplate{content}
	}
	return []*textTemplate{content, link}
}

// headingElement is larger bold text.
type headingElement struct {
	content *textTemplate
	level   int
	style   textStyle
	link    *textTemplate // "link": a URL or #anchor; nil for none
	// keepWithNext keeps the heading on the page of what follows it, so a
	// heading never ends a page.
	keepWithNext bool
}

func (e *headingElement) fontStyles() fontStyle { return e.style.fontStyles() }
func (e *headingElement) refs() elementRefs     { return elementRefs{texts: withLink(e.content, e.link)} }

func parseHeading(c *compiler, path string, props object, _ depth) element {
	level := 1
	if f, ok := c.number(props, path, "level"); ok {
		if f != 1 && f != 2 && f != 3 {
			c.add(path+".level", "must be 1, 2 or 3")
		} else {
			level = int(f)
		}
	}
	base := textStyle{size: headingSizes[level], bold: true, align: "L"}
	st := c.parseStyle(path, props, base)
	st.bold = true // a heading is bold whatever its style says
	e := &headingElement{content: c.content(path, props), level: level, style: st, keepWithNext: true, link: c.parseLink(props, path)}
	if b, ok := c.boolean(props, path, "keepWithNext"); ok {
		e.keepWithNext = b
	}
	return e
}
