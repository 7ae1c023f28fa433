package store

import (
	"context"
	"database/sql"
	"errors"

	"folio/app"
)

var _ app.BatchStore = (*DB)(nil)

const batchCols = `id, team_id, template_id, format, status, total, completed, failed, created_at, completed_at`

func scanBatch(row scanner) (*app.Batch, error) {
	var b app.Batch
	var created int64
	var completed sql.NullInt64
	err := row.Scan(&b.ID, &b.TeamID, &b.TemplateID, &b.Format, &b.Status, &b.Total, &b.Completed, &b.Failed, &created, &completed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound(app.ECodeBatchNotFound, "batch")
	} else if err != nil {
		return nil, err
	}
	b.CreatedAt, b.CompletedAt = fromMS(created), fromNullMS(completed)
	return &b, nil
}

// CreateBatch inserts a batch and its jobs and pays for them, in one transaction.
func (db *DB) CreateBatch(ctx context.Context, charge *app.Charge, b *app.Batch, jobs []*app.Job) error {
	return db.tx(ctx, func(tx *Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO batches (`+batchCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			b.ID, b.TeamID, b.TemplateID, b.Format, b.Status, b.Total, b.Completed, b.Failed, ms(b.CreatedAt), msPtr(b.CompletedAt)); err != nil {
			return err
		}
		if err := insertJobs(ctx, tx, jobs); err != nil {
			return err
		}
		return chargeJobs(ctx, tx, charge, jobs)
	})
}

// FindBatchByID returns one of a team's batches.
func (db *DB) FindBatchByID(ctx context.Context, teamID, id string) (*app.Batch, error) {
	return scanBatch(db.read.QueryRowContext(ctx, `SELECT `+batchCols+` FROM batches WHERE team_id = ? AND id = ?`, teamID, id))
}

// FindBatchJobs returns a batch's jobs in request order (rowid order).
// Every lookup by batch_id also requires it not empty, or SQLite cannot
// use the partial index jobs_batch and reads every job (issue 19).
func (db *DB) FindBatchJobs(ctx context.Context, batchID string) ([]*app.Job, error) {
	return findBatchJobs(ctx, db.read, batchID)
}

func findBatchJobs(ctx context.Context, q querier, batchID string) ([]*app.Job, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+jobCols+` FROM jobs WHERE batch_id = ? AND batch_id != '' ORDER BY rowid`, batchID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*app.Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, rows.Err()
}
