package render

import (
	"strconv"
	"strings"
	"unicode/utf8"

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
	source := []byte(tameMarkdown(src))
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

// mergeSpans joins neighbouring spans of one style (in linear time: a
// paragraph may hold thousands of pieces).
func mergeSpans(in []mdSpan) []mdSpan {
	var out []mdSpan
	for i := 0; i < len(in); {
		j := i + 1
		for j < len(in) && sameLook(in[i], in[j]) {
			j++
		}
		sp := in[i]
		if j > i+1 {
			var b strings.Builder
			for _, p := range in[i:j] {
				b.WriteString(p.text)
			}
			sp.text = b.String()
		}
		out = append(out, sp)
		i = j
	}
	return out
}

// sameLook reports whether two spans are drawn alike.
func sameLook(a, b mdSpan) bool {
	a.text, b.text = "", ""
	return a == b
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

// Some Markdown costs goldmark time that grows with the square of its
// length: thousands of list or quote markers opening one nested level
// each ("- - - - …", ">>>>…"), or thousands of unclosed "[a](" or
// emphasis marks in one paragraph (measured: 4,000 of them took over a
// second). tameMarkdown keeps such input to what a document needs,
// escaping (with "\") what lies beyond: more than maxMarkdownNesting+2
// container markers at the start of a line, more than maxInlineMarks of
// one inline mark character in one paragraph; it cuts lines longer than
// maxMarkdownLine and indentation deeper than maxMarkdownIndent. Fenced
// code is left as it is (it is never parsed for inlines).
const (
	maxInlineMarks    = 256
	maxMarkdownLine   = 4096
	maxMarkdownIndent = 40
)

func tameMarkdown(src string) string {
	var b strings.Builder
	b.Grow(len(src) + len(src)/16)
	var counts [128]int
	fence := ""
	for len(src) > 0 {
		line, rest, _ := strings.Cut(src, "\n")
		src = rest
		trimmed := strings.TrimLeft(line, " >")
		if f := fenceOf(trimmed); f != "" && (fence == "" || strings.HasPrefix(trimmed, fence)) {
			if fence == "" {
				fence = f
			} else {
				fence = ""
			}
		} else if fence == "" {
			if strings.TrimSpace(line) == "" {
				counts = [128]int{}
			}
			if len(line) > maxMarkdownLine {
				// An unclosed link scans to the end of its line: long
				// lines go on as new lines (a soft break reads as a space).
				cut := strings.LastIndexByte(line[:maxMarkdownLine], ' ')
				if cut < maxMarkdownLine/2 {
					cut = maxMarkdownLine
					for cut > 0 && !utf8.RuneStart(line[cut]) {
						cut--
					}
				}
				src = line[cut:] + "\n" + src
				line = line[:cut]
			}
			if indent := len(line) - len(strings.TrimLeft(line, " ")); indent > maxMarkdownIndent {
				// Each level of indentation can open a list: goldmark
				// checks every line against every open level.
				line = line[indent-maxMarkdownIndent:]
			}
			line = tameLine(line, &counts)
		}
		b.WriteString(line)
		if len(src) > 0 || strings.HasSuffix(line, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// fenceOf returns the fence a line opens or closes (``` or ~~~, as
// long as written), or "".
func fenceOf(line string) string {
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(line) && line[n] == c {
			n++
		}
		if n >= 3 {
			return line[:n]
		}
	}
	return ""
}

// tameLine escapes the container markers past the nesting limit at the
// start of line and the inline marks past the paragraph's limit.
func tameLine(line string, counts *[128]int) string {
	var b strings.Builder
	i, depth := 0, 0
	// Container markers: "> ", "- ", "* ", "+ ", "1. ", "1) ".
	for i < len(line) {
		j := i
		for j < len(line) && j-i < 4 && line[j] == ' ' {
			j++
		}
		k := j
		switch {
		case k < len(line) && line[k] == '>':
			k++
		case k+1 < len(line) && strings.IndexByte("-*+", line[k]) >= 0 && line[k+1] == ' ':
			k++
		default:
			d := k
			for d < len(line) && d-k < 9 && line[d] >= '0' && line[d] <= '9' {
				d++
			}
			if d == k || d+1 >= len(line) || (line[d] != '.' && line[d] != ')') || line[d+1] != ' ' {
				k = -1
				break
			}
			k = d + 1
		}
		if k < 0 {
			break
		}
		depth++
		b.WriteString(line[i:j])
		if depth > maxMarkdownNesting+2 {
			b.WriteByte('\\')
		}
		b.WriteString(line[j:k])
		i = k
	}
	for ; i < len(line); i++ {
		c := line[i]
		if c < 128 && strings.IndexByte("[]*_~`<(!", c) >= 0 {
			counts[c]++
			if counts[c] > maxInlineMarks && (i == 0 || line[i-1] != '\\') {
				b.WriteByte('\\')
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}
