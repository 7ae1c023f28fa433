package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"folio/app"
)

var _ app.WebhookSchedule = (*Bolt)(nil)

// Webhook schedule keys sort by due time: due(8, unix ms) + delivery id.
type attemptItem struct {
	DeliveryID string `json:"d"`
	Attempt    int    `json:"a"`
	LeaseUntil int64  `json:"l,omitempty"`
}

func attemptKey(due time.Time, id string) []byte {
	k := make([]byte, 8, 8+len(id))
	binary.BigEndian.PutUint64(k, uint64(max(due.UnixMilli(), 0)))
	return append(k, id...)
}

// ScheduleAttempts adds attempts to the schedule.
func (b *Bolt) ScheduleAttempts(_ context.Context, entries ...*app.ScheduleEntry) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketWebhooks)
		for _, e := range entries {
			e.Key = attemptKey(e.Due, e.DeliveryID)
			v, _ := json.Marshal(attemptItem{DeliveryID: e.DeliveryID, Attempt: e.Attempt})
			if err := bk.Put(e.Key, v); err != nil {
				return err
			}
		}
		return nil
	})
}

// ClaimDueAttempt leases the earliest due, unleased attempt.
func (b *Bolt) ClaimDueAttempt(_ context.Context, now time.Time, lease time.Duration) (*app.ScheduleEntry, time.Time, error) {
	var out *app.ScheduleEntry
	var next time.Time
	nowMS := now.UnixMilli()
	err := b.db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketWebhooks)
		c := bk.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			due := int64(binary.BigEndian.Uint64(k[:8]))
			if due > nowMS {
				next = time.UnixMilli(due)
				return nil
			}
			var it attemptItem
			if err := json.Unmarshal(v, &it); err != nil {
				return fmt.Errorf("schedule entry %x: %w", k, err)
			}
			if it.LeaseUntil > nowMS {
				continue
			}
			it.LeaseUntil = now.Add(lease).UnixMilli()
			nv, _ := json.Marshal(it)
			key := bytes.Clone(k)
			if err := bk.Put(key, nv); err != nil {
				return err
			}
			out = &app.ScheduleEntry{DeliveryID: it.DeliveryID, Attempt: it.Attempt, Due: time.UnixMilli(due), Key: key}
			return nil
		}
		return nil
	})
	return out, next, err
}

// ReplaceAttempt removes e and schedules next (if any) in one transaction.
func (b *Bolt) ReplaceAttempt(_ context.Context, e, next *app.ScheduleEntry) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketWebhooks)
		if err := bk.Delete(e.Key); err != nil {
			return err
		}
		if next == nil {
			return nil
		}
		next.Key = attemptKey(next.Due, next.DeliveryID)
		v, _ := json.Marshal(attemptItem{DeliveryID: next.DeliveryID, Attempt: next.Attempt})
		return bk.Put(next.Key, v)
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

// ScheduledDeliveryIDs returns the delivery ids with a planned attempt.
func (b *Bolt) ScheduledDeliveryIDs(context.Context) (map[string]bool, error) {
	ids := map[string]bool{}
	err := b.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketWebhooks).ForEach(func(k, _ []byte) error {
			ids[string(k[8:])] = true
			return nil
		})
	})
	return ids, err
}
