// Package assets holds the files Folio ships inside its binary: the fonts
// the document engine draws and embeds (subsets of) in generated PDFs.
// The fonts and their licences are in fonts/; docs/decisions.md says
// which fonts, why, and what they cost in binary size.
//
// The fonts are embedded compressed (zstd, .ttf.zst) with a table of the
// characters each one has (fonts/coverage.bin), both written by
// internal/fontpack: a font is decompressed when it is first drawn, so a
// server that only prints Latin invoices never holds the CJK, Arabic or
// symbol fonts in memory, and the binary carries 6.5 MB of fonts instead
// of 14.8 MB.
package assets

//go:generate go run ./internal/fontpack

import (
	"embed"
	"encoding/binary"
	"fmt"
	"io/fs"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"
)

//go:embed fonts/noto-sans/*.ttf.zst fonts/noto-serif/*.ttf.zst fonts/noto-sans-mono/*.ttf.zst fonts/fallback/*.ttf.zst fonts/coverage.bin fonts/LICENSE-*.txt
var fontFS embed.FS

// FontFile is one embedded TrueType font, decompressed on first use.
type FontFile struct {
	Name     string   // file name, e.g. "NotoSans-Regular.ttf"
	Coverage []uint32 // the characters it has: sorted inclusive ranges lo, hi, lo, hi, ...
	path     string
	once     sync.Once
	data     []byte
	err      error
}

// Decompressions counts the font files decompressed so far (for tests).
var Decompressions atomic.Int64

// Bytes returns the font file, decompressing it on the first call; the
// bytes are kept (a parsed font refers to them) and shared: callers must
// not modify them.
func (f *FontFile) Bytes() ([]byte, error) {
	f.once.Do(func() {
		z, err := fontFS.ReadFile(f.path)
		if err != nil {
			f.err = err
			return
		}
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
		if err != nil {
			f.err = err
			return
		}
		defer d.Close()
		f.data, f.err = d.DecodeAll(z, nil)
		if f.err != nil {
			f.err = fmt.Errorf("assets: font %s: %w", f.Name, f.err)
		}
		Decompressions.Add(1)
	})
	return f.data, f.err
}

// FontFamily holds the files of one font family in up to four styles (a
// missing style, nil, is drawn with the nearest one present).
type FontFamily struct {
	Name                              string
	Regular, Bold, Italic, BoldItalic *FontFile
}

// FontSet is the families a document can choose with fontFamily (the
// first is the default) and the fallback chain that draws the characters
// a family lacks, in the order they are tried.
type FontSet struct {
	Families  []FontFamily
	Fallbacks []FontFamily
}

// coverage reads fonts/coverage.bin (see internal/fontpack).
func coverage() map[string][]uint32 {
	b, err := fontFS.ReadFile("fonts/coverage.bin")
	if err != nil {
		panic("assets: " + err.Error())
	}
	out := map[string][]uint32{}
	next := func() uint64 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			panic("assets: fonts/coverage.bin is malformed; run go generate ./assets")
		}
		b = b[n:]
		return v
	}
	for len(b) > 0 {
		n := next()
		if n > uint64(len(b)) {
			panic("assets: fonts/coverage.bin is malformed; run go generate ./assets")
		}
		name := string(b[:n])
		b = b[n:]
		ranges := make([]uint32, 2*next())
		prev := uint32(0)
		for i := 0; i < len(ranges); i += 2 {
			ranges[i] = prev + uint32(next())
			ranges[i+1] = ranges[i] + uint32(next())
			prev = ranges[i+1]
		}
		out[name] = ranges
	}
	return out
}

var fontSet = sync.OnceValue(func() FontSet {
	cov := coverage()
	file := func(name string) *FontFile {
		path := name + ".zst"
		if _, err := fontFS.Open("fonts/" + path); err != nil {
			panic("assets: missing embedded font " + name) // a build error, caught by tests
		}
		c, ok := cov[path]
		if !ok {
			panic("assets: no coverage for " + name + "; run go generate ./assets")
		}
		base := name
		for i := len(name) - 1; i >= 0; i-- {
			if name[i] == '/' {
				base = name[i+1:]
				break
			}
		}
		return &FontFile{Name: base, Coverage: c, path: "fonts/" + path}
	}
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
})

// Fonts returns the embedded font set: Noto Sans (default), Noto Serif and
// Noto Sans Mono, with fallbacks for Arabic, Hebrew, Devanagari, Thai,
// CJK (WenQuanYi Micro Hei, from Droid Sans Fallback, with Hangul), symbols and monochrome emoji (Symbola).
// It is built once; the files are shared (each is decompressed once, on
// first use) and callers must not modify them.
func Fonts() FontSet { return fontSet() }

// FontFS is the embedded fonts/ directory as stored: compressed fonts,
// coverage.bin and licences.
func FontFS() fs.FS {
	sub, _ := fs.Sub(fontFS, "fonts")
	return sub
}

// FontLicences returns the licence texts of the embedded fonts by file name.
func FontLicences() map[string][]byte {
	out := map[string][]byte{}
	entries, _ := fontFS.ReadDir("fonts")
	for _, e := range entries {
		if !e.IsDir() && len(e.Name()) > 8 && e.Name()[:8] == "LICENSE-" {
			b, _ := fontFS.ReadFile("fonts/" + e.Name())
			out[e.Name()] = b
		}
	}
	return out
}
