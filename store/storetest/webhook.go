package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"folio/app"
)

// HookStore is what the webhook and signing certificate cases need.
type HookStore interface {
	Store
	app.WebhookStore
	app.SigningCertificateStore
	DeliveryCounts(ctx context.Context, teamID string, since time.Time) (succeeded, failed int, err error)
}

// Outbox stores events as the end of a job does (only those an enabled
// subscription of their team asks for); no interface method writes
// events, so each backend's test passes its own.
type Outbox func(ctx context.Context, events ...*app.Event) error

// HookCase is one contract case of webhooks and signing certificates.
type HookCase struct {
	Name string
	Run  func(t *testing.T, s HookStore, outbox Outbox)
}

// RunHooks runs every webhook and signing case, each on a store made by
// open, with that store's outbox writer.
func RunHooks(t *testing.T, open func(testing.TB) (HookStore, Outbox)) {
	for _, c := range slices.Concat(webhookCases, signingCases) {
		t.Run(c.Name, func(t *testing.T) {
			s, outbox := open(t)
			c.Run(t, s, outbox)
		})
	}
}

var webhookCases = []HookCase{
	{"SubscriptionsScopedByTeam", subscriptionsScopedByTeam},
	{"DispatchOutboxAndOrder", dispatchOutboxAndOrder},
	{"ConcurrentDispatchCreatesOnce", concurrentDispatchCreatesOnce},
	{"AttemptsRecordedOnceRetryCancel", attemptsRecordedOnceRetryCancel},
	{"ConcurrentAttemptOneWins", concurrentAttemptOneWins},
	{"DeliveryCountsByHour", deliveryCountsByHour},
	{"WebhookHistorySweep", webhookHistorySweep},
}

func mustSub(t *testing.T, s HookStore, teamID string, at time.Time, events ...string) *app.Subscription {
	t.Helper()
	sub := &app.Subscription{ID: app.NewID("whk"), TeamID: teamID, URL: "https://hooks.example.com/" + teamID, Events: events,
		Description: "for " + teamID, Enabled: true, Secret: app.NewID("whsec"), CreatedAt: at, UpdatedAt: at}
	if err := s.CreateSubscription(ctx, sub); err != nil {
		t.Fatal(err)
	}
	return sub
}

func mustEvent(t *testing.T, teamID, typ string, at time.Time) *app.Event {
	t.Helper()
	e, err := app.NewEvent(teamID, typ, at, map[string]any{"jobId": app.NewID("job")})
	if err != nil {
		t.Fatal(err)
	}
	e.RequestID = "req-" + e.ID
	return e
}

// mustDispatch stores an event and dispatches it, returning its deliveries.
func mustDispatch(t *testing.T, s HookStore, outbox Outbox, teamID, typ string, at time.Time, maxAttempts int) []*app.Delivery {
	t.Helper()
	e := mustEvent(t, teamID, typ, at)
	if err := outbox(ctx, e); err != nil {
		t.Fatal(err)
	}
	dels, err := s.DispatchEvent(ctx, e, maxAttempts, at)
	if err != nil {
		t.Fatal(err)
	}
	return dels
}

func ids[T any](list []T, id func(T) string) []string {
	out := make([]string, len(list))
	for i, v := range list {
		out[i] = id(v)
	}
	return out
}

func subID(s *app.Subscription) string { return s.ID }
func dlvID(d *app.Delivery) string     { return d.ID }

// subscriptionsScopedByTeam: a team's subscriptions read back whole, list
// oldest first (ties in creation order), update field by field; another
// team can neither see, change nor delete them, nor their deliveries.
func subscriptionsScopedByTeam(t *testing.T, s HookStore, outbox Outbox) {
	a := mustUser(t, s, "hooks-a@example.com").PersonalTeamID
	b := mustUser(t, s, "hooks-b@example.com").PersonalTeamID
	second := mustSub(t, s, a, t0.Add(time.Second), app.EventBatchCompleted)
	first := mustSub(t, s, a, t0, app.EventDocumentGenerated, app.EventDocumentFailed)
	tie := mustSub(t, s, a, t0.Add(time.Second), app.EventBatchFailed)
	other := mustSub(t, s, b, t0, app.EventDocumentGenerated)

	got, err := s.FindSubscription(ctx, a, first.ID)
	if err != nil || got.URL != first.URL || !slices.Equal(got.Events, first.Events) || got.Description != first.Description ||
		!got.Enabled || got.Secret != first.Secret || got.TeamID != a || !got.CreatedAt.Equal(t0) || !got.UpdatedAt.Equal(t0) {
		t.Fatalf("read back %+v, %v", got, err)
	}
	list, err := s.FindSubscriptions(ctx, a)
	if want := []string{first.ID, second.ID, tie.ID}; err != nil || !slices.Equal(ids(list, subID), want) {
		t.Fatalf("A's list %v, %v; want %v", ids(list, subID), err, want)
	}
	if list, _ := s.FindSubscriptions(ctx, b); !slices.Equal(ids(list, subID), []string{other.ID}) {
		t.Fatalf("B's list %v", ids(list, subID))
	}
	if list, err := s.FindSubscriptions(ctx, "team_none"); err != nil || list == nil || len(list) != 0 {
		t.Fatalf("a team without subscriptions: %v, %v; want an empty list", list, err)
	}

	_, err = s.FindSubscription(ctx, b, first.ID)
	wantCode(t, "B reads A's subscription", err, app.ECodeSubscriptionNotFound)
	off := false
	_, err = s.UpdateSubscription(ctx, b, first.ID, app.SubscriptionUpdate{Enabled: &off}, t0.Add(time.Hour))
	wantCode(t, "B updates A's subscription", err, app.ECodeSubscriptionNotFound)
	wantCode(t, "B deletes A's subscription", s.DeleteSubscription(ctx, b, first.ID), app.ECodeSubscriptionNotFound)
	if got, err := s.FindSubscription(ctx, a, first.ID); err != nil || !got.Enabled {
		t.Fatalf("A's subscription after B's attempts: %+v, %v", got, err)
	}

	// Updates: only the fields given; updated_at moves.
	url, desc := "https://hooks.example.com/new", ""
	at := t0.Add(time.Hour)
	upd, err := s.UpdateSubscription(ctx, a, first.ID, app.SubscriptionUpdate{URL: &url, Events: []string{app.EventBatchFailed}, Description: &desc, Enabled: &off}, at)
	if err != nil || upd.URL != url || !slices.Equal(upd.Events, []string{app.EventBatchFailed}) || upd.Description != "" || upd.Enabled ||
		upd.Secret != first.Secret || !upd.CreatedAt.Equal(t0) || !upd.UpdatedAt.Equal(at) {
		t.Fatalf("updated %+v, %v", upd, err)
	}
	on := true
	if upd, err := s.UpdateSubscription(ctx, a, first.ID, app.SubscriptionUpdate{Enabled: &on}, at.Add(time.Second)); err != nil ||
		!upd.Enabled || upd.URL != url || !slices.Equal(upd.Events, []string{app.EventBatchFailed}) {
		t.Fatalf("enabled again %+v, %v", upd, err)
	}
	if got, _ := s.FindSubscription(ctx, a, first.ID); !got.Enabled || got.URL != url || !got.UpdatedAt.Equal(at.Add(time.Second)) {
		t.Fatalf("read after updates %+v", got)
	}

	// Deliveries of A's subscription are A's.
	dels := mustDispatch(t, s, outbox, a, app.EventBatchFailed, t0, 4)
	if len(dels) != 2 { // first (now on batch.failed) and tie
		t.Fatalf("dispatched %d deliveries, want 2", len(dels))
	}
	var d *app.Delivery
	for _, x := range dels {
		if x.SubscriptionID == first.ID {
			d = x
		}
	}
	if list, err := s.FindDeliveries(ctx, b, first.ID, 10); err != nil || len(list) != 0 {
		t.Fatalf("B lists A's deliveries: %v, %v", ids(list, dlvID), err)
	}
	if list, _ := s.FindDeliveries(ctx, a, first.ID, 10); !slices.Equal(ids(list, dlvID), []string{d.ID}) {
		t.Fatalf("A's deliveries %v", ids(list, dlvID))
	}
	if _, err := s.RecordAttempt(ctx, d.ID, app.Attempt{Number: 1, Error: "HTTP 500", StatusCode: ptr(500), At: t0}); err != nil {
		t.Fatal(err)
	}
	_, err = s.RetryDelivery(ctx, b, first.ID, d.ID, t0)
	wantCode(t, "B retries A's delivery", err, app.ECodeDeliveryNotFound)
	if ids, err := s.CancelPendingDeliveries(ctx, b, tie.ID, app.DeliveryCancelled, t0); err != nil || len(ids) != 0 {
		t.Fatalf("B cancels A's deliveries: %v, %v", ids, err)
	}
	if ok, bad, err := s.DeliveryCounts(ctx, b, t0.Add(-time.Hour)); ok != 0 || bad != 0 || err != nil {
		t.Fatalf("B's counts %d, %d, %v", ok, bad, err)
	}
	if ok, bad, err := s.DeliveryCounts(ctx, a, t0.Add(-time.Hour)); ok != 0 || bad != 1 || err != nil {
		t.Fatalf("A's counts %d, %d, %v; want 0 and 1", ok, bad, err)
	}

	// Deleting takes the subscription's deliveries (and their counts) with it.
	if err := s.DeleteSubscription(ctx, a, first.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.FindDelivery(ctx, d.ID)
	wantCode(t, "a deleted subscription's delivery", err, app.ECodeDeliveryNotFound)
	_, err = s.FindSubscription(ctx, a, first.ID)
	wantCode(t, "deleted subscription", err, app.ECodeSubscriptionNotFound)
	wantCode(t, "deleted twice", s.DeleteSubscription(ctx, a, first.ID), app.ECodeSubscriptionNotFound)
	if ok, bad, _ := s.DeliveryCounts(ctx, a, t0.Add(-time.Hour)); ok != 0 || bad != 0 {
		t.Fatalf("counts after the delete %d, %d", ok, bad)
	}
	if got, _ := s.FindSubscription(ctx, b, other.ID); got == nil {
		t.Fatal("B's subscription went with A's")
	}
}

// dispatchOutboxAndOrder: the outbox keeps only events a subscription
// wants; dispatch makes one delivery per enabled subscription asking for
// the type, once; deliveries list newest first (ties: last made first),
// limited; pending ones list without their payload.
func dispatchOutboxAndOrder(t *testing.T, s HookStore, outbox Outbox) {
	a := mustUser(t, s, "outbox@example.com").PersonalTeamID
	b := mustUser(t, s, "quiet@example.com").PersonalTeamID
	gen := mustSub(t, s, a, t0, app.EventDocumentGenerated)
	both := mustSub(t, s, a, t0, app.EventDocumentGenerated, app.EventDocumentFailed)
	off := mustSub(t, s, a, t0, app.EventDocumentGenerated)
	no := false
	if _, err := s.UpdateSubscription(ctx, a, off.ID, app.SubscriptionUpdate{Enabled: &no}, t0); err != nil {
		t.Fatal(err)
	}

	e1 := mustEvent(t, a, app.EventDocumentGenerated, t0.Add(2*time.Second))
	e2 := mustEvent(t, a, app.EventDocumentFailed, t0.Add(time.Second))
	unwanted := mustEvent(t, a, app.EventBatchCompleted, t0)
	quiet := mustEvent(t, b, app.EventDocumentGenerated, t0)
	if err := outbox(ctx, e1, e2, unwanted, quiet); err != nil {
		t.Fatal(err)
	}
	waiting, err := s.UndispatchedEvents(ctx, 10)
	if want := []string{e2.ID, e1.ID}; err != nil || !slices.Equal(ids(waiting, func(e *app.Event) string { return e.ID }), want) {
		t.Fatalf("outbox %v, %v; want %v (oldest first, only wanted events)", waiting, err, want)
	}
	if w := waiting[1]; w.TeamID != a || w.Type != e1.Type || string(w.Payload) != string(e1.Payload) || !w.CreatedAt.Equal(e1.CreatedAt) || w.RequestID != e1.RequestID {
		t.Fatalf("event read back %+v", w)
	}
	if one, _ := s.UndispatchedEvents(ctx, 1); len(one) != 1 || one[0].ID != e2.ID {
		t.Fatalf("limit 1: %v", one)
	}

	at := t0.Add(time.Minute)
	d1, err := s.DispatchEvent(ctx, e1, 4, at)
	if err != nil || len(d1) != 2 {
		t.Fatalf("dispatch e1: %d deliveries, %v; want 2 (disabled subscription skipped)", len(d1), err)
	}
	subs := ids(d1, func(d *app.Delivery) string { return d.SubscriptionID })
	slices.Sort(subs)
	want := []string{gen.ID, both.ID}
	slices.Sort(want)
	if !slices.Equal(subs, want) {
		t.Fatalf("delivered to %v, want %v", subs, want)
	}
	if again, err := s.DispatchEvent(ctx, e1, 4, at); err != nil || len(again) != 0 {
		t.Fatalf("second dispatch: %d, %v", len(again), err)
	}
	if none, err := s.DispatchEvent(ctx, unwanted, 4, at); err != nil || len(none) != 0 {
		t.Fatalf("an event not in the outbox made %d deliveries, %v", len(none), err)
	}
	d2, err := s.DispatchEvent(ctx, e2, 3, at)
	if err != nil || len(d2) != 1 || d2[0].SubscriptionID != both.ID {
		t.Fatalf("dispatch e2: %v, %v", d2, err)
	}
	if waiting, _ := s.UndispatchedEvents(ctx, 10); len(waiting) != 0 {
		t.Fatalf("outbox after dispatch: %v", waiting)
	}

	got, err := s.FindDelivery(ctx, d2[0].ID)
	if err != nil || got.EventID != e2.ID || got.Event != e2.Type || got.Status != app.DeliveryPending || got.Attempts != 0 || got.MaxAttempts != 3 ||
		string(got.Payload) != string(e2.Payload) || got.TeamID != a || got.RequestID != e2.RequestID || !got.CreatedAt.Equal(at) ||
		got.StatusCode != nil || got.ResponseTime != nil || got.AttemptedAt != nil || got.NextRetryAt != nil || got.Error != "" {
		t.Fatalf("delivery read back %+v, %v", got, err)
	}
	_, err = s.FindDelivery(ctx, "dlv_none")
	wantCode(t, "unknown delivery", err, app.ECodeDeliveryNotFound)

	// A test event's delivery, made outside dispatch, and ordering: newest
	// first, equal times newest made first, limit.
	mk := func(at time.Time) *app.Delivery {
		d := &app.Delivery{ID: app.NewID("dlv"), EventID: app.NewID("evt"), Event: "test", Status: app.DeliveryPending, MaxAttempts: 1,
			CreatedAt: at, SubscriptionID: both.ID, TeamID: a, Payload: []byte(`{"event":"test"}`)}
		if err := s.CreateDelivery(ctx, d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	late := mk(at.Add(time.Hour))
	tieA, tieB := mk(at), mk(at)
	var bothFirst string
	for _, d := range d1 {
		if d.SubscriptionID == both.ID {
			bothFirst = d.ID
		}
	}
	list, err := s.FindDeliveries(ctx, a, both.ID, 10)
	if want := []string{late.ID, tieB.ID, tieA.ID, d2[0].ID, bothFirst}; err != nil || !slices.Equal(ids(list, dlvID), want) {
		t.Fatalf("deliveries %v, %v; want %v", ids(list, dlvID), err, want)
	}
	if page, _ := s.FindDeliveries(ctx, a, both.ID, 2); !slices.Equal(ids(page, dlvID), []string{late.ID, tieB.ID}) {
		t.Fatalf("limit 2: %v", ids(page, dlvID))
	}
	if empty, err := s.FindDeliveries(ctx, a, off.ID, 10); err != nil || empty == nil || len(empty) != 0 {
		t.Fatalf("deliveries of a subscription without any: %v, %v; want an empty list", empty, err)
	}

	pending, err := s.PendingDeliveries(ctx)
	if err != nil || len(pending) != 6 {
		t.Fatalf("pending %d, %v; want 6", len(pending), err)
	}
	for _, p := range pending {
		if len(p.Payload) != 0 || p.Status != app.DeliveryPending || p.SubscriptionID == "" {
			t.Fatalf("pending delivery %+v: want its schedule without the payload", p)
		}
	}
}

// concurrentDispatchCreatesOnce: replicas dispatching one event at once
// create one delivery per subscription between them.
func concurrentDispatchCreatesOnce(t *testing.T, s HookStore, outbox Outbox) {
	a := mustUser(t, s, "race@example.com").PersonalTeamID
	mustSub(t, s, a, t0, app.EventDocumentGenerated)
	mustSub(t, s, a, t0, app.EventDocumentGenerated)
	e := mustEvent(t, a, app.EventDocumentGenerated, t0)
	if err := outbox(ctx, e); err != nil {
		t.Fatal(err)
	}
	made := make([]int, 6)
	for _, err := range concurrently(len(made), func(i int) error {
		dels, err := s.DispatchEvent(ctx, e, 4, t0)
		made[i] = len(dels)
		return err
	}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	total := 0
	for _, n := range made {
		total += n
	}
	pending, _ := s.PendingDeliveries(ctx)
	if total != 2 || len(pending) != 2 {
		t.Fatalf("six dispatches at once made %v deliveries (%d stored); want 2 in all", made, len(pending))
	}
}

// attemptsRecordedOnceRetryCancel: an attempt is recorded once (a replay
// reads back the stored one); a retry allows one more attempt of a failed
// delivery only; disabling cancels what is pending.
func attemptsRecordedOnceRetryCancel(t *testing.T, s HookStore, outbox Outbox) {
	a := mustUser(t, s, "attempts@example.com").PersonalTeamID
	sub := mustSub(t, s, a, t0, app.EventDocumentGenerated)
	d := mustDispatch(t, s, outbox, a, app.EventDocumentGenerated, t0, 2)[0]

	next := t0.Add(time.Minute)
	got, err := s.RecordAttempt(ctx, d.ID, app.Attempt{Number: 1, StatusCode: ptr(503), ResponseTime: 120, Error: "HTTP 503", At: t0, NextRetryAt: &next})
	if err != nil || got.Status != app.DeliveryPending || got.Attempts != 1 || got.StatusCode == nil || *got.StatusCode != 503 ||
		got.ResponseTime == nil || *got.ResponseTime != 120 || got.Error != "HTTP 503" || !got.AttemptedAt.Equal(t0) || !got.NextRetryAt.Equal(next) {
		t.Fatalf("first attempt %+v, %v", got, err)
	}
	// The same attempt again (a replay after a crash) changes nothing.
	replay, err := s.RecordAttempt(ctx, d.ID, app.Attempt{Number: 1, Success: true, At: next})
	if err != nil || replay.Status != app.DeliveryPending || replay.Attempts != 1 || replay.Error != "HTTP 503" || !replay.AttemptedAt.Equal(t0) {
		t.Fatalf("replayed attempt %+v, %v", replay, err)
	}
	// An attempt out of turn neither.
	if skip, err := s.RecordAttempt(ctx, d.ID, app.Attempt{Number: 3, Success: true, At: next}); err != nil || skip.Attempts != 1 {
		t.Fatalf("attempt 3 before 2: %+v, %v", skip, err)
	}
	_, err = s.RecordAttempt(ctx, "dlv_none", app.Attempt{Number: 1, At: next})
	wantCode(t, "attempt of an unknown delivery", err, app.ECodeDeliveryNotFound)
	_, err = s.RetryDelivery(ctx, a, sub.ID, d.ID, next)
	wantCode(t, "retry of a pending delivery", err, app.ECodeNotRetryableDelivery)

	// The last attempt fails: failed, no next retry, no status code.
	got, err = s.RecordAttempt(ctx, d.ID, app.Attempt{Number: 2, Error: "connection refused", At: next})
	if err != nil || got.Status != app.DeliveryFailed || got.Attempts != 2 || got.StatusCode != nil || got.NextRetryAt != nil || got.Error != "connection refused" {
		t.Fatalf("second attempt %+v, %v", got, err)
	}
	if ok, bad, _ := s.DeliveryCounts(ctx, a, t0); ok != 0 || bad != 1 {
		t.Fatalf("counts after the failure %d, %d", ok, bad)
	}
	retryAt := next.Add(time.Hour)
	_, err = s.RetryDelivery(ctx, a, "whk_other", d.ID, retryAt)
	wantCode(t, "retry under another subscription", err, app.ECodeDeliveryNotFound)
	got, err = s.RetryDelivery(ctx, a, sub.ID, d.ID, retryAt)
	if err != nil || got.Status != app.DeliveryPending || got.MaxAttempts != 3 || got.Attempts != 2 || !got.NextRetryAt.Equal(retryAt) {
		t.Fatalf("retried %+v, %v", got, err)
	}
	if ok, bad, _ := s.DeliveryCounts(ctx, a, t0); ok != 0 || bad != 0 {
		t.Fatalf("counts after the retry %d, %d; a pending delivery has not ended", ok, bad)
	}
	got, err = s.RecordAttempt(ctx, d.ID, app.Attempt{Number: 3, Success: true, StatusCode: ptr(204), ResponseTime: 7, At: retryAt})
	if err != nil || got.Status != app.DeliverySuccess || got.Attempts != 3 || got.Error != "" || *got.StatusCode != 204 {
		t.Fatalf("third attempt %+v, %v", got, err)
	}
	_, err = s.RetryDelivery(ctx, a, sub.ID, d.ID, retryAt)
	wantCode(t, "retry of a delivered one", err, app.ECodeNotRetryableDelivery)
	if ok, bad, _ := s.DeliveryCounts(ctx, a, t0); ok != 1 || bad != 0 {
		t.Fatalf("counts after the success %d, %d", ok, bad)
	}

	// Cancelling: pending deliveries (one attempted, one not) fail with the
	// reason; ended ones are left alone; the attempted one counts as failed.
	tried := mustDispatch(t, s, outbox, a, app.EventDocumentGenerated, t0.Add(time.Second), 4)[0]
	fresh := mustDispatch(t, s, outbox, a, app.EventDocumentGenerated, t0.Add(2*time.Second), 4)[0]
	if _, err := s.RecordAttempt(ctx, tried.ID, app.Attempt{Number: 1, Error: "HTTP 500", StatusCode: ptr(500), At: t0, NextRetryAt: &next}); err != nil {
		t.Fatal(err)
	}
	cancelled, err := s.CancelPendingDeliveries(ctx, a, sub.ID, app.DeliveryCancelled, next)
	slices.Sort(cancelled)
	want := []string{tried.ID, fresh.ID}
	slices.Sort(want)
	if err != nil || !slices.Equal(cancelled, want) {
		t.Fatalf("cancelled %v, %v; want %v", cancelled, err, want)
	}
	for _, id := range want {
		if c, _ := s.FindDelivery(ctx, id); c.Status != app.DeliveryFailed || c.Error != app.DeliveryCancelled || c.NextRetryAt != nil {
			t.Fatalf("cancelled delivery %+v", c)
		}
	}
	if c, _ := s.FindDelivery(ctx, d.ID); c.Status != app.DeliverySuccess {
		t.Fatalf("the delivered one after cancelling: %+v", c)
	}
	if ok, bad, _ := s.DeliveryCounts(ctx, a, t0); ok != 1 || bad != 1 {
		t.Fatalf("counts after cancelling %d, %d; want 1 and 1 (the never-attempted one does not count)", ok, bad)
	}
	if p, _ := s.PendingDeliveries(ctx); len(p) != 0 {
		t.Fatalf("pending after cancelling: %d", len(p))
	}
}

// concurrentAttemptOneWins: replicas recording the same attempt at once
// (one whose lease lapsed while it still ran, and the one that took it
// over): one records it, every caller reads back that one, and it is
// counted once.
func concurrentAttemptOneWins(t *testing.T, s HookStore, outbox Outbox) {
	a := mustUser(t, s, "oncehook@example.com").PersonalTeamID
	mustSub(t, s, a, t0, app.EventDocumentGenerated)
	d := mustDispatch(t, s, outbox, a, app.EventDocumentGenerated, t0, 1)[0]
	const n = 8
	got := make([]*app.Delivery, n)
	for _, err := range concurrently(n, func(i int) error {
		var err error
		got[i], err = s.RecordAttempt(ctx, d.ID, app.Attempt{Number: 1, Error: fmt.Sprintf("replica %d", i), StatusCode: ptr(500 + i), At: t0.Add(time.Duration(i) * time.Millisecond)})
		return err
	}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	stored, err := s.FindDelivery(ctx, d.ID)
	if err != nil || stored.Attempts != 1 || stored.Status != app.DeliveryFailed {
		t.Fatalf("stored %+v, %v", stored, err)
	}
	wins := 0
	for i, g := range got {
		if g.Error != stored.Error || *g.StatusCode != *stored.StatusCode || !g.AttemptedAt.Equal(*stored.AttemptedAt) || g.Attempts != 1 {
			t.Fatalf("replica %d read back %+v; stored %+v", i, g, stored)
		}
		if stored.Error == fmt.Sprintf("replica %d", i) {
			wins++
		}
	}
	if wins != 1 {
		t.Fatalf("%d replicas' attempts stored", wins)
	}
	if ok, bad, _ := s.DeliveryCounts(ctx, a, t0); ok != 0 || bad != 1 {
		t.Fatalf("counted %d, %d; want the one failure once", ok, bad)
	}
}

// deliveryCountsByHour: a team's ended deliveries since a time, whole
// hours and the part of an hour before them, by their last attempt.
func deliveryCountsByHour(t *testing.T, s HookStore, outbox Outbox) {
	a := mustUser(t, s, "counts@example.com").PersonalTeamID
	b := mustUser(t, s, "nocounts@example.com").PersonalTeamID
	mustSub(t, s, a, t0, app.EventDocumentGenerated)
	mustSub(t, s, b, t0, app.EventDocumentGenerated)
	end := func(team string, ok bool, at time.Time) {
		t.Helper()
		d := mustDispatch(t, s, outbox, team, app.EventDocumentGenerated, at, 1)[0]
		if _, err := s.RecordAttempt(ctx, d.ID, app.Attempt{Number: 1, Success: ok, At: at}); err != nil {
			t.Fatal(err)
		}
	}
	// t0 is 12:00. Attempts at 10:10 (ok), 11:20 (ok, failed), 11:50
	// (failed), 12:00 (ok), 13:59:59.999 (ok); B's at 12:30.
	end(a, true, t0.Add(-110*time.Minute))
	end(a, true, t0.Add(-40*time.Minute))
	end(a, false, t0.Add(-40*time.Minute))
	end(a, false, t0.Add(-10*time.Minute))
	end(a, true, t0)
	end(a, true, t0.Add(2*time.Hour-time.Millisecond))
	end(b, false, t0.Add(30*time.Minute))
	// A pending one, attempted, does not count.
	d := mustDispatch(t, s, outbox, a, app.EventDocumentGenerated, t0, 4)[0]
	next := t0.Add(time.Hour)
	if _, err := s.RecordAttempt(ctx, d.ID, app.Attempt{Number: 1, At: t0, NextRetryAt: &next}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		since   time.Time
		ok, bad int
	}{
		{t0.Add(-3 * time.Hour), 4, 2},
		{t0.Add(-110 * time.Minute), 4, 2},                  // from the first attempt on, to the millisecond
		{t0.Add(-110*time.Minute + time.Millisecond), 3, 2}, // just after it
		{t0.Add(-30 * time.Minute), 2, 1},                   // part of 11:00-12:00, then whole hours
		{t0, 2, 0},
		{t0.Add(time.Millisecond), 1, 0},
		{t0.Add(2 * time.Hour), 0, 0},
	} {
		ok, bad, err := s.DeliveryCounts(ctx, a, c.since)
		if err != nil || ok != c.ok || bad != c.bad {
			t.Errorf("since %s: %d ok, %d failed, %v; want %d, %d", c.since.Format(time.TimeOnly), ok, bad, err, c.ok, c.bad)
		}
	}
	if ok, bad, _ := s.DeliveryCounts(ctx, b, t0.Add(-3*time.Hour)); ok != 0 || bad != 1 {
		t.Errorf("B: %d, %d; want 0, 1", ok, bad)
	}
}

// webhookHistorySweep: the sweep deletes dispatched events and ended
// deliveries created before the cut, and nothing else: not undispatched
// events, not pending deliveries, not later rows. The counts outlive it.
func webhookHistorySweep(t *testing.T, s HookStore, outbox Outbox) {
	a := mustUser(t, s, "sweep@example.com").PersonalTeamID
	sub := mustSub(t, s, a, t0, app.EventDocumentGenerated)
	cut := t0.Add(24 * time.Hour)
	old, recent := t0, cut.Add(time.Millisecond)
	oldOK := mustDispatch(t, s, outbox, a, app.EventDocumentGenerated, old, 1)[0]
	oldFailed := mustDispatch(t, s, outbox, a, app.EventDocumentGenerated, old.Add(time.Second), 1)[0]
	oldPending := mustDispatch(t, s, outbox, a, app.EventDocumentGenerated, old.Add(2*time.Second), 4)[0]
	recentOK := mustDispatch(t, s, outbox, a, app.EventDocumentGenerated, recent, 1)[0]
	edge := mustDispatch(t, s, outbox, a, app.EventDocumentGenerated, cut, 1)[0] // at the cut: kept
	for _, d := range []*app.Delivery{oldOK, recentOK, edge} {
		if _, err := s.RecordAttempt(ctx, d.ID, app.Attempt{Number: 1, Success: true, At: d.CreatedAt}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.RecordAttempt(ctx, oldFailed.ID, app.Attempt{Number: 1, Error: "HTTP 410", At: oldFailed.CreatedAt}); err != nil {
		t.Fatal(err)
	}
	// An old event still in the outbox (its dispatch failed) stays.
	stuck := mustEvent(t, a, app.EventDocumentGenerated, old)
	if err := outbox(ctx, stuck); err != nil {
		t.Fatal(err)
	}
	before, bad, _ := s.DeliveryCounts(ctx, a, old)

	st, err := s.DeleteWebhookHistory(ctx, cut)
	if err != nil || st.Deleted["events"] != 3 || st.Deleted["webhook_deliveries"] != 2 || st.Total() != 5 {
		t.Fatalf("swept %v, %v; want 3 events (the old dispatched ones) and 2 deliveries", st.Deleted, err)
	}
	left, _ := s.FindDeliveries(ctx, a, sub.ID, 10)
	if want := []string{recentOK.ID, edge.ID, oldPending.ID}; !slices.Equal(ids(left, dlvID), want) {
		t.Fatalf("deliveries left %v, want %v", ids(left, dlvID), want)
	}
	waiting, _ := s.UndispatchedEvents(ctx, 10)
	if len(waiting) != 1 || waiting[0].ID != stuck.ID {
		t.Fatalf("outbox after the sweep %v", waiting)
	}
	if ok, failed, _ := s.DeliveryCounts(ctx, a, old); ok != before || failed != bad || ok != 3 || failed != 1 {
		t.Fatalf("counts after the sweep %d, %d; before %d, %d", ok, failed, before, bad)
	}
	if st, err := s.DeleteWebhookHistory(ctx, cut); err != nil || st.Total() != 0 {
		t.Fatalf("second sweep %v, %v", st.Deleted, err)
	}
}
