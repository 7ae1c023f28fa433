package render

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"strings"
	"sync"

	"golang.org/x/image/webp"
)

// Images are read in two steps. The header comes first, without decoding
// anything: the size in pixels, and what decoding and embedding the image
// would take in memory against a render's budget (Compile refuses a literal
// image on that alone). The pixels are decoded during a render, under its
// memory meter and so under the engine's memory gate: a small file cannot
// make the server decode hundreds of megabytes outside the budget.

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
	data []byte   // PNG or JPEG bytes fpdf can read (a WebP is converted)
	kind string   // fpdf image type: "PNG" or "JPG"
	w, h int      // pixels
	sum  [32]byte // SHA-256 of data: the same image is embedded once
}

// imageHeader is what an image's header tells before its pixels are read.
type imageHeader struct {
	kind        string // fpdf image type: "PNG" or "JPG"; "WEBP" until converted
	w, h        int
	depth       int  // bits a channel (8 for a JPEG)
	colorType   byte // PNG: 0 grey, 2 RGB, 3 palette, 4 grey and alpha, 6 RGBA
	interlaced  bool // PNG: Adam7
	transparent bool // PNG: a tRNS chunk, which makes Go decode grey or RGB as NRGBA
	size        int  // bytes of the file
}

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// readDataURI checks a data URI holding a PNG, JPEG or WebP and returns its bytes
// and header; the pixels are not read.
func readDataURI(src string, maxBytes int64) ([]byte, imageHeader, error) {
	src = strings.TrimSpace(src)
	if !strings.HasPrefix(src, "data:") {
		return nil, imageHeader{}, errors.New("image source must be a data URI such as data:image/png;base64,…, asset:<name> or an https:// URL")
	}
	meta, payload, ok := strings.Cut(src[len("data:"):], ",")
	if !ok {
		return nil, imageHeader{}, errors.New("data URI has no comma before its data")
	}
	mime, params, _ := strings.Cut(meta, ";")
	mime = strings.ToLower(strings.TrimSpace(mime))
	if mime != "image/png" && mime != "image/jpeg" && mime != "image/jpg" && mime != "image/webp" {
		return nil, imageHeader{}, fmt.Errorf("image type %q is not supported: use image/png, image/jpeg, image/webp or image/svg+xml", clip(mime, 40))
	}
	if !strings.Contains(strings.ToLower(params), "base64") {
		return nil, imageHeader{}, errors.New("data URI must be base64-encoded (data:image/png;base64,…)")
	}
	if int64(len(payload)) > maxBytes/3*4+4 {
		return nil, imageHeader{}, fmt.Errorf("image is larger than %d bytes", maxBytes)
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
			return nil, imageHeader{}, errors.New("image data is not valid base64")
		}
	}
	h, err := readImageHeader(data)
	if err != nil {
		return nil, imageHeader{}, err
	}
	return data, h, nil
}

// readImageHeader sniffs PNG, JPEG or WebP bytes and checks their header: the
// format, the colour space and the size in pixels.
func readImageHeader(data []byte) (h imageHeader, err error) {
	defer func() {
		if r := recover(); r != nil {
			h, err = imageHeader{}, fmt.Errorf("image cannot be read: %v", r)
		}
	}()
	switch {
	case bytes.HasPrefix(data, pngSignature):
		// DecodeConfig checks the header's checksum and values (and a
		// palette image's palette); the raw fields say the rest.
		if _, err := png.DecodeConfig(bytes.NewReader(data)); err != nil {
			return h, fmt.Errorf("PNG image cannot be read: %v", firstLine(err.Error()))
		}
		h, ok := parseIHDR(data)
		if !ok {
			return h, errors.New("PNG image cannot be read: no header")
		}
		h.transparent = hasTRNS(data)
		return h, checkDimensions(h.w, h.h)
	case bytes.HasPrefix(data, []byte{0xFF, 0xD8}):
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
		if err != nil {
			return h, fmt.Errorf("JPEG image cannot be read: %v", firstLine(err.Error()))
		}
		switch cfg.ColorModel {
		case color.GrayModel, color.YCbCrModel, color.CMYKModel:
		default:
			return h, errors.New("JPEG colour space is not supported")
		}
		h = imageHeader{kind: "JPG", w: cfg.Width, h: cfg.Height, depth: 8, size: len(data)}
		return h, checkDimensions(h.w, h.h)
	case len(data) >= 16 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		cfg, err := webp.DecodeConfig(bytes.NewReader(data))
		if err != nil {
			return h, fmt.Errorf("WebP image cannot be read: %v", firstLine(err.Error()))
		}
		h = imageHeader{kind: "WEBP", w: cfg.Width, h: cfg.Height, depth: 8, size: len(data)}
		return h, checkDimensions(h.w, h.h)
	}
	return h, errors.New("image data is neither PNG, JPEG nor WebP")
}

// parseIHDR reads a PNG's header chunk from the start of the file, without
// checking it.
func parseIHDR(b []byte) (imageHeader, bool) {
	if len(b) < 29 || !bytes.HasPrefix(b, pngSignature) || string(b[12:16]) != "IHDR" {
		return imageHeader{}, false
	}
	return imageHeader{
		kind:       "PNG",
		w:          int(binary.BigEndian.Uint32(b[16:20]) & 0x7fffffff),
		h:          int(binary.BigEndian.Uint32(b[20:24]) & 0x7fffffff),
		depth:      int(b[24]),
		colorType:  b[25],
		interlaced: b[28] != 0,
		size:       len(b),
	}, true
}

// hasTRNS reports whether a PNG has a transparency chunk before its pixel
// data, hopping from chunk to chunk.
func hasTRNS(b []byte) bool {
	for i := len(pngSignature); i+8 <= len(b); {
		n := int64(binary.BigEndian.Uint32(b[i:]))
		switch string(b[i+4 : i+8]) {
		case "tRNS":
			return true
		case "IDAT", "IEND":
			return false
		}
		if n > int64(len(b)) {
			return false
		}
		i += 12 + int(n)
	}
	return false
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

func (h imageHeader) pixels() int64 { return int64(h.w) * int64(h.h) }

// converted reports whether the PNG is one fpdf cannot embed as it is
// (16 bits a channel, interlaced): it is re-encoded as 8-bit RGBA.
func (h imageHeader) converted() bool {
	return h.kind == "PNG" && (h.depth > 8 || h.interlaced)
}

// pixelBytes is the size of a pixel in the image Go's PNG decoder returns:
// Gray, Gray16 or Paletted; NRGBA or NRGBA64 for anything with colour or
// transparency.
func (h imageHeader) pixelBytes() int64 {
	switch {
	case h.colorType == 3:
		return 1
	case h.colorType == 0 && !h.transparent:
		return int64(max(h.depth, 8) / 8)
	case h.depth == 16:
		return 8
	}
	return 4
}

// decodeCost estimates the memory decoding the image takes for a moment:
// the pixels as Go's decoder holds them (twice when interlaced: its seven
// passes, then the image they are merged into) and, for a PNG that is
// converted, an 8-bit RGBA copy and its encoding. A JPEG is embedded as
// it is, never decoded.
func (h imageHeader) decodeCost() int64 {
	if h.kind == "WEBP" {
		// Decoded (at most 4 bytes a pixel, lossless), copied to 8-bit
		// RGBA, and encoded again as a PNG (or a JPEG) fpdf can embed.
		return h.pixels() * 12
	}
	if h.kind != "PNG" {
		return 0
	}
	n := h.pixels() * h.pixelBytes()
	if h.interlaced {
		n *= 2
	}
	if h.converted() {
		n += h.pixels() * 8
	}
	return n
}

// embedCost estimates the memory fpdf takes for a moment to embed the
// image: a PNG's pixels unpacked and split into colour and alpha (8-bit
// RGBA once converted); a JPEG is copied as it is.
func (h imageHeader) embedCost() int64 {
	if h.kind == "JPG" {
		return int64(h.size)
	}
	return h.pixels() * 4 * 2
}

// cost is what drawing the image takes at most: decoding it, then
// embedding it. Compile refuses a literal image that costs more than a
// render's budget; a render counts it before decoding (memoryMeter.need).
func (h imageHeader) cost() int64 { return h.decodeCost() + h.embedCost() }

// embedCost is imageHeader.embedCost of a decoded image.
func embedCost(img *imageData) int64 {
	return imageHeader{kind: img.kind, w: img.w, h: img.h, size: len(img.data)}.embedCost()
}

// checkCost refuses an image whose decoding and embedding would take more
// than budget, saying what would fit.
func (h imageHeader) checkCost(budget int64) error {
	need := h.cost()
	if need <= budget {
		return nil
	}
	what := h.describe()
	// The same pixels as an 8-bit, non-interlaced PNG.
	plain := h
	plain.depth, plain.interlaced = min(h.depth, 8), false
	var advice string
	switch {
	case plain.cost() <= budget && h.depth > 8 && h.interlaced:
		advice = "save it as an 8-bit, non-interlaced PNG or a JPEG, or scale it down"
	case plain.cost() <= budget && h.depth > 8:
		advice = "save it as an 8-bit PNG or a JPEG, or scale it down"
	case plain.cost() <= budget && h.interlaced:
		advice = "save it as a non-interlaced PNG or a JPEG, or scale it down"
	default:
		perPixel := float64(plain.cost()) / float64(plain.pixels())
		mp := float64(int(float64(budget)/perPixel/100_000)) / 10
		advice = fmt.Sprintf("scale it down to at most %.1f megapixels, or save it as a JPEG", mp)
	}
	return fmt.Errorf("image is %d×%d pixels, %s: decoding and embedding it would take about %d MB of memory, more than the render memory budget of %d MB; %s",
		h.w, h.h, what, megabytes(need), megabytes(budget), advice)
}

// describe names the image's format for a message: "16 bits a channel (RGBA, interlaced)".
func (h imageHeader) describe() string {
	switch h.kind {
	case "JPG":
		return "JPEG"
	case "WEBP":
		return "WebP"
	}
	kinds := map[byte]string{0: "grey", 2: "RGB", 3: "palette", 4: "grey and alpha", 6: "RGBA"}
	s := fmt.Sprintf("%d bits a channel (%s", h.depth, kinds[h.colorType])
	if h.interlaced {
		s += ", interlaced"
	}
	return s + ")"
}

func megabytes(n int64) int64 { return (n + 1<<19) >> 20 }

// decodeImage reads a whole image whose header h has been checked: a PNG is
// decoded completely, so that fpdf never sees a broken one, and converted
// to 8-bit RGBA when fpdf cannot embed it as it is (16-bit, interlaced). A
// JPEG is passed on as it is. The caller has counted h.cost() against its
// memory budget.
func decodeImage(data []byte, h imageHeader) (img *imageData, err error) {
	defer func() {
		if r := recover(); r != nil {
			img, err = nil, fmt.Errorf("image cannot be read: %v", r)
		}
	}()
	img = &imageData{data: data, kind: h.kind, w: h.w, h: h.h}
	if h.kind == "WEBP" {
		if img.data, img.kind, err = convertWebP(data); err != nil {
			return nil, err
		}
	}
	if h.kind == "PNG" {
		decoded, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("PNG image cannot be read: %v", firstLine(err.Error()))
		}
		if h.converted() {
			rgba := image.NewNRGBA(decoded.Bounds())
			draw.Draw(rgba, rgba.Bounds(), decoded, decoded.Bounds().Min, draw.Src)
			var buf bytes.Buffer
			enc := png.Encoder{CompressionLevel: png.BestSpeed}
			if err := enc.Encode(&buf, rgba); err != nil {
				return nil, fmt.Errorf("PNG image cannot be converted: %v", err)
			}
			img.data = buf.Bytes()
		}
	}
	img.sum = sha256.Sum256(img.data)
	return img, nil
}

// literalImage is an image written into the template itself. Compile
// checks its header; the first render that draws it decodes it, under that
// render's memory budget, and keeps the result for the renders after it.
type literalImage struct {
	head imageHeader
	mu   sync.Mutex // held while decoding: renders drawing it meanwhile wait
	data []byte     // the file, until it is decoded
	img  *imageData
	err  error // why it cannot be decoded: a broken file stays broken
}

// decode returns the image, decoding it first when no render has; m is the
// memory meter of the render asking. A render whose budget is too small
// fails without deciding anything for the others.
func (l *literalImage) decode(m *memoryMeter) (*imageData, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.img == nil && l.err == nil {
		if err := m.need(l.head.cost()); err != nil {
			return nil, err
		}
		l.img, l.err = decodeImage(l.data, l.head)
		l.data = nil
	}
	return l.img, l.err
}

// reserve is what drawing the image may take a render: decoding and
// embedding it until a render has decoded it, then embedding only.
func (l *literalImage) reserve() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.img != nil {
		return embedCost(l.img)
	}
	return l.head.cost()
}

// imageCost estimates what drawing the image in a data URI takes, from the
// first bytes of its header (no more is read: a render reserves its memory
// with it before it starts). A PNG's other chunks are not read, so a
// transparency chunk is assumed; anything else costs its size.
func imageCost(src string) int64 {
	_, payload, ok := strings.Cut(src, ",")
	if !ok {
		return int64(len(src))
	}
	payload = strings.TrimSpace(payload)
	if len(payload) > 48 {
		payload = payload[:48]
	}
	head, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return int64(len(src))
	}
	h, ok := parseIHDR(head)
	if !ok || h.w > maxImageSide || h.h > maxImageSide {
		return int64(len(src)) // refused by the header check before decoding
	}
	h.transparent = true
	return h.cost()
}
