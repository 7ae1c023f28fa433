package render

import (
	"fmt"
	"strings"
)

// markdownElement is text written in Markdown: the "markdown" component,
// or a text component with "markdown": true. Placeholders are filled in
// first, so a value may bring Markdown of its own.
type markdownElement struct {
	content *textTemplate
	style   textStyle
	// blocks is the parsed content when it holds no placeholders: parsed
	// (and its links checked) once, at Compile.
	blocks []mdBlock
	parsed bool
}

func (e *markdownElement) fontStyles() fontStyle {
	return styleOf(false, false) | styleOf(true, false) | styleOf(false, true) | styleOf(true, true)
}

func (e *markdownElement) refs() elementRefs {
	return elementRefs{texts: []*textTemplate{e.content}}
}

func parseMarkdownComponent(c *compiler, path string, props object, _ depth) element {
	return c.markdown(path, c.content(path, props), c.parseStyle(path, props, textStyle{size: defaultFontSize, align: "L"}))
}

// markdown makes the element for Markdown content at path.
func (c *compiler) markdown(path string, content *textTemplate, st textStyle) *markdownElement {
	e := &markdownElement{content: content, style: st}
	if src, ok := content.literal(); ok {
		e.blocks, e.parsed = parseMarkdown(markdownText(src)), true
		for _, link := range mdLinks(e.blocks) {
			if err := checkLink(link); err != nil {
				c.add(path+".content", "%v", err)
				break
			}
		}
	}
	return e
}

// markdownBlocks returns the element's blocks in env; a link a value
// brought that is not allowed is an error at the component's content.
func (e *markdownElement) markdownBlocks(r *run, c *component, env map[string]any) ([]mdBlock, error) {
	if e.parsed {
		return e.blocks, nil
	}
	src, err := e.content.render(r.ev, env)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(src) == "" {
		return nil, nil
	}
	blocks := parseMarkdown(markdownText(src))
	for _, link := range mdLinks(blocks) {
		if err := checkLink(link); err != nil {
			return nil, contentError(c, "content", e.content, err)
		}
	}
	return blocks, nil
}

// markdownText makes Markdown source safe to lay out: tabs become four
// spaces (code keeps its indentation), other control characters go.
func markdownText(s string) string {
	return pdfText(strings.ReplaceAll(s, "\t", "    "))
}

// flatSpans joins blocks into one paragraph's spans, for a table cell:
// blocks start new lines, list items keep their markers, headings are
// bold, code blocks monospaced.
func flatSpans(blocks []mdBlock) []mdSpan {
	var out []mdSpan
	for i, b := range blocks {
		if i > 0 {
			out = append(out, mdSpan{text: "\n"})
		}
		if b.list > 0 || b.marker != "" {
			out = append(out, mdSpan{text: strings.Repeat("  ", max(b.list-1, 0)) + b.marker + " "})
		}
		switch b.kind {
		case mdHeading:
			for _, sp := range b.spans {
				sp.bold = true
				out = append(out, sp)
			}
		case mdCode:
			out = append(out, mdSpan{text: b.code, code: true})
		case mdRule:
			out = append(out, mdSpan{text: "———"})
		case mdTable:
			for r, row := range b.rows {
				if r > 0 {
					out = append(out, mdSpan{text: "\n"})
				}
				for k, cell := range row {
					if k > 0 {
						out = append(out, mdSpan{text: " | "})
					}
					out = append(out, cell...)
				}
			}
		default:
			out = append(out, b.spans...)
		}
	}
	return mergeSpans(out)
}

// markdownColumns marks the table's Markdown columns; nil when it has none.
func (e *tableElement) markdownColumns() []bool {
	var md []bool
	for i, col := range e.columns {
		if col.markdown {
			if md == nil {
				md = make([]bool, len(e.columns))
			}
			md[i] = true
		}
	}
	return md
}

// checkMarkdownCells refuses a row whose Markdown cells link where links
// may not go.
func checkMarkdownCells(c *component, e *tableElement, texts []string) error {
	for j, col := range e.columns {
		if !col.markdown || j >= len(texts) || !strings.ContainsAny(texts[j], "[<") {
			continue
		}
		for _, link := range mdLinks(parseMarkdown(markdownText(texts[j]))) {
			if err := checkLink(link); err != nil {
				return &ExpressionError{Path: fmt.Sprintf("%s.props.columns[%d].value", c.path, j), Expression: clip(col.value.src, 200), Message: err.Error()}
			}
		}
	}
	return nil
}
