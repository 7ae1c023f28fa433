package text

import (
	"fmt"
	"sort"
	"strings"
)

// Style selects one of a family's four faces.
type Style uint8

// The four styles of a family.
const (
	Regular Style = iota
	Bold
	Italic
	BoldItalic
)

// StyleOf returns the style with the given weight and slant.
func StyleOf(bold, italic bool) Style {
	switch {
	case bold && italic:
		return BoldItalic
	case bold:
		return Bold
	case italic:
		return Italic
	}
	return Regular
}

// Family is a font family: up to four faces, by Style. A missing style
// is drawn with the nearest one present (bold italic -> bold -> regular).
type Family struct {
	Name  string
	Faces [4]*Face
	// Aliases are other names that select the family (a team's font by
	// its asset's name or id); Names does not list them.
	Aliases []string
	// FaceName is the family name in the font files, when Name is another
	// (a team's font chosen by its asset's name): what a spreadsheet
	// cell names.
	FaceName string
}

// Typeface is the family's name as the font files give it.
func (f *Family) Typeface() string {
	if f.FaceName != "" {
		return f.FaceName
	}
	return f.Name
}

// Face returns the face drawing style s.
func (f *Family) Face(s Style) *Face {
	if g := f.Faces[s]; g != nil {
		return g
	}
	switch s {
	case BoldItalic:
		if g := f.Faces[Bold]; g != nil {
			return g
		}
		if g := f.Faces[Italic]; g != nil {
			return g
		}
	}
	if g := f.Faces[Regular]; g != nil {
		return g
	}
	for _, g := range f.Faces {
		if g != nil {
			return g
		}
	}
	return nil
}

// Registry holds the families a render can choose from and the fallback
// chain that draws what a family lacks. Build it once (NewRegistry,
// AddFamily, AddFallback), then share it read-only; a render that adds
// fonts of its own (a team's uploaded fonts) uses With, which copies the
// small maps and shares the faces.
type Registry struct {
	families map[string]*Family // by lower-case name or alias
	names    []string           // as registered, for messages
	fallback []*Family
	def      string
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{families: map[string]*Family{}}
}

// AddFamily registers (or replaces) a family under name; faces are given
// in Style order: regular, bold, italic, bold italic (nil or missing:
// drawn with the nearest style). The first family added is the default.
func (r *Registry) AddFamily(name string, faces ...*Face) error {
	key := strings.ToLower(strings.TrimSpace(name))
	if key == "" {
		return fmt.Errorf("text: a font family needs a name")
	}
	fam := &Family{Name: name}
	for i, f := range faces {
		if i < 4 {
			fam.Faces[i] = f
		}
	}
	if fam.Face(Regular) == nil {
		return fmt.Errorf("text: font family %q has no face", name)
	}
	if _, ok := r.families[key]; !ok {
		r.names = append(r.names, name)
	}
	r.families[key] = fam
	if r.def == "" {
		r.def = key
	}
	return nil
}

// SetDefault makes the named family the default.
func (r *Registry) SetDefault(name string) error {
	key := strings.ToLower(name)
	if r.families[key] == nil {
		return fmt.Errorf("text: unknown font family %q", name)
	}
	r.def = key
	return nil
}

// AddFallback appends a family to the fallback chain: a character the
// chosen family lacks is drawn by the first fallback that has it.
func (r *Registry) AddFallback(f *Family) { r.fallback = append(r.fallback, f) }

// With returns a registry holding r's families and fallbacks plus the
// given ones (which replace r's families of the same name).
func (r *Registry) With(extra ...*Family) *Registry {
	out := &Registry{families: make(map[string]*Family, len(r.families)+len(extra)),
		names: append([]string(nil), r.names...), fallback: r.fallback, def: r.def}
	for k, v := range r.families {
		out.families[k] = v
	}
	for _, f := range extra {
		if out.AddFamily(f.Name, f.Faces[:]...) != nil {
			continue
		}
		added := out.families[strings.ToLower(strings.TrimSpace(f.Name))]
		added.FaceName = f.FaceName
		for _, a := range f.Aliases {
			if k := strings.ToLower(strings.TrimSpace(a)); k != "" && out.families[k] == nil {
				out.families[k] = added
			}
		}
	}
	return out
}

// Family returns the family called name (case-insensitive); "" is the
// default family.
func (r *Registry) Family(name string) (*Family, bool) {
	if name == "" {
		name = r.def
	}
	f, ok := r.families[strings.ToLower(strings.TrimSpace(name))]
	return f, ok
}

// Names lists the registered family names, sorted.
func (r *Registry) Names() []string {
	out := append([]string(nil), r.names...)
	sort.Strings(out)
	return out
}

// Fallbacks returns the fallback chain.
func (r *Registry) Fallbacks() []*Family { return r.fallback }

// faceFor returns the face drawing rune c in family fam and style s: the
// family's own face, else the first fallback that has c, else nil.
func (r *Registry) faceFor(fam *Family, s Style, c rune) *Face {
	if f := fam.Face(s); f != nil && f.Covers(c) {
		return f
	}
	for _, fb := range r.fallback {
		if f := fb.Face(s); f != nil && f.Covers(c) {
			return f
		}
	}
	return nil
}

// drawable returns the face that draws what no font has (as the
// missing-glyph box): the family's own, unless it cannot be loaded (an
// operator's or a team's damaged font), then the first fallback's.
func (r *Registry) drawable(fam *Family, s Style) *Face {
	if f := fam.Face(s); f != nil && f.usable() {
		return f
	}
	for _, fb := range r.fallback {
		if f := fb.Face(s); f != nil && f.usable() {
			return f
		}
	}
	return fam.Face(s)
}

// Covers reports whether some font of family (or of the fallback chain)
// can draw c. Characters that are never drawn (controls, line breaks,
// default-ignorable characters) are covered.
func (r *Registry) Covers(family string, c rune) bool {
	if invisible(c) {
		return true
	}
	fam, ok := r.Family(family)
	if !ok {
		fam, _ = r.Family("")
	}
	if fam == nil {
		return false
	}
	return r.faceFor(fam, Regular, c) != nil
}

// Missing returns the characters of s that no font can draw, each once,
// in order of appearance.
func (r *Registry) Missing(family, s string) []rune {
	var out []rune
	for _, c := range s {
		if c < 0x250 && c >= 0x20 && c != 0x7f { // Latin: every family has it; keep the common path cheap
			continue
		}
		if !r.Covers(family, c) {
			dup := false
			for _, o := range out {
				dup = dup || o == c
			}
			if !dup {
				out = append(out, c)
			}
		}
	}
	return out
}

// invisible reports characters that need no glyph.
func invisible(c rune) bool {
	switch {
	case c < 0x20 || (c >= 0x7f && c < 0xa0):
		return true
	case c == 0x200b || c == 0x200c || c == 0x200d || c == 0x200e || c == 0x200f || c == 0x2060 || c == 0xfeff:
		return true
	case c >= 0x202a && c <= 0x202e, c >= 0x2066 && c <= 0x2069:
		return true
	case c >= 0xfe00 && c <= 0xfe0f, c >= 0xe0100 && c <= 0xe01ef: // variation selectors
		return true
	}
	return false
}
