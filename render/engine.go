package render

import (
	"errors"
	"fmt"
	"io"

	"folio/render/internal/fpdf"
	"golang.org/x/image/font/sfnt"
)

// Fonts holds the TrueType bytes of the one font family documents use.
// Regular is required; a missing style falls back to Regular.
type Fonts struct {
	Regular, Bold, Italic, BoldItalic []byte
}

// fontStyle is a set of font styles, used to embed only the styles a
// template can draw (each embedded style costs milliseconds and kilobytes).
type fontStyle uint8

const (
	styleRegular fontStyle = 1 << iota
	styleBold
	styleItalic
	styleBoldItalic
)

// fpdfStyles pairs each style bit with its fpdf style string.
var fpdfStyles = []struct {
	bit  fontStyle
	name string
}{
	{styleRegular, ""},
	{styleBold, "B"},
	{styleItalic, "I"},
	{styleBoldItalic, "BI"},
}

func styleOf(bold, italic bool) fontStyle {
	switch {
	case bold && italic:
		return styleBoldItalic
	case bold:
		return styleBold
	case italic:
		return styleItalic
	}
	return styleRegular
}

// fontFamily is the family name documents register the fonts under.
const fontFamily = "folio"

// Engine holds what is built once per process. It is safe for concurrent use.
//
// Each font style is parsed once, here, and shared read-only by every
// document (see render/internal/fpdf); documents still embed only the styles
// their template can draw.
type Engine struct {
	fonts  map[fontStyle]*fpdf.ParsedUTF8Font
	memory memoryGate // reservations of the renders running now
}

// NewEngine checks the fonts and returns an engine that renders with them.
func NewEngine(fonts Fonts) (*Engine, error) {
	if len(fonts.Regular) == 0 {
		return nil, errors.New("render: a regular font is required")
	}
	files := map[fontStyle][]byte{
		styleRegular:    fonts.Regular,
		styleBold:       orDefault(fonts.Bold, fonts.Regular),
		styleItalic:     orDefault(fonts.Italic, fonts.Regular),
		styleBoldItalic: orDefault(fonts.BoldItalic, fonts.Regular),
	}
	e := &Engine{fonts: map[fontStyle]*fpdf.ParsedUTF8Font{}}
	for _, s := range fpdfStyles {
		pf, err := parseFont(files[s.bit])
		if err != nil {
			return nil, fmt.Errorf("render: font style %q: %w", s.name, err)
		}
		e.fonts[s.bit] = pf
	}
	return e, nil
}

func orDefault(b, def []byte) []byte {
	if len(b) == 0 {
		return def
	}
	return b
}

// parseFont parses a font once for all documents, then loads it into a
// throwaway document and writes it, the way every render will, to report
// whether fpdf accepts it.
func parseFont(ttf []byte) (pf *fpdf.ParsedUTF8Font, err error) {
	// fpdf reads only TrueType outlines.
	if len(ttf) < 4 || (string(ttf[:4]) != "\x00\x01\x00\x00" && string(ttf[:4]) != "true") {
		return nil, errors.New("not a TrueType font")
	}
	if _, err := sfnt.Parse(ttf); err != nil {
		return nil, fmt.Errorf("unreadable font: %w", err)
	}
	if pf, err = fpdf.ParseUTF8Font(ttf); err != nil {
		return nil, fmt.Errorf("unreadable font: %w", err)
	}
	defer func() { // fpdf is not ours: a font it cannot handle must not stop the process
		if r := recover(); r != nil {
			pf, err = nil, fmt.Errorf("unreadable font: %v", r)
		}
	}()
	f := fpdf.New("P", "mm", "A4", "")
	f.AddUTF8FontParsed(fontFamily, "", pf)
	f.SetFont(fontFamily, "", 10)
	if f.Err() {
		return nil, fmt.Errorf("unreadable font: %w", f.Error())
	}
	if f.GetStringWidth("Aa") <= 0 {
		return nil, errors.New("unreadable font: no glyph widths")
	}
	f.AddPage()
	f.Cell(10, 10, "Aa")
	if err := f.Output(io.Discard); err != nil {
		return nil, fmt.Errorf("unreadable font: %w", err)
	}
	return pf, nil
}
