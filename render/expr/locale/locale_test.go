package locale

import (
	"strings"
	"testing"
	"time"
)

// nb makes test strings readable: "_" is a no-break space (U+00A0) and
// "^" a narrow one (U+202F), as CLDR writes them.
func nb(s string) string {
	return strings.NewReplacer("_", "\u00a0", "^", "\u202f").Replace(s)
}

func TestNumbers(t *testing.T) {
	for _, tc := range []struct {
		tag      string
		x        float64
		decimals int
		want     string
	}{
		{"en-US", 1234.56, 2, "1,234.56"},
		{"de-DE", 1234.56, 2, "1.234,56"},
		{"de-CH", 1234.56, 2, "1'234.56"}, // CLDR 48 writes an ASCII apostrophe
		{"fr-FR", 1234.56, 2, nb("1^234,56")},
		{"en-IN", 1234567, 2, "12,34,567.00"},
		{"hi-IN", 123456789.5, 1, "12,34,56,789.5"},
		{"pl-PL", 1234, 0, "1234"}, // minimum grouping digits 2
		{"pl-PL", 12345, 0, nb("12_345")},
		{"ar-EG", 1234.5, 2, "١٬٢٣٤٫٥٠"},
		{"ar-EG-u-nu-latn", 1234.5, 2, "1,234.50"},
		{"de-DE", 1234.5, -1, "1.234,5"},
		{"de-DE", -0.001, 2, "0,00"},
		{"en-US", -1234.567, 2, "-1,234.57"},
		{"en-US", 1.005, 2, "1.01"},
		{"en-US", 999.995, 2, "1,000.00"},
		{"de-DE", 1e21, 2, "1e+21"},
	} {
		if got := MustParse(tc.tag).Number(tc.x, tc.decimals); got != tc.want {
			t.Errorf("%s Number(%v, %d) = %q, want %q", tc.tag, tc.x, tc.decimals, got, tc.want)
		}
	}
}

func TestCurrency(t *testing.T) {
	for _, tc := range []struct {
		tag, code string
		x         float64
		want      string
	}{
		{"de-DE", "EUR", 1234.56, nb("1.234,56_€")},
		{"en-IE", "EUR", 1234.56, "€1,234.56"},
		{"en-US", "USD", -1234.5, "-$1,234.50"},
		{"en-US", "CHF", 9, nb("CHF_9.00")}, // a word never touches the digits
		{"ja-JP", "JPY", 1234.5, "￥1,235"},  // no minor unit, rounded half up
		{"en-US", "JPY", 1234.5, "¥1,235"},
		{"en-US", "KWD", 1.5, nb("KWD_1.500")}, // three decimals
		{"de-CH", "CHF", 1234.5, nb("CHF_1'234.50")},
		{"fr-CH", "CHF", 1234.5, nb("1'234,50_CHF")},
		{"en-IN", "INR", 1234567, "₹12,34,567.00"},
		{"pl-PL", "PLN", 1234.5, nb("1234,50_zł")},
		{"ar-EG", "EGP", 1234.5, nb("\u200f١٬٢٣٤٫٥٠_ج.م.\u200f")},
		{"de-DE", "", 1234.5, "1.234,50"},
	} {
		if got := MustParse(tc.tag).Currency(tc.x, tc.code); got != tc.want {
			t.Errorf("%s Currency(%v, %s) = %q, want %q", tc.tag, tc.x, tc.code, got, tc.want)
		}
	}
}

func TestPercent(t *testing.T) {
	for _, tc := range []struct {
		tag      string
		x        float64
		decimals int
		want     string
	}{
		{"en-US", 0.19, 0, "19%"},
		{"de-DE", 0.19, 1, nb("19,0_%")},
		{"fr-FR", 0.5, 0, nb("50_%")},
		{"ar-EG", 0.25, 0, "٢٥٪\u061c"},
	} {
		if got := MustParse(tc.tag).Percent(tc.x, tc.decimals); got != tc.want {
			t.Errorf("%s Percent(%v) = %q, want %q", tc.tag, tc.x, got, tc.want)
		}
	}
}

func TestDates(t *testing.T) {
	d := time.Date(2026, 11, 25, 14, 30, 5, 0, time.UTC)
	for _, tc := range []struct{ tag, layout, want string }{
		{"de-DE", "long", "25. November 2026"},
		{"de-DE", "medium", "25.11.2026"},
		{"de-DE", "", "25.11.2026"},
		{"de-DE", "full", "Mittwoch, 25. November 2026"},
		{"de-DE", "time", "14:30"},
		{"ja-JP", "long", "2026年11月25日"},
		{"ja-JP", "full", "2026年11月25日水曜日"},
		{"en-US", "long", "November 25, 2026"},
		{"en-US", "time", nb("2:30^PM")},
		{"fr-FR", "D MMMM YYYY", "25 novembre 2026"},
		{"fr-FR", "dddd D MMMM", "mercredi 25 novembre"},
		{"pl-PL", "long", "25 listopada 2026"}, // genitive: the format form
		{"ru-RU", "MMMM YYYY", "ноября 2026"},
		{"de-DE", "DD.MM.YYYY HH:mm", "25.11.2026 14:30"},
		{"de-DE", "2 January 2006", "25 November 2026"}, // a Go layout
		{"es-ES", "long", "25 de noviembre de 2026"},
		{"ar-EG", "long", "٢٥ نوفمبر ٢٠٢٦"},
		{"ar-EG-u-nu-latn", "long", "25 نوفمبر 2026"},
		{"zh-CN", "full", "2026年11月25日星期三"},
		{"ko-KR", "long", "2026년 11월 25일"},
	} {
		if got := MustParse(tc.tag).Date(d, tc.layout); got != tc.want {
			t.Errorf("%s Date(%q) = %q, want %q", tc.tag, tc.layout, got, tc.want)
		}
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct{ in, tag, data string }{
		{"de-DE", "de-DE", "de"},
		{"de_ch", "de-CH", "de-CH"},
		{"en", "en", "en"},
		{"zh-TW", "zh-TW", "zh-Hant"},
		{"zh-CN", "zh-CN", "zh-Hans"},
		{"pt-BR", "pt-BR", "pt"},
		{"pt-PT", "pt-PT", "pt-PT"},
		{"sr-Latn-RS", "sr-Latn-RS", "sr-Latn"},
		{"es-MX", "es-MX", "es-MX"},
	} {
		l, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if l.String() != tc.tag || l.Data() != tc.data {
			t.Errorf("Parse(%q) = %s with %s's data, want %s with %s's", tc.in, l, l.Data(), tc.tag, tc.data)
		}
	}
	for _, bad := range []string{"", "xx", "not a tag", "de-DE-u-nu-thai", "tlh", strings.Repeat("a", 100)} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
}

func TestFallbacks(t *testing.T) {
	got := strings.Join(MustParse("zh-Hant-TW").Fallbacks(), " ")
	if want := "zh-Hant-TW zh-Hant zh-TW zh"; got != want {
		t.Errorf("Fallbacks = %q, want %q", got, want)
	}
	if got := strings.Join(MustParse("de-CH").Fallbacks(), " "); got != "de-CH de" {
		t.Errorf("Fallbacks(de-CH) = %q", got)
	}
}

func TestExcelFormats(t *testing.T) {
	for _, tc := range []struct{ tag, kind, arg, want string }{
		{"de-DE", "currency", "EUR", `#,##0.00"_€";-#,##0.00"_€"`},
		{"en-IE", "currency", "EUR", `"€"#,##0.00;-"€"#,##0.00`},
		{"ja-JP", "currency", "JPY", `"￥"#,##0;-"￥"#,##0`},
		{"en-US", "currency", "CHF", `"CHF_"#,##0.00;-"CHF_"#,##0.00`},
		{"de-DE", "percent", "1", `0.0"_"%`},
		{"en-US", "percent", "0", `0%`},
		{"de-DE", "date", "long", `[$-407]d. mmmm yyyy`},
		{"de-DE", "date", "medium", `dd.mm.yyyy`},
		{"ja-JP", "date", "long", `yyyy"年"m"月"d"日"`},
		{"en-US", "date", "full", `[$-409]dddd, mmmm d, yyyy`},
		{"en-US", "date", "time", `h:mm"^"AM/PM`},
	} {
		l := MustParse(tc.tag)
		var got string
		switch tc.kind {
		case "currency":
			got = l.ExcelCurrency(tc.arg)
		case "percent":
			got = l.ExcelPercent(int(tc.arg[0] - '0'))
		case "date":
			got = l.ExcelDate(tc.arg)
		}
		if want := nb(tc.want); got != want {
			t.Errorf("%s %s:%s = %q, want %q", tc.tag, tc.kind, tc.arg, got, want)
		}
	}
}

func TestEveryLocaleFormats(t *testing.T) {
	d := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, e := range table {
		l := MustParse(e.tag)
		for _, s := range []string{l.Number(-1234567.891, 2), l.Currency(1234.5, "EUR"), l.Percent(0.5, 0), l.Date(d, "full"), l.Date(d, "datetime")} {
			if s == "" || strings.ContainsAny(s, "#¤") {
				t.Errorf("%s formats %q", e.tag, s)
			}
		}
	}
}

func BenchmarkCurrency(b *testing.B) {
	l := MustParse("de-DE")
	for i := 0; b.Loop(); i++ {
		_ = l.Currency(float64(i)+0.5, "EUR")
	}
}

func BenchmarkDate(b *testing.B) {
	l := MustParse("de-DE")
	d := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	for b.Loop() {
		_ = l.Date(d, "long")
	}
}
