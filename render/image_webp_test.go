package render

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readWebP(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "webp", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// WebP pictures, lossy and lossless, with and without alpha, are drawn
// from data URIs (literal or from a variable) and assets: a lossy one as
// a JPEG, the others as images with a soft mask for their alpha.
func TestWebPImages(t *testing.T) {
	lossy := readWebP(t, "blue-purple-pink.lossy.webp")
	alpha := readWebP(t, "gopher-doc.with-alpha.lossless.webp")
	lossyAlpha := readWebP(t, "yellow_rose.lossy-with-alpha.webp")
	def := schemaDef(`{"sections":[{"id":"b","components":[
		{"type":"image","props":{"src":` + quote(dataURI("image/webp", lossy)) + `,"width":50}},
		{"type":"image","props":{"src":"{{ pic }}","width":50}},
		{"type":"image","props":{"src":"asset:rose","width":50}}]}]}`)
	tpl := MustCompile(t, def)
	opts := Options{Assets: func(ref string) (string, []byte, error) { return "image", lossyAlpha, nil }}
	pdf := MustRender(t, tpl, map[string]any{"pic": dataURI("image/webp", alpha)}, opts)
	if os.Getenv("WEBP_OUT") != "" {
		os.WriteFile(os.Getenv("WEBP_OUT"), pdf, 0o644)
	}
	rows := pdfImagesList(t, pdf)
	var kinds []string
	for _, r := range rows {
		f := strings.Fields(r)
		kinds = append(kinds, f[2]+"/"+f[8]) // type (image, smask) / encoding
	}
	if !sameKinds(kinds) {
		t.Errorf("pdfimages: %v, want a JPEG, then two images each with a soft mask", rows)
	}
	// A truncated WebP is refused by the first render that decodes it,
	// with a message that says so; a header that cannot be read at once.
	_, err := MustCompile(t, imageSchema(dataURI("image/webp", lossy[:60]))).Render(t.Context(), &bytes.Buffer{}, PDF, nil, Options{})
	assertExpressionError(t, err, imageSrcPath, "WebP image cannot be read")
	_, err = MustEngine(t).Compile(imageSchema(dataURI("image/webp", lossy[:20])))
	assertIssue(t, err, imageSrcPath, "WebP image cannot be read")
	bad := Options{Assets: func(string) (string, []byte, error) { return "image", lossless(5, 5)[:21], nil }}
	_, err = MustCompile(t, imageSchema("asset:x")).Render(t.Context(), &bytes.Buffer{}, PDF, nil, bad)
	assertExpressionError(t, err, imageSrcPath, "WebP image cannot be read")
	info, err := CheckImage(alpha)
	if err != nil || info.Format != "webp" || info.Width != 1 && info.Width == 0 {
		t.Errorf("CheckImage: %+v %v", info, err)
	}
	if err := DecodeImage(lossyAlpha); err != nil {
		t.Errorf("DecodeImage: %v", err)
	}
}

// sameKinds reports whether pdfimages saw one JPEG, then two images each
// with its soft mask.
func sameKinds(kinds []string) bool {
	if len(kinds) != 5 || kinds[0] != "image/jpeg" {
		return false
	}
	for i, want := range []string{"image", "smask", "image", "smask"} {
		if !strings.HasPrefix(kinds[i+1], want+"/") {
			return false
		}
	}
	return true
}

// A WebP promising more pixels than a render may decode is refused from
// its header, before anything is decoded, like a PNG.
func TestWebPBounds(t *testing.T) {
	_, err := MustEngine(t).Compile(imageSchema(dataURI("image/webp", lossless(16384, 2000))))
	assertIssue(t, err, imageSrcPath, "16384×2000 pixels")
	// 16 megapixels: within the size bounds, over the memory budget.
	_, err = MustEngine(t).Compile(imageSchema(dataURI("image/webp", lossless(4000, 4000))))
	assertIssue(t, err, imageSrcPath, "more than the render memory budget")
}

// lossless is the header of a lossless WebP of w×h pixels, without pixels.
func lossless(w, h int) []byte {
	bits := uint32(w-1) | uint32(h-1)<<14
	vp8l := []byte{0x2f, byte(bits), byte(bits >> 8), byte(bits >> 16), byte(bits >> 24), 0}
	data := append([]byte("RIFF\x00\x00\x00\x00WEBPVP8L"), byte(len(vp8l)), 0, 0, 0)
	data = append(data, vp8l...)
	n := len(data) - 8
	data[4], data[5], data[6], data[7] = byte(n), byte(n>>8), byte(n>>16), byte(n>>24)
	return data
}
