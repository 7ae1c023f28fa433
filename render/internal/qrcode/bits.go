// go-qrcode
// Copyright 2014 Tom Harwood

package qrcode

// bitBuffer is an append-only bit string, most significant bit first, that
// replaces upstream's bitset package: bits are appended several at a time,
// not one by one.
type bitBuffer struct {
	bytes []byte // the bits; the unused low bits of the last byte are zero
	n     int    // the number of bits
}

// reset empties b, keeping its storage.
func (b *bitBuffer) reset() {
	b.bytes = b.bytes[:0]
	b.n = 0
}

// appendBits appends the numBits (0–32) least significant bits of value.
func (b *bitBuffer) appendBits(value uint32, numBits int) {
	if numBits < 32 {
		value &= 1<<uint(numBits) - 1
	}
	for numBits > 0 {
		used := b.n & 7
		if used == 0 {
			b.bytes = append(b.bytes, 0)
		}
		free := 8 - used
		take := min(free, numBits)
		chunk := byte(value >> uint(numBits-take))
		chunk &= byte(1<<uint(take) - 1)
		b.bytes[len(b.bytes)-1] |= chunk << uint(free-take)
		numBits -= take
		b.n += take
	}
}

// appendByte appends 8 bits.
func (b *bitBuffer) appendByte(v byte) {
	used := b.n & 7
	if used == 0 {
		b.bytes = append(b.bytes, v)
	} else {
		b.bytes[len(b.bytes)-1] |= v >> uint(used)
		b.bytes = append(b.bytes, v<<uint(8-used))
	}
	b.n += 8
}

// appendZeros appends n zero bits.
func (b *bitBuffer) appendZeros(n int) {
	b.n += n
	for len(b.bytes)*8 < b.n {
		b.bytes = append(b.bytes, 0)
	}
}
