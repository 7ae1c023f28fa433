package render

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"folio/render/svg"
	"folio/render/vector"
)

// SVG images are drawn as vectors: the svg component (markup in "content",
// or a "src" naming an asset, a data URI or an https URL), and any image
// whose source turns out to be SVG. The reader (render/svg) leaves out
// what it does not support with a warning; Compile reports those of
// markup written into the template, CheckSVG those of an uploaded asset.

// vectorImage is an SVG image read, ready to draw.
type vectorImage struct {
	d        *vector.Drawing
	warnings []string
}

// readSVG reads SVG markup.
func readSVG(data []byte) (*vectorImage, error) {
	res, err := svg.Parse(data)
	if err != nil {
		return nil, err
	}
	return &vectorImage{d: res.Drawing, warnings: res.Warnings}, nil
}

// CheckSVG reads an SVG image as a render would and returns what it
// leaves out (filters, masks, scripts, external references), each named
// once; an error when it cannot be drawn at all.
func CheckSVG(data []byte) ([]string, error) {
	v, err := readSVG(data)
	if err != nil {
		return nil, err
	}
	return v.warnings, nil
}

// looksLikeSVG reports whether data is markup (after a byte-order mark and
// white space) rather than a raster image.
func looksLikeSVG(data []byte) bool {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	data = bytes.TrimLeft(data, " \t\r\n")
	return len(data) > 0 && data[0] == '<'
}

// isSVGDataURI reports whether src is a data URI of type image/svg+xml.
func isSVGDataURI(src string) bool {
	src = strings.TrimSpace(src)
	if len(src) < 18 || !strings.EqualFold(src[:5], "data:") {
		return false
	}
	mime, _, _ := strings.Cut(src[5:], ",")
	mime, _, _ = strings.Cut(mime, ";")
	return strings.EqualFold(strings.TrimSpace(mime), "image/svg+xml")
}

// svgDataURI returns the markup of an image/svg+xml data URI: base64, or
// plain (percent-encoded) text.
func svgDataURI(src string) ([]byte, error) {
	meta, payload, ok := strings.Cut(strings.TrimSpace(src)[5:], ",")
	if !ok {
		return nil, errors.New("data URI has no comma before its data")
	}
	if len(payload) > svg.MaxBytes*4/3+4 {
		return nil, fmt.Errorf("SVG image is larger than %d bytes", svg.MaxBytes)
	}
	if strings.Contains(strings.ToLower(meta), ";base64") {
		data, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(payload), ""))
		if err != nil {
			return nil, errors.New("SVG data URI is not valid base64")
		}
		return data, nil
	}
	text, err := url.PathUnescape(payload)
	if err != nil {
		text = payload
	}
	return []byte(text), nil
}

// svgElement is an SVG image drawn as vectors.
type svgElement struct {
	content *textTemplate // inline markup
	src     *textTemplate // asset:…, a data URI or an https URL
	fixed   *vectorImage  // read at Compile when content or src is literal markup
	width   float64       // millimetres; 0 when not given
	height  float64
	align   string
	family  string // the font family of its text when it names none the engine has
}

func (e *svgElement) fontStyles() fontStyle {
	return styleRegular | styleBold | styleItalic | styleBoldItalic
}

func (e *svgElement) refs() elementRefs {
	return elementRefs{texts: []*textTemplate{e.content, e.src}}
}

func parseSVGComponent(c *compiler, path string, props object, _ depth) element {
	e := &svgElement{content: &textTemplate{}, src: &textTemplate{}, family: c.family}
	content, hasContent := c.str(props, path, "content")
	src, hasSrc := c.str(props, path, "src")
	switch {
	case hasContent && hasSrc:
		c.add(path+".content", "give either content (SVG markup) or src (asset:<name>, a data URI or an https URL), not both")
	case hasContent:
		e.content = c.compileText(path+".content", content)
		if lit, ok := e.content.literal(); ok {
			e.fixed = c.literalSVG(path+".content", []byte(lit))
		}
	case hasSrc:
		e.src = c.compileText(path+".src", src)
		if lit, ok := e.src.literal(); ok {
			switch {
			case isSVGDataURI(lit):
				data, err := svgDataURI(lit)
				if err != nil {
					c.add(path+".src", "%v", err)
				} else {
					e.fixed = c.literalSVG(path+".src", data)
				}
			case strings.HasPrefix(strings.TrimSpace(lit), AssetPrefix):
				if _, _, err := assetRef(lit); err != nil {
					c.add(path+".src", "%v", err)
				}
			case isImageURL(lit):
				if err := checkImageURL(lit); err != nil {
					c.add(path+".src", "%v", err)
				}
			default:
				c.add(path+".src", "must be asset:<name>, a data:image/svg+xml URI or an https:// URL")
			}
		}
	default:
		if !props.present("content") && !props.present("src") {
			c.add(path+".content", "is required: SVG markup (or give src: asset:<name>, a data URI or an https URL)")
		}
	}
	e.width = c.length(props, path, "width", 1, maxLength, 0)
	e.height = c.length(props, path, "height", 1, maxLength, 0)
	e.align = c.alignment(props, path)
	return e
}

// literalSVG reads markup written into the template: an error if it
// cannot be drawn at all, a warning for each feature left out.
func (c *compiler) literalSVG(path string, data []byte) *vectorImage {
	v, err := readSVG(data)
	if err != nil {
		c.add(path, "%v", err)
		return nil
	}
	for _, w := range v.warnings {
		c.notes = append(c.notes, Issue{Path: path, Message: "SVG: " + w})
	}
	return v
}

// layoutSVG lays out an svg component.
func (p *pdfWriter) layoutSVG(c *component, e *svgElement, env map[string]any, w float64, s sink) error {
	v := e.fixed
	if v == nil {
		var err error
		if e.content.src != "" {
			markup, rerr := renderMarkup(e.content, p.ev, env)
			if rerr != nil {
				return rerr
			}
			if strings.TrimSpace(markup) == "" {
				return nil
			}
			v, err = p.cachedSVG("\x00content\x00"+markup, func() ([]byte, error) { return []byte(markup), nil })
			if err != nil {
				return contentError(c, "content", e.content, err)
			}
		} else {
			src, rerr := e.src.render(p.ev, env)
			if rerr != nil {
				return rerr
			}
			if strings.TrimSpace(src) == "" {
				return nil
			}
			var raster bool
			v, raster, err = p.sourceSVG(c, "src", e.src, src)
			if err != nil {
				return err
			}
			if raster {
				return contentError(c, "src", e.src, fmt.Errorf("%s is not an SVG image: draw it with an image component", clip(src, 80)))
			}
		}
	}
	if v == nil {
		return nil
	}
	return p.layoutVector(v.d, e.width, e.height, e.align, e.family, w, s)
}

// cachedSVG reads the markup load returns once per document per key.
func (p *pdfWriter) cachedSVG(key string, load func() ([]byte, error)) (*vectorImage, error) {
	st := p.vectors()
	if v, ok := st.drawings[key]; ok {
		return v, nil
	}
	data, err := load()
	if err != nil {
		return nil, err
	}
	v, err := readSVG(data)
	if err != nil {
		return nil, err
	}
	st.drawings[key] = v
	return v, nil
}

// sourceSVG reads the image a source names when it is SVG: an
// image/svg+xml data URI, or an asset or URL whose bytes are markup.
// raster is set when the source is a picture instead; its bytes are then
// decoded for the image component (p.decoded) so they are read once.
func (p *pdfWriter) sourceSVG(c *component, prop string, tt *textTemplate, src string) (v *vectorImage, raster bool, err error) {
	if v, ok := p.vectors().drawings[src]; ok {
		return v, false, nil
	}
	if p.decoded[src] != nil {
		return nil, true, nil
	}
	var data []byte
	var what string
	switch {
	case isSVGDataURI(src):
		data, err = svgDataURI(src)
		if err != nil {
			return nil, false, contentError(c, prop, tt, err)
		}
		what = "SVG data URI"
	case strings.HasPrefix(strings.TrimSpace(src), AssetPrefix):
		ref, _, err := assetRef(src)
		if err != nil {
			return nil, false, contentError(c, prop, tt, err)
		}
		if p.assets == nil {
			return nil, false, contentError(c, prop, tt, fmt.Errorf("%s%s cannot be drawn: this render has no asset library", AssetPrefix, clip(ref, 80)))
		}
		kind, b, err := p.assets(ref)
		if err != nil {
			return nil, false, err // the resolver's own error (an unknown asset) reaches the caller as it is
		}
		if kind != "image" {
			return nil, false, contentError(c, prop, tt, fmt.Errorf("%s%s is a %s asset, not an image", AssetPrefix, clip(ref, 80), kind))
		}
		data, what = b, AssetPrefix+clip(ref, 80)
	case isImageURL(src):
		b, err := p.fetchImage(c, prop, tt, src)
		if err != nil {
			return nil, false, err
		}
		data, what = b, clip(strings.TrimSpace(src), 120)
	default:
		return nil, false, nil
	}
	if !looksLikeSVG(data) {
		if _, err := p.decodeRaster(c, prop, tt, src, what, data); err != nil {
			return nil, false, err
		}
		return nil, true, nil
	}
	v, err = readSVG(data)
	if err != nil {
		return nil, false, contentError(c, prop, tt, fmt.Errorf("%s: %v", what, err))
	}
	p.vectors().drawings[src] = v
	return v, false, nil
}

// decodeRaster checks and decodes the bytes of a picture named by src
// (an asset or a URL), under the render's memory budget, once per render.
func (p *pdfWriter) decodeRaster(c *component, prop string, tt *textTemplate, src, what string, data []byte) (*imageData, error) {
	if img := p.decoded[src]; img != nil {
		return img, nil
	}
	h, err := readImageHeader(data)
	if err != nil {
		return nil, contentError(c, prop, tt, fmt.Errorf("%s: %v", what, err))
	}
	if err := p.mem.need(h.cost()); err != nil {
		return nil, err
	}
	img, err := decodeImage(data, h)
	if err != nil {
		return nil, contentError(c, prop, tt, fmt.Errorf("%s: %v", what, err))
	}
	p.decoded[src] = img
	return img, nil
}

// layoutVector places a drawing: width and height as given (the drawing
// fitted inside by its preserveAspectRatio), or one of them with the
// other from its proportions, or its natural size at 96 dpi; never wider
// than the column or taller than a page's body.
func (p *pdfWriter) layoutVector(d *vector.Drawing, width, height float64, align, family string, w float64, s sink) error {
	ratio := 1.0
	if d.Width > 0 && d.Height > 0 {
		ratio = d.Height / d.Width
	}
	bw, bh := width, height
	switch {
	case bw > 0 && bh > 0:
	case bw > 0:
		bh = bw * ratio
	case bh > 0:
		bw = bh / ratio
	default:
		bw, bh = d.Width*pixelMM, d.Height*pixelMM
	}
	if bw > w {
		bw, bh = w, bh*w/bw
	}
	if maxH := p.bodyHeight(); bh > maxH {
		bw, bh = bw*maxH/bh, maxH
	}
	if bw <= 0 || bh <= 0 {
		return nil
	}
	n := int64(vectorItemBytes)
	for _, it := range d.Items {
		n += vectorItemBytes
		if it.Shape != nil {
			n += int64(it.Shape.Path.Len()) * vectorCommandBytes
		}
	}
	if err := p.mem.need(n); err != nil {
		return err
	}
	off := place(align, w, bw)
	return s.add(&box{w: w, h: bh, after: blockAfter, draw: func(x, y float64) {
		p.drawVector(d, x+off, y, bw, bh, family)
	}})
}

// checkImageSource checks a literal image source that is drawn later: an
// https URL's form, or the markup of an SVG data URI.
func (c *compiler) checkImageSource(path, src string) {
	if isImageURL(src) {
		if err := checkImageURL(src); err != nil {
			c.add(path, "%v", err)
		}
		return
	}
	data, err := svgDataURI(src)
	if err != nil {
		c.add(path, "%v", err)
		return
	}
	c.literalSVG(path, data)
}

// renderMarkup evaluates the placeholders of SVG markup, escaping each
// value as XML text: a value is always text or an attribute's value,
// never markup ("Ada & Bob", or "<image href=…>", stay as written).
func renderMarkup(tt *textTemplate, ev *evaluator, env map[string]any) (string, error) {
	var b strings.Builder
	for _, part := range tt.parts {
		if part.expr == nil {
			b.WriteString(part.literal)
			continue
		}
		v, err := ev.run(part.expr, env)
		if err != nil {
			return "", err
		}
		if err := xml.EscapeText(&b, []byte(formatValue(v))); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}
