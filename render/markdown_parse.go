package render

import (
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension"
	xast "github.com/yuin/goldmark/extension/ast"
	gtext "github.com/yuin/goldmark/text"
)

// Markdown is parsed by goldmark (CommonMark with GFM tables and
// strikethrough) into a flat list of blocks the engine lays out itself:
// goldmark's HTML renderer is never used, and raw HTML is shown as the
// text it is written as.

// mdKind is what a Markdown block is.
type mdKind uint8

const (
	mdPara mdKind = iota
	mdHeading
	mdRule
	mdCode
	mdTable
)

// mdBlock is one laid-out unit: a paragraph (perhaps a list item's, with
// its marker), a heading, a rule, a code block or a table. Lists and
// block quotes become indentation.
type mdBlock struct {
	kind   mdKind
	level  int      // heading level, 1 to 6
	spans  []mdSpan // paragraph and heading text
	list   int      // list nesting: the text is indented this many steps
	quote  int      // block quote nesting: bars at the left
	marker string   // a list item's marker, on its first paragraph
	tight  bool     // no space below (a tight list's item)
	code   string   // a code block's text
	rows   [][][]mdSpan
	aligns []string // table column alignments: "L", "C", "R"
}

// mdSpan is a run of inline text in one style.
type mdSpan struct {
	text                       string
	bold, italic, code, strike bool
	link                       string // a link's destination; "" for none
}

// Markdown nesting deeper than this is laid out at this depth.
const maxMarkdownNesting = 8

// maxMarkdownBytes bounds the Markdown source laid out: more cannot fit
// any document the limits allow anyway, and goldmark's cost grows with it.
const maxMarkdownBytes = 1 << 20

var markdownParser = goldmark.New(goldmark.WithExtensions(east.Table, east.Strikethrough)).Parser()

// parseMarkdown turns Markdown source into blocks.
func parseMarkdown(src string) []mdBlock {
	if len(src) > maxMarkdownBytes {
		src = src[:maxMarkdownBytes]
	}
	source := []byte(src)
	doc := markdownParser.Parse(gtext.NewReader(source))
	w := &mdWalker{src: source}
	w.blocks(doc, 0, 0, false)
	return w.out
}

type mdWalker struct {
	src []byte
	out []mdBlock
}

// blocks appends the blocks under n, at list depth list and quote depth quote.
func (w *mdWalker) blocks(n ast.Node, list, quote int, tight bool) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		w.block(c, list, quote, tight, "")
	}
}

func (w *mdWalker) block(n ast.Node, list, quote int, tight bool, marker string) {
	switch n := n.(type) {
	case *ast.Heading:
		w.out = append(w.out, mdBlock{kind: mdHeading, level: min(max(n.Level, 1), 6), spans: w.inlines(n), list: list, quote: quote})
	case *ast.Paragraph, *ast.TextBlock:
		w.out = append(w.out, mdBlock{kind: mdPara, spans: w.inlines(n), list: list, quote: quote, marker: marker, tight: tight})
	case *ast.ThematicBreak:
		w.out = append(w.out, mdBlock{kind: mdRule, list: list, quote: quote})
	case *ast.CodeBlock, *ast.FencedCodeBlock:
		w.out = append(w.out, mdBlock{kind: mdCode, code: strings.TrimRight(w.lines(n), "\n"), list: list, quote: quote, marker: marker})
	case *ast.HTMLBlock:
		// Raw HTML is not interpreted: it is shown as written.
		s := w.lines(n)
		if n.HasClosure() {
			s += string(n.ClosureLine.Value(w.src))
		}
		w.out = append(w.out, mdBlock{kind: mdPara, spans: []mdSpan{{text: strings.TrimSpace(s)}}, list: list, quote: quote, marker: marker})
	case *ast.Blockquote:
		w.blocks(n, list, min(quote+1, maxMarkdownNesting), false)
	case *ast.List:
		num := n.Start
		for item := n.FirstChild(); item != nil; item = item.NextSibling() {
			m := "•"
			switch {
			case n.IsOrdered():
				m = strconv.Itoa(num) + string(rune(n.Marker))
				num++
			case list%3 == 1:
				m = "◦"
			case list%3 == 2:
				m = "▪"
			}
			w.item(item, min(list+1, maxMarkdownNesting), quote, n.IsTight, m)
		}
	case *xast.Table:
		w.table(n, list, quote)
	default:
		if n.HasChildren() {
			w.blocks(n, list, quote, tight)
		}
	}
}

// item lays out a list item: its first block carries the marker.
func (w *mdWalker) item(n ast.Node, list, quote int, tight bool, marker string) {
	first := true
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		m := ""
		if first {
			m = marker
		}
		from := len(w.out)
		w.block(c, list, quote, tight, m)
		if first && len(w.out) > from && w.out[from].marker == "" && w.out[from].list == list {
			w.out[from].marker = marker // a heading or rule first in an item
		}
		first = false
	}
	if first { // an empty item still shows its marker
		w.out = append(w.out, mdBlock{kind: mdPara, list: list, quote: quote, marker: marker, tight: tight})
	}
}

func (w *mdWalker) table(t *xast.Table, list, quote int) {
	b := mdBlock{kind: mdTable, list: list, quote: quote}
	for _, a := range t.Alignments {
		switch a {
		case xast.AlignCenter:
			b.aligns = append(b.aligns, "C")
		case xast.AlignRight:
			b.aligns = append(b.aligns, "R")
		default:
			b.aligns = append(b.aligns, "L")
		}
	}
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		var cells [][]mdSpan
		for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
			cells = append(cells, w.inlines(cell))
		}
		b.rows = append(b.rows, cells)
	}
	if len(b.rows) > 0 {
		w.out = append(w.out, b)
	}
}

// lines returns the text of a block's lines, as written.
func (w *mdWalker) lines(n ast.Node) string {
	var b strings.Builder
	ls := n.Lines()
	for i := 0; i < ls.Len(); i++ {
		seg := ls.At(i)
		b.Write(seg.Value(w.src))
	}
	return b.String()
}

// inlines returns the inline text of n as styled spans.
func (w *mdWalker) inlines(n ast.Node) []mdSpan {
	var out []mdSpan
	w.inline(n, mdSpan{}, &out, 0)
	return mergeSpans(out)
}

func (w *mdWalker) inline(n ast.Node, st mdSpan, out *[]mdSpan, d int) {
	add := func(s string) {
		if s != "" {
			sp := st
			sp.text = s
			*out = append(*out, sp)
		}
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			add(string(c.Value(w.src)))
			switch {
			case c.HardLineBreak():
				add("\n")
			case c.SoftLineBreak():
				add(" ")
			}
		case *ast.String:
			add(string(c.Value))
		case *ast.CodeSpan:
			inner := st
			inner.code = true
			w.inline(c, inner, out, d+1)
		case *ast.Emphasis:
			inner := st
			if c.Level >= 2 {
				inner.bold = true
			} else {
				inner.italic = true
			}
			w.inline(c, inner, out, d+1)
		case *xast.Strikethrough:
			inner := st
			inner.strike = true
			w.inline(c, inner, out, d+1)
		case *ast.Link:
			inner := st
			inner.link = string(c.Destination)
			w.inline(c, inner, out, d+1)
		case *ast.AutoLink:
			inner := st
			inner.link = string(c.URL(w.src))
			if c.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(inner.link), "mailto:") {
				inner.link = "mailto:" + inner.link
			}
			sp := inner
			sp.text = string(c.Label(w.src))
			*out = append(*out, sp)
		case *ast.Image:
			// Images are not fetched: their alternative text stands in.
			w.inline(c, st, out, d+1)
		case *ast.RawHTML:
			// Raw HTML is not interpreted: it is shown as written.
			for i := 0; i < c.Segments.Len(); i++ {
				seg := c.Segments.At(i)
				add(string(seg.Value(w.src)))
			}
		default:
			if c.HasChildren() {
				w.inline(c, st, out, d+1)
			} else if t, ok := c.(interface{ Value([]byte) []byte }); ok {
				add(string(t.Value(w.src)))
			}
		}
	}
}

// mergeSpans joins neighbouring spans of one style.
func mergeSpans(in []mdSpan) []mdSpan {
	var out []mdSpan
	for _, sp := range in {
		if n := len(out); n > 0 {
			last := &out[n-1]
			probe := *last
			probe.text = sp.text
			if probe == sp {
				last.text += sp.text
				continue
			}
		}
		out = append(out, sp)
	}
	return out
}

// plainText is the text of spans without their styles.
func plainText(spans []mdSpan) string {
	var b strings.Builder
	for _, sp := range spans {
		b.WriteString(sp.text)
	}
	return b.String()
}

// mdLinks lists the link destinations in blocks.
func mdLinks(blocks []mdBlock) []string {
	var out []string
	visit := func(spans []mdSpan) {
		for _, sp := range spans {
			if sp.link != "" {
				out = append(out, sp.link)
			}
		}
	}
	for _, b := range blocks {
		visit(b.spans)
		for _, row := range b.rows {
			for _, cell := range row {
				visit(cell)
			}
		}
	}
	return out
}
