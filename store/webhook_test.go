package store

import (
	"context"
	"testing"
	"time"

	"folio/app"
)

func TestWebhookOutboxAndRetention(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	u := mustUser(t, db, "hooks@example.com")
	team := u.PersonalTeamID
	old := time.Now().UTC().Add(-40 * 24 * time.Hour)
	sub := &app.Subscription{ID: app.NewID("whk"), TeamID: team, URL: "https://93.184.215.14/h", Events: []string{app.EventDocumentGenerated},
		Enabled: true, Secret: "s", CreatedAt: old, UpdatedAt: old}
	if err := db.CreateSubscription(ctx, sub); err != nil {
		t.Fatal(err)
	}
	ev := func(typ string, at time.Time) *app.Event {
		e, err := app.NewEvent(team, typ, at, map[string]any{"jobId": "job_x"})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	gen, failed := ev(app.EventDocumentGenerated, old), ev(app.EventDocumentFailed, old)
	if err := db.tx(ctx, func(tx *Tx) error { return insertEvents(ctx, tx, []*app.Event{gen, failed}) }); err != nil {
		t.Fatal(err)
	}
	pending, err := db.UndispatchedEvents(ctx, 10)
	if err != nil || len(pending) != 1 || pending[0].ID != gen.ID {
		t.Fatalf("outbox = %+v, %v; want only the subscribed event", pending, err)
	}
	// An event that was never stored dispatches to nothing.
	if dels, err := db.DispatchEvent(ctx, failed, 4, old); err != nil || len(dels) != 0 {
		t.Fatalf("dispatch of an unstored event = %v, %v", dels, err)
	}
	dels, err := db.DispatchEvent(ctx, gen, 4, old)
	if err != nil || len(dels) != 1 {
		t.Fatalf("dispatch = %v, %v", dels, err)
	}
	if again, err := db.DispatchEvent(ctx, gen, 4, old); err != nil || len(again) != 0 {
		t.Fatalf("second dispatch = %v, %v", again, err)
	}
	if d, _ := db.FindDelivery(ctx, dels[0].ID); string(d.Payload) != string(gen.Payload) {
		t.Fatal("the delivery lost its payload")
	}

	// A second, recent delivery that ends, and an old one still pending.
	recent := ev(app.EventDocumentGenerated, time.Now().UTC())
	stuck := ev(app.EventDocumentGenerated, old)
	if err := db.tx(ctx, func(tx *Tx) error { return insertEvents(ctx, tx, []*app.Event{recent, stuck}) }); err != nil {
		t.Fatal(err)
	}
	recentDels, _ := db.DispatchEvent(ctx, recent, 1, recent.CreatedAt)
	stuckDels, _ := db.DispatchEvent(ctx, stuck, 4, old)
	for _, d := range []*app.Delivery{dels[0], recentDels[0]} {
		if _, err := db.RecordAttempt(ctx, d.ID, app.Attempt{Number: 1, Success: true, At: d.CreatedAt}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := db.DeleteWebhookHistory(ctx, time.Now().UTC().Add(-app.WebhookRetention))
	if err != nil || st.Total() != 3 || st.Deleted["events"] != 2 { // gen and stuck events, the old successful delivery
		t.Fatalf("deleted %v, %v; want 2 events and 1 delivery", st.Deleted, err)
	}
	left, _ := db.FindDeliveries(ctx, team, sub.ID, 10)
	if len(left) != 2 || left[0].ID != recentDels[0].ID || left[1].ID != stuckDels[0].ID {
		t.Fatalf("deliveries left: %+v", left)
	}

	// Disabling cancels what is pending.
	ids, err := db.CancelPendingDeliveries(ctx, team, sub.ID, app.DeliveryCancelled, time.Now())
	if err != nil || len(ids) != 1 || ids[0] != stuckDels[0].ID {
		t.Fatalf("cancelled %v, %v", ids, err)
	}
	if d, _ := db.FindDelivery(ctx, stuckDels[0].ID); d.Status != app.DeliveryFailed || d.Error != app.DeliveryCancelled || d.NextRetryAt != nil {
		t.Fatalf("cancelled delivery = %+v", d)
	}
}
