package render

import (
	"errors"
	"fmt"

	"github.com/go-pdf/fpdf"
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
// fpdf keeps a parsed UTF-8 font inside each document in unexported state that
// it mutates while subsetting, so parsed fonts cannot be shared between
// documents; the engine instead embeds only the styles a template uses.
type Engine struct {
	fonts map[fontStyle][]byte
}

// NewEngine checks the fonts and returns an engine that renders with them.
func NewEngine(fonts Fonts) (*Engine, error) {
	if len(fonts.Regular) == 0 {
		return nil, errors.New("render: a regular font is required")
	}
	e := &Engine{fonts: map[fontStyle][]byte{
		styleRegular:    fonts.Regular,
		styleBold:       orDefault(fonts.Bold, fonts.Regular),
		styleItalic:     orDefault(fonts.Italic, fonts.Regular),
		styleBoldItalic: orDefault(fonts.BoldItalic, fonts.Regular),
	}}
	for _, s := range fpdfStyles {
		if err := checkFont(e.fonts[s.bit]); err != nil {
			return nil, fmt.Errorf("render: font style %q: %w", s.name, err)
		}
	}
	return e, nil
}

func orDefault(b, def []byte) []byte {
	if len(b) == 0 {
		return def
	}
	return b
}

// checkFont loads the font into a throwaway document, the way every render
// will, and reports whether fpdf accepted it.
func checkFont(ttf []byte) (err error) {
	// fpdf reads only TrueType outlines and prints (rather than returns) its
	// parse errors, so check the format before handing the bytes over.
	if len(ttf) < 4 || (string(ttf[:4]) != "\x00\x01\x00\x00" && string(ttf[:4]) != "true") {
		return errors.New("not a TrueType font")
	}
	if _, err := sfnt.Parse(ttf); err != nil {
		return fmt.Errorf("unreadable font: %w", err)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("unreadable font: %v", r)
		}
	}()
	f := fpdf.New("P", "mm", "A4", "")
	f.AddUTF8FontFromBytes(fontFamily, "", ttf)
	f.SetFont(fontFamily, "", 10)
	if f.Err() {
		return fmt.Errorf("unreadable font: %w", f.Error())
	}
	if f.GetStringWidth("Aa") <= 0 {
		return errors.New("unreadable font: no glyph widths")
	}
	return nil
}
