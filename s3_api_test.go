package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"folio/internal/s3test"
	"folio/store/s3files"
)

// s3Server starts Folio with --files-url on a fresh bucket of srv and
// returns it with a reader of that bucket of its own.
func s3Server(t *testing.T, srv *s3test.Server, opts ...func(*Config)) (*testServer, *s3files.Store) {
	t.Helper()
	s3test.Env(t)
	bucket := srv.NewBucket(t)
	url := srv.URL(bucket, "folio")
	s := startServer(t, append([]func(*Config){func(c *Config) { c.FilesURL = url }}, opts...)...)
	cfg, err := s3files.ParseURL(url, s3test.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	bucketReader, err := s3files.Open(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, bucketReader
}

// objects lists the bucket's files under dir, as Folio named them.
func objects(t *testing.T, b *s3files.Store, dir string) []string {
	t.Helper()
	names, err := b.ListFiles(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// noisePNG is a w×h PNG of random pixels: it does not compress, so a
// document showing it is larger than the 64 KB kept in SQLite.
func noisePNG(t testing.TB, w, h int, seed uint64) []byte {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed))
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = byte(r.Uint32())
		if i%4 == 3 {
			img.Pix[i] = 255
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// bigTemplate draws src (an asset reference or a data URI) under a heading.
func bigTemplate(src string) map[string]any {
	return map[string]any{
		"outputFormats": []string{"pdf"},
		"variables":     []any{map[string]any{"name": "title", "type": "string", "required": true}},
		"schema": map[string]any{"sections": []any{map[string]any{"id": "body", "components": []any{
			map[string]any{"type": "heading", "props": map[string]any{"content": "{{title}}"}},
			map[string]any{"type": "image", "props": map[string]any{"src": src, "width": 160}},
		}}}},
	}
}

// rangeGet fetches url with a Range header.
func (s *testServer) rangeGet(url, rng string) (int, http.Header, []byte) {
	s.t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Range", rng)
	res, err := s.client.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return res.StatusCode, res.Header, b
}

// TestS3Files runs the file-using API with --files-url on a real S3
// server (versitygw): an asset uploaded and drawn, a document over 64 KB
// generated into the bucket and downloaded whole and in ranges, an avatar,
// deletion removing the object, and tenancy as without S3.
func TestS3Files(t *testing.T) {
	srv := s3test.Shared(t)
	s, bucket := s3Server(t, srv)
	a := s.signup("Ada")
	key := s.createKey(a.token, nil)

	// An asset goes to the bucket, not to the data directory.
	noise := noisePNG(t, 200, 200, 1)
	up := s.uploadAsset("POST", "/api/assets", a.token, "noise.png", noise, "")
	if up.status != 200 {
		t.Fatalf("upload asset: %d %s", up.status, up.raw)
	}
	if got := objects(t, bucket, ""); len(got) != 1 || !strings.Contains(got[0], up.str("id")) {
		t.Fatalf("bucket after the asset upload: %v", got)
	}
	if _, err := os.Stat(filepath.Join(s.Config.Data, "files")); !os.IsNotExist(err) {
		t.Fatalf("the data directory has files/: %v", err)
	}
	ac := s.must(200, "GET", up.str("contentUrl"), a.token, nil)
	if !bytes.Equal(ac.raw, noise) {
		t.Fatalf("asset content: %d bytes, want the %d uploaded", len(ac.raw), len(noise))
	}

	// A document drawing the asset: over 64 KB, so a file in the bucket.
	tpl := s.createTemplate(a.token, "Noise Report", bigTemplate("asset:noise.png"))
	g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": map[string]any{"title": "Quarterly noise"}})
	if g.str("status") != "completed" {
		t.Fatalf("generate: %s", g.raw)
	}
	jobID := g.str("jobId")
	status, h, pdf := s.download(g.str("downloadUrl"))
	if status != 200 || len(pdf) <= 64<<10 || h.Get("Content-Length") != strconv.Itoa(len(pdf)) || h.Get("Accept-Ranges") != "bytes" {
		t.Fatalf("download: %d, %d bytes, Content-Length %s, Accept-Ranges %q", status, len(pdf), h.Get("Content-Length"), h.Get("Accept-Ranges"))
	}
	if text := pdfText(t, pdf); !strings.Contains(text, "Quarterly noise") {
		t.Fatalf("pdftotext: %q", text)
	}
	if !hasObject(t, bucket, "/"+jobID+".pdf") {
		t.Fatalf("the document is not in the bucket: %v", objects(t, bucket, ""))
	}
	for _, c := range []struct {
		rng        string
		start, end int
	}{{"bytes=0-99", 0, 100}, {"bytes=70000-70999", 70000, 71000}, {"bytes=-512", len(pdf) - 512, len(pdf)}, {"bytes=65536-", 65536, len(pdf)}} {
		status, h, part := s.rangeGet(g.str("downloadUrl"), c.rng)
		if status != 206 || !bytes.Equal(part, pdf[c.start:c.end]) || h.Get("Content-Length") != strconv.Itoa(c.end-c.start) ||
			h.Get("Content-Range") != "bytes "+strconv.Itoa(c.start)+"-"+strconv.Itoa(c.end-1)+"/"+strconv.Itoa(len(pdf)) {
			t.Fatalf("Range %s: %d, %d bytes, %v", c.rng, status, len(part), h)
		}
	}

	// A small document stays in SQLite: nothing more in the bucket.
	inv := s.createTemplate(a.token, "Invoice", invoiceTemplate)
	before := len(objects(t, bucket, ""))
	small := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": inv.str("id"), "format": "pdf", "variables": map[string]any{"number": "1", "customer": "ACME"}})
	if st, _, b := s.download(small.str("downloadUrl")); st != 200 || !strings.Contains(pdfText(t, b), "ACME") {
		t.Fatalf("small download: %d", st)
	}
	if n := len(objects(t, bucket, "")); n != before {
		t.Fatalf("a small document added %d objects", n-before)
	}

	// An avatar is kept in the bucket and served from it.
	av := s.must(200, "POST", "/api/users/me/avatar", a.token, map[string]any{"imageData": base64.StdEncoding.EncodeToString(assetPNG(t, 32, 24, color.NRGBA{10, 200, 10, 255}))})
	if !slices.Contains(objects(t, bucket, ""), "avatars/"+a.id+".png") {
		t.Fatalf("avatar not in the bucket: %v", objects(t, bucket, ""))
	}
	if st, _, b := s.download(av.str("avatarUrl")); st != 200 {
		t.Fatalf("avatar: %d", st)
	} else if img, err := png.Decode(bytes.NewReader(b)); err != nil || img.Bounds().Dx() != 32 {
		t.Fatalf("avatar served: %v", err)
	}
	s.must(200, "DELETE", "/api/users/me/avatar", a.token, nil)
	if slices.Contains(objects(t, bucket, ""), "avatars/"+a.id+".png") {
		t.Fatal("deleted avatar still in the bucket")
	}

	// Tenancy: team B sees neither the job nor the asset, and cannot turn
	// its own link into one for A's document.
	b := s.signup("Bob")
	bkey := s.createKey(b.token, nil)
	s.wantError(s.do("GET", "/api/v1/documents/jobs/"+jobID, bkey, nil), 404, "ERR_JOB_001")
	s.wantError(s.do("GET", up.str("contentUrl"), b.token, nil), 404, "ERR_ASSET_001")
	btpl := s.createTemplate(b.token, "Invoice", invoiceTemplate)
	bg := s.must(200, "POST", "/api/v1/documents/generate", bkey, map[string]any{"templateId": btpl.str("id"), "format": "pdf", "variables": map[string]any{"number": "2", "customer": "B"}})
	forged := strings.Replace(bg.str("downloadUrl"), bg.str("jobId"), jobID, 1)
	if st, _, body := s.download(forged); st != 403 || bytes.Contains(body, []byte("%PDF")) {
		t.Fatalf("B's link turned to A's job: %d", st)
	}
	s.wantError(s.do("GET", "/api/v1/documents/jobs/"+jobID+"/download", bkey, nil), 403, "ERR_JOB_003")

	// Deleting the job removes its object; its link then finds nothing.
	s.must(204, "DELETE", "/api/v1/documents/jobs/"+jobID, key, nil)
	if hasObject(t, bucket, "/"+jobID+".pdf") {
		t.Fatal("deleted job's document still in the bucket")
	}
	if st, _, _ := s.download(g.str("downloadUrl")); st != 404 {
		t.Fatalf("download of a deleted job: %d", st)
	}
}

// hasObject reports whether the bucket has a file whose name ends in suffix.
func hasObject(t *testing.T, b *s3files.Store, suffix string) bool {
	t.Helper()
	return slices.ContainsFunc(objects(t, b, ""), func(n string) bool { return strings.HasSuffix(n, suffix) })
}

// TestS3Outage stops the S3 server under a running Folio: downloads of
// files answer 503 ERR_STORAGE_001 (small documents, kept in SQLite, still
// work), uploads too, and jobs whose document cannot be stored are not
// failed but retried; once S3 is back every job completes, exactly once
// (one document.generated each), and every download works.
func TestS3Outage(t *testing.T) {
	srv := s3test.Start(t)
	rcv := startReceiver(t, false)
	s, bucket := s3Server(t, srv, func(c *Config) { c.WebhookAllowPrivate, c.WebhookCA = true, rcv.caFile })
	u := s.verifiedUser("Outage")
	key := s.createKey(u.token, nil)
	s.must(200, "POST", "/api/v1/webhook-subscriptions", key, map[string]any{"url": rcv.url, "events": []string{"document.generated"}})
	noise := "data:image/png;base64," + base64.StdEncoding.EncodeToString(noisePNG(t, 200, 200, 2))
	big := s.createTemplate(u.token, "Big", bigTemplate(noise)).str("id")
	inv := s.createTemplate(u.token, "Invoice", invoiceTemplate).str("id")
	gen := func(path, title string) resp {
		return s.must(200, "POST", path, key, map[string]any{"templateId": big, "format": "pdf", "variables": map[string]any{"title": title}})
	}

	up := s.uploadAsset("POST", "/api/assets", u.token, "noise.png", noisePNG(t, 200, 200, 3), "")
	if up.status != 200 {
		t.Fatalf("asset: %d %s", up.status, up.raw)
	}
	withAsset := s.createTemplate(u.token, "With asset", bigTemplate("asset:noise.png")).str("id")
	before := gen("/api/v1/documents/generate", "Made before")
	if before.str("status") != "completed" {
		t.Fatalf("before the outage: %s", before.raw)
	}
	srv.Stop()

	// A file's download: 503 with the envelope and Retry-After, no bytes of the file.
	r := s.do("GET", before.str("downloadUrl"), "", nil)
	s.wantError(r, 503, "ERR_STORAGE_001")
	if r.header.Get("Retry-After") == "" || bytes.Contains(r.raw, []byte("%PDF")) {
		t.Fatalf("503: Retry-After %q, body %s", r.header.Get("Retry-After"), r.raw)
	}
	// A range request is refused the same way, not answered in part.
	s.wantError(s.do("GET", before.str("downloadUrl"), "", nil, "Range", "bytes=0-99"), 503, "ERR_STORAGE_001")
	// Uploads that need the store answer 503 too.
	s.wantError(s.uploadAsset("POST", "/api/assets", u.token, "logo.png", assetPNG(t, 4, 4, color.Black), ""), 503, "ERR_STORAGE_001")
	// A small document does not need S3.
	small := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": inv, "format": "pdf", "variables": map[string]any{"number": "9", "customer": "Still Served"}})
	if st, _, b := s.download(small.str("downloadUrl")); small.str("status") != "completed" || st != 200 || !strings.Contains(pdfText(t, b), "Still Served") {
		t.Fatalf("small document during the outage: %s, download %d", small.raw, st)
	}

	// Large documents: queued (async) and waited for (sync); neither fails.
	async := gen("/api/v1/documents/generate?async=true", "Made async during the outage")
	sync := gen("/api/v1/documents/generate", "Made sync during the outage")
	// A document drawing an asset cannot read it: it waits the same way.
	asset := s.must(200, "POST", "/api/v1/documents/generate?async=true", key, map[string]any{"templateId": withAsset, "format": "pdf", "variables": map[string]any{"title": "Asset during the outage"}})
	if st := sync.str("status"); st != "pending" && st != "processing" {
		t.Fatalf("sync generate during the outage answered %s, want pending: %s", st, sync.raw)
	}
	time.Sleep(2500 * time.Millisecond) // a few attempts fail meanwhile
	for _, id := range []string{async.str("jobId"), sync.str("jobId"), asset.str("jobId")} {
		j := s.must(200, "GET", "/api/v1/documents/jobs/"+id, key, nil)
		if st := j.str("status"); st != "pending" && st != "processing" {
			t.Fatalf("job during the outage is %s: %s", st, j.raw)
		}
	}

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ id, title string }{{async.str("jobId"), "Made async during the outage"}, {sync.str("jobId"), "Made sync during the outage"}, {asset.str("jobId"), "Asset during the outage"}} {
		j := s.waitEnd(key, c.id)
		if j.str("status") != "completed" {
			t.Fatalf("after the outage: %s", j.raw)
		}
		st, h, pdf := s.download(j.str("downloadUrl"))
		if st != 200 || len(pdf) <= 64<<10 || h.Get("Content-Length") != strconv.Itoa(len(pdf)) || !strings.Contains(pdfText(t, pdf), c.title) {
			t.Fatalf("download after the outage: %d, %d bytes", st, len(pdf))
		}
		if !hasObject(t, bucket, "/"+c.id+".pdf") {
			t.Fatalf("job %s has no object", c.id)
		}
	}
	if st, _, _ := s.download(before.str("downloadUrl")); st != 200 {
		t.Fatalf("the earlier document after the outage: %d", st)
	}

	// Exactly once: one document.generated per job, no more later.
	rcv.waitFor(5, 30*time.Second)
	time.Sleep(time.Second)
	count := map[string]int{}
	for _, r := range rcv.requests() {
		e := decodeEvent(t, r)
		id, _ := e.Data["jobId"].(string)
		count[id]++
	}
	for _, id := range []string{before.str("jobId"), small.str("jobId"), async.str("jobId"), sync.str("jobId"), asset.str("jobId")} {
		if count[id] != 1 {
			t.Fatalf("document.generated per job: %v; want 1 for %s", count, id)
		}
	}
	if len(count) != 5 {
		t.Fatalf("events for %d jobs, want 5: %v", len(count), count)
	}
}
