package main

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"image/color"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// An image URL that points at loopback, a private network, link-local
// (cloud metadata) or another special-purpose address is refused with
// ERR_IMAGE_001, in a document and in a preview alike, before or at
// connection time (a name resolving to loopback too): nothing is fetched.
func TestImageURLRefusesPrivateAddresses(t *testing.T) {
	s := startServer(t)
	u := s.signup("Images")
	key := s.createKey(u.token, nil)
	for _, target := range []string{
		"https://127.0.0.1/logo.png",
		"https://10.1.2.3/logo.png",
		"https://169.254.169.254/latest/meta-data/",
		"https://[::1]/logo.png",
		"https://[::ffff:127.0.0.1]/logo.png",
		"https://192.168.1.1:8443/logo.png",
		"https://localhost/logo.png", // a name: refused when connecting
	} {
		tpl := s.createTemplate(u.token, "SSRF "+target, imageTemplate(target)).str("id")
		r := s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl, "format": "pdf"})
		s.wantError(r, 400, "ERR_IMAGE_001")
		if msg := r.str("message"); !strings.Contains(msg, "non-public address") || r.str("relatedInfo.reason") != "refused" {
			t.Errorf("%s: %s", target, r.raw)
		}
		p := s.do("POST", "/api/templates/"+tpl+"/preview", u.token, map[string]any{"format": "pdf"})
		s.wantError(p, 400, "ERR_IMAGE_001")
	}
	// Plain http is refused when the template is saved.
	r := s.do("POST", "/api/templates", u.token, withName(imageTemplate("http://example.com/logo.png"), "Plain"))
	s.wantError(r, 400, "ERR_TMPL_008")
	if !strings.Contains(string(r.raw), "must use https://") {
		t.Errorf("plain http: %s", r.raw)
	}
}

func withName(tpl map[string]any, name string) map[string]any {
	out := map[string]any{"name": name}
	for k, v := range tpl {
		out[k] = v
	}
	return out
}

// imageServer is an HTTPS server on loopback serving pictures, which the
// server under test may reach only because the test allows private
// addresses (--image-url-allow-private) and trusts its CA (--image-url-ca).
type imageServer struct {
	url     string
	caFile  string
	mu      sync.Mutex
	seen    []imageRequest
	logo    []byte
	cover   []byte
	release chan struct{}
}

type imageRequest struct {
	path, ifNoneMatch string
}

func startImageServer(t *testing.T) *imageServer {
	t.Helper()
	caPEM, leaf := newCA(t, false)
	is := &imageServer{caFile: filepath.Join(t.TempDir(), "ca.pem"), logo: assetPNG(t, 30, 20, color.RGBA{200, 30, 30, 255}), release: make(chan struct{})}
	is.cover = assetPNG(t, 90, 40, color.RGBA{30, 160, 90, 255})
	os.WriteFile(is.caFile, caPEM, 0o600)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{leaf}})
	if err != nil {
		t.Fatal(err)
	}
	is.url = "https://" + ln.Addr().String()
	srv := &http.Server{Handler: is}
	go srv.Serve(ln)
	t.Cleanup(func() { close(is.release); srv.Close() })
	return is
}

func (is *imageServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	is.mu.Lock()
	is.seen = append(is.seen, imageRequest{r.URL.Path, r.Header.Get("If-None-Match")})
	is.mu.Unlock()
	switch r.URL.Path {
	case "/logo.png":
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Content-Type", "image/png")
		w.Write(is.logo)
	case "/cover.png": // a picture for the monthly report's cover
		w.Header().Set("Content-Type", "image/png")
		w.Write(is.cover)
	case "/drawing.svg":
		w.Header().Set("Content-Type", "image/svg+xml")
		fmt.Fprint(w, `<svg xmlns="http://www.w3.org/2000/svg" width="200" height="40"><text x="4" y="30" font-size="24">Fetched vectors</text></svg>`)
	case "/moved.png":
		http.Redirect(w, r, "/logo.png", http.StatusFound)
	case "/huge.png": // larger than the cap, without saying so first
		w.Header().Set("Content-Type", "image/png")
		chunk := bytes.Repeat([]byte{0}, 1<<20)
		for range 11 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	case "/slow.png":
		select {
		case <-is.release:
		case <-r.Context().Done():
		}
	default:
		http.NotFound(w, r)
	}
}

func (is *imageServer) requests(path string) []imageRequest {
	is.mu.Lock()
	defer is.mu.Unlock()
	var out []imageRequest
	for _, r := range is.seen {
		if r.path == path {
			out = append(out, r)
		}
	}
	return out
}

// With private targets allowed (tests only), an image URL is fetched and
// drawn; the next render revalidates it with If-None-Match and draws the
// cached bytes on 304; an SVG at a URL is drawn as vectors; redirects are
// followed; a body over the size cap, a server too slow, and an error
// status fail the document with ERR_IMAGE_003 and ERR_IMAGE_002. Each
// team has its own cache: another team's first fetch is not conditional.
func TestImageURLFetchAndCache(t *testing.T) {
	is := startImageServer(t)
	s := startServer(t, func(c *Config) {
		c.ImageURLAllowPrivate = true
		c.ImageURLCA = is.caFile
		c.ImageURLTimeout = 2 * time.Second
	})
	a, b := s.signup("TeamA"), s.signup("TeamB")
	keyA, keyB := s.createKey(a.token, nil), s.createKey(b.token, nil)
	generate := func(key, tpl string) resp {
		return s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl, "format": "pdf"})
	}
	pdfOf := func(r resp) []byte {
		t.Helper()
		if r.status != 200 {
			t.Fatalf("generate: %d %s", r.status, r.raw)
		}
		code, _, body := s.download(r.str("downloadUrl"))
		if code != 200 {
			t.Fatalf("download: %d", code)
		}
		return body
	}
	tplA := s.createTemplate(a.token, "Logo", imageTemplate(is.url+"/logo.png")).str("id")
	first := pdfOf(generate(keyA, tplA))
	if n := pdfImageCount(t, first); n != 1 {
		t.Fatalf("first render embeds %d images, want 1", n)
	}
	second := pdfOf(generate(keyA, tplA))
	if n := pdfImageCount(t, second); n != 1 {
		t.Fatalf("second render embeds %d images, want 1", n)
	}
	got := is.requests("/logo.png")
	if len(got) != 2 || got[0].ifNoneMatch != "" || got[1].ifNoneMatch != `"v1"` {
		t.Fatalf("requests %+v: want a fetch, then a revalidation with If-None-Match", got)
	}
	// Team B's first fetch is its own, not revalidated from A's cache.
	tplB := s.createTemplate(b.token, "Logo", imageTemplate(is.url+"/logo.png")).str("id")
	pdfOf(generate(keyB, tplB))
	if got := is.requests("/logo.png"); len(got) != 3 || got[2].ifNoneMatch != "" {
		t.Fatalf("team B's request %+v: want an unconditional fetch", got[len(got)-1])
	}
	// A preview fetches through the same fetcher.
	if p := s.do("POST", "/api/templates/"+tplA+"/preview", a.token, map[string]any{"format": "pdf"}); p.status != 200 {
		t.Fatalf("preview: %d %s", p.status, p.raw)
	}

	svg := s.createTemplate(a.token, "Vectors", imageTemplate(is.url+"/drawing.svg")).str("id")
	doc := pdfOf(generate(keyA, svg))
	if text := pdfText(t, doc); !strings.Contains(text, "Fetched vectors") || pdfImageCount(t, doc) != 0 {
		t.Fatalf("SVG by URL: text %q, %d images", text, pdfImageCount(t, doc))
	}
	moved := s.createTemplate(a.token, "Moved", imageTemplate(is.url+"/moved.png")).str("id")
	pdfOf(generate(keyA, moved))

	for _, tc := range []struct{ path, code, reason string }{
		{"/huge.png", "ERR_IMAGE_003", "tooLarge"},
		{"/slow.png", "ERR_IMAGE_002", "timeout"},
		{"/missing.png", "ERR_IMAGE_002", "status"},
	} {
		tpl := s.createTemplate(a.token, "Bad "+tc.path, imageTemplate(is.url+tc.path)).str("id")
		r := generate(keyA, tpl)
		s.wantError(r, 400, tc.code)
		if r.str("relatedInfo.reason") != tc.reason || !strings.Contains(r.str("message"), is.url+tc.path) {
			t.Errorf("%s: %s", tc.path, r.raw)
		}
	}
}
