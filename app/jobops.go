package app

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"maps"
	"strconv"
	"time"
)

// Retention of job records (SPEC.md, Limits).
const (
	CompletedJobRetention = 7 * 24 * time.Hour
	FailedJobRetention    = 30 * 24 * time.Hour
	maxBulkIDs            = 1000
)

// QueueStats is the answer of GET /api/v1/documents/queue/stats, for the
// caller's team (workers is the server's pool size).
type QueueStats struct {
	Pending                 int     `json:"pending"`
	Processing              int     `json:"processing"`
	CompletedLastHour       int     `json:"completedLastHour"`
	FailedLastHour          int     `json:"failedLastHour"`
	Workers                 int     `json:"workers"`
	OldestPendingAgeSeconds float64 `json:"oldestPendingAgeSeconds"`
}

// RetryJob queues a failed job again as a new job with a new id.
func (s *DocumentService) RetryJob(ctx context.Context, id string) (*JobView, error) {
	p, err := s.writer(ctx)
	if err != nil {
		return nil, err
	}
	j, err := s.Jobs.FindJobByID(ctx, p.TeamID, id)
	if err != nil {
		return nil, err
	}
	if j.Status != StatusFailed {
		return nil, Errorf(ECodeNotRetryable, "only failed jobs can be retried; job %s is %s", j.ID, j.Status).WithInfo("status", j.Status)
	}
	n := s.retryOf(j, p)
	if err := s.enqueue(ctx, n); err != nil {
		return nil, err
	}
	return s.View(n), nil
}

// RetryJobs queues every failed job among ids again and returns how many.
func (s *DocumentService) RetryJobs(ctx context.Context, ids []string) (int, error) {
	p, err := s.writer(ctx)
	if err != nil {
		return 0, err
	}
	if err := checkIDs(ids); err != nil {
		return 0, err
	}
	var retry []*Job
	for _, id := range dedupe(ids) {
		j, err := s.Jobs.FindJobByID(ctx, p.TeamID, id)
		if ErrorCode(err) == ECodeJobNotFound {
			continue
		} else if err != nil {
			return 0, err
		}
		if j.Status == StatusFailed {
			retry = append(retry, s.retryOf(j, p))
		}
	}
	if len(retry) == 0 {
		return 0, nil
	}
	return len(retry), s.enqueue(ctx, retry...)
}

// retryOf copies a failed job's request into a new pending job. The copy does
// not join the old batch, whose counts are final.
func (s *DocumentService) retryOf(j *Job, p *Principal) *Job {
	now := s.Now().UTC().Truncate(time.Millisecond)
	return &Job{
		ID: NewTimeID("job", now), TeamID: j.TeamID, TemplateID: j.TemplateID, TemplateVersion: j.TemplateVersion, Status: StatusPending, Format: j.Format,
		Filename: j.Filename, Metadata: j.Metadata, Variables: j.Variables, Priority: PrioritySingle,
		APIKeyID: p.KeyID, CreatedBy: p.UserID, CreatedAt: now,
	}
}

// DeletedJobError is what a batch counts for a document deleted before it
// ended: such a document counts as failed, so the batch still ends.
const DeletedJobError = "deleted"

// DeleteJob removes a job record and its file.
func (s *DocumentService) DeleteJob(ctx context.Context, id string) error {
	p, err := s.writer(ctx)
	if err != nil {
		return err
	}
	n, err := s.deleteJobs(ctx, p.TeamID, []string{id})
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound(ECodeJobNotFound, "job")
	}
	return nil
}

// DeleteJobs removes the team's jobs among ids and returns how many.
func (s *DocumentService) DeleteJobs(ctx context.Context, ids []string) (int, error) {
	p, err := s.writer(ctx)
	if err != nil {
		return 0, err
	}
	if err := checkIDs(ids); err != nil {
		return 0, err
	}
	return s.deleteJobs(ctx, p.TeamID, dedupe(ids))
}

// deleteJobs removes jobs and their files. A job deleted before it ended is
// refunded and ends as failed in its batch (the store does both with the
// delete); a worker running it finds no record to finish and drops its file.
func (s *DocumentService) deleteJobs(ctx context.Context, teamID string, ids []string) (int, error) {
	now := s.Now().UTC()
	out, err := s.Jobs.DeleteJobs(ctx, teamID, ids, now, func(b *Batch, jobs []*Job) (*Event, error) {
		e, err := s.batchEvent(b, jobs, now)
		if err == nil {
			e.RequestID = RequestIDFrom(ctx)
		}
		return e, err
	})
	if err != nil {
		return 0, err
	}
	s.removeFiles(out.Jobs)
	if s.Webhooks != nil && len(out.Events) > 0 {
		s.Webhooks.Dispatch(context.WithoutCancel(ctx), out.Events)
	}
	for _, b := range out.Batches {
		s.logger().Info("batch ended by deleting its unfinished jobs", "batch", b.ID, "team", b.TeamID, "status", b.Status,
			"completed", b.Completed, "failed", b.Failed, "request_id", RequestIDFrom(ctx))
	}
	return len(out.Jobs), nil
}

func (s *DocumentService) removeFiles(jobs []*Job) {
	for _, j := range jobs {
		if j.FilePath != "" {
			if err := s.Files.RemoveFile(j.FilePath); err != nil {
				s.logger().Error("remove document", "job", j.ID, "err", err)
			}
		}
	}
}

func (s *DocumentService) writer(ctx context.Context) (*Principal, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.Require(PermAttachmentsWrite); err != nil {
		return nil, err
	}
	if !CanWrite(p.Role) {
		return nil, &Error{Code: ECodeForbidden, Message: "viewers cannot change jobs"}
	}
	return p, nil
}

func checkIDs(ids []string) error {
	if ids == nil {
		return ErrRequired("jobIds")
	}
	if len(ids) == 0 || len(ids) > maxBulkIDs {
		return ErrInvalid("jobIds", "jobIds must hold 1 to %d ids", maxBulkIDs)
	}
	return nil
}

func dedupe(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// ExportJobs writes the team's job log as CSV or JSON, streaming rows.
func (s *DocumentService) ExportJobs(ctx context.Context, f ExportFilter, format string, w io.Writer) error {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return err
	}
	if err := p.Require(PermAttachmentsRead); err != nil {
		return err
	}
	f.TeamID = p.TeamID
	ts := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.UTC().Format(time.RFC3339)
	}
	switch format {
	case "json":
		io.WriteString(w, "[")
		first := true
		err := s.Jobs.ExportJobs(ctx, f, func(j *Job) error {
			b, err := json.Marshal(s.exportRow(j))
			if err != nil {
				return err
			}
			if !first {
				io.WriteString(w, ",\n")
			}
			first = false
			_, err = w.Write(b)
			return err
		})
		if err != nil {
			return err
		}
		_, err = io.WriteString(w, "]\n")
		return err
	default:
		cw := csv.NewWriter(w)
		cw.Write([]string{"jobId", "status", "format", "templateId", "templateVersion", "batchId", "filename", "errorCode", "error", "durationMs", "createdAt", "completedAt"})
		err := s.Jobs.ExportJobs(ctx, f, func(j *Job) error {
			d := ""
			if j.DurationMS != nil {
				d = strconv.FormatInt(*j.DurationMS, 10)
			}
			v := ""
			if j.TemplateVersion != nil {
				v = strconv.Itoa(*j.TemplateVersion)
			}
			return cw.Write([]string{j.ID, j.Status, j.Format, j.TemplateID, v, j.BatchID, csvSafe(j.Filename), j.ErrorCode, csvSafe(j.Error), d, ts(&j.CreatedAt), ts(j.CompletedAt)})
		})
		cw.Flush()
		if err != nil {
			return err
		}
		return cw.Error()
	}
}

// csvSafe defuses spreadsheet formula injection in free-text cells.
func csvSafe(s string) string {
	if s != "" && (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@') {
		return "'" + s
	}
	return s
}

type exportRow struct {
	JobID           string          `json:"jobId"`
	Status          string          `json:"status"`
	Format          string          `json:"format"`
	TemplateID      string          `json:"templateId"`
	TemplateVersion *int            `json:"templateVersion"`
	BatchID         string          `json:"batchId,omitempty"`
	Filename        string          `json:"filename,omitempty"`
	Metadata        json.RawMessage `json:"metadata,omitempty"`
	ErrorCode       string          `json:"errorCode,omitempty"`
	Error           string          `json:"error,omitempty"`
	DurationMS      *int64          `json:"durationMs,omitempty"`
	CreatedAt       time.Time       `json:"createdAt"`
	CompletedAt     *time.Time      `json:"completedAt,omitempty"`
}

func (s *DocumentService) exportRow(j *Job) exportRow {
	return exportRow{JobID: j.ID, Status: j.Status, Format: j.Format, TemplateID: j.TemplateID, TemplateVersion: j.TemplateVersion, BatchID: j.BatchID, Filename: j.Filename,
		Metadata: j.Metadata, ErrorCode: j.ErrorCode, Error: j.Error, DurationMS: j.DurationMS, CreatedAt: j.CreatedAt, CompletedAt: j.CompletedAt}
}

// QueueStats reports the team's queue.
func (s *DocumentService) QueueStats(ctx context.Context) (*QueueStats, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.Require(PermAttachmentsRead); err != nil {
		return nil, err
	}
	st, err := s.Jobs.QueueCounts(ctx, p.TeamID, s.Now())
	if err != nil {
		return nil, err
	}
	st.Workers = s.workers
	return st, nil
}

// Sweep is the janitor's pass: it removes files past their retention (their
// links expire with them) and job records past 7 days (completed) or 30 days
// (failed), and logs a line with what it removed.
func (s *DocumentService) Sweep(ctx context.Context) error {
	start := time.Now()
	now := s.Now().UTC()
	files, err := s.sweepFiles(ctx, now)
	var st SweepStats
	if err == nil {
		st, err = s.Jobs.PurgeJobs(ctx, now.Add(-CompletedJobRetention), now.Add(-FailedJobRetention))
	}
	if files > 0 {
		st.Deleted = maps.Clone(st.Deleted)
		if st.Deleted == nil {
			st.Deleted = map[string]int{}
		}
		st.Deleted["files"] = files
	}
	st.Duration = time.Since(start)
	st.Log(s.logger(), "janitor: job retention", err)
	return err
}

// sweepFiles removes the files past their retention and returns how many.
func (s *DocumentService) sweepFiles(ctx context.Context, now time.Time) (int, error) {
	n := 0
	for {
		jobs, err := s.Jobs.ExpiredFiles(ctx, now, 500)
		if err != nil {
			return n, err
		}
		for _, j := range jobs {
			if err := s.Files.RemoveFile(j.FilePath); err != nil {
				return n, err
			}
			if err := s.Jobs.ClearFile(ctx, j.ID); err != nil {
				return n, err
			}
			n++
		}
		if len(jobs) < 500 {
			return n, nil
		}
	}
}
