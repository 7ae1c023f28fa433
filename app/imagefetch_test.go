package app

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Every redirect is checked again: it must stay on https and may not name
// a non-public address (a name is checked when connecting).
func TestImageRedirectsRechecked(t *testing.T) {
	f, err := NewImageFetcher(false, nil)
	if err != nil {
		t.Fatal(err)
	}
	via := []*http.Request{{URL: &url.URL{Scheme: "https", Host: "example.com"}}}
	for _, target := range []string{"https://127.0.0.1/a.png", "https://[fd00::1]/a.png", "https://169.254.169.254/", "http://example.com/a.png"} {
		u, _ := url.Parse(target)
		err := f.client.CheckRedirect(&http.Request{URL: u}, via)
		var refused *refusedURL
		if !errors.As(err, &refused) {
			t.Errorf("redirect to %s: %v, want refused", target, err)
		}
	}
	u, _ := url.Parse("https://example.org/a.png")
	if err := f.client.CheckRedirect(&http.Request{URL: u}, via); err != nil {
		t.Errorf("redirect to a public host: %v", err)
	}
	long := make([]*http.Request, maxImageRedirects+1)
	if err := f.client.CheckRedirect(&http.Request{URL: u}, long); err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Errorf("too many redirects: %v", err)
	}
	if err := imageDialGuard("tcp", "10.0.0.1:443", nil); err == nil {
		t.Errorf("the dial guard lets 10.0.0.1 through")
	}
	if err := imageDialGuard("tcp", "93.184.216.34:443", nil); err != nil {
		t.Errorf("the dial guard refuses a public address: %v", err)
	}
}

// The cache keeps entries per team within the team's share and the whole
// bound, dropping the least recently used first; a team never sees
// another's entry.
func TestImageCacheBounds(t *testing.T) {
	f, _ := NewImageFetcher(false, nil)
	f.CacheBytes, f.TeamCacheBytes = 300, 200
	put := func(team, u string, n int) {
		f.store(&imageEntry{key: imageKey{team, u}, data: make([]byte, n), etag: `"x"`})
	}
	put("a", "1", 100)
	put("a", "2", 100)
	f.touch(imageKey{"a", "1"})
	put("a", "3", 100) // over a's share: a/2, the least recently used, goes
	if f.lookup(imageKey{"a", "2"}) != nil || f.lookup(imageKey{"a", "1"}) == nil || f.lookup(imageKey{"a", "3"}) == nil {
		t.Fatalf("team share: %v %v %v", f.lookup(imageKey{"a", "1"}), f.lookup(imageKey{"a", "2"}), f.lookup(imageKey{"a", "3"}))
	}
	if f.lookup(imageKey{"b", "1"}) != nil {
		t.Fatal("team b sees team a's entry")
	}
	put("b", "1", 150) // over the whole bound: a's oldest goes
	if n, size := f.CachedImages(); size > 300 || n != 2 {
		t.Fatalf("cache holds %d entries, %d bytes", n, size)
	}
	put("c", "big", 250) // larger than a team's share: not kept
	if f.lookup(imageKey{"c", "big"}) != nil {
		t.Fatal("an entry over the team share was kept")
	}
}
