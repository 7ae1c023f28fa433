package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// waitBatch polls a batch until it leaves processing.
func (s *testServer) waitBatch(key, id string) resp {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		b := s.must(200, "GET", "/api/v1/documents/batches/"+id, key, nil)
		if b.str("status") != "processing" {
			return b
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("batch %s still processing: %s completed, %s failed of %s", id, b.str("completedDocuments"), b.str("failedDocuments"), b.str("totalDocuments"))
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// longText is enough text to exceed the 30-page PDF limit in longTemplate
// (ten copies of it), while staying under the 100 KB batch-document limit.
var longText = strings.Repeat("All work and no play makes a long document. ", 1500)

// longTemplate prints {{body}} ten times.
func longTemplate() map[string]any {
	var comps []any
	for i := 0; i < 10; i++ {
		comps = append(comps, map[string]any{"type": "text", "props": map[string]any{"content": "{{body}}"}})
	}
	return map[string]any{
		"outputFormats": []string{"pdf"},
		"schema":        map[string]any{"sections": []any{map[string]any{"id": "b", "components": comps}}},
		"variables":     []any{map[string]any{"name": "body", "type": "string", "required": true}},
	}
}

func TestBatchOfFive(t *testing.T) {
	s := startServer(t)
	u := s.signup("Batcher")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)

	var docs []any
	for i := 1; i <= 5; i++ {
		docs = append(docs, map[string]any{"variables": map[string]any{"number": fmt.Sprintf("B-%d", i), "customer": fmt.Sprintf("Customer %d", i)},
			"filename": fmt.Sprintf("inv-%d", i), "metadata": map[string]any{"i": i}})
	}
	b := s.must(200, "POST", "/api/v1/documents/generate/batch", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "documents": docs})
	if !strings.HasPrefix(b.str("batchId"), "bat_") || b.str("status") != "processing" || b.str("totalDocuments") != "5" ||
		b.str("completedDocuments") != "0" || b.str("failedDocuments") != "0" || b.get("createdAt") == nil {
		t.Fatalf("batch created = %s", b.raw)
	}
	done := s.waitBatch(key, b.str("batchId"))
	if done.str("status") != "completed" || done.str("completedDocuments") != "5" || done.str("failedDocuments") != "0" || done.get("completedAt") == nil {
		t.Fatalf("batch done = %s", done.raw)
	}
	entries := done.get("documents").([]any)
	if len(entries) != 5 {
		t.Fatalf("documents = %v", entries)
	}
	seen := map[string]bool{}
	for i, e := range entries {
		d := e.(map[string]any)
		id := d["jobId"].(string)
		if seen[id] || d["status"] != "completed" {
			t.Fatalf("entry %d = %v", i, d)
		}
		seen[id] = true
		_, h, pdf := s.download(d["downloadUrl"].(string))
		if want := fmt.Sprintf("Customer %d", i+1); !strings.Contains(pdfText(t, pdf), want) {
			t.Fatalf("document %d lacks %q", i, want)
		}
		if !strings.Contains(h.Get("Content-Disposition"), fmt.Sprintf("inv-%d.pdf", i+1)) {
			t.Fatalf("document %d disposition %q", i, h.Get("Content-Disposition"))
		}
		j := s.must(200, "GET", "/api/v1/documents/jobs/"+id, key, nil)
		if j.str("metadata.i") != fmt.Sprint(i+1) || j.str("batchId") != b.str("batchId") {
			t.Fatalf("job %d = %s", i, j.raw)
		}
	}

	// Other teams cannot see the batch.
	v := s.signup("Other")
	s.wantError(s.do("GET", "/api/v1/documents/batches/"+b.str("batchId"), s.createKey(v.token, nil), nil), 404, "ERR_BATCH_001")
}

func TestBatchValidation(t *testing.T) {
	s := startServer(t)
	u := s.signup("Validator")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	batch := "/api/v1/documents/generate/batch"
	good := map[string]any{"variables": map[string]any{"number": "1", "customer": "c"}}

	r := s.do("POST", batch, key, map[string]any{"templateId": tpl.str("id"), "format": "pdf",
		"documents": []any{good, good, map[string]any{"variables": map[string]any{"number": "3"}}, good}})
	s.wantError(r, 400, "ERR_VALID_002")
	if r.str("relatedInfo.index") != "2" || !strings.Contains(string(r.raw), "customer") {
		t.Fatalf("bad document not named: %s", r.raw)
	}
	r = s.do("POST", batch, key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "documents": []any{good, map[string]any{"filename": "x"}}})
	s.wantError(r, 400, "ERR_VALID_005")
	if r.str("relatedInfo.index") != "1" || r.str("relatedInfo.field") != "documents[1].variables" {
		t.Fatalf("missing variables: %s", r.raw)
	}
	s.wantError(s.do("POST", batch, key, map[string]any{"templateId": tpl.str("id"), "format": "pdf"}), 400, "ERR_VALID_005")
	s.wantError(s.do("POST", batch, key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "documents": []any{}}), 400, "ERR_VALID_003")
	many := make([]any, 101)
	for i := range many {
		many[i] = good
	}
	r = s.do("POST", batch, key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "documents": many})
	s.wantError(r, 400, "ERR_LIMIT_014")
	if r.str("relatedInfo.max") != "100" {
		t.Fatalf("101 documents: %s", r.raw)
	}
	big := map[string]any{"variables": map[string]any{"number": "1", "customer": strings.Repeat("x", 101<<10)}}
	r = s.do("POST", batch, key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "documents": []any{good, big}})
	s.wantError(r, 400, "ERR_LIMIT_015")
	if r.str("relatedInfo.index") != "1" {
		t.Fatalf("oversized variables: %s", r.raw)
	}
	if l := s.must(200, "GET", "/api/v1/documents/jobs", key, nil); l.str("meta.total") != "0" {
		t.Fatalf("rejected batches left jobs: %s", l.raw)
	}
}

func TestFailedJobRetryAndBatchFailure(t *testing.T) {
	s := startServer(t)
	u := s.signup("Failer")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Long", longTemplate())
	// A synchronous generate that fails answers with the failure's envelope and the jobId.
	r := s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": map[string]any{"body": longText}})
	s.wantError(r, 400, "ERR_LIMIT_001")
	jobID := r.str("relatedInfo.jobId")
	if jobID == "" || r.str("relatedInfo.max") != "30" {
		t.Fatalf("limit failure: %s", r.raw)
	}
	j := s.must(200, "GET", "/api/v1/documents/jobs/"+jobID, key, nil)
	if j.str("status") != "failed" || !strings.Contains(j.str("error"), "page") || j.get("downloadUrl") != nil || j.get("completedAt") == nil {
		t.Fatalf("failed job = %s", j.raw)
	}
	// Retry makes a new job; completed jobs cannot be retried.
	rt := s.must(200, "POST", "/api/v1/documents/jobs/"+jobID+"/retry", key, nil)
	if rt.str("jobId") == jobID || rt.str("status") != "pending" || !strings.Contains(rt.str("message"), "retry") {
		t.Fatalf("retry = %s", rt.raw)
	}
	ok := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": map[string]any{"body": "short"}})
	s.wantError(s.do("POST", "/api/v1/documents/jobs/"+ok.str("jobId")+"/retry", key, nil), 400, "ERR_JOB_008")
	s.wantError(s.do("POST", "/api/v1/documents/jobs/job_missing/retry", key, nil), 404, "ERR_JOB_001")

	bulk := s.must(200, "POST", "/api/v1/documents/jobs/bulk/retry", key, map[string]any{"jobIds": []string{jobID, ok.str("jobId"), "job_missing", jobID}})
	if bulk.str("queued") != "1" || bulk.get("message") == nil {
		t.Fatalf("bulk retry = %s", bulk.raw)
	}
	s.wantError(s.do("POST", "/api/v1/documents/jobs/bulk/retry", key, map[string]any{}), 400, "ERR_VALID_005")

	// A batch whose every document fails ends failed; one that completes a document ends completed.
	failing := map[string]any{"variables": map[string]any{"body": longText}}
	b := s.must(200, "POST", "/api/v1/documents/generate/batch", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "documents": []any{failing, failing}})
	done := s.waitBatch(key, b.str("batchId"))
	if done.str("status") != "failed" || done.str("failedDocuments") != "2" || done.str("completedDocuments") != "0" {
		t.Fatalf("all-failed batch = %s", done.raw)
	}
	if e := done.get("documents").([]any)[0].(map[string]any); e["status"] != "failed" || !strings.Contains(fmt.Sprint(e["error"]), "page") {
		t.Fatalf("failed entry = %v", e)
	}
	mixed := s.must(200, "POST", "/api/v1/documents/generate/batch", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf",
		"documents": []any{failing, map[string]any{"variables": map[string]any{"body": "fine"}}}})
	if d := s.waitBatch(key, mixed.str("batchId")); d.str("status") != "completed" || d.str("failedDocuments") != "1" || d.str("completedDocuments") != "1" {
		t.Fatalf("mixed batch = %s", d.raw)
	}
}

func TestJobListExportDelete(t *testing.T) {
	s := startServer(t, func(c *Config) { c.InlineMax = -1 }) // documents as files (TestInlineDocument: in the database)
	u := s.signup("Lister")
	key := s.createKey(u.token, nil)
	inv := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	other := s.createTemplate(u.token, "Other", invoiceTemplate)
	var ids []string
	for i := 0; i < 7; i++ {
		tpl := inv
		if i%3 == 0 {
			tpl = other
		}
		g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf",
			"variables": map[string]any{"number": fmt.Sprint(i), "customer": "=HYPERLINK(\"x\")"}, "filename": "=cmd"})
		ids = append(ids, g.str("jobId"))
	}

	p := s.must(200, "GET", "/api/v1/documents/jobs?page=2&limit=3", key, nil)
	data := p.get("data").([]any)
	if len(data) != 3 || p.str("meta.total") != "7" || p.str("meta.totalPages") != "3" || p.str("meta.page") != "2" || p.str("meta.limit") != "3" {
		t.Fatalf("page 2 = %s", p.raw)
	}
	if data[0].(map[string]any)["jobId"] != ids[3] { // newest first: 6,5,4 | 3,2,1 | 0
		t.Fatalf("page 2 starts with %v, want %s", data[0], ids[3])
	}
	f := s.must(200, "GET", "/api/v1/documents/jobs?templateId="+other.str("id")+"&status=completed", key, nil)
	if f.str("meta.total") != "3" {
		t.Fatalf("templateId filter = %s", f.raw)
	}
	s.wantError(s.do("GET", "/api/v1/documents/jobs?limit=101", key, nil), 400, "ERR_VALID_003")

	// CSV export: a header, one row per job, formula cells defused.
	st, h, body := s.downloadAuth(key, "/api/v1/documents/jobs/export")
	if st != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/csv") || !strings.Contains(h.Get("Content-Disposition"), ".csv") {
		t.Fatalf("csv export: %d %v", st, h)
	}
	rows, err := csv.NewReader(strings.NewReader(string(body))).ReadAll()
	if err != nil || len(rows) != 8 || rows[0][0] != "jobId" || rows[1][0] != ids[0] || rows[1][1] != "completed" || rows[1][6] != "_cmd" {
		t.Fatalf("csv rows = %v %v", rows, err)
	}
	// JSON export with filters.
	today := time.Now().UTC().Format("2006-01-02")
	st, _, body = s.downloadAuth(key, "/api/v1/documents/jobs/export?format=json&status=completed&startDate="+today+"&endDate="+today)
	var list []map[string]any
	if st != 200 || json.Unmarshal(body, &list) != nil || len(list) != 7 || list[0]["jobId"] != ids[0] {
		t.Fatalf("json export: %d %s", st, body)
	}
	st, _, body = s.downloadAuth(key, "/api/v1/documents/jobs/export?format=json&endDate=2000-01-01")
	if json.Unmarshal(body, &list) != nil || len(list) != 0 {
		t.Fatalf("export before 2000: %s", body)
	}
	s.wantError(s.do("GET", "/api/v1/documents/jobs/export?format=xml", key, nil), 400, "ERR_VALID_003")
	s.wantError(s.do("GET", "/api/v1/documents/jobs/export?startDate=yesterday", key, nil), 400, "ERR_VALID_003")

	// Delete removes the record and the file; the link dies with it.
	j0 := s.must(200, "GET", "/api/v1/documents/jobs/"+ids[0], key, nil)
	files, _ := filepath.Glob(filepath.Join(s.Config.Data, "files", "*", ids[0]+".pdf"))
	if len(files) != 1 {
		t.Fatalf("file of %s: %v", ids[0], files)
	}
	if d := s.do("DELETE", "/api/v1/documents/jobs/"+ids[0], key, nil); d.status != 204 {
		t.Fatalf("delete: %d %s", d.status, d.raw)
	}
	if _, err := os.Stat(files[0]); !os.IsNotExist(err) {
		t.Fatal("file survived its job")
	}
	s.wantError(s.do("GET", "/api/v1/documents/jobs/"+ids[0], key, nil), 404, "ERR_JOB_001")
	s.wantError(s.do("GET", j0.str("downloadUrl"), "", nil), 404, "ERR_JOB_004")
	s.wantError(s.do("DELETE", "/api/v1/documents/jobs/"+ids[0], key, nil), 404, "ERR_JOB_001")

	// Another team cannot delete; bulk delete counts only what it removed.
	v := s.signup("Vandal")
	s.wantError(s.do("DELETE", "/api/v1/documents/jobs/"+ids[1], s.createKey(v.token, nil), nil), 404, "ERR_JOB_001")
	bd := s.must(200, "DELETE", "/api/v1/documents/jobs/bulk", key, map[string]any{"jobIds": []string{ids[1], ids[2], "job_nope"}})
	if bd.str("deleted") != "2" || bd.get("message") == nil {
		t.Fatalf("bulk delete = %s", bd.raw)
	}
	if l := s.must(200, "GET", "/api/v1/documents/jobs", key, nil); l.str("meta.total") != "4" {
		t.Fatalf("after deletes: %s", l.raw)
	}
}

func TestQueueStatsAndAnalytics(t *testing.T) {
	s := startServer(t)
	u := s.signup("Analyst")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Long", longTemplate())
	started := time.Now()
	for i := 0; i < 3; i++ {
		s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": map[string]any{"body": "ok"}})
	}
	s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": map[string]any{"body": longText}})
	// Every job ran inside its synchronous request, so the average generation
	// time lies between zero and the time all four requests took.
	spent := float64(time.Since(started).Milliseconds())

	q := s.must(200, "GET", "/api/v1/documents/queue/stats", key, nil)
	if q.str("completedLastHour") != "3" || q.str("failedLastHour") != "1" || q.str("pending") != "0" || q.str("workers") != "2" || q.get("oldestPendingAgeSeconds") == nil || q.get("processing") == nil {
		t.Fatalf("queue stats = %s", q.raw)
	}
	a := s.must(200, "GET", "/api/v1/documents/analytics", key, nil)
	want := map[string]string{"totalDocuments": "4", "completedDocuments": "3", "failedDocuments": "1", "byFormat.pdf": "4", "byFormat.xlsx": "0",
		"summary.totalDocuments": "4", "summary.successfulDocuments": "3", "summary.failedDocuments": "1", "summary.successRate": "75",
		"byStatus.completed": "3", "byStatus.failed": "1"}
	for k, v := range want {
		if a.str(k) != v {
			t.Fatalf("analytics %s = %q, want %q: %s", k, a.str(k), v, a.raw)
		}
	}
	byDate := a.get("byDate").([]any)
	if len(byDate) != 1 || byDate[0].(map[string]any)["count"] != 4.0 || byDate[0].(map[string]any)["date"] != time.Now().UTC().Format("2006-01-02") {
		t.Fatalf("byDate = %v", byDate)
	}
	if a.get("period.startDate") == nil || a.get("period.endDate") == nil {
		t.Fatalf("period missing: %s", a.raw)
	}
	old := s.must(200, "GET", "/api/v1/documents/analytics?startDate=2020-01-01&endDate=2020-01-31", key, nil)
	if old.str("totalDocuments") != "0" || old.str("summary.successRate") != "100" {
		t.Fatalf("empty period = %s", old.raw)
	}
	s.wantError(s.do("GET", "/api/v1/documents/analytics?startDate=2020-02-01&endDate=2020-01-01", key, nil), 400, "ERR_VALID_003")

	for _, path := range []string{"/api/templates/" + tpl.str("id") + "/analytics", "/api/v1/templates/" + tpl.str("slug") + "/analytics?period=7d"} {
		ta := s.must(200, "GET", path, key, nil)
		if ta.str("templateId") != tpl.str("id") || ta.str("templateName") != "Long" || ta.str("usage.total") != "4" || ta.str("usage.last7Days") != "4" ||
			ta.str("usage.last30Days") != "4" || ta.str("performance.successRate") != "75" || ta.str("performance.failedCount") != "1" || len(ta.get("trend").([]any)) != 1 {
			t.Fatalf("template analytics = %s", ta.raw)
		}
		// Durations are recorded in whole milliseconds, so renders of these
		// small documents may average 0 on a fast machine.
		if avg, ok := ta.get("performance.avgGenerationTimeMs").(float64); !ok || avg < 0 || avg > spent {
			t.Fatalf("avgGenerationTimeMs %v, want 0 to the %v ms the requests took: %s", ta.get("performance.avgGenerationTimeMs"), spent, ta.raw)
		}
	}
	s.wantError(s.do("GET", "/api/templates/"+tpl.str("id")+"/analytics?period=2w", key, nil), 400, "ERR_VALID_003")
	noAnalytics := s.createKey2(u.token, map[string]bool{"read_analytics": false})
	s.wantError(s.do("GET", "/api/v1/documents/analytics", noAnalytics, nil), 403, "ERR_AUTH_005")

	use := s.must(200, "GET", "/api/v1/analytics/usage", key, nil)
	if use.str("documentsGenerated") != "3" || use.str("quota") != "10000" || use.str("period") != time.Now().UTC().Format("2006-01") || use.get("creditsUsed") == nil || use.get("creditsRemaining") == nil {
		t.Fatalf("usage = %s", use.raw)
	}
}

// createKey2 makes another key (the scale plan used in tests allows several).
func (s *testServer) createKey2(token string, perms map[string]bool) string {
	return s.createKey(token, perms)
}

// downloadAuth GETs a path with a bearer token and returns the raw body.
func (s *testServer) downloadAuth(token, path string) (int, http.Header, []byte) {
	s.t.Helper()
	r := s.do("GET", path, token, nil)
	return r.status, r.header, r.raw
}

func TestRetentionJanitor(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	m := &Main{Now: clock}
	s := startMain(t, m, func(c *Config) { c.DefaultPlan = "free"; c.InlineMax = -1 }) // documents as files (TestInlineDocument: in the database)
	u := s.signup("Keeper")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf",
		"variables": map[string]any{"number": "1", "customer": "c"}})
	long := s.createTemplate(u.token, "Long", longTemplate())
	failed := s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": long.str("id"), "format": "pdf", "variables": map[string]any{"body": longText}})
	s.wantError(failed, 400, "ERR_LIMIT_001")
	failedID := failed.str("relatedInfo.jobId")
	files, _ := filepath.Glob(filepath.Join(s.Config.Data, "files", "*", g.str("jobId")+".pdf"))
	if len(files) != 1 {
		t.Fatal("no file")
	}
	docs := s.Server.Documents

	// Free plan: the file and its link last one day.
	advance(23 * time.Hour)
	if err := docs.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(files[0]); err != nil {
		t.Fatal("file removed before its retention")
	}
	advance(2 * time.Hour)
	if err := docs.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(files[0]); !os.IsNotExist(err) {
		t.Fatal("file outlived its retention")
	}
	j := s.must(200, "GET", "/api/v1/documents/jobs/"+g.str("jobId"), key, nil)
	if j.str("status") != "completed" || j.get("downloadUrl") != nil {
		t.Fatalf("expired job still offers a link: %s", j.raw)
	}
	s.wantError(s.do("GET", g.str("downloadUrl"), "", nil), 403, "ERR_JOB_003")

	// Completed records go after 7 days; failed ones stay for 30.
	advance(6 * 24 * time.Hour)
	if err := docs.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.wantError(s.do("GET", "/api/v1/documents/jobs/"+g.str("jobId"), key, nil), 404, "ERR_JOB_001")
	if j := s.must(200, "GET", "/api/v1/documents/jobs/"+failedID, key, nil); j.str("status") != "failed" {
		t.Fatalf("failed job on day 8 = %s", j.raw)
	}
	advance(22 * 24 * time.Hour) // day 29
	if err := docs.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.must(200, "GET", "/api/v1/documents/jobs/"+failedID, key, nil)
	advance(24 * time.Hour) // day 30 and an hour
	if err := docs.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.wantError(s.do("GET", "/api/v1/documents/jobs/"+failedID, key, nil), 404, "ERR_JOB_001")
}

// TestJobFiltersMixedStatusesAndDates lists and exports jobs of every status,
// some created ten days earlier (injected clock): each filter keeps exactly
// the jobs it names.
func TestJobFiltersMixedStatusesAndDates(t *testing.T) {
	var mu sync.Mutex
	today := time.Now().UTC()
	now := today.AddDate(0, 0, -10)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := startMain(t, &Main{Now: clock}, func(c *Config) { c.Workers = 1 })
	u := s.signup("Filterer")
	key := s.createKey(u.token, nil)
	inv := s.createTemplate(u.token, "Invoice", invoiceTemplate).str("id")
	long := s.createTemplate(u.token, "Long", longTemplate()).str("id")
	gen := func(body map[string]any) string {
		t.Helper()
		r := s.do("POST", "/api/v1/documents/generate", key, body)
		if r.status == 200 {
			return r.str("jobId")
		}
		return r.str("relatedInfo.jobId")
	}

	old := gen(invoiceBody(inv, "Old"))
	mu.Lock()
	now = today
	mu.Unlock()
	c1, c2 := gen(invoiceBody(inv, "One")), gen(invoiceBody(inv, "Two"))
	failed := gen(map[string]any{"templateId": long, "format": "pdf", "variables": map[string]any{"body": longText}})
	g := newGate(t, s)
	running := s.must(200, "POST", "/api/v1/documents/generate?async=true", key, invoiceBody(inv, "Running")).str("jobId")
	if held := g.Held(); held != running {
		t.Fatalf("held %s, want %s", held, running)
	}
	pending := s.must(200, "POST", "/api/v1/documents/generate?async=true", key, invoiceBody(inv, "Pending")).str("jobId")

	ids := func(rows []any) string {
		var out []string
		for _, r := range rows {
			out = append(out, r.(map[string]any)["jobId"].(string))
		}
		return strings.Join(out, ",")
	}
	join := func(s ...string) string { return strings.Join(s, ",") }
	// The list is newest first.
	for _, c := range []struct{ query, want string }{
		{"", join(pending, running, failed, c2, c1, old)},
		{"status=completed", join(c2, c1, old)},
		{"status=failed", failed},
		{"status=processing", running},
		{"status=pending", pending},
		{"status=completed&templateId=" + long, ""},
		{"status=failed&templateId=" + long, failed},
	} {
		l := s.must(200, "GET", "/api/v1/documents/jobs?"+c.query, key, nil)
		if got := ids(l.get("data").([]any)); got != c.want || l.str("meta.total") != fmt.Sprint(len(l.get("data").([]any))) {
			t.Fatalf("jobs?%s = %s (total %s), want %s", c.query, got, l.str("meta.total"), c.want)
		}
	}
	s.wantError(s.do("GET", "/api/v1/documents/jobs?status=done", key, nil), 400, "ERR_VALID_003")

	// The export is oldest first; endDate as a date includes that day.
	day := func(t time.Time) string { return t.Format("2006-01-02") }
	oldDay := day(today.AddDate(0, 0, -10))
	for _, c := range []struct{ query, want string }{
		{"", join(old, c1, c2, failed, running, pending)},
		{"status=completed", join(old, c1, c2)},
		{"status=failed", failed},
		{"status=pending", pending},
		{"startDate=" + day(today), join(c1, c2, failed, running, pending)},
		{"endDate=" + oldDay, old},
		{"startDate=" + oldDay + "&endDate=" + oldDay, old},
		{"startDate=" + day(today.AddDate(0, 0, -9)) + "&endDate=" + day(today.AddDate(0, 0, -1)), ""},
		{"status=completed&startDate=" + day(today), join(c1, c2)},
		{"status=failed&endDate=" + oldDay, ""},
	} {
		st, _, body := s.downloadAuth(key, "/api/v1/documents/jobs/export?format=json&"+c.query)
		var rows []any
		if st != 200 || json.Unmarshal(body, &rows) != nil {
			t.Fatalf("export %s: %d %s", c.query, st, body)
		}
		if got := ids(rows); got != c.want {
			t.Fatalf("export?%s = %s, want %s", c.query, got, c.want)
		}
	}
	st, _, body := s.downloadAuth(key, "/api/v1/documents/jobs/export?status=failed")
	rows, err := csv.NewReader(strings.NewReader(string(body))).ReadAll()
	if st != 200 || err != nil || len(rows) != 2 || rows[1][0] != failed || rows[1][1] != "failed" || rows[1][7] != "ERR_LIMIT_001" {
		t.Fatalf("csv export of failed jobs: %d %v %v", st, rows, err)
	}
	// An unknown status is refused as in the job list, not answered empty.
	for _, f := range []string{"csv", "json"} {
		s.wantError(s.do("GET", "/api/v1/documents/jobs/export?format="+f+"&status=bogus", key, nil), 400, "ERR_VALID_003")
	}
}
