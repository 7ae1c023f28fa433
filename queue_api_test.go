package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"folio/app"
	"folio/store"
)

// gate is a FileStore that holds document writes until the test lets them
// pass, so a test keeps its workers busy without timing. It records the
// order in which jobs reached their write.
type gate struct {
	app.FileStore
	t    *testing.T
	held chan string   // a write waiting at the gate announces its name
	pass chan struct{} // each send lets one held write go on
	open chan struct{} // closed: every write passes
	once sync.Once

	mu    sync.Mutex
	order []string // job ids, in the order their writes ran
}

// newGate puts a closed gate in front of the server's document files, and
// makes every document a file (none is kept in the database), so that
// every document's write passes the gate.
func newGate(t *testing.T, s *testServer) *gate {
	g := &gate{FileStore: s.Server.Documents.Files, t: t, held: make(chan string), pass: make(chan struct{}), open: make(chan struct{})}
	s.Server.Documents.Files, s.Server.Documents.InlineMax = g, -1
	t.Cleanup(g.Open) // runs before the server's Close, registered earlier
	return g
}

func (g *gate) WriteFile(name string, write func(io.Writer) error) (int64, error) {
	select {
	case <-g.open:
	case g.held <- name:
		select {
		case <-g.pass:
		case <-g.open:
		}
	}
	g.mu.Lock()
	g.order = append(g.order, strings.TrimSuffix(path.Base(name), path.Ext(name)))
	g.mu.Unlock()
	return g.FileStore.WriteFile(name, write)
}

// Held waits until a worker holds at the gate and returns its job id.
func (g *gate) Held() string {
	g.t.Helper()
	select {
	case name := <-g.held:
		return strings.TrimSuffix(path.Base(name), path.Ext(name))
	case <-time.After(30 * time.Second):
		g.t.Fatal("no worker reached the gate")
		return ""
	}
}

// Pass lets the held write go on.
func (g *gate) Pass() { g.pass <- struct{}{} }

// Open lets every write pass from now on.
func (g *gate) Open() { g.once.Do(func() { close(g.open) }) }

// Order returns the job ids in the order their writes ran.
func (g *gate) Order() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.order...)
}

// waitEnd polls a job until it leaves pending and processing.
func (s *testServer) waitEnd(key, id string) resp {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		j := s.must(200, "GET", "/api/v1/documents/jobs/"+id, key, nil)
		if st := j.str("status"); st != "pending" && st != "processing" {
			return j
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("job %s did not end: %s", id, j.raw)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// batchJobIDs creates a batch of n invoices and returns its id and its jobs'
// ids in request order.
func (s *testServer) batchJobIDs(key, templateID, prefix string, n int) (string, []string) {
	s.t.Helper()
	docs := make([]any, n)
	for i := range docs {
		docs[i] = map[string]any{"variables": map[string]any{"number": fmt.Sprintf("%s-%d", prefix, i), "customer": prefix}}
	}
	b := s.must(200, "POST", "/api/v1/documents/generate/batch", key, map[string]any{"templateId": templateID, "format": "pdf", "documents": docs})
	got := s.must(200, "GET", "/api/v1/documents/batches/"+b.str("batchId"), key, nil)
	var ids []string
	for _, d := range got.get("documents").([]any) {
		ids = append(ids, d.(map[string]any)["jobId"].(string))
	}
	if len(ids) != n {
		s.t.Fatalf("batch lists %d documents, want %d", len(ids), n)
	}
	return b.str("batchId"), ids
}

func invoiceBody(templateID, customer string) map[string]any {
	return map[string]any{"templateId": templateID, "format": "pdf", "variables": map[string]any{"number": "1", "customer": customer}}
}

// TestPriorities holds the only worker on the first job of a 50-document
// batch, then queues a 51-document batch and a single document: the single
// runs next, then the rest of the 50 (priority 5), then the 51 (priority 10).
func TestPriorities(t *testing.T) {
	s := startServer(t, func(c *Config) { c.Workers = 1 })
	g := newGate(t, s)
	u := s.signup("Prioritizer")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate).str("id")

	b50, small := s.batchJobIDs(key, tpl, "small", 50)
	if held := g.Held(); held != small[0] {
		t.Fatalf("worker holds %s, want the batch's first job %s", held, small[0])
	}
	b51, large := s.batchJobIDs(key, tpl, "large", 51)
	single := s.must(200, "POST", "/api/v1/documents/generate?async=true", key, invoiceBody(tpl, "single")).str("jobId")
	for _, c := range []struct {
		id   string
		want int
	}{{small[49], 5}, {large[0], 10}, {single, 1}} {
		if j, err := s.DB.FindJobForWorker(t.Context(), c.id); err != nil || j.Priority != c.want {
			t.Fatalf("job %s priority %v (%v), want %d", c.id, j, err, c.want)
		}
	}
	g.Pass()
	g.Open()
	s.waitBatch(key, b50)
	s.waitBatch(key, b51)
	s.waitEnd(key, single)
	want := append(append([]string{small[0], single}, small[1:]...), large...)
	got := g.Order()
	if len(got) != len(want) {
		t.Fatalf("%d documents written, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("document %d written was %s, want %s (single %s, first of the 51 %s)", i, got[i], want[i], single, large[0])
		}
	}
}

// TestAsyncAnswersPendingAtOnce holds the worker, so only an answer that does
// not wait can come back; a waiting generate would wait an hour here.
func TestAsyncAnswersPendingAtOnce(t *testing.T) {
	s := startServer(t, func(c *Config) { c.Workers = 1; c.GenerateWait = time.Hour })
	g := newGate(t, s)
	u := s.signup("Async")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate).str("id")

	first := s.must(200, "POST", "/api/v1/documents/generate?async=true", key, invoiceBody(tpl, "First"))
	if first.str("status") != "pending" || first.get("downloadUrl") != nil || !strings.HasPrefix(first.str("jobId"), "job_") {
		t.Fatalf("async = %s", first.raw)
	}
	if held := g.Held(); held != first.str("jobId") {
		t.Fatalf("held %s, want %s", held, first.str("jobId"))
	}
	second := s.must(200, "POST", "/api/v1/documents/generate?async=true", key, invoiceBody(tpl, "Second"))
	if second.str("status") != "pending" {
		t.Fatalf("async behind a busy worker = %s", second.raw)
	}
	if j := s.must(200, "GET", "/api/v1/documents/jobs/"+second.str("jobId"), key, nil); j.str("status") != "pending" {
		t.Fatalf("queued job = %s", j.raw)
	}
	if j := s.must(200, "GET", "/api/v1/documents/jobs/"+first.str("jobId"), key, nil); j.str("status") != "processing" {
		t.Fatalf("held job = %s", j.raw)
	}
	g.Open()
	for _, r := range []resp{first, second} {
		j := s.waitEnd(key, r.str("jobId"))
		if j.str("status") != "completed" {
			t.Fatalf("job = %s", j.raw)
		}
	}
}

// TestGenerateWaitExpires: a synchronous generate whose job is still running,
// or still queued, when the wait ends answers 200 with the job's state and id.
func TestGenerateWaitExpires(t *testing.T) {
	s := startServer(t, func(c *Config) { c.Workers = 2; c.GenerateWait = 300 * time.Millisecond })
	g := newGate(t, s)
	u := s.signup("Waiter")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate).str("id")

	// Worker 1 is held at the gate; worker 2 takes the next job and waits
	// at the gate too (whether it started the job before the wait ended
	// depends on the machine: pending or processing); the third job finds no
	// free worker and is pending.
	held := s.must(200, "POST", "/api/v1/documents/generate?async=true", key, invoiceBody(tpl, "Held")).str("jobId")
	if got := g.Held(); got != held {
		t.Fatalf("held %s, want %s", got, held)
	}
	running := s.must(200, "POST", "/api/v1/documents/generate", key, invoiceBody(tpl, "Running"))
	if st := running.str("status"); (st != "processing" && st != "pending") || !strings.HasPrefix(running.str("jobId"), "job_") || running.get("downloadUrl") != nil {
		t.Fatalf("generate of an unfinished job after the wait = %s", running.raw)
	}
	queued := s.must(200, "POST", "/api/v1/documents/generate", key, invoiceBody(tpl, "Queued"))
	if queued.str("status") != "pending" || !strings.HasPrefix(queued.str("jobId"), "job_") || queued.get("downloadUrl") != nil {
		t.Fatalf("generate of a queued job after the wait = %s", queued.raw)
	}
	g.Open()
	for _, id := range []string{held, running.str("jobId"), queued.str("jobId")} {
		j := s.waitEnd(key, id)
		if j.str("status") != "completed" || j.get("downloadUrl") == nil {
			t.Fatalf("job after the gate opened = %s", j.raw)
		}
	}
}

// TestDeletingUnfinishedBatchJobsEndsTheBatch deletes a batch's pending and
// running jobs: each counts as failed, is refunded, and the batch ends (with
// its webhook event) exactly once instead of staying processing for good.
func TestDeletingUnfinishedBatchJobsEndsTheBatch(t *testing.T) {
	rcv := startReceiver(t, false)
	s := startServer(t, func(c *Config) {
		c.Workers = 1
		c.WebhookAllowPrivate = true
		c.WebhookCA = rcv.caFile
		c.WebhookRetrySchedule = "0s,100ms,100ms,100ms"
	})
	g := newGate(t, s)
	u := s.verifiedUser("Deleter")
	key := s.createKey(u.token, nil)
	sub := s.must(200, "POST", "/api/v1/webhook-subscriptions", key, map[string]any{"url": rcv.url, "events": []string{"batch.completed", "batch.failed"}})
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate).str("id")
	usage := func() string {
		return s.must(200, "GET", "/api/v1/analytics/usage", key, nil).str("documentsGenerated")
	}

	// Batch A: the first job runs (held), the other two are deleted pending.
	batchA, a := s.batchJobIDs(key, tpl, "A", 3)
	if held := g.Held(); held != a[0] {
		t.Fatalf("held %s, want %s", held, a[0])
	}
	if usage() != "3" {
		t.Fatalf("usage before deletes = %s", usage())
	}
	if d := s.do("DELETE", "/api/v1/documents/jobs/"+a[1], key, nil); d.status != 204 {
		t.Fatalf("delete pending: %d %s", d.status, d.raw)
	}
	if bd := s.must(200, "DELETE", "/api/v1/documents/jobs/bulk", key, map[string]any{"jobIds": []string{a[2]}}); bd.str("deleted") != "1" {
		t.Fatalf("bulk delete pending: %s", bd.raw)
	}
	st := s.must(200, "GET", "/api/v1/documents/batches/"+batchA, key, nil)
	if st.str("status") != "processing" || st.str("failedDocuments") != "2" || st.str("completedDocuments") != "0" || st.str("totalDocuments") != "3" {
		t.Fatalf("batch A while its first job runs = %s", st.raw)
	}
	if usage() != "1" {
		t.Fatalf("deleted pending documents not refunded: usage %s, want 1", usage())
	}
	g.Pass()
	doneA := s.waitBatch(key, batchA)
	if doneA.str("status") != "completed" || doneA.str("completedDocuments") != "1" || doneA.str("failedDocuments") != "2" || len(doneA.get("documents").([]any)) != 1 {
		t.Fatalf("batch A = %s", doneA.raw)
	}

	// Batch B: its pending job is deleted, then its running one: the batch
	// ends failed at the second delete, and the worker finishing later
	// records nothing and keeps no file.
	batchB, b := s.batchJobIDs(key, tpl, "B", 2)
	if held := g.Held(); held != b[0] {
		t.Fatalf("held %s, want %s", held, b[0])
	}
	s.must(204, "DELETE", "/api/v1/documents/jobs/"+b[1], key, nil)
	if st := s.must(200, "GET", "/api/v1/documents/batches/"+batchB, key, nil); st.str("status") != "processing" || st.str("failedDocuments") != "1" {
		t.Fatalf("batch B after one delete = %s", st.raw)
	}
	s.must(204, "DELETE", "/api/v1/documents/jobs/"+b[0], key, nil)
	doneB := s.must(200, "GET", "/api/v1/documents/batches/"+batchB, key, nil)
	if doneB.str("status") != "failed" || doneB.str("failedDocuments") != "2" || doneB.str("completedDocuments") != "0" || doneB.get("completedAt") == nil {
		t.Fatalf("batch B after deleting every job = %s", doneB.raw)
	}
	if usage() != "1" {
		t.Fatalf("deleted running document not refunded: usage %s, want 1", usage())
	}
	g.Open()
	// One worker: this generate completes only after the held job's end.
	if c := s.must(200, "POST", "/api/v1/documents/generate", key, invoiceBody(tpl, "After")); c.str("status") != "completed" {
		t.Fatalf("generate after = %s", c.raw)
	}
	if f, _ := filepath.Glob(filepath.Join(s.Config.Data, "files", "*", b[0]+".pdf")); len(f) != 0 {
		t.Fatalf("the deleted running job left its file: %v", f)
	}
	if d := s.must(200, "GET", "/api/v1/documents/batches/"+batchB, key, nil); d.str("status") != "failed" || d.str("failedDocuments") != "2" || d.str("completedDocuments") != "0" {
		t.Fatalf("batch B after its worker ended = %s", d.raw)
	}

	// Each batch's event was stored and sent exactly once.
	rcv.waitFor(2, 15*time.Second)
	dels := s.must(200, "GET", "/api/v1/webhook-subscriptions/"+sub.str("id")+"/deliveries", key, nil).get("deliveries").([]any)
	if len(dels) != 2 {
		t.Fatalf("%d batch deliveries, want 2: %v", len(dels), dels)
	}
	events := map[string]map[string]any{}
	for _, r := range rcv.requests() {
		var e struct {
			Event string         `json:"event"`
			Data  map[string]any `json:"data"`
		}
		if err := json.Unmarshal(r.body, &e); err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprint(e.Data["batchId"])
		if events[id] != nil {
			t.Fatalf("batch %s event sent twice", id)
		}
		e.Data["event"] = e.Event
		events[id] = e.Data
	}
	if e := events[batchA]; e == nil || e["event"] != "batch.completed" || e["completedDocuments"] != 1.0 || e["failedDocuments"] != 2.0 || e["totalDocuments"] != 3.0 {
		t.Fatalf("batch A event = %v", e)
	}
	if e := events[batchB]; e == nil || e["event"] != "batch.failed" || !strings.Contains(fmt.Sprint(e["error"]), "deleted") {
		t.Fatalf("batch B event = %v", e)
	}
}

// TestStartQueuesJobsWithoutQueueEntry starts a server on a data directory
// holding what a crash between a job's row write and its queue write leaves
// (a pending and a processing job with no queue entry) and a temp file of an
// interrupted write: both jobs complete exactly once and the temp file goes.
func TestStartQueuesJobsWithoutQueueEntry(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	s1 := startServerIn(t, data)
	u := s1.signup("Restarter")
	k := s1.must(200, "POST", "/api/api-keys", u.token, map[string]any{"name": "k"})
	key, team := k.str("plainKey"), k.str("teamId")
	tpl := s1.createTemplate(u.token, "Invoice", invoiceTemplate).str("id")
	s1.Close()

	db, err := store.Open(ctx, filepath.Join(data, "folio.db"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	job := func(status, customer string) *app.Job {
		j := &app.Job{ID: app.NewID("job"), TeamID: team, TemplateID: tpl, Status: status, Format: "pdf", Priority: app.PrioritySingle,
			Variables: json.RawMessage(`{"number":"R-1","customer":"` + customer + `"}`), CreatedAt: now}
		if status == app.StatusProcessing {
			j.Attempts, j.StartedAt = 1, &now
		}
		return j
	}
	pending, processing := job(app.StatusPending, "Pending Ltd"), job(app.StatusProcessing, "Processing Ltd")
	if err := db.CreateJobs(ctx, nil, pending, processing); err != nil {
		t.Fatal(err)
	}
	db.Close()
	tmp := filepath.Join(data, "files", team, ".tmp-4242")
	os.MkdirAll(filepath.Dir(tmp), 0o750)
	if err := os.WriteFile(tmp, []byte("%PDF-1.7 half"), 0o600); err != nil {
		t.Fatal(err)
	}

	var logs syncBuffer
	s2 := startMain(t, &Main{Config: Config{Data: data}, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	for _, j := range []*app.Job{pending, processing} {
		got := s2.waitEnd(key, j.ID)
		if got.str("status") != "completed" {
			t.Fatalf("job %s after restart = %s", j.ID, got.raw)
		}
		_, _, pdf := s2.download(got.str("downloadUrl"))
		var v map[string]string
		json.Unmarshal(j.Variables, &v)
		if !strings.Contains(pdfText(t, pdf), v["customer"]) {
			t.Fatalf("job %s's PDF lacks %q", j.ID, v["customer"])
		}
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("temp file of the interrupted write survived the start: %v", err)
	}
	// Exactly once: the entries are acked, each job ended once and started
	// once more than before the restart.
	deadline := time.Now().Add(10 * time.Second)
	for {
		ids, err := s2.Bolt.JobIDs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue entries left: %v", ids)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, c := range []struct {
		j        *app.Job
		attempts int
	}{{pending, 1}, {processing, 2}} {
		if n := strings.Count(logs.String(), `msg="job ended" job=`+c.j.ID+" "); n != 1 {
			t.Fatalf("job %s ended %d times", c.j.ID, n)
		}
		if got, _ := s2.DB.FindJobForWorker(ctx, c.j.ID); got.Attempts != c.attempts {
			t.Fatalf("job %s attempts %d, want %d", c.j.ID, got.Attempts, c.attempts)
		}
	}
}

// failingQueue is a queue whose writes fail (a full or broken bbolt file).
type failingQueue struct{ app.Queue }

func (failingQueue) Enqueue(context.Context, ...*app.QueueEntry) error {
	return errors.New("queue write failed")
}

// TestOrphanedJobIsQueuedAgain: a generate whose queue write fails after its
// job was recorded and paid for leaves a pending job with no entry. The
// running server queues it again once it is older than a minute (not
// before, when its queue write may still be under way), and it completes once.
func TestOrphanedJobIsQueuedAgain(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	var logs syncBuffer
	s := startMain(t, &Main{Now: clock, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	u := s.signup("Orphan")
	k := s.must(200, "POST", "/api/api-keys", u.token, map[string]any{"name": "k"})
	key, team := k.str("plainKey"), k.str("teamId")
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate).str("id")

	// The same service as the server's, with a queue that fails to write.
	docs := s.Server.Documents
	broken := &app.DocumentService{Jobs: docs.Jobs, Batches: docs.Batches, Templates: docs.Templates, Teams: docs.Teams, Queue: failingQueue{docs.Queue},
		Files: docs.Files, Downloads: docs.Downloads, Logger: docs.Logger, Now: docs.Now}
	caller := app.WithPrincipal(ctx, &app.Principal{Kind: app.AuthJWT, UserID: u.id, TeamID: team, Role: app.RoleOwner, Verified: true})
	if _, err := broken.Generate(caller, app.GenerateInput{TemplateID: tpl, Format: "pdf", Variables: json.RawMessage(`{"number":"O-1","customer":"Orphan Ltd"}`)}, true); err == nil {
		t.Fatal("generate with a failing queue succeeded")
	}
	list := s.must(200, "GET", "/api/v1/documents/jobs", key, nil)
	if list.str("meta.total") != "1" || list.get("data").([]any)[0].(map[string]any)["status"] != "pending" {
		t.Fatalf("jobs after the failed queue write = %s", list.raw)
	}
	id := list.get("data").([]any)[0].(map[string]any)["jobId"].(string)
	queued := func() bool {
		ids, err := s.Bolt.JobIDs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ids[id]
	}
	if queued() {
		t.Fatal("the failed queue write left an entry")
	}

	// Younger than a minute: its queue write may still be under way.
	if err := docs.RequeueOrphans(ctx); err != nil {
		t.Fatal(err)
	}
	if queued() || s.must(200, "GET", "/api/v1/documents/jobs/"+id, key, nil).str("status") != "pending" {
		t.Fatal("a job younger than a minute was queued again")
	}
	advance(app.OrphanAge + time.Second)
	if err := docs.RequeueOrphans(ctx); err != nil {
		t.Fatal(err)
	}
	j := s.waitEnd(key, id)
	if j.str("status") != "completed" {
		t.Fatalf("orphaned job = %s", j.raw)
	}
	_, _, pdf := s.download(j.str("downloadUrl"))
	if !strings.Contains(pdfText(t, pdf), "Orphan Ltd") {
		t.Fatal("orphaned job's PDF lacks its variable")
	}
	// Once it ended, a later pass queues nothing, and it was charged once.
	if err := docs.RequeueOrphans(ctx); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(logs.String(), `msg="job ended" job=`+id+" "); n != 1 {
		t.Fatalf("job ended %d times", n)
	}
	if got, _ := s.DB.FindJobForWorker(ctx, id); got.Attempts != 1 {
		t.Fatalf("attempts %d, want 1", got.Attempts)
	}
	if use := s.must(200, "GET", "/api/v1/analytics/usage", key, nil); use.str("documentsGenerated") != "1" {
		t.Fatalf("usage = %s", use.raw)
	}
}
