package render

import (
	"fmt"
	"sort"
	"strings"
)

// Never silent: a character no font of the family or of the fallback
// chain can draw would come out as an empty box. Compile reports such
// characters in the template's own text (a warning, or an error with
// "missingGlyphs": "error"); MissingGlyphs reports them in a request's
// values, and Values refuses them when the schema asks for errors.

// Values of the schema's "missingGlyphs".
const (
	missingWarn  = "warn"
	missingError = "error"
)

// maxMissingShown bounds the characters one message names.
const maxMissingShown = 8

// describeMissing names characters like "U+4E2D (中)".
func describeMissing(rs []rune) string {
	parts := make([]string, 0, min(len(rs), maxMissingShown))
	for i, r := range rs {
		if i == maxMissingShown {
			parts = append(parts, fmt.Sprintf("and %d more", len(rs)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("U+%04X (%c)", r, r))
	}
	return strings.Join(parts, ", ")
}

// missingMessage says which characters no font draws and how to fix it.
func missingMessage(rs []rune) string {
	return fmt.Sprintf("no font can draw %s: they would print as empty boxes; add a font that has them (upload a TTF or OTF font asset, or folio serve --font-dir) and choose it with fontFamily", describeMissing(rs))
}

// checkGlyphs looks for characters no font draws in literal text of the
// template, at path.
func (c *compiler) checkGlyphs(path, s string) {
	if c.fonts == nil || len(c.missing) >= maxIssues {
		return
	}
	if rs := c.fonts.Missing(c.family, s); len(rs) > 0 {
		c.missing = append(c.missing, Issue{Path: path, Message: missingMessage(rs)})
	}
}

// MissingGlyphs lists the values (by variable, with the path inside it)
// holding characters no font of the template can draw.
func (t *Template) MissingGlyphs(values map[string]any) []VariableIssue {
	if t.engine == nil || t.engine.fonts == nil {
		return nil
	}
	names := make([]string, 0, len(values))
	for k := range values {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []VariableIssue
	budget := 10000 // values visited: a huge array is checked in part
	for _, k := range names {
		t.missingIn(k, values[k], &budget, &out)
	}
	return out
}

func (t *Template) missingIn(path string, v any, budget *int, out *[]VariableIssue) {
	if *budget <= 0 || len(*out) >= maxIssues {
		return
	}
	*budget--
	switch v := v.(type) {
	case string:
		if rs := t.engine.fonts.Missing(t.doc.fontFamily, v); len(rs) > 0 {
			*out = append(*out, VariableIssue{Variable: path, Message: missingMessage(rs)})
		}
	case []any:
		for i, e := range v {
			t.missingIn(fmt.Sprintf("%s[%d]", path, i), e, budget, out)
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			t.missingIn(path+"."+k, v[k], budget, out)
		}
	}
}
