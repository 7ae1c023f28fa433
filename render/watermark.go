package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"folio/render/internal/fpdf"
)

// watermark is a text or an image stamped over the chosen pages, turned
// and translucent: "watermark": {text | image, angle, opacity, position,
// pages, fontSize, color, width}.
type watermark struct {
	off      bool          // "watermark": false
	text     string        // plain text, no placeholders
	img      *imageElement // an image: data URI or asset:<ref>
	angle    float64       // degrees, counter-clockwise
	opacity  float64       // 0 (invisible) to 1
	position string        // center, top, bottom, top-left, top-right, bottom-left, bottom-right
	pages    string        // all, first, last, odd, even, notFirst, notLast
	size     float64       // points; 0 fits the page
	color    [3]int
	bold     bool
	width    float64 // millimetres (images); 0: half the page width
}

// draftWatermark is what previews carry unless a watermark is set.
var draftWatermark = &watermark{text: "DRAFT", angle: 45, opacity: 0.15, position: "center", pages: "all", color: [3]int{200, 0, 0}, bold: true}

// Watermark choices.
var (
	watermarkPositions = []string{"center", "top", "bottom", "top-left", "top-right", "bottom-left", "bottom-right"}
	watermarkPages     = []string{"all", "first", "last", "odd", "even", "notFirst", "notLast"}
)

const maxWatermarkText = 200

func (c *compiler) parseWatermark(path string, raw json.RawMessage) *watermark {
	if s := bytes.TrimSpace(raw); string(s) == "false" {
		return &watermark{off: true}
	}
	if s := bytes.TrimSpace(raw); len(s) == 0 || s[0] != '{' {
		c.add(path, `must be an object ({"text": "DRAFT"} or {"image": "asset:logo"}) or false`)
		return nil
	}
	o, ok := c.object(path, raw)
	if !ok {
		return nil
	}
	w := &watermark{opacity: 0.2, position: "center", pages: "all", color: [3]int{128, 128, 128}, bold: true}
	text, hasText := c.str(o, path, "text")
	src, hasImage := c.str(o, path, "image")
	switch {
	case hasText && hasImage:
		c.add(path, "has both text and image: choose one")
	case hasText:
		if strings.TrimSpace(text) == "" {
			c.add(path+".text", "must not be empty")
		} else if n := len([]rune(text)); n > maxWatermarkText {
			c.add(path+".text", "is %d characters long, at most %d", n, maxWatermarkText)
		}
		c.checkGlyphs(path+".text", text)
		w.text = pdfText(strings.ReplaceAll(text, "\n", " "))
		w.angle = 45
	case hasImage:
		w.img = &imageElement{src: c.compileText(path+".image", src)}
		if lit, ok := w.img.src.literal(); ok {
			if _, isAsset, err := assetRef(lit); isAsset {
				if err != nil {
					c.add(path+".image", "%v", err)
				}
			} else if img, err := c.literalImage(lit); err != nil {
				c.add(path+".image", "%v", err)
			} else {
				w.img.lit = img
			}
		} else {
			c.add(path+".image", "must be a data URI (data:image/png;base64,…) or asset:<name>, without placeholders")
		}
		w.opacity = 0.3
	default:
		if !o.present("text") && !o.present("image") {
			c.add(path, "needs text or image")
		}
	}
	if a, ok := c.number(o, path, "angle"); ok {
		if a < -360 || a > 360 {
			c.add(path+".angle", "must be between -360 and 360 (degrees, counter-clockwise)")
		}
		w.angle = a
	}
	if v, ok := c.number(o, path, "opacity"); ok {
		if v <= 0 || v > 1 {
			c.add(path+".opacity", "must be more than 0 and at most 1")
		}
		w.opacity = v
	}
	w.position = c.oneOf(o, path, "position", "center", watermarkPositions...)
	w.pages = c.oneOf(o, path, "pages", "all", watermarkPages...)
	if v, ok := c.number(o, path, "fontSize"); ok {
		if v < 4 || v > 400 {
			c.add(path+".fontSize", "must be between 4 and 400 (points)")
		}
		w.size = v
	}
	if s, ok := c.str(o, path, "color"); ok {
		col, valid := parseColor(s)
		if !valid {
			c.add(path+".color", "must be a colour such as #c00000")
		}
		w.color = col
	}
	if b, ok := c.boolean(o, path, "bold"); ok {
		w.bold = b
	}
	w.width = c.length(o, path, "width", 1, maxLength, 0)
	return w
}

// on reports whether the watermark goes on page n of pages.
func (w *watermark) on(n, pages int) bool {
	switch w.pages {
	case "first":
		return n == 1
	case "last":
		return n == pages
	case "odd":
		return n%2 == 1
	case "even":
		return n%2 == 0
	case "notFirst":
		return n != 1
	case "notLast":
		return n != pages
	}
	return true
}

// watermarkGap is the distance of a watermark placed at an edge from it.
const watermarkGap = 10

// drawWatermark stamps the watermark over the chosen pages, once every
// page is drawn (fpdf close hook: the page count is known).
func (p *pdfWriter) drawWatermark() {
	w := p.wm
	if w == nil || w.off || p.err != nil {
		return
	}
	last := p.f.PageNo()
	draw, bw, bh, err := p.watermarkDrawer(w)
	if err != nil {
		p.err = err
		return
	}
	rad := w.angle * math.Pi / 180
	cos, sin := math.Abs(math.Cos(rad)), math.Abs(math.Sin(rad))
	// The turned box's extent on the page.
	ew, eh := bw*cos+bh*sin, bw*sin+bh*cos
	cx, cy := p.pageW/2, p.pageH/2
	if strings.Contains(w.position, "left") {
		cx = watermarkGap + ew/2
	}
	if strings.Contains(w.position, "right") {
		cx = p.pageW - watermarkGap - ew/2
	}
	if strings.HasPrefix(w.position, "top") {
		cy = watermarkGap + eh/2
	}
	if strings.HasPrefix(w.position, "bottom") {
		cy = p.pageH - watermarkGap - eh/2
	}
	for n := 1; n <= last; n++ {
		if !w.on(n, last) {
			continue
		}
		p.f.SetPage(n)
		p.f.RawWriteStr("q")
		p.f.SetAlpha(w.opacity, "Normal")
		p.f.TransformBegin()
		p.f.TransformRotate(w.angle, cx, cy)
		draw(cx-bw/2, cy-bh/2)
		p.f.TransformEnd()
		p.f.RawWriteStr("Q")
		p.charge(rectOpBytes + textOpBytes)
	}
	p.f.SetAlpha(1, "Normal")
	p.f.SetPage(last)
	if p.f.Err() && p.err == nil {
		p.err = fmt.Errorf("render: drawing the watermark: %w", p.f.Error())
	}
}

// watermarkDrawer returns what draws the watermark with its top left
// corner at (x, y), unturned, and the size it takes.
func (p *pdfWriter) watermarkDrawer(w *watermark) (draw func(x, y float64), bw, bh float64, err error) {
	// What fits the page turned by the angle, with a margin around.
	rad := w.angle * math.Pi / 180
	cos, sin := math.Abs(math.Cos(rad)), math.Abs(math.Sin(rad))
	fit := func(bw, bh float64) float64 {
		availW, availH := p.pageW-2*watermarkGap, p.pageH-2*watermarkGap
		return min(availW/(bw*cos+bh*sin), availH/(bw*sin+bh*cos))
	}
	if w.img != nil {
		c := &component{kind: "watermark", path: "watermark"}
		img, err := p.image(c, w.img, p.values)
		if err != nil || img == nil {
			return nil, 0, 0, err
		}
		name, err := p.addImage(img.sum, len(img.data), func(name string) error {
			if err := p.mem.need(embedCost(img)); err != nil {
				return err
			}
			p.f.RegisterImageOptionsReader(name, fpdf.ImageOptions{ImageType: img.kind}, bytes.NewReader(img.data))
			if p.f.Err() {
				err := p.f.Error()
				p.f.ClearError()
				return fmt.Errorf("watermark image cannot be embedded: %v", err)
			}
			return nil
		})
		if err != nil {
			return nil, 0, 0, err
		}
		bw = w.width
		if bw == 0 {
			bw = p.pageW / 2
		}
		bh = bw * float64(img.h) / float64(img.w)
		if k := fit(bw, bh); k < 1 {
			bw, bh = bw*k, bh*k
		}
		return func(x, y float64) {
			p.f.ImageOptions(name, x, y, bw, bh, false, fpdf.ImageOptions{ImageType: img.kind}, 0, "")
		}, bw, bh, nil
	}
	st := textStyle{size: w.size, bold: w.bold, color: w.color, align: "L", family: p.t.doc.fontFamily}
	if st.size == 0 {
		st.size = 100
	}
	line := p.split(w.text, st, 0)[0]
	bw, bh = lineWidth(line, st), lineHeight(st)
	if k := fit(bw, bh); w.size == 0 || k < 1 {
		// No size given, or too large: as large as the page allows, at most 100 pt.
		st.size = min(st.size*k, 100)
		line = p.split(w.text, st, 0)[0]
		bw, bh = lineWidth(line, st), lineHeight(st)
	}
	return func(x, y float64) {
		p.f.SetTextColor(st.color[0], st.color[1], st.color[2])
		p.f.RawWriteStr(p.f.TextColorOp())
		p.drawText(st, line, x, y, bw, "L")
	}, bw, bh, nil
}
