package render

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"folio/render/text"
)

// FuzzMarkdown feeds arbitrary Markdown, from a value, through a
// markdown component, a Markdown table column and a table of contents,
// in PDF and XLSX: nothing may panic or loop, and every failure must be
// a documented error (a link where links may not go is an
// *ExpressionError; a limit a *LimitError).
func FuzzMarkdown(f *testing.F) {
	for _, seed := range []string{
		markdownSample,
		"# a\n## b\n### c\n#### d\n##### e\n###### f\n",
		"- a\n  - b\n    - c\n      - d\n        - e\n          - f\n            - g\n              - h\n                - i\n",
		"> > > > > > > > > > > deep\n",
		"| a | b |\n|---|---|\n| `x` | **y** |\n| [l](https://e.com) |\n",
		"[bad](javascript:x) <ftp://x> <a@b.c>\n",
		"```\n\t\x00\u202e\n```\n~~~\nunclosed",
		"**_~~`nested`~~_**  \nhard  \nbreak\\\nx",
		"<div>\n*raw*\n</div>\n\n<span>inline</span>",
		"1. one\n1) two\n\n3. three\n\n* * *\n___\n",
		"[a][ref]\n\n[ref]: https://example.com \"t\"\n![alt](https://example.com/i.png)",
		"#" + string(make([]byte, 300)),
	} {
		f.Add(seed)
	}
	schema := json.RawMessage(`{"sections":[{"id":"b","components":[
		{"type":"toc","props":{"maxLevel":6}},
		{"type":"markdown","props":{"content":"{{ md }}"}},
		{"type":"table","props":{"rows":"[md]","columns":[{"header":"M","value":"{{ row }}","markdown":true}]}}]}]}`)
	f.Fuzz(func(t *testing.T, md string) {
		tpl, err := MustEngine(t).Compile(Definition{Schema: schema, Variables: []Variable{{Name: "md", Type: "string"}}})
		if err != nil {
			t.Fatal(err)
		}
		values, err := tpl.Values(map[string]any{"md": md})
		if err != nil {
			return // refused values (a character no font draws, with missingGlyphs: error) are not drawn
		}
		for _, format := range []Format{PDF, XLSX} {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			var buf bytes.Buffer
			_, err := tpl.Render(ctx, &buf, format, values, Options{Limits: fuzzLimits})
			cancel()
			var ee *ExpressionError
			var le *LimitError
			switch {
			case err == nil, errors.As(err, &ee), errors.As(err, &le):
			case errors.Is(err, context.DeadlineExceeded):
				t.Fatalf("%s: rendering %q took over 20 s", format, md)
			default:
				t.Fatalf("%s: unexpected error %v for %q", format, err, md)
			}
		}
	})
}

// FuzzMarkdownParse fuzzes the Markdown reader and the rich-text path
// alone (many more inputs a second than FuzzMarkdown): goldmark's tree
// into blocks, blocks into a table cell's spans, spans into lines.
func FuzzMarkdownParse(f *testing.F) {
	f.Add(markdownSample)
	f.Add("- a\n  > b\n  > ```\n  > c\n| x |\n|---|\n| `y` |\n")
	f.Add("**a _b ~~c `d` e~~ f_ g**  \nh\\\n<i>j</i> [k](#l) <m@n.o>")
	f.Fuzz(func(t *testing.T, md string) {
		blocks := parseMarkdown(markdownText(md))
		for _, b := range blocks {
			if b.list > maxMarkdownNesting || b.quote > maxMarkdownNesting || b.kind == mdHeading && (b.level < 1 || b.level > 6) {
				t.Fatalf("block out of bounds: %+v", b)
			}
			for _, link := range mdLinks([]mdBlock{b}) {
				_ = checkLink(link)
			}
		}
		spans := flatSpans(blocks)
		var ts []text.Span
		for i, sp := range spans {
			ts = append(ts, text.Span{Text: sp.text, Style: text.StyleOf(sp.bold, sp.italic), Tag: i})
		}
		lines := MustEngine(t).fonts.LayoutSpans(ts, 30000, 200)
		if len(lines) == 0 {
			t.Fatal("no lines")
		}
		for _, l := range lines {
			for _, r := range l.Runs {
				if r.Tag < 0 || r.Tag >= max(len(ts), 1) {
					t.Fatalf("run tag %d of %d spans", r.Tag, len(ts))
				}
			}
		}
	})
}
