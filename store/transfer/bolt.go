package transfer

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"folio/store"
)

// copyBolt copies the bbolt queue's entries not acknowledged and the
// webhook schedule. The queue keeps its keys (priority byte, then the
// sequence number, as PostgreSQL's queue keys are), so each entry
// keeps its place and a rerun finds it copied; leases are not copied (the
// server was stopped, so none is held). The rate-limit windows are not
// copied: they last at most an hour and the replicas count afresh.
func copyBolt(ctx context.Context, o Options, b *store.Bolt, pool *pgxpool.Pool, r *Report) error {
	entries := b.QueuedEntries()
	t := Table{Name: "queue_entries", From: "bbolt", Source: int64(len(entries))}
	now := time.Now().UnixMilli()
	for start := 0; start < len(entries); start += o.BatchRows {
		batch := &pgx.Batch{}
		for _, e := range entries[start:min(start+o.BatchRows, len(entries))] {
			if len(e.Key) != 9 {
				return fmt.Errorf("queue entry %x: not a 9-byte key", e.Key)
			}
			seq := int64(binary.BigEndian.Uint64(e.Key[1:]))
			batch.Queue(`INSERT INTO queue_entries (seq, job_id, priority, created_at) OVERRIDING SYSTEM VALUE VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
				seq, e.JobID, e.Priority, now)
		}
		if err := sendBatch(ctx, pool, batch, &t.Copied); err != nil {
			return fmt.Errorf("copy the queue: %w", err)
		}
		if o.afterStep != nil {
			o.afterStep()
		}
	}
	if _, err := pool.Exec(ctx, `SELECT setval(pg_get_serial_sequence('queue_entries', 'seq'), COALESCE((SELECT max(seq) FROM queue_entries), 0) + 1, false)`); err != nil {
		return err
	}
	if err := finish(ctx, o, pool, r, t); err != nil {
		return err
	}

	attempts, err := b.ScheduledAttempts(ctx)
	if err != nil {
		return err
	}
	t = Table{Name: "webhook_schedule", From: "bbolt", Source: int64(len(attempts))}
	for start := 0; start < len(attempts); start += o.BatchRows {
		batch := &pgx.Batch{}
		for _, a := range attempts[start:min(start+o.BatchRows, len(attempts))] {
			batch.Queue(`INSERT INTO webhook_schedule (due, delivery_id, subscription_id, attempt) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
				max(a.Due.UnixMilli(), 0), a.DeliveryID, a.SubscriptionID, a.Attempt)
		}
		if err := sendBatch(ctx, pool, batch, &t.Copied); err != nil {
			return fmt.Errorf("copy the webhook schedule: %w", err)
		}
		if o.afterStep != nil {
			o.afterStep()
		}
	}
	if err := finish(ctx, o, pool, r, t); err != nil {
		return err
	}
	r.note("rate-limit windows and login throttles: not copied (they last at most an hour; the replicas count afresh)")
	return nil
}

// sendBatch runs a batch of inserts in one transaction, adding the rows
// inserted to copied.
func sendBatch(ctx context.Context, pool *pgxpool.Pool, batch *pgx.Batch, copied *int64) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		res := tx.SendBatch(ctx, batch)
		var n int64
		for range batch.Len() {
			tag, err := res.Exec()
			if err != nil {
				res.Close()
				return err
			}
			n += tag.RowsAffected()
		}
		if err := res.Close(); err != nil {
			return err
		}
		*copied += n
		return nil
	})
}

// finish counts a table's rows after its copy and records it.
func finish(ctx context.Context, o Options, pool *pgxpool.Pool, r *Report, t Table) error {
	var err error
	if t.Target, err = countPG(ctx, pool, t.Name); err != nil {
		return err
	}
	r.Tables = append(r.Tables, t)
	fmt.Fprintf(o.Log, "%s: %d entries, %d copied by this run\n", t.Name, t.Source, t.Copied)
	if t.Source != t.Target {
		r.problem("%s: %s has %d entries, PostgreSQL %d", t.Name, t.From, t.Source, t.Target)
	}
	return nil
}
