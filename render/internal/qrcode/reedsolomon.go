// go-qrcode
// Copyright 2014 Tom Harwood

package qrcode

// Reed-Solomon error correction over GF(2^8), modulo
// x^8 + x^4 + x^3 + x^2 + 1, as QR Codes use it.
//
// Upstream divided polynomials held in freshly allocated slices at every
// step; this computes the same remainder (the error correction codewords)
// with a shift register over log/antilog tables, writing into the caller's
// slice.

// gfExp[i] is a^i for i in 0..509 (the table repeats every 255, so that
// a^(log x + log y) needs no modulo); gfLog[x] is log_a x for x in 1..255.
var gfExp, gfLog = func() (exp [510]byte, log [256]byte) {
	x := 1
	for i := range 255 {
		exp[i] = byte(x)
		exp[i+255] = byte(x)
		log[x] = byte(i)
		x <<= 1
		if x&0x100 != 0 {
			x ^= 0x11d
		}
	}
	return exp, log
}()

// gfMul returns a * b.
func gfMul(a, b byte) byte {
	if a == 0 || b == 0 {
		return 0
	}
	return gfExp[int(gfLog[a])+int(gfLog[b])]
}

// maxECCodewords is the most error correction codewords of a block in any
// version.
const maxECCodewords = 30

// rsGenerators[d] holds the logs of the coefficients of the generator
// polynomial of degree d, (x + a^0)(x + a^1)...(x + a^(d-1)), highest
// degree first and without its leading 1 (all of them are non-zero).
var rsGenerators = func() (g [maxECCodewords + 1][]byte) {
	for d := 2; d <= maxECCodewords; d++ {
		// poly[i] is the coefficient of x^(d-i); poly[0] = 1.
		poly := make([]byte, d+1)
		poly[0] = 1
		for i := range d {
			root := gfExp[i]
			// Multiply by (x + root).
			for j := i + 1; j >= 1; j-- {
				poly[j] ^= gfMul(poly[j-1], root)
			}
		}
		logs := make([]byte, d)
		for i, c := range poly[1:] {
			if c == 0 {
				panic("qrcode: zero generator coefficient")
			}
			logs[i] = gfLog[c]
		}
		g[d] = logs
	}
	return g
}()

// rsEncode writes the len(ec) error correction codewords of data to ec.
func rsEncode(data, ec []byte) {
	gen := rsGenerators[len(ec)]
	clear(ec)
	last := len(ec) - 1
	for _, b := range data {
		factor := b ^ ec[0]
		copy(ec, ec[1:])
		ec[last] = 0
		if factor == 0 {
			continue
		}
		lf := int(gfLog[factor])
		for i, lg := range gen {
			ec[i] ^= gfExp[lf+int(lg)]
		}
	}
}
