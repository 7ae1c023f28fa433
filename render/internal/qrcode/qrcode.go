// go-qrcode
// Copyright 2014 Tom Harwood

/*
Package qrcode implements a QR Code encoder.

It is a fork of github.com/skip2/go-qrcode (see README.md) that makes the
same symbols, module for module, several times faster:

	q, err := qrcode.New("https://example.org", qrcode.Medium)
	bitmap := q.Bitmap() // [y][x], quiet zone included

A QR Code contains error recovery information to aid reading damaged or
obscured codes. There are four levels of error recovery: qrcode.{Low, Medium,
High, Highest}. QR Codes with a higher recovery level are more robust to damage,
at the cost of being physically larger.

The maximum capacity of a QR Code varies according to the content encoded and
the error recovery level. The maximum capacity is 2,953 bytes, 4,296
alphanumeric characters, 7,089 numeric digits, or a combination of these.

This package implements a subset of QR Code 2005, as defined in ISO/IEC
18004:2006.
*/
package qrcode

import (
	"errors"
	"fmt"
	"sync"
)

// A QRCode represents a valid encoded QRCode.
type QRCode struct {
	// Original content encoded.
	Content string

	// QR Code type.
	Level         RecoveryLevel
	VersionNumber int

	mask    int    // the data mask chosen, 0–7
	size    int    // modules on a side, without the quiet zone
	modules []byte // size*size, row by row, 1 dark
}

// scratch is the working memory of one encoding, pooled.
type scratch struct {
	bits              bitBuffer
	actual, optimised []segment
	ec                []byte // the error correction codewords of all blocks
	codewords         []byte // interleaved data and error correction codewords
	blocks            []blockRef
	grid, work, best  []byte
}

// blockRef locates one block's codewords: its data in the data bits, its
// error correction codewords in scratch.ec.
type blockRef struct {
	data, ec []byte
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// grow returns b resized to n bytes, reusing its storage when it can; the
// contents are not cleared.
func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// New constructs a QRCode: it chooses the data segments, the version and the
// data mask exactly as upstream's New and Bitmap did.
//
//	var q *qrcode.QRCode
//	q, err := qrcode.New("my content", qrcode.Medium)
//
// An error occurs if the content is empty or too long.
func New(content string, level RecoveryLevel) (*QRCode, error) {
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)

	var chosenVersion *qrCodeVersion
	var err error

	for t := range dataEncoders {
		encoder := &dataEncoders[t]
		s.actual, s.optimised, err = encoder.encode(content, &s.bits, s.actual, s.optimised)

		if err != nil {
			continue
		}

		chosenVersion = chooseQRCodeVersion(level, encoder, s.bits.n)

		if chosenVersion != nil {
			break
		}
	}

	if err != nil {
		return nil, err
	} else if chosenVersion == nil {
		return nil, errors.New("content too long to encode")
	}

	q := &QRCode{
		Content: content,

		Level:         level,
		VersionNumber: chosenVersion.version,
	}
	q.encode(s, chosenVersion)

	return q, nil
}

// Bitmap returns the QR Code as a 2D array of 1-bit pixels.
//
// bitmap[y][x] is true if the pixel at (x, y) is set.
//
// The bitmap includes the required "quiet zone" around the QR Code to aid
// decoding. Each call returns a new bitmap.
func (q *QRCode) Bitmap() [][]bool {
	n := q.size
	full := n + 2*quietZoneSize
	cells := make([]bool, full*full)
	rows := make([][]bool, full)
	for y := range rows {
		rows[y] = cells[y*full : (y+1)*full : (y+1)*full]
	}
	for y := range n {
		src := q.modules[y*n : y*n+n]
		dst := rows[y+quietZoneSize][quietZoneSize : quietZoneSize+n]
		for x, v := range src {
			dst[x] = v != 0
		}
	}
	return rows
}

// formatIDs are the 2 error correction level bits of the format
// information, shifted past the 3 mask bits.
var formatIDs = [...]int{Low: 0x08, Medium: 0x00, High: 0x18, Highest: 0x10}

// encode completes the steps required to encode the QR Code. These include
// adding the terminator bits and padding, splitting the data into blocks and
// applying the error correction, and selecting the best data mask.
func (q *QRCode) encode(s *scratch, v *qrCodeVersion) {
	numDataBits := v.numDataBits()

	// Terminator bits.
	s.bits.appendZeros(v.numTerminatorBitsRequired(s.bits.n))

	// Padding: to the nearest codeword boundary, then the pad codewords
	// 0b11101100 and 0b00010001 alternately.
	if s.bits.n != numDataBits {
		s.bits.appendZeros((8 - s.bits.n%8) % 8)
		pad := [2]byte{0xec, 0x11}
		for i := 0; numDataBits-s.bits.n >= 8; i = 1 - i {
			s.bits.appendByte(pad[i])
		}
		if s.bits.n != numDataBits {
			panic(fmt.Sprintf("BUG: got len %d, expected %d", s.bits.n, numDataBits))
		}
	}
	data := s.bits.bytes[:numDataBits/8]

	// Split into blocks and apply error correction to each.
	numCodewords := v.numCodewords()
	s.ec = grow(s.ec, numCodewords-len(data))
	s.blocks = s.blocks[:0]
	dataStart, ecStart := 0, 0
	maxData, maxEC := 0, 0
	for _, b := range v.block {
		numEC := b.numCodewords - b.numDataCodewords
		maxData = max(maxData, b.numDataCodewords)
		maxEC = max(maxEC, numEC)
		for range b.numBlocks {
			blk := blockRef{
				data: data[dataStart : dataStart+b.numDataCodewords],
				ec:   s.ec[ecStart : ecStart+numEC],
			}
			rsEncode(blk.data, blk.ec)
			s.blocks = append(s.blocks, blk)
			dataStart += b.numDataCodewords
			ecStart += numEC
		}
	}

	// Interleave the blocks: data codewords, then error correction
	// codewords, taking one from each block in turn.
	cw := s.codewords[:0]
	for i := range maxData {
		for _, b := range s.blocks {
			if i < len(b.data) {
				cw = append(cw, b.data[i])
			}
		}
	}
	for i := range maxEC {
		for _, b := range s.blocks {
			if i < len(b.ec) {
				cw = append(cw, b.ec[i])
			}
		}
	}
	s.codewords = cw

	// Place the codewords along the data path; the remainder bits are
	// light, as in base.
	l := layoutOf(v.version)
	if len(l.path) != len(cw)*8+v.numRemainderBits {
		panic(fmt.Sprintf("bug: %d data modules for %d bits (version=%d)",
			len(l.path), len(cw)*8+v.numRemainderBits, v.version))
	}
	n := l.size
	q.size = n
	q.modules = make([]byte, n*n)
	if l.bits != nil {
		q.mask = l.chooseMaskBits(cw, q.Level, q.modules)
		return
	}

	s.grid = grow(s.grid, n*n)
	copy(s.grid, l.base)
	path := l.path
	for i, c := range cw {
		p := path[i*8 : i*8+8 : i*8+8]
		s.grid[p[0]] = c >> 7
		s.grid[p[1]] = c >> 6 & 1
		s.grid[p[2]] = c >> 5 & 1
		s.grid[p[3]] = c >> 4 & 1
		s.grid[p[4]] = c >> 3 & 1
		s.grid[p[5]] = c >> 2 & 1
		s.grid[p[6]] = c >> 1 & 1
		s.grid[p[7]] = c & 1
	}

	// Choose the mask with the lowest penalty, the first of equals.
	s.work = grow(s.work, n*n)
	s.best = grow(s.best, n*n)
	penalty := 0
	for mask := range 8 {
		l.applyMask(s.work, s.grid, mask, formatBitSequence[formatIDs[q.Level]|mask].regular)
		p := penaltyScore(s.work, n)
		if mask == 0 || p < penalty {
			s.work, s.best = s.best, s.work
			q.mask = mask
			penalty = p
		}
	}

	copy(q.modules, s.best)
}
