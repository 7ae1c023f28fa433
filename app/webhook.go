package app

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Webhook event names (SPEC.md, Events; DESIGN.md section 5: all four).
const (
	EventDocumentGenerated = "document.generated"
	EventDocumentFailed    = "document.failed"
	EventBatchCompleted    = "batch.completed"
	EventBatchFailed       = "batch.failed"
)

// EventNames lists every event a subscription can ask for.
var EventNames = []string{EventDocumentGenerated, EventDocumentFailed, EventBatchCompleted, EventBatchFailed}

// Webhook limits.
const (
	MaxWebhookPayload     = 256 << 10
	MaxSubscriptions      = 25
	WebhookEventsPerSec   = 100
	WebhookAttemptTimeout = 30 * time.Second
	// WebhookRetention is how long events and ended deliveries are kept.
	WebhookRetention = 30 * 24 * time.Hour
)

// Delivery statuses.
const (
	DeliveryPending = "pending"
	DeliverySuccess = "success"
	DeliveryFailed  = "failed"
)

// DeliveryCancelled is the error of a delivery whose subscription was
// disabled while it waited for a retry.
const DeliveryCancelled = "cancelled: the subscription was disabled while this delivery waited for a retry; enable it and retry by hand to send it"

// Subscription is a team's webhook endpoint.
type Subscription struct {
	ID          string    `json:"id"`
	URL         string    `json:"url"`
	Events      []string  `json:"events"`
	Description string    `json:"description"`
	Enabled     bool      `json:"enabled"`
	Secret      string    `json:"secret,omitempty"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
	TeamID      string    `json:"-"`
}

// Event is one occurrence to notify: its payload is the exact body sent,
// the same on every attempt.
type Event struct {
	ID        string
	TeamID    string
	Type      string
	Payload   []byte
	CreatedAt time.Time
	// RequestID is the request that caused the event (logged, never sent).
	RequestID string
}

// Delivery is one event sent (or to be sent) to one subscription.
type Delivery struct {
	ID             string     `json:"id"`
	EventID        string     `json:"eventId"`
	Event          string     `json:"event"`
	Status         string     `json:"status"`
	StatusCode     *int       `json:"statusCode"`
	ResponseTime   *int64     `json:"responseTime"`
	Error          string     `json:"error"`
	Attempts       int        `json:"attempts"`
	AttemptedAt    *time.Time `json:"attemptedAt"`
	NextRetryAt    *time.Time `json:"nextRetryAt"`
	CreatedAt      time.Time  `json:"createdAt"`
	SubscriptionID string     `json:"-"`
	TeamID         string     `json:"-"`
	Payload        []byte     `json:"-"`
	MaxAttempts    int        `json:"-"`
	// RequestID is the request that caused the delivery, for the logs.
	RequestID string `json:"-"`
}

// Attempt is the outcome of one delivery attempt, as recorded.
type Attempt struct {
	Number       int
	StatusCode   *int
	ResponseTime int64
	Error        string
	Success      bool
	At           time.Time
	// NextRetryAt is set when another attempt is scheduled.
	NextRetryAt *time.Time
}

// SubscriptionUpdate holds the optional fields of a PATCH.
type SubscriptionUpdate struct {
	URL         *string
	Events      []string
	Description *string
	Enabled     *bool
}

// WebhookStore keeps subscriptions, the event outbox and deliveries.
type WebhookStore interface {
	CreateSubscription(ctx context.Context, s *Subscription) error
	FindSubscription(ctx context.Context, teamID, id string) (*Subscription, error)
	FindSubscriptions(ctx context.Context, teamID string) ([]*Subscription, error)
	UpdateSubscription(ctx context.Context, teamID, id string, upd SubscriptionUpdate, now time.Time) (*Subscription, error)
	DeleteSubscription(ctx context.Context, teamID, id string) error
	// DispatchEvent creates a pending delivery for every enabled subscription
	// of the event's team that asks for it, and marks the event dispatched,
	// in one transaction. Dispatching twice creates nothing new.
	DispatchEvent(ctx context.Context, e *Event, maxAttempts int, now time.Time) ([]*Delivery, error)
	UndispatchedEvents(ctx context.Context, limit int) ([]*Event, error)
	// CreateDelivery records a delivery made outside dispatch (test events).
	CreateDelivery(ctx context.Context, d *Delivery) error
	FindDelivery(ctx context.Context, id string) (*Delivery, error)
	FindDeliveries(ctx context.Context, teamID, subscriptionID string, limit int) ([]*Delivery, error)
	// RecordAttempt stores attempt a unless that attempt number is already
	// recorded (a replay after a crash); it returns the delivery as stored.
	RecordAttempt(ctx context.Context, id string, a Attempt) (*Delivery, error)
	// RetryDelivery turns a failed delivery back to pending with one more
	// attempt allowed.
	RetryDelivery(ctx context.Context, teamID, subscriptionID, id string, now time.Time) (*Delivery, error)
	// CancelPendingDeliveries marks a subscription's pending deliveries
	// failed with reason and returns their ids.
	CancelPendingDeliveries(ctx context.Context, teamID, subscriptionID, reason string, now time.Time) ([]string, error)
	// PendingDeliveries lists deliveries waiting for an attempt, without
	// their payloads.
	PendingDeliveries(ctx context.Context) ([]*Delivery, error)
	// DeleteWebhookHistory removes dispatched events and ended deliveries
	// created before a time, in short transactions.
	DeleteWebhookHistory(ctx context.Context, before time.Time) (SweepStats, error)
}

// WebhookService manages subscriptions for the API.
type WebhookService struct {
	Store        WebhookStore
	Deliverer    *Deliverer
	AllowPrivate bool
	Now          func() time.Time
	Logger       *slog.Logger // the janitor's line (nil: slog.Default)
}

// SubscriptionInput is the body of POST and PATCH on subscriptions.
type SubscriptionInput struct {
	URL         *string  `json:"url"`
	Events      []string `json:"events"`
	Description *string  `json:"description"`
	Enabled     *bool    `json:"enabled"`
}

// manager returns the caller when they may manage the team's webhooks. A
// change (create, update, delete) or a request sent on the caller's behalf
// (test, retry) also needs a verified email, the same rule as creating:
// otherwise an unverified account could point an existing subscription
// anywhere and make Folio POST to it. Reading does not.
func (s *WebhookService) manager(ctx context.Context, change bool) (*Principal, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.Require(PermWebhooksWrite); err != nil {
		return nil, err
	}
	if p.Kind == AuthJWT && !CanAdmin(p.Role) && p.Role != RoleMember {
		return nil, &Error{Code: ECodeForbidden, Message: "viewers cannot manage webhooks"}
	}
	if change {
		if err := RequireVerified(p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// checkURL accepts only https URLs whose host is public, unless private
// targets are allowed.
func (s *WebhookService) checkURL(ctx context.Context, raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return "", ErrInvalid("url", "url must be an absolute https:// URL")
	}
	if u.Scheme != "https" {
		return "", ErrInvalid("url", "url must use https")
	}
	if len(raw) > 2048 {
		return "", ErrInvalid("url", "url must be at most 2048 characters")
	}
	if u.Fragment != "" {
		return "", ErrInvalid("url", "url must not have a fragment")
	}
	if !s.AllowPrivate {
		if err := checkPublicHost(ctx, u.Hostname()); err != nil {
			return "", ErrInvalid("url", "%s", err.Error())
		}
	}
	return u.String(), nil
}

func checkEvents(events []string) ([]string, error) {
	if len(events) == 0 {
		return nil, ErrInvalid("events", "events must name at least one of %s", strings.Join(EventNames, ", "))
	}
	var out []string
	for _, e := range events {
		if !slices.Contains(EventNames, e) {
			return nil, ErrInvalid("events", "unknown event %q (one of %s)", e, strings.Join(EventNames, ", "))
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out, nil
}

func checkDescription(d string) error {
	if utf8.RuneCountInString(d) > 500 {
		return ErrInvalid("description", "description must be at most 500 characters")
	}
	return nil
}

// CreateSubscription stores a subscription and returns it with its signing
// secret, the only time the secret is shown.
func (s *WebhookService) CreateSubscription(ctx context.Context, in SubscriptionInput) (*Subscription, error) {
	p, err := s.manager(ctx, true)
	if err != nil {
		return nil, err
	}
	if in.URL == nil || *in.URL == "" {
		return nil, ErrRequired("url")
	}
	u, err := s.checkURL(ctx, *in.URL)
	if err != nil {
		return nil, err
	}
	events := EventNames
	if in.Events != nil {
		if events, err = checkEvents(in.Events); err != nil {
			return nil, err
		}
	}
	sub := &Subscription{ID: NewID("whk"), TeamID: p.TeamID, URL: u, Events: events, Enabled: true, Secret: "whsec_" + RandomString(40)}
	if in.Description != nil {
		if err := checkDescription(*in.Description); err != nil {
			return nil, err
		}
		sub.Description = *in.Description
	}
	if in.Enabled != nil {
		sub.Enabled = *in.Enabled
	}
	existing, err := s.Store.FindSubscriptions(ctx, p.TeamID)
	if err != nil {
		return nil, err
	}
	if len(existing) >= MaxSubscriptions {
		return nil, Errorf(ECodePlanLimit, "a team can have at most %d webhook subscriptions", MaxSubscriptions).
			WithInfo("limit", MaxSubscriptions, "current", len(existing), "resource", "webhookSubscriptions")
	}
	sub.CreatedAt = s.Now().UTC()
	sub.UpdatedAt = sub.CreatedAt
	if err := s.Store.CreateSubscription(ctx, sub); err != nil {
		return nil, err
	}
	return sub, nil
}

// FindSubscriptions lists the team's subscriptions without secrets.
func (s *WebhookService) FindSubscriptions(ctx context.Context) ([]*Subscription, error) {
	p, err := s.manager(ctx, false)
	if err != nil {
		return nil, err
	}
	subs, err := s.Store.FindSubscriptions(ctx, p.TeamID)
	for _, sub := range subs {
		sub.Secret = ""
	}
	return subs, err
}

// FindSubscription returns one subscription without its secret.
func (s *WebhookService) FindSubscription(ctx context.Context, id string) (*Subscription, error) {
	p, err := s.manager(ctx, false)
	if err != nil {
		return nil, err
	}
	sub, err := s.Store.FindSubscription(ctx, p.TeamID, id)
	if err != nil {
		return nil, err
	}
	sub.Secret = ""
	return sub, nil
}

// UpdateSubscription changes url, events, description or enabled. Disabling
// cancels the subscription's pending deliveries: they become failed at once,
// with an error saying why, and can be retried by hand once it is enabled
// again.
func (s *WebhookService) UpdateSubscription(ctx context.Context, id string, in SubscriptionInput) (*Subscription, error) {
	p, err := s.manager(ctx, true)
	if err != nil {
		return nil, err
	}
	var upd SubscriptionUpdate
	if in.URL != nil {
		u, err := s.checkURL(ctx, *in.URL)
		if err != nil {
			return nil, err
		}
		upd.URL = &u
	}
	if in.Events != nil {
		if upd.Events, err = checkEvents(in.Events); err != nil {
			return nil, err
		}
	}
	if in.Description != nil {
		if err := checkDescription(*in.Description); err != nil {
			return nil, err
		}
	}
	upd.Description, upd.Enabled = in.Description, in.Enabled
	now := s.Now().UTC()
	sub, err := s.Store.UpdateSubscription(ctx, p.TeamID, id, upd, now)
	if err != nil {
		return nil, err
	}
	sub.Secret = ""
	if in.Enabled != nil && !*in.Enabled {
		ids, err := s.Store.CancelPendingDeliveries(ctx, p.TeamID, id, DeliveryCancelled, now)
		if err != nil {
			return nil, err
		}
		// Best effort: an entry left behind is dropped when it falls due,
		// since its delivery is no longer pending.
		if err := s.Deliverer.Cancel(ctx, ids); err != nil {
			return nil, err
		}
	}
	return sub, nil
}

// DeleteSubscription removes a subscription; its pending deliveries are dropped.
func (s *WebhookService) DeleteSubscription(ctx context.Context, id string) error {
	p, err := s.manager(ctx, true)
	if err != nil {
		return err
	}
	return s.Store.DeleteSubscription(ctx, p.TeamID, id)
}

// FindDeliveries lists a subscription's most recent deliveries.
func (s *WebhookService) FindDeliveries(ctx context.Context, id string, limit int) ([]*Delivery, error) {
	p, err := s.manager(ctx, false)
	if err != nil {
		return nil, err
	}
	if _, err := s.Store.FindSubscription(ctx, p.TeamID, id); err != nil {
		return nil, err
	}
	return s.Store.FindDeliveries(ctx, p.TeamID, id, limit)
}

// RetryDelivery schedules one more attempt of a failed delivery now.
func (s *WebhookService) RetryDelivery(ctx context.Context, subID, id string) (*Delivery, error) {
	p, err := s.manager(ctx, true)
	if err != nil {
		return nil, err
	}
	d, err := s.Store.RetryDelivery(ctx, p.TeamID, subID, id, s.Now().UTC())
	if err != nil {
		return nil, err
	}
	if err := s.Deliverer.Schedule(ctx, d); err != nil {
		return nil, err
	}
	return d, nil
}

// TestResult is the answer of the test endpoint.
type TestResult struct {
	Success      bool      `json:"success"`
	DeliveryID   string    `json:"deliveryId"`
	EventID      string    `json:"eventId"`
	StatusCode   *int      `json:"statusCode"`
	ResponseTime int64     `json:"responseTime"`
	Error        string    `json:"error,omitempty"`
	Delivery     *Delivery `json:"delivery"`
}

// SendTest sends a document.generated test event to the subscription now and
// records it in the delivery history. Test events are not retried on their
// own; a failed one can be retried by hand.
func (s *WebhookService) SendTest(ctx context.Context, id string) (*TestResult, error) {
	p, err := s.manager(ctx, true)
	if err != nil {
		return nil, err
	}
	sub, err := s.Store.FindSubscription(ctx, p.TeamID, id)
	if err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	exp := now.Add(24 * time.Hour)
	e, err := NewEvent(sub.TeamID, EventDocumentGenerated, now, map[string]any{
		"jobId": "job_test", "templateId": "tpl_test", "format": "pdf", "status": StatusCompleted,
		"downloadUrl": "https://example.invalid/test.pdf", "expiresAt": exp, "generatedAt": now,
		"metadata": map[string]any{"test": true},
	})
	if err != nil {
		return nil, err
	}
	d := &Delivery{ID: NewTimeID("dlv", now), EventID: e.ID, Event: e.Type, Status: DeliveryPending, MaxAttempts: 1,
		CreatedAt: now, SubscriptionID: sub.ID, TeamID: sub.TeamID, Payload: e.Payload, RequestID: RequestIDFrom(ctx)}
	if err := s.Store.CreateDelivery(ctx, d); err != nil {
		return nil, err
	}
	// A test event counts towards the subscription's attempts in flight and
	// per second, but never waits for room: the caller is waiting. The
	// slot is given back even if the attempt panics (the request's recover
	// answers 500 and the server goes on): a lost one would hold back the
	// subscription's deliveries for good. A send that panicked counts as
	// sent, since the request may have gone out.
	s.Deliverer.gate.acquire(sub.ID)
	sent := true
	defer func() {
		s.Deliverer.gate.release(sub.ID, sent, s.Deliverer.Now())
		notify(s.Deliverer.wake)
	}()
	d, sent, err = s.Deliverer.attempt(ctx, d, sub)
	if err != nil {
		return nil, err
	}
	r := &TestResult{Success: d.Status == DeliverySuccess, DeliveryID: d.ID, EventID: d.EventID, StatusCode: d.StatusCode, Error: d.Error, Delivery: d}
	if d.ResponseTime != nil {
		r.ResponseTime = *d.ResponseTime
	}
	return r, nil
}

// Sweep is the janitor task for webhooks: events and ended deliveries older
// than WebhookRetention are removed (pending ones are kept until they end).
func (s *WebhookService) Sweep(ctx context.Context) error {
	st, err := s.Store.DeleteWebhookHistory(ctx, s.Now().UTC().Add(-WebhookRetention))
	logger := s.Logger
	if logger == nil {
		logger = slog.Default()
	}
	st.Log(logger, "janitor: webhook history", err)
	return err
}

// NewEvent builds an event with the spec's body {event, timestamp, data}.
func NewEvent(teamID, typ string, now time.Time, data any) (*Event, error) {
	body, err := json.Marshal(struct {
		Event     string    `json:"event"`
		Timestamp time.Time `json:"timestamp"`
		Data      any       `json:"data"`
	}{typ, now.UTC(), data})
	if err != nil {
		return nil, err
	}
	return &Event{ID: NewTimeID("evt", now), TeamID: teamID, Type: typ, Payload: body, CreatedAt: now.UTC()}, nil
}

// Status is the status a delivery takes after the attempt: success,
// pending when another attempt is planned, else failed.
func (a Attempt) Status() string {
	switch {
	case a.Success:
		return DeliverySuccess
	case a.NextRetryAt != nil:
		return DeliveryPending
	}
	return DeliveryFailed
}

// Ended reports whether the delivery counts among a team's ended
// deliveries (dashboard health, the stores' delivery_hours): it succeeded
// or failed, and was attempted. A store that changes a delivery's status
// or attempt time takes the row before out of its hour's count and puts
// the row after in.
func (d *Delivery) Ended() bool {
	return d.AttemptedAt != nil && (d.Status == DeliverySuccess || d.Status == DeliveryFailed)
}

// ErrNotRetryable is RetryDelivery's error for a delivery that has not
// failed.
func ErrNotRetryable(status string) error {
	return (&Error{Code: ECodeNotRetryableDelivery, Message: "only failed deliveries can be retried; this one is " + status}).WithInfo("status", status)
}

// Wants reports whether the subscription asks for events of type typ.
func (s *Subscription) Wants(typ string) bool { return slices.Contains(s.Events, typ) }

// DeliveryTo is the pending delivery of the event to subscription s, as
// dispatch creates it.
func (e *Event) DeliveryTo(s *Subscription, maxAttempts int, now time.Time) *Delivery {
	return &Delivery{ID: NewTimeID("dlv", now), EventID: e.ID, Event: e.Type, Status: DeliveryPending, MaxAttempts: maxAttempts,
		CreatedAt: now, SubscriptionID: s.ID, TeamID: e.TeamID, Payload: e.Payload, RequestID: e.RequestID}
}
