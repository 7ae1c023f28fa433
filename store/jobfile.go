package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"folio/app"
	"folio/store/internal/scan"
)

// RecordJob records a job that ran to its end before anything of it was
// written (a synchronous generate, docs/decisions.md, One durable write per
// document): the row as it ended, its charge when it completed (a failed
// job costs nothing, so it is neither charged nor refunded), its counts, its
// document when r.Output holds it, and the events, in one transaction. A
// charge the quota no longer covers (another request spent it meanwhile)
// fails the whole call with the quota error: no job is recorded.
func (db *DB) RecordJob(ctx context.Context, charge *app.Charge, j *app.Job, r app.JobResult, events app.EventBuilder) (app.FinishOutcome, error) {
	ended := scan.EndedJob(j, r)
	args := scan.PackedJobArgs(&ended) // packed outside the writer's turn
	var out app.FinishOutcome
	ref, done, err := db.keepDoc(ended.Status, r.Output)
	if err != nil {
		return app.FinishOutcome{}, err
	}
	defer done()
	if TestHookDocWritten != nil && ref != nil {
		TestHookDocWritten()
	}
	err = db.tx(ctx, func(tx *Tx) error {
		ctx := uncancelled(ctx) // once for the call's statements, not once each
		out = app.FinishOutcome{}
		var how, month string
		if ended.Status == app.StatusCompleted && charge != nil {
			var err error
			if how, err = chargeOne(ctx, tx, charge); err != nil {
				return err
			}
			month = charge.Month
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO jobs (`+scan.JobCols+`, charged, charge_month) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			append(args, how, month)...); err != nil {
			return err
		}
		if ended.Status == app.StatusCompleted {
			if err := insertJobFile(ctx, tx, ended.ID, r.Output, ref); err != nil {
				return err
			}
		}
		countJob(tx, &ended)
		out.Ended, out.Job = true, &ended
		if events == nil {
			return nil
		}
		// Only the stored ones (a subscription asks for them) are worth
		// dispatching: the others would wake the deliverer for nothing.
		var err error
		out.Events, err = buildEvents(ctx, tx, ended.TeamID, func() ([]*app.Event, error) { return events(&ended, nil, nil) })
		return err
	})
	if err != nil {
		return app.FinishOutcome{}, err
	}
	return out, nil
}

// chargeOne pays for one job from the month's quota, else from credits, as
// chargeJobs does, with one read, and returns how ("quota" or "credits")
// for the job's row.
func chargeOne(ctx context.Context, tx *Tx, c *app.Charge) (string, error) {
	if c.Quota == app.NoQuota {
		// Never refused, always the quota's: no read needed (the job's
		// insert that follows checks that the team exists).
		_, err := tx.ExecContext(ctx, `INSERT INTO usage (team_id, month, documents, credits_used) VALUES (?, ?, 1, 0)
			ON CONFLICT (team_id, month) DO UPDATE SET documents = documents + 1`, c.TeamID, c.Month)
		tx.quota.forget(c.TeamID, c.Month) // not read: unknown
		return "quota", err
	}
	if used, ok := tx.quota.get(c.TeamID, c.Month); ok && used+1 <= c.Quota {
		// The quota pays, whatever the credits: the usage this process's
		// charges wrote is never below the real one (quotaSeen), so the
		// read would find room too (issue 24, writer pass). The insert
		// still adds to the row as written, not to the kept figure.
		if _, err := tx.ExecContext(ctx, `INSERT INTO usage (team_id, month, documents, credits_used) VALUES (?, ?, 1, 0)
			ON CONFLICT (team_id, month) DO UPDATE SET documents = documents + 1`, c.TeamID, c.Month); err != nil {
			return "", err
		}
		tx.quota.set(c.TeamID, c.Month, used+1)
		return "quota", nil
	}
	var used, credits int64
	err := tx.QueryRowContext(ctx, `SELECT COALESCE((SELECT documents FROM usage WHERE team_id = ?1 AND month = ?2), 0), credits
		FROM teams WHERE id = ?1`, c.TeamID, c.Month).Scan(&used, &credits)
	if err != nil {
		return "", err
	}
	fromQuota, fromCredits, err := c.Split(used, credits, 1)
	if err != nil {
		return "", err
	}
	how := "quota"
	if fromCredits > 0 {
		how = "credits"
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO usage (team_id, month, documents, credits_used) VALUES (?, ?, ?, ?)
		ON CONFLICT (team_id, month) DO UPDATE SET documents = documents + excluded.documents, credits_used = credits_used + excluded.credits_used`,
		c.TeamID, c.Month, fromQuota, fromCredits); err != nil {
		return "", err
	}
	tx.quota.set(c.TeamID, c.Month, used+fromQuota)
	if fromCredits > 0 {
		if _, err := tx.ExecContext(ctx, `UPDATE teams SET credits = credits - 1 WHERE id = ?`, c.TeamID); err != nil {
			return "", err
		}
	}
	return how, nil
}

// insertJobFile keeps a job's document in the database (nothing when data
// is empty: the document is a file, or there is none).
func insertJobFile(ctx context.Context, tx *Tx, jobID string, data []byte, ref *docRef) error {
	if len(data) == 0 {
		return nil
	}
	if ref != nil {
		_, err := tx.ExecContext(ctx, `INSERT INTO job_files (job_id, data, seg, seg_off, seg_len, seg_crc) VALUES (?, X'', ?, ?, ?, ?)`,
			jobID, ref.seg, ref.off, ref.n, int64(ref.crc))
		return err
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO job_files (job_id, data) VALUES (?, ?)`, jobID, data)
	return err
}

// TestHookDocWritten, when set (the crash tests), runs in RecordJob after
// the document is in its segment and before the transaction naming it.
var TestHookDocWritten func()

// keepDoc writes the document of a job that ends with status to a segment
// (docseg.go), before the transaction that records it: the writer only
// inserts where it is. done must be called once that transaction has
// ended. With no segments (a database that is not a file) or no document,
// ref is nil and the document goes into its row.
func (db *DB) keepDoc(status string, data []byte) (ref *docRef, done func(), err error) {
	if db.segs == nil || status != app.StatusCompleted || len(data) == 0 {
		return nil, func() {}, nil
	}
	r, err := db.segs.append(data)
	if err != nil {
		return nil, nil, fmt.Errorf("store: write document: %w", err)
	}
	return &r, func() { db.segs.done(r) }, nil
}

// FindJobFile returns the document kept in the database for a job; a job
// whose document is a file (or gone) is ErrNotFound (ECodeFileGone), and
// so is one whose bytes an OS crash lost (its CRC does not match).
func (db *DB) FindJobFile(ctx context.Context, jobID string) ([]byte, error) {
	var data []byte
	var seg, off, n, crc sql.NullInt64
	err := db.read.QueryRowContext(ctx, `SELECT data, seg, seg_off, seg_len, seg_crc FROM job_files WHERE job_id = ?`, jobID).Scan(&data, &seg, &off, &n, &crc)
	if err == nil && seg.Valid {
		err = errDocDamaged // no segments here to read it from
		if db.segs != nil {
			data, err = db.segs.read(docRef{seg: seg.Int64, off: off.Int64, n: n.Int64, crc: uint32(crc.Int64)})
		}
	}
	if errors.Is(err, sql.ErrNoRows) || errors.Is(err, errDocDamaged) {
		return nil, app.ErrNotFound(app.ECodeFileGone, "document")
	}
	return data, err
}

// collectSegments removes the segments no job_files row names.
func (db *DB) collectSegments(ctx context.Context) (int, error) {
	if db.segs == nil {
		return 0, nil
	}
	return db.segs.collect(ctx, func(ctx context.Context, seg int64) (bool, error) {
		var one int
		err := db.read.QueryRowContext(ctx, `SELECT 1 FROM job_files WHERE seg = ? LIMIT 1`, seg).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		return err == nil, err
	})
}

// CheckQuota reports, without charging, whether c still covers n more
// documents: ErrQuota when not. A synchronous generate asks before it
// renders; RecordJob's charge decides. When the month's usage as this
// process last charged it leaves room for n in the quota, no read is
// needed (quotaSeen).
func (db *DB) CheckQuota(ctx context.Context, c *app.Charge, n int64) error {
	if c == nil || c.Quota == app.NoQuota {
		return nil
	}
	if used, ok := db.quota.get(c.TeamID, c.Month); ok && used+n <= c.Quota {
		return nil
	}
	return scan.Covers(db.read.QueryRowContext(shortRead(ctx), `SELECT COALESCE((SELECT documents FROM usage WHERE team_id = ?1 AND month = ?2), 0), credits
		FROM teams WHERE id = ?1`, c.TeamID, c.Month), c, n)
}

// quotaSeen keeps, per team and month, the documents the month's quota
// had paid for after the last charge this process wrote (chargeOne,
// chargeJobs): a synchronous generate's CheckQuota read them before every
// render (issue 24, third pass). The writer sets it, in commit order, to
// what it wrote; a refund lowers the real figure below what is kept, and
// a charge rolled back leaves the kept figure above the real
// one: it is never below the usage this process's writes made, so a
// request it lets through is one the read would have let through too,
// unless another process charged the same month meanwhile (none does:
// every charge of a SQLite install goes through this writer). RecordJob's
// charge (chargeOne) skips its read on the same rule; past the quota it
// reads, and that read decides. Only the quota is judged from it; a month it does not cover (credits
// may) and one without an entry (after a start, or a charge without a
// read) are read.
type quotaSeen struct {
	mu sync.Mutex
	m  map[teamMonth]int64
}

type teamMonth struct{ team, month string }

// maxQuotaSeen bounds the entries kept; past it they start over.
const maxQuotaSeen = 10000

func (q *quotaSeen) get(team, month string) (int64, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	n, ok := q.m[teamMonth{team, month}]
	return n, ok
}

// set records what a charge wrote: the month's documents paid by its
// quota are now used.
func (q *quotaSeen) set(team, month string, used int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.m == nil || len(q.m) >= maxQuotaSeen {
		q.m = map[teamMonth]int64{}
	}
	q.m[teamMonth{team, month}] = used
}

// forget drops what is kept of a month (a charge that did not read it).
func (q *quotaSeen) forget(team, month string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.m, teamMonth{team, month})
}
