package locale

//go:generate go run ./internal/cldrgen -cldr /tmp/cldr -out tables.go

// numbers are a locale's number symbols and patterns in one numbering
// system, as CLDR gives them.
type numbers struct {
	Digits                                string // the ten digits; "" for 0-9
	Decimal, Group, Percent, Minus        string
	DecimalPattern, PercentPattern        string
	CurrencyPattern, CurrencyAlphaPattern string // the second when the symbol is a letter next to the number; "" if the same
	MinGroup                              int    // digits an integer needs before it is grouped (2: 1234 but 12 345)
}

// dates are a locale's Gregorian month and weekday names and patterns.
type dates struct {
	Months, MonthsAbbr, MonthsStandalone [12]string
	Days, DaysAbbr                       [7]string // Sunday first
	AM, PM                               string
	Full, Long, Medium, Short            string // date patterns
	TimeShort, TimeMedium                string
	DateTime                             string // "{1}, {0}": date {1}, time {0}
}

// currency is a currency's symbol in one locale.
type currency struct{ Code, Symbol string }

// entry is one locale's data: its default numbering system, Latin digits
// when that is another system, its calendar and its currency symbols,
// sorted by code.
type entry struct {
	tag        string
	num, latn  *numbers
	date       *dates
	currencies []currency
}
