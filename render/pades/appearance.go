package pades

import (
	"bytes"
	"fmt"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"

	"folio/assets"
)

// The visible signature's appearance draws its text as glyph outlines of
// Noto Sans (Folio's default font) filled as paths: the appearance has no
// font resource, so PDF/A's "every font embedded" holds without adding a
// font program to the update.

var appearanceFont = sync.OnceValues(func() (*sfnt.Font, error) {
	b, err := assets.Fonts().Families[0].Regular.Bytes()
	if err != nil {
		return nil, err
	}
	return sfnt.Parse(b)
})

// appearanceLines are the texts shown, first in bold size.
func appearanceLines(o Options) []string {
	var lines []string
	if o.Name != "" {
		lines = append(lines, "Digitally signed by "+o.Name)
	} else {
		lines = append(lines, "Digitally signed")
	}
	lines = append(lines, "Date: "+o.Time.UTC().Format("2006-01-02 15:04:05 UTC"))
	if o.Reason != "" {
		lines = append(lines, "Reason: "+o.Reason)
	}
	if o.Location != "" {
		lines = append(lines, "Location: "+o.Location)
	}
	return lines
}

// appearance is the content stream of a w × h visible signature: a frame
// and the signer's name, date, reason and location.
func appearance(w, h float64, o Options) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "q 0.4 G 0.75 w 0.5 0.5 %s %s re S Q\n", num(w-1), num(h-1))
	f, err := appearanceFont()
	if err != nil {
		return b.Bytes()
	}
	lines := appearanceLines(o)
	pad := 4.0
	size := min(10, (h-2*pad)/(1.25*float64(len(lines))))
	if size <= 0 {
		return b.Bytes()
	}
	var buf sfnt.Buffer
	b.WriteString("q 0 g\n")
	y := h - pad - size
	for _, line := range lines {
		s := size
		if width := textWidth(f, &buf, line, s); width > w-2*pad && width > 0 {
			s *= (w - 2*pad) / width
		}
		drawText(&b, f, &buf, line, pad, y, s)
		y -= 1.25 * size
	}
	b.WriteString("Q\n")
	return b.Bytes()
}

func unitsPerEm(f *sfnt.Font) fixed.Int26_6 { return fixed.Int26_6(f.UnitsPerEm()) << 6 }

// textWidth is line's advance at size points.
func textWidth(f *sfnt.Font, buf *sfnt.Buffer, line string, size float64) float64 {
	upem := unitsPerEm(f)
	var total fixed.Int26_6
	for _, r := range line {
		g, err := f.GlyphIndex(buf, r)
		if err != nil {
			continue
		}
		adv, err := f.GlyphAdvance(buf, g, upem, font.HintingNone)
		if err == nil {
			total += adv
		}
	}
	return float64(total) / 64 * size / float64(f.UnitsPerEm())
}

// drawText fills line's glyph outlines with the baseline at (x, y).
func drawText(b *bytes.Buffer, f *sfnt.Font, buf *sfnt.Buffer, line string, x, y, size float64) {
	upem := unitsPerEm(f)
	scale := size / float64(f.UnitsPerEm()) / 64
	pen := x
	for _, r := range line {
		g, err := f.GlyphIndex(buf, r)
		if err != nil {
			continue
		}
		segs, err := f.LoadGlyph(buf, g, upem, nil)
		if err == nil && len(segs) > 0 {
			pt := func(p fixed.Point26_6) (float64, float64) {
				return pen + float64(p.X)*scale, y - float64(p.Y)*scale // sfnt's y grows downwards
			}
			var cx, cy float64
			for _, s := range segs {
				switch s.Op {
				case sfnt.SegmentOpMoveTo:
					cx, cy = pt(s.Args[0])
					fmt.Fprintf(b, "%.2f %.2f m\n", cx, cy)
				case sfnt.SegmentOpLineTo:
					cx, cy = pt(s.Args[0])
					fmt.Fprintf(b, "%.2f %.2f l\n", cx, cy)
				case sfnt.SegmentOpQuadTo:
					qx, qy := pt(s.Args[0])
					ex, ey := pt(s.Args[1])
					fmt.Fprintf(b, "%.2f %.2f %.2f %.2f %.2f %.2f c\n", cx+2*(qx-cx)/3, cy+2*(qy-cy)/3, ex+2*(qx-ex)/3, ey+2*(qy-ey)/3, ex, ey)
					cx, cy = ex, ey
				case sfnt.SegmentOpCubeTo:
					x1, y1 := pt(s.Args[0])
					x2, y2 := pt(s.Args[1])
					cx, cy = pt(s.Args[2])
					fmt.Fprintf(b, "%.2f %.2f %.2f %.2f %.2f %.2f c\n", x1, y1, x2, y2, cx, cy)
				}
			}
			b.WriteString("f\n")
		}
		if adv, err := f.GlyphAdvance(buf, g, upem, font.HintingNone); err == nil {
			pen += float64(adv) * scale
		}
	}
}
