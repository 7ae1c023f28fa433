package app

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"strings"
	"time"

	"golang.org/x/image/webp"
)

// Avatar limits: the decoded upload and the picture's dimensions.
const (
	MaxAvatarBytes = 2 << 20
	MaxAvatarSide  = 4096
)

func avatarFile(userID string) string { return "avatars/" + userID + ".png" }

// AvatarPath is the public address of a user's picture, relative to the base URL.
func AvatarPath(userID string) string { return "/api/users/" + userID + "/avatar" }

func errAvatar(format string, args ...any) *Error {
	return ErrInvalid("imageData", format, args...)
}

// decodeAvatar checks that data is one JPEG, PNG or WebP picture of sane
// size and returns it decoded. The format comes from the file's own magic
// bytes, never from a declared type, and the dimensions are checked before
// the pixels are decoded.
func decodeAvatar(data []byte) (image.Image, error) {
	type codec struct {
		config func(io.Reader) (image.Config, error)
		decode func(io.Reader) (image.Image, error)
	}
	var c codec
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		c = codec{png.DecodeConfig, png.Decode}
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		c = codec{jpeg.DecodeConfig, jpeg.Decode}
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		c = codec{webp.DecodeConfig, webp.Decode}
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
	img, err := c.decode(bytes.NewReader(data))
	if err != nil {
		return nil, errAvatar("imageData is not a readable image: %v", err)
	}
	return img, nil
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
	img, err := decodeAvatar(raw)
	if err != nil {
		return "", err
	}
	if _, err := s.Files.WriteFile(avatarFile(u.ID), func(w io.Writer) error { return png.Encode(w, img) }); err != nil {
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
	if err != nil {
		return nil, time.Time{}, ErrNotFound(ECodeUserNotFound, "avatar")
	}
	return f, mod, nil
}
