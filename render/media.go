package render

import (
	"fmt"

	"github.com/boombuler/barcode/code128"

	"folio/render/internal/qrcode"
)

// imageElement is a PNG, JPEG or WebP image, or an SVG drawn as vectors,
// from a data URI, a stored asset or an https URL.
type imageElement struct {
	src           *textTemplate
	lit           *literalImage // when src holds no placeholder
	width, height float64       // millimetres; 0 when not given
	align         string
	link          *textTemplate // "link": a URL or #anchor; nil for none
}

func (e *imageElement) fontStyles() fontStyle { return 0 }
func (e *imageElement) refs() elementRefs     { return elementRefs{texts: withLink(e.src, e.link)} }

func parseImage(c *compiler, path string, props object, _ depth) element {
	e := &imageElement{src: &textTemplate{}}
	if src, ok := c.str(props, path, "src"); ok {
		e.src = c.compileText(path+".src", src)
		if lit, ok := e.src.literal(); ok {
			if _, isAsset, err := assetRef(lit); isAsset {
				// A stored asset: resolved when a render draws it (Options.Assets).
				if err != nil {
					c.add(path+".src", "%v", err)
				}
				return imageProps(c, path, props, e)
			}
			if isImageURL(lit) || isSVGDataURI(lit) {
				// Fetched (Options.Fetch) or drawn as vectors when a render draws it.
				c.checkImageSource(path+".src", lit)
				return imageProps(c, path, props, e)
			}
			img, err := c.literalImage(lit)
			if err != nil {
				c.add(path+".src", "%v", err)
			}
			e.lit = img
		}
	} else if !props.present("src") {
		c.add(path+".src", "is required: a data URI (data:image/png;base64,…), asset:<name> or a placeholder that yields one")
	}
	return imageProps(c, path, props, e)
}

// imageProps reads an image's size and alignment.
func imageProps(c *compiler, path string, props object, e *imageElement) element {
	e.width = c.length(props, path, "width", 1, maxLength, 0)
	e.height = c.length(props, path, "height", 1, maxLength, 0)
	e.align = c.alignment(props, path)
	e.link = c.parseLink(props, path)
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

// literalImage checks the header of an image written into the template
// against the memory budget of a render; its pixels are read when a render
// first draws it. Images with the same source share one literalImage.
func (c *compiler) literalImage(src string) (*literalImage, error) {
	if l, ok := c.images[src]; ok {
		return l, nil
	}
	data, h, err := readDataURI(src, c.limits.Bytes)
	if err != nil {
		return nil, err
	}
	if err := h.checkCost(c.limits.Memory); err != nil {
		return nil, err
	}
	l := &literalImage{head: h, data: data}
	if c.images == nil {
		c.images = map[string]*literalImage{}
	}
	c.images[src] = l
	return l, nil
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
	family   string // font family of the text under the bars
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
	e := &barcodeElement{value: c.requiredText(path, props, "value"), showText: true, fontSize: barcodeFontSize, family: c.family}
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
