// Package assets holds the files Folio ships inside its binary: the Unicode
// fonts the document engine embeds in generated PDFs.
package assets

import (
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/gobolditalic"
	"golang.org/x/image/font/gofont/goitalic"
	"golang.org/x/image/font/gofont/goregular"
)

// FontFiles holds the TrueType bytes of one font family in its four styles.
// Its fields match render.Fonts, so render.Fonts(assets.Fonts()) converts it.
type FontFiles struct {
	Regular, Bold, Italic, BoldItalic []byte
}

// Fonts returns the Go font family (Latin, Greek and Cyrillic coverage).
// The slices are shared; callers must not modify them.
func Fonts() FontFiles {
	return FontFiles{
		Regular:    goregular.TTF,
		Bold:       gobold.TTF,
		Italic:     goitalic.TTF,
		BoldItalic: gobolditalic.TTF,
	}
}
