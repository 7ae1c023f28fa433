package app

import (
	"container/list"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"folio/render"
)

// Image URLs: an image src may be an https:// URL, fetched while the
// document renders (render stays pure: it asks Options.Fetch, which a
// TemplateService builds from an ImageFetcher for the template's team).
// Fetching goes through the same address guard as webhooks: only public
// addresses, checked when the connection is made (after DNS, so a name
// that changes its answer cannot reach inside) and again for every
// redirect; never through a proxy. Each fetch has a timeout and a size
// cap. Answers with an ETag or Last-Modified are kept in a cache per team
// (in memory, bounded) and revalidated with If-None-Match /
// If-Modified-Since on the next render: a 304 serves the kept bytes.

// Error codes of image URLs.
const (
	// ECodeImageURLRefused: the URL may not be fetched (a non-public
	// address, not https).
	ECodeImageURLRefused = "ERR_IMAGE_001"
	// ECodeImageURLFailed: the fetch failed (timeout, network, TLS, an
	// HTTP error status).
	ECodeImageURLFailed = "ERR_IMAGE_002"
	// ECodeImageURLTooLarge: the answer is larger than the cap.
	ECodeImageURLTooLarge = "ERR_IMAGE_003"
)

// Defaults of an ImageFetcher.
const (
	DefaultImageFetchTimeout = 10 * time.Second
	DefaultImageCacheBytes   = 64 << 20 // all teams together
	DefaultTeamImageCache    = 16 << 20 // one team
	maxImageRedirects        = 5
)

// ImageFetcher fetches image URLs for renders and keeps what it fetched
// per team. Its zero value is not usable: build it with NewImageFetcher.
type ImageFetcher struct {
	client       *http.Client
	allowPrivate bool
	// MaxBytes is the largest image fetched (default MaxImageBytes);
	// Timeout bounds one fetch, redirects included.
	MaxBytes int64
	Timeout  time.Duration
	// CacheBytes bounds the cache, TeamCacheBytes one team's part of it;
	// the least recently used entries go first.
	CacheBytes, TeamCacheBytes int64

	mu      sync.Mutex
	entries map[imageKey]*list.Element
	lru     list.List // of *imageEntry, most recent first
	used    int64
	team    map[string]int64
}

type imageKey struct{ team, url string }

type imageEntry struct {
	key          imageKey
	data         []byte
	etag         string
	lastModified string
}

// NewImageFetcher returns a fetcher whose connections go only to public
// addresses (unless allowPrivate, for tests and private deployments),
// trusting the system roots plus extraCA.
func NewImageFetcher(allowPrivate bool, extraCA []byte) (*ImageFetcher, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if len(extraCA) > 0 && !pool.AppendCertsFromPEM(extraCA) {
		return nil, errors.New("--image-url-ca holds no PEM certificate")
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	if !allowPrivate {
		dialer.Control = imageDialGuard
	}
	tr := &http.Transport{
		Proxy:                 nil, // a proxy would connect for us, past the guard
		DialContext:           dialer.DialContext,
		TLSClientConfig:       &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: DefaultImageFetchTimeout,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       60 * time.Second,
	}
	client := &http.Client{Transport: tr, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) > maxImageRedirects {
			return fmt.Errorf("more than %d redirects", maxImageRedirects)
		}
		if req.URL.Scheme != "https" {
			return &refusedURL{reason: fmt.Sprintf("it redirects to %s, which is not https", clip(req.URL.String(), 100))}
		}
		return checkLiteralHost(req.URL, allowPrivate)
	}}
	return &ImageFetcher{client: client, allowPrivate: allowPrivate, MaxBytes: MaxImageBytes, Timeout: DefaultImageFetchTimeout,
		CacheBytes: DefaultImageCacheBytes, TeamCacheBytes: DefaultTeamImageCache,
		entries: map[imageKey]*list.Element{}, team: map[string]int64{}}, nil
}

// refusedURL is a URL the guard refuses.
type refusedURL struct{ reason string }

func (e *refusedURL) Error() string { return e.reason }

// imageDialGuard refuses a connection to a non-public address, at connect
// time (the webhook guard's rule, publicAddr).
func imageDialGuard(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &refusedURL{reason: fmt.Sprintf("its address %q cannot be checked", address)}
	}
	if !publicAddr(ap.Addr()) {
		return &refusedURL{reason: fmt.Sprintf("it points to %s, a non-public address", ap.Addr().Unmap())}
	}
	return nil
}

// checkLiteralHost refuses at once a URL whose host is a non-public IP
// address (names are checked when connecting).
func checkLiteralHost(u *url.URL, allowPrivate bool) error {
	if allowPrivate {
		return nil
	}
	if ip, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil && !publicAddr(ip) {
		return &refusedURL{reason: fmt.Sprintf("it points to %s, a non-public address", ip.WithZone("").Unmap())}
	}
	return nil
}

// Resolver is the render engine's view of the fetcher for one team; each
// fetch runs under the render's context (its timeout).
func (f *ImageFetcher) Resolver(teamID string) render.ImageFetcher {
	if f == nil {
		return nil
	}
	return func(ctx context.Context, u string) ([]byte, error) { return f.Fetch(ctx, teamID, u) }
}

// Fetch returns the image at rawURL for a team: from its cache when the
// server says it has not changed, else fetched anew.
func (f *ImageFetcher) Fetch(ctx context.Context, teamID, rawURL string) ([]byte, error) {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil || u.Scheme != "https" || u.Hostname() == "" {
		return nil, imageError(ECodeImageURLRefused, rawURL, "refused", "it is not an https:// URL")
	}
	shown := clip(u.Redacted(), 200)
	if err := checkLiteralHost(u, f.allowPrivate); err != nil {
		return nil, imageError(ECodeImageURLRefused, shown, "refused", err.Error()+"; image URLs may only reach the public internet")
	}
	key := imageKey{teamID, u.String()}
	cached := f.lookup(key)
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = DefaultImageFetchTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, imageError(ECodeImageURLRefused, shown, "refused", "it cannot be requested")
	}
	req.Header.Set("User-Agent", "Folio-Images/1")
	req.Header.Set("Accept", "image/png, image/jpeg, image/webp, image/svg+xml;q=0.9, */*;q=0.1")
	if cached != nil {
		if cached.etag != "" {
			req.Header.Set("If-None-Match", cached.etag)
		}
		if cached.lastModified != "" {
			req.Header.Set("If-Modified-Since", cached.lastModified)
		}
	}
	res, err := f.client.Do(req)
	if err != nil {
		return nil, describeFetchError(err, shown, timeout)
	}
	defer res.Body.Close()
	switch {
	case res.StatusCode == http.StatusNotModified && cached != nil:
		f.touch(key)
		return cached.data, nil
	case res.StatusCode != http.StatusOK:
		io.Copy(io.Discard, io.LimitReader(res.Body, 4096))
		return nil, imageError(ECodeImageURLFailed, shown, "status", fmt.Sprintf("the server answered %s", res.Status)).WithInfo("status", res.StatusCode)
	}
	limit := f.MaxBytes
	if limit <= 0 {
		limit = MaxImageBytes
	}
	if res.ContentLength > limit {
		return nil, tooLarge(shown, res.ContentLength, limit)
	}
	data, err := io.ReadAll(io.LimitReader(res.Body, limit+1))
	if err != nil {
		return nil, describeFetchError(err, shown, timeout)
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(shown, int64(len(data)), limit)
	}
	if etag, lm := res.Header.Get("ETag"), res.Header.Get("Last-Modified"); etag != "" || lm != "" {
		f.store(&imageEntry{key: key, data: data, etag: etag, lastModified: lm})
	}
	return data, nil
}

func tooLarge(shown string, size, limit int64) *Error {
	return imageError(ECodeImageURLTooLarge, shown, "tooLarge", fmt.Sprintf("it is larger than %s, the most an image URL may send", sizeText(limit))).
		WithInfo("maxBytes", limit, "actualBytes", size)
}

func imageError(code, shown, reason, why string) *Error {
	return (&Error{Code: code, Message: fmt.Sprintf("image %s cannot be drawn: %s", shown, why)}).WithInfo("url", shown, "reason", reason)
}

// describeFetchError names why a fetch failed.
func describeFetchError(err error, shown string, timeout time.Duration) *Error {
	var refused *refusedURL
	var ne net.Error
	switch {
	case errors.As(err, &refused):
		return imageError(ECodeImageURLRefused, shown, "refused", refused.reason+"; image URLs may only reach the public internet")
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return imageError(ECodeImageURLFailed, shown, "timeout", fmt.Sprintf("no complete answer within %s", timeout)).WithInfo("timeoutSeconds", int(timeout.Seconds()))
	case strings.Contains(err.Error(), "certificate") || strings.Contains(err.Error(), "tls:") || strings.Contains(err.Error(), "x509"):
		return imageError(ECodeImageURLFailed, shown, "tls", "TLS error: "+lastPart(err.Error()))
	}
	return imageError(ECodeImageURLFailed, shown, "network", "the request failed: "+lastPart(err.Error()))
}

// lookup returns a team's cached entry for a URL, or nil.
func (f *ImageFetcher) lookup(k imageKey) *imageEntry {
	f.mu.Lock()
	defer f.mu.Unlock()
	if el, ok := f.entries[k]; ok {
		return el.Value.(*imageEntry)
	}
	return nil
}

func (f *ImageFetcher) touch(k imageKey) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if el, ok := f.entries[k]; ok {
		f.lru.MoveToFront(el)
	}
}

// store keeps e, dropping the least recently used entries of its team,
// then of all teams, past the bounds. An entry larger than a team's share
// is not kept.
func (f *ImageFetcher) store(e *imageEntry) {
	f.mu.Lock()
	defer f.mu.Unlock()
	size := int64(len(e.data))
	if size > f.TeamCacheBytes || size > f.CacheBytes {
		return
	}
	if old, ok := f.entries[e.key]; ok {
		f.remove(old)
	}
	for el := f.lru.Back(); el != nil && f.team[e.key.team]+size > f.TeamCacheBytes; {
		prev := el.Prev()
		if el.Value.(*imageEntry).key.team == e.key.team {
			f.remove(el)
		}
		el = prev
	}
	for f.used+size > f.CacheBytes && f.lru.Len() > 0 {
		f.remove(f.lru.Back())
	}
	f.entries[e.key] = f.lru.PushFront(e)
	f.used += size
	f.team[e.key.team] += size
}

func (f *ImageFetcher) remove(el *list.Element) {
	e := el.Value.(*imageEntry)
	f.lru.Remove(el)
	delete(f.entries, e.key)
	n := int64(len(e.data))
	f.used -= n
	if f.team[e.key.team] -= n; f.team[e.key.team] <= 0 {
		delete(f.team, e.key.team)
	}
}

// CachedImages reports how many entries and bytes the cache holds.
func (f *ImageFetcher) CachedImages() (entries int, bytes int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lru.Len(), f.used
}
