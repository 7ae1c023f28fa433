package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"folio/render/expr/locale"
)

// helper is a function templates can call, also through a pipe:
// {{ total | currency("EUR") }} calls currency(total, "EUR").
type helper struct {
	name string
	fn   func(params ...any) (any, error)
}

// helpers are the template functions besides expr's safe builtins.
var helpers = []helper{
	{"currency", localized(currency)},
	{"formatNumber", localized(formatNumber)},
	{"formatDate", localized(formatDate)},
	{"formatPercent", localized(formatPercent)},
	{"t", localized(translate)},
	{"upper", func(p ...any) (any, error) { return mapText("upper", strings.ToUpper, p) }},
	{"lower", func(p ...any) (any, error) { return mapText("lower", strings.ToLower, p) }},
	{"default", defaultValue},
	{"join", join},
	{"replace", replace},
}

// isHelper reports whether name is a helper function.
func isHelper(name string) bool {
	for _, h := range helpers {
		if h.name == name {
			return true
		}
	}
	return false
}

func arity(name string, p []any, minArgs, maxArgs int) error {
	if len(p) < minArgs || len(p) > maxArgs {
		if minArgs == maxArgs {
			return fmt.Errorf("%s takes %d arguments, got %d", name, minArgs, len(p))
		}
		return fmt.Errorf("%s takes %d to %d arguments, got %d", name, minArgs, maxArgs, len(p))
	}
	return nil
}

// currencySymbols are written before the amount; other codes follow it.
var currencySymbols = map[string]string{"EUR": "€", "USD": "$", "GBP": "£", "JPY": "¥", "INR": "₹", "RUB": "₽"}

// zeroDecimalCurrencies have no minor unit.
var zeroDecimalCurrencies = map[string]bool{"JPY": true, "KRW": true, "ISK": true, "CLP": true, "VND": true}

// currency formats an amount in the template's locale, e.g.
// currency(1234.5, "EUR") is "€1,234.50" without a locale and "1.234,50 €"
// in de-DE; a third argument names another locale. Without a locale,
// known symbols go before the amount and other codes after it
// (currency(9, "CHF") is "9.00 CHF"). A missing amount formats as "".
func currency(f *formatting, p []any) (any, error) {
	if err := arity("currency", p, 1, 3); err != nil {
		return nil, err
	}
	if p[0] == nil {
		return "", nil
	}
	x, ok := toFloat(p[0])
	if !ok {
		return nil, fmt.Errorf("currency: %s is not a number", describe(p[0]))
	}
	code := ""
	if len(p) >= 2 && p[1] != nil {
		s, ok := p[1].(string)
		if !ok {
			return nil, errors.New("currency: the currency code must be text")
		}
		code = strings.ToUpper(strings.TrimSpace(s))
	}
	loc, err := helperLocale("currency", f, p, 2)
	if err != nil {
		return nil, err
	}
	if !loc.IsZero() {
		if code != "" && !currencyCode.MatchString(code) {
			return nil, fmt.Errorf("currency: %q is not a three-letter currency code such as EUR", clip(code, 20))
		}
		return loc.Currency(x, code), nil
	}
	return legacyCurrency(x, code), nil
}

// legacyCurrency is Folio's format before locales, kept for templates
// without one.
func legacyCurrency(f float64, code string) string {
	decimals := 2
	if zeroDecimalCurrencies[code] {
		decimals = 0
	}
	num := groupDigits(math.Abs(f), decimals)
	sign := ""
	if f < 0 && strings.Trim(num, "0.,") != "" {
		sign = "-"
	}
	if sym, ok := currencySymbols[code]; ok {
		return sign + sym + num
	}
	if code == "" {
		return sign + num
	}
	return sign + num + " " + code
}

// helperLocale returns the locale a helper formats with: the argument at
// index i when given (e.g. formatNumber(x, 2, "de-CH")), else the
// template's; zero for a template without one.
func helperLocale(name string, f *formatting, p []any, i int) (locale.Locale, error) {
	if len(p) > i && p[i] != nil {
		s, ok := p[i].(string)
		if !ok {
			return locale.Locale{}, fmt.Errorf("%s: the locale must be text such as \"de-DE\"", name)
		}
		l, err := locale.Parse(s)
		if err != nil {
			return locale.Locale{}, fmt.Errorf("%s: locale %v", name, err)
		}
		return l, nil
	}
	return f.loc, nil
}

// decimalsArg reads an optional decimals argument at index i.
func decimalsArg(name string, p []any, i, def int) (int, error) {
	if len(p) <= i || p[i] == nil {
		return def, nil
	}
	d, ok := toFloat(p[i])
	if !ok || d < 0 || d > 10 || d != math.Trunc(d) {
		return 0, errors.New(name + ": decimals must be a whole number from 0 to 10")
	}
	return int(d), nil
}

// formatNumber formats with the locale's separators and a fixed number
// of decimals (default 0), e.g. formatNumber(1234.567, 2) is "1,234.57"
// ("1.234,57" in de-DE); a third argument names another locale.
func formatNumber(f *formatting, p []any) (any, error) {
	if err := arity("formatNumber", p, 1, 3); err != nil {
		return nil, err
	}
	if p[0] == nil {
		return "", nil
	}
	x, ok := toFloat(p[0])
	if !ok {
		return nil, fmt.Errorf("formatNumber: %s is not a number", describe(p[0]))
	}
	decimals, err := decimalsArg("formatNumber", p, 1, 0)
	if err != nil {
		return nil, err
	}
	loc, err := helperLocale("formatNumber", f, p, 2)
	if err != nil {
		return nil, err
	}
	if !loc.IsZero() {
		return loc.Number(x, decimals), nil
	}
	num := groupDigits(math.Abs(x), decimals)
	if x < 0 && strings.Trim(num, "0.,") != "" {
		num = "-" + num
	}
	return num, nil
}

// formatPercent formats a fraction as a percentage with decimals
// decimals (default 0): formatPercent(0.19) is "19%" ("19 %" in de-DE).
func formatPercent(f *formatting, p []any) (any, error) {
	if err := arity("formatPercent", p, 1, 3); err != nil {
		return nil, err
	}
	if p[0] == nil {
		return "", nil
	}
	x, ok := toFloat(p[0])
	if !ok {
		return nil, fmt.Errorf("formatPercent: %s is not a number", describe(p[0]))
	}
	decimals, err := decimalsArg("formatPercent", p, 1, 0)
	if err != nil {
		return nil, err
	}
	loc, err := helperLocale("formatPercent", f, p, 2)
	if err != nil {
		return nil, err
	}
	if !loc.IsZero() {
		return loc.Percent(x, decimals), nil
	}
	s, err := formatNumber(defaultFormatting, []any{x * 100, decimals})
	if err != nil {
		return nil, err
	}
	return s.(string) + "%", nil
}

// translate is t("key"): the text for key in the effective locale's
// translations, falling back to its language (de-CH to de), then to the
// template's default language, then to the key itself.
func translate(f *formatting, p []any) (any, error) {
	if err := arity("t", p, 1, 1); err != nil {
		return nil, err
	}
	s, _ := f.translate(formatValue(p[0]))
	return s, nil
}

// localized adapts a helper that takes the template's formatting, which
// Compile passes as a hidden first argument.
func localized(fn func(f *formatting, p []any) (any, error)) func(p ...any) (any, error) {
	return func(p ...any) (any, error) {
		f := defaultFormatting
		if len(p) > 0 {
			if x, ok := p[0].(*formatting); ok {
				f, p = x, p[1:]
			}
		}
		return fn(f, p)
	}
}

// groupDigits formats a non-negative number with "," between thousands.
func groupDigits(f float64, decimals int) string {
	if math.IsInf(f, 0) || math.IsNaN(f) || f >= 1e21 {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	s := strconv.FormatFloat(f, 'f', decimals, 64)
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if frac != "" {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

// formatDate formats a date in the template's locale with a style
// (short, medium, long, full, time, datetime: "long" is "November 25,
// 2026" in en-US and "25. November 2026" in de-DE) or a layout written
// with tokens (YYYY, YY, MMMM, MMM, MM, M, dddd, ddd, DD, D, HH, hh, mm,
// ss, A) or as a Go layout; names follow the locale. The default is
// "YYYY-MM-DD" without a locale and the medium style with one; a third
// argument names another locale. Dates may be time values or RFC 3339 /
// YYYY-MM-DD text. A missing date formats as "".
func formatDate(f *formatting, p []any) (any, error) {
	if err := arity("formatDate", p, 1, 3); err != nil {
		return nil, err
	}
	if p[0] == nil {
		return "", nil
	}
	t, ok := toTime(p[0])
	if !ok {
		return nil, fmt.Errorf("formatDate: %s is not a date", describe(p[0]))
	}
	layout := ""
	if len(p) >= 2 && p[1] != nil {
		s, ok := p[1].(string)
		if !ok {
			return nil, errors.New("formatDate: the layout must be text")
		}
		layout = s
	}
	loc, err := helperLocale("formatDate", f, p, 2)
	if err != nil {
		return nil, err
	}
	switch {
	case !loc.IsZero():
		return loc.Date(t, layout), nil
	case locale.IsStyle(layout):
		return enUS.Date(t, layout), nil
	case layout == "":
		layout = "2006-01-02"
	}
	return t.Format(goLayout(layout)), nil
}

// dateTokens translate token layouts to Go layouts, longest first.
var dateTokens = []struct{ token, layout string }{
	{"YYYY", "2006"}, {"YY", "06"}, {"MMMM", "January"}, {"MMM", "Jan"}, {"MM", "01"},
	{"dddd", "Monday"}, {"ddd", "Mon"},
	{"M", "1"}, {"DD", "02"}, {"D", "2"}, {"HH", "15"}, {"hh", "03"}, {"mm", "04"},
	{"ss", "05"}, {"A", "PM"},
}

// tokenLayout matches layouts written only with tokens and separators, such as "D.M.".
var tokenLayout = regexp.MustCompile(`^[YMDdHhmsA\s.,:/\-]+$`)

// goLayout returns layout unchanged if it is a Go layout, else translates
// tokens. Go layouts never hold YY, MM, DD, HH or ddd.
func goLayout(layout string) string {
	isTokens := tokenLayout.MatchString(layout)
	for _, t := range []string{"YY", "MM", "DD", "HH", "ddd"} {
		isTokens = isTokens || strings.Contains(layout, t)
	}
	if !isTokens {
		return layout
	}
	var b strings.Builder
	for i := 0; i < len(layout); {
		matched := false
		for _, t := range dateTokens {
			if strings.HasPrefix(layout[i:], t.token) {
				b.WriteString(t.layout)
				i += len(t.token)
				matched = true
				break
			}
		}
		if !matched {
			b.WriteByte(layout[i])
			i++
		}
	}
	return b.String()
}

func mapText(name string, f func(string) string, p []any) (any, error) {
	if err := arity(name, p, 1, 1); err != nil {
		return nil, err
	}
	return f(formatValue(p[0])), nil
}

// defaultValue returns the fallback when the value is missing or empty text.
func defaultValue(p ...any) (any, error) {
	if err := arity("default", p, 2, 2); err != nil {
		return nil, err
	}
	if p[0] == nil {
		return p[1], nil
	}
	if s, ok := p[0].(string); ok && s == "" {
		return p[1], nil
	}
	return p[0], nil
}

// join joins the elements of an array with a separator (default ", ").
func join(p ...any) (any, error) {
	if err := arity("join", p, 1, 2); err != nil {
		return nil, err
	}
	sep := ", "
	if len(p) == 2 {
		s, ok := p[1].(string)
		if !ok {
			return nil, errors.New("join: the separator must be text")
		}
		sep = s
	}
	if p[0] == nil {
		return "", nil
	}
	rv := reflect.ValueOf(p[0])
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return nil, fmt.Errorf("join: %s is not an array", describe(p[0]))
	}
	parts := make([]string, rv.Len())
	size := len(sep) * rv.Len()
	for i := range parts {
		parts[i] = formatValue(rv.Index(i).Interface())
		size += len(parts[i])
		if size > maxHelperOutput {
			return nil, errors.New("join: result too long")
		}
	}
	return strings.Join(parts, sep), nil
}

// maxHelperOutput caps what one helper call may produce.
const maxHelperOutput = 4 << 20

// replace replaces every occurrence of old with new in text.
func replace(p ...any) (any, error) {
	if err := arity("replace", p, 3, 3); err != nil {
		return nil, err
	}
	s, old, repl := formatValue(p[0]), formatValue(p[1]), formatValue(p[2])
	n := strings.Count(s, old)
	if old == "" || len(s)+n*(len(repl)-len(old)) > maxHelperOutput {
		if old == "" {
			return s, nil
		}
		return nil, errors.New("replace: result too long")
	}
	return strings.ReplaceAll(s, old, repl), nil
}

// toFloat converts numbers and numeric text.
func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint8:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	}
	return 0, false
}

// toTime converts time values and RFC 3339 or YYYY-MM-DD text.
func toTime(v any) (time.Time, bool) {
	switch x := v.(type) {
	case time.Time:
		return x, true
	case string:
		return parseDate(x)
	}
	return time.Time{}, false
}

func parseDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	layout := time.RFC3339
	if len(s) == len("2006-01-02") {
		layout = "2006-01-02"
	}
	if t, err := time.Parse(layout, s); err == nil {
		return t, true
	}
	return time.Time{}, false
}

// describe names a value for error messages, quoting short scalars.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "nothing"
	case string:
		return "text " + strconv.Quote(clip(x, 40))
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		return "a date"
	}
	if _, ok := toFloat(v); ok {
		return formatValue(v)
	}
	switch reflect.ValueOf(v).Kind() {
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map:
		return "an object"
	}
	return fmt.Sprintf("a value of type %T", v)
}

// formatValue turns an expression result into document text.
func formatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return formatFloat(x)
	case float32:
		return formatFloat(float64(x))
	case json.Number:
		return x.String()
	case time.Time:
		if x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 && x.Nanosecond() == 0 {
			return x.Format("2006-01-02")
		}
		return x.Format(time.RFC3339)
	}
	if f, ok := toFloat(v); ok {
		return formatFloat(f)
	}
	switch reflect.ValueOf(v).Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		return string(appendJSON(nil, v, 0))
	case reflect.String:
		return reflect.ValueOf(v).String()
	case reflect.Bool:
		return strconv.FormatBool(reflect.ValueOf(v).Bool())
	}
	return "" // functions, pointers and the like print as nothing
}

// maxFormattedValue caps the text a collection prints as.
const maxFormattedValue = maxHelperOutput

// appendJSON writes v as JSON, as json.Marshal would for decoded JSON
// values, but bounded: past maxValueDepth levels, or once the text
// reaches maxFormattedValue, the rest prints as "…". It never recurses
// more than maxValueDepth levels, so no value (not even one that
// contains itself) can exhaust the stack or the heap.
func appendJSON(b []byte, v any, depth int) []byte {
	if depth > maxValueDepth || len(b) >= maxFormattedValue {
		return append(b, `"…"`...)
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case string, bool, float64, int, time.Time, json.Number:
		out, err := json.Marshal(x)
		if err != nil {
			return append(b, "null"...)
		}
		return append(b, out...)
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b = appendJSON(b, e, depth+1); len(b) >= maxFormattedValue {
				return append(b, `"…"]`...)
			}
		}
		return append(b, ']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSON(b, k, depth+1)
			b = append(b, ':')
			if b = appendJSON(b, x[k], depth+1); len(b) >= maxFormattedValue {
				return append(b, `"…"}`...)
			}
		}
		return append(b, '}')
	}
	if f, ok := toFloat(v); ok {
		return appendJSON(b, f, depth)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.String:
		return appendJSON(b, rv.String(), depth)
	case reflect.Bool:
		return appendJSON(b, rv.Bool(), depth)
	case reflect.Slice, reflect.Array:
		b = append(b, '[')
		for i := range rv.Len() {
			if i > 0 {
				b = append(b, ',')
			}
			if b = appendJSON(b, rv.Index(i).Interface(), depth+1); len(b) >= maxFormattedValue {
				return append(b, `"…"]`...)
			}
		}
		return append(b, ']')
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return append(b, "null"...)
		}
		m := make(map[string]any, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			m[it.Key().String()] = it.Value().Interface()
		}
		return appendJSON(b, m, depth)
	}
	return append(b, "null"...) // functions, pointers and the like print as nothing
}

// formatFloat prints whole numbers without decimals and hides binary
// rounding noise (0.1+0.2 prints as 0.3).
func formatFloat(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) || math.Abs(f) >= 1e15 {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	s := strconv.FormatFloat(f, 'f', 10, 64)
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	if s == "-0" {
		s = "0"
	}
	return s
}
