package scan

import (
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"folio/app"
)

// JobCols are the columns Job reads, and JobArgs gives, in this order.
const JobCols = `id, team_id, template_id, batch_id, status, format, filename, metadata, variables, priority, error, error_code,
	error_info, file_path, file_size, api_key_id, created_by, attempts, created_at, started_at, completed_at, expires_at, duration_ms,
	template_version, request_id, crashes, locale, pdf_options`

// JobListCols are JobCols without the variables and error details, which
// no list or export shows and which can be large.
var JobListCols = strings.NewReplacer("variables", "NULL", "error_info", "NULL").Replace(JobCols)

// Job reads one row of JobCols (or JobListCols); extra columns after them
// are read into extra. No row is ECodeJobNotFound.
func Job(row Row, extra ...any) (*app.Job, error) {
	var j app.Job
	var meta, info sql.NullString
	var vars []byte
	var pdfOpts string
	var created int64
	var started, completed, expires, duration, version sql.NullInt64
	err := row.Scan(append([]any{&j.ID, &j.TeamID, &j.TemplateID, &j.BatchID, &j.Status, &j.Format, &j.Filename, &meta, &vars, &j.Priority,
		&j.Error, &j.ErrorCode, &info, &j.FilePath, &j.FileSize, &j.APIKeyID, &j.CreatedBy, &j.Attempts, &created,
		&started, &completed, &expires, &duration, &version, &j.RequestID, &j.Crashes, &j.Locale, &pdfOpts}, extra...)...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound(app.ECodeJobNotFound, "job")
	} else if err != nil {
		return nil, err
	}
	if meta.Valid {
		j.Metadata = json.RawMessage(meta.String)
	}
	if vars != nil {
		if j.Variables, err = UnpackJSON(vars); err != nil {
			return nil, fmt.Errorf("job %s: variables: %w", j.ID, err)
		}
	}
	if pdfOpts != "" {
		j.PDFOptions = json.RawMessage(pdfOpts)
	}
	if info.Valid {
		_ = json.Unmarshal([]byte(info.String), &j.ErrorInfo)
	}
	if duration.Valid {
		j.DurationMS = &duration.Int64
	}
	if version.Valid {
		v := int(version.Int64)
		j.TemplateVersion = &v
	}
	j.CreatedAt = FromMS(created)
	j.StartedAt, j.CompletedAt, j.ExpiresAt = FromNullMS(started), FromNullMS(completed), FromNullMS(expires)
	return &j, nil
}

// JobArgs are a job's values in JobCols order.
func JobArgs(j *app.Job) []any { return jobArgs(j, NullJSON(j.Variables)) }

// PackedJobArgs are JobArgs with the variables packed (PackJSON), as
// SQLite stores them.
func PackedJobArgs(j *app.Job) []any { return jobArgs(j, PackJSON(j.Variables)) }

func jobArgs(j *app.Job, vars any) []any {
	return []any{j.ID, j.TeamID, j.TemplateID, j.BatchID, j.Status, j.Format, j.Filename,
		NullJSON(j.Metadata), vars, j.Priority, j.Error, j.ErrorCode, ErrorInfo(j.ErrorInfo), j.FilePath, j.FileSize,
		j.APIKeyID, j.CreatedBy, j.Attempts, MS(j.CreatedAt), MSPtr(j.StartedAt), MSPtr(j.CompletedAt), MSPtr(j.ExpiresAt), j.DurationMS,
		j.TemplateVersion, j.RequestID, j.Crashes, j.Locale, string(j.PDFOptions)}
}

// NullJSON is raw JSON as stored: text, or NULL when empty.
func NullJSON(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	return string(raw)
}

// ErrorInfo is a job's error details as stored: JSON text, or NULL.
func ErrorInfo(info map[string]any) any {
	if info == nil {
		return nil
	}
	b, err := json.Marshal(info)
	if err != nil {
		panic(err) // details are built from JSON-able values
	}
	return string(b)
}

// MSPtr is *t as stored, nil for nil.
func MSPtr(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	v := MS(*t)
	return &v
}

// EndedJob is j as a synchronous generate's RecordJob stores it, ended as
// r says: times as stored (whole milliseconds), so that the events and the
// answer built from it match every later read.
func EndedJob(j *app.Job, r app.JobResult) app.Job {
	stored := func(t *time.Time) *time.Time {
		if t == nil {
			return nil
		}
		v := FromMS(MS(*t))
		return &v
	}
	ended := *j
	ended.Status, ended.Error, ended.ErrorCode, ended.ErrorInfo = r.Status, r.Error, r.ErrorCode, r.ErrorInfo
	ended.FilePath, ended.FileSize, ended.ExpiresAt = r.FilePath, r.FileSize, stored(r.ExpiresAt)
	duration := r.DurationMS
	ended.CreatedAt, ended.CompletedAt, ended.DurationMS = FromMS(MS(j.CreatedAt)), stored(&r.CompletedAt), &duration
	ended.StartedAt = stored(j.StartedAt)
	if ended.StartedAt == nil {
		ended.StartedAt = ended.CompletedAt
	}
	ended.Attempts = max(ended.Attempts, 1)
	return ended
}

// A job list's cursor is the position of a page's last row in its order:
// its creation time and its insertion order (SQLite's rowid, PostgreSQL's
// seq), opaque to clients.

// JobCursor makes the cursor after the row at (at, seq).
func JobCursor(at, seq int64) string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%d.%d", at, seq))
}

// ParseJobCursor reads a cursor JobCursor made; anything else is
// ECodeInvalidField.
func ParseJobCursor(c string) (at, seq int64, err error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		_, err = fmt.Sscanf(string(b), "%d.%d", &at, &seq)
	}
	if err != nil {
		return 0, 0, app.ErrInvalid("cursor", "cursor must be a meta.nextCursor of this list")
	}
	return at, seq, nil
}

// JobPage reads a job list's rows (JobListCols and the row's order
// column) into a page of at most limit jobs, and completes info: More and
// Next when a row follows, the total past the count from the rows seen.
func JobPage(rows Rows, limit, offset int, info *app.ListInfo) ([]*app.Job, error) {
	list := []*app.Job{}
	var last int64
	for rows.Next() {
		if len(list) == limit {
			info.More = true
			break
		}
		j, err := Job(rows, &last)
		if err != nil {
			return nil, err
		}
		list = append(list, j)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if info.More {
		info.Next = JobCursor(MS(list[len(list)-1].CreatedAt), last)
	}
	if info.Estimate && !info.FromCursor {
		more := 0
		if info.More {
			more = 1
		}
		info.Total = max(info.Total, offset+len(list)+more)
	}
	return list, nil
}

// QueueStats reads a team's queue figures at now: (pending, processing,
// completed and failed in the last hour, the oldest pending job's
// creation or NULL).
func QueueStats(row Row, now time.Time) (*app.QueueStats, error) {
	var st app.QueueStats
	var oldest sql.NullInt64
	if err := row.Scan(&st.Pending, &st.Processing, &st.CompletedLastHour, &st.FailedLastHour, &oldest); err != nil {
		return nil, err
	}
	if oldest.Valid {
		st.OldestPendingAgeSeconds = max(0, float64(MS(now)-oldest.Int64)/1000)
	}
	return &st, nil
}

// Jobs reads every row of JobCols (or JobListCols).
func Jobs(rows Rows) ([]*app.Job, error) {
	var out []*app.Job
	return out, EachJob(rows, func(j *app.Job) error {
		out = append(out, j)
		return nil
	})
}

// EachJob reads rows of JobCols (or JobListCols) and calls fn with each
// job, stopping at its first error.
func EachJob(rows Rows, fn func(*app.Job) error) error {
	for rows.Next() {
		j, err := Job(rows)
		if err != nil {
			return err
		}
		if err := fn(j); err != nil {
			return err
		}
	}
	return rows.Err()
}

// JobFile reads a job's document (a row of job_files.data); no row is
// ECodeFileGone: the document is a file, or gone.
func JobFile(row Row) ([]byte, error) {
	var data []byte
	err := row.Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound(app.ECodeFileGone, "document")
	}
	return data, err
}

// Usage reads a team's month of usage (documents, credits_used); no row
// is zero.
func Usage(row Row) (app.UsageCounts, error) {
	var u app.UsageCounts
	err := row.Scan(&u.Documents, &u.CreditsUsed)
	if errors.Is(err, sql.ErrNoRows) {
		return app.UsageCounts{}, nil
	}
	return u, err
}

// Covers reads (the month's documents, the team's credits) and reports
// whether c covers n more documents: CheckQuota.
func Covers(row Row, c *app.Charge, n int64) error {
	var used, credits int64
	if err := row.Scan(&used, &credits); err != nil {
		return err
	}
	return c.Covers(used, credits, n)
}
