package postgres

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"folio/app"
)

var _ app.WebhookSchedule = (*DB)(nil)

// attemptKey is an entry's key as the bbolt schedule makes it: the due
// time (8 bytes, Unix ms, big-endian) and the delivery id.
func attemptKey(due time.Time, id string) []byte {
	k := make([]byte, 8, 8+len(id))
	binary.BigEndian.PutUint64(k, uint64(max(due.UnixMilli(), 0)))
	return append(k, id...)
}

func splitAttemptKey(k []byte) (int64, string, error) {
	if len(k) < 8 {
		return 0, "", fmt.Errorf("schedule key of %d bytes", len(k))
	}
	return int64(binary.BigEndian.Uint64(k[:8])), string(k[8:]), nil
}

func insertAttempt(ctx context.Context, q querier, e *app.ScheduleEntry) error {
	e.Key = attemptKey(e.Due, e.DeliveryID)
	due, _, _ := splitAttemptKey(e.Key)
	_, err := q.Exec(ctx, `INSERT INTO webhook_schedule (due, delivery_id, subscription_id, attempt) VALUES ($1, $2, $3, $4)
		ON CONFLICT (due, delivery_id) DO NOTHING`, due, e.DeliveryID, e.SubscriptionID, e.Attempt)
	return err
}

// ScheduleAttempts adds attempts; one already scheduled under the same key
// keeps its entry and lease.
func (db *DB) ScheduleAttempts(ctx context.Context, entries ...*app.ScheduleEntry) error {
	return db.tx(ctx, func(tx pgx.Tx) error {
		for _, e := range entries {
			if err := insertAttempt(ctx, tx, e); err != nil {
				return err
			}
		}
		return nil
	})
}

type dueAttempt struct {
	due                      int64
	deliveryID, subscription string
	attempt                  int32
}

// claimLock is the key of the transaction advisory lock a claim of due
// webhook attempts holds.
const claimLock int64 = 0x466f6c696f486f6b // "FolioHok"

// inFlightWindow is how long after its claim another replica's lease
// counts as an attempt in flight: the default attempt timeout and a
// margin for recording it.
const inFlightWindow = app.WebhookAttemptTimeout + 10*time.Second

// ClaimDueAttempts leases up to max due, unleased attempts that admit lets
// through, earliest first, in one transaction. admit learns how many
// attempts of each subscription other replicas hold (live leases of other
// owners), so the deliverers' limit of attempts in flight per subscription
// holds across replicas; claims take turns for that (claimLock). The due
// rows are also locked FOR UPDATE SKIP LOCKED, so a claim never waits for
// an entry another replica is replacing. With none taken it returns the earliest time worth looking again: the
// next entry's due time or the earliest reopening admit named.
func (db *DB) ClaimDueAttempts(ctx context.Context, now time.Time, lease time.Duration, max int, admit app.Admit) ([]*app.ScheduleEntry, time.Time, error) {
	var out []*app.ScheduleEntry
	var next time.Time
	earlier := func(t time.Time) {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	nowMS := ms(now)
	err := db.tx(ctx, func(tx pgx.Tx) error {
		out, next = nil, time.Time{}
		// One claimer at a time across replicas, so the attempts in flight
		// elsewhere that admit is told of cannot change under it: two
		// replicas claiming at once would each see the other's new leases
		// as absent and together exceed a subscription's limit. A claim is
		// one short transaction; the attempts run outside it.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, claimLock); err != nil {
			return err
		}
		elsewhere := map[string]int{}
		if admit != nil {
			// Leases taken within the window: an attempt ends within its
			// timeout, so an older lease is a replica's that died or
			// stalled, and holding its subscription's slots until the
			// lease lapses would stall the subscription for no receiver.
			since := nowMS + lease.Milliseconds() - inFlightWindow.Milliseconds()
			if since < nowMS {
				since = nowMS
			}
			rows, err := tx.Query(ctx, `SELECT subscription_id, COUNT(*) FROM webhook_schedule
				WHERE lease_until > $1 AND lease_owner <> $2 AND subscription_id <> '' GROUP BY 1`, since, db.owner)
			if err != nil {
				return err
			}
			var sub string
			var n int
			if _, err := pgx.ForEachRow(rows, []any{&sub, &n}, func() error { elsewhere[sub] = n; return nil }); err != nil {
				return err
			}
		}
		rows, err := tx.Query(ctx, `SELECT due, delivery_id, subscription_id, attempt FROM webhook_schedule
			WHERE due <= $1 AND (lease_until IS NULL OR lease_until <= $1) ORDER BY due, delivery_id FOR UPDATE SKIP LOCKED`, nowMS)
		if err != nil {
			return err
		}
		due, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (dueAttempt, error) {
			var a dueAttempt
			err := r.Scan(&a.due, &a.deliveryID, &a.subscription, &a.attempt)
			return a, err
		})
		if err != nil {
			return err
		}
		var taken []dueAttempt
		for _, a := range due {
			if len(taken) == max {
				break
			}
			if admit != nil {
				if ok, reopen := admit(a.subscription, elsewhere[a.subscription], now); !ok {
					earlier(reopen)
					continue
				}
			}
			taken = append(taken, a)
		}
		if len(taken) < max {
			var first *int64
			if err := tx.QueryRow(ctx, `SELECT MIN(due) FROM webhook_schedule WHERE due > $1`, nowMS).Scan(&first); err != nil {
				return err
			}
			if first != nil {
				earlier(time.UnixMilli(*first))
			}
		}
		for _, a := range taken {
			if _, err := tx.Exec(ctx, `UPDATE webhook_schedule SET lease_until = $1, lease_owner = $2 WHERE due = $3 AND delivery_id = $4`,
				ms(now.Add(lease)), db.owner, a.due, a.deliveryID); err != nil {
				return err
			}
			at := time.UnixMilli(a.due)
			out = append(out, &app.ScheduleEntry{DeliveryID: a.deliveryID, SubscriptionID: a.subscription, Attempt: int(a.attempt),
				Due: at, Key: attemptKey(at, a.deliveryID)})
		}
		return nil
	})
	if err != nil {
		return nil, time.Time{}, err
	}
	return out, next, nil
}

// ReplaceAttempt removes e and schedules next (if any) in one transaction.
func (db *DB) ReplaceAttempt(ctx context.Context, e, next *app.ScheduleEntry) error {
	due, id, err := splitAttemptKey(e.Key)
	if err != nil {
		return err
	}
	return db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM webhook_schedule WHERE due = $1 AND delivery_id = $2`, due, id); err != nil {
			return err
		}
		if next == nil {
			return nil
		}
		return insertAttempt(ctx, tx, next)
	})
}

// RemoveAttempts drops every entry of the given deliveries.
func (db *DB) RemoveAttempts(ctx context.Context, deliveryIDs ...string) error {
	_, err := db.pool.Exec(ctx, `DELETE FROM webhook_schedule WHERE delivery_id = ANY($1)`, deliveryIDs)
	return err
}

// ReleaseAttemptLeases clears this process's leases (as ReleaseLeases does
// for the job queue: other replicas' attempts may be in flight).
func (db *DB) ReleaseAttemptLeases(ctx context.Context) (int, error) {
	tag, err := db.pool.Exec(ctx, `UPDATE webhook_schedule SET lease_until = NULL, lease_owner = ''
		WHERE lease_owner = $1 AND lease_until IS NOT NULL`, db.owner)
	if err != nil {
		return 0, err
	}
	return int(tag.RowsAffected()), nil
}

// ScheduledAttempts lists every planned attempt, earliest first.
func (db *DB) ScheduledAttempts(ctx context.Context) ([]*app.ScheduleEntry, error) {
	rows, err := db.pool.Query(ctx, `SELECT due, delivery_id, subscription_id, attempt FROM webhook_schedule ORDER BY due, delivery_id`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*app.ScheduleEntry, error) {
		var due int64
		var attempt int32
		var e app.ScheduleEntry
		if err := r.Scan(&due, &e.DeliveryID, &e.SubscriptionID, &attempt); err != nil {
			return nil, err
		}
		e.Attempt, e.Due = int(attempt), time.UnixMilli(due)
		e.Key = attemptKey(e.Due, e.DeliveryID)
		return &e, nil
	})
}
