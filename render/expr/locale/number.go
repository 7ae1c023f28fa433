package locale

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// pattern is a parsed CLDR number pattern such as "#,##0.00 ¤" or
// "¤ #,##0.00;¤-#,##0.00".
type pattern struct {
	posPrefix, posSuffix string
	negPrefix, negSuffix string // with '-' for the minus sign
	primary, secondary   int    // grouping sizes; 0: no grouping
	minFrac, maxFrac     int
}

// patterns caches parsed patterns: the tables hold a few hundred
// distinct ones, and a table column formats every cell with the same.
var patterns sync.Map // string -> pattern

func cachedPattern(src string) pattern {
	if p, ok := patterns.Load(src); ok {
		return p.(pattern)
	}
	p := parsePattern(src)
	patterns.Store(src, p)
	return p
}

// parsePattern reads a CLDR pattern. A pattern without a negative part
// is negated with the minus sign in front, as CLDR says.
func parsePattern(p string) pattern {
	pos, neg, hasNeg := strings.Cut(p, ";")
	var out pattern
	var num string
	out.posPrefix, num, out.posSuffix = splitAffixes(pos)
	if hasNeg {
		out.negPrefix, _, out.negSuffix = splitAffixes(neg)
	} else {
		out.negPrefix, out.negSuffix = "-"+out.posPrefix, out.posSuffix
	}
	intPart, frac, _ := strings.Cut(num, ".")
	if i := strings.LastIndexByte(intPart, ','); i >= 0 {
		out.primary = len(intPart) - i - 1
		out.secondary = out.primary
		if j := strings.LastIndexByte(intPart[:i], ','); j >= 0 {
			out.secondary = i - j - 1
		}
	}
	out.minFrac = strings.Count(frac, "0")
	out.maxFrac = out.minFrac + strings.Count(frac, "#")
	return out
}

// splitAffixes cuts a sub-pattern into prefix, number and suffix.
func splitAffixes(p string) (prefix, num, suffix string) {
	first := strings.IndexAny(p, "#0,.")
	last := strings.LastIndexAny(p, "#0,.")
	if first < 0 {
		return p, "", ""
	}
	return p[:first], p[first : last+1], p[last+1:]
}

// round rounds a non-negative x to frac decimals, half away from zero,
// on its shortest decimal form: 1234.5 yen is 1235 and 1.005 is 1.01, as
// people round money, where binary floating point would give 1234 and
// 1.00. It returns the integer and fraction digits.
func round(x float64, frac int) (intPart, fracPart string) {
	s := strconv.FormatFloat(x, 'f', -1, 64)
	intPart, fracPart, _ = strings.Cut(s, ".")
	if len(fracPart) <= frac {
		return intPart, fracPart + strings.Repeat("0", frac-len(fracPart))
	}
	up := fracPart[frac] >= '5'
	digits := []byte(intPart + fracPart[:frac])
	for i := len(digits) - 1; up && i >= 0; i-- {
		if digits[i] == '9' {
			digits[i] = '0'
			continue
		}
		digits[i]++
		up = false
	}
	if up {
		digits = append([]byte{'1'}, digits...)
	}
	n := len(digits) - frac
	return string(digits[:n]), string(digits[n:])
}

// digits formats a non-negative finite x with frac decimals (trailing
// zeros cut down to minFrac), grouped per p, with the locale's
// separators and digits.
func (n *numbers) digits(x float64, frac, minFrac int, p pattern) string {
	intPart, fracPart := round(x, frac)
	for len(fracPart) > minFrac && strings.HasSuffix(fracPart, "0") {
		fracPart = fracPart[:len(fracPart)-1]
	}
	var b strings.Builder
	grouped := p.primary > 0 && len(intPart) >= p.primary+max(n.MinGroup, 1)
	for i := range len(intPart) {
		if grouped && i > 0 {
			left := len(intPart) - i // digits from here to the end
			if left == p.primary || (left > p.primary && p.secondary > 0 && (left-p.primary)%p.secondary == 0) {
				b.WriteString(n.Group)
			}
		}
		n.digit(&b, intPart[i])
	}
	if fracPart != "" {
		b.WriteString(n.Decimal)
		for i := range len(fracPart) {
			n.digit(&b, fracPart[i])
		}
	}
	return b.String()
}

func (n *numbers) digit(b *strings.Builder, d byte) {
	if n.Digits == "" || d < '0' || d > '9' {
		b.WriteByte(d)
		return
	}
	k := int(d - '0')
	for _, r := range n.Digits {
		if k == 0 {
			b.WriteRune(r)
			return
		}
		k--
	}
}

// Digits writes the ASCII digits in s in the locale's digits.
func (l Locale) Digits(s string) string {
	if l.num == nil || l.num.Digits == "" {
		return s
	}
	var b strings.Builder
	for i := range len(s) {
		l.num.digit(&b, s[i])
	}
	return b.String()
}

// affix writes a pattern prefix or suffix: '-' is the minus sign, '%' the
// percent sign, '¤' the currency symbol, quoted text is literal.
func (n *numbers) affix(b *strings.Builder, a, symbol string) {
	quoted := false
	for _, r := range a {
		switch {
		case r == '\'':
			quoted = !quoted
		case quoted:
			b.WriteRune(r)
		case r == '-':
			b.WriteString(n.Minus)
		case r == '%':
			b.WriteString(n.Percent)
		case r == '¤':
			b.WriteString(symbol)
		default:
			b.WriteRune(r)
		}
	}
}

// format writes x with pattern p: frac decimals, trailing zeros trimmed
// down to minFrac.
func (l Locale) format(x float64, p pattern, frac, minFrac int, symbol string) string {
	if math.IsInf(x, 0) || math.IsNaN(x) || math.Abs(x) >= 1e21 {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	num := l.num.digits(math.Abs(x), frac, minFrac, p)
	i, f := round(math.Abs(x), frac)
	neg := x < 0 && strings.ContainsFunc(i+f, func(r rune) bool { return r >= '1' && r <= '9' })
	var b strings.Builder
	if neg {
		l.num.affix(&b, p.negPrefix, symbol)
		b.WriteString(num)
		l.num.affix(&b, p.negSuffix, symbol)
	} else {
		l.num.affix(&b, p.posPrefix, symbol)
		b.WriteString(num)
		l.num.affix(&b, p.posSuffix, symbol)
	}
	return b.String()
}

// Number formats x with decimals decimals, or with as many as it needs
// (up to 10) when decimals is negative: 1234.5 is "1.234,5" in de-DE.
func (l Locale) Number(x float64, decimals int) string {
	p := cachedPattern(l.num.DecimalPattern)
	if decimals < 0 {
		return l.format(x, p, 10, 0, "")
	}
	return l.format(x, p, decimals, decimals, "")
}

// Percent formats a fraction as a percentage: 0.19 is "19 %" in de-DE.
func (l Locale) Percent(x float64, decimals int) string {
	p := cachedPattern(l.num.PercentPattern)
	return l.format(x*100, p, max(decimals, 0), max(decimals, 0), "")
}

// CurrencyDecimals returns the number of minor-unit digits of an ISO 4217
// currency: 2 for EUR, 0 for JPY, 3 for KWD.
func CurrencyDecimals(code string) int {
	if d, ok := currencyDigits[strings.ToUpper(code)]; ok {
		return d
	}
	return 2
}

// CurrencySymbol returns the symbol the locale writes for a currency
// ("€", "CHF", "￥"), the code itself when it has none.
func (l Locale) CurrencySymbol(code string) string {
	code = strings.ToUpper(code)
	list := l.data.currencies
	i := sort.Search(len(list), func(i int) bool { return list[i].Code >= code })
	if i < len(list) && list[i].Code == code {
		return list[i].Symbol
	}
	return code
}

// currencyPattern returns the pattern for symbol: CLDR's
// "alphaNextToNumber" pattern (or a no-break space) when the symbol
// is a word such as CHF next to the digits.
func (l Locale) currencyPattern(symbol string) pattern {
	src := l.num.CurrencyPattern
	if symbol == "" {
		src = strings.ReplaceAll(src, "¤", "")
		p := cachedPattern(src)
		trim := func(s string) string { return strings.Trim(s, " \u00a0\u202f") }
		p.posPrefix, p.posSuffix, p.negPrefix, p.negSuffix = trim(p.posPrefix), trim(p.posSuffix), trim(p.negPrefix), trim(p.negSuffix)
		return p
	}
	first, _ := utf8.DecodeRuneInString(symbol)
	last, _ := utf8.DecodeLastRuneInString(symbol)
	// The symbol's letter next to the digits decides (CLDR's
	// alphaNextToNumber): "JP¥1,235" but "CHF 9.00".
	next := first
	if strings.Contains(cachedPattern(src).posPrefix, "¤") {
		next = last
	}
	if l.num.CurrencyAlphaPattern != "" && unicode.IsLetter(next) {
		src = l.num.CurrencyAlphaPattern
	}
	p := cachedPattern(src)
	space := func(affix string, before bool) string {
		// currencySpacing: a letter never touches a digit.
		if before && strings.HasSuffix(affix, "¤") && unicode.IsLetter(last) {
			return affix + "\u00a0"
		}
		if !before && strings.HasPrefix(affix, "¤") && unicode.IsLetter(first) {
			return "\u00a0" + affix
		}
		return affix
	}
	p.posPrefix, p.negPrefix = space(p.posPrefix, true), space(p.negPrefix, true)
	p.posSuffix, p.negSuffix = space(p.posSuffix, false), space(p.negSuffix, false)
	return p
}

// Currency formats an amount of an ISO 4217 currency with its minor unit,
// symbol and the locale's placement: 1234.56 EUR is "1.234,56 €" in
// de-DE and "€1,234.56" in en-IE; 1234.5 JPY is "￥1,235" in ja-JP. An
// empty code formats the amount with two decimals and no symbol.
func (l Locale) Currency(x float64, code string) string {
	code = strings.ToUpper(strings.TrimSpace(code))
	decimals := CurrencyDecimals(code)
	symbol := ""
	if code != "" {
		symbol = l.CurrencySymbol(code)
	}
	return l.format(x, l.currencyPattern(symbol), decimals, decimals, symbol)
}

// CurrencyWith formats an amount like Currency but with decimals
// decimals: an axis of whole thousands of euros reads "20.000 €", not
// "20.000,00 €".
func (l Locale) CurrencyWith(x float64, code string, decimals int) string {
	code = strings.ToUpper(strings.TrimSpace(code))
	symbol := ""
	if code != "" {
		symbol = l.CurrencySymbol(code)
	}
	return l.format(x, l.currencyPattern(symbol), decimals, decimals, symbol)
}
