package scan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestPackJSON: long JSON packs to a blob that unpacks to the same bytes;
// short or incompressible JSON stays text; damage is an error.
func TestPackJSON(t *testing.T) {
	long := json.RawMessage(`{"items":[` + strings.Repeat(`{"description":"Developer support (hours)","quantity":6.5},`, 30) + `{}]}`)
	packed, ok := PackJSON(long).([]byte)
	if !ok || len(packed) >= len(long)/3 || packed[0] != packedMark {
		t.Fatalf("PackJSON(%d bytes of JSON) = %T of %d bytes, want a blob under a third", len(long), PackJSON(long), len(packed))
	}
	if got, err := UnpackJSON(packed); err != nil || !bytes.Equal(got, long) {
		t.Fatalf("unpacked %.60q (%v), want the JSON packed", got, err)
	}
	short := json.RawMessage(`{"number":"7"}`)
	if v, ok := PackJSON(short).(string); !ok || v != string(short) {
		t.Errorf("short JSON stored as %#v, want its text", PackJSON(short))
	}
	if PackJSON(nil) != nil {
		t.Errorf("no variables stored as %#v, want NULL", PackJSON(nil))
	}
	// Random-looking text (a long base64 string) packs by less than an
	// eighth: it stays text.
	var b strings.Builder
	x := uint32(1)
	for range 900 {
		x = x*1664525 + 1013904223
		b.WriteByte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[x>>26])
	}
	noisy := json.RawMessage(`{"blob":"` + b.String() + `"}`)
	if v, ok := PackJSON(noisy).(string); !ok || v != string(noisy) {
		t.Errorf("incompressible JSON stored as %T, want its text", PackJSON(noisy))
	}
	// Text as stored before packing reads as it is.
	if got, err := UnpackJSON([]byte(long)); err != nil || !bytes.Equal(got, long) {
		t.Errorf("text read as %.60q (%v)", got, err)
	}
	for _, damaged := range [][]byte{packed[:len(packed)/2], {packedMark}, {packedMark, 0xff, 0xff, 0xff, 0xff, 0x7f}} {
		if got, err := UnpackJSON(damaged); err == nil {
			t.Errorf("damaged %x unpacked to %.60q, want an error", damaged, got)
		}
	}
}

// FuzzUnpackJSON: no stored value panics the reader or unpacks to more
// than maxUnpacked.
func FuzzUnpackJSON(f *testing.F) {
	f.Add(PackJSON(json.RawMessage(`{"items":[` + strings.Repeat(`{"a":1},`, 100) + `{}]}`)).([]byte))
	f.Add([]byte(`{"a":1}`))
	f.Add([]byte{packedMark, 0x80, 0x80, 0x80, 0x80, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, err := UnpackJSON(b); err == nil && len(got) > maxUnpacked {
			t.Fatalf("unpacked to %d bytes", len(got))
		}
	})
}
