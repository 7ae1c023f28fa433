package render

import (
	"strings"

	"github.com/xuri/excelize/v2"
)

// Markdown in a workbook: every block is a row whose cell keeps the
// words, with bold, italic, struck-through and code text as rich-text
// runs; a link's destination follows its text in brackets (a streamed
// sheet cannot hold hyperlinks in cells of rich text); a table's rows
// become rows of cells.

// xlsxMonoFont is the font code runs are written in.
const xlsxMonoFont = "Courier New"

// markdownRows writes a Markdown component as rows.
func (x *xlsxWriter) markdownRows(c *component, e *markdownElement, env map[string]any, out rowSink) error {
	blocks, err := e.markdownBlocks(x.run, c, env)
	if err != nil {
		return err
	}
	base := x.cellStyle(e.style, 0)
	for _, b := range blocks {
		prefix := ""
		if b.quote > 0 {
			prefix = strings.Repeat("> ", b.quote)
		}
		if b.list > 0 || b.marker != "" {
			prefix += strings.Repeat("    ", max(b.list-1, 0)) + b.marker + " "
		}
		st := base
		var row []xcell
		switch b.kind {
		case mdHeading:
			st.bold = true
			st.size = headingCellSizes[min(b.level, 3)]
			row = []xcell{richCell(append([]mdSpan{{text: prefix}}, b.spans...), st, true)}
		case mdPara:
			row = []xcell{richCell(append([]mdSpan{{text: prefix}}, b.spans...), st, true)}
		case mdCode:
			for _, line := range strings.Split(b.code, "\n") {
				if err := out.row([]xcell{richCell([]mdSpan{{text: prefix}, {text: line, code: true}}, st, true)}); err != nil {
					return err
				}
			}
			continue
		case mdRule:
			row = nil
		case mdTable:
			for r, cells := range b.rows {
				cst := st
				cst.bold, cst.header = r == 0, r == 0
				xr := make([]xcell, len(cells))
				for k, cell := range cells {
					xr[k] = richCell(cell, cst, true)
				}
				if err := out.row(xr); err != nil {
					return err
				}
			}
			continue
		}
		if err := out.row(row); err != nil {
			return err
		}
	}
	return nil
}

// markdownCell makes a table cell of Markdown text.
func markdownCell(src string, st xstyle, fit bool) xcell {
	spans := flatSpans(parseMarkdown(markdownText(src)))
	c := richCell(spans, st, fit)
	if s, ok := c.v.(string); ok && strings.Contains(s, "\n") {
		c.style.wrap = true
	}
	return c
}

// richCell makes a cell of spans: plain text when no span is styled, else
// rich-text runs.
func richCell(spans []mdSpan, st xstyle, fit bool) xcell {
	var runs []excelize.RichTextRun
	var plain strings.Builder
	styled := false
	for _, sp := range spans {
		if sp.text == "" {
			continue
		}
		text := xlsxText(sp.text)
		run := excelize.RichTextRun{Text: text}
		if sp.bold || sp.italic || sp.strike || sp.code || sp.link != "" {
			styled = true
			f := &excelize.Font{Bold: sp.bold || st.bold, Italic: sp.italic || st.italic, Strike: sp.strike}
			if st.size > 0 {
				f.Size = st.size
			}
			if st.color != "" {
				f.Color = st.color
			}
			if sp.code {
				f.Family = xlsxMonoFont
			}
			if sp.link != "" {
				f.Color, f.Underline = "1A5FB4", "single"
			}
			run.Font = f
		}
		runs = append(runs, run)
		plain.WriteString(text)
		if sp.link != "" && !strings.HasPrefix(sp.link, "#") && sp.link != sp.text && "mailto:"+sp.text != sp.link {
			dest := " (" + sp.link + ")"
			runs = append(runs, excelize.RichTextRun{Text: dest})
			plain.WriteString(dest)
		}
	}
	s := plain.String()
	c := xcell{style: st}
	if strings.TrimSpace(s) == "" {
		return c
	}
	c.style.wrap = strings.Contains(s, "\n")
	if fit {
		c.fit = displayWidth(s)
	}
	if !styled {
		c.v = s
		return c
	}
	c.v = runs
	return c
}

// runsText returns a rich cell's text.
func runsText(runs []excelize.RichTextRun) string {
	var b strings.Builder
	for _, r := range runs {
		b.WriteString(r.Text)
	}
	return b.String()
}
