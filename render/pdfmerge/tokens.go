package pdfmerge

import "bytes"

// countTokens counts the PDF tokens of b outside streams, without parsing
// it: names, numbers, keywords and references' parts, strings, and the
// brackets of arrays and dictionaries. It is an upper bound of the values
// pdfcpu would build from b, found in one pass over the bytes, so a file
// or an object stream made of millions of tiny values is refused before
// pdfcpu spends seconds and hundreds of megabytes on it. It stops counting
// past limit. Stream data (after the keyword "stream", up to
// "endstream") is skipped; comments are not counted.
func countTokens(b []byte, limit int) int {
	n := 0
	for i := 0; i < len(b) && n <= limit; {
		switch c := b[i]; {
		case isSpace(c):
			i++
		case c == '%':
			for i < len(b) && b[i] != '\n' && b[i] != '\r' {
				i++
			}
		case c == '(':
			n++
			i = skipString(b, i)
		case c == '<' && i+1 < len(b) && b[i+1] == '<', c == '>' && i+1 < len(b) && b[i+1] == '>':
			n++
			i += 2
		case c == '<':
			n++
			if j := bytes.IndexByte(b[i:], '>'); j >= 0 {
				i += j + 1
			} else {
				i = len(b)
			}
		case c == '/':
			n++
			i++
			for i < len(b) && !isSpace(b[i]) && !isDelimiter(b[i]) {
				i++
			}
		case isDelimiter(c): // [ ] { } ) >
			n++
			i++
		default:
			n++
			j := i
			for j < len(b) && !isSpace(b[j]) && !isDelimiter(b[j]) {
				j++
			}
			if string(b[i:j]) == "stream" {
				if k := bytes.Index(b[j:], []byte("endstream")); k >= 0 {
					j += k + len("endstream")
				} else {
					j = len(b)
				}
			}
			i = j
		}
	}
	return n
}

// skipString returns the index after the literal string starting at
// b[i] == '(': parentheses balance, a backslash escapes the next byte.
func skipString(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return len(b)
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0
}

func isDelimiter(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}
