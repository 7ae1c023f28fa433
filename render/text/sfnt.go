package text

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// sfnt is the table directory of a TrueType file, read with bounds checks
// on every access: font files come from operators and teams, so a
// malformed or hostile file must end in an error, never a panic.
type sfnt struct {
	tables    map[string][]byte
	cff       []byte // the CFF table of a font with PostScript outlines, nil for glyf
	hmtx      []byte
	numGlyphs int
	locaLong  bool
	nhm       int // numberOfHMetrics
	upem      int
	// keepHints: the font is one of the "tricky" ones whose glyphs are
	// assembled by their hinting programs (trickyFont); its subsets keep
	// them.
	keepHints bool
}

var errMalformed = errors.New("malformed font")

func u16(b []byte, off int) (int, bool) {
	if off < 0 || off+2 > len(b) {
		return 0, false
	}
	return int(binary.BigEndian.Uint16(b[off:])), true
}

func u32(b []byte, off int) (uint32, bool) {
	if off < 0 || off+4 > len(b) {
		return 0, false
	}
	return binary.BigEndian.Uint32(b[off:]), true
}

// readSFNT reads the table directory of a TrueType-outline font and the
// fields the subsetter needs.
func readSFNT(data []byte) (*sfnt, error) {
	tag, ok := u32(data, 0)
	if !ok {
		return nil, errMalformed
	}
	switch tag {
	case 0x00010000, 0x74727565: // TrueType outlines ("true")
	case 0x4F54544F: // "OTTO": CFF (PostScript) outlines
	case 0x74746366: // "ttcf"
		return nil, errors.New("font collections (.ttc) are not supported; upload one font file")
	default:
		return nil, errors.New("not a TrueType or OpenType font")
	}
	n, _ := u16(data, 4)
	if n == 0 || n > 200 {
		return nil, errMalformed
	}
	s := &sfnt{tables: make(map[string][]byte, n)}
	for i := 0; i < n; i++ {
		rec := 12 + 16*i
		if rec+16 > len(data) {
			return nil, errMalformed
		}
		t := string(data[rec : rec+4])
		off, _ := u32(data, rec+8)
		ln, _ := u32(data, rec+12)
		if uint64(off)+uint64(ln) > uint64(len(data)) {
			return nil, fmt.Errorf("%w: table %q outside the file", errMalformed, t)
		}
		s.tables[t] = data[off : off+ln]
	}
	need := []string{"head", "hhea", "hmtx", "maxp", "loca", "glyf"}
	if s.tables["glyf"] == nil && s.tables["CFF "] != nil {
		need, s.cff = need[:4], s.tables["CFF "]
	} else if s.tables["glyf"] == nil && s.tables["CFF2"] != nil {
		return nil, errors.New("font has CFF2 (variable PostScript) outlines; TrueType and CFF outlines are supported")
	}
	for _, t := range need {
		if s.tables[t] == nil {
			return nil, fmt.Errorf("%w: no %q table", errMalformed, t)
		}
	}
	s.keepHints = trickyFont(s.tables["name"])
	head := s.tables["head"]
	var ok1, ok2, ok3, ok4 bool
	var locFmt int
	s.upem, ok1 = u16(head, 18)
	locFmt, ok2 = u16(head, 50)
	s.numGlyphs, ok3 = u16(s.tables["maxp"], 4)
	s.nhm, ok4 = u16(s.tables["hhea"], 34)
	if !ok1 || !ok2 || !ok3 || !ok4 || s.upem < 16 || s.upem > 16384 || s.numGlyphs == 0 {
		return nil, errMalformed
	}
	s.locaLong = locFmt == 1
	s.hmtx = s.tables["hmtx"]
	if s.nhm == 0 || s.nhm > s.numGlyphs || len(s.tables["hmtx"]) < 4*s.nhm {
		return nil, fmt.Errorf("%w: hmtx", errMalformed)
	}
	per := 2
	if s.locaLong {
		per = 4
	}
	if s.cff == nil && len(s.tables["loca"]) < per*(s.numGlyphs+1) {
		return nil, fmt.Errorf("%w: loca", errMalformed)
	}
	return s, nil
}

// glyph returns the outline bytes of glyph gid (empty for blank glyphs).
func (s *sfnt) glyph(gid int) ([]byte, error) {
	if gid < 0 || gid >= s.numGlyphs {
		return nil, errMalformed
	}
	loca, glyf := s.tables["loca"], s.tables["glyf"]
	var a, b uint32
	if s.locaLong {
		a, _ = u32(loca, 4*gid)
		b, _ = u32(loca, 4*gid+4)
	} else {
		x, _ := u16(loca, 2*gid)
		y, _ := u16(loca, 2*gid+2)
		a, b = uint32(x)*2, uint32(y)*2
	}
	if a > b || uint64(b) > uint64(len(glyf)) {
		return nil, fmt.Errorf("%w: glyph %d", errMalformed, gid)
	}
	return glyf[a:b], nil
}

// hmetric returns the advance width and left side bearing of gid.
func (s *sfnt) hmetric(gid int) (adv, lsb int) {
	h := s.hmtx
	if gid < s.nhm {
		adv, _ = u16(h, 4*gid)
		lsb, _ = u16(h, 4*gid+2)
		return adv, lsb
	}
	adv, _ = u16(h, 4*(s.nhm-1))
	lsb, _ = u16(h, 4*s.nhm+2*(gid-s.nhm))
	return adv, lsb
}

// Composite glyph flags (OpenType glyf table).
const (
	argsAreWords   = 0x0001
	haveScale      = 0x0008
	moreComponents = 0x0020
	haveXYScale    = 0x0040
	have2x2        = 0x0080
)

// components returns the offsets of the glyph indices inside a composite
// glyph (nil for a simple glyph).
func components(g []byte) ([]int, error) {
	if len(g) < 10 {
		return nil, nil
	}
	if int16(binary.BigEndian.Uint16(g)) >= 0 {
		return nil, nil
	}
	var offs []int
	p := 10
	for {
		flags, ok := u16(g, p)
		if !ok || p+4 > len(g) || len(offs) > 1024 {
			return nil, fmt.Errorf("%w: composite glyph", errMalformed)
		}
		offs = append(offs, p+2)
		p += componentLen(flags)
		if flags&moreComponents == 0 {
			return offs, nil
		}
	}
}

// componentLen is the length of a composite glyph's component record
// with these flags: flags and glyph index, the two offsets (bytes or
// words), then the transform.
func componentLen(flags int) int {
	n := 4 + 2
	if flags&argsAreWords != 0 {
		n = 4 + 4
	}
	switch {
	case flags&haveScale != 0:
		n += 2
	case flags&haveXYScale != 0:
		n += 4
	case flags&have2x2 != 0:
		n += 8
	}
	return n
}

// subset writes a TrueType file holding the glyphs olds[0], olds[1], ...
// as glyphs 0, 1, ... (olds[0] should be 0, .notdef). Components of
// composite glyphs are added after them and renumbered; tables a PDF
// reader does not use (cmap, GSUB, GPOS, name, post, kern) are left out.
//
// For a font with CFF outlines it returns a CID-keyed CFF table instead
// (subsetCFF): what PDF embeds as FontFile3.
func (s *sfnt) subset(olds []uint16) ([]byte, error) {
	if s.cff != nil {
		return subsetCFF(s.cff, s.numGlyphs, olds)
	}
	newID := make(map[uint16]uint16, len(olds))
	order := make([]uint16, 0, len(olds))
	add := func(g uint16) uint16 {
		if id, ok := newID[g]; ok {
			return id
		}
		id := uint16(len(order))
		newID[g] = id
		order = append(order, g)
		return id
	}
	for _, g := range olds {
		add(g)
	}
	var glyf []byte
	loca := make([]byte, 0, 4*(len(order)+1))
	hmtx := make([]byte, 0, 4*len(order))
	for i := 0; i < len(order); i++ { // order grows as components are found
		if len(order) > 65535 {
			return nil, errMalformed
		}
		g, err := s.glyph(int(order[i]))
		if err != nil {
			return nil, err
		}
		offs, err := components(g)
		if err != nil {
			return nil, err
		}
		loca = binary.BigEndian.AppendUint32(loca, uint32(len(glyf)))
		start := len(glyf)
		if s.keepHints {
			glyf = append(glyf, g...)
		} else {
			glyf = appendUnhinted(glyf, g)
		}
		for _, o := range offs {
			old, _ := u16(g, o)
			if old >= s.numGlyphs {
				return nil, fmt.Errorf("%w: component glyph %d", errMalformed, old)
			}
			binary.BigEndian.PutUint16(glyf[start+o:], add(uint16(old)))
		}
		for len(glyf)%4 != 0 {
			glyf = append(glyf, 0)
		}
		adv, lsb := s.hmetric(int(order[i]))
		hmtx = binary.BigEndian.AppendUint16(hmtx, uint16(adv))
		hmtx = binary.BigEndian.AppendUint16(hmtx, uint16(lsb))
	}
	loca = binary.BigEndian.AppendUint32(loca, uint32(len(glyf)))

	head := append([]byte(nil), s.tables["head"]...)
	if len(head) < 54 {
		return nil, errMalformed
	}
	binary.BigEndian.PutUint32(head[8:], 0) // checkSumAdjustment, set below
	binary.BigEndian.PutUint16(head[50:], 1)
	hhea := append([]byte(nil), s.tables["hhea"]...)
	binary.BigEndian.PutUint16(hhea[34:], uint16(len(order)))
	maxp := append([]byte(nil), s.tables["maxp"]...)
	binary.BigEndian.PutUint16(maxp[4:], uint16(len(order)))

	out := map[string][]byte{"glyf": glyf, "loca": loca, "hmtx": hmtx, "head": head, "hhea": hhea, "maxp": maxp}
	if s.keepHints {
		for _, t := range []string{"cvt ", "fpgm", "prep"} { // hinting programs the glyphs call
			if b := s.tables[t]; b != nil {
				out[t] = b
			}
		}
	}
	return writeSFNT(out), nil
}

// Hinting is left out of subsets (docs/decisions.md, "Subsets without
// hinting"): the TrueType instructions of each glyph and the programs they
// call (fpgm, prep, cvt) are a third of a bundled Noto subset, compressed,
// and PDF viewers rasterise without them (pdf.js, PDFium, Quartz and
// poppler draw unhinted, anti-aliased outlines); printers print at
// resolutions where hints change nothing. The outlines are unchanged.

// weHaveInstructions is the composite glyph flag of instructions after
// the last component.
const weHaveInstructions = 0x0100

// appendUnhinted appends glyph g to dst without its instructions: a simple
// glyph's instructionLength becomes 0, a composite glyph loses the flag and
// the bytes after its components. A glyph it cannot read is appended as
// it is (components, which the subset runs first, rejects malformed
// composites).
func appendUnhinted(dst, g []byte) []byte {
	if len(g) < 10 {
		return append(dst, g...)
	}
	n := int(int16(binary.BigEndian.Uint16(g)))
	if n >= 0 {
		p := 10 + 2*n // instructionLength, after endPtsOfContours
		il, ok := u16(g, p)
		if !ok || p+2+il > len(g) {
			return append(dst, g...)
		}
		dst = append(dst, g[:p]...)
		dst = append(dst, 0, 0)
		return append(dst, g[p+2+il:]...)
	}
	start := len(dst)
	p := 10
	for {
		flags, ok := u16(g, p)
		if !ok || p+4 > len(g) {
			return append(dst[:start], g...)
		}
		next := p + componentLen(flags)
		if next > len(g) {
			return append(dst[:start], g...)
		}
		if p == 10 {
			dst = append(dst, g[:10]...)
		}
		at := len(dst)
		dst = append(dst, g[p:next]...)
		binary.BigEndian.PutUint16(dst[at:], uint16(flags&^weHaveInstructions))
		if flags&moreComponents == 0 {
			return dst
		}
		p = next
	}
}

// trickyNames are the families FreeType treats as "tricky"
// (src/truetype/ttobjs.c, tt_check_trickyness_family): old CJK fonts
// whose hinting programs place the strokes of their glyphs, drawn wrong
// without them. FreeType matches a substring of the family name.
var trickyNames = []string{
	"cpop", "DFGirl-W6-WIN-BF", "DFGothic-EB", "DFGyoSho-Lt", "DFHei",
	"DFHSGothic-W5", "DFHSMincho-W3", "DFHSMincho-W7", "DFKaiSho-SB",
	"DFKaiShu", "DFKai-SB", "DFMing", "DLC", "HuaTianKaiTi", "HuaTianSongTi",
	"Ming(for ISO10646)", "MingLiU", "MingMedium", "PMingLiU", "MingLi43",
}

// trickyFont reports whether a name table names a tricky family (any
// family, full or PostScript name, in any platform's encoding).
func trickyFont(name []byte) bool {
	count, _ := u16(name, 2)
	strs, _ := u16(name, 4)
	for i := 0; i < count; i++ {
		rec := 6 + 12*i
		platform, _ := u16(name, rec)
		id, _ := u16(name, rec+6)
		ln, _ := u16(name, rec+8)
		off, ok := u16(name, rec+10)
		if !ok || strs+off+ln > len(name) || (id != 1 && id != 4 && id != 6 && id != 16) {
			continue
		}
		raw := name[strs+off : strs+off+ln]
		var str string
		if platform == 0 || platform == 3 { // UTF-16BE
			b := make([]byte, 0, len(raw)/2)
			for j := 0; j+1 < len(raw); j += 2 {
				if raw[j] == 0 && raw[j+1] < 0x80 {
					b = append(b, raw[j+1])
				}
			}
			str = string(b)
		} else {
			str = string(raw)
		}
		for _, t := range trickyNames {
			if strings.Contains(str, t) {
				return true
			}
		}
	}
	return false
}

// writeSFNT assembles tables into a TrueType file with checksums.
func writeSFNT(tables map[string][]byte) []byte { return writeSFNTVersion(0x00010000, tables) }

// writeSFNTVersion assembles tables into a font file of the given version
// (0x00010000 TrueType outlines, "OTTO" CFF outlines) with checksums.
func writeSFNTVersion(version uint32, tables map[string][]byte) []byte {
	tags := make([]string, 0, len(tables))
	size := 12 + 16*len(tables)
	for t, b := range tables {
		tags = append(tags, t)
		size += (len(b) + 3) &^ 3
	}
	sort.Strings(tags)
	out := make([]byte, 12+16*len(tags), size)
	binary.BigEndian.PutUint32(out, version)
	n := len(tags)
	binary.BigEndian.PutUint16(out[4:], uint16(n))
	es := 0
	for 1<<(es+1) <= n {
		es++
	}
	binary.BigEndian.PutUint16(out[6:], uint16(16<<es))
	binary.BigEndian.PutUint16(out[8:], uint16(es))
	binary.BigEndian.PutUint16(out[10:], uint16(n*16-16<<es))
	headAt := 0
	for i, t := range tags {
		b := tables[t]
		rec := out[12+16*i:]
		copy(rec, t)
		binary.BigEndian.PutUint32(rec[4:], checksum(b))
		binary.BigEndian.PutUint32(rec[8:], uint32(len(out)))
		binary.BigEndian.PutUint32(rec[12:], uint32(len(b)))
		if t == "head" {
			headAt = len(out)
		}
		out = append(out, b...)
		for len(out)%4 != 0 {
			out = append(out, 0)
		}
	}
	if headAt > 0 {
		binary.BigEndian.PutUint32(out[headAt+8:], 0xB1B0AFBA-checksum(out))
	}
	return out
}

func checksum(b []byte) uint32 {
	var sum uint32
	for i := 0; i < len(b); i += 4 {
		var w [4]byte
		copy(w[:], b[i:])
		sum += binary.BigEndian.Uint32(w[:])
	}
	return sum
}

// CollectionFont returns font i of a font collection (.ttc, .otc) as a
// font file of its own, so that it parses, subsets and embeds like any
// other. A file that is not a collection is returned as it is for i 0.
func CollectionFont(data []byte, i int) ([]byte, error) {
	tag, ok := u32(data, 0)
	if !ok {
		return nil, errMalformed
	}
	if tag != 0x74746366 { // "ttcf"
		if i != 0 {
			return nil, fmt.Errorf("%w: not a font collection", errMalformed)
		}
		return data, nil
	}
	n, ok := u32(data, 8)
	if !ok || n == 0 || n > 1024 || i < 0 || uint32(i) >= n {
		return nil, fmt.Errorf("%w: no font %d in the collection", errMalformed, i)
	}
	at, ok := u32(data, 12+4*i)
	if !ok || uint64(at)+12 > uint64(len(data)) {
		return nil, fmt.Errorf("%w: font %d outside the collection", errMalformed, i)
	}
	dir := data[at:]
	version, _ := u32(dir, 0)
	nt, _ := u16(dir, 4)
	if nt == 0 || nt > 200 {
		return nil, errMalformed
	}
	tables := make(map[string][]byte, nt)
	for k := 0; k < nt; k++ {
		rec := 12 + 16*k
		if rec+16 > len(dir) {
			return nil, errMalformed
		}
		off, _ := u32(dir, rec+8)
		ln, _ := u32(dir, rec+12)
		if uint64(off)+uint64(ln) > uint64(len(data)) {
			return nil, fmt.Errorf("%w: table outside the collection", errMalformed)
		}
		tables[string(dir[rec:rec+4])] = data[off : off+ln]
	}
	return writeSFNTVersion(version, tables), nil
}
