package store

import (
	"context"

	"folio/app"
	"folio/store/internal/scan"
)

var _ app.BatchStore = (*DB)(nil)

// CreateBatch inserts a batch and its jobs and pays for them, in one
// transaction. The batch's states start all pending and each job gets its
// index in them, batch_seq (migration 0017): triggers keep them and the
// version up to date from then on.
func (db *DB) CreateBatch(ctx context.Context, charge *app.Charge, b *app.Batch, jobs []*app.Job) error {
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	states := scan.NewBatchStates(len(jobs))
	rows := jobRows(jobs)
	return db.tx(ctx, func(tx *Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO batches (`+scan.BatchCols+`, states) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			append(scan.BatchArgs(b), states)...); err != nil {
			return err
		}
		if err := insertJobs(ctx, tx, rows); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE jobs SET batch_seq = CAST(l.key AS INTEGER) FROM json_each(?) AS l WHERE jobs.id = l.value`,
			mustJSON(ids)); err != nil {
			return err
		}
		b.States = states
		return chargeJobs(ctx, tx, charge, jobs)
	})
}

// FindBatchByID returns one of a team's batches with its version and
// states: one row, whatever the batch's size.
func (db *DB) FindBatchByID(ctx context.Context, teamID, id string) (*app.Batch, error) {
	return scan.BatchWithState(db.read.QueryRowContext(ctx, `SELECT `+scan.BatchWithStateCols+` FROM batches WHERE team_id = ? AND id = ?`, teamID, id))
}

// FindBatchDocs returns what a batch's documents list shows of its jobs,
// in request order. ids, when not nil, picks some of them (a poll reads
// only the jobs that ended since its cached version).
func (db *DB) FindBatchDocs(ctx context.Context, batchID string, ids []string) ([]app.BatchDoc, error) {
	query, args := `SELECT `+scan.BatchDocCols+` FROM jobs WHERE batch_id = ? AND batch_id != '' ORDER BY rowid`, []any{batchID}
	if ids != nil {
		query, args = `SELECT `+scan.BatchDocCols+` FROM jobs WHERE id IN (SELECT value FROM json_each(?)) AND batch_id = ?`, []any{mustJSON(ids), batchID}
	}
	rows, err := db.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scan.List(rows, scan.BatchDoc)
}

// findBatchJobs returns a batch's jobs in request order (rowid order).
// Every lookup by batch_id also requires it not empty, or SQLite cannot
// use the partial index jobs_batch and reads every job (issue 19).
func findBatchJobs(ctx context.Context, q querier, batchID string) ([]*app.Job, error) {
	rows, err := q.query(ctx, `SELECT `+scan.JobCols+` FROM jobs WHERE batch_id = ? AND batch_id != '' ORDER BY rowid`, batchID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scan.Jobs(rows)
}
