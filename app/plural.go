package app

import "strconv"

// Plural writes n and a noun, the noun plural unless n is 1: "1 API key",
// "3 API keys". The plural is the noun plus "s" unless many gives it.
func Plural(n int64, noun string, many ...string) string {
	word := noun
	if n != 1 {
		word = noun + "s"
		if len(many) > 0 {
			word = many[0]
		}
	}
	return GroupDigits(n) + " " + word
}

// GroupDigits writes n with thousands separated by commas: 12,500.
func GroupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return s
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
