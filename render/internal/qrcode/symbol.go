// go-qrcode
// Copyright 2014 Tom Harwood

package qrcode

import "sync"

// A symbol is a flat grid of size*size modules, row by row, without the
// quiet zone: module (x, y) is at y*size+x, 1 dark and 0 light.
//
// Upstream built each of the 8 candidate symbols from scratch as [][]bool
// (with the quiet zone and a second [][]bool of used modules), walking the
// data path once per mask. The function patterns and the data path depend
// only on the version, so they are computed once per version here (layout)
// and each mask is applied to a copy of one unmasked symbol.

// layout is what every symbol of one version has in common.
type layout struct {
	size int

	// base holds the function patterns (finder, separator, alignment,
	// timing, version information, the dark module) with the format
	// information left light.
	base []byte

	// isData is 1 for a data module, 0 for a function module.
	isData []byte

	// path lists the data modules in the order upstream's addData fills
	// them, as indexes into the grid.
	path []int32

	// format lists where each bit of the 15-bit format information goes, in
	// upstream's order: module index and bit number (0 = least significant).
	format [30]formatModule

	// bits is the layout as bit strings, for versions up to 11.
	bits *bitLayout
}

type formatModule struct {
	index int32
	bit   uint8
}

var (
	layouts     [41]*layout
	layoutsOnce [41]sync.Once
)

// layoutOf returns the layout of version (1–40).
func layoutOf(version int) *layout {
	layoutsOnce[version].Do(func() { layouts[version] = newLayout(version) })
	return layouts[version]
}

const finderPatternSize = 7

var (
	alignmentPatternCenter = [][]int{
		{}, // Version 0 doesn't exist.
		{}, // Version 1 doesn't use alignment patterns.
		{6, 18},
		{6, 22},
		{6, 26},
		{6, 30},
		{6, 34},
		{6, 22, 38},
		{6, 24, 42},
		{6, 26, 46},
		{6, 28, 50},
		{6, 30, 54},
		{6, 32, 58},
		{6, 34, 62},
		{6, 26, 46, 66},
		{6, 26, 48, 70},
		{6, 26, 50, 74},
		{6, 30, 54, 78},
		{6, 30, 56, 82},
		{6, 30, 58, 86},
		{6, 34, 62, 90},
		{6, 28, 50, 72, 94},
		{6, 26, 50, 74, 98},
		{6, 30, 54, 78, 102},
		{6, 28, 54, 80, 106},
		{6, 32, 58, 84, 110},
		{6, 30, 58, 86, 114},
		{6, 34, 62, 90, 118},
		{6, 26, 50, 74, 98, 122},
		{6, 30, 54, 78, 102, 126},
		{6, 26, 52, 78, 104, 130},
		{6, 30, 56, 82, 108, 134},
		{6, 34, 60, 86, 112, 138},
		{6, 30, 58, 86, 114, 142},
		{6, 34, 62, 90, 118, 146},
		{6, 30, 54, 78, 102, 126, 150},
		{6, 24, 50, 76, 102, 128, 154},
		{6, 28, 54, 80, 106, 132, 158},
		{6, 32, 58, 84, 110, 136, 162},
		{6, 26, 54, 82, 110, 138, 166},
		{6, 30, 58, 86, 114, 142, 170},
	}

	finderPattern = [][]byte{
		{1, 1, 1, 1, 1, 1, 1},
		{1, 0, 0, 0, 0, 0, 1},
		{1, 0, 1, 1, 1, 0, 1},
		{1, 0, 1, 1, 1, 0, 1},
		{1, 0, 1, 1, 1, 0, 1},
		{1, 0, 0, 0, 0, 0, 1},
		{1, 1, 1, 1, 1, 1, 1},
	}

	finderPatternHorizontalBorder = [][]byte{
		{0, 0, 0, 0, 0, 0, 0, 0},
	}

	finderPatternVerticalBorder = [][]byte{
		{0},
		{0},
		{0},
		{0},
		{0},
		{0},
		{0},
		{0},
	}

	alignmentPattern = [][]byte{
		{1, 1, 1, 1, 1},
		{1, 0, 0, 0, 1},
		{1, 0, 1, 0, 1},
		{1, 0, 0, 0, 1},
		{1, 1, 1, 1, 1},
	}
)

// layoutBuilder places the function patterns the way upstream's
// buildRegularSymbol did, recording which modules are used.
type layoutBuilder struct {
	*layout
	used []bool
}

func (m *layoutBuilder) set(x, y int, v byte) {
	i := y*m.size + x
	m.base[i] = v
	m.used[i] = true
}

func (m *layoutBuilder) empty(x, y int) bool { return !m.used[y*m.size+x] }

func (m *layoutBuilder) set2dPattern(x, y int, v [][]byte) {
	for j, row := range v {
		for i, value := range row {
			m.set(x+i, y+j, value)
		}
	}
}

func newLayout(version int) *layout {
	size := 21 + (version-1)*4
	m := &layoutBuilder{
		layout: &layout{size: size, base: make([]byte, size*size), isData: make([]byte, size*size)},
		used:   make([]bool, size*size),
	}

	// Finder patterns: top left, top right, bottom left.
	fpSize := finderPatternSize
	fp := finderPattern
	m.set2dPattern(0, 0, fp)
	m.set2dPattern(0, fpSize, finderPatternHorizontalBorder)
	m.set2dPattern(fpSize, 0, finderPatternVerticalBorder)
	m.set2dPattern(size-fpSize, 0, fp)
	m.set2dPattern(size-fpSize-1, fpSize, finderPatternHorizontalBorder)
	m.set2dPattern(size-fpSize-1, 0, finderPatternVerticalBorder)
	m.set2dPattern(0, size-fpSize, fp)
	m.set2dPattern(0, size-fpSize-1, finderPatternHorizontalBorder)
	m.set2dPattern(fpSize, size-fpSize-1, finderPatternVerticalBorder)

	// Alignment patterns.
	for _, x := range alignmentPatternCenter[version] {
		for _, y := range alignmentPatternCenter[version] {
			if !m.empty(x, y) {
				continue
			}
			m.set2dPattern(x-2, y-2, alignmentPattern)
		}
	}

	// Timing patterns.
	value := byte(1)
	for i := fpSize + 1; i < size-fpSize; i++ {
		m.set(i, fpSize-1, value)
		m.set(fpSize-1, i, value)
		value ^= 1
	}

	// Format information: the modules are reserved here and set per mask.
	n := 0
	format := func(x, y, bit int) {
		m.set(x, y, 0)
		m.format[n] = formatModule{index: int32(y*size + x), bit: uint8(bit)}
		n++
	}
	// Bits 0-7, under the top right finder pattern.
	for i := 0; i <= 7; i++ {
		format(size-i-1, fpSize+1, i)
	}
	// Bits 0-5, right of the top left finder pattern.
	for i := 0; i <= 5; i++ {
		format(fpSize+1, i, i)
	}
	// Bits 6-8 on the corner of the top left finder pattern.
	format(fpSize+1, fpSize, 6)
	format(fpSize+1, fpSize+1, 7)
	format(fpSize, fpSize+1, 8)
	// Bits 9-14 on the underside of the top left finder pattern.
	for i := 9; i <= 14; i++ {
		format(14-i, fpSize+1, i)
	}
	// Bits 8-14 on the right side of the bottom left finder pattern.
	for i := 8; i <= 14; i++ {
		format(fpSize+1, size-fpSize+i-8, i)
	}
	// Always dark symbol.
	m.set(fpSize+1, size-fpSize-1, 1)

	// Version information, versions 7 and up.
	if version >= 7 {
		v := versionBitSequence[version]
		for i := range versionInfoLengthBits {
			bit := byte(v>>uint(i)) & 1
			// Above the bottom left finder pattern.
			m.set(i/3, size-fpSize-4+i%3, bit)
			// Left of the top right finder pattern.
			m.set(size-fpSize-4+i%3, i/3, bit)
		}
	}

	// The data path, walked as upstream's addData walks it: two columns
	// wide, from the bottom right, up and down, skipping the vertical
	// timing pattern and every used module.
	free := 0
	for _, u := range m.used {
		if !u {
			free++
		}
	}
	m.path = make([]int32, 0, free)
	xOffset := 1
	up := true
	x := size - 2
	y := size - 1
	for {
		i := y*size + x + xOffset
		m.path = append(m.path, int32(i))
		m.isData[i] = 1
		if len(m.path) == free {
			break
		}
		// Find next free bit in the symbol.
		for {
			if xOffset == 1 {
				xOffset = 0
			} else {
				xOffset = 1
				if up {
					if y > 0 {
						y--
					} else {
						up = false
						x -= 2
					}
				} else {
					if y < size-1 {
						y++
					} else {
						up = true
						x -= 2
					}
				}
			}
			// Skip over the vertical timing pattern entirely.
			if x == 5 {
				x--
			}
			if m.empty(x+xOffset, y) {
				break
			}
		}
	}
	for _, i := range m.path {
		m.used[i] = true
	}
	for _, u := range m.used {
		if !u {
			panic("qrcode: bug: data path misses a module")
		}
	}
	if size <= maxBitSize {
		m.bits = newBitLayout(m.layout)
	}
	return m.layout
}

// maskPatterns[mask][y%12][x%6] is 1 where the mask inverts a data module
// (x, y). Upstream's mask conditions, all periodic in 12 rows and 6 columns.
var maskPatterns = func() (p [8][12][6]byte) {
	for mask := range 8 {
		for y := range 12 {
			for x := range 6 {
				var v bool
				switch mask {
				case 0:
					v = (y+x)%2 == 0
				case 1:
					v = y%2 == 0
				case 2:
					v = x%3 == 0
				case 3:
					v = (y+x)%3 == 0
				case 4:
					v = (y/2+x/3)%2 == 0
				case 5:
					v = (y*x)%2+(y*x)%3 == 0
				case 6:
					v = ((y*x)%2+((y*x)%3))%2 == 0
				case 7:
					v = ((y+x)%2+((y*x)%3))%2 == 0
				}
				if v {
					p[mask][y][x] = 1
				}
			}
		}
	}
	return p
}()

// applyMask writes to dst the unmasked symbol src with mask applied to its
// data modules and the format information for level and mask.
func (l *layout) applyMask(dst, src []byte, mask int, formatInfo uint32) {
	n := l.size
	pat := &maskPatterns[mask]
	for y := 0; y < n; y++ {
		row := pat[y%12]
		s := src[y*n : y*n+n]
		d := dst[y*n : y*n+n]
		isData := l.isData[y*n : y*n+n]
		for x0 := 0; x0 < n; x0 += 6 {
			end := min(x0+6, n)
			for x := x0; x < end; x++ {
				d[x] = s[x] ^ (row[x-x0] & isData[x])
			}
		}
	}
	for _, f := range l.format {
		dst[f.index] = byte(formatInfo>>f.bit) & 1
	}
}

// Constants used to weight penalty calculations. Specified by ISO/IEC
// 18004:2006.
const (
	penaltyWeight1 = 3
	penaltyWeight2 = 3
	penaltyWeight3 = 40
	penaltyWeight4 = 10
)

// penaltyScore returns the penalty score of the n*n symbol g: the sum of
// upstream's four penalties, computed in one pass over the rows and one over
// the columns instead of six.
func penaltyScore(g []byte, n int) int {
	p1, p2, p3, dark := 0, 0, 0, 0

	// Rows: penalties 1 and 3 along the row, penalty 2 with the row above,
	// and the dark modules for penalty 4.
	for y := 0; y < n; y++ {
		row := g[y*n : y*n+n]
		l1, l3 := linePenalties(g, y*n, 1, n)
		p1, p3 = p1+l1, p3+l3
		for _, v := range row {
			dark += int(v)
		}

		// Penalty 2: 2x2 blocks of one colour.
		if y > 0 {
			above := g[(y-1)*n : y*n]
			for x := 1; x < n; x++ {
				c := row[x]
				if c == row[x-1] && c == above[x] && c == above[x-1] {
					p2++
				}
			}
		}
	}

	// Columns: penalties 1 and 3.
	for x := 0; x < n; x++ {
		l1, l3 := linePenalties(g, x, n, n)
		p1, p3 = p1+l1, p3+l3
	}
	return p1 + p2*penaltyWeight2 + p3 + penalty4(n, dark)
}

// linePenalties returns penalties 1 and 3 along the n modules of g that
// start at index first, stride apart (1: a row, n: a column).
func linePenalties(g []byte, first, stride, n int) (p1, p3 int) {
	// Penalty 1: runs of 6 or more modules of one colour. Upstream's
	// count: 4 for 6, then 1 more for each further module.
	last := g[first]
	count := 1
	// Penalty 3: the 1:1:3:1:1 pattern with 4 light modules, in
	// upstream's version of the rule (only the low 11 bits of its
	// int16 buffer matter, so an uint32 behaves the same).
	// One module never matches, so the checks start at the second.
	bitBuffer := uint32(last)
	for i, at := 1, first+stride; i < n; i, at = i+1, at+stride {
		v := g[at]
		if v != last {
			count = 1
			last = v
		} else {
			count++
			if count == 6 {
				p1 += penaltyWeight1 + 1
			} else if count > 6 {
				p1++
			}
		}
		bitBuffer = bitBuffer<<1 | uint32(v)
		switch bitBuffer & 0x7ff {
		case 0x05d, 0x5d0:
			p3 += penaltyWeight3
			bitBuffer = 0xFF
		default:
			if i == n-1 && (bitBuffer&0x7f) == 0x5d {
				p3 += penaltyWeight3
				bitBuffer = 0xFF
			}
		}
	}
	return p1, p3
}

// penalty4 is upstream's penalty for the share of dark modules.
func penalty4(n, dark int) int {
	numModules := n * n
	numDarkModuleDeviation := numModules/2 - dark
	if numDarkModuleDeviation < 0 {
		numDarkModuleDeviation *= -1
	}
	return penaltyWeight4 * (numDarkModuleDeviation / (numModules / 20))
}
