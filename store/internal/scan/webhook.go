package scan

import (
	"database/sql"
	"encoding/json"
	"errors"
	"strings"

	"folio/app"
)

// SubscriptionCols are the columns Subscription reads, from
// webhook_subscriptions (also the insert's column list).
const SubscriptionCols = `id, team_id, url, events, description, enabled, secret, created_at, updated_at`

// Subscription reads one row of SubscriptionCols; no row is the API's
// subscription-not-found error.
func Subscription(row Row) (*app.Subscription, error) {
	var s app.Subscription
	var events string
	var created, updated int64
	err := row.Scan(&s.ID, &s.TeamID, &s.URL, &events, &s.Description, &s.Enabled, &s.Secret, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound(app.ECodeSubscriptionNotFound, "webhook subscription")
	} else if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(events), &s.Events); err != nil {
		return nil, err
	}
	s.CreatedAt, s.UpdatedAt = FromMS(created), FromMS(updated)
	return &s, nil
}

// EventCols are the columns Event reads, from events.
const EventCols = `id, team_id, type, payload, created_at, request_id`

// Event reads one row of EventCols.
func Event(row Row) (*app.Event, error) {
	var e app.Event
	var payload string
	var created int64
	if err := row.Scan(&e.ID, &e.TeamID, &e.Type, &payload, &created, &e.RequestID); err != nil {
		return nil, err
	}
	e.Payload, e.CreatedAt = []byte(payload), FromMS(created)
	return &e, nil
}

// DeliveryCols are the columns Delivery reads, from webhook_deliveries.
const DeliveryCols = `id, subscription_id, team_id, event_id, event, payload, status, attempts, max_attempts, status_code, response_time_ms,
	error, attempted_at, next_retry_at, created_at, request_id`

// DeliveryNoPayloadCols is DeliveryCols with an empty payload, for lists
// that need only the deliveries' schedule.
var DeliveryNoPayloadCols = strings.Replace(DeliveryCols, "payload", "'' AS payload", 1)

// DeliveryInsertCols are the columns a new delivery is written with, in
// the order of DeliveryInsertArgs.
const DeliveryInsertCols = `id, subscription_id, team_id, event_id, event, payload, status, max_attempts, created_at, request_id`

// DeliveryInsertArgs are the values of DeliveryInsertCols for d.
func DeliveryInsertArgs(d *app.Delivery) []any {
	return []any{d.ID, d.SubscriptionID, d.TeamID, d.EventID, d.Event, string(d.Payload), d.Status, d.MaxAttempts, MS(d.CreatedAt), d.RequestID}
}

// Delivery reads one row of DeliveryCols; no row is the API's
// delivery-not-found error.
func Delivery(row Row) (*app.Delivery, error) {
	var d app.Delivery
	var payload string
	var code, rt, attempted, next sql.NullInt64
	var created int64
	err := row.Scan(&d.ID, &d.SubscriptionID, &d.TeamID, &d.EventID, &d.Event, &payload, &d.Status, &d.Attempts, &d.MaxAttempts,
		&code, &rt, &d.Error, &attempted, &next, &created, &d.RequestID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound(app.ECodeDeliveryNotFound, "delivery")
	} else if err != nil {
		return nil, err
	}
	d.Payload = []byte(payload)
	if code.Valid {
		c := int(code.Int64)
		d.StatusCode = &c
	}
	if rt.Valid {
		d.ResponseTime = &rt.Int64
	}
	d.AttemptedAt, d.NextRetryAt, d.CreatedAt = FromNullMS(attempted), FromNullMS(next), FromMS(created)
	return &d, nil
}

// HourMS is an hour in milliseconds: delivery_hours counts ended
// deliveries by hour of attempted_at (a Unix millisecond time).
const HourMS = 3600000
