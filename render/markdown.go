package render

import "strings"

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
