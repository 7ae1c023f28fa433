package qrcode

import (
	"math/rand/v2"
	"testing"
)

// randomGrid returns an n*n grid of modules, some lines made of runs and of
// the 1011101 pattern with light modules around it, so that the penalty
// rules score often and their corner cases (runs at the ends, overlapping
// patterns, a pattern at the end of a line) come up.
func randomGrid(r *rand.Rand, n int) []byte {
	g := make([]byte, n*n)
	for y := range n {
		row := g[y*n : y*n+n]
		switch r.IntN(4) {
		case 0: // random
			for x := range row {
				row[x] = byte(r.IntN(2))
			}
		case 1: // runs
			for x := 0; x < n; {
				v := byte(r.IntN(2))
				for end := min(n, x+1+r.IntN(9)); x < end; x++ {
					row[x] = v
				}
			}
		default: // pieces of the finder pattern
			pieces := []string{"1011101", "0000", "1", "0", "10111010000", "00001011101", "0111010000", "011101"}
			for x := 0; x < n; {
				for _, c := range pieces[r.IntN(len(pieces))] {
					if x < n {
						row[x] = byte(c - '0')
						x++
					}
				}
			}
		}
	}
	// Transpose some of it so that columns get the same patterns.
	if r.IntN(2) == 0 {
		for y := range n {
			for x := range y {
				g[y*n+x], g[x*n+y] = g[x*n+y], g[y*n+x]
			}
		}
	}
	return g
}

// TestPenaltyBitsSameAsGrid checks the bit-string penalty against the byte
// grid one (which follows upstream's code line by line).
func TestPenaltyBitsSameAsGrid(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		n := 21 + 4*r.IntN(11) // versions 1-11
		g := randomGrid(r, n)
		rows, cols := make([]uint64, n), make([]uint64, n)
		for y := range n {
			for x := range n {
				rows[y] |= uint64(g[y*n+x]) << x
				cols[x] |= uint64(g[y*n+x]) << y
			}
		}
		if got, want := penaltyBits(rows, cols, n), penaltyScore(g, n); got != want {
			t.Fatalf("grid %d (%d×%d): penaltyBits %d, penaltyScore %d", i, n, n, got, want)
		}
		for y := range n {
			if got, want := finderPenalty(rows[y], n, uint64(1)<<n-1), finderPenaltyLoop(rows[y], n); got != want {
				t.Fatalf("grid %d row %d: finderPenalty %d, loop %d", i, y, got, want)
			}
		}
	}
}

// TestBitPathSameAsGridPath checks that versions 1-11 choose the same mask
// and symbol through the bit strings as through the byte grid.
func TestBitPathSameAsGridPath(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 2000 {
		content := randomContent(r, 1+r.IntN(300))
		level := levels[r.IntN(4)]
		q, err := New(content, level)
		if err != nil {
			t.Fatal(err)
		}
		l := layoutOf(q.VersionNumber)
		if l.bits == nil {
			continue
		}
		// Redo the mask choice on the byte grid.
		n := l.size
		grid := make([]byte, n*n)
		work := make([]byte, n*n)
		// Unmask the chosen symbol's data modules to get the placed codewords.
		pat := &maskPatterns[q.mask]
		for y := range n {
			for x := range n {
				j := y*n + x
				grid[j] = q.modules[j] ^ (pat[y%12][x%6] & l.isData[j])
				if l.isData[j] == 0 {
					grid[j] = l.base[j]
				}
			}
		}
		best, bestMask := 0, 0
		for mask := range 8 {
			l.applyMask(work, grid, mask, formatBitSequence[formatIDs[level]|mask].regular)
			if p := penaltyScore(work, n); mask == 0 || p < best {
				best, bestMask = p, mask
			}
		}
		if bestMask != q.mask {
			t.Fatalf("content %d: mask %d on bits, %d on the grid", i, q.mask, bestMask)
		}
		l.applyMask(work, grid, bestMask, formatBitSequence[formatIDs[level]|bestMask].regular)
		for j := range work {
			if work[j] != q.modules[j] {
				t.Fatalf("content %d: module %d differs", i, j)
			}
		}
	}
}

// finderPenaltyLoop is upstream's penalty 3 loop over one line.
func finderPenaltyLoop(line uint64, n int) int {
	penalty := 0
	var bitBuffer int16
	for x := range n {
		bitBuffer <<= 1
		if line>>x&1 != 0 {
			bitBuffer |= 1
		}
		switch bitBuffer & 0x7ff {
		case 0x05d, 0x5d0:
			penalty += penaltyWeight3
			bitBuffer = 0xFF
		default:
			if x == n-1 && (bitBuffer&0x7f) == 0x5d {
				penalty += penaltyWeight3
				bitBuffer = 0xFF
			}
		}
	}
	return penalty
}
