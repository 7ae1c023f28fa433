package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"folio/app"
)

// crashBeforeRecord kills the process when a rendered document is about to
// be written: between the render and the one write of its job.
type crashBeforeRecord struct{ app.JobStore }

func (crashBeforeRecord) RecordJob(context.Context, *app.Charge, *app.Job, app.JobResult, app.EventBuilder) (app.FinishOutcome, error) {
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

func (crashBeforeRecord) FinishJob(context.Context, string, app.JobResult, app.EventBuilder) (app.FinishOutcome, error) {
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// TestKill9BetweenRenderAndWrite kills a real server after it rendered a
// document and before it wrote it, once for a synchronous generate and once
// for a queued (async) job, and restarts it on the same data directory:
//   - the synchronous generate leaves nothing: no job, no charge, no
//     document (its client got no answer; its retry is the only job);
//   - the queued job stays unfinished (processing, no link, no document)
//     and the restart runs it to its end, once;
//
// and every link the restarted server hands out serves a whole PDF.
func TestKill9BetweenRenderAndWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test starts real processes")
	}
	data, addr := t.TempDir(), freeAddr(t)
	env := []string{"FOLIO_TEST_CRASH=before-record"}
	p := startProcEnv(t, env, data, addr, "run1.log", "--workers", "1")
	c := procClient(t, data, addr)
	u := c.signup("Crash")
	key := c.createKey(u.token, nil)
	tpl := c.createTemplate(u.token, "Invoice", invoiceTemplate).str("id")
	post := func(path string) error {
		body := `{"templateId":"` + tpl + `","format":"pdf","variables":{"number":"1","customer":"c"}}`
		req, _ := http.NewRequest("POST", c.URL()+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := c.client.Do(req)
		if err == nil {
			res.Body.Close()
		}
		return err
	}
	db := openSQL(t, data)
	count := func(q string) int {
		t.Helper()
		var n int
		if err := db.QueryRow(q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	documents := func() []string {
		t.Helper()
		var found []string
		filepath.WalkDir(filepath.Join(data, "files"), func(path string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				found = append(found, path)
			}
			return nil
		})
		return found
	}

	// Synchronous: the client's connection is cut, nothing is left.
	if err := post("/api/v1/documents/generate"); err == nil {
		t.Fatal("the synchronous generate was answered; the server should have died before its write")
	}
	p.waitKilled(t)
	if n := count(`SELECT COUNT(*) FROM jobs`); n != 0 {
		t.Fatalf("%d jobs recorded by a generate that died before its write, want 0", n)
	}
	if n := count(`SELECT COALESCE(SUM(documents + credits_used), 0) FROM usage`); n != 0 {
		t.Fatalf("%d documents charged for a generate that died before its write", n)
	}
	if n := count(`SELECT COUNT(*) FROM job_files`); n != 0 {
		t.Fatalf("%d documents kept in the database", n)
	}
	if f := documents(); len(f) != 0 {
		t.Fatalf("files written by a generate that died before its write: %v", f)
	}

	// Queued: its row is recorded first; the run dies before its end.
	p = startProcEnv(t, env, data, addr, "run2.log", "--workers", "1")
	post("/api/v1/documents/generate?async=true") // answered before the worker runs it
	p.waitKilled(t)
	var jobID, status string
	if err := db.QueryRow(`SELECT id, status FROM jobs`).Scan(&jobID, &status); err != nil {
		t.Fatal(err)
	}
	if status != "processing" || count(`SELECT COUNT(*) FROM job_files`) != 0 || len(documents()) != 0 {
		t.Fatalf("after the kill the queued job is %s with %d stored documents and files %v; want processing and none",
			status, count(`SELECT COUNT(*) FROM job_files`), documents())
	}

	// The restart runs the queued job to its end; the client's retry of
	// the synchronous generate is the only other job.
	p = startProc(t, data, addr, "run3.log", "--workers", "1")
	queued := c.waitEnd(key, jobID)
	retried := c.must(200, "POST", "/api/v1/documents/generate", key, invoiceBody(tpl, "c"))
	for _, j := range []resp{queued, retried} {
		if j.str("status") != "completed" {
			t.Fatalf("job after the restart: %s", j.raw)
		}
		code, h, pdf := c.download(j.str("downloadUrl"))
		if code != 200 || !bytes.HasPrefix(pdf, []byte("%PDF-")) || !bytes.HasSuffix(bytes.TrimSpace(pdf), []byte("%%EOF")) ||
			h.Get("Content-Length") != strconv.Itoa(len(pdf)) {
			t.Fatalf("download of %s: %d, %d bytes, Content-Length %s", j.str("jobId"), code, len(pdf), h.Get("Content-Length"))
		}
	}
	if n := count(`SELECT COUNT(*) FROM jobs`); n != 2 {
		t.Fatalf("%d jobs after the restart, want 2 (the queued one and the retry)", n)
	}
	if n := count(`SELECT COALESCE(SUM(documents), 0) FROM usage`); n != 2 {
		t.Fatalf("%d documents charged, want 2", n)
	}
	if ended := endedJobs(t, p.log); ended[jobID] != 1 {
		t.Fatalf("the queued job ended %d times after the restart, want once", ended[jobID])
	}
}

// TestKill9BetweenSegmentAndCommit kills a real server once a synchronous
// generate's document is in its segment (docs/) and before the transaction
// naming it commits: nothing is recorded or charged, the bytes are named by
// no row, and the restart appends to a new segment, leaving the old one as
// it was (its tail might be a cut write); the retry's link serves a whole
// PDF.
func TestKill9BetweenSegmentAndCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test starts real processes")
	}
	data, addr := t.TempDir(), freeAddr(t)
	p := startProcEnv(t, []string{"FOLIO_TEST_CRASH=after-append"}, data, addr, "run1.log", "--workers", "1")
	c := procClient(t, data, addr)
	u := c.signup("Crash")
	key := c.createKey(u.token, nil)
	tpl := c.createTemplate(u.token, "Invoice", invoiceTemplate).str("id")
	body, _ := json.Marshal(invoiceBody(tpl, "c"))
	req, _ := http.NewRequest("POST", c.URL()+"/api/v1/documents/generate", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	if res, err := c.client.Do(req); err == nil {
		res.Body.Close()
		t.Fatal("the synchronous generate was answered; the server should have died before its commit")
	}
	p.waitKilled(t)
	segs := func() map[string]int64 {
		t.Helper()
		out := map[string]int64{}
		ents, _ := os.ReadDir(filepath.Join(data, "docs"))
		for _, e := range ents {
			if info, err := e.Info(); err == nil {
				out[e.Name()] = info.Size()
			}
		}
		return out
	}
	before := segs()
	if len(before) != 1 {
		t.Fatalf("segments after the kill: %v, want the one the document went to", before)
	}
	for _, size := range before {
		if size < 1000 {
			t.Fatalf("the killed generate's segment holds %d bytes, want its document", size)
		}
	}
	db := openSQL(t, data)
	for q, want := range map[string]int{
		`SELECT COUNT(*) FROM jobs`: 0, `SELECT COUNT(*) FROM job_files`: 0,
		`SELECT COALESCE(SUM(documents + credits_used), 0) FROM usage`: 0,
	} {
		var n int
		if err := db.QueryRow(q).Scan(&n); err != nil || n != want {
			t.Fatalf("%s: %d, %v; want %d", q, n, err, want)
		}
	}

	startProc(t, data, addr, "run2.log", "--workers", "1")
	j := c.must(200, "POST", "/api/v1/documents/generate", key, invoiceBody(tpl, "c"))
	code, h, pdf := c.download(j.str("downloadUrl"))
	if code != 200 || !bytes.HasPrefix(pdf, []byte("%PDF-")) || !bytes.HasSuffix(bytes.TrimSpace(pdf), []byte("%%EOF")) ||
		h.Get("Content-Length") != strconv.Itoa(len(pdf)) {
		t.Fatalf("download after the restart: %d, %d bytes", code, len(pdf))
	}
	after := segs()
	if len(after) != 2 {
		t.Fatalf("segments after the restart's generate: %v, want the old one and a new one", after)
	}
	for name, size := range before {
		if after[name] != size {
			t.Fatalf("the restart appended to %s (%d bytes, was %d)", name, after[name], size)
		}
	}
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM jobs`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d jobs after the restart, %v; want the retry only", n, err)
	}
}

// TestKill9WithCountsPending: the counts of documents answered just before
// a kill -9 may still wait in job_count_pending, written with their jobs
// but not yet folded into the roll-ups (store/analytics.go). After the
// restart the analytics, the template's figures and the key's document
// count include each of them exactly once.
func TestKill9WithCountsPending(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test starts real processes")
	}
	data, addr := t.TempDir(), freeAddr(t)
	p := startProc(t, data, addr, "run1.log", "--workers", "2")
	c := procClient(t, data, addr)
	u := c.signup("Counts")
	created := c.must(200, "POST", "/api/api-keys", u.token, map[string]any{"name": "counted"})
	key, keyID := created.str("plainKey"), created.str("id")
	tpl := c.createTemplate(u.token, "Invoice", invoiceTemplate).str("id")
	db := openSQL(t, data)
	pending := func() int {
		var n int
		if err := db.QueryRow(`SELECT COUNT(*) FROM job_count_pending`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	n := 0
	for n < 5 || pending() == 0 {
		if n == 300 {
			t.Fatal("300 documents and no counts pending: they are folded at once")
		}
		c.must(200, "POST", "/api/v1/documents/generate", key, invoiceBody(tpl, fmt.Sprint("c", n)))
		n++
	}
	p.kill9(t)
	if pending() == 0 {
		t.Fatal("the counts were folded between the check and the kill; the test proves nothing (rerun)")
	}

	startProc(t, data, addr, "run2.log")
	a := c.must(200, "GET", "/api/v1/documents/analytics", key, nil)
	if a.str("totalDocuments") != fmt.Sprint(n) || a.str("completedDocuments") != fmt.Sprint(n) {
		t.Fatalf("analytics after the restart: %s; want %d documents, all completed", a.raw, n)
	}
	if st := c.must(200, "GET", "/api/api-keys/"+keyID+"/stats", u.token, nil); st.str("documentsGenerated") != fmt.Sprint(n) {
		t.Fatalf("key stats after the restart: %s; want %d documents", st.raw, n)
	}
	if ta := c.must(200, "GET", "/api/templates/"+tpl+"/analytics", key, nil); ta.str("usage.total") != fmt.Sprint(n) || ta.str("performance.failedCount") != "0" {
		t.Fatalf("template analytics after the restart: %s; want %d documents", ta.raw, n)
	}
	if left := pending(); left != 0 {
		t.Fatalf("%d rows still pending after the reads", left)
	}
}
