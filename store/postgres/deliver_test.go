package postgres

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"folio/app"
)

// TestDeliveriesAcrossReplicas: the webhook deliverers of three replicas
// share one database, with the repair sweep running every 50 ms so it
// races the attempts; a fourth replica dispatched some events, claimed
// their attempts a minute ago and died without a word (kill -9: its pool
// gone, its leases held). Every event reaches the receiver exactly once: the live
// replicas never send what another holds, and take the dead one's
// attempts over once its leases lapse.
func TestDeliveriesAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	dbs := openReplicas(t, 4)
	live, dead := dbs[:3], dbs[3]

	var mu sync.Mutex
	received := map[string]int{} // event id -> requests
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		received[r.Header.Get("X-Service-Event-Id")]++
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()

	start := time.Now().UTC().Truncate(time.Millisecond)
	var offset atomic.Int64 // the replicas' clock is start + offset
	clock := func() time.Time { return start.Add(time.Duration(offset.Load())) }

	u := &app.User{ID: app.NewID("usr"), Email: "replicas@example.com", Name: "R", PasswordHash: "h", CreatedAt: start, UpdatedAt: start}
	team := &app.Team{ID: app.NewID("team"), Name: "Personal", Slug: app.NewID("s"), IsPersonal: true, Plan: "free", OwnerID: u.ID, CreatedAt: start, UpdatedAt: start}
	u.PersonalTeamID = team.ID
	if err := dbs[0].CreateUser(ctx, u, team); err != nil {
		t.Fatal(err)
	}
	sub := &app.Subscription{ID: app.NewID("whk"), TeamID: team.ID, URL: srv.URL, Events: []string{app.EventDocumentGenerated}, Enabled: true,
		Secret: "s", CreatedAt: start, UpdatedAt: start}
	if err := dbs[0].CreateSubscription(ctx, sub); err != nil {
		t.Fatal(err)
	}
	const events, deadOnes = 90, 10
	var all []*app.Event
	for range events {
		e, err := app.NewEvent(team.ID, app.EventDocumentGenerated, start, map[string]any{"jobId": app.NewID("job")})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, e)
	}
	if err := dbs[0].tx(ctx, func(tx pgx.Tx) error {
		_, err := storeWanted(ctx, tx, all, map[string]map[string]bool{})
		return err
	}); err != nil {
		t.Fatal(err)
	}

	// The dead replica's part: dispatched, scheduled, claimed, never sent.
	for _, e := range all[:deadOnes] {
		dels, err := dead.DispatchEvent(ctx, e, 4, start)
		if err != nil || len(dels) != 1 {
			t.Fatalf("dispatch: %v, %v", dels, err)
		}
		d := dels[0]
		if err := dead.ScheduleAttempts(ctx, &app.ScheduleEntry{DeliveryID: d.ID, SubscriptionID: sub.ID, Attempt: 1, Due: start.Add(-time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	held, _, err := dead.ClaimDueAttempts(ctx, start.Add(-time.Minute), 2*time.Minute, 100, nil)
	if err != nil || len(held) != deadOnes {
		t.Fatalf("the dead replica claimed %d, %v", len(held), err)
	}
	dead.pool.Close() // no Close(): its leases stay, as after kill -9

	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	var deliverers []*app.Deliverer
	var stops []func(context.Context)
	for _, db := range live {
		d := &app.Deliverer{Store: db, Queue: db, Client: srv.Client(), Logger: logger, Now: clock, Sweep: 50 * time.Millisecond, Workers: 4}
		stop, err := d.Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		deliverers = append(deliverers, d)
		stops = append(stops, stop)
	}
	defer func() {
		for _, stop := range stops {
			stop(ctx)
		}
	}()

	count := func() (distinct, total int) {
		mu.Lock()
		defer mu.Unlock()
		for _, n := range received {
			total += n
		}
		return len(received), total
	}
	waitFor := func(want int) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			if n, _ := count(); n >= want {
				return
			}
			if time.Now().After(deadline) {
				n, _ := count()
				t.Fatalf("%d of %d events received", n, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor(events - deadOnes)
	time.Sleep(200 * time.Millisecond) // several sweeps: none sends a held attempt
	if n, _ := count(); n != events-deadOnes {
		t.Fatalf("%d events received while the dead replica's leases held, want %d", n, events-deadOnes)
	}

	// Its leases lapse; the next pass takes the attempts over.
	offset.Store(int64(3 * time.Minute))
	for _, d := range deliverers {
		d.Dispatch(ctx, nil) // wakes the claimer
	}
	waitFor(events)
	time.Sleep(200 * time.Millisecond)
	distinct, total := count()
	if distinct != events || total != events {
		t.Fatalf("%d requests for %d events, want each of %d once", total, distinct, events)
	}
	mu.Lock()
	for _, e := range all {
		if received[e.ID] != 1 {
			t.Errorf("event %s received %d times", e.ID, received[e.ID])
		}
	}
	mu.Unlock()
	dels, err := live[0].FindDeliveries(ctx, team.ID, sub.ID, 1000)
	if err != nil || len(dels) != events {
		t.Fatalf("%d deliveries, %v", len(dels), err)
	}
	for _, d := range dels {
		if d.Status != app.DeliverySuccess || d.Attempts != 1 {
			t.Fatalf("delivery %s: %s after %d attempts", d.ID, d.Status, d.Attempts)
		}
	}
	if ok, bad, err := live[0].DeliveryCounts(ctx, team.ID, start); ok != events || bad != 0 || err != nil {
		t.Fatalf("counts %d, %d, %v", ok, bad, err)
	}
	if left, err := live[0].ScheduledAttempts(ctx); err != nil || len(left) != 0 {
		t.Fatalf("%d attempts left in the schedule, %v", len(left), err)
	}
}

// TestInFlightLimitAcrossReplicas: a subscription's limit of attempts in
// flight (PerSubscription) holds for the cluster, not per replica: three
// replicas' deliverers, each allowed 2 per subscription, never have more
// than 2 requests at once at a slow receiver.
func TestInFlightLimitAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	dbs := openReplicas(t, 3)
	var mu sync.Mutex
	inFlight, most, done := 0, 0, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		time.Sleep(150 * time.Millisecond)
		mu.Lock()
		inFlight--
		done++
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	now := time.Now().UTC().Truncate(time.Millisecond)
	u := &app.User{ID: app.NewID("usr"), Email: "limit@example.com", Name: "L", PasswordHash: "h", CreatedAt: now, UpdatedAt: now}
	team := &app.Team{ID: app.NewID("team"), Name: "Personal", Slug: app.NewID("s"), IsPersonal: true, Plan: "free", OwnerID: u.ID, CreatedAt: now, UpdatedAt: now}
	u.PersonalTeamID = team.ID
	if err := dbs[0].CreateUser(ctx, u, team); err != nil {
		t.Fatal(err)
	}
	sub := &app.Subscription{ID: app.NewID("whk"), TeamID: team.ID, URL: srv.URL, Events: []string{app.EventDocumentGenerated}, Enabled: true,
		Secret: "s", CreatedAt: now, UpdatedAt: now}
	if err := dbs[0].CreateSubscription(ctx, sub); err != nil {
		t.Fatal(err)
	}
	const events = 18
	var all []*app.Event
	for range events {
		e, err := app.NewEvent(team.ID, app.EventDocumentGenerated, now, map[string]any{"jobId": app.NewID("job")})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, e)
	}
	if err := dbs[0].tx(ctx, func(tx pgx.Tx) error {
		_, err := storeWanted(ctx, tx, all, map[string]map[string]bool{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, db := range dbs {
		d := &app.Deliverer{Store: db, Queue: db, Client: srv.Client(), Logger: logger, Now: time.Now, Sweep: 50 * time.Millisecond, PerSubscription: 2}
		stop, err := d.Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer stop(ctx)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		n, m := done, most
		mu.Unlock()
		if m > 2 {
			t.Fatalf("%d requests at once at the receiver; the limit is 2 for the cluster", m)
		}
		if n == events {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d delivered", n, events)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for {
		ok, _, err := dbs[1].DeliveryCounts(ctx, team.ID, now)
		if err != nil {
			t.Fatal(err)
		}
		if ok == events {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d deliveries recorded, want %d", ok, events)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
