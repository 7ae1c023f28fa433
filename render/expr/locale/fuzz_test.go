package locale

import (
	"testing"
	"time"
)

// FuzzFormat parses any tag and formats any number and date layout with
// it: it must never panic, and a tag that parses always formats.
func FuzzFormat(f *testing.F) {
	for _, seed := range []string{"de-DE", "ar-EG-u-nu-latn", "zh-Hant-TW", "en-IN", "x-private", "de-u-nu-thai", "sr-Latn-BA"} {
		f.Add(seed, 1234.5, "long", "EUR")
	}
	f.Add("ja", -0.0049, "YYYY年MMMM'D'", "JPY")
	f.Add("fr-CH", 1e300, "2006-01-02 15:04 PM", "")
	f.Fuzz(func(t *testing.T, tag string, x float64, layout, code string) {
		l, err := Parse(tag)
		if err != nil {
			return
		}
		d := time.Unix(int64(x)%(1<<40), 0).UTC()
		for _, s := range []string{l.Number(x, 2), l.Number(x, -1), l.Percent(x, 1), l.Currency(x, code), l.Date(d, layout)} {
			_ = s
		}
		_ = l.ExcelCurrency(code) + l.ExcelDate(layout) + l.ExcelPercent(2) + l.ExcelNumber(3)
	})
}
