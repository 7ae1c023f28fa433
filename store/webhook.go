package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"folio/app"
	"folio/store/internal/scan"
)

var _ app.WebhookStore = (*DB)(nil)

// CreateSubscription inserts a subscription.
func (db *DB) CreateSubscription(ctx context.Context, s *app.Subscription) error {
	_, err := db.write.ExecContext(ctx, `INSERT INTO webhook_subscriptions (`+scan.SubscriptionCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.TeamID, s.URL, mustJSON(s.Events), s.Description, boolInt(s.Enabled), s.Secret, ms(s.CreatedAt), ms(s.UpdatedAt))
	return err
}

// FindSubscription returns one of a team's subscriptions (with its secret).
func (db *DB) FindSubscription(ctx context.Context, teamID, id string) (*app.Subscription, error) {
	return scan.Subscription(db.read.QueryRowContext(ctx, `SELECT `+scan.SubscriptionCols+` FROM webhook_subscriptions WHERE team_id = ? AND id = ?`, teamID, id))
}

// FindSubscriptions lists a team's subscriptions, oldest first.
func (db *DB) FindSubscriptions(ctx context.Context, teamID string) ([]*app.Subscription, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+scan.SubscriptionCols+` FROM webhook_subscriptions WHERE team_id = ? ORDER BY created_at, rowid`, teamID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scan.List(rows, scan.Subscription)
}

// UpdateSubscription applies the given fields.
func (db *DB) UpdateSubscription(ctx context.Context, teamID, id string, upd app.SubscriptionUpdate, now time.Time) (*app.Subscription, error) {
	sets, args := []string{"updated_at = ?"}, []any{ms(now)}
	if upd.URL != nil {
		sets, args = append(sets, "url = ?"), append(args, *upd.URL)
	}
	if upd.Events != nil {
		sets, args = append(sets, "events = ?"), append(args, mustJSON(upd.Events))
	}
	if upd.Description != nil {
		sets, args = append(sets, "description = ?"), append(args, *upd.Description)
	}
	if upd.Enabled != nil {
		sets, args = append(sets, "enabled = ?"), append(args, boolInt(*upd.Enabled))
	}
	return scan.Subscription(db.write.QueryRowContext(ctx, `UPDATE webhook_subscriptions SET `+strings.Join(sets, ", ")+
		` WHERE team_id = ? AND id = ? RETURNING `+scan.SubscriptionCols, append(args, teamID, id)...))
}

// DeleteSubscription removes a subscription and its deliveries.
func (db *DB) DeleteSubscription(ctx context.Context, teamID, id string) error {
	return db.tx(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM webhook_subscriptions WHERE team_id = ? AND id = ?`, teamID, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return app.ErrNotFound(app.ECodeSubscriptionNotFound, "webhook subscription")
		}
		// Its ended deliveries leave the hourly counts (rollup.go).
		if _, err := tx.ExecContext(ctx, `UPDATE delivery_hours SET count = delivery_hours.count - d.n
			FROM (SELECT team_id, attempted_at / 3600000 AS slot, status, COUNT(*) AS n FROM webhook_deliveries
				WHERE subscription_id = ? AND attempted_at IS NOT NULL AND status IN ('success', 'failed') GROUP BY 1, 2, 3) AS d
			WHERE delivery_hours.team_id = d.team_id AND delivery_hours.slot = d.slot AND delivery_hours.status = d.status`, id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE subscription_id = ?`, id)
		return err
	})
}

// insertEvents stores events in the outbox, except those no enabled
// subscription of their team asks for: they would create no delivery, and
// a team without webhooks should not keep every job's payload.
func insertEvents(ctx context.Context, tx *Tx, events []*app.Event) error {
	_, err := storeEvents(ctx, tx, events)
	return err
}

// storeEvents is insertEvents, returning the events it stored.
func storeEvents(ctx context.Context, tx *Tx, events []*app.Event) ([]*app.Event, error) {
	return storeWanted(ctx, tx, events, map[string]map[string]bool{})
}

// outbox stores events in tx (scan.Outbox: only those an enabled
// subscription of their team asks for).
func outbox(ctx context.Context, tx *Tx) scan.Outbox {
	return scan.Outbox{
		Subscribed: func(teamID string) (map[string]bool, error) { return subscribedEvents(ctx, tx, teamID) },
		Insert: func(e *app.Event) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO events (id, team_id, type, payload, created_at, request_id) VALUES (?, ?, ?, ?, ?, ?)`,
				e.ID, e.TeamID, e.Type, string(e.Payload), ms(e.CreatedAt), e.RequestID)
			return err
		},
	}
}

// buildEvents builds the events of a job's end with build and stores those
// an enabled subscription of teamID asks for, returning them (Outbox.Build).
func buildEvents(ctx context.Context, tx *Tx, teamID string, build func() ([]*app.Event, error)) ([]*app.Event, error) {
	return outbox(ctx, tx).Build(teamID, build)
}

// storeWanted is storeEvents with the subscriptions of some teams already
// read (wanted: team -> event type -> wanted).
func storeWanted(ctx context.Context, tx *Tx, events []*app.Event, wanted map[string]map[string]bool) ([]*app.Event, error) {
	return outbox(ctx, tx).Store(events, wanted)
}

// subscribedEvents returns the event types the team's enabled
// subscriptions ask for.
func subscribedEvents(ctx context.Context, tx *Tx, teamID string) (map[string]bool, error) {
	rows, err := tx.QueryContext(ctx, `SELECT events FROM webhook_subscriptions WHERE team_id = ? AND enabled = 1`, teamID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scan.SubscribedTypes(rows)
}

// DispatchEvent creates the event's deliveries and marks it dispatched. The
// event's payload is dropped then (each delivery keeps its own copy). An
// event that is not in the outbox (no subscription wanted it, or it was
// pruned) creates nothing.
func (db *DB) DispatchEvent(ctx context.Context, e *app.Event, maxAttempts int, now time.Time) ([]*app.Delivery, error) {
	var out []*app.Delivery
	err := db.tx(ctx, func(tx *Tx) error {
		out = nil
		var dispatched int
		err := tx.QueryRowContext(ctx, `SELECT dispatched FROM events WHERE id = ?`, e.ID).Scan(&dispatched)
		if errors.Is(err, sql.ErrNoRows) || dispatched == 1 {
			return nil
		} else if err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT `+scan.SubscriptionCols+` FROM webhook_subscriptions WHERE team_id = ? AND enabled = 1`, e.TeamID)
		if err != nil {
			return err
		}
		subs, err := scan.List(rows, scan.Subscription)
		rows.Close()
		if err != nil {
			return err
		}
		for _, s := range subs {
			if !s.Wants(e.Type) {
				continue
			}
			d := e.DeliveryTo(s, maxAttempts, now)
			res, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO webhook_deliveries (`+scan.DeliveryInsertCols+`)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, scan.DeliveryInsertArgs(d)...)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 1 {
				out = append(out, d)
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE events SET dispatched = 1, payload = '' WHERE id = ?`, e.ID)
		return err
	})
	return out, err
}

// UndispatchedEvents lists events not yet turned into deliveries.
func (db *DB) UndispatchedEvents(ctx context.Context, limit int) ([]*app.Event, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+scan.EventCols+` FROM events WHERE dispatched = 0 ORDER BY created_at LIMIT ?`, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scan.List(rows, scan.Event)
}

// CreateDelivery inserts a delivery made outside dispatch.
func (db *DB) CreateDelivery(ctx context.Context, d *app.Delivery) error {
	_, err := db.write.ExecContext(ctx, `INSERT INTO webhook_deliveries (`+scan.DeliveryInsertCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, scan.DeliveryInsertArgs(d)...)
	return err
}

// FindDelivery returns a delivery by id (for the deliverer).
func (db *DB) FindDelivery(ctx context.Context, id string) (*app.Delivery, error) {
	return scan.Delivery(db.read.QueryRowContext(ctx, `SELECT `+scan.DeliveryCols+` FROM webhook_deliveries WHERE id = ?`, id))
}

// FindDeliveries lists a subscription's newest deliveries.
func (db *DB) FindDeliveries(ctx context.Context, teamID, subscriptionID string, limit int) ([]*app.Delivery, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+scan.DeliveryCols+` FROM webhook_deliveries WHERE team_id = ? AND subscription_id = ?
		ORDER BY created_at DESC, rowid DESC LIMIT ?`, teamID, subscriptionID, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scan.List(rows, scan.Delivery)
}

// RecordAttempt stores an attempt's outcome unless that attempt number is
// already recorded.
func (db *DB) RecordAttempt(ctx context.Context, id string, a app.Attempt) (*app.Delivery, error) {
	status := a.Status()
	var code any
	if a.StatusCode != nil {
		code = *a.StatusCode
	}
	var d *app.Delivery
	err := db.tx(ctx, func(tx *Tx) error {
		var was string
		var wasAt sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT status, attempted_at FROM webhook_deliveries WHERE id = ?`, id).Scan(&was, &wasAt)
		if errors.Is(err, sql.ErrNoRows) {
			return app.ErrNotFound(app.ECodeDeliveryNotFound, "delivery")
		} else if err != nil {
			return err
		}
		d, err = scan.Delivery(tx.QueryRowContext(ctx, `UPDATE webhook_deliveries SET attempts = ?, status = ?, status_code = ?,
			response_time_ms = ?, error = ?, attempted_at = ?, next_retry_at = ? WHERE id = ? AND attempts = ? - 1 RETURNING `+scan.DeliveryCols,
			a.Number, status, code, a.ResponseTime, a.Error, ms(a.At), msPtr(a.NextRetryAt), id, a.Number))
		if app.ErrorCode(err) == app.ECodeDeliveryNotFound {
			d, err = scan.Delivery(tx.QueryRowContext(ctx, `SELECT `+scan.DeliveryCols+` FROM webhook_deliveries WHERE id = ?`, id))
			return err
		} else if err != nil {
			return err
		}
		if err := countDelivery(ctx, tx, &app.Delivery{TeamID: d.TeamID, Status: was, AttemptedAt: fromNullMS(wasAt)}, -1); err != nil {
			return err
		}
		return countDelivery(ctx, tx, d, 1)
	})
	return d, err
}

// RetryDelivery allows one more attempt of a failed delivery.
func (db *DB) RetryDelivery(ctx context.Context, teamID, subscriptionID, id string, now time.Time) (*app.Delivery, error) {
	var d *app.Delivery
	err := db.tx(ctx, func(tx *Tx) error {
		cur, err := scan.Delivery(tx.QueryRowContext(ctx, `SELECT `+scan.DeliveryCols+` FROM webhook_deliveries WHERE team_id = ? AND subscription_id = ? AND id = ?`,
			teamID, subscriptionID, id))
		if err != nil {
			return err
		}
		if cur.Status != app.DeliveryFailed {
			return app.ErrNotRetryable(cur.Status)
		}
		d, err = scan.Delivery(tx.QueryRowContext(ctx, `UPDATE webhook_deliveries SET status = 'pending', max_attempts = attempts + 1, next_retry_at = ?
			WHERE id = ? RETURNING `+scan.DeliveryCols, ms(now), id))
		if err != nil {
			return err
		}
		return countDelivery(ctx, tx, cur, -1)
	})
	return d, err
}

// CancelPendingDeliveries marks a subscription's pending deliveries failed
// with reason and returns their ids.
func (db *DB) CancelPendingDeliveries(ctx context.Context, teamID, subscriptionID, reason string, now time.Time) ([]string, error) {
	var ids []string
	err := db.tx(ctx, func(tx *Tx) error {
		// Those attempted before count as failed in their attempt's hour (rollup.go).
		if _, err := tx.ExecContext(ctx, `INSERT INTO delivery_hours (team_id, slot, status, count)
			SELECT team_id, attempted_at / 3600000, 'failed', COUNT(*) FROM webhook_deliveries
			WHERE team_id = ? AND subscription_id = ? AND status = 'pending' AND attempted_at IS NOT NULL GROUP BY 1, 2
			ON CONFLICT DO UPDATE SET count = count + excluded.count`, teamID, subscriptionID); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `UPDATE webhook_deliveries SET status = 'failed', error = ?, next_retry_at = NULL
			WHERE team_id = ? AND subscription_id = ? AND status = 'pending' RETURNING id`, reason, teamID, subscriptionID)
		if err != nil {
			return err
		}
		ids, err = scanStrings(rows)
		return err
	})
	return ids, err
}

// PendingDeliveries lists deliveries waiting for an attempt, without their
// payloads (the sweep needs only their schedule).
func (db *DB) PendingDeliveries(ctx context.Context) ([]*app.Delivery, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+scan.DeliveryNoPayloadCols+` FROM webhook_deliveries WHERE status = 'pending'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scan.List(rows, scan.Delivery)
}
