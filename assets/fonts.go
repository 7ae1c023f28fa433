// Package assets holds the files Folio ships inside its binary: the fonts
// the document engine draws and embeds (subsets of) in generated PDFs.
// The fonts and their licences are in fonts/; docs/decisions.md says
// which fonts, why, and what they cost in binary size.
package assets

import (
	"embed"
)

//go:embed fonts/noto-sans/*.ttf fonts/noto-serif/*.ttf fonts/noto-sans-mono/*.ttf fonts/fallback/*.ttf fonts/LICENSE-*.txt
var fontFS embed.FS

// FontFamily holds the TrueType bytes of one font family in up to four
// styles (a missing style is drawn with the nearest one present).
type FontFamily struct {
	Name                              string
	Regular, Bold, Italic, BoldItalic []byte
}

// FontSet is the families a document can choose with fontFamily (the
// first is the default) and the fallback chain that draws the characters
// a family lacks, in the order they are tried.
type FontSet struct {
	Families  []FontFamily
	Fallbacks []FontFamily
}

func file(name string) []byte {
	b, err := fontFS.ReadFile("fonts/" + name)
	if err != nil {
		panic("assets: missing embedded font " + name) // a build error, caught by tests
	}
	return b
}

// Fonts returns the embedded font set: Noto Sans (default), Noto Serif and
// Noto Sans Mono, with fallbacks for Arabic, Hebrew, Devanagari, Thai,
// CJK (WenQuanYi Micro Hei, from Droid Sans Fallback, with Hangul), symbols and monochrome emoji (Symbola).
// The slices are shared; callers must not modify them.
func Fonts() FontSet {
	return FontSet{
		Families: []FontFamily{
			{Name: "Noto Sans", Regular: file("noto-sans/NotoSans-Regular.ttf"), Bold: file("noto-sans/NotoSans-Bold.ttf"),
				Italic: file("noto-sans/NotoSans-Italic.ttf"), BoldItalic: file("noto-sans/NotoSans-BoldItalic.ttf")},
			{Name: "Noto Serif", Regular: file("noto-serif/NotoSerif-Regular.ttf"), Bold: file("noto-serif/NotoSerif-Bold.ttf"),
				Italic: file("noto-serif/NotoSerif-Italic.ttf"), BoldItalic: file("noto-serif/NotoSerif-BoldItalic.ttf")},
			{Name: "Noto Sans Mono", Regular: file("noto-sans-mono/NotoSansMono-Regular.ttf"), Bold: file("noto-sans-mono/NotoSansMono-Bold.ttf")},
		},
		Fallbacks: []FontFamily{
			{Name: "Noto Sans Arabic", Regular: file("fallback/NotoSansArabic-Regular.ttf"), Bold: file("fallback/NotoSansArabic-Bold.ttf")},
			{Name: "Noto Sans Hebrew", Regular: file("fallback/NotoSansHebrew-Regular.ttf"), Bold: file("fallback/NotoSansHebrew-Bold.ttf")},
			{Name: "Noto Sans Devanagari", Regular: file("fallback/NotoSansDevanagari-Regular.ttf"), Bold: file("fallback/NotoSansDevanagari-Bold.ttf")},
			{Name: "Noto Sans Thai", Regular: file("fallback/NotoSansThai-Regular.ttf"), Bold: file("fallback/NotoSansThai-Bold.ttf")},
			{Name: "WenQuanYi Micro Hei", Regular: file("fallback/WenQuanYiMicroHei.ttf")},
			{Name: "Noto Sans Symbols", Regular: file("fallback/NotoSansSymbols-Regular.ttf")},
			{Name: "Noto Sans Symbols 2", Regular: file("fallback/NotoSansSymbols2-Regular.ttf")},
			{Name: "Symbola", Regular: file("fallback/Symbola_hint.ttf")},
		},
	}
}

// FontLicences returns the licence texts of the embedded fonts by file name.
func FontLicences() map[string][]byte {
	out := map[string][]byte{}
	entries, _ := fontFS.ReadDir("fonts")
	for _, e := range entries {
		if !e.IsDir() {
			out[e.Name()] = file(e.Name())
		}
	}
	return out
}
