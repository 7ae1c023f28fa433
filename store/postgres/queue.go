package postgres

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"folio/app"
)

// The job queue in PostgreSQL, shared by every replica (docs/decisions.md,
// PostgreSQL: the queue):
//
//   - Enqueue inserts one row per entry; it returns once they are committed.
//   - Claim leases the first claimable row by (priority, seq) — never
//     claimed, released, or its lease past — in one UPDATE whose subquery
//     locks that row FOR UPDATE SKIP LOCKED: replicas claiming at once skip
//     each other's rows instead of waiting for them, and no row is handed
//     to two of them. The lease records its owner, this process.
//   - Renew extends the owner's lease. A lease that lapsed and was claimed
//     by another process is no longer ours: Renew fails (errLeaseLost).
//   - Ack deletes the row. A replica that dies stops renewing; its leases
//     lapse and other replicas' Claims take the entries over.
//   - ReleaseLeases frees this process's leases only: at start-up that is
//     none (a new process has a new owner), and the leases of a replica
//     that died lapse instead. Close calls it, so a replica stopped
//     gracefully hands its interrupted jobs over at once.

var _ app.Queue = (*DB)(nil)

var (
	errNotQueued = errors.New("the entry is no longer queued")
	errLeaseLost = errors.New("the entry's lease lapsed and another worker claimed it")
)

// queueKey is the entry's key: its priority byte and its seq, big-endian,
// as the bbolt queue's keys are made.
func queueKey(priority int, seq int64) []byte {
	k := make([]byte, 9)
	k[0] = byte(min(max(priority, 0), 255))
	binary.BigEndian.PutUint64(k[1:], uint64(seq))
	return k
}

func keySeq(e *app.QueueEntry) (int64, error) {
	if len(e.Key) != 9 {
		return 0, fmt.Errorf("queue entry of job %s: a key of %d bytes", e.JobID, len(e.Key))
	}
	return int64(binary.BigEndian.Uint64(e.Key[1:])), nil
}

// Enqueue adds entries in one transaction; they sort by priority then order.
func (db *DB) Enqueue(ctx context.Context, entries ...*app.QueueEntry) error {
	if len(entries) == 0 {
		return nil
	}
	now := ms(time.Now())
	return db.tx(ctx, func(tx pgx.Tx) error {
		var b pgx.Batch
		for _, e := range entries {
			b.Queue(`INSERT INTO queue_entries (job_id, priority, created_at) VALUES ($1, $2, $3) RETURNING seq`,
				e.JobID, min(max(e.Priority, 0), 255), now)
		}
		res := tx.SendBatch(ctx, &b)
		keys := make([][]byte, len(entries))
		for i, e := range entries {
			var seq int64
			if err := res.QueryRow().Scan(&seq); err != nil {
				res.Close()
				return err
			}
			keys[i] = queueKey(e.Priority, seq)
		}
		if err := res.Close(); err != nil {
			return err
		}
		for i, e := range entries {
			e.Key = keys[i]
		}
		return nil
	})
}

// Claim leases the first entry whose lease is absent or over at now.
func (db *DB) Claim(ctx context.Context, now time.Time, lease time.Duration) (*app.QueueEntry, error) {
	var seq int64
	var e app.QueueEntry
	err := db.pool.QueryRow(ctx, `UPDATE queue_entries q SET lease_until = $1, lease_owner = $2
		FROM (SELECT seq FROM queue_entries WHERE lease_until IS NULL OR lease_until <= $3
			ORDER BY priority, seq LIMIT 1 FOR UPDATE SKIP LOCKED) c
		WHERE q.seq = c.seq RETURNING q.seq, q.job_id, q.priority`, ms(now.Add(lease)), db.owner, ms(now)).
		Scan(&seq, &e.JobID, &e.Priority)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	e.Key = queueKey(e.Priority, seq)
	return &e, nil
}

// Renew extends this process's lease of a claimed entry to until (never
// shortening it). A lease that lapsed and was released, or is still ours,
// is leased again; one another process claimed since is lost.
func (db *DB) Renew(ctx context.Context, e *app.QueueEntry, until time.Time) error {
	seq, err := keySeq(e)
	if err != nil {
		return err
	}
	var owner string
	err = db.pool.QueryRow(ctx, `WITH r AS (
			UPDATE queue_entries SET lease_until = GREATEST(COALESCE(lease_until, 0), $1), lease_owner = $2
			WHERE seq = $3 AND lease_owner IN ($2, '') RETURNING lease_owner)
		SELECT lease_owner FROM r UNION ALL SELECT lease_owner FROM queue_entries WHERE seq = $3 AND NOT EXISTS (SELECT 1 FROM r)`,
		ms(until), db.owner, seq).Scan(&owner)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("renew the lease of job %s: %w", e.JobID, errNotQueued)
	case err != nil:
		return err
	case owner != db.owner:
		return fmt.Errorf("renew the lease of job %s: %w", e.JobID, errLeaseLost)
	}
	return nil
}

// Ack removes a finished entry, whoever holds its lease: the job ended
// (FinishJob records that once), so the entry has nothing left to run.
func (db *DB) Ack(ctx context.Context, e *app.QueueEntry) error {
	seq, err := keySeq(e)
	if err != nil {
		return err
	}
	_, err = db.pool.Exec(ctx, `DELETE FROM queue_entries WHERE seq = $1`, seq)
	return err
}

// JobIDs returns the job ids of every entry.
func (db *DB) JobIDs(ctx context.Context) (map[string]bool, error) {
	rows, err := db.pool.Query(ctx, `SELECT job_id FROM queue_entries`)
	if err != nil {
		return nil, err
	}
	ids, err := scanStrings(rows)
	if err != nil {
		return nil, err
	}
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m, nil
}

// ReleaseLeases makes the entries this process leased claimable again and
// returns how many there were; other replicas' leases are theirs.
func (db *DB) ReleaseLeases(ctx context.Context) (int, error) {
	tag, err := db.pool.Exec(ctx, `UPDATE queue_entries SET lease_until = NULL, lease_owner = ''
		WHERE lease_owner = $1 AND lease_until IS NOT NULL`, db.owner)
	if err != nil {
		return 0, err
	}
	return int(tag.RowsAffected()), nil
}
