package postgres

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"folio/app"
	"folio/store/internal/scan"
)

var _ app.WebhookStore = (*DB)(nil)

// CreateSubscription inserts a subscription.
func (db *DB) CreateSubscription(ctx context.Context, s *app.Subscription) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO webhook_subscriptions (`+scan.SubscriptionCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		s.ID, s.TeamID, s.URL, mustJSON(s.Events), s.Description, s.Enabled, s.Secret, ms(s.CreatedAt), ms(s.UpdatedAt))
	return err
}

// FindSubscription returns one of a team's subscriptions (with its secret).
func (db *DB) FindSubscription(ctx context.Context, teamID, id string) (*app.Subscription, error) {
	return scan.Subscription(db.pool.QueryRow(ctx, `SELECT `+scan.SubscriptionCols+` FROM webhook_subscriptions WHERE team_id = $1 AND id = $2`, teamID, id))
}

// FindSubscriptions lists a team's subscriptions, oldest first.
func (db *DB) FindSubscriptions(ctx context.Context, teamID string) ([]*app.Subscription, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+scan.SubscriptionCols+` FROM webhook_subscriptions WHERE team_id = $1 ORDER BY created_at, seq`, teamID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scan.List(rows, scan.Subscription)
}

// UpdateSubscription applies the given fields.
func (db *DB) UpdateSubscription(ctx context.Context, teamID, id string, upd app.SubscriptionUpdate, now time.Time) (*app.Subscription, error) {
	sets, args := []string{"updated_at = $1"}, []any{ms(now)}
	set := func(col string, v any) {
		args = append(args, v)
		sets = append(sets, col+" = $"+strconv.Itoa(len(args)))
	}
	if upd.URL != nil {
		set("url", *upd.URL)
	}
	if upd.Events != nil {
		set("events", mustJSON(upd.Events))
	}
	if upd.Description != nil {
		set("description", *upd.Description)
	}
	if upd.Enabled != nil {
		set("enabled", *upd.Enabled)
	}
	n := len(args)
	return scan.Subscription(db.pool.QueryRow(ctx, `UPDATE webhook_subscriptions SET `+strings.Join(sets, ", ")+
		` WHERE team_id = $`+strconv.Itoa(n+1)+` AND id = $`+strconv.Itoa(n+2)+` RETURNING `+scan.SubscriptionCols, append(args, teamID, id)...))
}

// DeleteSubscription removes a subscription and its deliveries; its ended
// deliveries leave the hourly counts in the same statement that deletes
// them, so an attempt recorded meanwhile is counted out as it ends.
func (db *DB) DeleteSubscription(ctx context.Context, teamID, id string) error {
	return db.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM webhook_subscriptions WHERE team_id = $1 AND id = $2`, teamID, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return app.ErrNotFound(app.ECodeSubscriptionNotFound, "webhook subscription")
		}
		_, err = tx.Exec(ctx, `WITH gone AS (DELETE FROM webhook_deliveries WHERE subscription_id = $1 RETURNING team_id, attempted_at, status)
			UPDATE delivery_hours SET count = delivery_hours.count - d.n
			FROM (SELECT team_id, attempted_at / 3600000 AS slot, status, COUNT(*) AS n FROM gone
				WHERE attempted_at IS NOT NULL AND status IN ('success', 'failed') GROUP BY 1, 2, 3) AS d
			WHERE delivery_hours.team_id = d.team_id AND delivery_hours.slot = d.slot AND delivery_hours.status = d.status`, id)
		return err
	})
}

// DispatchEvent creates the event's deliveries and marks it dispatched,
// dropping its payload (each delivery keeps a copy). The event's row is
// locked first: of replicas dispatching it at once, one creates the
// deliveries and the others find it dispatched. An event not in the
// outbox creates nothing.
func (db *DB) DispatchEvent(ctx context.Context, e *app.Event, maxAttempts int, now time.Time) ([]*app.Delivery, error) {
	var out []*app.Delivery
	err := db.tx(ctx, func(tx pgx.Tx) error {
		out = nil
		var dispatched bool
		err := tx.QueryRow(ctx, `SELECT dispatched FROM events WHERE id = $1 FOR UPDATE`, e.ID).Scan(&dispatched)
		if errors.Is(err, pgx.ErrNoRows) || dispatched {
			return nil
		} else if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+scan.SubscriptionCols+` FROM webhook_subscriptions WHERE team_id = $1 AND enabled`, e.TeamID)
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
			tag, err := tx.Exec(ctx, `INSERT INTO webhook_deliveries (`+scan.DeliveryInsertCols+`)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (event_id, subscription_id) DO NOTHING`, scan.DeliveryInsertArgs(d)...)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 1 {
				out = append(out, d)
			}
		}
		_, err = tx.Exec(ctx, `UPDATE events SET dispatched = TRUE, payload = '' WHERE id = $1`, e.ID)
		return err
	})
	return out, err
}

// UndispatchedEvents lists events not yet turned into deliveries, oldest
// first.
func (db *DB) UndispatchedEvents(ctx context.Context, limit int) ([]*app.Event, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+scan.EventCols+` FROM events WHERE NOT dispatched ORDER BY created_at LIMIT $1`, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scan.List(rows, scan.Event)
}

// CreateDelivery inserts a delivery made outside dispatch.
func (db *DB) CreateDelivery(ctx context.Context, d *app.Delivery) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO webhook_deliveries (`+scan.DeliveryInsertCols+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, scan.DeliveryInsertArgs(d)...)
	return err
}

// FindDelivery returns a delivery by id (for the deliverer).
func (db *DB) FindDelivery(ctx context.Context, id string) (*app.Delivery, error) {
	return scan.Delivery(db.pool.QueryRow(ctx, `SELECT `+scan.DeliveryCols+` FROM webhook_deliveries WHERE id = $1`, id))
}

// FindDeliveries lists a subscription's newest deliveries.
func (db *DB) FindDeliveries(ctx context.Context, teamID, subscriptionID string, limit int) ([]*app.Delivery, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+scan.DeliveryCols+` FROM webhook_deliveries WHERE team_id = $1 AND subscription_id = $2
		ORDER BY created_at DESC, seq DESC LIMIT $3`, teamID, subscriptionID, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scan.List(rows, scan.Delivery)
}

// lockDelivery locks a delivery's row for the rest of tx and reads what
// the hourly counts and the attempt check need.
func lockDelivery(ctx context.Context, tx pgx.Tx, where string, args ...any) (*app.Delivery, error) {
	var d app.Delivery
	var at *int64
	err := tx.QueryRow(ctx, `SELECT id, team_id, status, attempts, attempted_at FROM webhook_deliveries WHERE `+where+` FOR UPDATE`, args...).
		Scan(&d.ID, &d.TeamID, &d.Status, &d.Attempts, &at)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, app.ErrNotFound(app.ECodeDeliveryNotFound, "delivery")
	} else if err != nil {
		return nil, err
	}
	d.AttemptedAt = fromNullMS(at)
	return &d, nil
}

// RecordAttempt stores an attempt's outcome unless that attempt number is
// already recorded. The delivery's row is locked first: of replicas
// recording the same attempt at once (a lease that lapsed while its holder
// still ran), one records it and the others read back what it recorded.
func (db *DB) RecordAttempt(ctx context.Context, id string, a app.Attempt) (*app.Delivery, error) {
	var d *app.Delivery
	err := db.tx(ctx, func(tx pgx.Tx) error {
		was, err := lockDelivery(ctx, tx, `id = $1`, id)
		if err != nil {
			return err
		}
		if was.Attempts != a.Number-1 {
			d, err = scan.Delivery(tx.QueryRow(ctx, `SELECT `+scan.DeliveryCols+` FROM webhook_deliveries WHERE id = $1`, id))
			return err
		}
		d, err = scan.Delivery(tx.QueryRow(ctx, `UPDATE webhook_deliveries SET attempts = $1, status = $2, status_code = $3,
			response_time_ms = $4, error = $5, attempted_at = $6, next_retry_at = $7 WHERE id = $8 RETURNING `+scan.DeliveryCols,
			a.Number, a.Status(), a.StatusCode, a.ResponseTime, a.Error, ms(a.At), msPtr(a.NextRetryAt), id))
		if err != nil {
			return err
		}
		if err := countDelivery(ctx, tx, was, -1); err != nil {
			return err
		}
		return countDelivery(ctx, tx, d, 1)
	})
	return d, err
}

// RetryDelivery allows one more attempt of a failed delivery.
func (db *DB) RetryDelivery(ctx context.Context, teamID, subscriptionID, id string, now time.Time) (*app.Delivery, error) {
	var d *app.Delivery
	err := db.tx(ctx, func(tx pgx.Tx) error {
		cur, err := lockDelivery(ctx, tx, `team_id = $1 AND subscription_id = $2 AND id = $3`, teamID, subscriptionID, id)
		if err != nil {
			return err
		}
		if cur.Status != app.DeliveryFailed {
			return app.ErrNotRetryable(cur.Status)
		}
		d, err = scan.Delivery(tx.QueryRow(ctx, `UPDATE webhook_deliveries SET status = 'pending', max_attempts = attempts + 1, next_retry_at = $1
			WHERE id = $2 RETURNING `+scan.DeliveryCols, ms(now), id))
		if err != nil {
			return err
		}
		return countDelivery(ctx, tx, cur, -1)
	})
	return d, err
}

// CancelPendingDeliveries marks a subscription's pending deliveries failed
// with reason and returns their ids. Those attempted before count as
// failed in their attempt's hour, in the same statement.
func (db *DB) CancelPendingDeliveries(ctx context.Context, teamID, subscriptionID, reason string, now time.Time) ([]string, error) {
	rows, err := db.pool.Query(ctx, `WITH c AS (UPDATE webhook_deliveries SET status = 'failed', error = $3, next_retry_at = NULL
			WHERE team_id = $1 AND subscription_id = $2 AND status = 'pending' RETURNING id, team_id, attempted_at),
		h AS (INSERT INTO delivery_hours (team_id, slot, status, count)
			SELECT team_id, attempted_at / 3600000, 'failed', COUNT(*) FROM c WHERE attempted_at IS NOT NULL GROUP BY 1, 2
			ON CONFLICT (team_id, slot, status) DO UPDATE SET count = delivery_hours.count + excluded.count)
		SELECT id FROM c`, teamID, subscriptionID, reason)
	if err != nil {
		return nil, err
	}
	return scanStrings(rows)
}

// PendingDeliveries lists deliveries waiting for an attempt, without their
// payloads (the sweep needs only their schedule).
func (db *DB) PendingDeliveries(ctx context.Context) ([]*app.Delivery, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+scan.DeliveryNoPayloadCols+` FROM webhook_deliveries WHERE status = 'pending'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scan.List(rows, scan.Delivery)
}

// historyStep is how many rows one transaction of the webhook history
// sweep deletes.
const historyStep = 1000

// DeleteWebhookHistory removes dispatched events and ended (successful or
// failed) deliveries created before a time, historyStep rows a
// transaction. Rows another replica's sweep is deleting are skipped, not
// waited for.
func (db *DB) DeleteWebhookHistory(ctx context.Context, before time.Time) (app.SweepStats, error) {
	start := time.Now()
	var st app.SweepStats
	for _, s := range []struct{ table, del string }{
		{"events", `DELETE FROM events WHERE id IN (SELECT id FROM events WHERE created_at < $1 AND dispatched LIMIT $2 FOR UPDATE SKIP LOCKED)`},
		{"webhook_deliveries", `DELETE FROM webhook_deliveries WHERE id IN
			(SELECT id FROM webhook_deliveries WHERE created_at < $1 AND status <> 'pending' LIMIT $2 FOR UPDATE SKIP LOCKED)`},
	} {
		for {
			if err := ctx.Err(); err != nil {
				return st, err
			}
			t := time.Now()
			tag, err := db.pool.Exec(ctx, s.del, ms(before), historyStep)
			if err != nil {
				st.Duration = time.Since(start)
				return st, err
			}
			n := int(tag.RowsAffected())
			st.Count(s.table, n, time.Since(t))
			if n < historyStep {
				break
			}
		}
	}
	st.Duration = time.Since(start)
	return st, nil
}

// countDelivery adds delta to the hour of a delivery's last attempt for
// its status, when it counts (app.Delivery.Ended). Every statement that
// changes a delivery's status or attempt time calls it with -1 for the
// row before and +1 for the row after.
func countDelivery(ctx context.Context, tx pgx.Tx, d *app.Delivery, delta int) error {
	if !d.Ended() {
		return nil
	}
	_, err := tx.Exec(ctx, `INSERT INTO delivery_hours (team_id, slot, status, count) VALUES ($1, $2, $3, $4)
		ON CONFLICT (team_id, slot, status) DO UPDATE SET count = delivery_hours.count + excluded.count`, d.TeamID, ms(*d.AttemptedAt)/scan.HourMS, d.Status, delta)
	return err
}

// DeliveryCounts counts a team's deliveries that ended since a time: the
// hours from the first whole one on from delivery_hours, the part of an
// hour before it from the deliveries themselves.
func (db *DB) DeliveryCounts(ctx context.Context, teamID string, since time.Time) (int, int, error) {
	h0 := (ms(since) + scan.HourMS - 1) / scan.HourMS
	var ok, bad int64
	err := db.pool.QueryRow(ctx, `SELECT COALESCE(SUM(ok), 0)::bigint, COALESCE(SUM(bad), 0)::bigint FROM (
		SELECT COUNT(*) FILTER (WHERE status = 'success') AS ok, COUNT(*) FILTER (WHERE status = 'failed') AS bad FROM webhook_deliveries
			WHERE team_id = $1 AND attempted_at >= $2 AND attempted_at < $3
		UNION ALL
		SELECT SUM(count) FILTER (WHERE status = 'success'), SUM(count) FILTER (WHERE status = 'failed') FROM delivery_hours
			WHERE team_id = $1 AND slot >= $4) AS x`, teamID, ms(since), h0*scan.HourMS, h0).Scan(&ok, &bad)
	return int(ok), int(bad), err
}
