package app

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// sendTestStore holds one subscription and records the deliveries of
// test events in memory; SendTest needs no more of a store.
type sendTestStore struct {
	WebhookStore
	sub *Subscription

	mu         sync.Mutex
	deliveries map[string]*Delivery
}

func (s *sendTestStore) FindSubscription(_ context.Context, teamID, id string) (*Subscription, error) {
	if teamID != s.sub.TeamID || id != s.sub.ID {
		return nil, ErrNotFound(ECodeSubscriptionNotFound, "subscription")
	}
	return s.sub, nil
}

func (s *sendTestStore) CreateDelivery(_ context.Context, d *Delivery) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.deliveries == nil {
		s.deliveries = map[string]*Delivery{}
	}
	c := *d
	s.deliveries[d.ID] = &c
	return nil
}

func (s *sendTestStore) RecordAttempt(_ context.Context, id string, a Attempt) (*Delivery, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.deliveries[id]
	d.Attempts, d.StatusCode, d.Error, d.AttemptedAt = a.Number, a.StatusCode, a.Error, &a.At
	d.Status = DeliveryFailed
	if a.Success {
		d.Status = DeliverySuccess
	}
	c := *d
	return &c, nil
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestSendTestReleasesSlotOnPanic: a test event whose send panics (the
// request's recover turns it into a 500 and the server goes on) gives its
// send-gate slot back. After as many panics as a subscription has slots,
// the deliverer still admits that many attempts for it, and test events
// still go through.
func TestSendTestReleasesSlotOnPanic(t *testing.T) {
	now := time.Unix(1700000000, 0)
	clock := func() time.Time { return now }
	var panicking atomic.Bool
	panicking.Store(true)
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if panicking.Load() {
			panic("the webhook client broke")
		}
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
	})}
	sub := &Subscription{ID: "whk_1", TeamID: "team_1", URL: "https://hooks.example.com/folio", Secret: "s", Enabled: true}
	st := &sendTestStore{sub: sub}
	d := &Deliverer{Store: st, Client: client, Logger: slog.New(slog.DiscardHandler), Now: clock,
		gate: newSendGate(DefaultWebhookPerSubscription, WebhookEventsPerSec, time.Second)}
	s := &WebhookService{Store: st, Deliverer: d, Now: clock}
	ctx := WithPrincipal(context.Background(), &Principal{Kind: AuthJWT, UserID: "usr_1", TeamID: sub.TeamID, Role: RoleOwner, Verified: true})

	for i := range DefaultWebhookPerSubscription {
		func() {
			defer func() {
				if recover() == nil {
					t.Fatalf("send %d did not panic", i)
				}
			}()
			s.SendTest(ctx, sub.ID)
		}()
	}
	// Once the panicked sends (counted as sent) have left the rate window,
	// every slot is free: one pass admits DefaultWebhookPerSubscription.
	now = now.Add(2 * time.Second)
	admit := d.gate.admitter()
	for i := range DefaultWebhookPerSubscription {
		if ok, _ := admit(sub.ID, 0, now); !ok {
			t.Fatalf("after %d panicking test sends the deliverer admits only %d attempts, want %d", DefaultWebhookPerSubscription, i, DefaultWebhookPerSubscription)
		}
	}

	panicking.Store(false)
	for i := range DefaultWebhookPerSubscription {
		r, err := s.SendTest(ctx, sub.ID)
		if err != nil || !r.Success {
			t.Fatalf("test send %d after the panics: %+v, %v", i, r, err)
		}
	}
	if s := d.gate.subs[sub.ID]; s == nil || s.inFlight != 0 {
		t.Fatalf("after every send ended the gate holds %+v, want none in flight", s)
	}
}
