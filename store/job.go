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

var _ app.JobStore = (*DB)(nil)

// CreateJobs inserts job records and pays for them (charge may be nil) in
// one transaction.
func (db *DB) CreateJobs(ctx context.Context, charge *app.Charge, jobs ...*app.Job) error {
	args := jobRows(jobs)
	return db.tx(ctx, func(tx *Tx) error {
		if err := insertJobs(ctx, tx, args); err != nil {
			return err
		}
		return chargeJobs(ctx, tx, charge, jobs)
	})
}

// jobRows are the jobs' values as SQLite stores them, their variables
// packed (scan.PackedJobArgs): made before the writer's turn.
func jobRows(jobs []*app.Job) [][]any {
	rows := make([][]any, len(jobs))
	for i, j := range jobs {
		rows[i] = scan.PackedJobArgs(j)
	}
	return rows
}

func insertJobs(ctx context.Context, tx *Tx, rows [][]any) error {
	for _, args := range rows {
		if _, err := tx.ExecContext(ctx, `INSERT INTO jobs (`+scan.JobCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			args...); err != nil {
			return err
		}
	}
	return nil
}

// FindJobByID returns one of a team's jobs.
func (db *DB) FindJobByID(ctx context.Context, teamID, id string) (*app.Job, error) {
	return scan.Job(db.read.QueryRowContext(ctx, `SELECT `+scan.JobCols+` FROM jobs WHERE team_id = ? AND id = ?`, teamID, id))
}

// FindJobForWorker returns a job by id alone (workers, signed downloads).
func (db *DB) FindJobForWorker(ctx context.Context, id string) (*app.Job, error) {
	return scan.Job(db.read.QueryRowContext(ctx, `SELECT `+scan.JobCols+` FROM jobs WHERE id = ?`, id))
}

// FindJobs lists a team's jobs, newest first: a page at an offset, or after
// a cursor. Each filter has an index that yields the rows in order
// (jobs_team_created, jobs_team_status, jobs_team_template,
// jobs_team_status_template), so a page reads its rows and those it skips
// in the index only; the total counts at most app.MaxCount rows.
func (db *DB) FindJobs(ctx context.Context, f app.JobFilter) ([]*app.Job, app.ListInfo, error) {
	where, args := []string{"team_id = ?"}, []any{f.TeamID}
	if f.Status != "" {
		where, args = append(where, "status = ?"), append(args, f.Status)
	}
	if f.TemplateID != "" {
		where, args = append(where, "template_id = ?"), append(args, f.TemplateID)
	}
	var info app.ListInfo
	var err error
	if info.Total, info.Estimate, err = db.countUpTo(ctx, `SELECT 1 FROM jobs WHERE `+strings.Join(where, " AND "), args); err != nil {
		return nil, info, err
	}
	offset := f.Page.Offset()
	if f.Cursor != "" {
		at, rowid, err := scan.ParseJobCursor(f.Cursor)
		if err != nil {
			return nil, info, err
		}
		where = append(where, "created_at <= ?", "NOT (created_at = ? AND rowid >= ?)")
		args = append(args, at, at, rowid)
		offset, info.FromCursor = 0, true
	}
	q := `SELECT ` + scan.JobListCols + `, rowid FROM jobs WHERE ` + strings.Join(where, " AND ") + ` ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?`
	if offset > 0 && f.Status == "" && f.TemplateID == "" && f.Cursor == "" && db.readyList.Load() {
		// A deep page of all the team's jobs starts in the hour its first
		// row is in, found from the counts of rows by hour (job_list_hours,
		// kept by triggers: the same snapshot as the rows): only the
		// rows of that hour before it are skipped. Exactly one hour has
		// skipped <= offset < upto, so the order the window's rows come
		// in does not matter, and LIMIT 1 stops the walk there (newest
		// first along the primary key, no sort).
		q = `WITH b AS MATERIALIZED (SELECT slot, upto - n AS skipped FROM (SELECT slot, n,
				SUM(n) OVER (ORDER BY slot DESC ROWS UNBOUNDED PRECEDING) AS upto FROM job_list_hours WHERE team_id = ?1)
				WHERE upto > ?3 AND upto - n <= ?3 LIMIT 1)
			SELECT ` + scan.JobListCols + `, rowid FROM jobs WHERE rowid IN (SELECT rowid FROM jobs WHERE team_id = ?1
				AND created_at < (SELECT (slot + 1) * 3600000 FROM b)
				ORDER BY created_at DESC, rowid DESC LIMIT ?2 OFFSET COALESCE((SELECT ?3 - skipped FROM b), 0))
			ORDER BY created_at DESC, rowid DESC`
	} else if offset > 0 {
		// A deep page (page 1,000 of 100 skips 99,900 rows) skips entries
		// of the filter's index alone, which holds the rowid: the rows
		// themselves are read for the page only (docs/performance.md, Growth).
		q = `SELECT ` + scan.JobListCols + `, rowid FROM jobs WHERE rowid IN (SELECT rowid FROM jobs WHERE ` + strings.Join(where, " AND ") +
			` ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?) ORDER BY created_at DESC, rowid DESC`
	}
	rows, err := db.read.QueryContext(ctx, q, append(args, f.Page.Limit+1, offset)...)
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

// countUpTo counts the rows query selects, up to app.MaxCount: past it,
// estimate is true and n is app.MaxCount.
func (db *DB) countUpTo(ctx context.Context, query string, args []any) (n int, estimate bool, err error) {
	err = db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM (`+query+` LIMIT ?)`, append(args, app.MaxCount+1)...).Scan(&n)
	if n > app.MaxCount {
		return app.MaxCount, true, err
	}
	return n, false, err
}

// StartJob marks a job processing unless it already ended.
func (db *DB) StartJob(ctx context.Context, id string, now time.Time) (*app.Job, bool, error) {
	var j *app.Job
	err := db.tx(ctx, func(tx *Tx) error {
		var err error
		// A job found processing was started before and never ended: the
		// process died during that run (shutdown returns jobs to pending).
		j, err = scan.Job(tx.QueryRowContext(ctx, `UPDATE jobs SET status = 'processing', started_at = ?, attempts = attempts + 1,
			crashes = crashes + (status = 'processing') WHERE id = ? AND status IN ('pending', 'processing') RETURNING `+scan.JobCols, ms(now), id))
		return err
	})
	if app.ErrorCode(err) == app.ECodeJobNotFound {
		return nil, false, nil
	}
	return j, err == nil, err
}

// ReleaseJob returns a processing job to pending: shutdown interrupted
// its run, which is not a crash.
func (db *DB) ReleaseJob(ctx context.Context, id string) error {
	return db.tx(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE jobs SET status = 'pending' WHERE id = ? AND status = 'processing'`, id)
		return err
	})
}

// FinishJob records a processing job's end, counts it in its batch and
// stores the events it causes, in one transaction: the batch ends exactly
// once, with its last job, and no event is lost or doubled.
func (db *DB) FinishJob(ctx context.Context, id string, r app.JobResult, events app.EventBuilder) (app.FinishOutcome, error) {
	info := scan.ErrorInfo(r.ErrorInfo)
	var out app.FinishOutcome
	ref, done, err := db.keepDoc(r.Status, r.Output)
	if err != nil {
		return app.FinishOutcome{}, err
	}
	defer done()
	err = db.tx(ctx, func(tx *Tx) error {
		out = app.FinishOutcome{}
		j, err := scan.Job(tx.QueryRowContext(ctx, `UPDATE jobs SET status = ?, error = ?, error_code = ?, error_info = ?, file_path = ?,
			file_size = ?, completed_at = ?, expires_at = ?, duration_ms = ? WHERE id = ? AND status = 'processing' RETURNING `+scan.JobCols,
			r.Status, r.Error, r.ErrorCode, info, r.FilePath, r.FileSize, ms(r.CompletedAt), msPtr(r.ExpiresAt), r.DurationMS, id))
		if app.ErrorCode(err) == app.ECodeJobNotFound {
			return nil
		} else if err != nil {
			return err
		}
		out.Ended, out.Job = true, j
		if j.Status == app.StatusCompleted {
			if err := insertJobFile(ctx, tx, j.ID, r.Output, ref); err != nil {
				return err
			}
		}
		countJob(tx, j)
		if j.Status == app.StatusFailed {
			if err := refundJob(ctx, tx, j); err != nil {
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
		out.Events, err = buildEvents(ctx, tx, j.TeamID, func() ([]*app.Event, error) { return events(j, out.Batch, batchJobs) })
		return err
	})
	return out, err
}

// countInBatch counts a job's end (completed or failed) in its batch and
// ends the batch with its last job, returning the batch and its jobs when it
// ended (nil when it goes on).
func countInBatch(ctx context.Context, tx *Tx, batchID, status string, at time.Time) (*app.Batch, []*app.Job, error) {
	return scan.CountInBatch(status, func(col string) (*app.Batch, error) {
		return scan.Batch(tx.QueryRowContext(ctx, `UPDATE batches SET `+col+` = `+col+` + 1 WHERE id = ? RETURNING `+scan.BatchCols, batchID))
	}, func(end string) (*app.Batch, error) {
		return scan.Batch(tx.QueryRowContext(ctx, `UPDATE batches SET status = ?, completed_at = ? WHERE id = ? RETURNING `+scan.BatchCols,
			end, ms(at), batchID))
	}, func() ([]*app.Job, error) { return findBatchJobs(ctx, tx, batchID) })
}

// DeleteJobs removes a team's jobs among ids. A job that had not ended is
// refunded and counted as failed in its batch, in the same transaction, so
// its batch still ends, exactly once; the batch's event is stored with it.
func (db *DB) DeleteJobs(ctx context.Context, teamID string, ids []string, now time.Time, events app.BatchEventBuilder) (app.DeleteOutcome, error) {
	var out app.DeleteOutcome
	err := db.tx(ctx, func(tx *Tx) error {
		out = app.DeleteOutcome{}
		for _, id := range ids {
			var status string
			err := tx.QueryRowContext(ctx, `SELECT status FROM jobs WHERE team_id = ? AND id = ?`, teamID, id).Scan(&status)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			} else if err != nil {
				return err
			}
			unfinished := status == app.StatusPending || status == app.StatusProcessing
			if unfinished {
				if err := refundJob(ctx, tx, &app.Job{ID: id, TeamID: teamID}); err != nil {
					return err
				}
			}
			j, err := scan.Job(tx.QueryRowContext(ctx, `DELETE FROM jobs WHERE team_id = ? AND id = ? RETURNING `+scan.JobCols, teamID, id))
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
		return insertEvents(ctx, tx, out.Events)
	})
	return out, err
}

// ExportJobs streams a team's jobs matching f, oldest first.
func (db *DB) ExportJobs(ctx context.Context, f app.ExportFilter, fn func(*app.Job) error) error {
	where, args := []string{"team_id = ?"}, []any{f.TeamID}
	if f.Status != "" {
		where, args = append(where, "status = ?"), append(args, f.Status)
	}
	if f.From != nil {
		where, args = append(where, "created_at >= ?"), append(args, ms(*f.From))
	}
	if f.To != nil {
		where, args = append(where, "created_at < ?"), append(args, ms(*f.To))
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+scan.JobListCols+` FROM jobs WHERE `+strings.Join(where, " AND ")+` ORDER BY created_at, rowid`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	return scan.EachJob(rows, fn)
}

// QueueCounts returns a team's queue figures.
func (db *DB) QueueCounts(ctx context.Context, teamID string, now time.Time) (*app.QueueStats, error) {
	// jobs_team_ended finds the last hour's ends of the team alone.
	return scan.QueueStats(db.read.QueryRowContext(ctx, `SELECT
		(SELECT COUNT(*) FROM jobs WHERE team_id = ?1 AND status = 'pending'),
		(SELECT COUNT(*) FROM jobs WHERE team_id = ?1 AND status = 'processing'),
		(SELECT COUNT(*) FROM jobs WHERE team_id = ?1 AND status = 'completed' AND completed_at >= ?2),
		(SELECT COUNT(*) FROM jobs WHERE team_id = ?1 AND status = 'failed' AND completed_at >= ?2),
		(SELECT MIN(created_at) FROM jobs WHERE team_id = ?1 AND status = 'pending')`,
		teamID, ms(now.Add(-time.Hour))), now)
}

// ExpiredFiles lists jobs whose files expired before now.
func (db *DB) ExpiredFiles(ctx context.Context, now time.Time, limit int) ([]*app.Job, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+scan.JobCols+` FROM jobs WHERE file_path != '' AND expires_at < ? LIMIT ?`, ms(now), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scan.Jobs(rows)
}

// ClearFile forgets a job's file, and drops the document when the
// database kept it (job_files).
func (db *DB) ClearFile(ctx context.Context, id string) error {
	return db.tx(ctx, func(tx *Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM job_files WHERE job_id = ?`, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE jobs SET file_path = '', file_size = 0 WHERE id = ?`, id)
		return err
	})
}

// UnfinishedJobIDs lists pending and processing jobs created before
// createdBefore (zero: all), oldest first.
func (db *DB) UnfinishedJobIDs(ctx context.Context, createdBefore time.Time) ([]string, error) {
	q, args := `SELECT id FROM jobs WHERE status IN ('pending', 'processing')`, []any{}
	if !createdBefore.IsZero() {
		q, args = q+` AND created_at < ?`, append(args, ms(createdBefore))
	}
	rows, err := db.read.QueryContext(ctx, q+` ORDER BY created_at`, args...)
	if err != nil {
		return nil, err
	}
	return scanStrings(rows)
}
