package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gzip "github.com/klauspost/compress/gzip"
)

// storedIn reports where a job's document is: "db" (job_files), "file"
// (under files/), "both" or "none".
func storedIn(t *testing.T, s *testServer, jobID string) string {
	t.Helper()
	var n int
	if err := openSQL(t, s.Config.Data).QueryRow(`SELECT COUNT(*) FROM job_files WHERE job_id = ?`, jobID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(s.Config.Data, "files", "*", jobID+".*"))
	switch {
	case n == 1 && len(files) == 0:
		return "db"
	case n == 0 && len(files) == 1:
		return "file"
	case n == 0 && len(files) == 0:
		return "none"
	}
	return "both"
}

// wholePDF checks a download: 200, a complete PDF of the announced length,
// named by Content-Disposition.
func wholePDF(t *testing.T, code int, h map[string][]string, body []byte, name string) {
	t.Helper()
	hd := make(map[string]string)
	for k, v := range h {
		hd[k] = strings.Join(v, ",")
	}
	if code != 200 || !bytes.HasPrefix(body, []byte("%PDF-")) || !bytes.HasSuffix(bytes.TrimSpace(body), []byte("%%EOF")) ||
		hd["Content-Length"] != strconv.Itoa(len(body)) || hd["Content-Type"] != "application/pdf" ||
		!strings.Contains(hd["Content-Disposition"], name) {
		t.Fatalf("download: %d, %d bytes, headers %v", code, len(body), hd)
	}
}

// TestInlineDocument: a synchronous invoice is kept in the database with its
// job (no file) and downloads like a file: signed link, name, length, type,
// byte ranges, Last-Modified; deleting the job deletes it.
func TestInlineDocument(t *testing.T) {
	s := startServer(t)
	u := s.signup("Inline")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate).str("id")
	body := invoiceBody(tpl, "Inline Ltd")
	body["filename"] = "inv-7"
	g := s.must(200, "POST", "/api/v1/documents/generate", key, body)
	if g.str("status") != "completed" || g.str("downloadUrl") == "" {
		t.Fatalf("generate = %s", g.raw)
	}
	id := g.str("jobId")
	if where := storedIn(t, s, id); where != "db" {
		t.Fatalf("the invoice is stored in %s, want the database", where)
	}
	code, h, pdf := s.download(g.str("downloadUrl"))
	wholePDF(t, code, h, pdf, "inv-7.pdf")
	if lm, err := time.Parse(time.RFC1123, h.Get("Last-Modified")); err != nil || time.Since(lm) > time.Hour {
		t.Fatalf("Last-Modified %q", h.Get("Last-Modified"))
	}
	// A range, as resumable downloads ask.
	r := s.do("GET", g.str("downloadUrl"), "", nil, "Range", "bytes=5-14")
	if r.status != 206 || !bytes.Equal(r.raw, pdf[5:15]) || r.header.Get("Content-Range") != "bytes 5-14/"+strconv.Itoa(len(pdf)) {
		t.Fatalf("range: %d %q %q", r.status, r.header.Get("Content-Range"), r.raw)
	}
	// A link altered or for another job is refused, as for a file.
	s.wantError(s.do("GET", strings.Replace(g.str("downloadUrl"), "signature=", "signature=0", 1), "", nil), 403, "ERR_JOB_003")
	// The async path keeps small documents in the database too.
	a := s.must(200, "POST", "/api/v1/documents/generate?async=true", key, invoiceBody(tpl, "Queued Ltd"))
	aj := s.waitEnd(key, a.str("jobId"))
	if where := storedIn(t, s, a.str("jobId")); aj.str("status") != "completed" || where != "db" {
		t.Fatalf("async job %s stored in %s", aj.raw, where)
	}
	code, h, apdf := s.download(aj.str("downloadUrl"))
	wholePDF(t, code, h, apdf, "Invoice ")
	// Deleting the job deletes its document; the link dies with it.
	s.must(204, "DELETE", "/api/v1/documents/jobs/"+id, key, nil)
	if where := storedIn(t, s, id); where != "none" {
		t.Fatalf("after the delete the document is in %s", where)
	}
	s.wantError(s.do("GET", g.str("downloadUrl"), "", nil), 404, "ERR_JOB_004")
}

// TestLargeDocumentIsAFile: a document over the inline limit is a file, and
// downloads the same way.
func TestLargeDocumentIsAFile(t *testing.T) {
	s := startServer(t, func(c *Config) { c.InlineMax = 1000 }) // an invoice is some 11 KB
	u := s.signup("Large")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate).str("id")
	g := s.must(200, "POST", "/api/v1/documents/generate", key, invoiceBody(tpl, "Big Ltd"))
	if where := storedIn(t, s, g.str("jobId")); g.str("status") != "completed" || where != "file" {
		t.Fatalf("generate = %s, stored in %s; want completed, a file", g.raw, where)
	}
	code, h, pdf := s.download(g.str("downloadUrl"))
	wholePDF(t, code, h, pdf, "Invoice ")
	if j := s.must(200, "GET", "/api/v1/documents/jobs/"+g.str("jobId"), key, nil); j.str("status") != "completed" {
		t.Fatalf("job = %s", j.raw)
	}
}

// TestInlineDocumentRetention: the janitor deletes a document kept in the
// database when its retention ends, as it deletes a file.
func TestInlineDocumentRetention(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	s := startMain(t, &Main{Now: clock}, func(c *Config) { c.DefaultPlan = "free" })
	u := s.signup("Keeper")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate).str("id")
	g := s.must(200, "POST", "/api/v1/documents/generate", key, invoiceBody(tpl, "c"))
	id := g.str("jobId")
	docs := s.Server.Documents
	advance(23 * time.Hour) // free plan: one day
	if err := docs.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if where := storedIn(t, s, id); where != "db" {
		t.Fatalf("before its retention ends the document is in %s", where)
	}
	code, h, pdf := s.download(g.str("downloadUrl"))
	wholePDF(t, code, h, pdf, "Invoice ")
	advance(2 * time.Hour)
	if err := docs.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if where := storedIn(t, s, id); where != "none" {
		t.Fatalf("after its retention the document is in %s", where)
	}
	if j := s.must(200, "GET", "/api/v1/documents/jobs/"+id, key, nil); j.str("status") != "completed" || j.get("downloadUrl") != nil {
		t.Fatalf("expired job: %s", j.raw)
	}
	s.wantError(s.do("GET", g.str("downloadUrl"), "", nil), 403, "ERR_JOB_003")
}

// TestInlineDocumentBackupRestore: `folio admin backup` of a running server
// carries the documents kept in the database; the restored server serves
// them through the same links.
func TestInlineDocumentBackupRestore(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	s := startServerIn(t, data)
	u := s.signup("Backup")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate).str("id")
	g := s.must(200, "POST", "/api/v1/documents/generate", key, invoiceBody(tpl, "Saved Ltd"))
	_, _, want := s.download(g.str("downloadUrl"))
	out := filepath.Join(t.TempDir(), "backup.tar.gz")
	if code, stdout, stderr := runCLI(t, "admin", "backup", "--data", data, "--out", out); code != 0 {
		t.Fatalf("backup: %d %q %q", code, stdout, stderr)
	}
	s.Close()
	restored := filepath.Join(t.TempDir(), "restored")
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(restored, filepath.FromSlash(h.Name))
		os.MkdirAll(filepath.Dir(p), 0o700)
		b, _ := io.ReadAll(tr)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := startServerIn(t, restored)
	link := g.str("downloadUrl")
	code, h, got := r.download(r.URL() + link[strings.Index(link, "/api/"):]) // the same link on the new address
	wholePDF(t, code, h, got, "Invoice ")
	if !bytes.Equal(got, want) {
		t.Fatal("the restored document differs from the one served before the backup")
	}
}

// TestDamagedSegmentDownloadIsGone: a document whose bytes in docs/ no
// longer match the checksum its row keeps (an OS crash wrote the row and
// not the bytes) is answered over HTTPS as a gone document, 404
// ERR_JOB_004 in the error envelope, never as a damaged PDF; the other
// documents of the same segment still download whole.
func TestDamagedSegmentDownloadIsGone(t *testing.T) {
	s := startServer(t)
	u := s.signup("Damaged")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate).str("id")
	first := s.must(200, "POST", "/api/v1/documents/generate", key, invoiceBody(tpl, "First Ltd"))
	second := s.must(200, "POST", "/api/v1/documents/generate", key, invoiceBody(tpl, "Second Ltd"))
	var seg, off int64
	if err := openSQL(t, s.Config.Data).QueryRow(`SELECT seg, seg_off FROM job_files WHERE job_id = ?`, first.str("jobId")).Scan(&seg, &off); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(s.Config.Data, "docs", fmt.Sprintf("seg-%08d.dat", seg)), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("XXXX"), off+200); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s.wantError(s.do("GET", first.str("downloadUrl"), "", nil), 404, "ERR_JOB_004")
	code, h, pdf := s.download(second.str("downloadUrl"))
	wholePDF(t, code, h, pdf, "Invoice ")
}

// TestLongVariablesRoundTrip: a queued job's variables are read back by
// the worker that renders it, whatever the database keeps them as (packed
// in SQLite when long, store/internal/scan/packed.go): the document says
// what the request sent, to its last word.
func TestLongVariablesRoundTrip(t *testing.T) {
	s := startServer(t)
	a := s.signup("Ada")
	key := s.createKey(a.token, nil)
	inv := s.createTemplate(a.token, "Invoice", invoiceTemplate).str("id")
	var note strings.Builder
	for i := range 60 {
		fmt.Fprintf(&note, "clause-%d applies. ", i)
	}
	note.WriteString("Final-clause-ZQX.")
	body := map[string]any{"templateId": inv, "format": "pdf", "variables": map[string]any{"number": "LV-1", "customer": "Long Vars Ltd", "note": note.String()}}
	id := s.must(200, "POST", "/api/v1/documents/generate?async=true", key, body).str("jobId")
	j := s.waitJob(key, id)
	st, _, pdf := s.download(j.str("downloadUrl"))
	if st != 200 {
		t.Fatalf("download: %d", st)
	}
	text := strings.Join(strings.Fields(pdfText(t, pdf)), " ")
	for _, want := range []string{"Invoice LV-1", "Long Vars Ltd", "clause-0 applies.", "clause-59 applies.", "Final-clause-ZQX."} {
		if !strings.Contains(text, want) {
			t.Errorf("the document lacks %q:\n%s", want, text)
		}
	}
}
