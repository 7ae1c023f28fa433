package postgres

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"folio/app"
	"folio/store/internal/scan"
)

var _ app.JobStore = (*DB)(nil)

// Lock order. SQLite ran every write alone; here the writes of jobs run at
// once on every replica, so each transaction takes its row locks in one
// order: the job rows (DeleteJobs locks all of its own first, in id
// order), the roll-ups, the API key, the team (charges and refunds lock
// it first, so two charges of one team are counted one after the other),
// the month's usage, then the batch. Two transactions never wait for each
// other's rows in opposite orders.

// insertJobs inserts jobs paid for as hows says (one per job, "" when
// free) in month; batchSeq gives each job its index in its batch's states.
func insertJobs(ctx context.Context, tx pgx.Tx, jobs []*app.Job, hows []string, month string, batchSeq bool) error {
	var b pgx.Batch
	for i, j := range jobs {
		var seq *int
		if batchSeq {
			seq = &i
		}
		b.Queue(`INSERT INTO jobs (`+scan.JobCols+`, batch_seq, charged, charge_month) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12,
			$13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31)`,
			append(scan.JobArgs(j), seq, hows[i], month)...)
	}
	return tx.SendBatch(ctx, &b).Close()
}

// CreateJobs inserts job records and pays for them (charge may be nil) in
// one transaction.
func (db *DB) CreateJobs(ctx context.Context, charge *app.Charge, jobs ...*app.Job) error {
	return db.tx(ctx, func(tx pgx.Tx) error {
		hows, month, err := chargeJobs(ctx, tx, charge, len(jobs))
		if err != nil {
			return err
		}
		return insertJobs(ctx, tx, jobs, hows, month, false)
	})
}

// FindJobByID returns one of a team's jobs.
func (db *DB) FindJobByID(ctx context.Context, teamID, id string) (*app.Job, error) {
	return scan.Job(db.pool.QueryRow(ctx, `SELECT `+scan.JobCols+` FROM jobs WHERE team_id = $1 AND id = $2`, teamID, id))
}

// FindJobForWorker returns a job by id alone (workers, signed downloads).
func (db *DB) FindJobForWorker(ctx context.Context, id string) (*app.Job, error) {
	return scan.Job(db.pool.QueryRow(ctx, `SELECT `+scan.JobCols+` FROM jobs WHERE id = $1`, id))
}

// FindJobs lists a team's jobs, newest first (created_at, then seq): a
// page at an offset, or after a cursor. Each filter has an index in that
// order ending in seq (0010), so a cursor is a range of it; a deep page
// skips its rows in the index alone (the subquery reads created_at and
// seq, both in the index) and reads the page's rows only. The total
// counts at most app.MaxCount rows.
func (db *DB) FindJobs(ctx context.Context, f app.JobFilter) ([]*app.Job, app.ListInfo, error) {
	where, args := []string{"team_id = $1"}, []any{f.TeamID}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if f.Status != "" {
		where = append(where, "status = "+arg(f.Status))
	}
	if f.TemplateID != "" {
		where = append(where, "template_id = "+arg(f.TemplateID))
	}
	var info app.ListInfo
	var err error
	n := len(args)
	if info.Total, info.Estimate, err = countUpTo(ctx, db.pool, `SELECT 1 FROM jobs WHERE `+strings.Join(where, " AND "), args,
		"$"+strconv.Itoa(n+1)); err != nil {
		return nil, info, err
	}
	args = args[:n]
	offset := f.Page.Offset()
	if f.Cursor != "" {
		at, seq, err := scan.ParseJobCursor(f.Cursor)
		if err != nil {
			return nil, info, err
		}
		where = append(where, "(created_at, seq) < ("+arg(at)+", "+arg(seq)+")")
		offset, info.FromCursor = 0, true
	}
	cond := strings.Join(where, " AND ")
	limit, off := arg(f.Page.Limit+1), arg(offset)
	q := `SELECT ` + scan.JobListCols + `, seq FROM jobs WHERE ` + cond + ` ORDER BY created_at DESC, seq DESC LIMIT ` + limit + ` OFFSET ` + off
	if offset > 0 {
		q = `SELECT ` + scan.JobListCols + `, seq FROM jobs WHERE team_id = $1 AND (created_at, seq) IN (SELECT created_at, seq FROM jobs WHERE ` +
			cond + ` ORDER BY created_at DESC, seq DESC LIMIT ` + limit + ` OFFSET ` + off + `) ORDER BY created_at DESC, seq DESC`
	}
	rows, err := db.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, info, err
	}
	defer rows.Close()
	list, err := scan.JobPage(rows, f.Page.Limit, offset, &info)
	if err != nil {
		return nil, info, err
	}
	return list, info, nil
}

// StartJob marks a job processing unless it already ended. A job found
// processing was started before and never ended: the process died during
// that run (shutdown returns jobs to pending). Two starts at once queue on
// the row; the second sees the first's processing and counts a crash, as
// one after the other would.
func (db *DB) StartJob(ctx context.Context, id string, now time.Time) (*app.Job, bool, error) {
	j, err := scan.Job(db.pool.QueryRow(ctx, `UPDATE jobs SET status = 'processing', started_at = $1, attempts = attempts + 1,
		crashes = crashes + CASE WHEN status = 'processing' THEN 1 ELSE 0 END
		WHERE id = $2 AND status IN ('pending', 'processing') RETURNING `+scan.JobCols, ms(now), id))
	if app.ErrorCode(err) == app.ECodeJobNotFound {
		return nil, false, nil
	}
	return j, err == nil, err
}

// ReleaseJob returns a processing job to pending: shutdown interrupted
// its run, which is not a crash.
func (db *DB) ReleaseJob(ctx context.Context, id string) error {
	_, err := db.pool.Exec(ctx, `UPDATE jobs SET status = 'pending' WHERE id = $1 AND status = 'processing'`, id)
	return err
}

// FinishJob records a processing job's end, counts it in its batch and
// stores the events it causes, in one transaction. The UPDATE's condition
// (status = 'processing') is checked again on the row once a concurrent
// finisher committed, so of several only one records the end; the batch's
// counts are raised under its row lock, so exactly one finisher sees the
// last job counted and ends it.
func (db *DB) FinishJob(ctx context.Context, id string, r app.JobResult, events app.EventBuilder) (app.FinishOutcome, error) {
	var out app.FinishOutcome
	err := db.tx(ctx, func(tx pgx.Tx) error {
		out = app.FinishOutcome{}
		j, err := scan.Job(tx.QueryRow(ctx, `UPDATE jobs SET status = $1, error = $2, error_code = $3, error_info = $4, file_path = $5,
			file_size = $6, completed_at = $7, expires_at = $8, duration_ms = $9 WHERE id = $10 AND status = 'processing' RETURNING `+scan.JobCols,
			r.Status, r.Error, r.ErrorCode, scan.ErrorInfo(r.ErrorInfo), r.FilePath, r.FileSize, ms(r.CompletedAt), msPtr(r.ExpiresAt),
			r.DurationMS, id))
		if app.ErrorCode(err) == app.ECodeJobNotFound {
			return nil
		} else if err != nil {
			return err
		}
		out.Ended, out.Job = true, j
		if err := recordEnd(ctx, tx, j, r.Output); err != nil {
			return err
		}
		if j.Status == app.StatusFailed {
			if err := refundJob(ctx, tx, j.ID, j.TeamID); err != nil {
				return err
			}
		}
		var batchJobs []*app.Job
		if j.BatchID != "" {
			if out.Batch, batchJobs, err = countInBatch(ctx, tx, j.BatchID, r.Status, r.CompletedAt); err != nil {
				return err
			}
		}
		if events == nil {
			return nil
		}
		out.Events, err = outbox(ctx, tx).Build(j.TeamID, func() ([]*app.Event, error) { return events(j, out.Batch, batchJobs) })
		return err
	})
	return out, err
}

// recordEnd does what every job's end records besides its row: its
// document when the database keeps it, the roll-ups, and the key's count
// of documents.
func recordEnd(ctx context.Context, tx pgx.Tx, j *app.Job, output []byte) error {
	if j.Status == app.StatusCompleted && len(output) > 0 {
		if _, err := tx.Exec(ctx, `INSERT INTO job_files (job_id, data) VALUES ($1, $2)`, j.ID, output); err != nil {
			return err
		}
	}
	if err := countJob(ctx, tx, j); err != nil {
		return err
	}
	if j.Status == app.StatusCompleted && j.APIKeyID != "" {
		if _, err := tx.Exec(ctx, `UPDATE api_keys SET documents = documents + 1 WHERE id = $1`, j.APIKeyID); err != nil {
			return err
		}
	}
	return nil
}

// countInBatch counts a job's end (completed or failed) in its batch and
// ends the batch with its last job, returning the batch and its jobs when it
// ended (nil when it goes on).
func countInBatch(ctx context.Context, tx pgx.Tx, batchID, status string, at time.Time) (*app.Batch, []*app.Job, error) {
	return scan.CountInBatch(status, func(col string) (*app.Batch, error) {
		return scan.Batch(tx.QueryRow(ctx, `UPDATE batches SET `+col+` = `+col+` + 1 WHERE id = $1 RETURNING `+scan.BatchCols, batchID))
	}, func(end string) (*app.Batch, error) {
		return scan.Batch(tx.QueryRow(ctx, `UPDATE batches SET status = $1, completed_at = $2 WHERE id = $3 RETURNING `+scan.BatchCols,
			end, ms(at), batchID))
	}, func() ([]*app.Job, error) { return findBatchJobs(ctx, tx, batchID) })
}

// findBatchJobs returns a batch's jobs in request order (seq order).
func findBatchJobs(ctx context.Context, q querier, batchID string) ([]*app.Job, error) {
	rows, err := q.Query(ctx, `SELECT `+scan.JobCols+` FROM jobs WHERE batch_id = $1 AND batch_id != '' ORDER BY seq`, batchID)
	if err != nil {
		return nil, err
	}
	return collectJobs(rows)
}

// collectJobs reads rows of scan.JobCols and closes them.
func collectJobs(rows pgx.Rows) ([]*app.Job, error) {
	defer rows.Close()
	return scan.Jobs(rows)
}

// DeleteJobs removes a team's jobs among ids. A job that had not ended is
// refunded and counted as failed in its batch, in the same transaction, so
// its batch still ends, exactly once; the batch's event is stored with it.
// The rows are locked first, all of them in id order, so two deletions
// (or a deletion and a finish) never hold each other's rows.
func (db *DB) DeleteJobs(ctx context.Context, teamID string, ids []string, now time.Time, events app.BatchEventBuilder) (app.DeleteOutcome, error) {
	var out app.DeleteOutcome
	err := db.tx(ctx, func(tx pgx.Tx) error {
		out = app.DeleteOutcome{}
		rows, err := tx.Query(ctx, `SELECT id, status FROM jobs WHERE team_id = $1 AND id = ANY($2) ORDER BY id FOR UPDATE`, teamID, ids)
		if err != nil {
			return err
		}
		status := map[string]string{}
		for rows.Next() {
			var id, st string
			if err := rows.Scan(&id, &st); err != nil {
				rows.Close()
				return err
			}
			status[id] = st
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, id := range ids {
			st, ok := status[id]
			if !ok {
				continue // another team's, gone, or named twice
			}
			delete(status, id)
			unfinished := st == app.StatusPending || st == app.StatusProcessing
			if unfinished {
				if err := refundJob(ctx, tx, id, teamID); err != nil {
					return err
				}
			}
			j, err := scan.Job(tx.QueryRow(ctx, `DELETE FROM jobs WHERE team_id = $1 AND id = $2 RETURNING `+scan.JobCols, teamID, id))
			if err != nil {
				return err
			}
			out.Jobs = append(out.Jobs, j)
			if !unfinished || j.BatchID == "" {
				continue
			}
			b, batchJobs, err := countInBatch(ctx, tx, j.BatchID, app.StatusFailed, now)
			if err != nil {
				return err
			}
			if b == nil {
				continue // the batch goes on
			}
			out.Batches = append(out.Batches, b)
			if events == nil {
				continue
			}
			e, err := events(b, batchJobs)
			if err != nil {
				return err
			}
			out.Events = append(out.Events, e)
		}
		_, err = outbox(ctx, tx).Store(out.Events, map[string]map[string]bool{})
		return err
	})
	return out, err
}

// ExportJobs streams a team's jobs matching f, oldest first.
func (db *DB) ExportJobs(ctx context.Context, f app.ExportFilter, fn func(*app.Job) error) error {
	where, args := []string{"team_id = $1"}, []any{f.TeamID}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if f.Status != "" {
		where = append(where, "status = "+arg(f.Status))
	}
	if f.From != nil {
		where = append(where, "created_at >= "+arg(ms(*f.From)))
	}
	if f.To != nil {
		where = append(where, "created_at < "+arg(ms(*f.To)))
	}
	rows, err := db.pool.Query(ctx, `SELECT `+scan.JobListCols+` FROM jobs WHERE `+strings.Join(where, " AND ")+` ORDER BY created_at, seq`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	return scan.EachJob(rows, fn)
}

// QueueCounts returns a team's queue figures.
func (db *DB) QueueCounts(ctx context.Context, teamID string, now time.Time) (*app.QueueStats, error) {
	return scan.QueueStats(db.pool.QueryRow(ctx, `SELECT
		(SELECT COUNT(*) FROM jobs WHERE team_id = $1 AND status = 'pending'),
		(SELECT COUNT(*) FROM jobs WHERE team_id = $1 AND status = 'processing'),
		(SELECT COUNT(*) FROM jobs WHERE team_id = $1 AND status = 'completed' AND completed_at >= $2),
		(SELECT COUNT(*) FROM jobs WHERE team_id = $1 AND status = 'failed' AND completed_at >= $2),
		(SELECT MIN(created_at) FROM jobs WHERE team_id = $1 AND status = 'pending')`,
		teamID, ms(now.Add(-time.Hour))), now)
}

// ExpiredFiles lists jobs whose files expired before now.
func (db *DB) ExpiredFiles(ctx context.Context, now time.Time, limit int) ([]*app.Job, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+scan.JobCols+` FROM jobs WHERE file_path != '' AND expires_at < $1 LIMIT $2`, ms(now), limit)
	if err != nil {
		return nil, err
	}
	return collectJobs(rows)
}

// ClearFile forgets a job's file, and drops the document when the
// database kept it (job_files).
func (db *DB) ClearFile(ctx context.Context, id string) error {
	return db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM job_files WHERE job_id = $1`, id); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE jobs SET file_path = '', file_size = 0 WHERE id = $1`, id)
		return err
	})
}

// UnfinishedJobIDs lists pending and processing jobs created before
// createdBefore (zero: all), oldest first.
func (db *DB) UnfinishedJobIDs(ctx context.Context, createdBefore time.Time) ([]string, error) {
	before := int64(1<<63 - 1)
	if !createdBefore.IsZero() {
		before = ms(createdBefore)
	}
	rows, err := db.pool.Query(ctx, `SELECT id FROM jobs WHERE status IN ('pending', 'processing') AND created_at < $1 ORDER BY created_at, seq`, before)
	if err != nil {
		return nil, err
	}
	return scanStrings(rows)
}

// FindJobFile returns the document kept in the database for a job; a job
// whose document is a file (or gone) is ErrNotFound (ECodeFileGone).
func (db *DB) FindJobFile(ctx context.Context, jobID string) ([]byte, error) {
	return scan.JobFile(db.pool.QueryRow(ctx, `SELECT data FROM job_files WHERE job_id = $1`, jobID))
}

// RecordJob records a job that ran to its end before anything of it was
// written (a synchronous generate): the row as it ended, its charge when
// it completed (a failed job costs nothing), its counts, its document and
// the events, in one transaction. A charge the quota no longer covers
// (another request, on any replica, spent it meanwhile: the charge is
// counted under the team's lock) records nothing and returns the quota
// error.
func (db *DB) RecordJob(ctx context.Context, charge *app.Charge, j *app.Job, r app.JobResult, events app.EventBuilder) (app.FinishOutcome, error) {
	e := scan.EndedJob(j, r)
	ended := &e
	var out app.FinishOutcome
	err := db.tx(ctx, func(tx pgx.Tx) error {
		out = app.FinishOutcome{}
		hows, month := []string{""}, ""
		if ended.Status == app.StatusCompleted && charge != nil {
			var err error
			if hows, month, err = chargeJobs(ctx, tx, charge, 1); err != nil {
				return err
			}
		}
		if err := insertJobs(ctx, tx, []*app.Job{ended}, hows, month, false); err != nil {
			return err
		}
		if err := recordEnd(ctx, tx, ended, r.Output); err != nil {
			return err
		}
		out.Ended, out.Job = true, ended
		if events == nil {
			return nil
		}
		var err error
		out.Events, err = outbox(ctx, tx).Build(ended.TeamID, func() ([]*app.Event, error) { return events(ended, nil, nil) })
		return err
	})
	if err != nil {
		return app.FinishOutcome{}, err
	}
	return out, nil
}

// CheckQuota reports, without charging, whether c still covers n more
// documents: ErrQuota when not. RecordJob's charge decides.
func (db *DB) CheckQuota(ctx context.Context, c *app.Charge, n int64) error {
	if c == nil || c.Quota == app.NoQuota {
		return nil
	}
	return scan.Covers(db.pool.QueryRow(ctx, `SELECT COALESCE((SELECT documents FROM usage WHERE team_id = $1 AND month = $2), 0), credits
		FROM teams WHERE id = $1`, c.TeamID, c.Month), c, n)
}
