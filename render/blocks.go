package render

import (
	"encoding/json"
	"fmt"
)

// keyValueElement is a block of label/value pairs.
type keyValueElement struct {
	items      []*keyValueItem
	labelWidth float64 // millimetres; 0 with labelShare 0 means 35%
	labelShare float64
	style      textStyle
}

type keyValueItem struct {
	label, value *textTemplate
	format       cellFormat
}

const defaultLabelShare = 0.35

func (e *keyValueElement) fontStyles() fontStyle {
	return e.style.fontStyles() | styleOf(true, e.style.italic)
}

func (e *keyValueElement) refs() elementRefs {
	r := elementRefs{}
	for _, it := range e.items {
		r.texts = append(r.texts, it.label, it.value)
	}
	return r
}

func parseKeyValue(c *compiler, path string, props object, _ depth) element {
	e := &keyValueElement{style: c.parseStyle(path, props, textStyle{size: defaultFontSize, align: "L"})}
	e.labelWidth, e.labelShare = c.width(props, path, "labelWidth")
	if !props.present("items") {
		c.add(path+".items", "is required")
		return e
	}
	items, ok := c.array(path+".items", props.raw("items"))
	if !ok {
		return e
	}
	for i, raw := range items {
		ipath := fmt.Sprintf("%s.items[%d]", path, i)
		o, ok := c.object(ipath, raw)
		if !ok {
			continue
		}
		it := &keyValueItem{label: c.requiredText(ipath, o, "label"), value: c.requiredText(ipath, o, "value")}
		if f, ok := c.str(o, ipath, "format"); ok {
			format, err := parseCellFormat(f, c.locale())
			if err != nil {
				c.add(ipath+".format", "%v", err)
			}
			it.format = format
		}
		e.items = append(e.items, it)
	}
	return e
}

// labelWidthIn returns the label column's width within width.
func (e *keyValueElement) labelWidthIn(width float64) float64 {
	switch {
	case e.labelWidth > 0:
		return min(e.labelWidth, width*0.8)
	case e.labelShare > 0:
		return min(e.labelShare, 0.8) * width
	}
	return defaultLabelShare * width
}

// dividerElement is a horizontal rule.
type dividerElement struct {
	color     [3]int
	thickness float64 // millimetres
	spacing   float64 // millimetres above and below
}

func (e *dividerElement) fontStyles() fontStyle { return 0 }
func (e *dividerElement) refs() elementRefs     { return elementRefs{} }

func parseDivider(c *compiler, path string, props object, _ depth) element {
	e := &dividerElement{color: [3]int{0xbb, 0xbb, 0xbb}}
	if col, ok := c.str(props, path, "color"); ok {
		rgb, valid := parseColor(col)
		if !valid {
			c.add(path+".color", "must be a colour written #rrggbb")
		}
		e.color = rgb
	}
	e.thickness = c.length(props, path, "thickness", 0.05, 5, 0.3)
	e.spacing = c.length(props, path, "spacing", 0, 50, 3)
	return e
}

// spacerElement is empty vertical space.
type spacerElement struct {
	height float64 // millimetres
}

func (e *spacerElement) fontStyles() fontStyle { return 0 }
func (e *spacerElement) refs() elementRefs     { return elementRefs{} }

func parseSpacer(c *compiler, path string, props object, _ depth) element {
	return &spacerElement{height: c.length(props, path, "height", 0, 250, 5)}
}

// pageBreakElement starts a new page (PDF) or a new sheet (XLSX).
type pageBreakElement struct{}

func (e *pageBreakElement) fontStyles() fontStyle { return 0 }
func (e *pageBreakElement) refs() elementRefs     { return elementRefs{} }

func parsePageBreak(*compiler, string, object, depth) element { return &pageBreakElement{} }

// columnsElement lays component lists side by side.
type columnsElement struct {
	children [][]*component
	weights  []float64 // relative widths, one per child
	gap      float64   // millimetres between columns
}

const maxColumns = 10

func (e *columnsElement) fontStyles() fontStyle { return 0 }
func (e *columnsElement) refs() elementRefs     { return elementRefs{children: e.children} }

func parseColumns(c *compiler, path string, props object, d depth) element {
	e := &columnsElement{}
	e.gap = c.length(props, path, "gap", 0, 50, 6)
	if !props.present("children") {
		c.add(path+".children", "is required: an array of component arrays, one per column")
		return e
	}
	cols, ok := c.array(path+".children", props.raw("children"))
	if !ok {
		return e
	}
	if len(cols) == 0 || len(cols) > maxColumns {
		c.add(path+".children", "must hold 1 to %d columns", maxColumns)
		return e
	}
	inner := depth{nesting: d.nesting + 1, loops: d.loops, conds: d.conds}
	for i, raw := range cols {
		cpath := fmt.Sprintf("%s.children[%d]", path, i)
		items, ok := c.array(cpath, raw)
		if !ok {
			e.children = append(e.children, nil)
			continue
		}
		var list []*component
		for j, item := range items {
			if comp := c.parseComponent(fmt.Sprintf("%s[%d]", cpath, j), item, inner); comp != nil {
				list = append(list, comp)
			}
		}
		e.children = append(e.children, list)
	}
	e.weights = make([]float64, len(e.children))
	for i := range e.weights {
		e.weights[i] = 1
	}
	if props.present("widths") {
		ws, ok := c.array(path+".widths", props.raw("widths"))
		if ok && len(ws) != len(e.children) {
			c.add(path+".widths", "must hold one relative width per column (%d)", len(e.children))
		} else if ok {
			for i := range ws {
				var w float64
				if err := json.Unmarshal(ws[i], &w); err != nil || w <= 0 || w > 100 {
					c.add(fmt.Sprintf("%s.widths[%d]", path, i), "must be a number from 0 to 100 (a relative width)")
					continue
				}
				e.weights[i] = w
			}
		}
	}
	return e
}

// columnBounds returns each column's x offset and width within width.
func (e *columnsElement) columnBounds(width float64) (xs, ws []float64) {
	n := len(e.children)
	gap := min(e.gap, width/float64(4*n))
	avail := width - gap*float64(n-1)
	total := 0.0
	for _, w := range e.weights {
		total += w
	}
	xs, ws = make([]float64, n), make([]float64, n)
	x := 0.0
	for i, w := range e.weights {
		xs[i] = x
		ws[i] = avail * w / total
		x += ws[i] + gap
	}
	return xs, ws
}
