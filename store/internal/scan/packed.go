package scan

import (
	"encoding/json"
	"errors"

	"github.com/klauspost/compress/s2"
)

// A job's variables are the largest part of its row (the request's data,
// often 1-3 KB of JSON with its keys repeated per line item). SQLite keeps
// them packed: s2-compressed behind a mark byte no JSON text starts with,
// in a BLOB. A row then takes a fraction of a page instead of a page of its
// own, which SQLite writes to the WAL and again at the checkpoint for every
// document (docs/decisions.md, Packed job variables). PostgreSQL keeps the
// text (it compresses large values itself), and `folio admin migrate`
// unpacks on the way (store/transfer).
const (
	packedMark = 0x01
	// packMin is the shortest JSON packed: below it a row shares its page
	// with others anyway.
	packMin = 512
	// maxUnpacked bounds what a packed value may claim to unpack to: more
	// than any request body (a damaged value reads as an error, not as a
	// huge allocation).
	maxUnpacked = 64 << 20
)

var errPackedDamaged = errors.New("packed JSON is damaged")

// PackJSON is raw JSON as SQLite stores it: NULL when empty, text when
// short or when packing would save less than an eighth, else the mark
// byte and its s2 block.
func PackJSON(raw json.RawMessage) any {
	if len(raw) < packMin {
		return NullJSON(raw)
	}
	b := make([]byte, 1+s2.MaxEncodedLen(len(raw)))
	b[0] = packedMark
	n := len(s2.Encode(b[1:], raw))
	if 1+n > len(raw)-len(raw)/8 {
		return string(raw)
	}
	return b[:1+n]
}

// UnpackJSON reverses PackJSON for a stored value (text or packed).
func UnpackJSON(stored []byte) (json.RawMessage, error) {
	if len(stored) == 0 || stored[0] != packedMark {
		return json.RawMessage(stored), nil
	}
	n, err := s2.DecodedLen(stored[1:])
	if err != nil || n > maxUnpacked {
		return nil, errPackedDamaged
	}
	out, err := s2.Decode(make([]byte, n), stored[1:])
	if err != nil {
		return nil, errPackedDamaged
	}
	return out, nil
}
