// Copyright ©2023 The go-pdf Authors. All rights reserved.
// Use of this source code is governed by a MIT-style
// license that can be found in the LICENSE file.

/*
 * Rewritten by Folio from upstream's utf8fontfile.go, which carries:
 *
 * Copyright (c) 2019 Arteom Korotkiy (Gmail: arteomkorotkiy)
 *
 * Permission to use, copy, modify, and distribute this software for any
 * purpose with or without fee is hereby granted, provided that the above
 * copyright notice and this permission notice appear in all copies.
 *
 * THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
 * WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
 * MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
 * ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
 * WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
 * ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
 * OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.
 */

package fpdf

// This file replaces upstream's utf8fontfile.go. Upstream parsed the TrueType
// file again for every document (and again when writing it), built a JSON of
// 65,536 widths to name the font, and subset and compressed it with a new
// compressor each time. Here a font is parsed once into a read-only
// ParsedUTF8Font that any number of documents share; each document only
// records the runes it uses, and the subset written for a set of runes is
// built once and cached.

import (
	"bytes"
	"compress/flate"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/adler32"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"sync"
)

// toUnicode is the ToUnicode CMap of every UTF-8 font: character codes are
// UTF-16 code units (Identity-H), so they map to themselves.
const toUnicode = "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n/CIDSystemInfo\n<</Registry (Adobe)\n/Ordering (UCS)\n/Supplement 0\n>> def\n/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n1 beginbfrange\n<0000> <FFFF> <0000>\nendbfrange\nendcmap\nCMapName currentdict /CMap defineresource pop\nend\nend"

// maxCachedSubsets bounds the subsets each parsed font keeps: a subset of
// a Go font for a one-page invoice is 7 to 13 KB compressed, so a font's
// cache stays under about 1 MB. Subsets are exact (only the runes drawn),
// so a document's bytes never depend on what was rendered before it.
const maxCachedSubsets = 64

// ParsedUTF8Font is a TrueType font parsed once for use by any number of
// documents (see Fpdf.AddUTF8FontParsed). It is read-only once made, apart
// from an internal cache of subsets that is safe for concurrent use.
type ParsedUTF8Font struct {
	data        []byte              // the TrueType file, not copied: must not change
	tables      map[string]ttfTable // table directory
	desc        FontDescType
	up, ut      int      // underline position and thickness
	cw          []int    // width by rune in 1/1000 em (65535: zero width; cw[0]: count of mapped runes)
	glyphs      []uint16 // glyph index by rune (0: none)
	loca        []int    // glyph offsets into glyf, numGlyphs+1 entries
	numGlyphs   int
	numHMetrics int
	digest      [sha1.Size]byte // of data, names the font in documents

	mu      sync.Mutex
	subsets map[string]*fontSubset // by the runes used
	ids     map[string]string      // font ids by font key

	fixedOnce sync.Once
	fixedZ    []byte // the fixed tables' data compressed, see compressFont
	fixedLen  int    // its uncompressed length
}

type ttfTable struct{ off, len int }

// fontSubset is what a document writes for one UTF-8 font and one set of
// runes: it depends only on the font and the runes, so it is shared.
type fontSubset struct {
	file     []byte // zlib-compressed subset font
	fileLen  int    // its uncompressed length (Length1)
	cidToGID []byte // zlib-compressed CIDToGIDMap
	widths   string // the /W array's content
}

// errFont reports a font fpdf cannot use.
var errFont = errors.New("fpdf: unusable TrueType font")

// ttfReader reads big-endian numbers at offsets, remembering the first read
// out of bounds instead of panicking.
type ttfReader struct {
	b   []byte
	bad bool
}

func (r *ttfReader) u16(off int) int {
	if off < 0 || off+2 > len(r.b) {
		r.bad = true
		return 0
	}
	return int(binary.BigEndian.Uint16(r.b[off:]))
}

func (r *ttfReader) i16(off int) int { return int(int16(uint16(r.u16(off)))) }

func (r *ttfReader) u32(off int) int {
	if off < 0 || off+4 > len(r.b) {
		r.bad = true
		return 0
	}
	return int(binary.BigEndian.Uint32(r.b[off:]))
}

// ParseUTF8Font parses a TrueType font (glyf outlines, a format 4 Unicode
// cmap) for documents with UTF-8 text. The bytes are kept, not copied, and
// must not be modified afterwards.
func ParseUTF8Font(ttf []byte) (*ParsedUTF8Font, error) {
	r := &ttfReader{b: ttf}
	switch r.u32(0) {
	case 0x00010000, 0x74727565: // TrueType, "true"
	case 0x4F54544F, 0x74746366: // "OTTO", "ttcf"
		return nil, fmt.Errorf("%w: CFF outlines and collections are not supported", errFont)
	default:
		return nil, fmt.Errorf("%w: not a TrueType file", errFont)
	}
	pf := &ParsedUTF8Font{data: ttf, tables: map[string]ttfTable{}, subsets: map[string]*fontSubset{}, ids: map[string]string{}}
	n := r.u16(4)
	for i := 0; i < n; i++ {
		rec := 12 + 16*i
		if rec+16 > len(ttf) {
			return nil, fmt.Errorf("%w: truncated table directory", errFont)
		}
		off, size := r.u32(rec+8), r.u32(rec+12)
		if off > len(ttf) || size > len(ttf)-off {
			return nil, fmt.Errorf("%w: table %q outside the file", errFont, ttf[rec:rec+4])
		}
		pf.tables[string(ttf[rec:rec+4])] = ttfTable{off, size}
	}
	for _, name := range []string{"head", "hhea", "maxp", "hmtx", "loca", "glyf", "cmap", "post"} {
		if pf.tables[name].len == 0 {
			return nil, fmt.Errorf("%w: no %s table", errFont, name)
		}
	}
	for name, min := range map[string]int{"head": 54, "hhea": 36, "maxp": 6, "post": 16} {
		if pf.tables[name].len < min {
			return nil, fmt.Errorf("%w: %s table too short", errFont, name)
		}
	}
	if err := pf.parseMetrics(r); err != nil {
		return nil, err
	}
	if err := pf.parseGlyphs(r); err != nil {
		return nil, err
	}
	if r.bad {
		return nil, fmt.Errorf("%w: truncated tables", errFont)
	}
	pf.digest = sha1.Sum(ttf)
	return pf, nil
}

// parseMetrics reads the font descriptor's values as upstream's
// utf8FontFile.parseTables did, so that layouts do not change.
func (pf *ParsedUTF8Font) parseMetrics(r *ttfReader) error {
	head, hhea, post := pf.tables["head"].off, pf.tables["hhea"].off, pf.tables["post"].off
	unitsPerEm := r.u16(head + 18)
	if unitsPerEm == 0 {
		return fmt.Errorf("%w: zero units per em", errFont)
	}
	scale := 1000.0 / float64(unitsPerEm)
	d := &pf.desc
	d.FontBBox = fontBoxType{int(float64(r.i16(head+36)) * scale), int(float64(r.i16(head+38)) * scale),
		int(float64(r.i16(head+40)) * scale), int(float64(r.i16(head+42)) * scale)}

	if r.u16(hhea+32) != 0 {
		return fmt.Errorf("%w: unknown horizontal metric data format", errFont)
	}
	d.Ascent = int(float64(r.i16(hhea+4)) * scale)
	d.Descent = int(float64(r.i16(hhea+6)) * scale)
	pf.numHMetrics = r.u16(hhea + 34)
	if pf.numHMetrics == 0 {
		return fmt.Errorf("%w: no horizontal metrics", errFont)
	}

	weight := 500
	if os2, ok := pf.tables["OS/2"]; ok {
		o := os2.off
		version := r.u16(o)
		weight = r.u16(o + 4)
		if fsType := r.u16(o + 8); fsType == 0x0002 || fsType&0x0300 != 0 {
			weight = 0 // upstream stops reading OS/2 here (restricted licence)
		} else {
			if d.Ascent == 0 {
				d.Ascent = int(float64(r.i16(o+68)) * scale)
			}
			if d.Descent == 0 {
				d.Descent = int(float64(r.i16(o+70)) * scale)
			}
			if version > 1 {
				d.CapHeight = int(float64(r.i16(o+88)) * scale)
			} else {
				d.CapHeight = d.Ascent
			}
			d.StemV = 50 + int(math.Pow(float64(weight)/65.0, 2))
		}
	} else {
		if d.Ascent == 0 {
			d.Ascent = int(float64(d.FontBBox.Ymax) * scale)
		}
		if d.Descent == 0 {
			d.Descent = int(float64(d.FontBBox.Ymin) * scale)
		}
		d.CapHeight = d.Ascent
		d.StemV = 50 + int(math.Pow(float64(weight)/65.0, 2))
	}

	d.ItalicAngle = r.i16(post + 4)
	pf.up = round(float64(r.i16(post+8)) * scale)
	pf.ut = round(float64(r.i16(post+10)) * scale)
	d.Flags = 4
	if d.ItalicAngle != 0 {
		d.Flags |= 64
	}
	if weight >= 600 {
		d.Flags |= 262144
	}
	if r.u32(post+12) != 0 {
		d.Flags |= 1
	}
	return nil
}

// parseGlyphs reads the glyph count, the glyph offsets, the Unicode cmap and
// the widths by rune.
func (pf *ParsedUTF8Font) parseGlyphs(r *ttfReader) error {
	pf.numGlyphs = r.u16(pf.tables["maxp"].off + 4)
	if pf.numGlyphs == 0 {
		return fmt.Errorf("%w: no glyphs (not even .notdef)", errFont)
	}
	loca, glyf := pf.tables["loca"], pf.tables["glyf"]
	pf.loca = make([]int, pf.numGlyphs+1)
	switch r.u16(pf.tables["head"].off + 50) {
	case 0:
		if loca.len < 2*(pf.numGlyphs+1) {
			return fmt.Errorf("%w: loca table too short", errFont)
		}
		for i := range pf.loca {
			pf.loca[i] = 2 * r.u16(loca.off+2*i)
		}
	case 1:
		if loca.len < 4*(pf.numGlyphs+1) {
			return fmt.Errorf("%w: loca table too short", errFont)
		}
		for i := range pf.loca {
			pf.loca[i] = r.u32(loca.off + 4*i)
		}
	default:
		return fmt.Errorf("%w: unknown loca format", errFont)
	}
	for _, o := range pf.loca {
		if o > glyf.len {
			return fmt.Errorf("%w: glyph outside the glyf table", errFont)
		}
	}
	if pf.tables["hmtx"].len < 4*pf.numHMetrics {
		return fmt.Errorf("%w: hmtx table too short", errFont)
	}

	// The first Unicode (3,1 or 0,*) subtable in format 4, as upstream.
	cmap := pf.tables["cmap"].off
	sub := -1
	for i, n := 0, r.u16(cmap+2); i < n && sub < 0; i++ {
		rec := cmap + 4 + 8*i
		platform, encoding, off := r.u16(rec), r.u16(rec+2), r.u32(rec+4)
		if (platform == 3 && encoding == 1 || platform == 0) && r.u16(cmap+off) == 4 {
			sub = cmap + off
		}
	}
	if sub < 0 || r.bad {
		return fmt.Errorf("%w: no Unicode cmap in format 4", errFont)
	}
	end := sub + r.u16(sub+2)
	segs := r.u16(sub+6) / 2
	ends, starts := sub+14, sub+16+2*segs
	deltas, rangeOffsets := sub+16+4*segs, sub+16+6*segs
	pf.glyphs = make([]uint16, 0x10000)
	for s := 0; s < segs; s++ {
		first, last := r.u16(starts+2*s), r.u16(ends+2*s)
		delta, ro := r.i16(deltas+2*s), r.u16(rangeOffsets+2*s)
		for c := first; c <= last; c++ {
			var g int
			if ro == 0 {
				g = (c + delta) & 0xFFFF
			} else if p := rangeOffsets + 2*s + ro + 2*(c-first); p < end && p+2 <= len(r.b) {
				if g = r.u16(p); g != 0 {
					g = (g + delta) & 0xFFFF
				}
			}
			pf.glyphs[c] = uint16(g)
		}
	}

	// Widths by rune, rounded to 1/1000 em; 65535 marks a zero width.
	hmtx := pf.tables["hmtx"].off
	scale := 1000.0 / float64(r.u16(pf.tables["head"].off+18))
	advance := func(g int) int {
		if g >= pf.numHMetrics {
			g = pf.numHMetrics - 1
		}
		if a := r.u16(hmtx + 4*g); a < 1<<15 {
			return a
		}
		return 0
	}
	pf.desc.MissingWidth = round(scale * float64(advance(0)))
	pf.cw = make([]int, 0x10000)
	count := 0
	for c := 1; c < 0xFFFF; c++ {
		g := int(pf.glyphs[c])
		if g == 0 || g >= pf.numGlyphs {
			continue
		}
		w := int(math.Round(scale * float64(advance(g))))
		if w == 0 {
			w = 65535
		}
		pf.cw[c] = w
		count++
	}
	pf.cw[0] = count
	return nil
}

// fontID names the font in a document's resources: it differs between
// fonts and between the styles one font is added under. Upstream hashed a
// JSON of the font's 65,536 widths for every document instead.
func (pf *ParsedUTF8Font) fontID(fontKey string) string {
	pf.mu.Lock()
	defer pf.mu.Unlock()
	id, ok := pf.ids[fontKey]
	if !ok {
		h := sha1.New()
		h.Write(pf.digest[:])
		h.Write([]byte(fontKey))
		id = hex.EncodeToString(h.Sum(nil))
		if len(pf.ids) < 64 { // a few styles in practice
			pf.ids[fontKey] = id
		}
	}
	return id
}

// runeSet records the runes of the Basic Multilingual Plane a document
// draws in one font (others cannot be mapped by a format 4 cmap): a bit
// per rune, in blocks of 1,024 runes made when first used, since a
// document uses a few scripts at most.
type runeSet [64]*[16]uint64

func (s *runeSet) add(r rune) {
	if r < 0 || r >= 0x10000 {
		return
	}
	b := s[r>>10]
	if b == nil {
		b = new([16]uint64)
		s[r>>10] = b
	}
	b[r>>6&15] |= 1 << (uint(r) & 63)
}

// runes lists the runes in the set, in order, without 0.
func (s *runeSet) runes() []uint16 {
	n := 0
	for _, b := range s {
		if b != nil {
			for _, w := range b {
				n += bits.OnesCount64(w)
			}
		}
	}
	out := make([]uint16, 0, n)
	for i, b := range s {
		if b == nil {
			continue
		}
		for j, w := range b {
			for w != 0 {
				bit := bits.TrailingZeros64(w)
				w &^= 1 << uint(bit)
				if r := i<<10 | j<<6 | bit; r != 0 {
					out = append(out, uint16(r))
				}
			}
		}
	}
	return out
}

// subset returns the subset written for the runes in set, building and
// caching it on first use.
func (pf *ParsedUTF8Font) subset(set *runeSet) (*fontSubset, error) {
	runes := set.runes()
	key := make([]byte, 2*len(runes))
	for i, r := range runes {
		binary.BigEndian.PutUint16(key[2*i:], r)
	}
	pf.mu.Lock()
	s := pf.subsets[string(key)]
	pf.mu.Unlock()
	if s != nil {
		return s, nil
	}
	s, err := pf.makeSubset(runes)
	if err != nil {
		return nil, err
	}
	pf.mu.Lock()
	if len(pf.subsets) >= maxCachedSubsets {
		for k := range pf.subsets { // drop any one
			delete(pf.subsets, k)
			break
		}
	}
	pf.subsets[string(key)] = s
	pf.mu.Unlock()
	return s, nil
}

// Composite glyph flags.
const (
	glyfArgWords   = 1 << 0
	glyfScale      = 1 << 3
	glyfMore       = 1 << 5
	glyfXYScale    = 1 << 6
	glyfTwoByTwo   = 1 << 7
	glyfHeaderSize = 10
)

// components calls fn with the offset of each component glyph index in a
// composite glyph's data; it stops at the end of the data.
func components(data []byte, fn func(off int)) {
	if len(data) < glyfHeaderSize || int16(binary.BigEndian.Uint16(data)) >= 0 {
		return
	}
	for p := glyfHeaderSize; p+4 <= len(data); {
		flags := binary.BigEndian.Uint16(data[p:])
		fn(p + 2)
		p += 4
		if flags&glyfArgWords != 0 {
			p += 4
		} else {
			p += 2
		}
		switch {
		case flags&glyfScale != 0:
			p += 2
		case flags&glyfXYScale != 0:
			p += 4
		case flags&glyfTwoByTwo != 0:
			p += 8
		}
		if flags&glyfMore == 0 {
			return
		}
	}
}

// glyph returns the outline data of glyph g (empty for none).
func (pf *ParsedUTF8Font) glyph(g int) []byte {
	if g < 0 || g+1 >= len(pf.loca) {
		return nil
	}
	start, end := pf.loca[g], pf.loca[g+1]
	if end <= start {
		return nil
	}
	glyf := pf.tables["glyf"]
	return pf.data[glyf.off+start : glyf.off+end]
}

// makeSubset builds a TrueType font with the glyphs of runes (and the
// glyphs composite glyphs use), numbered in their original order, with the
// CIDToGIDMap and the widths that go with it.
func (pf *ParsedUTF8Font) makeSubset(runes []uint16) (*fontSubset, error) {
	// The glyphs: .notdef, the runes', and their components.
	seen := make(map[int]bool, len(runes)+1)
	gids := []int{0}
	seen[0] = true
	for _, r := range runes {
		if g := int(pf.glyphs[r]); g != 0 && g < pf.numGlyphs && !seen[g] {
			seen[g] = true
			gids = append(gids, g)
		}
	}
	for i := 0; i < len(gids); i++ {
		components(pf.glyph(gids[i]), func(off int) {
			g := int(binary.BigEndian.Uint16(pf.glyph(gids[i])[off:]))
			if g < pf.numGlyphs && !seen[g] {
				seen[g] = true
				gids = append(gids, g)
			}
		})
	}
	slices.Sort(gids)
	newID := func(g int) uint16 {
		i, _ := slices.BinarySearch(gids, g)
		return uint16(i)
	}

	// glyf, loca and hmtx.
	var glyf []byte
	offsets := make([]int, 0, len(gids)+1)
	hmtx := make([]byte, 0, 4*len(gids))
	r := &ttfReader{b: pf.data}
	hm := pf.tables["hmtx"].off
	for _, g := range gids {
		offsets = append(offsets, len(glyf))
		start := len(glyf)
		glyf = append(glyf, pf.glyph(g)...)
		components(glyf[start:], func(off int) {
			p := start + off
			old := int(binary.BigEndian.Uint16(glyf[p:]))
			if old >= pf.numGlyphs {
				old = 0
			}
			binary.BigEndian.PutUint16(glyf[p:], newID(old))
		})
		for len(glyf)%4 != 0 {
			glyf = append(glyf, 0)
		}
		var adv, lsb int
		if g < pf.numHMetrics {
			adv, lsb = r.u16(hm+4*g), r.u16(hm+4*g+2)
		} else {
			adv = r.u16(hm + 4*(pf.numHMetrics-1))
			if p := hm + 4*pf.numHMetrics + 2*(g-pf.numHMetrics); p+2 <= pf.tables["hmtx"].off+pf.tables["hmtx"].len {
				lsb = r.u16(p)
			}
		}
		hmtx = binary.BigEndian.AppendUint16(hmtx, uint16(adv))
		hmtx = binary.BigEndian.AppendUint16(hmtx, uint16(lsb))
	}
	offsets = append(offsets, len(glyf))
	locaFormat := 0
	var loca []byte
	if (len(glyf)+1)>>1 > 0xFFFF {
		locaFormat = 1
		for _, o := range offsets {
			loca = binary.BigEndian.AppendUint32(loca, uint32(o))
		}
	} else {
		for _, o := range offsets {
			loca = binary.BigEndian.AppendUint16(loca, uint16(o/2))
		}
	}

	// The runes this subset can draw, with their new glyph ids.
	type mapping struct{ r, g uint16 }
	mapped := make([]mapping, 0, len(runes))
	for _, rn := range runes {
		if g := int(pf.glyphs[rn]); g != 0 && g < pf.numGlyphs && rn != 0xFFFF {
			mapped = append(mapped, mapping{rn, newID(g)})
		}
	}

	// cmap: format 4, one segment per run of consecutive runes and glyphs.
	type segment struct{ first, last, delta int }
	var segs []segment
	for _, m := range mapped {
		if n := len(segs); n > 0 && segs[n-1].last+1 == int(m.r) && segs[n-1].last+segs[n-1].delta+1 == int(m.g) {
			segs[n-1].last++
			continue
		}
		segs = append(segs, segment{int(m.r), int(m.r), int(m.g) - int(m.r)})
	}
	segs = append(segs, segment{0xFFFF, 0xFFFF, 1})
	segCount := len(segs)
	searchRange, entrySelector := 1, 0
	for searchRange*2 <= segCount {
		searchRange *= 2
		entrySelector++
	}
	searchRange *= 2
	u16s := []int{0, 1, 3, 1, 0, 12, // cmap header, one (3,1) subtable at 12
		4, 16 + 8*segCount, 0, 2 * segCount, searchRange, entrySelector, 2*segCount - searchRange}
	for _, s := range segs {
		u16s = append(u16s, s.last)
	}
	u16s = append(u16s, 0)
	for _, s := range segs {
		u16s = append(u16s, s.first)
	}
	for _, s := range segs {
		u16s = append(u16s, s.delta&0xFFFF)
	}
	for range segs {
		u16s = append(u16s, 0)
	}
	cmap := make([]byte, 0, 2*len(u16s))
	for _, v := range u16s {
		cmap = binary.BigEndian.AppendUint16(cmap, uint16(v))
	}

	// The other tables, copied or adjusted.
	table := func(name string) []byte {
		t := pf.tables[name]
		if t.len == 0 {
			return nil
		}
		return pf.data[t.off : t.off+t.len]
	}
	withU16 := func(name string, off, v int) []byte {
		b := slices.Clone(table(name))
		binary.BigEndian.PutUint16(b[off:], uint16(v))
		return b
	}
	head := withU16("head", 50, locaFormat)
	clear(head[8:12]) // checkSumAdjustment, set below
	post := append(append([]byte{0, 3, 0, 0}, table("post")[4:16]...), make([]byte, 16)...)
	tables := map[string][]byte{
		"cmap": cmap, "glyf": glyf, "head": head, "hhea": withU16("hhea", 34, len(gids)),
		"hmtx": hmtx, "loca": loca, "maxp": withU16("maxp", 4, len(gids)), "post": post,
	}
	for _, name := range fixedTables {
		if t := table(name); t != nil && tables[name] == nil {
			tables[name] = t
		}
	}
	file, fixedAt := assembleFont(tables)

	// CIDToGIDMap: the glyph of each character code (the rune), up to the
	// highest code drawn; upstream wrote all 65,536 (128 KB to compress).
	last := 0
	if len(runes) > 0 {
		last = int(runes[len(runes)-1])
	}
	cidToGID := make([]byte, 2*(last+1))
	for _, m := range mapped {
		binary.BigEndian.PutUint16(cidToGID[2*int(m.r):], m.g)
	}

	// Widths of the runes drawn, in runs of consecutive character codes.
	var w []byte
	prev := -2
	for _, rn := range runes {
		cw := pf.cw[rn]
		if cw == 0 {
			continue // not in the font: the default width (DW)
		}
		if cw == 65535 {
			cw = 0
		}
		if int(rn) != prev+1 {
			if prev >= 0 {
				w = append(w, " ]\n"...)
			}
			w = append(w, ' ')
			w = strconv.AppendInt(w, int64(rn), 10)
			w = append(w, " ["...)
		}
		w = append(w, ' ')
		w = strconv.AppendInt(w, int64(cw), 10)
		prev = int(rn)
	}
	if prev >= 0 {
		w = append(w, " ]"...)
	}

	return &fontSubset{
		file:     pf.compressFont(file, fixedAt),
		fileLen:  len(file),
		cidToGID: compressBytes(cidToGID),
		widths:   string(w),
	}, nil
}

// fixedTables are the same in every subset of a font. Their data goes last
// in the file, so that it can be compressed once per font (compressFont).
var fixedTables = []string{"OS/2", "cvt ", "fpgm", "gasp", "name", "post", "prep"}

// assembleFont writes a TrueType file of the tables, listed by tag, the
// fixed tables' data last, and sets head's checkSumAdjustment. It returns
// the file and where the fixed tables' data starts.
func assembleFont(tables map[string][]byte) (file []byte, fixedAt int) {
	names := make([]string, 0, len(tables))
	size := 12 + 16*len(tables)
	for name, t := range tables {
		names = append(names, name)
		size += (len(t) + 3) &^ 3
	}
	slices.Sort(names)
	// The order of the data: the variable tables by tag, then the fixed.
	order := make([]int, 0, len(names))
	for i, name := range names {
		if !slices.Contains(fixedTables, name) {
			order = append(order, i)
		}
	}
	fixed := len(order)
	for i, name := range names {
		if slices.Contains(fixedTables, name) {
			order = append(order, i)
		}
	}
	n := len(names)
	searchRange, entrySelector := 1, 0
	for searchRange*2 <= n {
		searchRange *= 2
		entrySelector++
	}
	out := make([]byte, 12+16*n, size)
	binary.BigEndian.PutUint32(out, 0x00010000)
	binary.BigEndian.PutUint16(out[4:], uint16(n))
	binary.BigEndian.PutUint16(out[6:], uint16(searchRange*16))
	binary.BigEndian.PutUint16(out[8:], uint16(entrySelector))
	binary.BigEndian.PutUint16(out[10:], uint16(n*16-searchRange*16))
	headAt := -1
	fixedAt = len(out)
	for k, i := range order {
		if k == fixed {
			fixedAt = len(out)
		}
		name := names[i]
		t := tables[name]
		rec := out[12+16*i:]
		copy(rec, name)
		if name == "head" {
			headAt = len(out)
		}
		binary.BigEndian.PutUint32(rec[8:], uint32(len(out)))
		binary.BigEndian.PutUint32(rec[12:], uint32(len(t)))
		out = append(out, t...)
		for len(out)%4 != 0 {
			out = append(out, 0)
		}
		binary.BigEndian.PutUint32(rec[4:], ttfChecksum(out[len(out)-((len(t)+3)&^3):]))
	}
	if fixed == len(order) {
		fixedAt = len(out)
	}
	if headAt >= 0 {
		binary.BigEndian.PutUint32(out[headAt+8:], 0xB1B0AFBA-ttfChecksum(out))
	}
	return out, fixedAt
}

// compressFont compresses a subset font file for a zlib (FlateDecode)
// stream. The fixed tables' data, file[fixedAt:], is the same for every
// subset of a font: it is compressed once, at the best level, into deflate
// blocks that refer only to themselves, and the stream is spliced together
// from the variable part compressed at best speed, those blocks, an empty
// final block and the checksum of the whole file.
func (pf *ParsedUTF8Font) compressFont(file []byte, fixedAt int) []byte {
	pf.fixedOnce.Do(func() {
		var b bytes.Buffer
		fw, _ := flate.NewWriter(&b, flate.BestCompression) // a valid level: no error
		_, _ = fw.Write(file[fixedAt:])
		_ = fw.Flush() // ends the blocks on a byte, not final
		pf.fixedZ = b.Bytes()
		pf.fixedLen = len(file) - fixedAt
	})
	if len(file)-fixedAt != pf.fixedLen {
		return compressBytes(file) // cannot happen: the same tables every time
	}
	b := bytes.NewBuffer(make([]byte, 0, len(file)/2+len(pf.fixedZ)))
	b.Write([]byte{0x78, 0x01}) // zlib header: deflate, 32 KB window
	fw := flateWriters.Get().(*flate.Writer)
	fw.Reset(b)
	_, _ = fw.Write(file[:fixedAt])
	_ = fw.Flush()
	flateWriters.Put(fw)
	b.Write(pf.fixedZ)
	b.Write([]byte{0x03, 0x00}) // an empty final block with fixed codes
	_ = binary.Write(b, binary.BigEndian, adler32.Checksum(file))
	return b.Bytes()
}

// flateWriters pools raw deflate compressors at best speed.
var flateWriters = sync.Pool{
	New: func() interface{} {
		fw, _ := flate.NewWriter(nil, flate.BestSpeed) // a valid level: no error
		return fw
	},
}

// ttfChecksum is the TrueType checksum of data padded to 4 bytes.
func ttfChecksum(data []byte) uint32 {
	var sum uint32
	for len(data) >= 4 {
		sum += binary.BigEndian.Uint32(data)
		data = data[4:]
	}
	var last [4]byte
	copy(last[:], data)
	return sum + binary.BigEndian.Uint32(last[:])
}
