package locale

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Date layout styles: CLDR's four date lengths, and time and date-time.
const (
	StyleShort    = "short"    // 25.11.26, 11/25/26
	StyleMedium   = "medium"   // 25.11.2026, Nov 25, 2026
	StyleLong     = "long"     // 25. November 2026, November 25, 2026
	StyleFull     = "full"     // Mittwoch, 25. November 2026
	StyleTime     = "time"     // 14:30, 2:30 PM
	StyleDateTime = "datetime" // 25.11.2026, 14:30
)

// IsStyle reports whether layout names a style rather than a pattern.
func IsStyle(layout string) bool {
	switch strings.ToLower(strings.TrimSpace(layout)) {
	case StyleShort, StyleMedium, StyleLong, StyleFull, StyleTime, StyleDateTime:
		return true
	}
	return false
}

// Pattern returns the CLDR date pattern for layout in this locale: a
// style's pattern ("long" is "d. MMMM y" in German), or a layout written
// with tokens (YYYY, MM, DD, MMMM, dddd, HH, mm, A, ...) or as a Go layout
// ("2 January 2006") translated to CLDR fields. "" is the medium style.
func (l Locale) Pattern(layout string) string {
	d := l.data.date
	switch strings.ToLower(strings.TrimSpace(layout)) {
	case "", StyleMedium:
		return d.Medium
	case StyleShort:
		return d.Short
	case StyleLong:
		return d.Long
	case StyleFull:
		return d.Full
	case StyleTime:
		return d.TimeShort
	case StyleDateTime:
		return strings.NewReplacer("{1}", d.Medium, "{0}", d.TimeShort).Replace(d.DateTime)
	}
	return FromLayout(layout)
}

// tokenLayout matches layouts written only with tokens and separators.
var tokenLayout = regexp.MustCompile(`^[YMDdHhmsA\s.,:/\-]+$`)

// Token and Go layout elements and their CLDR fields, longest first.
var (
	tokenFields = []struct{ from, to string }{
		{"YYYY", "y"}, {"YY", "yy"}, {"MMMM", "MMMM"}, {"MMM", "MMM"}, {"MM", "MM"},
		{"dddd", "EEEE"}, {"ddd", "EEE"}, {"M", "M"}, {"DD", "dd"}, {"D", "d"},
		{"HH", "HH"}, {"hh", "hh"}, {"mm", "mm"}, {"ss", "ss"}, {"A", "a"},
	}
	goFields = []struct{ from, to string }{
		{"January", "MMMM"}, {"Monday", "EEEE"}, {"2006", "y"}, {"Jan", "MMM"}, {"Mon", "EEE"},
		{"PM", "a"}, {"pm", "a"}, {"01", "MM"}, {"02", "dd"}, {"03", "hh"}, {"04", "mm"},
		{"05", "ss"}, {"06", "yy"}, {"15", "HH"}, {"_2", "d"}, {"1", "M"}, {"2", "d"}, {"3", "h"},
	}
)

// FromLayout translates a token layout ("DD.MM.YYYY", "D MMMM YYYY") or a
// Go layout ("02.01.2006") to a CLDR pattern, the way formatDate reads
// them: a layout is tokens when it holds only tokens and separators or
// any of YY, MM, DD, HH, ddd (which Go layouts never hold).
func FromLayout(layout string) string {
	isTokens := tokenLayout.MatchString(layout)
	for _, t := range []string{"YY", "MM", "DD", "HH", "ddd"} {
		isTokens = isTokens || strings.Contains(layout, t)
	}
	fields := goFields
	if isTokens {
		fields = tokenFields
	}
	var b strings.Builder
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			s := lit.String()
			if strings.ContainsFunc(s, isPatternLetter) || strings.Contains(s, "'") {
				b.WriteString("'" + strings.ReplaceAll(s, "'", "''") + "'")
			} else {
				b.WriteString(s)
			}
			lit.Reset()
		}
	}
	for i := 0; i < len(layout); {
		matched := false
		for _, f := range fields {
			if strings.HasPrefix(layout[i:], f.from) {
				flush()
				b.WriteString(f.to)
				i += len(f.from)
				matched = true
				break
			}
		}
		if !matched {
			r := []rune(layout[i:])[0]
			lit.WriteRune(r)
			i += len(string(r))
		}
	}
	flush()
	return b.String()
}

func isPatternLetter(r rune) bool { return (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') }

// field is one piece of a parsed CLDR date pattern: a run of one pattern
// letter, or literal text.
type field struct {
	letter byte // 0 for literal text
	n      int
	text   string
}

// parseDatePattern splits a CLDR date pattern into fields.
func parseDatePattern(p string) []field {
	var out []field
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, field{text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\'':
			if i+1 < len(p) && p[i+1] == '\'' {
				lit.WriteByte('\'')
				i += 2
				continue
			}
			j := i + 1
			for j < len(p) {
				if p[j] == '\'' {
					if j+1 < len(p) && p[j+1] == '\'' {
						lit.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				lit.WriteByte(p[j])
				j++
			}
			i = j + 1
		case isPatternLetter(rune(c)):
			flush()
			n := 1
			for i+n < len(p) && p[i+n] == c {
				n++
			}
			out = append(out, field{letter: c, n: n})
			i += n
		default:
			lit.WriteByte(c)
			i++
		}
	}
	flush()
	return out
}

// Date formats t with layout (see Pattern) in this locale's names and
// digits: "long" is "25. November 2026" in de-DE and "2026年11月25日" in
// ja-JP.
func (l Locale) Date(t time.Time, layout string) string {
	return l.FormatPattern(t, l.Pattern(layout))
}

// FormatPattern formats t with a CLDR date pattern.
func (l Locale) FormatPattern(t time.Time, pattern string) string {
	d := l.data.date
	var b strings.Builder
	num := func(v, width int) {
		s := strconv.Itoa(v)
		for len(s) < width {
			s = "0" + s
		}
		b.WriteString(l.Digits(s))
	}
	for _, f := range parseDatePattern(pattern) {
		switch f.letter {
		case 0:
			b.WriteString(f.text)
		case 'y', 'Y', 'u':
			if f.n == 2 {
				num(t.Year()%100, 2)
			} else {
				num(t.Year(), f.n)
			}
		case 'M', 'L':
			m := int(t.Month()) - 1
			switch {
			case f.n >= 4 && f.letter == 'L':
				b.WriteString(d.MonthsStandalone[m])
			case f.n >= 4:
				b.WriteString(d.Months[m])
			case f.n == 3:
				b.WriteString(d.MonthsAbbr[m])
			default:
				num(m+1, f.n)
			}
		case 'd':
			num(t.Day(), f.n)
		case 'E', 'c', 'e':
			wd := int(t.Weekday())
			switch {
			case (f.letter == 'E' && f.n >= 4) || f.n == 4:
				b.WriteString(d.Days[wd])
			case f.letter != 'E' && f.n <= 2:
				num(wd, f.n)
			default:
				b.WriteString(d.DaysAbbr[wd])
			}
		case 'H':
			num(t.Hour(), f.n)
		case 'k':
			h := t.Hour()
			if h == 0 {
				h = 24
			}
			num(h, f.n)
		case 'h', 'K':
			h := t.Hour() % 12
			if h == 0 && f.letter == 'h' {
				h = 12
			}
			num(h, f.n)
		case 'm':
			num(t.Minute(), f.n)
		case 's':
			num(t.Second(), f.n)
		case 'a', 'b', 'B':
			if t.Hour() < 12 {
				b.WriteString(d.AM)
			} else {
				b.WriteString(d.PM)
			}
		case 'z', 'Z', 'O', 'v', 'V', 'x', 'X':
			name, _ := t.Zone()
			b.WriteString(name)
		case 'G':
			// Gregorian era: left out, as every style but Japanese
			// imperial calendars (not used here) writes it only for BC.
		default:
			b.WriteString(strings.Repeat(string(f.letter), f.n))
		}
	}
	return strings.TrimSpace(b.String())
}
