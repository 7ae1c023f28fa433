package qrcode

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	upstream "github.com/skip2/go-qrcode"
)

// The fork must make upstream's symbols module for module: these tests
// encode the same content at the same level with both and compare.

var levels = []RecoveryLevel{Low, Medium, High, Highest}

// result is what an encoder made of a content: an error, or a version and
// a bitmap.
type result struct {
	err     error
	version int
	bitmap  [][]bool
}

func encodeUpstream(content string, level RecoveryLevel) (r result) {
	defer func() {
		if p := recover(); p != nil {
			r = result{err: fmt.Errorf("panic: %v", p)}
		}
	}()
	q, err := upstream.New(content, upstream.RecoveryLevel(level))
	if err != nil {
		return result{err: err}
	}
	return result{version: q.VersionNumber, bitmap: q.Bitmap()}
}

func encodeFork(content string, level RecoveryLevel) (r result) {
	defer func() {
		if p := recover(); p != nil {
			r = result{err: fmt.Errorf("panic: %v", p)}
		}
	}()
	q, err := New(content, level)
	if err != nil {
		return result{err: err}
	}
	return result{version: q.VersionNumber, bitmap: q.Bitmap()}
}

// diff describes how the fork's result differs from upstream's, or is "".
func diff(content string, level RecoveryLevel) string {
	return compare(encodeUpstream(content, level), encodeFork(content, level))
}

// compare describes how got differs from want, or is "".
func compare(want, got result) string {
	switch {
	case (want.err == nil) != (got.err == nil):
		return fmt.Sprintf("error %v, upstream's %v", got.err, want.err)
	case want.err != nil:
		if got.err.Error() != want.err.Error() {
			return fmt.Sprintf("error %q, upstream's %q", got.err, want.err)
		}
		return ""
	case got.version != want.version:
		return fmt.Sprintf("version %d, upstream's %d", got.version, want.version)
	case len(got.bitmap) != len(want.bitmap):
		return fmt.Sprintf("%d rows, upstream's %d", len(got.bitmap), len(want.bitmap))
	}
	wrong := 0
	for y := range want.bitmap {
		if len(got.bitmap[y]) != len(want.bitmap[y]) {
			return fmt.Sprintf("row %d has %d modules, upstream's %d", y, len(got.bitmap[y]), len(want.bitmap[y]))
		}
		for x := range want.bitmap[y] {
			if got.bitmap[y][x] != want.bitmap[y][x] {
				wrong++
			}
		}
	}
	if wrong > 0 {
		return fmt.Sprintf("%d modules differ from upstream's (version %d)", wrong, want.version)
	}
	return ""
}

func check(t *testing.T, content string, level RecoveryLevel) {
	t.Helper()
	if d := diff(content, level); d != "" {
		t.Errorf("level %d, %d bytes %s: %s", level, len(content), abbrev(content), d)
	}
}

func abbrev(s string) string {
	if len(s) > 40 {
		return fmt.Sprintf("%q…", s[:40])
	}
	return fmt.Sprintf("%q", s)
}

const (
	digits       = "0123456789"
	alphanumeric = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:"
)

// randomContent returns content of n bytes of one of several kinds: digits,
// QR alphanumeric characters, printable ASCII, UTF-8 text, binary, or runs of
// those mixed (which exercises upstream's segment optimisation).
func randomContent(r *rand.Rand, n int) string {
	var b strings.Builder
	kind := r.IntN(7)
	for b.Len() < n {
		k := kind
		run := n
		if kind == 6 { // mixed: runs of 1–20 of each kind
			k = r.IntN(6)
			run = b.Len() + 1 + r.IntN(20)
		}
		for b.Len() < min(n, run) {
			switch k {
			case 0:
				b.WriteByte(digits[r.IntN(len(digits))])
			case 1:
				b.WriteByte(alphanumeric[r.IntN(len(alphanumeric))])
			case 2:
				b.WriteByte(byte(0x20 + r.IntN(0x5f)))
			case 3:
				// UTF-8: mostly ASCII letters, some 2-, 3- and 4-byte runes.
				var c rune
				switch r.IntN(4) {
				case 0:
					c = rune('a' + r.IntN(26))
				case 1:
					c = rune(0xa0 + r.IntN(0x700))
				case 2:
					c = rune(0x800 + r.IntN(0xd000))
				default:
					c = rune(0x10000 + r.IntN(0x10000))
				}
				if b.Len()+utf8.RuneLen(c) > n {
					c = 'x'
				}
				b.WriteRune(c)
			case 4:
				b.WriteByte(byte(r.IntN(256)))
			case 5:
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}

// randomLength is 1..1500, mostly short: half up to 120 bytes (invoices'
// QR codes), a third up to 500, the rest up to 1500.
func randomLength(r *rand.Rand) int {
	switch p := r.IntN(6); {
	case p < 3:
		return 1 + r.IntN(120)
	case p < 5:
		return 1 + r.IntN(500)
	default:
		return 1 + r.IntN(1500)
	}
}

// parallel runs f(i) for i in 0..n-1 on two goroutines (upstream is slow).
func parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	const workers = 2
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				f(i)
			}
		})
	}
	wg.Wait()
}

var randomInputs = flag.Int("qrcode.random", 1000, "random contents for TestSameAsUpstreamRandom (each at 4 levels)")

// TestSameAsUpstreamRandom compares random contents at every level.
func TestSameAsUpstreamRandom(t *testing.T) {
	n := *randomInputs
	if testing.Short() {
		n = min(n, 200)
	}
	var mu sync.Mutex
	failures := 0
	parallel(n, func(i int) {
		r := rand.New(rand.NewPCG(uint64(i), 2026))
		content := randomContent(r, randomLength(r))
		for _, level := range levels {
			if d := diff(content, level); d != "" {
				mu.Lock()
				if failures++; failures <= 20 {
					t.Errorf("seed %d, level %d, %d bytes %s: %s", i, level, len(content), abbrev(content), d)
				}
				mu.Unlock()
			}
		}
	})
}

// TestSameAsUpstreamEdgeCases covers what random contents rarely hit.
func TestSameAsUpstreamEdgeCases(t *testing.T) {
	cases := []string{
		"", // upstream: "no data to encode"
		"0", "A", "a", "\x00", "\xff", " ", "\n",
		benchText,
		"https://example.com/i/2024-0042",
		"01234567", "0123456789012345", "HELLO WORLD", "hello world",
		"123ABC", "ABC123", "abc123ABC", "1A1A1A1A1A1A1A1A1A1A1A1A1A1A1A",
		strings.Repeat("0", 7089), strings.Repeat("0", 7090),
		strings.Repeat("A", 4296), strings.Repeat("A", 4297),
		strings.Repeat("a", 2953), strings.Repeat("a", 2954),
		strings.Repeat("\x00", 100), strings.Repeat("\xec\x11", 60),
		strings.Repeat("€", 300),
		strings.Repeat("0", 255) + strings.Repeat("a", 300),
		strings.Repeat("A", 511) + strings.Repeat("0", 1023),
	}
	parallel(len(cases), func(i int) {
		for _, level := range levels {
			check(t, cases[i], level)
		}
	})
	// Levels that do not exist: upstream finds no version for them.
	for _, level := range []RecoveryLevel{-1, 4, 100} {
		check(t, "hello", level)
		check(t, "", level)
	}
}

// capacity returns the longest repetition of unit that encodes in a
// version of at most v at level, found with upstream, or 0.
func capacity(unit string, level RecoveryLevel, v int) int {
	lo, hi := 0, 7090/len(unit)+1 // lo fits (or is 0), hi does not
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		q, err := upstream.New(strings.Repeat(unit, mid), upstream.RecoveryLevel(level))
		if err == nil && q.VersionNumber <= v {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// TestSameAsUpstreamAtVersionBoundaries encodes, for each level, version
// and mode (numeric, alphanumeric, byte and mixed units), the longest
// content that fits the version and one unit more: symbols full without
// padding or with fewer than 4 terminator bits, the switch of character
// count lengths at versions 10 and 27, and the error past version 40.
// Upstream's Bitmap is slow for large versions, so every version is
// compared module for module with one unit (in turn) and the other units
// compare the version chosen, or the error.
func TestSameAsUpstreamAtVersionBoundaries(t *testing.T) {
	units := []string{"7", "Z", "z", "1A", "a1"}
	type job struct {
		content string
		level   RecoveryLevel
		bitmap  bool
	}
	var jobs []job
	for _, level := range levels {
		for u, unit := range units {
			prev := -1
			for v := 1; v <= 40; v++ {
				c := capacity(unit, level, v)
				if c == prev {
					continue
				}
				prev = c
				for _, k := range []int{c, c + 1} {
					if k > 0 {
						jobs = append(jobs, job{strings.Repeat(unit, k), level, (v+int(level))%len(units) == u})
					}
				}
			}
		}
	}
	if testing.Short() {
		jobs = slices.DeleteFunc(jobs, func(j job) bool { return j.bitmap && len(j.content) > 300 })
	}
	parallel(len(jobs), func(i int) {
		j := jobs[i]
		if j.bitmap {
			check(t, j.content, j.level)
			return
		}
		want, wantErr := upstream.New(j.content, upstream.RecoveryLevel(j.level))
		got, gotErr := New(j.content, j.level)
		switch {
		case (wantErr == nil) != (gotErr == nil):
			t.Errorf("level %d, %d bytes %s: error %v, upstream's %v", j.level, len(j.content), abbrev(j.content), gotErr, wantErr)
		case wantErr == nil && got.VersionNumber != want.VersionNumber:
			t.Errorf("level %d, %d bytes %s: version %d, upstream's %d", j.level, len(j.content), abbrev(j.content), got.VersionNumber, want.VersionNumber)
		}
	})
}

// TestVersionTable checks the indexing of versions that replaced upstream's
// scan, and that every version's data path holds exactly its codewords and
// remainder bits (upstream panicked otherwise).
func TestVersionTable(t *testing.T) {
	for i := range versions {
		v := &versions[i]
		if want := &versions[(v.version-1)*4+int(v.level)]; want != v {
			t.Fatalf("versions[%d] is version %d level %d", i, v.version, v.level)
		}
		l := layoutOf(v.version)
		if got, want := len(l.path), v.numCodewords()*8+v.numRemainderBits; got != want {
			t.Errorf("version %d level %d: %d data modules for %d bits", v.version, v.level, got, want)
		}
		if l.size != v.symbolSize() {
			t.Errorf("version %d: size %d, want %d", v.version, l.size, v.symbolSize())
		}
	}
	if len(versions) != 160 {
		t.Errorf("%d versions", len(versions))
	}
}

// TestBitmapShape checks the quiet zone and that rows do not share
// storage beyond their length.
func TestBitmapShape(t *testing.T) {
	q, err := New(benchText, Medium)
	if err != nil {
		t.Fatal(err)
	}
	bm := q.Bitmap()
	n := q.VersionNumber*4 + 17 + 2*quietZoneSize
	if len(bm) != n {
		t.Fatalf("%d rows, want %d", len(bm), n)
	}
	for y, row := range bm {
		if len(row) != n || cap(row) != n {
			t.Fatalf("row %d: len %d cap %d, want %d", y, len(row), cap(row), n)
		}
		for x, v := range row {
			quiet := x < quietZoneSize || y < quietZoneSize || x >= n-quietZoneSize || y >= n-quietZoneSize
			if quiet && v {
				t.Fatalf("module (%d, %d) of the quiet zone is dark", x, y)
			}
		}
	}
	if !slices.Equal(bm[quietZoneSize][quietZoneSize:quietZoneSize+7], []bool{true, true, true, true, true, true, true}) {
		t.Error("no finder pattern at the top left")
	}
}

// FuzzQREqualsUpstream: for any content and level (including levels that
// do not exist), the fork errs when upstream errs and otherwise makes the
// same symbol; neither may panic.
func FuzzQREqualsUpstream(f *testing.F) {
	f.Add(benchText, uint8(1))
	f.Add("", uint8(0))
	f.Add("0123456789", uint8(2))
	f.Add("HELLO WORLD 123", uint8(3))
	f.Add("héllo wörld €", uint8(0))
	f.Add("\x00\xff\xec\x11", uint8(5))
	f.Add(strings.Repeat("a1B", 100), uint8(1))
	f.Fuzz(func(t *testing.T, content string, level uint8) {
		lv := RecoveryLevel(int(level%6) - 1) // -1..4
		want := encodeUpstream(content, lv)
		got := encodeFork(content, lv)
		if want.err != nil && strings.HasPrefix(want.err.Error(), "panic") {
			t.Skipf("upstream panicked: %v", want.err)
		}
		if got.err != nil && strings.HasPrefix(got.err.Error(), "panic") {
			t.Fatalf("fork panicked: %v", got.err)
		}
		if d := compare(want, got); d != "" {
			t.Fatalf("level %d, %d bytes %s: %s", lv, len(content), abbrev(content), d)
		}
	})
}
