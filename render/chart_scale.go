package render

import (
	"math"
	"strconv"
	"strings"
)

// chartScale maps values to an axis: lo and hi are the axis ends, ticks
// the values labelled, at round steps (1, 2, 2.5 or 5 times a power of ten).
type chartScale struct {
	lo, hi   float64
	step     float64
	ticks    []float64
	decimals int // decimals the step needs
}

// niceStep rounds a raw step up to 1, 2, 2.5, 5 or 10 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 1
	}
	exp := math.Floor(math.Log10(raw))
	pow := math.Pow(10, exp)
	f := raw / pow
	switch {
	case f <= 1:
		f = 1
	case f <= 2:
		f = 2
	case f <= 2.5:
		f = 2.5
	case f <= 5:
		f = 5
	default:
		f = 10
	}
	return f * pow
}

// newScale makes a scale over [lo, hi] with about n ticks (at least 2).
// fixedLo and fixedHi (not NaN) are kept as the ends; zero is included
// when withZero is set (bars and areas grow from zero).
func newScale(lo, hi float64, n int, withZero bool, fixedLo, fixedHi float64) chartScale {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		lo, hi = 0, 1
	}
	if withZero {
		lo, hi = min(lo, 0), max(hi, 0)
	}
	if !math.IsNaN(fixedLo) {
		lo = fixedLo
	}
	if !math.IsNaN(fixedHi) {
		hi = fixedHi
	}
	if hi < lo {
		lo, hi = hi, lo
	}
	if hi-lo < 1e-12*max(math.Abs(lo), math.Abs(hi), 1) {
		// One value: a range around it.
		d := max(math.Abs(hi)*0.1, 1)
		if lo >= 0 && withZero {
			hi = lo + d
		} else {
			lo, hi = lo-d, hi+d
		}
	}
	n = min(max(n, 2), 12)
	step := niceStep((hi - lo) / float64(n-1))
	s := chartScale{step: step}
	s.lo, s.hi = lo, hi
	if math.IsNaN(fixedLo) {
		s.lo = math.Floor(lo/step+1e-9) * step
	}
	if math.IsNaN(fixedHi) {
		s.hi = math.Ceil(hi/step-1e-9) * step
	}
	first := math.Ceil(s.lo/step-1e-9) * step
	for i := 0; i <= 50; i++ {
		v := first + float64(i)*step
		if v > s.hi+step*1e-9 {
			break
		}
		s.ticks = append(s.ticks, v)
	}
	s.decimals = stepDecimals(step)
	p := math.Pow10(s.decimals)
	for i, v := range s.ticks {
		// 0.6, not 0.6000000000000001; 0, not -0.
		s.ticks[i] = math.Round(v*p)/p + 0
	}
	return s
}

// fitScale picks the scale over [lo, hi] for an axis length long whose
// ticks stay at least space apart: of those with at least four ticks
// (fewer when the axis is short), the one that wastes the least of the
// axis (0 to 122,000 goes to 125,000 in steps of 25,000, not to 200,000),
// then the one with more ticks.
func fitScale(lo, hi, length, space float64, withZero bool, fixedLo, fixedHi float64) chartScale {
	most := min(max(int(length/space)+1, 2), 12)
	want := min(most, 4)
	var best chartScale
	found := false
	for n := 2; n <= most+1; n++ {
		s := newScale(lo, hi, n, withZero, fixedLo, fixedHi)
		if len(s.ticks) > 1 && length/float64(len(s.ticks)-1) < space {
			continue
		}
		better := !found
		if found {
			enough, bestEnough := len(s.ticks) >= want, len(best.ticks) >= want
			span, bestSpan := s.hi-s.lo, best.hi-best.lo
			switch {
			case enough != bestEnough:
				better = enough
			case math.Abs(span-bestSpan) > 1e-9*bestSpan:
				better = span < bestSpan
			default:
				better = len(s.ticks) > len(best.ticks)
			}
		}
		if better {
			best, found = s, true
		}
	}
	if !found {
		return newScale(lo, hi, 2, withZero, fixedLo, fixedHi)
	}
	return best
}

// stepDecimals is how many decimals labels need to tell ticks step apart.
func stepDecimals(step float64) int {
	for d := 0; d < 10; d++ {
		p := math.Pow10(d)
		if math.Abs(step*p-math.Round(step*p)) < 1e-6*step*p {
			return d
		}
	}
	return 10
}

// pos maps v to [0, 1] along the axis.
func (s chartScale) pos(v float64) float64 {
	if s.hi == s.lo {
		return 0
	}
	return (v - s.lo) / (s.hi - s.lo)
}

// tickLabel formats an axis value in the template's locale: the axis's
// format when it has one (currency, percent), else a number with the
// decimals the step needs.
func tickLabel(v float64, decimals int, a chartAxis, f *formatting) string {
	if a.formatSet {
		cf := a.format
		switch cf.kind {
		case kindNumber:
			if cf.decimals < 0 {
				cf.decimals = decimals
			}
		case kindPercent:
			// A step of 0.05 is 5%: two decimals fewer as a percentage.
			if d := max(decimals-2, 0); d > cf.decimals {
				cf.decimals = d
			}
		case kindCurrency:
			return currencyTick(v, decimals, cf)
		}
		return cf.display(v)
	}
	if !f.loc.IsZero() {
		return f.loc.Number(v, decimals)
	}
	s, _ := formatNumber(defaultFormatting, []any{v, decimals})
	return s.(string)
}

// currencyTick formats a currency tick with the decimals the step needs
// (whole euros on a scale of thousands), the symbol placed as the locale
// places it.
func currencyTick(v float64, decimals int, cf cellFormat) string {
	d := min(decimals, max(cf.decimals, 0))
	if !cf.loc.IsZero() {
		return cf.loc.CurrencyWith(v, cf.currency, d)
	}
	full := legacyCurrency(v, cf.currency)
	if d >= cf.decimals {
		return full
	}
	// legacyCurrency writes two decimals: drop the ones the step does not need.
	num := groupDigits(math.Abs(v), d)
	sign := ""
	if v < 0 && strings.Trim(num, "0.,") != "" {
		sign = "-"
	}
	if sym, ok := currencySymbols[cf.currency]; ok {
		return sign + sym + num
	}
	if cf.currency == "" {
		return sign + num
	}
	return sign + num + " " + cf.currency
}

// valueLabel formats a single value (a bar's or a slice's) like the
// value axis's ticks, with up to two decimals.
func valueLabel(v float64, a chartAxis, f *formatting) string {
	d := 0
	if v != math.Trunc(v) {
		d = 2
		if s := strconv.FormatFloat(math.Abs(v), 'f', -1, 64); strings.Contains(s, ".") {
			d = min(len(s)-strings.Index(s, ".")-1, 2)
		}
	}
	switch {
	case a.formatSet && a.format.kind == kindPercent:
		d = max(d-2, 0)
	case a.formatSet && a.format.kind == kindCurrency && d > 0:
		d = 10 // all the currency's decimals: €91,628.50, not €91,628.5
	}
	return tickLabel(v, d, a, f)
}
