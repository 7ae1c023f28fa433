package main

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"folio/app"
)

// breaksMidway is a FileStore whose files fail after after bytes, as an
// S3 GET does when the store goes away while a body streams.
type breaksMidway struct {
	app.FileStore
	after int64
}

func (b breaksMidway) OpenFile(name string) (app.ReadSeekCloser, time.Time, error) {
	f, mod, err := b.FileStore.OpenFile(name)
	if err != nil {
		return nil, mod, err
	}
	return &breaking{ReadSeekCloser: f, left: b.after}, mod, nil
}

type breaking struct {
	app.ReadSeekCloser
	left int64
}

func (b *breaking) Seek(off int64, whence int) (int64, error) {
	return b.ReadSeekCloser.Seek(off, whence)
}

func (b *breaking) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("%w: connection reset", app.ErrFilesUnavailable)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadSeekCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// TestDownloadBrokenMidStreamIsNotAShortFile: when the store fails after
// the headers went out, the client sees a failed transfer (the connection
// closed, or the HTTP/2 stream reset), never a response that ends cleanly
// with part of the file.
func TestDownloadBrokenMidStreamIsNotAShortFile(t *testing.T) {
	s := startServer(t, func(c *Config) { c.InlineMax = -1 }) // every document a file
	s.Server.Documents.Files = breaksMidway{FileStore: s.Server.Documents.Files, after: 5000}
	u := s.signup("Broken")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": map[string]any{"number": "1", "customer": "c"}})
	base := s.client.Transport.(*http.Transport)
	for _, h2 := range []bool{false, true} {
		tr := &http.Transport{TLSClientConfig: base.TLSClientConfig.Clone(), ForceAttemptHTTP2: h2}
		c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
		res, err := c.Get(g.str("downloadUrl"))
		if err != nil {
			t.Fatal(err)
		}
		if h2 != (res.ProtoMajor == 2) {
			t.Fatalf("protocol %s, want HTTP/2 %v", res.Proto, h2)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		size, _ := strconv.Atoi(res.Header.Get("Content-Length"))
		if res.StatusCode != 200 || size <= 5000 {
			t.Fatalf("%s: status %d, Content-Length %d", res.Proto, res.StatusCode, size)
		}
		if err == nil {
			t.Fatalf("%s: the body ended cleanly after %d of %d bytes", res.Proto, len(body), size)
		}
		if len(body) >= size {
			t.Fatalf("%s: read %d bytes of %d and an error %v", res.Proto, len(body), size, err)
		}
		tr.CloseIdleConnections()
	}
}
