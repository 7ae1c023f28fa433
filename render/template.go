package render

import (
	"context"
	"fmt"
	"io"
	"strings"

	"folio/render/text"
)

// Template is a compiled definition, ready to render. It is immutable and
// safe for concurrent use.
type Template struct {
	engine     *Engine
	doc        *document
	headers    []*component // header sections' components, drawn on every PDF page
	footers    []*component // footer sections' components
	body       []*section   // body sections, in order
	variables  []declaredVariable
	constants  map[string]any
	calculated []*calculated // in dependency order
	limits     Limits        // the limits Compile checked against; Values uses them
	components int           // components in the schema
	depth      depth         // deepest nesting, loop and condition levels
	styles     fontStyle     // font styles the document can draw
	// headerSections and footerSections are drawn on the pages their "on" selects.
	headerSections, footerSections []*section
	// pagesInExpression is set when "pages" is read inside a larger expression
	// or a header or footer is drawn only on the last page (or all but it), so
	// the total must be known before drawing (several layout passes); a bare
	// {{pages}} is filled in by the PDF writer afterwards.
	pagesInExpression bool
	// usesPages is set when anything reads "pages".
	usesPages bool
	// warnings are what Compile accepted but the author probably did not mean.
	warnings []Issue
	// fmt is the locale the template formats with and its translations.
	fmt *formatting
	// hasTOC is set when a table of contents lists the headings: the PDF
	// is laid out until the pages it shows agree with the layout.
	hasTOC bool
}

// compiler collects everything Compile learns and every problem it finds.
type compiler struct {
	issues
	limits     Limits
	exprs      *exprCompiler
	components int
	depth      depth
	styles     fontStyle
	images     map[string]*literalImage // literal images by source
	objects    []objectAt               // every schema object read, for unknown keys
	fmt        *formatting              // locale and translations, once the schema's are read
	override   string                   // the request's locale (Definition.Locale)
	fonts      *text.Registry           // the families fontFamily may name
	family     string                   // fontFamily of the enclosing component or the schema
	missing    []Issue                  // characters no font draws (checkGlyphs)
	palette    [][3]int                 // the schema's "palette": chart colours
	notes      []Issue                  // other warnings found reading components (SVG features left out)
}

func (c *compiler) compileExpr(path, src string) *expression {
	x, err := c.exprs.compile(path, src)
	if err != nil {
		c.add(path, "%v", err)
		return nil
	}
	return x
}

// Compile checks a definition and prepares it; expressions are compiled
// once here. Problems with the definition are reported as a *SchemaError
// listing all of them.
func (e *Engine) Compile(def Definition) (t *Template, err error) {
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, fmt.Errorf("render: internal error compiling template: %v", r)
		}
	}()
	limits := DefaultLimits()
	c := &compiler{limits: limits, exprs: newExprCompiler(limits), override: def.Locale, fonts: e.fonts}
	doc := c.parseSchema(def.Schema)
	if c.components > limits.Components {
		c.add("schema", "has %d components, maximum %d", c.components, limits.Components)
	}
	vars, consts, calcs := c.parseVariables(def)
	if doc.einvoice != nil {
		c.checkEInvoiceName(def)
	}
	if doc.missingGlyphs == missingError {
		for _, m := range c.missing {
			c.add(m.Path, "%s", m.Message)
		}
		c.missing = nil
	}
	var implicit []string
	if doc.einvoice != nil {
		implicit = append(implicit, EInvoiceNamespace) // the computed invoice (einvoice.go)
	}
	warnings := append(c.unknownKeys(), undeclaredNames(doc.sections, def, implicit...)...)
	warnings = append(warnings, c.translationWarnings()...)
	warnings = append(warnings, c.missing...)
	warnings = append(warnings, c.notes...)
	if len(warnings) > maxIssues {
		warnings = warnings[:maxIssues]
	}
	if err := c.err(); err != nil {
		err.Limit = limits.checkTemplate(c.components, c.depth, len(def.Variables)+len(def.CalculatedVariables))
		err.Warnings = warnings
		return nil, err
	}
	t = &Template{
		engine:     e,
		doc:        doc,
		variables:  vars,
		constants:  consts,
		calculated: calcs,
		limits:     limits,
		components: c.components,
		depth:      c.depth,
		styles:     c.styles | styleRegular,
		warnings:   warnings,
		fmt:        c.fmt,
	}
	if t.fmt == nil {
		t.fmt = defaultFormatting
	}
	t.headerSections = doc.sectionsWithRole(roleHeader)
	t.footerSections = doc.sectionsWithRole(roleFooter)
	t.headers = componentsOf(t.headerSections)
	t.footers = componentsOf(t.footerSections)
	t.body = doc.sectionsWithRole(roleBody)
	all := componentsOf(doc.sections)
	t.pagesInExpression = componentsUsePages(all)
	t.usesPages = componentsRead(all, "pages")
	t.hasTOC = hasTOC(all)
	for _, s := range append(t.headerSections[:len(t.headerSections):len(t.headerSections)], t.footerSections...) {
		if s.on == onLast || s.on == onNotLast {
			t.pagesInExpression = true
		}
	}
	for _, s := range t.body {
		for _, c := range s.components {
			c.pageAware = componentsRead([]*component{c}, "page")
		}
	}
	return t, nil
}

// componentsRead reports whether any of the components, or any component
// inside them, reads name.
func componentsRead(list []*component, name string) bool {
	for _, c := range list {
		for _, x := range []*expression{c.cond, c.each} {
			if x != nil && contains(x.names, name) {
				return true
			}
		}
		refs := c.elem.refs()
		for _, x := range refs.exprs {
			if contains(x.names, name) {
				return true
			}
		}
		for _, tt := range refs.texts {
			if tt.usesName(name) {
				return true
			}
		}
		for _, child := range refs.children {
			if componentsRead(child, name) {
				return true
			}
		}
	}
	return false
}

func componentsOf(sections []*section) []*component {
	var out []*component
	for _, s := range sections {
		out = append(out, s.components...)
	}
	return out
}

// componentsUsePages reports whether "pages" is read anywhere other than
// as a bare {{pages}} placeholder, looking inside columns too.
func componentsUsePages(list []*component) bool {
	for _, c := range list {
		for _, x := range []*expression{c.cond, c.each} {
			if x != nil && contains(x.names, "pages") {
				return true
			}
		}
		refs := c.elem.refs()
		for _, x := range refs.exprs {
			if contains(x.names, "pages") {
				return true
			}
		}
		for _, tt := range refs.texts {
			if tt.usesNameInExpression("pages") {
				return true
			}
		}
		for _, child := range refs.children {
			if componentsUsePages(child) {
				return true
			}
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Render writes the document in format to w. values come from Values.
// It stops at once when ctx is done, when the format's timeout in the limits
// passes (context.DeadlineExceeded), when a generation limit is exceeded
// (*LimitError) or when an expression or a value cannot be used
// (*ExpressionError); nothing is written to w unless the whole document is
// ready.
func (t *Template) Render(ctx context.Context, w io.Writer, format Format, values map[string]any, opts Options) (stats Stats, err error) {
	defer func() {
		if r := recover(); r != nil {
			stats, err = Stats{}, fmt.Errorf("render: internal error: %v", r)
		}
	}()
	if ctx == nil {
		ctx = context.Background()
	}
	limits := opts.Limits.WithDefaults()
	if err := limits.checkTemplate(t.components, t.depth, len(t.variables)+len(t.calculated)); err != nil {
		return Stats{}, err
	}
	if err := ctx.Err(); err != nil {
		return Stats{}, err
	}
	if format != PDF && format != XLSX && format != XML {
		return Stats{}, fmt.Errorf("render: unsupported format %q", format)
	}
	// The timeouts below start once the memory is reserved: waiting for
	// other renders is not rendering.
	info, err := t.info(values, opts, limits)
	if err != nil {
		return Stats{}, err
	}
	// The e-invoice's amounts are computed once, before layout: the
	// template draws them from the "einvoice" variable, the XML says them.
	if values, err = t.prepareEInvoice(values, &info, format, limits); err != nil {
		return Stats{}, err
	}
	if format == XML {
		return t.writeEInvoiceXML(ctx, w, info)
	}
	res, err := t.engine.gate().acquire(ctx, t.reservationFor(format, values, limits), opts.Interactive, opts.MemoryWait)
	if err != nil {
		return Stats{}, err
	}
	defer res.release()
	ctx = context.WithValue(ctx, reservationKey{}, res)
	switch format {
	case PDF:
		ctx, cancel := context.WithTimeout(ctx, limits.PDFTimeout)
		defer cancel()
		return t.renderPDF(ctx, w, values, limits, info)
	case XLSX:
		ctx, cancel := context.WithTimeout(ctx, limits.XLSXTimeout)
		defer cancel()
		return t.renderXLSX(ctx, w, values, limits, info)
	}
	return Stats{}, fmt.Errorf("render: unsupported format %q", format)
}

// checkTemplate checks a template's fixed sizes against the limits and
// returns the first one exceeded (nil when none is): components, nesting
// depth, nested loops, nested conditions, variables. Compile checks them
// against DefaultLimits; Render again against its own limits.
func (l Limits) checkTemplate(components int, d depth, variables int) *LimitError {
	switch {
	case components > l.Components:
		return newLimitError(LimitComponents, int64(components), int64(l.Components))
	case d.nesting > l.NestingDepth:
		return newLimitError(LimitNestingDepth, int64(d.nesting), int64(l.NestingDepth))
	case d.loops > l.LoopDepth:
		return newLimitError(LimitLoopDepth, int64(d.loops), int64(l.LoopDepth))
	case d.conds > l.ConditionalDepth:
		return newLimitError(LimitConditionalDepth, int64(d.conds), int64(l.ConditionalDepth))
	case variables > l.Variables:
		return newLimitError(LimitVariables, int64(variables), int64(l.Variables))
	}
	return nil
}

// checkFamily returns the canonical name of font family name, or reports
// it unknown, naming the families there are.
func (c *compiler) checkFamily(path, name string) string {
	if c.fonts == nil {
		return ""
	}
	// "asset:<name or id>" names a team's font asset, as images do.
	fam, ok := c.fonts.Family(strings.TrimPrefix(strings.TrimSpace(name), "asset:"))
	if !ok || strings.TrimSpace(name) == "" {
		c.add(path, "unknown font family %q; available: %s (add fonts with --font-dir or upload a font asset)", clip(name, 64), strings.Join(c.fonts.Names(), ", "))
		return ""
	}
	return fam.Name
}
