package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"folio/app"
)

// scheduled returns the webhook schedule entries of a running server.
func (s *testServer) scheduled() []*app.ScheduleEntry {
	s.t.Helper()
	entries, err := s.Bolt.ScheduledAttempts(context.Background())
	if err != nil {
		s.t.Fatal(err)
	}
	return entries
}

// waitUntil polls cond until it holds.
func waitUntil(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// delivery returns a subscription's newest delivery.
func (s *testServer) delivery(key, subID string) map[string]any {
	s.t.Helper()
	dels := s.must(200, "GET", "/api/v1/webhook-subscriptions/"+subID+"/deliveries", key, nil).get("deliveries").([]any)
	if len(dels) == 0 {
		return nil
	}
	return dels[0].(map[string]any)
}

func batchOf(tplID string, n int, prefix string) map[string]any {
	docs := make([]any, n)
	for i := range docs {
		docs[i] = map[string]any{"variables": map[string]any{"number": fmt.Sprintf("%s-%d", prefix, i), "customer": "c"}}
	}
	return map[string]any{"templateId": tplID, "format": "pdf", "documents": docs}
}

// TestWebhookRateLimitEndToEnd sends 150 events to one subscription as fast
// as the documents are made. Every event arrives exactly once and no second
// at the receiver holds more than 100 of them.
func TestWebhookRateLimitEndToEnd(t *testing.T) {
	rcv := startReceiver(t, false)
	rcv.hold = make(chan struct{}) // the first requests wait until all 150 events exist
	// Many attempts in flight, so that only the rate limit keeps the
	// receiver under 100 a second.
	setDelivererHook(t, func(d *app.Deliverer) { d.PerSubscription, d.Timeout = 20, 5*time.Minute })
	s := webhookServer(t, rcv, "0s,1m")
	u := s.verifiedUser("Flood")
	key := s.createKey(u.token, nil)
	sub := s.must(200, "POST", "/api/v1/webhook-subscriptions", key, map[string]any{"url": rcv.url, "events": []string{"document.generated"}})
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	for _, prefix := range []string{"A", "B"} {
		s.must(200, "POST", "/api/v1/documents/generate/batch", key, batchOf(tpl.str("id"), 75, prefix))
	}
	waitUntil(t, 3*time.Minute, "150 deliveries are scheduled", func() bool { return len(s.scheduled()) == 150 })
	rcv.release()
	waitUntil(t, time.Minute, "every delivery ended", func() bool { return len(s.scheduled()) == 0 })

	got := rcv.requests()
	ids := map[string]int{}
	var at []time.Time
	for _, r := range got {
		ids[r.header.Get("X-Service-Event-Id")]++
		at = append(at, r.at)
	}
	if len(got) != 150 || len(ids) != 150 {
		t.Fatalf("%d requests for %d distinct events; want 150 events once each", len(got), len(ids))
	}
	verify(t, sub.str("secret"), got[len(got)-1])
	sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
	for i := 0; i+100 < len(at); i++ {
		if d := at[i+100].Sub(at[i]); d < time.Second {
			t.Fatalf("requests %d to %d arrived within %v: 101 in one second", i, i+100, d)
		}
	}
}

// TestWebhookSlowReceiverDoesNotDelayGeneration: while one subscription's
// receiver hangs with deliveries in flight, documents are still generated
// and completed, and another subscription still gets its events, because a
// subscription holds at most PerSubscription of the delivery workers.
func TestWebhookSlowReceiverDoesNotDelayGeneration(t *testing.T) {
	slow := startReceiver(t, false)
	slow.hold = make(chan struct{})
	fast := slow.sibling()
	setDelivererHook(t, func(d *app.Deliverer) { d.Workers, d.PerSubscription, d.Timeout = 3, 2, 5*time.Minute })
	s := webhookServer(t, slow, "0s,1m")
	u := s.verifiedUser("Patient")
	key := s.createKey(u.token, nil)
	for _, r := range []*receiver{slow, fast} {
		s.must(200, "POST", "/api/v1/webhook-subscriptions", key, map[string]any{"url": r.url, "events": []string{"document.generated"}})
	}
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	generate := func(n int) string {
		return s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf",
			"variables": map[string]any{"number": fmt.Sprint(n), "customer": "c"}}).str("jobId")
	}
	s.waitJob(key, generate(0))
	slow.waitFor(1, 30*time.Second) // now hanging

	var jobs []string
	for i := 1; i <= 5; i++ {
		jobs = append(jobs, generate(i))
	}
	for _, id := range jobs {
		s.waitJob(key, id)
	}
	fast.waitFor(6, 30*time.Second)
	if n := slow.holding(); n != 2 || len(slow.requests()) != 2 {
		t.Fatalf("the slow receiver holds %d of %d requests; want exactly PerSubscription (2) while it hangs", n, len(slow.requests()))
	}
	slow.release()
	slow.waitFor(6, 30*time.Second)
}

// TestWebhookDisableCancelsPendingRetry: disabling a subscription whose
// delivery waits for a retry cancels that retry at once: the delivery is
// failed with an error saying so, nothing stays scheduled, and it can be
// retried by hand once the subscription is enabled again.
func TestWebhookDisableCancelsPendingRetry(t *testing.T) {
	rcv := startReceiver(t, false)
	rcv.failFirst = 1
	s := webhookServer(t, rcv, "0s,1h")
	u := s.verifiedUser("Toggler")
	key := s.createKey(u.token, nil)
	sub := s.must(200, "POST", "/api/v1/webhook-subscriptions", key, map[string]any{"url": rcv.url, "events": []string{"document.generated"}})
	base := "/api/v1/webhook-subscriptions/" + sub.str("id")
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": map[string]any{"number": "1", "customer": "c"}})
	rcv.waitFor(1, 30*time.Second)
	var d map[string]any
	waitUntil(t, 10*time.Second, "the retry is pending", func() bool {
		d = s.delivery(key, sub.str("id"))
		return d != nil && d["status"] == "pending" && d["attempts"] == 1.0 && d["nextRetryAt"] != nil
	})
	waitUntil(t, 10*time.Second, "attempt 2 is scheduled", func() bool {
		e := s.scheduled()
		return len(e) == 1 && e[0].DeliveryID == d["id"] && e[0].Attempt == 2 && e[0].Due.Equal(timeField(t, resp{body: d}, "nextRetryAt"))
	})

	s.must(200, "PATCH", base, key, map[string]any{"enabled": false})
	d = s.delivery(key, sub.str("id"))
	if d["status"] != "failed" || d["nextRetryAt"] != nil || d["attempts"] != 1.0 || !strings.Contains(d["error"].(string), "disabled") {
		t.Fatalf("after disabling: %v", d)
	}
	if e := s.scheduled(); len(e) != 0 {
		t.Fatalf("a cancelled retry is still scheduled: %+v", e)
	}

	// Enabling again does not revive it; a manual retry sends it.
	s.must(200, "PATCH", base, key, map[string]any{"enabled": true})
	if d2 := s.delivery(key, sub.str("id")); d2["status"] != "failed" {
		t.Fatalf("after enabling: %v", d2)
	}
	s.must(200, "POST", base+"/deliveries/"+d["id"].(string)+"/retry", key, nil)
	got := rcv.waitFor(2, 10*time.Second)
	waitUntil(t, 10*time.Second, "the manual retry succeeded", func() bool { return s.delivery(key, sub.str("id"))["status"] == "success" })
	if len(rcv.requests()) != 2 || got[0].header.Get("X-Service-Event-Id") != got[1].header.Get("X-Service-Event-Id") {
		t.Fatalf("requests: %d", len(rcv.requests()))
	}
}

type flakyWebhookStore struct {
	app.WebhookStore
	dispatchFailures atomic.Int32 // calls left to fail
}

func (f *flakyWebhookStore) DispatchEvent(ctx context.Context, e *app.Event, maxAttempts int, now time.Time) ([]*app.Delivery, error) {
	if f.dispatchFailures.Add(-1) >= 0 {
		return nil, errors.New("injected: database is locked")
	}
	return f.WebhookStore.DispatchEvent(ctx, e, maxAttempts, now)
}

type flakySchedule struct {
	app.WebhookSchedule
	scheduleFailures atomic.Int32
}

func (f *flakySchedule) ScheduleAttempts(ctx context.Context, entries ...*app.ScheduleEntry) error {
	if f.scheduleFailures.Add(-1) >= 0 {
		return errors.New("injected: bbolt write failed")
	}
	return f.WebhookSchedule.ScheduleAttempts(ctx, entries...)
}

// TestWebhookSweepRecoversFromErrors: an event whose dispatch fails, and
// then a delivery whose scheduling fails, are picked up by the running
// server's sweep (no restart) and delivered once.
func TestWebhookSweepRecoversFromErrors(t *testing.T) {
	rcv := startReceiver(t, false)
	var store *flakyWebhookStore
	var sched *flakySchedule
	setDelivererHook(t, func(d *app.Deliverer) {
		store = &flakyWebhookStore{WebhookStore: d.Store}
		store.dispatchFailures.Store(2)
		sched = &flakySchedule{WebhookSchedule: d.Queue}
		sched.scheduleFailures.Store(1)
		d.Store, d.Queue, d.Sweep = store, sched, 50*time.Millisecond
	})
	s := webhookServer(t, rcv, "0s,1h")
	u := s.verifiedUser("Resilient")
	key := s.createKey(u.token, nil)
	sub := s.must(200, "POST", "/api/v1/webhook-subscriptions", key, map[string]any{"url": rcv.url, "events": []string{"document.generated"}})
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": map[string]any{"number": "1", "customer": "c"}})

	got := rcv.waitFor(1, 30*time.Second)
	verify(t, sub.str("secret"), got[0])
	waitUntil(t, 10*time.Second, "the delivery succeeded and nothing is scheduled", func() bool {
		d := s.delivery(key, sub.str("id"))
		return d != nil && d["status"] == "success" && len(s.scheduled()) == 0
	})
	if store.dispatchFailures.Load() >= 0 || sched.scheduleFailures.Load() >= 0 {
		t.Fatalf("the injected failures did not all happen (%d, %d left)", store.dispatchFailures.Load(), sched.scheduleFailures.Load())
	}
	if n := len(rcv.requests()); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
	if d := s.delivery(key, sub.str("id")); d["attempts"] != 1.0 {
		t.Fatalf("delivery = %v", d)
	}
}

// TestWebhookHistoryRetention: a team without a subscription for an event
// stores no event for it; dispatched events keep no payload; the janitor
// removes events and ended deliveries older than 30 days.
func TestWebhookHistoryRetention(t *testing.T) {
	rcv := startReceiver(t, false)
	s := webhookServer(t, rcv, "0s")
	db, err := sql.Open("sqlite", "file:"+filepath.Join(s.Config.Data, "folio.db")+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	events := func(team string) (n int, payload int) {
		t.Helper()
		if err := db.QueryRow(`SELECT COUNT(*), COALESCE(SUM(LENGTH(payload)), 0) FROM events WHERE team_id = ?`, team).Scan(&n, &payload); err != nil {
			t.Fatal(err)
		}
		return n, payload
	}
	teamOf := func(token string) string {
		return s.must(200, "GET", "/api/teams", token, nil).get("data").([]any)[0].(map[string]any)["id"].(string)
	}

	quiet := s.verifiedUser("Quiet") // no subscription at all
	qkey := s.createKey(quiet.token, nil)
	qtpl := s.createTemplate(quiet.token, "Invoice", invoiceTemplate)
	s.waitJob(qkey, s.must(200, "POST", "/api/v1/documents/generate", qkey, map[string]any{"templateId": qtpl.str("id"), "format": "pdf",
		"variables": map[string]any{"number": "1", "customer": "c"}}).str("jobId"))

	u := s.verifiedUser("Kept")
	key := s.createKey(u.token, nil)
	sub := s.must(200, "POST", "/api/v1/webhook-subscriptions", key, map[string]any{"url": rcv.url, "events": []string{"document.generated"}})
	tpl := s.createTemplate(u.token, "Invoice", invoiceTemplate)
	s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": map[string]any{"number": "2", "customer": "c"}})
	rcv.waitFor(1, 30*time.Second)
	waitUntil(t, 10*time.Second, "the delivery succeeded", func() bool { d := s.delivery(key, sub.str("id")); return d != nil && d["status"] == "success" })

	if n, _ := events(teamOf(quiet.token)); n != 0 {
		t.Fatalf("a team without subscriptions stored %d events", n)
	}
	if n, payload := events(teamOf(u.token)); n != 1 || payload != 0 {
		t.Fatalf("subscribed team: %d events holding %d payload bytes; want 1 dispatched event without its payload", n, payload)
	}

	sweepAt := func(at time.Time) {
		t.Helper()
		ws := *s.Server.Webhooks
		ws.Now = func() time.Time { return at }
		if err := ws.Sweep(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	sweepAt(time.Now().Add(app.WebhookRetention - time.Hour))
	if d := s.delivery(key, sub.str("id")); d == nil {
		t.Fatal("a delivery younger than 30 days was removed")
	}
	sweepAt(time.Now().Add(app.WebhookRetention + time.Hour))
	if d := s.delivery(key, sub.str("id")); d != nil {
		t.Fatalf("a delivery older than 30 days is still listed: %v", d)
	}
	if n, _ := events(teamOf(u.token)); n != 0 {
		t.Fatalf("%d events older than 30 days remain", n)
	}
}
