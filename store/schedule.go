package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"folio/app"
)

var _ app.WebhookSchedule = (*Bolt)(nil)

// Webhook schedule keys sort by due time: due(8, unix ms) + delivery id.
type attemptItem struct {
	DeliveryID     string `json:"d"`
	SubscriptionID string `json:"s,omitempty"`
	Attempt        int    `json:"a"`
	LeaseUntil     int64  `json:"l,omitempty"`
}

func attemptKey(due time.Time, id string) []byte {
	k := make([]byte, 8, 8+len(id))
	binary.BigEndian.PutUint64(k, uint64(max(due.UnixMilli(), 0)))
	return append(k, id...)
}

// putAttempt stores e under its key unless that key is already scheduled:
// scheduling the same attempt twice keeps the first entry and its lease.
func putAttempt(bk *bolt.Bucket, e *app.ScheduleEntry) error {
	e.Key = attemptKey(e.Due, e.DeliveryID)
	if bk.Get(e.Key) != nil {
		return nil
	}
	v, _ := json.Marshal(attemptItem{DeliveryID: e.DeliveryID, SubscriptionID: e.SubscriptionID, Attempt: e.Attempt})
	return bk.Put(e.Key, v)
}

// ScheduleAttempts adds attempts to the schedule.
func (b *Bolt) ScheduleAttempts(_ context.Context, entries ...*app.ScheduleEntry) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketWebhooks)
		for _, e := range entries {
			if err := putAttempt(bk, e); err != nil {
				return err
			}
		}
		return nil
	})
}

// ClaimDueAttempts leases up to max due, unleased attempts that admit lets
// through, in one transaction. A read-only pass looks first, so a claimer
// finding nothing due writes nothing.
func (b *Bolt) ClaimDueAttempts(_ context.Context, now time.Time, lease time.Duration, max int, admit app.Admit) ([]*app.ScheduleEntry, time.Time, error) {
	var due bool
	var next time.Time
	err := b.db.View(func(tx *bolt.Tx) error {
		var err error
		due, next, err = scanDueAttempts(tx.Bucket(bucketWebhooks), now, func(k []byte, it *attemptItem) (bool, time.Time) {
			return true, time.Time{}
		}, 1)
		return err
	})
	if err != nil || !due {
		return nil, next, err
	}
	var out []*app.ScheduleEntry
	err = b.db.Update(func(tx *bolt.Tx) error { // rolled back, not committed, when nothing is claimed
		out = nil
		bk := tx.Bucket(bucketWebhooks)
		var claimed [][]byte
		var items []attemptItem
		var err error
		_, next, err = scanDueAttempts(bk, now, func(k []byte, it *attemptItem) (bool, time.Time) {
			if admit != nil {
				if ok, reopen := admit(it.SubscriptionID, 0, now); !ok {
					return false, reopen
				}
			}
			claimed, items = append(claimed, bytes.Clone(k)), append(items, *it)
			return true, time.Time{}
		}, max)
		if err != nil {
			return err
		}
		if len(claimed) == 0 {
			return errNothingClaimed
		}
		for i, k := range claimed {
			it := items[i]
			it.LeaseUntil = now.Add(lease).UnixMilli()
			nv, _ := json.Marshal(it)
			if err := bk.Put(k, nv); err != nil {
				return err
			}
			out = append(out, &app.ScheduleEntry{DeliveryID: it.DeliveryID, SubscriptionID: it.SubscriptionID, Attempt: it.Attempt,
				Due: time.UnixMilli(int64(binary.BigEndian.Uint64(k[:8]))), Key: k})
		}
		return nil
	})
	if errors.Is(err, errNothingClaimed) {
		return nil, next, nil
	}
	if err != nil {
		return nil, time.Time{}, err
	}
	return out, next, nil
}

// errNothingClaimed rolls back a claim that leased nothing (every due
// entry's subscription refused): no commit, no fsync.
var errNothingClaimed = errors.New("nothing claimed")

// scanDueAttempts offers due, unleased entries to take, earliest first,
// until it took max. It reports whether it took any, and otherwise the
// earliest time worth looking again: the next entry's due time or the
// earliest reopening take named.
func scanDueAttempts(bk *bolt.Bucket, now time.Time, take func(k []byte, it *attemptItem) (bool, time.Time), max int) (bool, time.Time, error) {
	var next time.Time
	earlier := func(t time.Time) {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	taken := 0
	nowMS := now.UnixMilli()
	// refused are the subscriptions take refused in this scan, as their
	// members in an entry's JSON ("s":"id"): the send gate refuses a
	// subscription's other entries too (its count only grows while a scan
	// runs), so they are passed over without decoding them. A subscription
	// whose endpoint is down keeps thousands of due entries; decoding each
	// on every claim (and a claim follows every event) took 30 ms of CPU
	// per claim in the 10M janitor pass (docs/performance.md, seventh
	// session). A member cannot match inside another string: a quote
	// there is escaped.
	var refused [][]byte
	c := bk.Cursor()
next:
	for k, v := c.First(); k != nil && taken < max; k, v = c.Next() {
		due := int64(binary.BigEndian.Uint64(k[:8]))
		if due > nowMS {
			earlier(time.UnixMilli(due))
			break
		}
		for _, r := range refused {
			if bytes.Contains(v, r) {
				continue next
			}
		}
		var it attemptItem
		if err := json.Unmarshal(v, &it); err != nil {
			return false, time.Time{}, fmt.Errorf("schedule entry %x: %w", k, err)
		}
		if it.LeaseUntil > nowMS {
			continue
		}
		ok, reopen := take(k, &it)
		if !ok {
			earlier(reopen)
			if it.SubscriptionID != "" && len(refused) < 64 {
				q, _ := json.Marshal(it.SubscriptionID)
				refused = append(refused, append([]byte(`"s":`), q...))
			}
			continue
		}
		taken++
	}
	return taken > 0, next, nil
}

// ReplaceAttempt removes e and schedules next (if any) in one transaction.
// Concurrent calls share a commit (bbolt's Batch; the function is safe to
// run twice).
func (b *Bolt) ReplaceAttempt(_ context.Context, e, next *app.ScheduleEntry) error {
	return b.db.Batch(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketWebhooks)
		if err := bk.Delete(e.Key); err != nil {
			return err
		}
		if next == nil {
			return nil
		}
		return putAttempt(bk, next)
	})
}

// RemoveAttempts drops every entry of the given deliveries.
func (b *Bolt) RemoveAttempts(_ context.Context, deliveryIDs ...string) error {
	drop := make(map[string]bool, len(deliveryIDs))
	for _, id := range deliveryIDs {
		drop[id] = true
	}
	return b.db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketWebhooks)
		var keys [][]byte
		if err := bk.ForEach(func(k, _ []byte) error {
			if drop[string(k[8:])] {
				keys = append(keys, bytes.Clone(k))
			}
			return nil
		}); err != nil {
			return err
		}
		for _, k := range keys {
			if err := bk.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}

// ReleaseAttemptLeases clears every lease (start-up).
func (b *Bolt) ReleaseAttemptLeases(context.Context) (int, error) {
	n := 0
	err := b.db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketWebhooks)
		c := bk.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			var it attemptItem
			if err := json.Unmarshal(v, &it); err != nil {
				return err
			}
			if it.LeaseUntil == 0 {
				continue
			}
			it.LeaseUntil = 0
			nv, _ := json.Marshal(it)
			if err := bk.Put(bytes.Clone(k), nv); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// ScheduledAttempts lists every planned attempt, earliest first.
func (b *Bolt) ScheduledAttempts(context.Context) ([]*app.ScheduleEntry, error) {
	var out []*app.ScheduleEntry
	err := b.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketWebhooks).ForEach(func(k, v []byte) error {
			var it attemptItem
			if err := json.Unmarshal(v, &it); err != nil {
				return fmt.Errorf("schedule entry %x: %w", k, err)
			}
			out = append(out, &app.ScheduleEntry{DeliveryID: it.DeliveryID, SubscriptionID: it.SubscriptionID, Attempt: it.Attempt,
				Due: time.UnixMilli(int64(binary.BigEndian.Uint64(k[:8]))), Key: bytes.Clone(k)})
			return nil
		})
	})
	return out, err
}
