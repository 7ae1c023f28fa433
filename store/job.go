package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"folio/app"
)

var _ app.JobStore = (*DB)(nil)

const jobCols = `id, team_id, template_id, batch_id, status, format, filename, metadata, variables, priority, error, error_code,
	error_info, file_path, file_size, api_key_id, created_by, attempts, created_at, started_at, completed_at, expires_at`

func scanJob(row scanner) (*app.Job, error) {
	var j app.Job
	var meta, vars, info sql.NullString
	var created int64
	var started, completed, expires sql.NullInt64
	err := row.Scan(&j.ID, &j.TeamID, &j.TemplateID, &j.BatchID, &j.Status, &j.Format, &j.Filename, &meta, &vars, &j.Priority,
		&j.Error, &j.ErrorCode, &info, &j.FilePath, &j.FileSize, &j.APIKeyID, &j.CreatedBy, &j.Attempts, &created,
		&started, &completed, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound(app.ECodeJobNotFound, "job")
	} else if err != nil {
		return nil, err
	}
	if meta.Valid {
		j.Metadata = json.RawMessage(meta.String)
	}
	if vars.Valid {
		j.Variables = json.RawMessage(vars.String)
	}
	if info.Valid {
		_ = json.Unmarshal([]byte(info.String), &j.ErrorInfo)
	}
	j.CreatedAt = fromMS(created)
	j.StartedAt, j.CompletedAt, j.ExpiresAt = fromNullMS(started), fromNullMS(completed), fromNullMS(expires)
	return &j, nil
}

func nullJSON(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	return string(raw)
}

// CreateJobs inserts job records in one transaction.
func (db *DB) CreateJobs(ctx context.Context, jobs ...*app.Job) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO jobs (`+jobCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, j := range jobs {
			var info any
			if j.ErrorInfo != nil {
				info = mustJSON(j.ErrorInfo)
			}
			if _, err := stmt.ExecContext(ctx, j.ID, j.TeamID, j.TemplateID, j.BatchID, j.Status, j.Format, j.Filename,
				nullJSON(j.Metadata), nullJSON(j.Variables), j.Priority, j.Error, j.ErrorCode, info, j.FilePath, j.FileSize,
				j.APIKeyID, j.CreatedBy, j.Attempts, ms(j.CreatedAt), msPtr(j.StartedAt), msPtr(j.CompletedAt), msPtr(j.ExpiresAt)); err != nil {
				return err
			}
		}
		return nil
	})
}

// FindJobByID returns one of a team's jobs.
func (db *DB) FindJobByID(ctx context.Context, teamID, id string) (*app.Job, error) {
	return scanJob(db.read.QueryRowContext(ctx, `SELECT `+jobCols+` FROM jobs WHERE team_id = ? AND id = ?`, teamID, id))
}

// FindJobForWorker returns a job by id alone (workers, signed downloads).
func (db *DB) FindJobForWorker(ctx context.Context, id string) (*app.Job, error) {
	return scanJob(db.read.QueryRowContext(ctx, `SELECT `+jobCols+` FROM jobs WHERE id = ?`, id))
}

// FindJobs lists a team's jobs, newest first.
func (db *DB) FindJobs(ctx context.Context, f app.JobFilter) ([]*app.Job, int, error) {
	where, args := []string{"team_id = ?"}, []any{f.TeamID}
	if f.Status != "" {
		where, args = append(where, "status = ?"), append(args, f.Status)
	}
	if f.TemplateID != "" {
		where, args = append(where, "template_id = ?"), append(args, f.TemplateID)
	}
	cond := strings.Join(where, " AND ")
	var total int
	if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM jobs WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+jobCols+` FROM jobs WHERE `+cond+
		` ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`, append(args, f.Page.Limit, f.Page.Offset())...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	list := []*app.Job{}
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, 0, err
		}
		list = append(list, j)
	}
	return list, total, rows.Err()
}

// StartJob marks a job processing unless it already ended.
func (db *DB) StartJob(ctx context.Context, id string, now time.Time) (*app.Job, bool, error) {
	var j *app.Job
	err := db.tx(ctx, func(tx *sql.Tx) error {
		var err error
		j, err = scanJob(tx.QueryRowContext(ctx, `UPDATE jobs SET status = 'processing', started_at = ?, attempts = attempts + 1
			WHERE id = ? AND status IN ('pending', 'processing') RETURNING `+jobCols, ms(now), id))
		return err
	})
	if app.ErrorCode(err) == app.ECodeJobNotFound {
		return nil, false, nil
	}
	return j, err == nil, err
}

// FinishJob records a processing job's end; false when it had already ended.
func (db *DB) FinishJob(ctx context.Context, id string, r app.JobResult) (bool, error) {
	var info any
	if r.ErrorInfo != nil {
		info = mustJSON(r.ErrorInfo)
	}
	var ok bool
	err := db.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE jobs SET status = ?, error = ?, error_code = ?, error_info = ?, file_path = ?,
			file_size = ?, completed_at = ?, expires_at = ? WHERE id = ? AND status = 'processing'`,
			r.Status, r.Error, r.ErrorCode, info, r.FilePath, r.FileSize, ms(r.CompletedAt), msPtr(r.ExpiresAt), id)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		ok = n == 1
		return err
	})
	return ok, err
}

// UnfinishedJobIDs lists pending and processing jobs, oldest first.
func (db *DB) UnfinishedJobIDs(ctx context.Context) ([]string, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id FROM jobs WHERE status IN ('pending', 'processing') ORDER BY created_at`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
