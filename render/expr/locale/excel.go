package locale

import "strings"

// Spreadsheet number formats. A format code always writes "," for
// grouping and "." for decimals; Excel and LibreOffice show them with the
// separators of the reader's system, as they show every number. What the
// code does fix is what a locale adds around the digits: the currency
// symbol and its place, each currency's decimals, percent spacing, date
// patterns, and (through a Windows locale id where one is known) month
// and weekday names in the locale's language.

// ExcelNumber returns the format of a number with decimals decimals
// (General when decimals is negative).
func (l Locale) ExcelNumber(decimals int) string {
	if decimals < 0 {
		return ""
	}
	return excelDigits(cachedPattern(l.num.DecimalPattern), decimals)
}

// ExcelPercent returns the format of a percentage with decimals decimals,
// with the locale's spacing: `0%` in en, `0" "%` (no-break space) in de.
func (l Locale) ExcelPercent(decimals int) string {
	p := cachedPattern(l.num.PercentPattern)
	num := excelDigits(pattern{}, decimals)
	return excelAffix(p.posPrefix, "") + num + excelAffix(p.posSuffix, "")
}

// ExcelCurrency returns the format of amounts of a currency: the
// locale's symbol and placement and the currency's decimals, e.g.
// `#,##0.00" €";-#,##0.00" €"` for EUR in de-DE.
func (l Locale) ExcelCurrency(code string) string {
	code = strings.ToUpper(strings.TrimSpace(code))
	symbol := ""
	if code != "" {
		symbol = l.CurrencySymbol(code)
	}
	p := l.currencyPattern(symbol)
	num := excelDigits(p, CurrencyDecimals(code))
	pos := excelAffix(p.posPrefix, symbol) + num + excelAffix(p.posSuffix, symbol)
	neg := excelAffix(p.negPrefix, symbol) + num + excelAffix(p.negSuffix, symbol)
	return pos + ";" + neg
}

// excelDigits is "#,##0" (or "0" without grouping) with decimals zeros.
func excelDigits(p pattern, decimals int) string {
	s := "#,##0"
	if p.primary == 0 && p.secondary == 0 {
		s = "0"
	}
	if decimals > 0 {
		s += "." + strings.Repeat("0", decimals)
	}
	return s
}

// excelAffix writes a pattern prefix or suffix as format-code text:
// literal text quoted, '-' the minus sign, '%' a percent sign (which
// scales by 100 in both programs), '¤' the symbol.
func excelAffix(a, symbol string) string {
	var b strings.Builder
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			b.WriteString(`"` + strings.ReplaceAll(lit.String(), `"`, ``) + `"`)
			lit.Reset()
		}
	}
	quoted := false
	for _, r := range a {
		switch {
		case r == '\'':
			quoted = !quoted
		case quoted:
			lit.WriteRune(r)
		case r == '-':
			flush()
			b.WriteByte('-')
		case r == '%':
			flush()
			b.WriteByte('%')
		case r == '¤':
			lit.WriteString(symbol)
		default:
			lit.WriteRune(r)
		}
	}
	flush()
	return b.String()
}

// ExcelDate returns the format of dates shown with layout (see Pattern):
// the CLDR pattern in spreadsheet codes, e.g. `[$-407]d". "mmmm yyyy`
// for "long" in de-DE.
func (l Locale) ExcelDate(layout string) string {
	fields := parseDatePattern(l.Pattern(layout))
	var b strings.Builder
	names := false
	for _, f := range fields {
		switch f.letter {
		case 0:
			writeExcelLiteral(&b, f.text)
		case 'y', 'Y', 'u':
			if f.n == 2 {
				b.WriteString("yy")
			} else {
				b.WriteString("yyyy")
			}
		case 'M', 'L':
			b.WriteString(strings.Repeat("m", min(f.n, 4)))
			names = names || f.n >= 3
		case 'd':
			b.WriteString(strings.Repeat("d", min(f.n, 2)))
		case 'E', 'c', 'e':
			if f.n >= 4 {
				b.WriteString("dddd")
			} else {
				b.WriteString("ddd")
			}
			names = true
		case 'H', 'k', 'h', 'K':
			b.WriteString(strings.Repeat("h", min(f.n, 2)))
		case 'm':
			b.WriteString(strings.Repeat("m", min(f.n, 2)))
		case 's':
			b.WriteString(strings.Repeat("s", min(f.n, 2)))
		case 'a', 'b', 'B':
			b.WriteString("AM/PM")
		}
	}
	out := strings.TrimSpace(b.String())
	if names {
		if id := l.windowsID(); id != "" {
			out = "[$-" + id + "]" + out
		}
	}
	return out
}

// writeExcelLiteral quotes literal text for a format code; plain
// separators stay bare.
func writeExcelLiteral(b *strings.Builder, s string) {
	bare := true
	for _, r := range s {
		if !strings.ContainsRune(" -/.:,", r) {
			bare = false
		}
	}
	if bare {
		b.WriteString(s)
		return
	}
	b.WriteString(`"` + strings.ReplaceAll(s, `"`, ``) + `"`)
}

// windowsIDs are Windows locale ids (MS-LCID), which spreadsheet formats
// use to name the language of month and weekday names. They are
// Microsoft's identifiers, not CLDR data: this lists the locales most
// documents are written in, by CLDR locale; others get no id and show
// names in the reader's language.
var windowsIDs = map[string]string{
	"ar": "401", "ar-EG": "C01", "bg": "402", "cs": "405", "da": "406", "de": "407",
	"de-AT": "C07", "de-CH": "807", "el": "408", "en": "409", "en-001": "809", "en-150": "809",
	"en-AU": "C09", "en-CA": "1009", "en-GB": "809", "en-IE": "1809", "en-IN": "4009",
	"es": "C0A", "es-419": "580A", "es-MX": "80A", "fi": "40B", "fr": "40C", "fr-BE": "80C",
	"fr-CA": "C0C", "fr-CH": "100C", "he": "40D", "hi": "439", "hr": "41A", "hu": "40E",
	"id": "421", "it": "410", "it-CH": "810", "ja": "411", "ko": "412", "nb": "414",
	"nl": "413", "nl-BE": "813", "pl": "415", "pt": "416", "pt-PT": "816", "ro": "418",
	"ru": "419", "sk": "41B", "sl": "424", "sv": "41D", "th": "41E", "tr": "41F",
	"uk": "422", "vi": "42A", "zh": "804", "zh-Hans": "804", "zh-Hant": "404",
}

func (l Locale) windowsID() string {
	return windowsIDs[l.data.tag]
}
