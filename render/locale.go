package render

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"folio/render/expr/locale"
)

// formatting is what a template formats with: its effective locale (the
// request's, else the schema's "locale"; zero when neither is given, which
// keeps Folio's original en-US formats) and its translations. Compile
// puts a pointer to it into every call of a locale-aware helper, so the
// helpers need no environment.
type formatting struct {
	loc locale.Locale
	// chain is the translation tables to look a key up in, in order: the
	// effective locale's (de-CH, then de), then the template's default
	// language's.
	chain []translationTable
	// tables are all translations by canonical tag, for the warnings.
	tables map[string]map[string]string
}

type translationTable struct {
	tag  string
	keys map[string]string
}

// defaultFormatting is used by expressions compiled outside a template
// (tests, fuzzing): Folio's original formats and no translations.
var defaultFormatting = &formatting{}

// cldr is the locale helpers format with: l itself, or en-US where the
// template has none and a helper needs CLDR data (date styles).
func (f *formatting) cldr() locale.Locale {
	if f != nil && !f.loc.IsZero() {
		return f.loc
	}
	return enUS
}

var enUS = locale.MustParse("en-US")

// localeHelpers take the template's formatting as a first argument that
// Compile inserts; template authors never write it.
var localeHelpers = map[string]bool{"currency": true, "formatNumber": true, "formatDate": true, "formatPercent": true, "t": true}

// parseLocale reads the schema's "locale" and "translations" and the
// request's override, and sets what expressions compiled after it format
// with.
func (c *compiler) parseLocale(o object, override string) {
	f := &formatting{}
	var schemaLoc locale.Locale
	if s, ok := c.str(o, "schema", "locale"); ok && strings.TrimSpace(s) != "" {
		l, err := locale.Parse(s)
		if err != nil {
			c.add("schema.locale", "%v", err)
		}
		schemaLoc = l
	}
	f.loc = schemaLoc
	if strings.TrimSpace(override) != "" {
		l, err := locale.Parse(override)
		if err != nil {
			c.add("locale", "%v", err)
		} else {
			f.loc = l
		}
	}
	if o.present("translations") {
		f.tables = c.parseTranslations(o.raw("translations"))
	}
	// The lookup order: the effective locale, then the template's own
	// language (its schema locale, en-US when it has none).
	def := schemaLoc
	if def.IsZero() {
		def = enUS
	}
	seen := map[string]bool{}
	for _, l := range []locale.Locale{f.loc, def} {
		for _, tag := range l.Fallbacks() {
			if keys, ok := f.tables[tag]; ok && !seen[tag] {
				seen[tag] = true
				f.chain = append(f.chain, translationTable{tag, keys})
			}
		}
	}
	c.fmt = f
	c.exprs.fmt = f
}

// parseTranslations reads {"de": {"key": "text"}, "en-GB": {...}}; tags
// are canonicalised ("de_ch" is "de-CH").
func (c *compiler) parseTranslations(raw json.RawMessage) map[string]map[string]string {
	const path = "schema.translations"
	o, ok := c.object(path, raw)
	if !ok {
		return nil
	}
	out := map[string]map[string]string{}
	tags := make([]string, 0, len(o.fields))
	for k := range o.fields {
		tags = append(tags, k)
	}
	sort.Strings(tags)
	for _, k := range tags {
		p := path + "." + clip(k, 64)
		tag, err := locale.Canonical(k)
		if err != nil {
			c.add(p, "is not a BCP 47 language tag (such as de, de-CH or pt-BR)")
			o.mark(k)
			continue
		}
		if _, dup := out[tag]; dup {
			c.add(p, "is the same language as another key (%s)", tag)
		}
		var keys map[string]any
		if err := json.Unmarshal(o.raw(k), &keys); err != nil || keys == nil {
			c.add(p, "must be an object of texts by key, e.g. {\"greeting\": \"Hallo\"}")
			continue
		}
		table := make(map[string]string, len(keys))
		for key, v := range keys {
			s, ok := v.(string)
			if !ok {
				c.add(p+"."+clip(key, 64), "must be a string")
				continue
			}
			table[key] = s
		}
		out[tag] = table
	}
	return out
}

// translate returns the text for key in the first table that has it, and
// the key itself when none does.
func (f *formatting) translate(key string) (string, bool) {
	for _, t := range f.chain {
		if s, ok := t.keys[key]; ok {
			return s, true
		}
	}
	return key, false
}

// translationWarnings returns a warning for every t("key") whose key the
// effective locale cannot find (it shows the key itself, or falls back to
// the template's default language), and for every language table that
// lacks a key another has.
func (c *compiler) translationWarnings() []Issue {
	f := c.fmt
	if f == nil || len(c.exprs.tkeys) == 0 {
		return nil
	}
	var out []Issue
	seen := map[string]bool{}
	tags := make([]string, 0, len(f.tables))
	for tag := range f.tables {
		tags = append(tags, tag)
	}
	sort.Strings(tags)
	for _, use := range c.exprs.tkeys {
		if seen[use.path+"\x00"+use.key] {
			continue
		}
		seen[use.path+"\x00"+use.key] = true
		if _, found := f.translate(use.key); !found {
			msg := fmt.Sprintf("translation %q is missing: the document shows the key itself", use.key)
			if len(f.tables) == 0 {
				msg += `; add "translations" to the schema, e.g. {"de": {"` + use.key + `": "..."}}`
			} else {
				msg += fmt.Sprintf("; add it to %s", strings.Join(quoteAll(tags), ", "))
			}
			out = append(out, Issue{Path: use.path, Message: msg})
			continue
		}
		var lacking []string
		for _, tag := range tags {
			if _, ok := f.tables[tag][use.key]; !ok {
				lacking = append(lacking, tag)
			}
		}
		if len(lacking) > 0 {
			out = append(out, Issue{Path: use.path, Message: fmt.Sprintf("translation %q is missing in %s: documents in those languages show the template's default language's text, or the key itself",
				use.key, strings.Join(quoteAll(lacking), ", "))})
		}
		if len(out) >= maxIssues {
			break
		}
	}
	return out
}

func quoteAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// translationUse is a t("key") call with a literal key and where it is.
type translationUse struct{ path, key string }

// locale returns the template's locale; zero before the schema's is read
// or when it has none.
func (c *compiler) locale() locale.Locale {
	if c.fmt == nil {
		return locale.Locale{}
	}
	return c.fmt.loc
}
