package render

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// An image source may be an https:// URL. render never reaches the
// network itself: Options.Fetch, given by the caller, fetches it (app/
// guards the address against private networks, bounds time and size and
// caches per team). Each URL is fetched once per render.

// ImageFetcher returns the bytes at an https URL an image source names;
// ctx is the render's, which ends at its timeout. Its errors reach the
// caller of Render as they are.
type ImageFetcher func(ctx context.Context, url string) ([]byte, error)

// fetchOnce wraps a render's fetcher so that each URL is fetched once for
// all its layout passes, at most maxURLs distinct URLs (the image limit)
// and maxBytes in all (half the memory budget: the bytes are kept until
// the render ends).
func fetchOnce(f ImageFetcher, maxURLs int, maxBytes int64) ImageFetcher {
	if f == nil {
		return nil
	}
	got := map[string][]byte{}
	var total int64
	return func(ctx context.Context, u string) ([]byte, error) {
		if b, ok := got[u]; ok {
			return b, nil
		}
		if len(got) >= maxURLs {
			return nil, newLimitError(LimitImages, int64(len(got)+1), int64(maxURLs))
		}
		b, err := f(ctx, u)
		if err != nil {
			return nil, err
		}
		if total += int64(len(b)); total > maxBytes {
			return nil, newLimitError(LimitMemory, total, maxBytes)
		}
		got[u] = b
		return b, nil
	}
}

// maxImageURL bounds the length of an image URL.
const maxImageURL = 2048

// isImageURL reports whether src is meant as a web address.
func isImageURL(src string) bool {
	s := strings.ToLower(strings.TrimSpace(src))
	return strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")
}

// checkImageURL refuses a URL that is not a plain https address.
func checkImageURL(src string) error {
	src = strings.TrimSpace(src)
	if len(src) > maxImageURL {
		return fmt.Errorf("image URL is %d characters, at most %d", len(src), maxImageURL)
	}
	u, err := url.Parse(src)
	if err != nil {
		return errors.New("image URL cannot be read")
	}
	switch {
	case u.Scheme != "https":
		return fmt.Errorf("image URL %q must use https://", clip(src, 80))
	case u.Host == "" || u.Hostname() == "":
		return fmt.Errorf("image URL %q names no host", clip(src, 80))
	case u.User != nil:
		return fmt.Errorf("image URL %q must not hold a user name or password", clip(src, 80))
	}
	return nil
}

// fetchImage returns the bytes at an image URL, once per render.
func (p *pdfWriter) fetchImage(c *component, prop string, tt *textTemplate, src string) ([]byte, error) {
	src = strings.TrimSpace(src)
	if err := checkImageURL(src); err != nil {
		return nil, contentError(c, prop, tt, err)
	}
	if p.fetch == nil {
		return nil, contentError(c, prop, tt, fmt.Errorf("%s cannot be drawn: this render cannot fetch image URLs", clip(src, 80)))
	}
	data, err := p.fetch(p.ctx, src)
	if err != nil {
		return nil, err
	}
	if err := p.mem.need(int64(len(data))); err != nil {
		return nil, err
	}
	return data, nil
}

// imageSVG returns the drawing an image component shows when its source
// is SVG (a data URI, an asset or a URL holding markup); a picture from an
// asset or URL is decoded meanwhile for p.image.
func (p *pdfWriter) imageSVG(c *component, e *imageElement, env map[string]any) (*vectorImage, error) {
	if e.lit != nil {
		return nil, nil
	}
	src, err := e.src.render(p.ev, env)
	if err != nil {
		return nil, err
	}
	s := strings.TrimSpace(src)
	if s == "" || (!isSVGDataURI(s) && !strings.HasPrefix(s, AssetPrefix) && !isImageURL(s)) {
		return nil, nil
	}
	v, _, err := p.sourceSVG(c, "src", e.src, src)
	return v, err
}
