package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"folio/app"
	"folio/store/internal/scan"
)

var _ app.BatchStore = (*DB)(nil)

// CreateBatch inserts a batch and its jobs and pays for them, in one
// transaction. The batch's states start all pending and each job gets its
// index in them (batch_seq): triggers keep them and the version up to
// date from then on (0010, as SQLite's 0017).
func (db *DB) CreateBatch(ctx context.Context, charge *app.Charge, b *app.Batch, jobs []*app.Job) error {
	states := scan.NewBatchStates(len(jobs))
	return db.tx(ctx, func(tx pgx.Tx) error {
		hows, month, err := chargeJobs(ctx, tx, charge, len(jobs))
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO batches (`+scan.BatchCols+`, states) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
			append(scan.BatchArgs(b), states)...); err != nil {
			return err
		}
		if err := insertJobs(ctx, tx, jobs, hows, month, true); err != nil {
			return err
		}
		b.States = states
		return nil
	})
}

// FindBatchByID returns one of a team's batches with its version and
// states: one row, whatever the batch's size.
func (db *DB) FindBatchByID(ctx context.Context, teamID, id string) (*app.Batch, error) {
	return scan.BatchWithState(db.pool.QueryRow(ctx, `SELECT `+scan.BatchWithStateCols+` FROM batches WHERE team_id = $1 AND id = $2`, teamID, id))
}

// FindBatchDocs returns what a batch's documents list shows of its jobs,
// in request order. ids, when not nil, picks some of them.
func (db *DB) FindBatchDocs(ctx context.Context, batchID string, ids []string) ([]app.BatchDoc, error) {
	query, args := `SELECT `+scan.BatchDocCols+` FROM jobs WHERE batch_id = $1 AND batch_id != '' ORDER BY seq`, []any{batchID}
	if ids != nil {
		query, args = `SELECT `+scan.BatchDocCols+` FROM jobs WHERE id = ANY($1) AND batch_id = $2`, []any{ids, batchID}
	}
	rows, err := db.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scan.List(rows, scan.BatchDoc)
}
