package render

import (
	"errors"
	"fmt"
	"strings"
)

// AssetPrefix starts an image source that names a stored asset
// ("asset:logo", "asset:ast_…") instead of holding the image. The engine
// does not know where assets live: Options.Assets resolves them at render
// time.
const AssetPrefix = "asset:"

// AssetResolver returns the bytes of the asset a template names (ref is
// what follows "asset:"). The caller scopes it (a team's assets); an
// unknown ref is an error that says so.
type AssetResolver func(ref string) (kind string, data []byte, err error)

// ImageInfo is what an image's header tells, read as a render reads it.
type ImageInfo struct {
	Format string // "png", "jpeg" or "webp"
	Width  int
	Height int
	Depth  int // bits a channel
	// Interlaced is an Adam7 PNG.
	Interlaced bool
	// Cost is the memory decoding and embedding it takes a render.
	Cost int64
}

// CheckImage checks PNG, JPEG or WebP bytes the way a render will before drawing
// them: a readable header, at most 16,384 pixels a side and 25 megapixels,
// and decoding plus embedding within the default render memory budget.
// Nothing is decoded.
func CheckImage(data []byte) (ImageInfo, error) {
	h, err := readImageHeader(data)
	if err != nil {
		return ImageInfo{}, err
	}
	if err := h.checkCost(DefaultMemory); err != nil {
		return ImageInfo{}, err
	}
	f := map[string]string{"PNG": "png", "JPG": "jpeg", "WEBP": "webp"}[h.kind]
	return ImageInfo{Format: f, Width: h.w, Height: h.h, Depth: h.depth, Interlaced: h.interlaced, Cost: h.cost()}, nil
}

// DecodeImage reads a whole PNG, JPEG or WebP checked by CheckImage, as the
// first render drawing it would, so that a broken file is found at once.
// The caller has reserved ImageInfo.Cost of memory.
func DecodeImage(data []byte) error {
	h, err := readImageHeader(data)
	if err != nil {
		return err
	}
	_, err = decodeImage(data, h)
	return err
}

// assetRef returns the asset a literal image source names, or "" when it
// names none.
func assetRef(src string) (string, bool, error) {
	src = strings.TrimSpace(src)
	if !strings.HasPrefix(src, AssetPrefix) {
		return "", false, nil
	}
	ref := src[len(AssetPrefix):]
	if ref == "" || strings.TrimSpace(ref[:1]) == "" {
		return "", true, errors.New(`asset reference is empty: write "asset:" followed by the asset's name or id`)
	}
	if len(ref) > 300 {
		return "", true, fmt.Errorf("asset reference is %d bytes, longer than any asset name", len(ref))
	}
	return ref, true, nil
}
