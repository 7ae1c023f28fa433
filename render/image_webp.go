package render

import (
	"bytes"
	"fmt"
	"image"
	"image/draw"
	"image/jpeg"
	"image/png"

	"golang.org/x/image/webp"
)

// WebP pictures (lossy VP8, lossless VP8L, either with alpha) are decoded
// under the render's memory budget like a PNG, then handed to the PDF
// writer in a form it embeds: a lossy picture without alpha as a JPEG at
// high quality (a PNG of a photograph would be many times larger), any
// other as a PNG, whose alpha channel fpdf embeds as a soft mask.

// webpJPEGQuality is the quality a lossy WebP is re-encoded at.
const webpJPEGQuality = 92

// convertWebP decodes a WebP whose header was checked and returns it as
// PNG or JPEG bytes, with fpdf's name for the type.
func convertWebP(data []byte) ([]byte, string, error) {
	m, err := webp.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, "", fmt.Errorf("WebP image cannot be read: %v", firstLine(err.Error()))
	}
	var buf bytes.Buffer
	if ycc, ok := m.(*image.YCbCr); ok {
		if err := jpeg.Encode(&buf, ycc, &jpeg.Options{Quality: webpJPEGQuality}); err != nil {
			return nil, "", fmt.Errorf("WebP image cannot be converted: %v", err)
		}
		return buf.Bytes(), "JPG", nil
	}
	nrgba, ok := m.(*image.NRGBA)
	if !ok {
		nrgba = image.NewNRGBA(m.Bounds())
		draw.Draw(nrgba, nrgba.Bounds(), m, m.Bounds().Min, draw.Src)
	}
	// An opaque picture is written without an alpha channel (Go's encoder
	// sees that), so no soft mask is embedded for it.
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, nrgba); err != nil {
		return nil, "", fmt.Errorf("WebP image cannot be converted: %v", err)
	}
	return buf.Bytes(), "PNG", nil
}
