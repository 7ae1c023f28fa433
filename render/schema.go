package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// document is a parsed schema v1.
type document struct {
	format      Format // the schema's own format field; "" when absent
	pageSize    string // "A4" or "Letter"
	orientation string // "portrait" or "landscape"
	margins     margins
	sections    []*section
	metadata    *docMetadata    // "metadata": document properties; nil when absent
	business    businessOptions // "pdfa", "watermark" (business.go)
	einvoice    *einvoiceSpec   // "einvoice": the EN 16931 mapping (einvoice.go)
	fontFamily  string          // "fontFamily": the default family; "" the engine's
	// missingGlyphs is "warn" or "error": what a character no font draws is.
	missingGlyphs string
}

// margins are page margins in millimetres.
type margins struct {
	top, right, bottom, left float64
}

var defaultMargins = margins{top: 20, right: 20, bottom: 20, left: 20}

// Section roles.
const (
	roleBody   = "body"
	roleHeader = "header"
	roleFooter = "footer"
)

// section is a titled group of components; header and footer sections
// repeat on the PDF pages their "on" selects.
type section struct {
	id, name, role string
	on             string // header and footer sections: onAll, onFirst, onLast, onNotFirst or onNotLast
	components     []*component
}

// Pages a header or footer section is drawn on ("on").
const (
	onAll      = "all"
	onFirst    = "first"
	onLast     = "last"
	onNotFirst = "notFirst"
	onNotLast  = "notLast"
)

// shownOn reports whether a header or footer section is drawn on page n
// of a document of pages pages (0 when the total is not known yet: then
// no page is the last).
func (s *section) shownOn(n, pages int) bool {
	last := pages > 0 && n == pages
	switch s.on {
	case onFirst:
		return n == 1
	case onLast:
		return last
	case onNotFirst:
		return n != 1
	case onNotLast:
		return !last
	}
	return true
}

// pageDimensions returns the page width and height in millimetres.
func (d *document) pageDimensions() (w, h float64) {
	w, h = 210, 297
	if d.pageSize == "Letter" {
		w, h = 215.9, 279.4
	}
	if d.orientation == "landscape" {
		w, h = h, w
	}
	return w, h
}

// sectionsWithRole returns the sections of one role, in schema order.
func (d *document) sectionsWithRole(role string) []*section {
	var out []*section
	for _, s := range d.sections {
		if s.role == role {
			out = append(out, s)
		}
	}
	return out
}

// object is a JSON object whose fields are decoded one by one, so every
// problem can be reported with its path. It remembers which keys the
// parser asked for: the others are unknown, reported as warnings.
type object struct {
	fields map[string]json.RawMessage
	read   map[string]bool
}

// raw returns the value of key, nil when absent.
func (o object) raw(key string) json.RawMessage {
	o.mark(key)
	return o.fields[key]
}

// present reports whether key holds a non-null value.
func (o object) present(key string) bool {
	o.mark(key)
	raw, ok := o.fields[key]
	return ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// markAll counts every key as read: for an object whose keys cannot be
// judged (a component of an unknown type), so none is warned about.
func (o object) markAll() {
	for k := range o.fields {
		o.mark(k)
	}
}

func (o object) mark(key string) {
	if o.read != nil {
		o.read[key] = true
	}
}

// objectAt is an object the parser read and where it sits.
type objectAt struct {
	path string
	o    object
}

func (c *compiler) object(path string, raw json.RawMessage) (object, bool) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		c.add(path, "must be an object")
		return object{}, false
	}
	o := object{fields: fields, read: map[string]bool{}}
	c.objects = append(c.objects, objectAt{path, o})
	return o, true
}

func (c *compiler) array(path string, raw json.RawMessage) ([]json.RawMessage, bool) {
	var a []json.RawMessage
	if err := json.Unmarshal(raw, &a); err != nil {
		c.add(path, "must be an array")
		return nil, false
	}
	return a, true
}

// str reads an optional text field; ok is false when it is absent or wrong.
func (c *compiler) str(o object, path, key string) (string, bool) {
	if !o.present(key) {
		return "", false
	}
	var s string
	if err := json.Unmarshal(o.raw(key), &s); err != nil {
		c.add(path+"."+key, "must be a string")
		return "", false
	}
	return s, true
}

// number reads an optional numeric field.
func (c *compiler) number(o object, path, key string) (float64, bool) {
	if !o.present(key) {
		return 0, false
	}
	var f float64
	if err := json.Unmarshal(o.raw(key), &f); err != nil {
		c.add(path+"."+key, "must be a number")
		return 0, false
	}
	return f, true
}

// boolean reads an optional true/false field.
func (c *compiler) boolean(o object, path, key string) (bool, bool) {
	if !o.present(key) {
		return false, false
	}
	var b bool
	if err := json.Unmarshal(o.raw(key), &b); err != nil {
		c.add(path+"."+key, "must be true or false")
		return false, false
	}
	return b, true
}

// oneOf reads an optional text field that must be one of choices (compared
// without case); it returns the matching choice or def.
func (c *compiler) oneOf(o object, path, key, def string, choices ...string) string {
	s, ok := c.str(o, path, key)
	if !ok {
		return def
	}
	for _, choice := range choices {
		if strings.EqualFold(s, choice) {
			return choice
		}
	}
	c.add(path+"."+key, "must be one of %s", strings.Join(choices, ", "))
	return def
}

// parseSchema reads schema v1; problems are collected in c.
func (c *compiler) parseSchema(raw json.RawMessage) *document {
	doc := &document{pageSize: "A4", orientation: "portrait", margins: defaultMargins}
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		c.add("schema", "is required")
		return doc
	}
	o, ok := c.object("schema", raw)
	if !ok {
		return doc
	}
	c.parseLocale(o, c.override) // before any expression is compiled
	if f := c.oneOf(o, "schema", "format", "", string(PDF), string(XLSX)); f != "" {
		doc.format = Format(f)
	}
	doc.pageSize = c.oneOf(o, "schema", "pageSize", "A4", "A4", "Letter")
	doc.orientation = c.oneOf(o, "schema", "orientation", "portrait", "portrait", "landscape")
	if o.present("margins") {
		doc.margins = c.parseMargins(o.raw("margins"), doc)
	}
	doc.metadata = c.parseMetadata(o)
	c.parsePalette(o)
	doc.business = c.parseBusiness(o)
	doc.einvoice = c.parseEInvoice(o)
	if e := doc.einvoice; e != nil && facturX(e.profile) && doc.business.pdfa.part == 2 {
		c.add("schema.pdfa", "is %q, and the %s e-invoice needs PDF/A-3: leave pdfa out (Folio writes 3b) or use \"3b\" or \"3u\"", doc.business.pdfa, e.profile)
	}
	doc.missingGlyphs = c.oneOf(o, "schema", "missingGlyphs", missingWarn, missingWarn, missingError)
	if fam, ok := c.str(o, "schema", "fontFamily"); ok {
		c.family = c.checkFamily("schema.fontFamily", fam)
		doc.fontFamily = c.family
	}
	if !o.present("sections") {
		c.add("schema.sections", "is required")
		return doc
	}
	items, ok := c.array("schema.sections", o.raw("sections"))
	if !ok {
		return doc
	}
	ids := map[string]bool{}
	for i, item := range items {
		path := fmt.Sprintf("schema.sections[%d]", i)
		s := c.parseSection(path, item)
		if s == nil {
			continue
		}
		if s.id != "" && ids[s.id] {
			c.add(path+".id", "duplicates the id of an earlier section")
		}
		ids[s.id] = true
		doc.sections = append(doc.sections, s)
	}
	return doc
}

func (c *compiler) parseMargins(raw json.RawMessage, doc *document) margins {
	m := defaultMargins
	o, ok := c.object("schema.margins", raw)
	if !ok {
		return m
	}
	for _, side := range []struct {
		key string
		v   *float64
	}{{"top", &m.top}, {"right", &m.right}, {"bottom", &m.bottom}, {"left", &m.left}} {
		if f, ok := c.number(o, "schema.margins", side.key); ok {
			if f < 0 || f > 100 {
				c.add("schema.margins."+side.key, "must be between 0 and 100 (millimetres)")
				continue
			}
			*side.v = f
		}
	}
	w, h := doc.pageDimensions()
	if m.left+m.right > w-20 {
		c.add("schema.margins", "left and right margins leave less than 20 mm of page width")
	}
	if m.top+m.bottom > h-40 {
		c.add("schema.margins", "top and bottom margins leave less than 40 mm of page height")
	}
	return m
}

func (c *compiler) parseSection(path string, raw json.RawMessage) *section {
	o, ok := c.object(path, raw)
	if !ok {
		return nil
	}
	s := &section{}
	if id, ok := c.str(o, path, "id"); ok && strings.TrimSpace(id) != "" {
		s.id = id
	} else if !o.present("id") || ok {
		c.add(path+".id", "is required")
	}
	s.name, _ = c.str(o, path, "name")
	s.role = c.oneOf(o, path, "role", roleBody, roleBody, roleHeader, roleFooter)
	s.on = c.oneOf(o, path, "on", onAll, onAll, onFirst, onLast, onNotFirst, onNotLast)
	if s.on != onAll && s.role == roleBody {
		c.add(path+".on", "applies to header and footer sections only")
	}
	if !o.present("components") {
		return s
	}
	items, ok := c.array(path+".components", o.raw("components"))
	if !ok {
		return s
	}
	for i, item := range items {
		if comp := c.parseComponent(fmt.Sprintf("%s.components[%d]", path, i), item, depth{nesting: 1}); comp != nil {
			s.components = append(s.components, comp)
		}
	}
	return s
}
