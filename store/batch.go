package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"

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

// CreateBatch inserts a batch and its jobs and pays for them, in one
// transaction. The batch's states start all pending and each job gets its
// index in them, batch_seq (migration 0017): triggers keep them and the
// version up to date from then on.
func (db *DB) CreateBatch(ctx context.Context, charge *app.Charge, b *app.Batch, jobs []*app.Job) error {
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	states := strings.Repeat(string(app.BatchPending), len(jobs))
	return db.tx(ctx, func(tx *Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO batches (`+batchCols+`, states) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			b.ID, b.TeamID, b.TemplateID, b.Format, b.Status, b.Total, b.Completed, b.Failed, ms(b.CreatedAt), msPtr(b.CompletedAt), states); err != nil {
			return err
		}
		if err := insertJobs(ctx, tx, jobs); err != nil {
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
	var version int64
	var states sql.NullString
	b, err := scanBatch(withDest{db.read.QueryRowContext(ctx, `SELECT `+batchCols+`, version, states FROM batches WHERE team_id = ? AND id = ?`, teamID, id),
		[]any{&version, &states}})
	if err != nil {
		return nil, err
	}
	b.Version, b.States = version, states.String
	return b, nil
}

// withDest scans a row whose last columns are read into dest.
type withDest struct {
	scanner
	dest []any
}

func (w withDest) Scan(dest ...any) error { return w.scanner.Scan(append(dest, w.dest...)...) }

const batchDocCols = `id, COALESCE(batch_seq, -1), status, error, expires_at`

// FindBatchDocs returns what a batch's documents list shows of its jobs,
// in request order. ids, when not nil, picks some of them (a poll reads
// only the jobs that ended since its cached version).
func (db *DB) FindBatchDocs(ctx context.Context, batchID string, ids []string) ([]app.BatchDoc, error) {
	query, args := `SELECT `+batchDocCols+` FROM jobs WHERE batch_id = ? AND batch_id != '' ORDER BY rowid`, []any{batchID}
	if ids != nil {
		query, args = `SELECT `+batchDocCols+` FROM jobs WHERE id IN (SELECT value FROM json_each(?)) AND batch_id = ?`, []any{mustJSON(ids), batchID}
	}
	rows, err := db.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []app.BatchDoc
	for rows.Next() {
		var d app.BatchDoc
		var expires sql.NullInt64
		if err := rows.Scan(&d.JobID, &d.Seq, &d.Status, &d.Error, &expires); err != nil {
			return nil, err
		}
		d.ExpiresAt = fromNullMS(expires)
		out = append(out, d)
	}
	return out, rows.Err()
}

// findBatchJobs returns a batch's jobs in request order (rowid order).
// Every lookup by batch_id also requires it not empty, or SQLite cannot
// use the partial index jobs_batch and reads every job (issue 19).
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
