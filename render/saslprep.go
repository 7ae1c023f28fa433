package render

import (
	"fmt"
	"unicode/utf8"

	"golang.org/x/text/unicode/bidi"
	"golang.org/x/text/unicode/norm"
)

// saslprep prepares a password of the AES-256 security handler as ISO
// 32000-2 (7.6.4.3.3) asks: the SASLprep profile of stringprep (RFC 4013,
// RFC 3454) with the Normalize and BiDi steps, as a query (unassigned code
// points are allowed, so a password with a character newer than Unicode
// 3.2 still works). Without it a password holding a soft hyphen, a
// no-break space or a compatibility character (U+2168 ROMAN NUMERAL NINE,
// U+FB01 the "fi" ligature) would open the file only when typed byte for
// byte, while a reader that prepares what the user types looks for the
// prepared form. The error names the first character refused.
func saslprep(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("is not valid UTF-8")
	}
	// 1. Map: B.1 to nothing, then C.1.2 to SPACE.
	mapped := make([]rune, 0, len(s))
	for _, r := range s {
		switch {
		case mappedToNothing(r):
		case nonASCIISpace(r):
			mapped = append(mapped, ' ')
		default:
			mapped = append(mapped, r)
		}
	}
	// 2. Normalize: NFKC.
	out := norm.NFKC.String(string(mapped))
	// 3. Prohibit, and gather what the bidi rule needs.
	var randAL, l bool
	var first, last rune
	for i, r := range out {
		if prohibited(r) {
			return "", fmt.Errorf("contains U+%04X, which a PDF password may not contain (SASLprep, RFC 4013)", r)
		}
		if i == 0 {
			first = r
		}
		last = r
		switch bidiClass(r) {
		case bidi.R, bidi.AL:
			randAL = true
		case bidi.L:
			l = true
		}
	}
	// 4. Bidi (RFC 3454 section 6): right-to-left text may not mix with
	// left-to-right text and must begin and end with a right-to-left
	// character.
	if randAL {
		if l {
			return "", fmt.Errorf("mixes right-to-left and left-to-right characters, which a PDF password may not (SASLprep, RFC 3454 section 6)")
		}
		if c := bidiClass(first); c != bidi.R && c != bidi.AL {
			return "", fmt.Errorf("holds right-to-left characters but does not begin with one (SASLprep, RFC 3454 section 6)")
		}
		if c := bidiClass(last); c != bidi.R && c != bidi.AL {
			return "", fmt.Errorf("holds right-to-left characters but does not end with one (SASLprep, RFC 3454 section 6)")
		}
	}
	return out, nil
}

func bidiClass(r rune) bidi.Class {
	p, _ := bidi.LookupRune(r)
	return p.Class()
}

// mappedToNothing is RFC 3454 table B.1.
func mappedToNothing(r rune) bool {
	switch r {
	case 0x00AD, 0x034F, 0x1806, 0x180B, 0x180C, 0x180D, 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF:
		return true
	}
	return r >= 0xFE00 && r <= 0xFE0F
}

// nonASCIISpace is RFC 3454 table C.1.2.
func nonASCIISpace(r rune) bool {
	switch r {
	case 0x00A0, 0x1680, 0x202F, 0x205F, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200B
}

// prohibited is RFC 4013 section 2.3: RFC 3454 tables C.1.2 and C.2.1
// to C.9.
func prohibited(r rune) bool {
	switch {
	case nonASCIISpace(r):
		return true // C.1.2 (mapped to SPACE before; only NFKC could bring one back)
	case r < 0x20 || r == 0x7F: // C.2.1
		return true
	case r >= 0x80 && r <= 0x9F: // C.2.2
		return true
	case r >= 0xE000 && r <= 0xF8FF, r >= 0xF0000 && r <= 0xFFFFD, r >= 0x100000 && r <= 0x10FFFD: // C.3
		return true
	case r >= 0xFDD0 && r <= 0xFDEF, r&0xFFFE == 0xFFFE: // C.4
		return true
	case r >= 0xD800 && r <= 0xDFFF: // C.5
		return true
	case r >= 0xFFF9 && r <= 0xFFFD: // C.6, and FFF9-FFFC of C.2.2
		return true
	case r >= 0x2FF0 && r <= 0x2FFB: // C.7
		return true
	case r >= 0x202A && r <= 0x202E, r >= 0x206A && r <= 0x206F: // C.8, and 206A-206F of C.2.2
		return true
	case r == 0xE0001, r >= 0xE0020 && r <= 0xE007F: // C.9
		return true
	case r >= 0x1D173 && r <= 0x1D17A: // C.2.2
		return true
	}
	switch r {
	case 0x06DD, 0x070F, 0x180E, 0x200C, 0x200D, 0x2028, 0x2029, 0x2060, 0x2061, 0x2062, 0x2063, 0xFEFF: // C.2.2
		return true
	case 0x0340, 0x0341, 0x200E, 0x200F: // C.8
		return true
	}
	return false
}
