package render

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"strings"

	"github.com/boombuler/barcode/code128"

	"folio/render/internal/qrcode"
)

// Image bounds: an image may hold at most maxImagePixels pixels and
// maxImageSide on either side once decoded, so a small file cannot expand
// into gigabytes of memory.
const (
	maxImagePixels = 25_000_000
	maxImageSide   = 16384
	// pixelMM is the size of a pixel when an image gives no width or height (96 dpi).
	pixelMM = 25.4 / 96
)

// imageData is a checked image ready for the PDF writer.
type imageData struct {
	data []byte   // PNG or JPEG bytes fpdf can read
	kind string   // fpdf image type: "PNG" or "JPG"
	w, h int      // pixels
	sum  [32]byte // SHA-256 of data: the same image is embedded once
}

// imageElement is a PNG or JPEG image from a data URI.
type imageElement struct {
	src           *textTemplate
	fixed         *imageData // decoded at Compile when src holds no placeholder
	width, height float64    // millimetres; 0 when not given
	align         string
}

func (e *imageElement) fontStyles() fontStyle { return 0 }
func (e *imageElement) refs() elementRefs     { return elementRefs{texts: []*textTemplate{e.src}} }

func parseImage(c *compiler, path string, props object, _ depth) element {
	e := &imageElement{src: &textTemplate{}}
	if src, ok := c.str(props, path, "src"); ok {
		e.src = c.compileText(path+".src", src)
		if lit, ok := e.src.literal(); ok {
			img, err := decodeDataURI(lit, c.limits.Bytes)
			if err != nil {
				c.add(path+".src", "%v", err)
			}
			e.fixed = img
		}
	} else if !props.present("src") {
		c.add(path+".src", "is required: a data URI (data:image/png;base64,…) or a placeholder that yields one")
	}
	e.width = c.length(props, path, "width", 1, maxLength, 0)
	e.height = c.length(props, path, "height", 1, maxLength, 0)
	e.align = c.alignment(props, path)
	return e
}

// alignment reads props.align (left, center or right) as an fpdf alignment.
func (c *compiler) alignment(o object, path string) string {
	switch c.oneOf(o, path, "align", "left", "left", "center", "right") {
	case "center":
		return "C"
	case "right":
		return "R"
	}
	return "L"
}

// decodeDataURI checks a data URI holding a PNG or JPEG and returns bytes
// the PDF writer can embed. PNGs fpdf cannot read (16-bit, interlaced)
// are converted.
func decodeDataURI(src string, maxBytes int64) (*imageData, error) {
	src = strings.TrimSpace(src)
	if !strings.HasPrefix(src, "data:") {
		return nil, errors.New("image source must be a data URI such as data:image/png;base64,…")
	}
	meta, payload, ok := strings.Cut(src[len("data:"):], ",")
	if !ok {
		return nil, errors.New("data URI has no comma before its data")
	}
	mime, params, _ := strings.Cut(meta, ";")
	mime = strings.ToLower(strings.TrimSpace(mime))
	if mime != "image/png" && mime != "image/jpeg" && mime != "image/jpg" {
		return nil, fmt.Errorf("image type %q is not supported: use image/png or image/jpeg", clip(mime, 40))
	}
	if !strings.Contains(strings.ToLower(params), "base64") {
		return nil, errors.New("data URI must be base64-encoded (data:image/png;base64,…)")
	}
	if int64(len(payload)) > maxBytes/3*4+4 {
		return nil, fmt.Errorf("image is larger than %d bytes", maxBytes)
	}
	payload = strings.Map(func(r rune) rune {
		if r == ' ' || r == '\n' || r == '\r' || r == '\t' {
			return -1
		}
		return r
	}, payload)
	data, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		if data, err = base64.RawStdEncoding.DecodeString(payload); err != nil {
			return nil, errors.New("image data is not valid base64")
		}
	}
	return checkImage(data)
}

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// checkImage sniffs and checks PNG or JPEG bytes.
func checkImage(data []byte) (img *imageData, err error) {
	defer func() {
		if r := recover(); r != nil {
			img, err = nil, fmt.Errorf("image cannot be read: %v", r)
		}
	}()
	defer func() {
		if img != nil {
			img.sum = sha256.Sum256(img.data)
		}
	}()
	switch {
	case bytes.HasPrefix(data, pngSignature):
		return checkPNG(data)
	case bytes.HasPrefix(data, []byte{0xFF, 0xD8}):
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("JPEG image cannot be read: %v", firstLine(err.Error()))
		}
		if err := checkDimensions(cfg.Width, cfg.Height); err != nil {
			return nil, err
		}
		switch cfg.ColorModel {
		case color.GrayModel, color.YCbCrModel, color.CMYKModel:
		default:
			return nil, errors.New("JPEG colour space is not supported")
		}
		return &imageData{data: data, kind: "JPG", w: cfg.Width, h: cfg.Height}, nil
	}
	return nil, errors.New("image data is neither PNG nor JPEG")
}

func checkDimensions(w, h int) error {
	if w <= 0 || h <= 0 {
		return errors.New("image has no pixels")
	}
	if w > maxImageSide || h > maxImageSide || w*h > maxImagePixels {
		return fmt.Errorf("image is %d×%d pixels; at most %d pixels a side and %d megapixels are allowed", w, h, maxImageSide, maxImagePixels/1_000_000)
	}
	return nil
}

// checkPNG decodes a PNG completely (so fpdf never sees a broken one) and
// converts those fpdf cannot embed as they are.
func checkPNG(data []byte) (*imageData, error) {
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("PNG image cannot be read: %v", firstLine(err.Error()))
	}
	if err := checkDimensions(cfg.Width, cfg.Height); err != nil {
		return nil, err
	}
	decoded, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("PNG image cannot be read: %v", firstLine(err.Error()))
	}
	// IHDR: bit depth at byte 24, interlace method at byte 28.
	if len(data) > 28 && data[24] <= 8 && data[28] == 0 {
		return &imageData{data: data, kind: "PNG", w: cfg.Width, h: cfg.Height}, nil
	}
	rgba := image.NewNRGBA(decoded.Bounds())
	draw.Draw(rgba, rgba.Bounds(), decoded, decoded.Bounds().Min, draw.Src)
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, rgba); err != nil {
		return nil, fmt.Errorf("PNG image cannot be converted: %v", err)
	}
	return &imageData{data: buf.Bytes(), kind: "PNG", w: cfg.Width, h: cfg.Height}, nil
}

// qrElement is a QR code.
type qrElement struct {
	value *textTemplate
	size  float64 // millimetres, the side of the square including its quiet zone
	level qrcode.RecoveryLevel
	align string
	fixed [][]bool // the modules, computed at Compile for a literal value
}

// maxQRText is more than a QR code can hold (2,953 bytes at level L).
const maxQRText = 4096

var qrLevels = map[string]qrcode.RecoveryLevel{"L": qrcode.Low, "M": qrcode.Medium, "Q": qrcode.High, "H": qrcode.Highest}

func (e *qrElement) fontStyles() fontStyle { return 0 }
func (e *qrElement) refs() elementRefs     { return elementRefs{texts: []*textTemplate{e.value}} }

func parseQRCode(c *compiler, path string, props object, _ depth) element {
	e := &qrElement{value: c.requiredText(path, props, "value"), level: qrcode.Medium}
	e.size = c.length(props, path, "size", 10, 200, 30)
	e.level = qrLevels[c.oneOf(props, path, "level", "M", "L", "M", "Q", "H")]
	e.align = c.alignment(props, path)
	if lit, ok := e.value.literal(); ok && lit != "" {
		bits, err := qrModules(lit, e.level)
		if err != nil {
			c.add(path+".value", "%v", err)
		}
		e.fixed = bits
	}
	return e
}

// requiredText reads a required text template prop.
func (c *compiler) requiredText(path string, props object, key string) *textTemplate {
	src, ok := c.str(props, path, key)
	if !ok {
		if !props.present(key) {
			c.add(path+"."+key, "is required")
		}
		return &textTemplate{}
	}
	return c.compileText(path+"."+key, src)
}

// qrModules encodes text as a QR code, quiet zone included. The encoder is
// a fork of github.com/skip2/go-qrcode that makes the same symbols, faster
// (render/internal/qrcode/README.md).
func qrModules(text string, level qrcode.RecoveryLevel) (bits [][]bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			bits, err = nil, fmt.Errorf("QR code cannot be made: %v", r)
		}
	}()
	if len(text) > maxQRText {
		return nil, fmt.Errorf("QR code value is %d bytes, too long for a QR code", len(text))
	}
	q, err := qrcode.New(text, level)
	if err != nil {
		return nil, fmt.Errorf("QR code cannot be made: %v", err)
	}
	return q.Bitmap(), nil
}

// barcodeElement is a Code 128 barcode.
type barcodeElement struct {
	value    *textTemplate
	width    float64 // millimetres; 0 sizes bars at defaultModule
	height   float64 // millimetres, bars only
	showText bool
	fontSize float64
	align    string
	fixed    []bool // the modules, computed at Compile for a literal value
}

// Barcode sizes in millimetres: the width of one module when no width is
// given, and the quiet zone on each side in modules.
const (
	defaultModule   = 0.33
	barcodeQuiet    = 10
	barcodeFontSize = 9
)

func (e *barcodeElement) fontStyles() fontStyle { return styleRegular }
func (e *barcodeElement) refs() elementRefs     { return elementRefs{texts: []*textTemplate{e.value}} }

func parseBarcode(c *compiler, path string, props object, _ depth) element {
	e := &barcodeElement{value: c.requiredText(path, props, "value"), showText: true, fontSize: barcodeFontSize}
	e.height = c.length(props, path, "size", 5, 100, 15) // DESIGN.md calls it size
	e.height = c.length(props, path, "height", 5, 100, e.height)
	e.width = c.length(props, path, "width", 10, maxLength, 0)
	if b, ok := c.boolean(props, path, "showText"); ok {
		e.showText = b
	}
	e.align = c.alignment(props, path)
	if lit, ok := e.value.literal(); ok && lit != "" {
		bits, err := code128Modules(lit)
		if err != nil {
			c.add(path+".value", "%v", err)
		}
		e.fixed = bits
	}
	return e
}

// code128Modules encodes printable ASCII text as Code 128 (character sets
// B and C chosen by the encoder, checksum included); true is a bar.
func code128Modules(text string) (bits []bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			bits, err = nil, fmt.Errorf("barcode cannot be made: %v", r)
		}
	}()
	for _, r := range text {
		if r < 32 || r > 126 {
			return nil, fmt.Errorf("barcode value %q holds %q: Code 128 takes printable ASCII only", clip(text, 40), r)
		}
	}
	if len(text) > 80 {
		return nil, fmt.Errorf("barcode value is %d characters, maximum 80", len(text))
	}
	bc, err := code128.Encode(text)
	if err != nil {
		return nil, fmt.Errorf("barcode cannot be made: %v", err)
	}
	n := bc.Bounds().Dx()
	bits = make([]bool, n)
	for x := range bits {
		r, _, _, _ := bc.At(x, 0).RGBA()
		bits[x] = r == 0
	}
	return bits, nil
}
