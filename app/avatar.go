package app

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"strings"
	"time"

	"golang.org/x/image/webp"
)

// Avatar limits: the decoded upload, the picture's dimensions, and the
// memory decoding it may take as estimated from its header (avatarCost):
// a 4096×4096 picture at 8 bits a channel fits; one at 16 bits, or
// interlaced, or a progressive JPEG that large does not.
const (
	MaxAvatarBytes  = 2 << 20
	MaxAvatarSide   = 4096
	MaxAvatarDecode = 100 << 20
)

// avatarWait bounds how long an upload waits for memory renders hold.
const avatarWait = 30 * time.Second

// MemoryGate is the memory pool renders and other large decodes share
// (render.Engine's), so that a decode waits with the renders instead of
// adding to them.
type MemoryGate interface {
	// Reserve takes n bytes, waiting until they are free or ctx ends;
	// release gives them back.
	Reserve(ctx context.Context, n int64) (release func(), err error)
}

func avatarFile(userID string) string { return "avatars/" + userID + ".png" }

// AvatarPath is the public address of a user's picture, relative to the base URL.
func AvatarPath(userID string) string { return "/api/users/" + userID + "/avatar" }

func errAvatar(format string, args ...any) *Error {
	return ErrInvalid("imageData", format, args...)
}

// avatarUpload is a picture whose header has been checked.
type avatarUpload struct {
	data   []byte
	decode func(io.Reader) (image.Image, error)
	cost   int64 // the memory decoding it takes, from avatarCost
}

// checkAvatar checks from its header alone that data is one JPEG, PNG or
// WebP picture of sane size that decoding will not take more than
// MaxAvatarDecode. The format comes from the file's own magic bytes, never
// from a declared type.
func checkAvatar(data []byte) (*avatarUpload, error) {
	type codec struct {
		kind   string
		config func(io.Reader) (image.Config, error)
		decode func(io.Reader) (image.Image, error)
	}
	var c codec
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		c = codec{"PNG", png.DecodeConfig, png.Decode}
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		c = codec{"JPEG", jpeg.DecodeConfig, jpeg.Decode}
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		c = codec{"WebP", webp.DecodeConfig, webp.Decode}
	default:
		return nil, errAvatar("imageData must be a JPEG, PNG or WebP image")
	}
	cfg, err := c.config(bytes.NewReader(data))
	if err != nil {
		return nil, errAvatar("imageData is not a readable image: %v", err)
	}
	if cfg.Width < 1 || cfg.Height < 1 || cfg.Width > MaxAvatarSide || cfg.Height > MaxAvatarSide {
		return nil, errAvatar("the image is %dx%d; at most %dx%d pixels", cfg.Width, cfg.Height, MaxAvatarSide, MaxAvatarSide).
			WithInfo("maxWidth", MaxAvatarSide, "maxHeight", MaxAvatarSide)
	}
	cost, what, advice := avatarCost(c.kind, data, cfg)
	if cost > MaxAvatarDecode {
		return nil, errAvatar("the image is %dx%d pixels, %s: decoding it would take about %d MB of memory, at most %d MB are allowed; %s",
			cfg.Width, cfg.Height, what, megabytes(cost), megabytes(MaxAvatarDecode), advice).
			WithInfo("decodeBytes", cost, "maxDecodeBytes", MaxAvatarDecode)
	}
	return &avatarUpload{data: data, decode: c.decode, cost: cost}, nil
}

func megabytes(n int64) int64 { return (n + 1<<19) >> 20 }

// avatarCost estimates from a picture's header the memory Go's decoders
// take for it, and names its kind and what would make it smaller for a
// message. The estimates err on the high side where the header leaves it
// open.
func avatarCost(kind string, data []byte, cfg image.Config) (cost int64, what, advice string) {
	px := int64(cfg.Width) * int64(cfg.Height)
	switch kind {
	case "PNG":
		// Gray, Paletted or NRGBA, or their 16-bit forms; a transparency
		// chunk turns grey into NRGBA, so 8-bit grey counts as NRGBA. An
		// interlaced PNG is decoded into seven passes, then merged.
		depth, interlaced := 8, false
		if len(data) > 28 { // IHDR: bit depth at byte 24, interlace method at 28
			depth, interlaced = int(data[24]), data[28] != 0
		}
		per := int64(4)
		if _, ok := cfg.ColorModel.(color.Palette); ok {
			per = 1
		} else if depth == 16 {
			per = 8
		}
		what, advice = fmt.Sprintf("a %d-bit PNG", depth), "save it as an 8-bit PNG or a JPEG, or scale it down"
		if interlaced {
			per *= 2
			what, advice = fmt.Sprintf("an interlaced %d-bit PNG", depth), "save it as an 8-bit, non-interlaced PNG or a JPEG, or scale it down"
		}
		return px * per, what, advice
	case "JPEG":
		// Go decodes the samples of every component at its own sampling
		// (YCbCr 4:2:0 is 1.5 bytes a pixel), converts RGB and CMYK to
		// another 4 bytes a pixel, and keeps a progressive JPEG's
		// coefficients, 4 bytes a sample, until the last scan.
		samples, progressive := jpegFrame(data, px)
		cost = samples
		if cfg.ColorModel == color.RGBAModel || cfg.ColorModel == color.CMYKModel {
			cost += px * 4
		}
		if progressive {
			cost += samples * 4
			return cost, "a progressive JPEG", "save it as a baseline (not progressive) JPEG, or scale it down"
		}
		return cost, "a JPEG", "scale it down"
	}
	// WebP: lossless pictures decode to 4 bytes a pixel and a transform
	// may copy them; lossy ones to YCbCr and alpha, under 3 bytes a pixel.
	if len(data) >= 16 && string(data[12:16]) == "VP8 " {
		return px * 3, "a WebP", "scale it down"
	}
	return px * 8, "a lossless WebP", "save it as a JPEG, or scale it down"
}

// jpegFrame reads a JPEG's frame header: the bytes of its samples, every
// component at its own sampling, for px pixels, and whether it is
// progressive. A header it cannot read counts as four full-size components,
// progressive.
func jpegFrame(data []byte, px int64) (samples int64, progressive bool) {
	for i := 2; i+4 <= len(data); {
		if data[i] != 0xff {
			break
		}
		m := data[i+1]
		switch {
		case m == 0xff: // fill byte
			i++
			continue
		case m == 0x01 || m >= 0xd0 && m <= 0xd8: // markers without a length
			i += 2
			continue
		case m == 0xc0 || m == 0xc1 || m == 0xc2: // baseline, extended or progressive frame
			n := int(data[i+2])<<8 | int(data[i+3])
			f := data[i+4 : min(len(data), i+2+n)] // precision, height, width, components
			if len(f) < 6 || len(f) < 6+3*int(f[5]) {
				return px * 4, true
			}
			comps := f[6 : 6+3*int(f[5])]
			hmax, vmax := int64(1), int64(1)
			for k := 1; k < len(comps); k += 3 {
				hmax, vmax = max(hmax, int64(comps[k]>>4)), max(vmax, int64(comps[k]&15))
			}
			for k := 1; k < len(comps); k += 3 {
				samples += px * int64(comps[k]>>4) * int64(comps[k]&15) / (hmax * vmax)
			}
			return samples, m == 0xc2
		}
		i += 2 + (int(data[i+2])<<8 | int(data[i+3]))
	}
	return px * 4, true
}

// decodeBase64 accepts plain base64 (padded or not) or a data: URI.
func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "data:") {
		i := strings.Index(s, ";base64,")
		if i < 0 {
			return nil, errAvatar("imageData must be base64 or a base64 data: URI")
		}
		s = s[i+len(";base64,"):]
	}
	if base64.StdEncoding.DecodedLen(len(s)) > MaxAvatarBytes+3 {
		return nil, errAvatar("the image is larger than %d bytes", MaxAvatarBytes).WithInfo("maxBytes", MaxAvatarBytes)
	}
	s = strings.TrimRight(s, "=")
	b, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		return nil, errAvatar("imageData is not valid base64")
	}
	if len(b) > MaxAvatarBytes {
		return nil, errAvatar("the image is larger than %d bytes", MaxAvatarBytes).WithInfo("maxBytes", MaxAvatarBytes)
	}
	return b, nil
}

// SetAvatar stores the caller's picture, re-encoded as PNG so that nothing
// but pixels is ever served back, and returns its public URL.
func (s *AccountService) SetAvatar(ctx context.Context, imageData string) (string, error) {
	u, err := s.me(ctx)
	if err != nil {
		return "", err
	}
	if imageData == "" {
		return "", ErrRequired("imageData")
	}
	raw, err := decodeBase64(imageData)
	if err != nil {
		return "", err
	}
	up, err := checkAvatar(raw)
	if err != nil {
		return "", err
	}
	img, release, err := s.decodeAvatar(ctx, up)
	if err != nil {
		return "", err
	}
	_, err = s.Files.WriteFile(avatarFile(u.ID), func(w io.Writer) error { return png.Encode(w, img) })
	release()
	if err != nil {
		return "", fmt.Errorf("store avatar: %w", err)
	}
	now := s.Now().UTC()
	// The version parameter changes with every upload so caches fetch the new picture.
	url := fmt.Sprintf("%s%s?v=%d", strings.TrimRight(s.BaseURL, "/"), AvatarPath(u.ID), now.UnixMilli())
	if err := s.Accounts.SetUserAvatar(ctx, u.ID, url, now); err != nil {
		return "", err
	}
	return url, nil
}

// decodeAvatar decodes a checked picture once the memory it takes is
// reserved in the pool renders use; release gives the memory back once the
// picture is written.
func (s *AccountService) decodeAvatar(ctx context.Context, up *avatarUpload) (img image.Image, release func(), err error) {
	wait, cancel := context.WithTimeout(ctx, avatarWait)
	defer cancel()
	release, err = s.Memory.Reserve(wait, up.cost)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, (&Error{Code: ECodeRenderTimeout, Message: "the picture was not read: the server was busy with documents for too long; try again"}).
			WithInfo("busy", true)
	}
	if img, err = up.decode(bytes.NewReader(up.data)); err != nil {
		release()
		return nil, nil, errAvatar("imageData is not a readable image: %v", err)
	}
	return img, release, nil
}

// DeleteAvatar removes the caller's picture.
func (s *AccountService) DeleteAvatar(ctx context.Context) error {
	u, err := s.me(ctx)
	if err != nil {
		return err
	}
	if err := s.Accounts.SetUserAvatar(ctx, u.ID, "", s.Now().UTC()); err != nil {
		return err
	}
	return s.Files.RemoveFile(avatarFile(u.ID))
}

// Avatar opens a user's picture (a PNG) for the public avatar route. Users
// without one, and accounts pending deletion, are not found.
func (s *AccountService) Avatar(ctx context.Context, userID string) (ReadSeekCloser, time.Time, error) {
	u, err := s.Users.FindUserByID(ctx, userID)
	if err != nil {
		return nil, time.Time{}, err
	}
	if u.ProfilePictureURL == "" {
		return nil, time.Time{}, ErrNotFound(ECodeUserNotFound, "avatar")
	}
	f, mod, err := s.Files.OpenFile(avatarFile(u.ID))
	if errors.Is(err, ErrFilesUnavailable) {
		return nil, time.Time{}, err
	} else if err != nil {
		return nil, time.Time{}, ErrNotFound(ECodeUserNotFound, "avatar")
	}
	return f, mod, nil
}
