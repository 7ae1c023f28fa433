package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"folio/app"
)

// batchDocs returns a batch answer's documents by job id, and their ids in
// order.
func batchDocs(t *testing.T, b resp) (map[string]map[string]any, []string) {
	t.Helper()
	list, ok := b.get("documents").([]any)
	if !ok {
		t.Fatalf("batch without a documents list: %s", b.raw)
	}
	byID, ids := map[string]map[string]any{}, []string{}
	for _, e := range list {
		d := e.(map[string]any)
		byID[d["jobId"].(string)] = d
		ids = append(ids, d["jobId"].(string))
	}
	return byID, ids
}

// TestBatchPollETag polls one batch through every change its documents go
// through: a job running, a pending one cancelled, one failing, the others
// completing, a retry of the failed one, a restart, the links expiring and
// retention. Each poll shows the same documents, states and links as the
// jobs' own status, and a poll sending back the ETag of an unchanged batch
// gets 304 without a body.
func TestBatchPollETag(t *testing.T) {
	var mu sync.Mutex
	now := time.Now().UTC()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	data := t.TempDir()
	s := startMain(t, &Main{Config: Config{Data: data}, Now: clock}, func(c *Config) { c.Workers = 1; c.DefaultPlan = "free" })
	g := newGate(t, s)
	u := s.signup("Poller")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Long", longTemplate()).str("id")
	short := map[string]any{"variables": map[string]any{"body": "short"}}
	long := map[string]any{"variables": map[string]any{"body": longText}} // over the page limit: fails
	id := s.must(200, "POST", "/api/v1/documents/generate/batch", key, map[string]any{"templateId": tpl, "format": "pdf",
		"documents": []any{short, long, short, short}}).str("batchId")
	path := "/api/v1/documents/batches/" + id

	// poll GETs the batch and checks each entry against the job's own
	// status: same status, same link, same error.
	poll := func(etag string) resp {
		t.Helper()
		var b resp
		if etag == "" {
			b = s.must(200, "GET", path, key, nil)
		} else {
			b = s.must(200, "GET", path, key, nil, "If-None-Match", etag)
		}
		if b.header.Get("ETag") == "" || b.header.Get("ETag") == etag {
			t.Fatalf("ETag %q after %q: %s", b.header.Get("ETag"), etag, b.raw)
		}
		byID, _ := batchDocs(t, b)
		for jid, d := range byID {
			j := s.must(200, "GET", "/api/v1/documents/jobs/"+jid, key, nil)
			if d["status"] != j.get("status") || d["downloadUrl"] != j.get("downloadUrl") || j.str("batchId") != id {
				t.Fatalf("batch entry %v, job %s", d, j.raw)
			}
			if j.str("status") == "failed" && (d["error"] == nil || d["error"] != j.get("error")) {
				t.Fatalf("failed entry %v, job %s", d, j.raw)
			}
		}
		return b
	}
	unchanged := func(etag string, header ...string) {
		t.Helper()
		sent := etag
		if len(header) > 0 {
			sent = header[0]
		}
		r := s.must(304, "GET", path, key, nil, "If-None-Match", sent)
		if len(r.raw) != 0 || r.header.Get("ETag") != etag {
			t.Fatalf("304 with ETag %q and body %q, want %q and none", r.header.Get("ETag"), r.raw, etag)
		}
	}
	states := func(b resp) string {
		_, ids := batchDocs(t, b)
		byID, _ := batchDocs(t, b)
		out := ""
		for _, jid := range ids {
			out += fmt.Sprint(byID[jid]["status"], " ")
		}
		return fmt.Sprintf("%s%s/%s", out, b.str("completedDocuments"), b.str("failedDocuments"))
	}

	held := g.Held()
	b := poll("")
	_, ids := batchDocs(t, b)
	if len(ids) != 4 || ids[0] != held || states(b) != "processing pending pending pending 0/0" || b.header.Get("Cache-Control") != "private, no-cache" {
		t.Fatalf("batch while its first job runs = %s (%s)", states(b), b.raw)
	}
	etag := b.header.Get("ETag")
	unchanged(etag)
	unchanged(etag, `"other", W/`+etag)
	s.must(200, "GET", path, key, nil, "If-None-Match", `"other"`)

	// Cancelling the last document (deleting it pending) counts it failed
	// and takes it off the list.
	s.must(204, "DELETE", "/api/v1/documents/jobs/"+ids[3], key, nil)
	b = poll(etag)
	if got := states(b); got != "processing pending pending 0/1" {
		t.Fatalf("after the cancel: %s", got)
	}
	etag = b.header.Get("ETag")
	unchanged(etag)

	g.Open()
	b = s.waitBatch(key, id)
	b = poll(etag)
	if got := states(b); got != "completed failed completed 2/2" || b.str("status") != "completed" || b.get("completedAt") == nil {
		t.Fatalf("ended batch: %s (%s)", got, b.raw)
	}
	byID, _ := batchDocs(t, b)
	if byID[ids[0]]["downloadUrl"] == nil || byID[ids[2]]["downloadUrl"] == nil || byID[ids[1]]["error"] == nil {
		t.Fatalf("ended batch entries: %s", b.raw)
	}
	etag = b.header.Get("ETag")
	unchanged(etag)
	// The idle trim drops the kept lists: the list read again from the
	// jobs has the same ETag.
	trims := s.Main.IdleTrim.Trims()
	s.Main.IdleTrim.Trim()
	if s.Main.IdleTrim.Trims() != trims+1 {
		t.Fatal("the idle trim did not run")
	}
	unchanged(etag)

	// A retry is a new job outside the batch: the batch does not change.
	retry := s.must(200, "POST", "/api/v1/documents/jobs/"+ids[1]+"/retry", key, nil).str("jobId")
	for s.must(200, "GET", "/api/v1/documents/jobs/"+retry, key, nil).str("status") != "failed" {
		time.Sleep(10 * time.Millisecond)
	}
	unchanged(etag)

	// After a restart on another port the links name the new address:
	// the ETag changes with them (the version alone is kept).
	s.Main.Close()
	s = startMain(t, &Main{Config: Config{Data: data}, Now: clock}, func(c *Config) { c.Workers = 1; c.DefaultPlan = "free" })
	b = poll(etag)
	if got := states(b); got != "completed failed completed 2/2" {
		t.Fatalf("after a restart: %s", got)
	}
	etag = b.header.Get("ETag")
	unchanged(etag)

	// The links expire with the files (a day on the free plan).
	advance(25 * time.Hour)
	b = poll(etag)
	if got := states(b); got != "completed failed completed 2/2" {
		t.Fatalf("after the links expired: %s", got)
	}
	if byID, _ := batchDocs(t, b); byID[ids[0]]["downloadUrl"] != nil {
		t.Fatalf("expired link still listed: %s", b.raw)
	}
	etag = b.header.Get("ETag")
	unchanged(etag)

	// Retention removes the completed jobs after 7 days, the failed one
	// after 30: the list keeps what is left, the counts stay.
	advance(7 * 24 * time.Hour)
	if err := s.Server.Documents.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	b = poll(etag)
	if got := states(b); got != "failed 2/2" || b.str("status") != "completed" {
		t.Fatalf("after retention: %s", got)
	}
	unchanged(b.header.Get("ETag"))
}

// TestBatchPollConsistent polls a 40-document batch as fast as it can
// while two workers run it, half the polls with the last ETag: every
// answer's list agrees with its own counters, no document goes back to an
// earlier state, and a 304 comes only while nothing changed.
func TestBatchPollConsistent(t *testing.T) {
	s := startServer(t)
	u := s.signup("Racer")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Long", longTemplate()).str("id")
	var docs []any
	for i := range 40 {
		body := "short"
		if i%7 == 3 {
			body = longText
		}
		docs = append(docs, map[string]any{"variables": map[string]any{"body": body}})
	}
	id := s.must(200, "POST", "/api/v1/documents/generate/batch", key, map[string]any{"templateId": tpl, "format": "pdf", "documents": docs}).str("batchId")
	rank := map[any]int{"pending": 0, "processing": 1, "completed": 2, "failed": 2}
	last := map[string]any{}
	var etag, lastBody string
	polls, notModified := 0, 0
	for deadline := time.Now().Add(60 * time.Second); ; polls++ {
		if time.Now().After(deadline) {
			t.Fatal("batch did not end")
		}
		var r resp
		if polls%2 == 1 && etag != "" {
			r = s.do("GET", "/api/v1/documents/batches/"+id, key, nil, "If-None-Match", etag)
		} else {
			r = s.do("GET", "/api/v1/documents/batches/"+id, key, nil)
		}
		if r.status == 304 {
			notModified++
			// Nothing changed: a plain poll now answers what the last did,
			// unless a change landed in between.
			again := s.must(200, "GET", "/api/v1/documents/batches/"+id, key, nil)
			if again.header.Get("ETag") == etag && string(again.raw) != lastBody {
				t.Fatalf("same ETag %s, different bodies:\n%s\n%s", etag, lastBody, again.raw)
			}
			continue
		}
		if r.status != 200 {
			t.Fatalf("poll: %d %s", r.status, r.raw)
		}
		byID, ids := batchDocs(t, r)
		if len(ids) != 40 {
			t.Fatalf("%d documents listed", len(ids))
		}
		completed, failed := 0, 0
		for _, jid := range ids {
			st := byID[jid]["status"]
			switch st {
			case "completed":
				completed++
				if byID[jid]["downloadUrl"] == nil {
					t.Fatalf("completed without a link: %v", byID[jid])
				}
			case "failed":
				failed++
			}
			if prev, ok := last[jid]; ok && (rank[st] < rank[prev] || rank[prev] == 2 && st != prev) {
				t.Fatalf("document %s went from %v to %v", jid, prev, st)
			}
			last[jid] = st
		}
		if fmt.Sprint(completed) != r.str("completedDocuments") || fmt.Sprint(failed) != r.str("failedDocuments") {
			t.Fatalf("list shows %d completed, %d failed; counters %s, %s", completed, failed, r.str("completedDocuments"), r.str("failedDocuments"))
		}
		etag, lastBody = r.header.Get("ETag"), string(r.raw)
		if r.str("status") != "processing" {
			if completed != 34 || failed != 6 || r.str("status") != "completed" {
				t.Fatalf("ended batch: %d completed, %d failed, %s", completed, failed, r.str("status"))
			}
			break
		}
	}
	t.Logf("%d polls, %d answered 304", polls, notModified)
}

// countingBatches counts the job rows the batch polls read.
type countingBatches struct {
	app.BatchStore
	rows, reads *atomic.Int64
}

func (c countingBatches) FindBatchDocs(ctx context.Context, batchID string, ids []string) ([]app.BatchDoc, error) {
	docs, err := c.BatchStore.FindBatchDocs(ctx, batchID, ids)
	c.rows.Add(int64(len(docs)))
	c.reads.Add(1)
	return docs, err
}

// TestBatchPollReadsEachJobOnce polls a 100-document batch without pause
// while it runs: however many polls there are, the polls read each job
// about once in all (its first read, and once when it ends), not once per
// poll (issue 24: a poll reads the batch row, not its jobs).
func TestBatchPollReadsEachJobOnce(t *testing.T) {
	var rows, reads atomic.Int64
	testHookDocuments = func(d *app.DocumentService) { d.Batches = countingBatches{d.Batches, &rows, &reads} }
	t.Cleanup(func() { testHookDocuments = nil })
	s := startServer(t)
	u := s.signup("Counter")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Long", longTemplate()).str("id")
	docs := make([]any, 100)
	for i := range docs {
		docs[i] = map[string]any{"variables": map[string]any{"body": fmt.Sprint("document ", i)}}
	}
	id := s.must(200, "POST", "/api/v1/documents/generate/batch", key, map[string]any{"templateId": tpl, "format": "pdf", "documents": docs}).str("batchId")
	polls := 0
	for deadline := time.Now().Add(2 * time.Minute); ; polls++ {
		b := s.must(200, "GET", "/api/v1/documents/batches/"+id, key, nil)
		if b.str("status") != "processing" {
			if b.str("completedDocuments") != "100" || len(b.get("documents").([]any)) != 100 {
				t.Fatalf("ended batch = %s", b.raw)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("batch did not end")
		}
	}
	t.Logf("%d polls read %d job rows in %d queries", polls+1, rows.Load(), reads.Load())
	if rows.Load() > 200 || polls < 3 {
		t.Fatalf("%d polls read %d job rows; want at most 200 (each job at its first read and when it ended)", polls+1, rows.Load())
	}
}
