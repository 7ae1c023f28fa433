package text

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// CFF-flavoured OpenType fonts (.otf with PostScript outlines) are
// embedded in PDF as a CFF font program of their own (FontFile3,
// CIDFontType0C, PDF 32000-1 §9.9) holding only the glyphs a document
// draws. The subset is CID-keyed whatever the source is: glyph i of the
// subset is CID i (an identity charset), which is what the PDF writer's
// CIDs are. Each glyph keeps the Private DICT (and so the local
// subroutines and nominal widths) of its font DICT; subroutines that no
// kept glyph calls are emptied. The format: Adobe Technical Notes #5176
// (CFF) and #5177 (Type 2 charstrings).

var errCFF = errors.New("malformed CFF table")

// cffIndex reads an INDEX at off: its items and the offset after it.
func cffIndex(b []byte, off int) ([][]byte, int, error) {
	n, ok := u16(b, off)
	if !ok {
		return nil, 0, errCFF
	}
	if n == 0 {
		return nil, off + 2, nil
	}
	if off+3 > len(b) {
		return nil, 0, errCFF
	}
	size := int(b[off+2])
	if size < 1 || size > 4 {
		return nil, 0, errCFF
	}
	base := off + 3 + (n+1)*size - 1 // offsets are 1-based from here
	if base+1 > len(b) {
		return nil, 0, errCFF
	}
	read := func(i int) int {
		v := 0
		for k := 0; k < size; k++ {
			v = v<<8 | int(b[off+3+i*size+k])
		}
		return v
	}
	items := make([][]byte, n)
	prev := read(0)
	if prev != 1 {
		return nil, 0, errCFF
	}
	for i := 0; i < n; i++ {
		next := read(i + 1)
		if next < prev || base+next > len(b) {
			return nil, 0, errCFF
		}
		items[i] = b[base+prev : base+next]
		prev = next
	}
	return items, base + prev, nil
}

// appendIndex writes items as an INDEX.
func appendIndex(out []byte, items [][]byte) []byte {
	out = binary.BigEndian.AppendUint16(out, uint16(len(items)))
	if len(items) == 0 {
		return out
	}
	total := 1
	for _, it := range items {
		total += len(it)
	}
	size := 1
	for total >= 1<<(8*size) {
		size++
	}
	out = append(out, byte(size))
	put := func(v int) {
		for k := size - 1; k >= 0; k-- {
			out = append(out, byte(v>>(8*k)))
		}
	}
	at := 1
	put(at)
	for _, it := range items {
		at += len(it)
		put(at)
	}
	for _, it := range items {
		out = append(out, it...)
	}
	return out
}

// dictEntry is one operator of a DICT with its operands, as read.
type dictEntry struct {
	op   int // 0-21, or 1200+x for the escaped 12 x
	args []float64
	raw  []byte // the operands' bytes
}

// parseDict reads a DICT.
func parseDict(b []byte) ([]dictEntry, error) {
	var out []dictEntry
	var args []float64
	start := 0
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c <= 21:
			op := int(c)
			i++
			if c == 12 {
				if i >= len(b) {
					return nil, errCFF
				}
				op = 1200 + int(b[i])
				i++
			}
			rawEnd := i - 1
			if op >= 1200 {
				rawEnd--
			}
			out = append(out, dictEntry{op: op, args: args, raw: b[start:rawEnd]})
			args, start = nil, i
			if len(out) > 256 {
				return nil, errCFF
			}
		case c == 28:
			if i+3 > len(b) {
				return nil, errCFF
			}
			args = append(args, float64(int16(binary.BigEndian.Uint16(b[i+1:]))))
			i += 3
		case c == 29:
			if i+5 > len(b) {
				return nil, errCFF
			}
			args = append(args, float64(int32(binary.BigEndian.Uint32(b[i+1:]))))
			i += 5
		case c == 30: // real: nibbles up to 0xf; its value is not needed
			i++
			for i < len(b) && b[i]&0x0f != 0x0f && b[i]>>4 != 0x0f {
				i++
			}
			if i >= len(b) {
				return nil, errCFF
			}
			i++
			args = append(args, 0)
		case c >= 32 && c <= 246:
			args = append(args, float64(int(c)-139))
			i++
		case c >= 247 && c <= 250:
			if i+2 > len(b) {
				return nil, errCFF
			}
			args = append(args, float64((int(c)-247)*256+int(b[i+1])+108))
			i += 2
		case c >= 251 && c <= 254:
			if i+2 > len(b) {
				return nil, errCFF
			}
			args = append(args, float64(-(int(c)-251)*256-int(b[i+1])-108))
			i += 2
		default:
			return nil, errCFF
		}
		if len(args) > 48 {
			return nil, errCFF
		}
	}
	return out, nil
}

func dictGet(d []dictEntry, op int) (dictEntry, bool) {
	for _, e := range d {
		if e.op == op {
			return e, true
		}
	}
	return dictEntry{}, false
}

// appendInt32 writes v as a 5-byte DICT integer (fixed size, so offsets
// can be written before they are known).
func appendInt32(out []byte, v int) []byte {
	return binary.BigEndian.AppendUint32(append(out, 29), uint32(int32(v)))
}

func appendOp(out []byte, op int) []byte {
	if op >= 1200 {
		return append(out, 12, byte(op-1200))
	}
	return append(out, byte(op))
}

// DICT operators used here.
const (
	opCharset     = 15
	opEncoding    = 16
	opCharStrings = 17
	opPrivate     = 18
	opSubrs       = 19
	opFontBBox    = 5
	opFontMatrix  = 1207
	opROS         = 1230
	opCIDCount    = 1234
	opFDArray     = 1236
	opFDSelect    = 1237
	opFontName    = 1238
)

// cffFont is what the subsetter reads of a CFF table.
type cffFont struct {
	name        []byte
	top         []dictEntry
	gsubrs      [][]byte
	charstrings [][]byte
	fds         []cffPrivate // one for a name-keyed font
	fdOf        func(gid int) int
	cid         bool
}

type cffPrivate struct {
	dict   []dictEntry
	subrs  [][]byte
	matrix []byte // the font DICT's FontMatrix operands, nil if none
}

// parseCFF reads a CFF table far enough to subset it.
func parseCFF(b []byte, numGlyphs int) (*cffFont, error) {
	if len(b) < 4 || b[0] != 1 {
		return nil, fmt.Errorf("%w: version", errCFF)
	}
	names, off, err := cffIndex(b, int(b[2]))
	if err != nil || len(names) != 1 {
		return nil, fmt.Errorf("%w: one font per CFF table", errCFF)
	}
	tops, off, err := cffIndex(b, off)
	if err != nil || len(tops) != 1 {
		return nil, fmt.Errorf("%w: top DICT", errCFF)
	}
	_, off, err = cffIndex(b, off) // strings: the subset needs none of them
	if err != nil {
		return nil, err
	}
	gsubrs, _, err := cffIndex(b, off)
	if err != nil {
		return nil, err
	}
	top, err := parseDict(tops[0])
	if err != nil {
		return nil, err
	}
	f := &cffFont{name: names[0], top: top, gsubrs: gsubrs}
	cs, ok := dictGet(top, opCharStrings)
	if !ok || len(cs.args) != 1 {
		return nil, fmt.Errorf("%w: no CharStrings", errCFF)
	}
	if f.charstrings, _, err = cffIndex(b, int(cs.args[0])); err != nil {
		return nil, err
	}
	if len(f.charstrings) == 0 || len(f.charstrings) < numGlyphs {
		return nil, fmt.Errorf("%w: %d charstrings for %d glyphs", errCFF, len(f.charstrings), numGlyphs)
	}
	readPrivate := func(d []dictEntry) (cffPrivate, error) {
		p, ok := dictGet(d, opPrivate)
		if !ok || len(p.args) != 2 {
			return cffPrivate{}, nil // no Private DICT: the defaults
		}
		size, at := int(p.args[0]), int(p.args[1])
		if size < 0 || at < 0 || at+size > len(b) {
			return cffPrivate{}, fmt.Errorf("%w: Private DICT", errCFF)
		}
		pd, err := parseDict(b[at : at+size])
		if err != nil {
			return cffPrivate{}, err
		}
		out := cffPrivate{dict: pd}
		if s, ok := dictGet(pd, opSubrs); ok && len(s.args) == 1 {
			if out.subrs, _, err = cffIndex(b, at+int(s.args[0])); err != nil {
				return cffPrivate{}, err
			}
		}
		if m, ok := dictGet(d, opFontMatrix); ok {
			out.matrix = m.raw
		}
		return out, nil
	}
	if _, ok := dictGet(top, opROS); !ok {
		p, err := readPrivate(top)
		if err != nil {
			return nil, err
		}
		f.fds = []cffPrivate{p}
		f.fdOf = func(int) int { return 0 }
		return f, nil
	}
	f.cid = true
	fda, ok1 := dictGet(top, opFDArray)
	fds, ok2 := dictGet(top, opFDSelect)
	if !ok1 || !ok2 || len(fda.args) != 1 || len(fds.args) != 1 {
		return nil, fmt.Errorf("%w: CID font without FDArray or FDSelect", errCFF)
	}
	dicts, _, err := cffIndex(b, int(fda.args[0]))
	if err != nil || len(dicts) == 0 || len(dicts) > 256 {
		return nil, fmt.Errorf("%w: FDArray", errCFF)
	}
	for _, raw := range dicts {
		d, err := parseDict(raw)
		if err != nil {
			return nil, err
		}
		p, err := readPrivate(d)
		if err != nil {
			return nil, err
		}
		f.fds = append(f.fds, p)
	}
	sel := make([]byte, len(f.charstrings))
	at := int(fds.args[0])
	if at < 0 || at >= len(b) {
		return nil, fmt.Errorf("%w: FDSelect", errCFF)
	}
	switch b[at] {
	case 0:
		if at+1+len(sel) > len(b) {
			return nil, fmt.Errorf("%w: FDSelect", errCFF)
		}
		copy(sel, b[at+1:])
	case 3:
		n, ok := u16(b, at+1)
		if !ok || at+3+3*n+2 > len(b) {
			return nil, fmt.Errorf("%w: FDSelect", errCFF)
		}
		for i := 0; i < n; i++ {
			first, _ := u16(b, at+3+3*i)
			next, _ := u16(b, at+3+3*i+3)
			fd := b[at+3+3*i+2]
			for g := first; g < next && g < len(sel); g++ {
				sel[g] = fd
			}
		}
	default:
		return nil, fmt.Errorf("%w: FDSelect format %d", errCFF, b[at])
	}
	for _, fd := range sel {
		if int(fd) >= len(f.fds) {
			return nil, fmt.Errorf("%w: FDSelect names font DICT %d of %d", errCFF, fd, len(f.fds))
		}
	}
	f.fdOf = func(g int) int { return int(sel[g]) }
	return f, nil
}

// subsetCFF writes a CID-keyed CFF table holding glyphs olds[0],
// olds[1], ... of the CFF table b as glyphs (and CIDs) 0, 1, ...
func subsetCFF(b []byte, numGlyphs int, olds []uint16) ([]byte, error) {
	f, err := parseCFF(b, numGlyphs)
	if err != nil {
		return nil, err
	}
	n := len(olds)
	if n == 0 || n > 65535 {
		return nil, errCFF
	}
	// The font DICTs the glyphs use, renumbered in order of first use.
	fdNew := map[int]int{}
	var fdOld []int
	glyphFD := make([]int, n)
	charstrings := make([][]byte, n)
	for i, g := range olds {
		if int(g) >= len(f.charstrings) {
			return nil, fmt.Errorf("%w: glyph %d", errCFF, g)
		}
		charstrings[i] = f.charstrings[g]
		old := f.fdOf(int(g))
		k, ok := fdNew[old]
		if !ok {
			k = len(fdOld)
			fdNew[old] = k
			fdOld = append(fdOld, old)
		}
		glyphFD[i] = k
	}
	gsubrs, locals, err := pruneSubrs(f, charstrings, glyphFD, fdOld)
	if err != nil {
		return nil, err
	}

	// Fixed parts: header, name, strings, global subroutines.
	strs := [][]byte{[]byte("Adobe"), []byte("Identity")} // SIDs 391, 392
	head := []byte{1, 0, 4, 4}
	head = appendIndex(head, [][]byte{f.name})
	// The top DICT; offsets are 5-byte integers filled in below.
	topDict := func(charset, fdselect, cs, fdarray int) []byte {
		var d []byte
		d = append(appendInt32(appendInt32(appendInt32(d, 391), 392), 0), 12, 30) // ROS Adobe Identity 0
		if bb, ok := dictGet(f.top, opFontBBox); ok {
			d = appendOp(append(d, bb.raw...), opFontBBox)
		}
		d = appendOp(appendInt32(d, n), opCIDCount)
		d = appendOp(appendInt32(d, charset), opCharset)
		d = appendOp(appendInt32(d, fdselect), opFDSelect)
		d = appendOp(appendInt32(d, cs), opCharStrings)
		d = appendOp(appendInt32(d, fdarray), opFDArray)
		return d
	}
	topLen := len(appendIndex(nil, [][]byte{topDict(0, 0, 0, 0)}))
	rest := appendIndex(nil, strs)
	rest = appendIndex(rest, gsubrs)
	charsetAt := len(head) + topLen + len(rest)
	// charset: GID i is CID i.
	if n > 1 {
		rest = append(rest, 2, 0, 1, byte((n-2)>>8), byte(n-2))
	} else {
		rest = append(rest, 0)
	}
	fdselectAt := len(head) + topLen + len(rest)
	var ranges []byte
	nr := 0
	for i := 0; i < n; i++ {
		if i == 0 || glyphFD[i] != glyphFD[i-1] {
			ranges = append(binary.BigEndian.AppendUint16(ranges, uint16(i)), byte(glyphFD[i]))
			nr++
		}
	}
	rest = append(binary.BigEndian.AppendUint16(append(rest, 3), uint16(nr)), ranges...)
	rest = binary.BigEndian.AppendUint16(rest, uint16(n))
	csAt := len(head) + topLen + len(rest)
	rest = appendIndex(rest, charstrings)
	fdarrayAt := len(head) + topLen + len(rest)

	// Font DICTs, then each one's Private DICT and local subroutines.
	privates := make([][]byte, len(fdOld))
	for k, old := range fdOld {
		var pd []byte
		for _, e := range f.fds[old].dict {
			if e.op != opSubrs {
				pd = appendOp(append(pd, e.raw...), e.op)
			}
		}
		if len(locals[k]) > 0 {
			pd = appendOp(appendInt32(pd, len(pd)+6), opSubrs) // right after the DICT
		}
		privates[k] = pd
	}
	fdDict := func(k, privAt int) []byte {
		var d []byte
		if m := f.fds[fdOld[k]].matrix; m != nil {
			d = appendOp(append(d, m...), opFontMatrix)
		}
		return appendOp(appendInt32(appendInt32(d, len(privates[k])), privAt), opPrivate)
	}
	dicts := make([][]byte, len(fdOld))
	for k := range dicts {
		dicts[k] = fdDict(k, 0)
	}
	at := fdarrayAt + len(appendIndex(nil, dicts))
	var tail []byte
	for k := range dicts {
		dicts[k] = fdDict(k, at+len(tail))
		tail = append(tail, privates[k]...)
		if len(locals[k]) > 0 {
			tail = appendIndex(tail, locals[k])
		}
	}
	rest = appendIndex(rest, dicts)
	out := appendIndex(head, [][]byte{topDict(charsetAt, fdselectAt, csAt, fdarrayAt)})
	out = append(out, rest...)
	return append(out, tail...), nil
}

// t2return is a subroutine that does nothing: "return".
var t2return = []byte{11}

// pruneSubrs returns the global subroutines and each kept font DICT's
// local ones with those no kept glyph calls replaced by a bare return
// (readers such as Ghostscript refuse empty ones); their numbers, and so
// the charstrings, stay as they are.
func pruneSubrs(f *cffFont, charstrings [][]byte, glyphFD []int, fdOld []int) ([][]byte, [][][]byte, error) {
	usedG := make([]bool, len(f.gsubrs))
	usedL := make([][]bool, len(fdOld))
	for k, old := range fdOld {
		usedL[k] = make([]bool, len(f.fds[old].subrs))
	}
	for i, cs := range charstrings {
		k := glyphFD[i]
		t := &t2walker{gsubrs: f.gsubrs, lsubrs: f.fds[fdOld[k]].subrs, usedG: usedG, usedL: usedL[k]}
		if t.run(cs, 0) != nil {
			// A charstring the walk cannot follow (subroutine numbers
			// computed by arithmetic, say): keep every subroutine.
			locals := make([][][]byte, len(fdOld))
			for k, old := range fdOld {
				locals[k] = f.fds[old].subrs
			}
			return f.gsubrs, locals, nil
		}
	}
	keep := func(all [][]byte, used []bool) [][]byte {
		out := make([][]byte, len(all))
		for i, s := range all {
			out[i] = t2return
			if used[i] {
				out[i] = s
			}
		}
		return out
	}
	locals := make([][][]byte, len(fdOld))
	for k, old := range fdOld {
		locals[k] = keep(f.fds[old].subrs, usedL[k])
	}
	return keep(f.gsubrs, usedG), locals, nil
}

// t2walker follows a Type 2 charstring far enough to find the
// subroutines it calls: numbers, stem hints (whose count says how long a
// hintmask is) and calls.
type t2walker struct {
	gsubrs, lsubrs [][]byte
	usedG, usedL   []bool
	stack          []float64
	stems          int
	seenMask       bool
	steps          int
	done           bool
}

func subrBias(n int) int {
	switch {
	case n < 1240:
		return 107
	case n < 33900:
		return 1131
	}
	return 32768
}

func (t *t2walker) run(cs []byte, depth int) error {
	if depth > 10 {
		return fmt.Errorf("%w: subroutines nest too deep", errCFF)
	}
	for i := 0; i < len(cs) && !t.done; {
		if t.steps++; t.steps > 1<<20 {
			return fmt.Errorf("%w: charstring too long", errCFF)
		}
		c := cs[i]
		switch {
		case c == 28:
			if i+3 > len(cs) {
				return errCFF
			}
			t.stack = append(t.stack, float64(int16(binary.BigEndian.Uint16(cs[i+1:]))))
			i += 3
		case c == 255:
			if i+5 > len(cs) {
				return errCFF
			}
			t.stack = append(t.stack, float64(int32(binary.BigEndian.Uint32(cs[i+1:])))/65536)
			i += 5
		case c >= 32 && c <= 246:
			t.stack = append(t.stack, float64(int(c)-139))
			i++
		case c >= 247 && c <= 250:
			if i+2 > len(cs) {
				return errCFF
			}
			t.stack = append(t.stack, float64((int(c)-247)*256+int(cs[i+1])+108))
			i += 2
		case c >= 251 && c <= 254:
			if i+2 > len(cs) {
				return errCFF
			}
			t.stack = append(t.stack, float64(-(int(c)-251)*256-int(cs[i+1])-108))
			i += 2
		case c == 10 || c == 29: // callsubr, callgsubr
			if len(t.stack) == 0 {
				return fmt.Errorf("%w: call without a number", errCFF)
			}
			subrs, used := t.lsubrs, t.usedL
			if c == 29 {
				subrs, used = t.gsubrs, t.usedG
			}
			k := int(t.stack[len(t.stack)-1]) + subrBias(len(subrs))
			t.stack = t.stack[:len(t.stack)-1]
			if k < 0 || k >= len(subrs) {
				return fmt.Errorf("%w: subroutine %d of %d", errCFF, k, len(subrs))
			}
			used[k] = true
			if err := t.run(subrs[k], depth+1); err != nil {
				return err
			}
			i++
		case c == 11: // return
			return nil
		case c == 14: // endchar
			t.done = true
			return nil
		case c == 1 || c == 3 || c == 18 || c == 23: // hstem, vstem, hstemhm, vstemhm
			t.stems += len(t.stack) / 2
			t.stack = t.stack[:0]
			i++
		case c == 19 || c == 20: // hintmask, cntrmask: vstems may precede them
			if !t.seenMask {
				t.stems += len(t.stack) / 2
				t.seenMask = true
			}
			t.stack = t.stack[:0]
			i += 1 + (t.stems+7)/8
		case c == 12:
			t.stack = t.stack[:0]
			i += 2
		default: // drawing and arithmetic operators: the walk needs no operands
			t.stack = t.stack[:0]
			i++
		}
		if len(t.stack) > 96 {
			return fmt.Errorf("%w: charstring stack overflow", errCFF)
		}
	}
	return nil
}
