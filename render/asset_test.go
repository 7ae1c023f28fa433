package render

import (
	"bytes"
	"errors"
	"image/color"
	"strings"
	"testing"
)

// An image src "asset:<ref>" compiles without the asset and is drawn from
// what Options.Assets returns at render time; without a resolver, or with
// an asset that is not an image, the render fails saying so (an SVG
// asset is drawn as vectors),
// and the resolver's own error (an unknown asset) reaches the caller as it
// is.
func TestAssetImages(t *testing.T) {
	png := pngFile(20, 10, 8, 6, false, func(x, y int) color.NRGBA64 { return color.NRGBA64{0xffff, 0, 0, 0xffff} })
	tpl := MustCompile(t, imageSchema("asset:logo"))
	var asked []string
	opts := Options{Assets: func(ref string) (string, []byte, error) {
		asked = append(asked, ref)
		return "image", png, nil
	}}
	var out bytes.Buffer
	st, err := tpl.Render(t.Context(), &out, PDF, nil, opts)
	if err != nil || st.Images != 1 || strings.Join(asked, ",") != "logo" {
		t.Fatalf("render: %v, %d images, asked %v", err, st.Images, asked)
	}

	_, err = tpl.Render(t.Context(), &bytes.Buffer{}, PDF, nil, Options{})
	assertExpressionError(t, err, imageSrcPath, "asset:logo cannot be drawn: this render has no asset library")
	font := Options{Assets: func(string) (string, []byte, error) { return "font", []byte("OTTO"), nil }}
	_, err = tpl.Render(t.Context(), &bytes.Buffer{}, PDF, nil, font)
	assertExpressionError(t, err, imageSrcPath, "asset:logo is a font asset, not an image")
	// An SVG asset is drawn as vectors: no image is embedded.
	svg := Options{Assets: func(string) (string, []byte, error) {
		return "image", []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="20" height="10"><rect width="20" height="10" fill="red"/></svg>`), nil
	}}
	if st, err := tpl.Render(t.Context(), &bytes.Buffer{}, PDF, nil, svg); err != nil || st.Images != 0 {
		t.Fatalf("SVG asset: %v, %d images", err, st.Images)
	}
	broken := Options{Assets: func(string) (string, []byte, error) { return "image", []byte("<svg"), nil }}
	_, err = tpl.Render(t.Context(), &bytes.Buffer{}, PDF, nil, broken)
	assertExpressionError(t, err, imageSrcPath, "asset:logo: SVG image is not well-formed XML")
	missing := errors.New("asset:logo not found")
	_, err = tpl.Render(t.Context(), &bytes.Buffer{}, PDF, nil, Options{Assets: func(string) (string, []byte, error) { return "", nil, missing }})
	if !errors.Is(err, missing) {
		t.Fatalf("unknown asset: %v", err)
	}
	// A spreadsheet has no images: the asset is not even asked for.
	asked = nil
	if _, err := tpl.Render(t.Context(), &bytes.Buffer{}, XLSX, nil, opts); err != nil || len(asked) != 0 {
		t.Fatalf("xlsx: %v, asked %v", err, asked)
	}
	// "asset:" alone is a schema error.
	if _, err := MustEngine(t).Compile(imageSchema("asset:")); err == nil || !strings.Contains(err.Error(), "asset reference is empty") {
		t.Fatalf("empty reference: %v", err)
	}
}
