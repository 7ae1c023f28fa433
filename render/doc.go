// Package render is Folio's document engine. It checks template definitions
// (schema v1, variables, constants, calculated variables), evaluates
// placeholders in a sandbox and writes documents within the generation
// limits. It is pure: no database, network, clock or mutable global state;
// everything it needs is passed in.
//
// Use: build one Engine per process with NewEngine, Compile each stored
// definition once, then for every request call Template.Values on the
// request variables and Template.Render with the result.
//
// # Schema v1
//
//	{"format": "pdf", "pageSize": "A4"|"Letter", "orientation": "portrait"|"landscape", "metadata": {...},
//	 "margins": {"top": mm, "right": mm, "bottom": mm, "left": mm},   // default 20 each
//	 "sections": [{"id": "...", "name": "...", "role": "body"|"header"|"footer",
//	   "components": [{"type": "...", "props": {...}, "if": "expr", "each": "expr", "as": "name"}]}]}
//
// Components (docs/templates.md has every prop): text {content, style
// {fontSize, bold, italic, color "#rrggbb", align left|center|right}},
// heading {content, level 1-3, style}, table {rows (an expression yielding
// an array), columns [{header, value, width, align, format}], as (default
// "row"), showHeader, bordered, style}, keyValue {items [{label, value,
// format}], labelWidth}, image {src (a PNG, JPEG, WebP or SVG data URI,
// asset:<ref> or an https URL fetched through Options.Fetch), width,
// height, align}, svg {content (SVG markup) or src, width, height, align:
// drawn as vectors, see render/svg}, qrcode {value, size, level}, barcode {value (Code 128), height,
// width, showText}, divider {color, thickness, spacing}, spacer {height},
// pageBreak, and columns {children (one component array per column),
// widths, gap}. Any component may carry "if" (drawn only when the value is
// truthy: not false, nil, 0, "" or empty) and "each" (drawn once per array
// element, bound to "as", default "item", with its position from 0 in
// "index"). Header and footer sections repeat on every PDF page and see
// "page" and "pages". Unknown fields are ignored and listed by
// Template.Warnings, with names no declaration gives; unknown component
// types are errors. "metadata" {title, author, subject, keywords,
// language, creationDate} sets the document properties over Options.
//
// PDF pages are laid out as boxes (a line of text, a table row, an image)
// that never straddle a page break; a table's header is drawn again above
// a row that starts a page. The layout is page-aware: "page" and "pages"
// work in the body too, header and footer sections take "on" (first, last,
// notFirst, notLast), any component may be kept together, paragraphs keep
// widows and orphans, and tables may draw continued rows with a carried
// subtotal (continuedLabel, carryForward), subtotals (groupBy), totals
// (a column's total) and summary rows below them (subtotal, tax, total,
// with formulas). In XLSX every body section is a sheet, tables become
// typed rows with formulas (a column's formula), SUBTOTAL totals, outline
// levels and an autofilter, summary rows are live formulas, money is kept
// in its currency's minor unit, sheets print one page wide with the
// header row repeated, and images, QR codes and barcodes are left out.
// Each render runs under a memory budget (Limits.Memory), reserved from
// the engine's pool before it starts.
//
// # Expressions
//
// Text holds {{ expression }} placeholders in the github.com/expr-lang/expr
// language: paths (customer.address.city), arithmetic, comparisons,
// a ? b : c, let, and pipes (total | currency("EUR") calls
// currency(total, "EUR"); a bare "| upper" means "| upper()"). A missing
// variable or path yields nothing. Helpers: currency(value, code),
// formatNumber(value, decimals), formatPercent(value, decimals),
// formatDate(value, layout) with styles ("long") or layouts like
// "DD.MM.YYYY", "ddd D MMM" or Go layouts, t(key) for the schema's
// translations, upper, lower, default(value, fallback),
// join(array, separator), replace(text, old, new), plus expr's pure
// builtins (len, sum, map, filter, round, …). There is no clock, time-zone
// database, I/O or reflection on Go values. Each expression may hold at
// most Limits.Operations AST nodes, and one evaluation may run at most
// Operations×LoopIterations operations and build text of at most
// min(Limits.Bytes, 16 MB).
//
// # Locales
//
// The schema's "locale" (a BCP 47 tag), or Definition.Locale for a
// request that overrides it, sets how the formatting helpers and the
// number, currency, percent and date cell formats write values, with
// CLDR data from render/expr/locale; without one, the formats are Folio's
// original en-US ones.
package render
