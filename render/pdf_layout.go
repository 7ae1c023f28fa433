package render

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"folio/render/internal/fpdf"
	"folio/render/text"
)

// layout evaluates one component instance and hands its boxes, laid out
// for width w, to s.
func (p *pdfWriter) layout(c *component, env map[string]any, w float64, s sink) error {
	if c.anchor != "" {
		s = &markSink{sink: s, p: p, m: mark{anchor: c.anchor}}
	}
	switch e := c.elem.(type) {
	case *textElement:
		st, err := p.linked(c, e.style, e.link, env)
		if err != nil {
			return err
		}
		return p.layoutText(e.content, st, 0, textAfter, lineGlue{e.orphans, e.widows, false}, env, w, s)
	case *headingElement:
		st, err := p.linked(c, e.style, e.link, env)
		if err != nil {
			return err
		}
		if s, err = p.headingSink(e, env, s); err != nil {
			return err
		}
		return p.layoutText(e.content, st, headingBefore, headingAfter, lineGlue{maxWidows, maxWidows, e.keepWithNext}, env, w, s)
	case *markdownElement:
		return p.layoutMarkdown(c, e, env, w, s)
	case *tocElement:
		return p.layoutTOC(e, env, w, s)
	case *tableElement:
		return p.layoutTable(c, e, env, w, s)
	case *keyValueElement:
		return p.layoutKeyValue(e, env, w, s)
	case *imageElement:
		return p.layoutImage(c, e, env, w, s)
	case *svgElement:
		return p.layoutSVG(c, e, env, w, s)
	case *qrElement:
		return p.layoutQR(c, e, env, w, s)
	case *barcodeElement:
		return p.layoutBarcode(c, e, env, w, s)
	case *dividerElement:
		return s.add(&box{w: w, h: e.thickness, before: e.spacing, after: e.spacing, draw: func(x, y float64) {
			p.f.SetFillColor(e.color[0], e.color[1], e.color[2])
			p.f.Rect(x, y, w, e.thickness, "F")
		}})
	case *spacerElement:
		return s.add(&box{w: w, h: e.height})
	case *pageBreakElement:
		return s.add(&box{w: w, breakPage: true})
	case *columnsElement:
		return p.layoutColumns(e, env, w, s)
	case *chartElement:
		return p.layoutChart(c, e, env, w, s)
	}
	return nil
}

// lineGlue says which lines of a paragraph stay on one page: at least
// orphans lines before a page break and widows lines after it; keepNext
// keeps the last line with what follows.
type lineGlue struct {
	orphans, widows int
	keepNext        bool
}

// glued reports whether line i of n stays on the page of line i+1.
func (g lineGlue) glued(i, n int) bool {
	if i == n-1 {
		return g.keepNext
	}
	return i < g.orphans-1 || i >= n-g.widows
}

// lineTexts returns the characters of each line.
func lineTexts(lines []text.Line) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.Text
	}
	return out
}

// layoutText wraps text into one box per line.
func (p *pdfWriter) layoutText(tt *textTemplate, st textStyle, before, after float64, g lineGlue, env map[string]any, w float64, s sink) error {
	var str string
	var paged *pagedText // set when the text reads "page"
	var err error
	if tt.usesName("page") {
		paged, str, err = p.newPagedText(tt, env)
	} else if str, err = tt.render(p.ev, env); err == nil {
		str = pdfText(str)
	}
	if err != nil {
		return err
	}
	if strings.TrimSpace(str) == "" {
		return nil
	}
	lines := p.split(str, st, w)
	if paged != nil {
		paged.locate(lineTexts(lines))
	}
	lh := lineHeight(st)
	draw := func(line text.Line) func(x, y float64) {
		return func(x, y float64) { p.drawText(st, line, x, y, w, st.align) }
	}
	redraw := func(s string) func(x, y float64) { return draw(p.split(s, st, 0)[0]) }
	for i, line := range lines {
		b := &box{w: w, h: lh, glue: g.glued(i, len(lines)), draw: draw(line)}
		if paged != nil {
			paged.repageLine(b, i, line.Text, redraw)
		}
		if i == 0 {
			b.before = before
		}
		if i == len(lines)-1 {
			b.after = after
		}
		if err := s.add(b); err != nil {
			return err
		}
	}
	return nil
}

// Key/value geometry in millimetres.
const (
	keyValueGap  = 3   // between the label and the value column
	keyValueRowY = 0.8 // below each pair
)

// layoutKeyValue lays out label/value pairs, one box per pair.
func (p *pdfWriter) layoutKeyValue(e *keyValueElement, env map[string]any, w float64, s sink) error {
	labelW := e.labelWidthIn(w)
	valueW := max(w-labelW-keyValueGap, 1)
	lst := e.style
	lst.bold = true
	lh := lineHeight(e.style)
	// pair lays out one pair; nil when both its texts are blank.
	pair := func(it *keyValueItem, env map[string]any) (*box, error) {
		label, err := it.label.render(p.ev, env)
		if err != nil {
			return nil, err
		}
		v, err := it.value.value(p.ev, env)
		if err != nil {
			return nil, err
		}
		value := it.format.display(v)
		if strings.TrimSpace(label) == "" && strings.TrimSpace(value) == "" {
			return nil, nil
		}
		ll := p.split(pdfText(label), lst, labelW)
		vl := p.split(pdfText(value), e.style, valueW)
		h := float64(max(len(ll), len(vl))) * lh
		return &box{w: w, h: h, after: keyValueRowY, draw: func(x, y float64) {
			for k, line := range ll {
				p.drawText(lst, line, x, y+float64(k)*lh, labelW, "L")
			}
			for k, line := range vl {
				p.drawText(e.style, line, x+labelW+keyValueGap, y+float64(k)*lh, valueW, e.style.align)
			}
		}}, nil
	}
	for i, it := range e.items {
		b, err := pair(it, env)
		if err != nil {
			return err
		}
		if b == nil {
			continue
		}
		if it.label.usesName("page") || it.value.usesName("page") {
			p.repaged([]*box{b}, env, func(env map[string]any) ([]*box, error) {
				b, err := pair(it, env)
				if b == nil {
					return nil, err
				}
				return []*box{b}, err
			})
		}
		if i == len(e.items)-1 {
			b.after = blockAfter
		}
		if err := s.add(b); err != nil {
			return err
		}
	}
	return nil
}

// contentError reports a value a component cannot use, such as a broken
// image, at the prop it came from.
func contentError(c *component, prop string, tt *textTemplate, err error) error {
	return &ExpressionError{Path: c.path + ".props." + prop, Expression: clip(tt.src, 200), Message: err.Error()}
}

// addImage embeds an image, QR code or barcode once per document under key
// and counts it against the image limit. register does the embedding.
// Images are keyed by the SHA-256 of their data, computed when they are
// decoded (once for all renders of a template for literal sources).
func (p *pdfWriter) addImage(key any, size int, register func(name string) error) (string, error) {
	if name, ok := p.images[key]; ok {
		return name, nil
	}
	if n := len(p.images) + 1; n > p.limits.Images {
		return "", newLimitError(LimitImages, int64(n), int64(p.limits.Images))
	}
	p.imgBytes += int64(size)
	if p.imgBytes > p.limits.Bytes {
		return "", newLimitError(LimitBytes, p.imgBytes, p.limits.Bytes)
	}
	if err := p.mem.hold(int64(size)); err != nil {
		return "", err
	}
	name := "i" + strconv.Itoa(len(p.images))
	if register != nil {
		if err := register(name); err != nil {
			return "", err
		}
	}
	p.images[key] = name
	return name, nil
}

// bodyHeight is the height of the body on the current page.
func (p *pdfWriter) bodyHeight() float64 { return max(p.bottom-p.bodyTop, 10) }

// place returns the x offset of a block of width bw aligned in width w.
func place(align string, w, bw float64) float64 {
	switch align {
	case "C":
		return (w - bw) / 2
	case "R":
		return w - bw
	}
	return 0
}

// image decodes the image e draws, under the render's memory budget: a
// literal one once for every render of the template, one from a value once
// per render.
func (p *pdfWriter) image(c *component, e *imageElement, env map[string]any) (*imageData, error) {
	if e.lit != nil {
		img, err := e.lit.decode(&p.mem)
		var le *LimitError
		if err != nil && !errors.As(err, &le) {
			return nil, contentError(c, "src", e.src, err)
		}
		return img, err
	}
	src, err := e.src.render(p.ev, env)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(src) == "" {
		return nil, nil // a missing image draws nothing, like missing text
	}
	if img := p.decoded[src]; img != nil {
		return img, nil
	}
	if ref, ok, err := assetRef(src); ok {
		if err != nil {
			return nil, contentError(c, "src", e.src, err)
		}
		return p.assetImage(c, e, src, ref)
	}
	// The estimate from the first bytes refuses a bomb before anything
	// is decoded, base64 included; the header read then counts exactly.
	if err := p.mem.need(imageCost(src)); err != nil {
		return nil, err
	}
	data, h, err := readDataURI(src, p.limits.Bytes)
	if err != nil {
		return nil, contentError(c, "src", e.src, err)
	}
	if err := p.mem.need(h.cost()); err != nil {
		return nil, err
	}
	img, err := decodeImage(data, h)
	if err != nil {
		return nil, contentError(c, "src", e.src, err)
	}
	p.decoded[src] = img
	return img, nil
}

// assetImage draws a stored asset: the caller's resolver gives its bytes,
// which are checked and decoded like a data URI's, once per render.
func (p *pdfWriter) assetImage(c *component, e *imageElement, src, ref string) (*imageData, error) {
	if p.assets == nil {
		return nil, contentError(c, "src", e.src, fmt.Errorf("%s%s cannot be drawn: this render has no asset library", AssetPrefix, clip(ref, 80)))
	}
	kind, data, err := p.assets(ref)
	if err != nil {
		return nil, err // the resolver's own error (an unknown asset) reaches the caller as it is
	}
	if kind != "image" {
		return nil, contentError(c, "src", e.src, fmt.Errorf("%s%s is a %s asset, not an image", AssetPrefix, clip(ref, 80), kind))
	}
	h, err := readImageHeader(data)
	if err != nil {
		return nil, contentError(c, "src", e.src, fmt.Errorf("%s%s: %v (images drawn in PDFs are PNG or JPEG so far)", AssetPrefix, clip(ref, 80), err))
	}
	if err := p.mem.need(h.cost()); err != nil {
		return nil, err
	}
	img, err := decodeImage(data, h)
	if err != nil {
		return nil, contentError(c, "src", e.src, err)
	}
	p.decoded[src] = img
	return img, nil
}

func (p *pdfWriter) layoutImage(c *component, e *imageElement, env map[string]any, w float64, s sink) error {
	if v, err := p.imageSVG(c, e, env); v != nil || err != nil {
		if err != nil {
			return err
		}
		return p.layoutVector(v.d, e.width, e.height, e.align, "", w, s)
	}
	img, err := p.image(c, e, env)
	if err != nil || img == nil {
		return err
	}
	name, err := p.addImage(img.sum, len(img.data), func(name string) error {
		if err := p.mem.need(embedCost(img)); err != nil {
			return err
		}
		p.f.RegisterImageOptionsReader(name, fpdf.ImageOptions{ImageType: img.kind}, bytes.NewReader(img.data))
		if p.f.Err() {
			err := p.f.Error()
			p.f.ClearError()
			return contentError(c, "src", e.src, fmt.Errorf("image cannot be embedded: %v", err))
		}
		return nil
	})
	if err != nil {
		return err
	}
	ratio := float64(img.h) / float64(img.w)
	bw, bh := e.width, e.height
	switch {
	case bw > 0 && bh > 0: // fit the box, keeping the proportions
		if bw*ratio <= bh {
			bh = bw * ratio
		} else {
			bw = bh / ratio
		}
	case bw > 0:
		bh = bw * ratio
	case bh > 0:
		bw = bh / ratio
	default:
		bw, bh = float64(img.w)*pixelMM, float64(img.h)*pixelMM
	}
	if bw > w {
		bw, bh = w, bh*w/bw
	}
	if maxH := p.bodyHeight(); bh > maxH {
		bw, bh = bw*maxH/bh, maxH
	}
	off := place(e.align, w, bw)
	link, err := p.resolveLink(c, e.link, env)
	if err != nil {
		return err
	}
	return s.add(&box{w: w, h: bh, after: blockAfter, draw: func(x, y float64) {
		p.f.ImageOptions(name, x+off, y, bw, bh, false, fpdf.ImageOptions{ImageType: img.kind}, 0, "")
		if link != "" {
			p.linkArea(link, x+off, y, bw, bh)
		}
	}})
}

func (p *pdfWriter) layoutQR(c *component, e *qrElement, env map[string]any, w float64, s sink) error {
	value, err := e.value.render(p.ev, env)
	if err != nil {
		return err
	}
	if value == "" {
		return nil
	}
	key := strconv.Itoa(int(e.level)) + "\x00" + value
	bits := e.fixed
	if bits == nil {
		if bits = p.qrs[key]; bits == nil {
			if bits, err = qrModules(value, e.level); err != nil {
				return contentError(c, "value", e.value, err)
			}
			p.qrs[key] = bits
		}
	}
	if len(bits) == 0 {
		return nil
	}
	if _, err := p.addImage("\x00qr"+key, 0, nil); err != nil {
		return err
	}
	size := min(e.size, w, p.bodyHeight())
	m := size / float64(len(bits))
	off := place(e.align, w, size)
	return s.add(&box{w: w, h: size, after: blockAfter, draw: func(x, y float64) {
		p.f.SetFillColor(0, 0, 0)
		p.charge(int64(p.f.FillGrid(x+off, y, m, bits)))
	}})
}

func (p *pdfWriter) layoutBarcode(c *component, e *barcodeElement, env map[string]any, w float64, s sink) error {
	value, err := e.value.render(p.ev, env)
	if err != nil {
		return err
	}
	if value == "" {
		return nil
	}
	bits := e.fixed
	if bits == nil {
		if bits = p.bars[value]; bits == nil {
			if bits, err = code128Modules(value); err != nil {
				return contentError(c, "value", e.value, err)
			}
			p.bars[value] = bits
		}
	}
	if _, err := p.addImage("\x00bc\x00"+value, 0, nil); err != nil {
		return err
	}
	modules := float64(len(bits) + 2*barcodeQuiet)
	mw := defaultModule
	if e.width > 0 {
		mw = e.width / modules
	}
	mw = min(mw, w/modules)
	bw := mw * modules
	st := textStyle{size: e.fontSize, align: "C", family: e.family}
	h := e.height
	if e.showText {
		h += lineHeight(st)
	}
	off := place(e.align, w, bw)
	text := pdfText(value)
	return s.add(&box{w: w, h: h, after: blockAfter, draw: func(x, y float64) {
		p.f.SetFillColor(0, 0, 0)
		x0 := x + off + barcodeQuiet*mw
		for i := 0; i < len(bits); {
			if !bits[i] {
				i++
				continue
			}
			j := i
			for j < len(bits) && bits[j] {
				j++
			}
			p.charge(rectOpBytes)
			p.f.Rect(x0+float64(i)*mw, y, float64(j-i)*mw, e.height, "F")
			i = j
		}
		if e.showText {
			p.drawText(st, p.split(text, st, 0)[0], x+off, y+e.height, bw, "C")
		}
	}})
}

// layoutColumns lays every column out at its own width and hands them to
// the sink together.
func (p *pdfWriter) layoutColumns(e *columnsElement, env map[string]any, w float64, s sink) error {
	xs, ws := e.columnBounds(w)
	cols := make([][]*box, len(e.children))
	for i, child := range e.children {
		boxes, err := p.collect(child, env, ws[i])
		if err != nil {
			return err
		}
		cols[i] = boxes
	}
	return s.columns(cols, xs, w)
}
