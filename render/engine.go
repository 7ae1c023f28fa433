package render

import (
	"errors"
	"fmt"
	"strings"

	"folio/render/internal/fpdf"
	"folio/render/text"
)

// Fonts are the fonts an engine draws with: named families a template
// chooses with fontFamily (the first is the default) and the fallback
// chain that draws the characters a family lacks. Regular, Bold, Italic
// and BoldItalic, when Regular is set, are one more family, "Default",
// placed first.
type Fonts struct {
	Regular, Bold, Italic, BoldItalic []byte
	Families                          []FontFamily
	Fallbacks                         []FontFamily
}

// FontFamily is one font family's TrueType files; a missing style is
// drawn with the nearest one present.
type FontFamily struct {
	Name string
	// Aliases are other names fontFamily may use for the family (a team's
	// font by its asset's name or id); error messages list only Name.
	Aliases []string
	// Typeface is the family name in the font files when Name is another
	// (a font chosen by its asset's name); spreadsheet cells name it.
	Typeface                          string
	Regular, Bold, Italic, BoldItalic []byte
	// Lazy are files read and parsed on first use, by style (regular,
	// bold, italic, bold italic), for the styles whose bytes are not
	// given: the embedded fonts, most of which a server never draws with.
	Lazy [4]*FontFile
}

// FontFile is a font read and parsed when it is first drawn or measured.
// Coverage lists the characters it has, as sorted inclusive ranges (lo,
// hi, lo, hi, ...; what text.Face.Coverage returns), so that fallback and
// missing-character checks need not read it; Load returns its TrueType
// bytes. A file that fails to load makes the renders that need it fail
// with an internal error: give only files checked beforehand (package
// assets tests every embedded font). With Coverage nil (an operator's or
// a team's font, not read yet) the file is loaded when first asked about,
// and one that fails to load draws nothing: its characters come from the
// fallback chain.
type FontFile struct {
	Name     string
	Coverage []uint32
	Load     func() ([]byte, error)
}

// fontStyle is a set of font styles.
type fontStyle uint8

const (
	styleRegular fontStyle = 1 << iota
	styleBold
	styleItalic
	styleBoldItalic
)

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

// Engine holds what is built once per process. It is safe for concurrent use.
//
// Each font is parsed once, here or (FontFamily.Lazy) when first drawn,
// and shared read-only by every document; documents embed subsets holding
// only the glyphs they draw.
type Engine struct {
	fonts  *text.Registry
	memory memoryGate // reservations of the renders running now
	parent *Engine    // an engine made by WithFonts shares its parent's memory
}

// gate is the memory pool the engine's renders reserve from.
func (e *Engine) gate() *memoryGate {
	if e.parent != nil {
		return e.parent.gate()
	}
	return &e.memory
}

// TrimCaches drops what renders keep for the next ones and can make
// again: the page compressors (about 600 KB each, up to 8). For an idle
// server (app.IdleTrim's hook); renders running meanwhile are not
// disturbed.
func TrimCaches() { fpdf.DropCompressors(); text.UnloadFaces() }

// NewEngine checks the fonts and returns an engine that renders with them.
func NewEngine(fonts Fonts) (*Engine, error) {
	fams := fonts.Families
	if len(fonts.Regular) > 0 {
		fams = append([]FontFamily{{Name: "Default", Regular: fonts.Regular, Bold: fonts.Bold, Italic: fonts.Italic, BoldItalic: fonts.BoldItalic}}, fams...)
	}
	if len(fams) == 0 {
		return nil, errors.New("render: a regular font is required")
	}
	reg := text.NewRegistry()
	var first *text.Family
	for _, ff := range fams {
		fam, err := parseFamily(ff)
		if err != nil {
			return nil, err
		}
		if err := reg.AddFamily(fam.Name, fam.Faces[:]...); err != nil {
			return nil, fmt.Errorf("render: %w", err)
		}
		if first == nil {
			first, _ = reg.Family(fam.Name)
		}
	}
	// The default family comes first in the fallback chain, so a family
	// of the operator's or a team's that lacks, say, "ü" or "€" still
	// draws it in the default family's style.
	reg.AddFallback(first)
	for _, ff := range fonts.Fallbacks {
		fam, err := parseFamily(ff)
		if err != nil {
			return nil, err
		}
		reg.AddFallback(fam)
	}
	return &Engine{fonts: reg}, nil
}

// WithFonts returns an engine that can also draw with the given families
// (a team's uploaded fonts), replacing built-in families of the same
// name. It shares e's fonts and memory pool; making one is cheap once the
// fonts are parsed (each call parses the files given).
func (e *Engine) WithFonts(families ...FontFamily) (*Engine, error) {
	extra := make([]*text.Family, 0, len(families))
	shared := map[*FontFile]*text.Face{}
	for _, ff := range families {
		fam, err := parseFamilyShared(ff, shared)
		if err != nil {
			return nil, err
		}
		extra = append(extra, fam)
	}
	return &Engine{fonts: e.fonts.With(extra...), parent: e}, nil
}

// FontFamilies lists the names of the families a template may choose.
func (e *Engine) FontFamilies() []string { return e.fonts.Names() }

// CheckFont reports whether data is a font the engine can draw with and
// embed; the error says why not (for refusing an upload).
func CheckFont(name string, data []byte) error { return text.CheckFont(name, data) }

// CollectionFont returns font i of a font collection (.ttc, .otc) as a
// font file of its own; a file that is not a collection is returned as it
// is for i 0.
func CollectionFont(data []byte, i int) ([]byte, error) { return text.CollectionFont(data, i) }

// parseFamily parses the files of one family.
func parseFamily(ff FontFamily) (*text.Family, error) { return parseFamilyShared(ff, nil) }

// parseFamilyShared parses the files of one family; lazy files met before
// (a team's font in its family and under its asset's name) share one face
// through shared, so they are loaded once.
func parseFamilyShared(ff FontFamily, shared map[*FontFile]*text.Face) (*text.Family, error) {
	fam := &text.Family{Name: ff.Name, Aliases: ff.Aliases, FaceName: ff.Typeface}
	styles := []string{"Regular", "Bold", "Italic", "BoldItalic"}
	for i, b := range [][]byte{ff.Regular, ff.Bold, ff.Italic, ff.BoldItalic} {
		name := strings.ReplaceAll(ff.Name, " ", "") + "-" + styles[i]
		if len(b) == 0 {
			if lf := ff.Lazy[i]; lf != nil && lf.Load != nil {
				if f := shared[lf]; f != nil {
					fam.Faces[i] = f
					continue
				}
				if lf.Name != "" && lf.Coverage == nil {
					name = lf.Name // an operator's or team's file: its own PostScript name
				}
				fam.Faces[i] = text.NewLazyFace(name, lf.Coverage, lf.Load)
				if shared != nil {
					shared[lf] = fam.Faces[i]
				}
			}
			continue
		}
		face, err := text.ParseFace(name, b)
		if err == nil {
			err = face.Check()
		}
		if err != nil {
			return nil, fmt.Errorf("render: font family %q, style %s: %w", ff.Name, styles[i], err)
		}
		fam.Faces[i] = face
	}
	if fam.Face(text.Regular) == nil {
		return nil, fmt.Errorf("render: font family %q: a regular font is required", ff.Name)
	}
	return fam, nil
}
