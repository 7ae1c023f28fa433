package app

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Job statuses.
const (
	StatusPending    = "pending"
	StatusProcessing = "processing"
	StatusCompleted  = "completed"
	StatusFailed     = "failed"
)

// Job is one document generation.
type Job struct {
	ID         string
	TeamID     string
	TemplateID string
	// TemplateVersion is the published version rendered; nil: the draft.
	TemplateVersion *int
	BatchID         string
	Status          string
	Format          string
	Filename        string
	Metadata        json.RawMessage
	Variables       json.RawMessage
	Priority        int
	Error           string
	ErrorCode       string
	ErrorInfo       map[string]any
	FilePath        string
	FileSize        int64
	APIKeyID        string
	CreatedBy       string
	Attempts        int
	// Crashes counts the runs that began and never ended: the process
	// died while rendering the job (see MaxJobCrashes).
	Crashes     int
	DurationMS  *int64
	CreatedAt   time.Time
	StartedAt   *time.Time
	CompletedAt *time.Time
	// ExpiresAt is when the file and its download link expire.
	ExpiresAt *time.Time

	// RequestID is the X-Request-Id of the request that queued the job,
	// carried into the worker's and the webhooks' log lines.
	RequestID string
	// Locale is the request's locale override; "" renders in the
	// template's own.
	Locale string
	// PDFOptions are the request's business PDF options without their
	// secrets (jobPDFOptions, JSON); nil: the template's own.
	PDFOptions json.RawMessage
}

// JobResult is what a worker records when a job ends.
type JobResult struct {
	Status      string
	Error       string
	ErrorCode   string
	ErrorInfo   map[string]any
	FilePath    string
	FileSize    int64
	CompletedAt time.Time
	ExpiresAt   *time.Time
	DurationMS  int64
	// Output is the document itself when the database keeps it (at most
	// InlineMax bytes): stored with the job's end, no file written.
	// FilePath still names it. Empty when the document is a file.
	Output []byte
	// unstored is set when the document was made but the file store could
	// not be reached to keep it (ErrFilesUnavailable): the job has not
	// ended; it goes back to pending and runs again later (retryLater).
	unstored bool
}

// FinishOutcome tells what recording a job's end changed.
type FinishOutcome struct {
	// Ended is false when the job had already ended (or was deleted).
	Ended bool
	// Job is the job as its end recorded it (when Ended).
	Job *Job
	// Batch is set when this job was the last of its batch to end.
	Batch *Batch
	// Events are the events stored with the end, to dispatch.
	Events []*Event
}

// DeleteOutcome tells what deleting jobs changed.
type DeleteOutcome struct {
	// Jobs are the removed jobs.
	Jobs []*Job
	// Batches are the batches the deletion ended.
	Batches []*Batch
	// Events are the events stored with the deletion, to dispatch.
	Events []*Event
}

// ExportFilter selects a team's jobs for export.
type ExportFilter struct {
	TeamID   string
	Status   string
	From, To *time.Time
}

// Validate checks the status filter, as the job list does.
func (f ExportFilter) Validate() error { return validStatus(f.Status) }

func validStatus(s string) error {
	switch s {
	case "", StatusPending, StatusProcessing, StatusCompleted, StatusFailed:
		return nil
	}
	return ErrInvalid("status", "status must be pending, processing, completed or failed")
}

// JobFilter selects a team's jobs for listing.
type JobFilter struct {
	TeamID     string
	Status     string
	TemplateID string
	Page       Page
	// Cursor, when set, starts the page after the job a previous page's
	// meta.nextCursor named (Page.Page is not used then).
	Cursor string
}

// WriteExpecter is a JobStore whose commits can wait for the writes of
// documents in progress (store.DB: its writer groups the ends of
// documents that end close together into one commit while the cores are
// busy). The document service adds one for each document in progress.
type WriteExpecter interface {
	ExpectWrites(delta int)
}

// JobStore keeps job records.
type JobStore interface {
	// CreateJobs records jobs and pays for them with charge (nil: free).
	CreateJobs(ctx context.Context, charge *Charge, jobs ...*Job) error
	// FindJobByID is team-scoped: another team's job is not found.
	FindJobByID(ctx context.Context, teamID, id string) (*Job, error)
	// FindJobForWorker loads a job by id only, for workers and downloads.
	FindJobForWorker(ctx context.Context, id string) (*Job, error)
	// FindJobs lists a team's jobs, newest first, a page at an offset or
	// after f.Cursor; the total counts at most MaxCount rows.
	FindJobs(ctx context.Context, f JobFilter) ([]*Job, ListInfo, error)
	// StartJob moves a pending or processing job to processing and returns
	// it; a job that already ended returns ok=false.
	// A job found processing counts a crash: its previous run never ended.
	StartJob(ctx context.Context, id string, now time.Time) (job *Job, ok bool, err error)
	// ReleaseJob returns a processing job to pending (shutdown interrupted it).
	ReleaseJob(ctx context.Context, id string) error
	// FinishJob records the end of a processing job exactly once, and in the
	// same transaction counts it in its batch, ending the batch with its last job.
	// events (may be nil) builds the events stored in that transaction.
	FinishJob(ctx context.Context, id string, r JobResult, events EventBuilder) (FinishOutcome, error)
	// RecordJob records, in one transaction, a job that ran before it was
	// recorded (a synchronous generate): j as r ended it, its charge when
	// it completed, its counts, r.Output and the events. A charge the quota
	// no longer covers records nothing and returns the quota error.
	RecordJob(ctx context.Context, charge *Charge, j *Job, r JobResult, events EventBuilder) (FinishOutcome, error)
	// FindJobFile returns a job's document when the database keeps it;
	// ECodeFileGone when it is a file or gone.
	FindJobFile(ctx context.Context, jobID string) ([]byte, error)
	// CheckQuota reports whether charge still covers n documents (ErrQuota
	// when not), charging nothing.
	CheckQuota(ctx context.Context, charge *Charge, n int64) error
	// DeleteJobs removes a team's jobs. A job that had not ended (pending or
	// processing) is refunded and counted as failed in its batch in the same
	// transaction, ending the batch when it was the last to end; events (may
	// be nil) builds that batch's event, stored in the transaction.
	DeleteJobs(ctx context.Context, teamID string, ids []string, now time.Time, events BatchEventBuilder) (DeleteOutcome, error)
	// ExportJobs streams a team's jobs matching f, oldest first.
	ExportJobs(ctx context.Context, f ExportFilter, fn func(*Job) error) error
	// QueueCounts returns a team's queue figures at now.
	QueueCounts(ctx context.Context, teamID string, now time.Time) (*QueueStats, error)
	// ExpiredFiles lists jobs whose files expired before now.
	ExpiredFiles(ctx context.Context, now time.Time, limit int) ([]*Job, error)
	// ClearFile forgets a job's file after the janitor removed it.
	ClearFile(ctx context.Context, id string) error
	// PurgeJobs deletes completed jobs ended before completedBefore and failed
	// jobs ended before failedBefore, and ended batches whose jobs are all
	// gone, in short transactions.
	PurgeJobs(ctx context.Context, completedBefore, failedBefore time.Time) (SweepStats, error)
	// UnfinishedJobIDs lists pending and processing jobs created before
	// createdBefore (zero: all).
	UnfinishedJobIDs(ctx context.Context, createdBefore time.Time) ([]string, error)
}

// JobView is the job object of the API.
type JobView struct {
	JobID      string `json:"jobId"`
	Status     string `json:"status"`
	Format     string `json:"format"`
	TemplateID string `json:"templateId"`
	// TemplateVersion is the published template version the job renders;
	// null when it renders the unpublished draft.
	TemplateVersion *int            `json:"templateVersion"`
	BatchID         string          `json:"batchId,omitempty"`
	Filename        string          `json:"filename,omitempty"`
	Metadata        json.RawMessage `json:"metadata,omitempty"`
	DownloadURL     string          `json:"downloadUrl,omitempty"`
	ExpiresAt       *time.Time      `json:"expiresAt,omitempty"`
	Error           string          `json:"error,omitempty"`
	ErrorCode       string          `json:"errorCode,omitempty"`
	CreatedAt       time.Time       `json:"createdAt"`
	CompletedAt     *time.Time      `json:"completedAt,omitempty"`
}

// Downloads signs and checks download links: HMAC-SHA256 over job id and
// expiry with a server key.
type Downloads struct {
	Key     []byte
	BaseURL string
}

func (d Downloads) signature(jobID string, expires int64) string {
	m := hmac.New(sha256.New, d.Key)
	m.Write([]byte(jobID + "." + strconv.FormatInt(expires, 10)))
	return hex.EncodeToString(m.Sum(nil))
}

// URL returns the signed link to a job's file, valid until expires.
func (d Downloads) URL(jobID string, expires time.Time) string {
	e := expires.Unix()
	return strings.TrimRight(d.BaseURL, "/") + "/api/v1/documents/jobs/" + jobID + "/download?expires=" +
		strconv.FormatInt(e, 10) + "&signature=" + d.signature(jobID, e)
}

// Verify checks a link's expiry and signature in constant time.
func (d Downloads) Verify(jobID, expires, signature string, now time.Time) error {
	// Both answers say how to get a working link: the job's status
	// carries a fresh one for as long as the file is kept.
	fresh := "GET /api/v1/documents/jobs/" + jobID
	deny := (&Error{Code: ECodeDownloadDenied, Message: "download link is invalid (altered or incomplete); " +
		fresh + " with your API key answers a fresh downloadUrl"}).WithInfo("jobId", jobID, "freshLink", fresh)
	e, err := strconv.ParseInt(expires, 10, 64)
	if err != nil || signature == "" || !utf8.ValidString(signature) {
		return deny
	}
	if !hmac.Equal([]byte(signature), []byte(d.signature(jobID, e))) {
		return deny
	}
	if now.Unix() >= e {
		at := time.Unix(e, 0).UTC()
		return (&Error{Code: ECodeDownloadDenied, Message: "download link expired at " + at.Format(time.RFC3339) + "; " +
			fresh + " with your API key answers a fresh downloadUrl while the file is kept"}).
			WithInfo("jobId", jobID, "expiredAt", at, "freshLink", fresh)
	}
	return nil
}
