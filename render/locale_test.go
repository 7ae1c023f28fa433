package render

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// readable turns CLDR's no-break spaces into plain ones, as a reader of
// the PDF's text sees them.
var readable = strings.NewReplacer("\u00a0", " ", "\u202f", " ")

// localeText renders schema (one body section's components) with vars
// and returns the PDF's text.
func localeText(t *testing.T, def Definition, vars map[string]any) string {
	t.Helper()
	return readable.Replace(ExtractText(t, MustRender(t, MustCompile(t, def), vars, Options{})))
}

func localeSchema(locale string, components ...string) Definition {
	loc := ""
	if locale != "" {
		loc = `"locale":"` + locale + `",`
	}
	return schemaDef(`{` + loc + `"sections":[{"id":"b","components":[` + strings.Join(components, ",") + `]}]}`)
}

func TestLocaleHelpers(t *testing.T) {
	text := `{"type":"text","props":{"content":"{{ formatNumber(1234567.891, 2) }}|{{ 1234.5 | currency(\"EUR\") }}|{{ currency(9, \"CHF\") }}|{{ formatPercent(0.075, 1) }}|{{ formatDate(\"2026-11-25\") }}|{{ formatDate(\"2026-11-25\", \"long\") }}|{{ formatDate(\"2026-11-25\", \"dddd D MMMM YYYY\") }}|{{ formatNumber(1234.5, 1, \"de-CH\") }}"}}`
	for _, tc := range []struct{ locale, want string }{
		// Without a locale: Folio's original formats; styles read en-US.
		{"", "1,234,567.89|€1,234.50|9.00 CHF|7.5%|2026-11-25|November 25, 2026|Wednesday 25 November 2026|1'234.5"},
		{"en-US", "1,234,567.89|€1,234.50|CHF 9.00|7.5%|Nov 25, 2026|November 25, 2026|Wednesday 25 November 2026|1'234.5"},
		{"de-DE", "1.234.567,89|1.234,50 €|9,00 CHF|7,5 %|25.11.2026|25. November 2026|Mittwoch 25 November 2026|1'234.5"},
		{"fr-FR", "1 234 567,89|1 234,50 €|9,00 CHF|7,5 %|25 nov. 2026|25 novembre 2026|mercredi 25 novembre 2026|1'234.5"},
		{"en-IN", "12,34,567.89|€1,234.50|CHF 9.00|7.5%|25 Nov 2026|25 November 2026|Wednesday 25 November 2026|1'234.5"},
		{"ja-JP", "1,234,567.89|€1,234.50|CHF 9.00|7.5%|2026/11/25|2026年11月25日|水曜日 25 11月 2026|1'234.5"},
	} {
		// The line wraps where the font's widths say (at a "|" with Noto
		// Sans in ja-JP): compare without any whitespace.
		if got := strings.Join(strings.Fields(localeText(t, localeSchema(tc.locale, text), nil)), ""); got != strings.Join(strings.Fields(tc.want), "") {
			t.Errorf("%q:\n got %s\nwant %s", tc.locale, got, tc.want)
		}
	}
}

func TestLocaleCellFormats(t *testing.T) {
	table := `{"type":"table","props":{"rows":"{{ rows }}","columns":[
		{"header":"N","value":"{{ row.n }}","format":"number:2"},
		{"header":"Money","value":"{{ row.n }}","format":"currency:EUR","total":"sum"},
		{"header":"Yen","value":"{{ row.n }}","format":"currency:JPY"},
		{"header":"Share","value":"{{ row.p }}","format":"percent:1"},
		{"header":"Due","value":"{{ row.d }}","format":"date"},
		{"header":"Long","value":"{{ row.d }}","format":"date:long"}]}}`
	kv := `{"type":"keyValue","props":{"items":[{"label":"Total","value":"{{ 2469.12 }}","format":"currency:EUR"}]}}`
	rows := map[string]any{"rows": []any{map[string]any{"n": 1234.56, "p": 0.19, "d": "2026-11-25"}, map[string]any{"n": 1234.56, "p": 0.5, "d": "2026-01-02"}}}
	text := localeText(t, localeSchema("de-DE", table, kv), rows)
	for _, want := range []string{"1.234,56", "1.234,56 €", "1.235 ¥", "19,0 %", "25.11.2026", "25. November", "2. Januar 2026", "2.469,12 €"} {
		if !strings.Contains(text, want) {
			t.Errorf("de-DE table lacks %q:\n%s", want, text)
		}
	}

	// The workbook keeps values typed and shows them the same way.
	tpl := MustCompile(t, localeSchema("de-DE", table))
	values, _ := tpl.Values(rows)
	var buf bytes.Buffer
	if _, err := tpl.Render(context.Background(), &buf, XLSX, values, Options{}); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sheet := f.GetSheetList()[0]
	for _, tc := range []struct{ ref, raw, format string }{
		{"A2", "1234.56", "#,##0.00"},
		{"B2", "1234.56", "#,##0.00\"\u00a0€\";-#,##0.00\"\u00a0€\""},
		{"C2", "1235", "#,##0\"\u00a0¥\";-#,##0\"\u00a0¥\""},
		{"D2", "0.19", "0.0\"\u00a0\"%"},
		{"E2", "46351", "dd.mm.yyyy"},
		{"F2", "46351", "[$-407]d. mmmm yyyy"},
	} {
		raw, _ := f.GetCellValue(sheet, tc.ref, excelize.Options{RawCellValue: true})
		typ, _ := f.GetCellType(sheet, tc.ref)
		id, _ := f.GetCellStyle(sheet, tc.ref)
		st, _ := f.GetStyle(id)
		format := ""
		if st != nil && st.CustomNumFmt != nil {
			format = *st.CustomNumFmt
		}
		if raw != tc.raw || (typ != excelize.CellTypeNumber && typ != excelize.CellTypeUnset) || format != tc.format {
			t.Errorf("%s = %s (%v) [%s], want %s [%s]", tc.ref, raw, typ, format, tc.raw, tc.format)
		}
	}
}

func TestLocaleOverride(t *testing.T) {
	def := localeSchema("de-DE", `{"type":"text","props":{"content":"{{ 1234.5 | currency(\"EUR\") }}"}}`)
	def.Locale = "en-IE"
	if got := strings.TrimSpace(localeText(t, def, nil)); got != "€1,234.50" {
		t.Errorf("override en-IE: %q", got)
	}
	for _, tc := range []struct {
		def  Definition
		path string
	}{
		{localeSchema("de-XX-", `{"type":"text","props":{"content":"x"}}`), "schema.locale"},
		{localeSchema("klingon", `{"type":"text","props":{"content":"x"}}`), "schema.locale"},
		{Definition{Schema: localeSchema("de-DE").Schema, Locale: "zz"}, "locale"},
	} {
		_, err := MustEngine(t).Compile(tc.def)
		var se *SchemaError
		if !errors.As(err, &se) || len(se.Issues) == 0 || se.Issues[0].Path != tc.path {
			t.Errorf("%s: %v, want a schema error at %s", tc.def.Schema, err, tc.path)
		}
	}
}

func TestTranslations(t *testing.T) {
	schema := func(locale string) Definition {
		loc := ""
		if locale != "" {
			loc = `"locale":"` + locale + `",`
		}
		return schemaDef(`{` + loc + `"translations":{
			"en":{"hello":"Hello","bye":"Goodbye","only":"Only English"},
			"de":{"hello":"Hallo","bye":"Tschüss"},
			"de-CH":{"hello":"Grüezi"},
			"fr":{"hello":"Bonjour","bye":"Au revoir"}},
			"sections":[{"id":"b","components":[
			{"type":"heading","props":{"content":"{{ t(\"hello\") }} / {{ t(\"bye\") }} / {{ t(\"only\") }} / {{ \"hello\" | t }}"}},
			{"type":"text","each":"items","as":"t","props":{"content":"item {{ t.name }}"}}]}]}`)
	}
	items := map[string]any{"items": []any{map[string]any{"name": "one"}}}
	for _, tc := range []struct{ schemaLocale, override, want string }{
		{"", "", "Hello / Goodbye / Only English / Hello"},
		{"", "de-DE", "Hallo / Tschüss / Only English / Hallo"},
		{"", "de-CH", "Grüezi / Tschüss / Only English / Grüezi"},  // de-CH, then de, then en
		{"fr-FR", "", "Bonjour / Au revoir / only / Bonjour"},      // neither fr nor the template's language (fr) has it: the key
		{"fr-CA", "ja-JP", "Bonjour / Au revoir / only / Bonjour"}, // no ja: the template's own language
		{"en-GB", "de-AT", "Hallo / Tschüss / Only English / Hallo"},
	} {
		def := schema(tc.schemaLocale)
		def.Locale = tc.override
		text := localeText(t, def, items)
		if !strings.Contains(text, tc.want) || !strings.Contains(text, "item one") {
			t.Errorf("%s/%s:\n%s\nwant %s", tc.schemaLocale, tc.override, text, tc.want)
		}
	}
	tpl := MustCompile(t, schema(""))
	var got []string
	for _, w := range tpl.Warnings() {
		got = append(got, w.Path+": "+w.Message)
	}
	if want := `schema.sections[0].components[0].props.content: translation "bye" is missing in "de-CH"`; !strings.Contains(strings.Join(got, "\n"), want) {
		t.Errorf("warnings lack %s:\n%s", want, strings.Join(got, "\n"))
	}
	if want := `translation "only" is missing in "de", "de-CH", "fr"`; !strings.Contains(strings.Join(got, "\n"), want) {
		t.Errorf("warnings lack %s:\n%s", want, strings.Join(got, "\n"))
	}

	// A key no table has shows as itself, with a warning.
	tpl = MustCompile(t, schemaDef(`{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"{{ t(\"greeting\") }}"}}]}]}`))
	if w := tpl.Warnings(); len(w) != 1 || !strings.Contains(w[0].Message, `translation "greeting" is missing`) {
		t.Errorf("warnings = %v", w)
	}
	if text := localeText(t, schemaDef(`{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"{{ t(\"greeting\") }}"}}]}]}`), nil); !strings.Contains(text, "greeting") {
		t.Errorf("missing key shows %q", text)
	}

	// Malformed tables are schema errors with paths.
	_, err := MustEngine(t).Compile(schemaDef(`{"translations":{"not a tag":{},"de":{"x":1},"fr":"no"},"sections":[{"id":"b","components":[]}]}`))
	var se *SchemaError
	if !errors.As(err, &se) {
		t.Fatalf("bad translations: %v", err)
	}
	var paths []string
	for _, e := range se.Issues {
		paths = append(paths, e.Path)
	}
	if got, want := strings.Join(paths, " "), "schema.translations.de.x schema.translations.fr schema.translations.not a tag"; got != want {
		t.Errorf("paths = %s, want %s", got, want)
	}
}
