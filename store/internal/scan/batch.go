package scan

import (
	"database/sql"
	"errors"
	"strings"

	"folio/app"
)

// BatchCols are the columns Batch reads.
const BatchCols = `id, team_id, template_id, format, status, total, completed, failed, created_at, completed_at`

// BatchArgs are a batch's values in BatchCols order.
func BatchArgs(b *app.Batch) []any {
	return []any{b.ID, b.TeamID, b.TemplateID, b.Format, b.Status, b.Total, b.Completed, b.Failed, MS(b.CreatedAt), MSPtr(b.CompletedAt)}
}

// Batch reads one row of BatchCols; extra columns after them are read
// into extra. No row is ECodeBatchNotFound.
func Batch(row Row, extra ...any) (*app.Batch, error) {
	var b app.Batch
	var created int64
	var completed sql.NullInt64
	err := row.Scan(append([]any{&b.ID, &b.TeamID, &b.TemplateID, &b.Format, &b.Status, &b.Total, &b.Completed, &b.Failed, &created, &completed},
		extra...)...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound(app.ECodeBatchNotFound, "batch")
	} else if err != nil {
		return nil, err
	}
	b.CreatedAt, b.CompletedAt = FromMS(created), FromNullMS(completed)
	return &b, nil
}

// BatchWithStateCols are BatchCols with the version and states, read by
// BatchWithState.
const BatchWithStateCols = BatchCols + `, version, states`

// BatchWithState reads one row of BatchWithStateCols.
func BatchWithState(row Row) (*app.Batch, error) {
	var version int64
	var states sql.NullString
	b, err := Batch(row, &version, &states)
	if err != nil {
		return nil, err
	}
	b.Version, b.States = version, states.String
	return b, nil
}

// NewBatchStates are the states of a new batch of n documents: all pending.
func NewBatchStates(n int) string { return strings.Repeat(string(app.BatchPending), n) }

// BatchDocCols are the columns BatchDoc reads, of a job.
const BatchDocCols = `id, COALESCE(batch_seq, -1), status, error, expires_at`

// BatchDoc reads one row of BatchDocCols.
func BatchDoc(row Row) (app.BatchDoc, error) {
	var d app.BatchDoc
	var expires sql.NullInt64
	err := row.Scan(&d.JobID, &d.Seq, &d.Status, &d.Error, &expires)
	d.ExpiresAt = FromNullMS(expires)
	return d, err
}

// CountInBatch counts a job's end in its batch and ends the batch with its
// last job. raise adds one to the batch's column ("completed" or "failed")
// and returns the batch as counted, under the batch's lock; end sets its
// final status; jobs reads its jobs. It returns the ended batch and its
// jobs, or nil when the batch goes on.
func CountInBatch(status string, raise func(col string) (*app.Batch, error), end func(status string) (*app.Batch, error),
	jobs func() ([]*app.Job, error)) (*app.Batch, []*app.Job, error) {
	col := "failed"
	if status == app.StatusCompleted {
		col = "completed"
	}
	b, err := raise(col)
	if err != nil {
		return nil, nil, err
	}
	final, ends := b.EndStatus()
	if !ends {
		return nil, nil, nil
	}
	if b, err = end(final); err != nil {
		return nil, nil, err
	}
	list, err := jobs()
	return b, list, err
}
