package render

import (
	"bytes"
	"context"
	"errors"
	"image/color"
	"strings"
	"testing"
)

// An https image src is fetched through Options.Fetch once per render,
// even when the document is laid out more than once (its page count is
// in an expression); a picture is drawn as an image, SVG as vectors; the
// fetcher's errors reach the caller as they are; without a fetcher the
// render says it cannot fetch.
func TestImageURLThroughFetch(t *testing.T) {
	png := pngFile(8, 4, 8, 2, false, func(x, y int) color.NRGBA64 { return color.NRGBA64{R: 0xffff, A: 0xffff} })
	svg := []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="100" height="20"><text x="0" y="15">Drawn from a URL</text></svg>`)
	def := schemaDef(`{"sections":[{"id":"b","components":[
		{"type":"image","props":{"src":"https://cdn.example.com/a.png","width":20}},
		{"type":"image","props":{"src":"{{ pic }}","width":20}},
		{"type":"svg","props":{"src":"https://cdn.example.com/b.svg"}},
		{"type":"text","props":{"content":"{{ pages > 1 ? 'many' : 'one' }} page"}}]}]}`)
	tpl := MustCompile(t, def)
	var asked []string
	opts := Options{Fetch: func(ctx context.Context, u string) ([]byte, error) {
		if ctx == nil {
			t.Error("no context")
		}
		asked = append(asked, u)
		if strings.HasSuffix(u, ".svg") {
			return svg, nil
		}
		return png, nil
	}}
	pdf := MustRender(t, tpl, map[string]any{"pic": "https://cdn.example.com/a.png"}, opts)
	if got := strings.Join(asked, " "); got != "https://cdn.example.com/a.png https://cdn.example.com/b.svg" {
		t.Errorf("fetched %q: want each URL once", got)
	}
	if text := ExtractText(t, pdf); !strings.Contains(text, "Drawn from a URL") {
		t.Errorf("text %q", text)
	}
	objects := map[string]bool{}
	for _, r := range pdfImagesList(t, pdf) {
		objects[strings.Fields(r)[10]] = true
	}
	if len(objects) != 1 {
		t.Errorf("%d image objects, want the PNG embedded once", len(objects))
	}

	failed := errors.New("ERR_IMAGE_002: the server answered 500")
	_, err := tpl.Render(t.Context(), &bytes.Buffer{}, PDF, nil, Options{Fetch: func(context.Context, string) ([]byte, error) { return nil, failed }})
	if !errors.Is(err, failed) {
		t.Errorf("fetch error: %v", err)
	}
	_, err = tpl.Render(t.Context(), &bytes.Buffer{}, PDF, nil, Options{})
	assertExpressionError(t, err, "schema.sections[0].components[0].props.src", "this render cannot fetch image URLs")
	// Not a picture at all.
	_, err = tpl.Render(t.Context(), &bytes.Buffer{}, PDF, nil, Options{Fetch: func(context.Context, string) ([]byte, error) { return []byte("GIF89a"), nil }})
	assertExpressionError(t, err, "schema.sections[0].components[0].props.src", "https://cdn.example.com/a.png: image data is neither PNG, JPEG nor WebP")

	// More distinct URLs than the image limit stop at the limit.
	many := MustCompile(t, schemaDef(`{"sections":[{"id":"b","components":[{"type":"image","each":"urls","props":{"src":"{{ item }}","width":5}}]}]}`))
	var urls []any
	for i := range 5 {
		urls = append(urls, "https://cdn.example.com/"+string(rune('a'+i))+".png")
	}
	_, err = many.Render(t.Context(), &bytes.Buffer{}, PDF, map[string]any{"urls": urls}, Options{Limits: Limits{Images: 3}, Fetch: opts.Fetch})
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitImages {
		t.Errorf("many URLs: %v", err)
	}
}
