package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"folio/internal/pgtest"
	"folio/web/client"
)

// TestCluster runs three replicas once and breaks them in turn: the cases
// share the cluster (its start is most of the cost) and run in an order
// where each leaves it whole for the next; the database outage is last.
func TestCluster(t *testing.T) {
	c := startCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	for _, tc := range []struct {
		name string
		run  func(*testing.T, context.Context, *cluster)
	}{
		{"SharedAccountsLimitsAndQuotas", sharedAccountsLimitsAndQuotas},
		{"ReplicaKilledMidBatch", replicaKilledMidBatch},
		{"ObjectStoreOutage", objectStoreOutage},
		{"DatabaseRestartMidLoad", databaseRestartMidLoad},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := c.t
			c.t = t
			defer func() { c.t = parent }()
			tc.run(t, ctx, c)
		})
	}
}

// sharedAccountsLimitsAndQuotas: one signup, verification and login work
// across replicas (signup proves it); the login throttle, the API rate
// limit and the monthly quota are the team's, not each replica's.
func sharedAccountsLimitsAndQuotas(t *testing.T, ctx context.Context, c *cluster) {
	a := c.signup(ctx, "limits")

	// The login throttle: 10 failures per email per window, wherever
	// they are tried.
	var refused, failed int
	for i := range 15 {
		_, err := c.api(c.replicas[i%3], "").Login(ctx, a.email, "wrong password")
		var ae *client.Error
		switch {
		case errors.As(err, &ae) && ae.StatusCode == 429:
			refused++
		case errors.As(err, &ae) && ae.StatusCode == 401:
			failed++
		default:
			t.Fatalf("login %d: %v", i, err)
		}
	}
	if failed > 10 || refused == 0 {
		t.Errorf("15 wrong logins over 3 replicas: %d checked, %d throttled; want at most 10 checked (the limit per email is the cluster's)", failed, refused)
	}

	// The API rate limit of the read class (readLimit per window per
	// team, for a dashboard login), spread over three replicas at once.
	var ok, limited, other atomic.Int64
	var wg sync.WaitGroup
	for i := range 3 * readLimit {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := c.api(c.replicas[i%3], a.jwt).Do(ctx, "GET", "/api/v1/documents/jobs", nil, nil)
			var ae *client.Error
			switch {
			case err == nil:
				ok.Add(1)
			case errors.As(err, &ae) && ae.StatusCode == 429 && ae.Code == "ERR_QUOTA_003":
				limited.Add(1)
			default:
				other.Add(1)
				t.Errorf("read: %v", err)
			}
		}()
	}
	wg.Wait()
	t.Logf("%d reads over 3 replicas: %d answered, %d limited (limit %d)", 3*readLimit, ok.Load(), limited.Load(), readLimit)
	if ok.Load() > readLimit || limited.Load() == 0 {
		t.Errorf("%d reads answered over 3 replicas, limit %d per team: the replicas do not share the limit", ok.Load(), readLimit)
	}

	// The monthly quota: the free plan's 50 documents, asked for as 8
	// batches of 10 at once on three replicas.
	b := c.signup(ctx, "quota")
	tpl, vars := c.invoice(ctx, b)
	if _, err := c.db(ctx).Exec(ctx, `UPDATE teams SET plan = 'free' WHERE id = $1`, b.teamID); err != nil {
		t.Fatal(err)
	}
	var accepted, over atomic.Int64
	var batches sync.Map
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			docs := make([]any, 10)
			for k := range docs {
				docs[k] = vars
			}
			bt, err := c.api(c.replicas[i%3], b.key).GenerateBatch(ctx, tpl, "pdf", docs)
			var ae *client.Error
			switch {
			case err == nil:
				accepted.Add(1)
				batches.Store(bt.BatchID, true)
			case errors.As(err, &ae) && ae.Code == "ERR_QUOTA_008":
				over.Add(1)
			default:
				t.Errorf("batch: %v", err)
			}
		}()
	}
	wg.Wait()
	if accepted.Load() != 5 || over.Load() != 3 {
		t.Errorf("8 batches of 10 on the free plan (50 a month) over 3 replicas: %d accepted, %d over quota; want 5 and 3", accepted.Load(), over.Load())
	}
	eventually(t, 60*time.Second, "the accepted batches complete", func() (bool, string) {
		var u struct {
			DocumentsGenerated int64 `json:"documentsGenerated"`
			Quota              int64 `json:"quota"`
		}
		if err := c.api(c.replicas[1], b.key).Do(ctx, "GET", "/api/v1/analytics/usage", nil, &u); err != nil {
			return false, err.Error()
		}
		return u.DocumentsGenerated == 10*accepted.Load(), fmt.Sprintf("usage %+v", u)
	})
}

// replicaKilledMidBatch: 300 documents in three batches of 100 (the
// largest batch a plan allows) with a webhook subscription; once every
// replica holds leased jobs, the one the batches were sent to is killed
// with SIGKILL. Every document completes exactly once, every webhook
// arrives, signed; the batches complete; its client goes on on another.
func replicaKilledMidBatch(t *testing.T, ctx context.Context, c *cluster) {
	a := c.signup(ctx, "kill")
	r0 := c.replicas[0]
	api := c.api(r0, a.key)
	tpl, vars := c.invoice(ctx, a)
	var sub struct {
		Secret string `json:"secret"`
	}
	if err := c.api(c.replicas[1], a.key).Do(ctx, "POST", "/api/v1/webhook-subscriptions", map[string]any{"url": c.hooks.url,
		"events": []string{"document.generated", "batch.completed"}}, &sub); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	c.hooks.setSecret(sub.Secret)
	var ids []string
	for b := range 3 {
		docs := make([]any, 100)
		for i := range docs {
			docs[i] = bigVars(vars, 8, fmt.Sprintf("K%d-%03d", b, i))
		}
		bt, err := api.GenerateBatch(ctx, tpl, "pdf", docs)
		if err != nil {
			t.Fatalf("batch %d: %v", b, err)
		}
		ids = append(ids, bt.BatchID)
	}
	// Kill replica 0 once every replica holds a leased job and some
	// documents are done: it dies holding work.
	db := c.db(ctx)
	eventually(t, 60*time.Second, "all three replicas hold jobs", func() (bool, string) {
		var owners, leased int
		if err := db.QueryRow(ctx, `SELECT count(DISTINCT lease_owner), count(*) FROM queue_entries WHERE lease_until IS NOT NULL`).Scan(&owners, &leased); err != nil {
			return false, err.Error()
		}
		var done int
		for _, id := range ids {
			var bt client.Batch
			if api.Do(ctx, "GET", "/api/v1/documents/batches/"+id, nil, &bt) == nil {
				done += bt.CompletedDocuments
			}
		}
		return owners == 3 && done >= 20, fmt.Sprintf("%d lease owners, %d leased entries, %d documents done", owners, leased, done)
	})
	var leased int
	db.QueryRow(ctx, `SELECT count(*) FROM queue_entries WHERE lease_until IS NOT NULL`).Scan(&leased)
	c.kill(r0)
	defer func() {
		if r0.cmd == nil { // a failure below: the next cases need it
			c.start(r0)
			c.waitReady(r0)
		}
	}()
	t.Logf("replica 0 killed with %d jobs leased in the cluster", leased)

	// Replica 0's client keeps asking; its requests go to the others.
	fo := &failover{c: c, token: a.key, first: 0}
	eventually(t, 90*time.Second, "the three batches complete", func() (bool, string) {
		var st []string
		all := true
		for _, id := range ids {
			var bt client.Batch
			if err := fo.do(ctx, "GET", "/api/v1/documents/batches/"+id, nil, &bt); err != nil {
				return false, err.Error()
			}
			st = append(st, fmt.Sprintf("%s %d/%d failed %d", bt.Status, bt.CompletedDocuments, bt.TotalDocuments, bt.FailedDocuments))
			all = all && bt.Status == "completed" && bt.CompletedDocuments == 100
		}
		return all, strings.Join(st, "; ")
	})
	if fo.retried == 0 {
		t.Errorf("the killed replica's client never went to another replica")
	}
	// Every document exactly once: 300 completed jobs, 300 documents
	// counted, 300 files, one document.generated event per job.
	jobs := map[string]bool{}
	for _, id := range ids {
		var bt client.Batch
		if err := fo.do(ctx, "GET", "/api/v1/documents/batches/"+id, nil, &bt); err != nil {
			t.Fatal(err)
		}
		for _, d := range bt.Documents {
			if d.Status != "completed" {
				t.Errorf("job %s: %s %s", d.JobID, d.Status, d.Error)
			}
			jobs[d.JobID] = true
		}
	}
	if len(jobs) != 300 {
		t.Errorf("%d distinct jobs in the batches, want 300", len(jobs))
	}
	var u struct {
		DocumentsGenerated int64 `json:"documentsGenerated"`
	}
	if err := fo.do(ctx, "GET", "/api/v1/analytics/usage", nil, &u); err != nil || u.DocumentsGenerated != 300 {
		t.Errorf("usage: %d documents generated (%v), want 300: a document counted twice or lost", u.DocumentsGenerated, err)
	}
	if n := c.objects(a.teamID); n != 300 {
		t.Errorf("%d of the team's objects in the bucket, want 300 (one file per document)", n)
	}
	eventually(t, 60*time.Second, "every webhook delivered", func() (bool, string) {
		n, twice, deliveries, bad := c.hooks.counts()
		done := 0
		for _, id := range ids {
			if c.hooks.batchDone(id) > 0 {
				done++
			}
		}
		return n == 300 && done == 3, fmt.Sprintf("%d jobs with document.generated (%d with two events), %d deliveries, %d bad signatures, %d batch.completed",
			n, twice, deliveries, bad, done)
	})
	if n, twice, deliveries, bad := c.hooks.counts(); twice != 0 || bad != 0 {
		t.Errorf("%d jobs, %d with two distinct document.generated events, %d deliveries, %d with a bad signature", n, twice, deliveries, bad)
	} else {
		t.Logf("webhooks: %d jobs, %d deliveries (a redelivery repeats its event id)", n, deliveries)
	}
	// A few documents, downloaded whole from the replicas still up.
	k := 0
	for id := range jobs {
		if k++; k > 4 {
			break
		}
		var j client.Job
		if err := fo.do(ctx, "GET", "/api/v1/documents/jobs/"+id, nil, &j); err != nil {
			t.Fatal(err)
		}
		checkPDF(t, c, j.DownloadURL, c.replicas[1+k%2])
	}
	// The killed replica comes back and serves again.
	c.start(r0)
	c.waitReady(r0)
	if err := c.api(r0, a.key).Do(ctx, "GET", "/api/v1/documents/batches/"+ids[0], nil, nil); err != nil {
		t.Errorf("replica 0 after its restart: %v", err)
	}
}

// checkPDF downloads a document link through replica r (any replica
// serves any link) and checks it is a whole PDF.
func checkPDF(t *testing.T, c *cluster, link string, r *replica) {
	t.Helper()
	link = r.url + link[strings.Index(link, "/api/"):]
	res, err := c.httpClient().Get(link)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != 200 || !strings.HasPrefix(string(b), "%PDF-") || !strings.Contains(string(b[max(0, len(b)-32):]), "%%EOF") {
		t.Errorf("download %s: %d, %d bytes (%v), want a whole PDF", link, res.StatusCode, len(b), err)
	}
	if res.ContentLength >= 0 && res.ContentLength != int64(len(b)) {
		t.Errorf("download %s: Content-Length %d, %d bytes read", link, res.ContentLength, len(b))
	}
}

// objectStoreOutage: with the S3 server down, downloads of stored files
// answer 503 with the error envelope (never part of a file) and jobs wait
// instead of failing; once it is back, they complete and download whole.
func objectStoreOutage(t *testing.T, ctx context.Context, c *cluster) {
	a := c.signup(ctx, "s3")
	api := c.api(c.replicas[1], a.key)
	tpl, vars := c.invoice(ctx, a)
	j, err := api.Generate(ctx, tpl, "pdf", bigVars(vars, 8, "S3-before"), false)
	if err != nil || j.Status != "completed" {
		t.Fatalf("generate: %v %+v", err, j)
	}
	checkPDF(t, c, j.DownloadURL, c.replicas[2])

	c.s3.Stop()
	stopped := true
	defer func() {
		if stopped {
			c.s3.Restart()
		}
	}()
	for _, r := range c.replicas {
		link := r.url + j.DownloadURL[strings.Index(j.DownloadURL, "/api/"):]
		res, err := c.httpClient().Get(link)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 503 || !strings.Contains(res.Header.Get("Content-Type"), "application/json") ||
			!strings.Contains(string(b), `"code":"ERR_STORAGE_001"`) || !strings.Contains(string(b), `"statusCode":503`) || res.Header.Get("Retry-After") == "" {
			t.Errorf("download on replica %d with S3 down: %d %q %q, want 503 ERR_STORAGE_001 with Retry-After", r.i, res.StatusCode, res.Header.Get("Content-Type"), b[:min(len(b), 300)])
		}
	}
	var jobs []string
	for i := range 12 {
		j, err := c.api(c.replicas[i%3], a.key).Generate(ctx, tpl, "pdf", bigVars(vars, 8, fmt.Sprintf("S3-%d", i)), true)
		if err != nil {
			t.Fatalf("async generate with S3 down: %v", err)
		}
		jobs = append(jobs, j.JobID)
	}
	time.Sleep(2 * time.Second) // the workers meet the outage
	for _, id := range jobs {
		var j client.Job
		if err := api.Do(ctx, "GET", "/api/v1/documents/jobs/"+id, nil, &j); err != nil {
			t.Fatal(err)
		}
		if j.Status == "failed" || j.Status == "completed" {
			t.Errorf("job %s with S3 down: %s %s; want it waiting", id, j.Status, j.Error)
		}
	}
	if err := c.s3.Restart(); err != nil {
		t.Fatal(err)
	}
	stopped = false
	eventually(t, 60*time.Second, "the jobs complete once S3 is back", func() (bool, string) {
		var st []string
		for _, id := range jobs {
			var j client.Job
			if err := api.Do(ctx, "GET", "/api/v1/documents/jobs/"+id, nil, &j); err != nil {
				return false, err.Error()
			}
			if j.Status != "completed" {
				st = append(st, j.Status+" "+j.Error)
			}
		}
		return len(st) == 0, strings.Join(st, "; ")
	})
	for i, id := range jobs {
		var j client.Job
		api.Do(ctx, "GET", "/api/v1/documents/jobs/"+id, nil, &j)
		checkPDF(t, c, j.DownloadURL, c.replicas[i%3])
	}
}

// databaseRestartMidLoad: PostgreSQL stops (crash-like) under a load of
// synchronous and queued documents. While it is down, requests answer 503
// with the error envelope; nothing accepted is lost; when it is back the
// replicas serve again without being restarted.
func databaseRestartMidLoad(t *testing.T, ctx context.Context, c *cluster) {
	a := c.signup(ctx, "pg")
	api := c.api(c.replicas[0], a.key)
	tpl, vars := c.invoice(ctx, a)
	pg, err := pgtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		accepted []string        // job ids answered 2xx
		statuses = map[int]int{} // status -> count, while down
		bad      []string
		down     atomic.Bool
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				r := c.replicas[(w+i)%3]
				rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
				j, err := c.api(r, a.key).Generate(rctx, tpl, "pdf", vars, w%2 == 0)
				cancel()
				var ae *client.Error
				mu.Lock()
				switch {
				case err == nil:
					accepted = append(accepted, j.JobID)
				case errors.As(err, &ae):
					if down.Load() {
						statuses[ae.StatusCode]++
					}
					if ae.StatusCode != 503 || ae.Code != "ERR_STORAGE_002" || ae.Path == "" || ae.Message == "" {
						bad = append(bad, fmt.Sprintf("replica %d: %d %s %s (down %v)", r.i, ae.StatusCode, ae.Code, ae.Message, down.Load()))
					}
				default:
					bad = append(bad, fmt.Sprintf("replica %d: %v", r.i, err))
				}
				mu.Unlock()
				if err != nil {
					time.Sleep(50 * time.Millisecond)
				}
			}
		}()
	}
	time.Sleep(2 * time.Second)
	pg.Kill()
	down.Store(true)
	time.Sleep(3 * time.Second)
	// A read while down: 503 too, on every replica.
	for _, r := range c.replicas {
		err := c.api(r, a.key).Do(ctx, "GET", "/api/v1/documents/jobs", nil, nil)
		var ae *client.Error
		if !errors.As(err, &ae) || ae.StatusCode != 503 || ae.Code != "ERR_STORAGE_002" {
			t.Errorf("list jobs on replica %d with PostgreSQL down: %v, want 503 ERR_STORAGE_002", r.i, err)
		}
	}
	if err := pg.Restart(); err != nil {
		t.Fatal(err)
	}
	down.Store(false)
	time.Sleep(3 * time.Second)
	close(stop)
	wg.Wait()
	t.Logf("while down: statuses %v; %d documents accepted in all", statuses, len(accepted))
	if statuses[503] == 0 {
		t.Errorf("no request answered 503 while PostgreSQL was down: %v", statuses)
	}
	for _, b := range bad {
		t.Errorf("not a 503 envelope: %s", b)
	}
	// Service resumes: every replica ready and generating.
	for _, r := range c.replicas {
		eventually(t, 30*time.Second, fmt.Sprintf("replica %d serves again", r.i), func() (bool, string) {
			res, err := c.httpClient().Get(r.url + "/readyz")
			if err != nil {
				return false, err.Error()
			}
			res.Body.Close()
			if res.StatusCode != 200 {
				return false, res.Status
			}
			j, err := c.api(r, a.key).Generate(ctx, tpl, "pdf", vars, false)
			if err != nil {
				return false, err.Error()
			}
			return j.Status == "completed", j.Status
		})
	}
	// Nothing accepted is lost: every job answered 2xx completes.
	eventually(t, 60*time.Second, "every accepted job completes", func() (bool, string) {
		var left []string
		for _, id := range accepted {
			var j client.Job
			if err := api.Do(ctx, "GET", "/api/v1/documents/jobs/"+id, nil, &j); err != nil {
				return false, id + ": " + err.Error()
			}
			if j.Status != "completed" {
				left = append(left, id+" "+j.Status+" "+j.Error)
			}
		}
		return len(left) == 0, fmt.Sprintf("%d of %d not completed: %v", len(left), len(accepted), left[:min(len(left), 5)])
	})

}
