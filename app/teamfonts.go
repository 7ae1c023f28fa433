package app

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"folio/render"
)

// A team's font assets are families its templates may choose with
// fontFamily: by the family name in the font's name table ("Brand Sans",
// whose regular, bold, italic and bold italic files are grouped by their
// weight and slant) and by the asset's name or id ("brand-bold.otf",
// "asset:brand-bold.otf": that one file, for every style).
// The families are the template's team's, whoever generates, as for
// images; no other team sees them. They do not join the fallback chain:
// a character the chosen family lacks comes from the built-in chain, so a
// team's upload never changes how another of its templates draws
// (docs/decisions.md, "Team and operator fonts").

// maxFontEngines bounds the teams whose font engines are kept (each holds
// the team's fonts once they are drawn with).
const maxFontEngines = 64

type fontEngine struct {
	key string // the team's font assets: ids, contents and names
	eng *render.Engine
}

// fontList is a team's font assets as the metadata cache keeps them.
type fontList struct{ list []*Asset }

// teamFontList returns the team's font assets, from the metadata cache
// when there is one (migration 0020 raises the generation on every font
// asset written or deleted, so a change is seen by the next request).
func (s *AssetService) teamFontList(ctx context.Context, teamID string) ([]*Asset, error) {
	load := func() (*fontList, error) {
		l, err := s.TeamFonts(ctx, teamID)
		if err != nil {
			return nil, err
		}
		return &fontList{l}, nil
	}
	if s.Meta == nil {
		l, err := load()
		if err != nil {
			return nil, err
		}
		return l.list, nil
	}
	l, err := lookup(ctx, s.Meta, "fonts\x00"+teamID, load)
	if err != nil {
		return nil, err
	}
	return l.list, nil
}

// engineFor returns the engine drawing teamID's documents (the server's
// fonts plus the team's font assets) and a key naming that set of fonts,
// "" when the team has none: compiled templates are kept per key, so a
// replaced or deleted font takes effect on the next request.
func (s *TemplateService) engineFor(ctx context.Context, teamID string) (*render.Engine, string, error) {
	if s.Assets == nil || teamID == "" {
		return s.Engine, "", nil
	}
	fonts, err := s.Assets.teamFontList(ctx, teamID)
	if err != nil {
		return nil, "", err
	}
	if len(fonts) == 0 {
		return s.Engine, "", nil
	}
	var kb strings.Builder
	for _, a := range fonts {
		kb.WriteString(a.ID + "/" + a.SHA256 + "/" + a.Name + "\x00")
	}
	key := kb.String()
	s.mu.Lock()
	e, ok := s.engines[teamID]
	s.mu.Unlock()
	if ok && e.key == key {
		return e.eng, key, nil
	}
	eng, err := s.Engine.WithFonts(s.Assets.teamFamilies(fonts)...)
	if err != nil {
		return nil, "", fmt.Errorf("team fonts: %w", err)
	}
	s.mu.Lock()
	if s.engines == nil || len(s.engines) >= maxFontEngines {
		s.engines = map[string]fontEngine{}
	}
	s.engines[teamID] = fontEngine{key: key, eng: eng}
	s.mu.Unlock()
	return eng, key, nil
}

// compile compiles def with the fonts of teamID.
func (s *TemplateService) compile(ctx context.Context, teamID string, def render.Definition) (*render.Template, error) {
	eng, _, err := s.engineFor(ctx, teamID)
	if err != nil {
		return nil, err
	}
	return eng.Compile(def)
}

// fontSlot is the style a font file draws: 0 regular, 1 bold, 2 italic,
// 3 bold italic (render.FontFamily's order).
func fontSlot(fi *FontInfo) int {
	slot := 0
	if fi.Weight >= 600 {
		slot = 1
	}
	if fi.Style == "italic" {
		slot += 2
	}
	return slot
}

// teamFamilies groups font assets into families, read on first use. Of
// two files with one family and style, the one whose asset name sorts
// first is the family's; the other is still chosen by its asset name.
func (s *AssetService) teamFamilies(fonts []*Asset) []render.FontFamily {
	fonts = append([]*Asset(nil), fonts...)
	sort.Slice(fonts, func(i, j int) bool { return fonts[i].Name < fonts[j].Name })
	type group struct {
		name  string
		files [4]*render.FontFile
	}
	var groups []*group
	byFamily := map[string]*group{}
	files := make([]*render.FontFile, len(fonts))
	for i, a := range fonts {
		if a.Font == nil {
			continue
		}
		file := a.File
		files[i] = &render.FontFile{Name: psFontName(a.Font.Family, fontSlot(a.Font)), Load: func() ([]byte, error) { return s.readFile(file) }}
		k := strings.ToLower(strings.TrimSpace(a.Font.Family))
		g := byFamily[k]
		if g == nil {
			g = &group{name: strings.TrimSpace(a.Font.Family)}
			byFamily[k] = g
			groups = append(groups, g)
		}
		if g.files[fontSlot(a.Font)] == nil {
			g.files[fontSlot(a.Font)] = files[i]
		}
	}
	var out []render.FontFamily
	for i, a := range fonts { // by asset name first: a family name wins over an asset name
		if files[i] == nil {
			continue
		}
		// Chosen by its asset's name, the file draws every style.
		out = append(out, render.FontFamily{Name: a.Name, Aliases: []string{a.ID}, Typeface: strings.TrimSpace(a.Font.Family), Lazy: [4]*render.FontFile{files[i]}})
	}
	for _, g := range groups {
		ff := render.FontFamily{Name: g.name, Lazy: g.files}
		if ff.Lazy[0] == nil {
			for _, f := range g.files {
				if f != nil {
					ff.Lazy[0] = f
					break
				}
			}
		}
		out = append(out, ff)
	}
	return out
}

// readFile reads a stored asset file.
func (s *AssetService) readFile(name string) ([]byte, error) {
	f, _, err := s.Files.OpenFile(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, MaxAssetBytes+1))
}

// psFontName makes a PostScript-style font name of a family and style.
func psFontName(family string, slot int) string {
	var b strings.Builder
	for _, r := range family {
		if r > ' ' && r < 127 && !strings.ContainsRune("()<>[]{}/%#", r) {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		b.WriteString("Font")
	}
	return b.String() + "-" + [4]string{"Regular", "Bold", "Italic", "BoldItalic"}[slot]
}
