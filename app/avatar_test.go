package app

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"testing"
)

// fakeGate records what avatar decodes reserve.
type fakeGate struct {
	held, most int64
	err        error
}

func (g *fakeGate) Reserve(_ context.Context, n int64) (func(), error) {
	if g.err != nil {
		return nil, g.err
	}
	g.held += n
	g.most = max(g.most, g.held)
	return func() { g.held -= n }, nil
}

// An avatar is decoded only once the memory its header says it takes is
// reserved in the gate renders share, and given back after; a gate that
// stays full is a busy error, not a wait without end.
func TestAvatarDecodeReservesItsMemory(t *testing.T) {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewNRGBA64(image.Rect(0, 0, 64, 48))); err != nil {
		t.Fatal(err)
	}
	up, err := checkAvatar(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(64 * 48 * 8); up.cost != want {
		t.Errorf("cost %d, want %d", up.cost, want)
	}
	gate := &fakeGate{}
	s := &AccountService{Memory: gate}
	img, release, err := s.decodeAvatar(t.Context(), up)
	if err != nil || img.Bounds().Dx() != 64 || gate.held != up.cost {
		t.Fatalf("decode: %v, held %d", err, gate.held)
	}
	release()
	if gate.held != 0 {
		t.Errorf("%d bytes still held after release", gate.held)
	}

	gate.err = context.DeadlineExceeded
	_, _, err = s.decodeAvatar(t.Context(), up)
	var e *Error
	if !errors.As(err, &e) || e.Code != ECodeRenderTimeout || e.Info["busy"] != true {
		t.Errorf("full gate: %v", err)
	}
}

// A JPEG's samples and progressiveness are read from its frame header.
func TestJPEGFrame(t *testing.T) {
	const px = 1024 * 1024
	frame := func(marker byte) []byte {
		// SOI, APP0, then a frame: 8-bit, 1024×1024, Y sampled 2×2, Cb and Cr 1×1 (4:2:0).
		return []byte{0xff, 0xd8, 0xff, 0xe0, 0, 4, 'J', 'F', 0xff, marker, 0, 17, 8, 4, 0, 4, 0, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1}
	}
	for _, tc := range []struct {
		name        string
		data        []byte
		samples     int64
		progressive bool
	}{
		{"progressive 4:2:0", frame(0xc2), px * 3 / 2, true},
		{"baseline 4:2:0", frame(0xc0), px * 3 / 2, false},
		{"no frame", []byte{0xff, 0xd8, 0x00}, px * 4, true},
	} {
		if samples, progressive := jpegFrame(tc.data, px); samples != tc.samples || progressive != tc.progressive {
			t.Errorf("%s: %d, %v; want %d, %v", tc.name, samples, progressive, tc.samples, tc.progressive)
		}
	}
}
