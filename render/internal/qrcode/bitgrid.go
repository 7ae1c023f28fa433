// go-qrcode
// Copyright 2014 Tom Harwood

package qrcode

import "math/bits"

// Symbols of versions 1 to 11 (up to 61 modules on a side, an invoice's
// payment QR code among them) are also held as bit strings, one uint64 per
// row (bit x is module x) and one per column (bit y is module y), so that
// applying a mask and scoring the penalty rules take a few word operations
// per line instead of a few per module. Larger versions use the byte grid
// (applyMask, penaltyScore); both give upstream's scores.

// maxBitSize is the largest symbol held as bit strings.
const maxBitSize = 64

// bitLayout is the bit-string form of a layout.
type bitLayout struct {
	baseRows, baseCols []uint64 // base, by row and by column
	dataRows, dataCols []uint64 // isData, by row and by column
	pathXY             []uint16 // path, as x | y<<8
	format             [30]struct{ x, y, bit uint8 }
}

func newBitLayout(l *layout) *bitLayout {
	n := l.size
	b := &bitLayout{
		baseRows: make([]uint64, n), baseCols: make([]uint64, n),
		dataRows: make([]uint64, n), dataCols: make([]uint64, n),
		pathXY: make([]uint16, len(l.path)),
	}
	for y := range n {
		for x := range n {
			i := y*n + x
			b.baseRows[y] |= uint64(l.base[i]) << x
			b.baseCols[x] |= uint64(l.base[i]) << y
			b.dataRows[y] |= uint64(l.isData[i]) << x
			b.dataCols[x] |= uint64(l.isData[i]) << y
		}
	}
	for k, i := range l.path {
		b.pathXY[k] = uint16(int(i)%n | (int(i)/n)<<8)
	}
	for k, f := range l.format {
		b.format[k].x = uint8(int(f.index) % n)
		b.format[k].y = uint8(int(f.index) / n)
		b.format[k].bit = f.bit
	}
	return b
}

// maskRowBits[mask][y%12] has bit x set where mask inverts module (x, y);
// maskColBits[mask][x%6] has bit y set.
var maskRowBits, maskColBits = func() (r [8][12]uint64, c [8][6]uint64) {
	for mask := range 8 {
		for i := range maxBitSize {
			for y := range 12 {
				r[mask][y] |= uint64(maskPatterns[mask][y][i%6]) << i
			}
			for x := range 6 {
				c[mask][x] |= uint64(maskPatterns[mask][i%12][x]) << i
			}
		}
	}
	return r, c
}()

// chooseMaskBits places the codewords cw, scores the 8 masks and writes the
// best symbol to modules (size*size bytes); it returns the mask.
func (l *layout) chooseMaskBits(cw []byte, level RecoveryLevel, modules []byte) int {
	b := l.bits
	n := l.size
	var rows, cols, mrows, mcols, best [maxBitSize]uint64
	copy(rows[:], b.baseRows)
	copy(cols[:], b.baseCols)
	path := b.pathXY[:len(cw)*8]
	for i, c := range cw {
		for k, xy := range path[i*8 : i*8+8] {
			bit := uint64(c>>(7-k)) & 1
			x, y := xy&0xff, xy>>8
			rows[y] |= bit << x
			cols[x] |= bit << y
		}
	}

	bestMask, penalty := 0, 0
	for mask := range 8 {
		mr, mc := &maskRowBits[mask], &maskColBits[mask]
		for y := range n {
			mrows[y] = rows[y] ^ (mr[y%12] & b.dataRows[y])
		}
		for x := range n {
			mcols[x] = cols[x] ^ (mc[x%6] & b.dataCols[x])
		}
		f := formatBitSequence[formatIDs[level]|mask].regular
		for _, m := range b.format {
			v := uint64(f>>m.bit) & 1
			mrows[m.y] |= v << m.x
			mcols[m.x] |= v << m.y
		}
		p := penaltyBits(mrows[:n], mcols[:n], n)
		if mask == 0 || p < penalty {
			bestMask, penalty = mask, p
			best = mrows
		}
	}

	for y := range n {
		row := modules[y*n : y*n+n]
		r := best[y]
		for x := range row {
			row[x] = byte(r>>x) & 1
		}
	}
	return bestMask
}

// penaltyBits is penaltyScore for a symbol given by rows and columns.
func penaltyBits(rows, cols []uint64, n int) int {
	valid := uint64(1)<<n - 1
	p1, p2, p3, dark := 0, 0, 0, 0
	var above uint64
	for y, r := range rows {
		dark += bits.OnesCount64(r)
		p1 += runPenalty(r, valid)
		p3 += finderPenalty(r, n, valid)
		if y > 0 {
			// Penalty 2: module x equals x-1, and both equal the row above.
			v := ^(above ^ r)
			h := ^(r ^ (r << 1))
			p2 += bits.OnesCount64(v & (v << 1) & h & valid &^ 1)
		}
		above = r
	}
	for _, c := range cols {
		p1 += runPenalty(c, valid)
		p3 += finderPenalty(c, n, valid)
	}

	return p1 + p2*penaltyWeight2 + p3 + penalty4(n, dark)
}

// runPenalty is upstream's penalty 1 for one line: a run of L >= 6 modules
// of one colour scores 4 + (L-6), which is the number of modules ending 6
// or more alike plus 3 for each run.
func runPenalty(line, valid uint64) int {
	e := ^(line ^ (line << 1)) & valid &^ 1 // module x equals x-1
	six := e & (e << 1) & (e << 2) & (e << 3) & (e << 4)
	runs := six &^ (six << 1)
	return bits.OnesCount64(six) + (penaltyWeight1)*bits.OnesCount64(runs)
}

// finderPenalty is upstream's penalty 3 for one line. Upstream shifts the
// modules through an 11-bit buffer (light before the line) and scores 40
// when it holds light×4 1011101 or 1011101 light×4, or, at the last module,
// when its low 7 bits are 1011101; after scoring it sets the buffer to
// 0xFF. Until then the buffer holds the line's modules, so the first match
// is the first position where the modules match. After a match at x the
// buffer's bits before x are 0001111111 and bit x is 1: no match can use
// the former (they start 1 then 0 or 0000, or end in 1011101 for the last 7
// modules, and 00011111111 shifted has none of these), so the next match
// is the first of the line with module x set dark whose window starts at x
// or later. Matches are few, so this loops over them, not over modules.
func finderPenalty(line uint64, n int, valid uint64) int {
	penalty := 0
	allowed := valid // where a match (of 11 modules) may end
	last := -1       // the last match
	var core uint64
	for {
		core = line & ^(line << 1) & (line << 2) & (line << 3) & (line << 4) & ^(line << 5) & (line << 6) // 1011101 ends at x
		if core == 0 {
			return penalty
		}
		lightBefore := ^((line << 7) | (line << 8) | (line << 9) | (line << 10))
		lightAfter := ^(line | (line << 1) | (line << 2) | (line << 3))
		matches := ((core & lightBefore) | ((core << 4) & lightAfter)) & allowed
		if matches == 0 {
			break
		}
		x := bits.TrailingZeros64(matches)
		penalty += penaltyWeight3
		line |= 1 << x
		allowed = valid &^ (1<<(x+10) - 1)
		last = x
	}
	// The end of the line: 1011101 in its last 7 modules, unless the
	// last module ended a match or the 7 modules start before the last
	// match.
	if core>>(n-1)&1 != 0 && n-7 >= last {
		penalty += penaltyWeight3
	}
	return penalty
}
