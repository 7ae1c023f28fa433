package render

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"folio/render/expr/locale"
)

// Cell format kinds, written "kind" or "kind:argument" in a table column's
// or keyValue item's "format".
const (
	kindText     = "text"     // always text
	kindNumber   = "number"   // number:2 → 1,234.50
	kindCurrency = "currency" // currency:EUR → €1,234.50
	kindPercent  = "percent"  // percent:1 → 19.0% (0.19 is 19%)
	kindDate     = "date"     // date:DD.MM.YYYY → 01.03.2024
)

// cellFormat says how a value is shown in a table cell: as text in a PDF,
// as a typed cell with a number format in a spreadsheet.
type cellFormat struct {
	kind     string
	decimals int    // -1: as many as the value needs
	currency string // ISO code, upper case
	layout   string // Go layout for dates; a CLDR pattern when loc is set
	excel    string // spreadsheet number format; "" is General
	// loc is the template's locale; zero keeps Folio's original formats.
	loc locale.Locale
}

func (f cellFormat) numeric() bool {
	return f.kind == kindNumber || f.kind == kindCurrency || f.kind == kindPercent
}

// parseCellFormat reads "number", "number:2", "currency:EUR", "percent",
// "percent:1", "date", "date:DD.MM.YYYY", "date:long" or "text", for a
// template in loc (zero: no locale).
func parseCellFormat(s string, loc locale.Locale) (cellFormat, error) {
	kind, arg, hasArg := strings.Cut(strings.TrimSpace(s), ":")
	arg = strings.TrimSpace(arg)
	f := cellFormat{kind: strings.ToLower(strings.TrimSpace(kind)), decimals: -1, loc: loc}
	decimals := func(def int) error {
		if !hasArg {
			f.decimals = def
			return nil
		}
		n, err := strconv.Atoi(arg)
		if err != nil || n < 0 || n > 10 {
			return fmt.Errorf("%s:N needs N from 0 to 10", f.kind)
		}
		f.decimals = n
		return nil
	}
	switch f.kind {
	case kindText:
	case kindNumber:
		if err := decimals(-1); err != nil {
			return cellFormat{}, err
		}
		if f.decimals >= 0 {
			f.excel = excelDecimals("#,##0", f.decimals)
			if !loc.IsZero() {
				f.excel = loc.ExcelNumber(f.decimals)
			}
		}
	case kindCurrency:
		f.currency = strings.ToUpper(arg)
		if hasArg && !currencyCode.MatchString(f.currency) {
			return cellFormat{}, errors.New("currency needs a three-letter code, e.g. currency:EUR")
		}
		f.decimals = 2
		if zeroDecimalCurrencies[f.currency] {
			f.decimals = 0
		}
		f.excel = excelCurrency(f.currency, f.decimals)
		if !loc.IsZero() {
			f.decimals = locale.CurrencyDecimals(f.currency)
			f.excel = loc.ExcelCurrency(f.currency)
		}
	case kindPercent:
		if err := decimals(0); err != nil {
			return cellFormat{}, err
		}
		f.excel = excelDecimals("0", f.decimals) + "%"
		if !loc.IsZero() {
			f.excel = loc.ExcelPercent(f.decimals)
		}
	case kindDate:
		switch {
		case !loc.IsZero() || locale.IsStyle(arg):
			// CLDR patterns: the locale's (or en-US's, for a style
			// without a locale), its medium style by default.
			if loc.IsZero() {
				f.loc = enUS
			}
			f.layout = f.loc.Pattern(arg)
			f.excel = f.loc.ExcelDate(arg)
		default:
			f.layout = "2006-01-02"
			if hasArg && arg != "" {
				f.layout = goLayout(arg)
			}
			f.excel = excelDateFormat(f.layout)
		}
	default:
		return cellFormat{}, fmt.Errorf("unknown format %q: use text, number, number:2, currency:EUR, percent, percent:1, date or date:DD.MM.YYYY", clip(s, 40))
	}
	return f, nil
}

var currencyCode = regexp.MustCompile(`^[A-Z]{3}$`)

func excelDecimals(base string, n int) string {
	if n <= 0 {
		return base
	}
	return base + "." + strings.Repeat("0", n)
}

// excelCurrency matches currency(): known symbols before the amount, other
// codes after it.
func excelCurrency(code string, decimals int) string {
	num := excelDecimals("#,##0", decimals)
	if sym, ok := currencySymbols[code]; ok {
		pos := `"` + sym + `"` + num
		return pos + ";-" + pos
	}
	if code == "" {
		return num
	}
	return num + ` "` + code + `"`
}

// excelDateTokens translate Go layout elements to spreadsheet date codes,
// longest first.
var excelDateTokens = []struct{ goLayout, excel string }{
	{"January", "mmmm"}, {"Monday", "dddd"}, {"2006", "yyyy"}, {"Jan", "mmm"}, {"Mon", "ddd"},
	{"PM", "AM/PM"}, {"pm", "am/pm"}, {"01", "mm"}, {"02", "dd"}, {"03", "hh"}, {"04", "mm"},
	{"05", "ss"}, {"06", "yy"}, {"15", "hh"}, {"_2", "d"}, {"1", "m"}, {"2", "d"}, {"3", "h"},
}

// excelDateFormat translates a Go date layout to a spreadsheet number format.
func excelDateFormat(layout string) string {
	var b strings.Builder
	for i := 0; i < len(layout); {
		matched := false
		for _, t := range excelDateTokens {
			if strings.HasPrefix(layout[i:], t.goLayout) {
				b.WriteString(t.excel)
				i += len(t.goLayout)
				matched = true
				break
			}
		}
		if matched {
			continue
		}
		switch ch := layout[i]; {
		case ch == ' ' || ch == '-' || ch == '/' || ch == '.' || ch == ':' || ch == ',':
			b.WriteByte(ch)
		case ch == '"':
			b.WriteString(`\"`)
		case ch < 0x80:
			b.WriteByte('\\')
			b.WriteByte(ch)
		default:
			b.WriteByte(ch)
		}
		i++
	}
	return b.String()
}

// display is the text a value shows in a PDF cell. Values the format
// cannot apply to are shown as they are.
func (f cellFormat) display(v any) string {
	if v == nil {
		return ""
	}
	switch f.kind {
	case kindNumber, kindCurrency, kindPercent:
		x, ok := number(v)
		if !ok {
			break
		}
		if !f.loc.IsZero() {
			switch f.kind {
			case kindNumber:
				return f.loc.Number(x, f.decimals)
			case kindCurrency:
				return f.loc.Currency(x, f.currency)
			default:
				return f.loc.Percent(x, f.decimals)
			}
		}
		switch f.kind {
		case kindNumber:
			if f.decimals < 0 {
				return groupedFloat(x)
			}
			s, _ := formatNumber(defaultFormatting, []any{x, f.decimals})
			return s.(string)
		case kindCurrency:
			return legacyCurrency(x, f.currency)
		default:
			s, _ := formatNumber(defaultFormatting, []any{x * 100, f.decimals})
			return s.(string) + "%"
		}
	case kindDate:
		if t, ok := toTime(v); ok {
			if !f.loc.IsZero() {
				return f.loc.FormatPattern(t, f.layout)
			}
			return t.Format(f.layout)
		}
	}
	return formatValue(v)
}

// groupedFloat prints a number with thousands separators and as many
// decimals as it needs.
func groupedFloat(x float64) string {
	s := formatFloat(x)
	if strings.ContainsAny(s, "eE") || math.IsInf(x, 0) || math.IsNaN(x) {
		return s
	}
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	f, _ := strconv.ParseFloat(intPart, 64)
	out := groupDigits(f, 0)
	if frac != "" {
		out += "." + frac
	}
	return sign + out
}

// number converts numbers and numeric text, but not booleans.
func number(v any) (float64, bool) {
	if _, isBool := v.(bool); isBool {
		return 0, false
	}
	f, ok := toFloat(v)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// isoDate matches the date text that spreadsheet cells turn into dates
// without a date format: YYYY-MM-DD, optionally with an RFC 3339 time.
var isoDate = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2}))?$`)

// Spreadsheet number formats of dates without a date format.
const (
	excelDate     = "yyyy-mm-dd"
	excelDateTime = "yyyy-mm-dd hh:mm:ss"
)

// typed returns a spreadsheet cell value and its number format: numbers
// stay numbers, dates become dates, booleans stay booleans, the rest is text.
func (f cellFormat) typed(v any) (any, string) {
	if v == nil {
		return nil, ""
	}
	switch f.kind {
	case kindText:
		return formatValue(v), ""
	case kindNumber, kindCurrency, kindPercent:
		if x, ok := number(v); ok {
			if f.kind == kindCurrency {
				// Money is kept in its currency's minor unit, as shown:
				// no 4660.570000000001 behind "€4,660.57".
				return roundMoney(x, f.decimals), f.excel
			}
			if _, isFloat := v.(float64); isFloat {
				return v, f.excel
			}
			return x, f.excel
		}
		return formatValue(v), ""
	case kindDate:
		if t, ok := toTime(v); ok {
			return t, f.excel
		}
		return formatValue(v), ""
	}
	// Values that keep their type are returned as they came, which saves
	// boxing them again.
	switch x := v.(type) {
	case bool, int:
		return v, ""
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return formatValue(x), ""
		}
		return v, ""
	case time.Time:
		return v, dateFormatOf(x)
	case string:
		if isoDate.MatchString(x) {
			if t, ok := parseDate(x); ok {
				return t, dateFormatOf(t)
			}
		}
		return x, ""
	}
	if x, ok := number(v); ok {
		if _, isText := v.(string); !isText {
			return x, ""
		}
	}
	return formatValue(v), ""
}

func dateFormatOf(t time.Time) string {
	if t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 {
		return excelDate
	}
	return excelDateTime
}

// roundMoney rounds x to decimals places, half away from zero; amounts
// too large for that to mean anything are left as they are.
func roundMoney(x float64, decimals int) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) >= 1e15 {
		return x
	}
	p := math.Pow10(decimals)
	return math.Round(x*p) / p
}
