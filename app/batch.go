package app

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Batch limits (SPEC.md, Payload limits) and the size above which a batch
// runs at the large-batch priority.
const (
	MaxBatchDocuments  = 100
	MaxBatchDocVarSize = 100 << 10
	LargeBatch         = 50
)

// Batch groups the jobs of one batch request.
type Batch struct {
	ID          string
	TeamID      string
	TemplateID  string
	Format      string
	Status      string // processing, completed, failed
	Total       int
	Completed   int
	Failed      int
	CreatedAt   time.Time
	CompletedAt *time.Time
}

// BatchStore keeps batches.
type BatchStore interface {
	// CreateBatch inserts the batch and its jobs in one transaction.
	CreateBatch(ctx context.Context, charge *Charge, b *Batch, jobs []*Job) error
	FindBatchByID(ctx context.Context, teamID, id string) (*Batch, error)
	// FindBatchJobs returns a batch's jobs in request order.
	FindBatchJobs(ctx context.Context, batchID string) ([]*Job, error)
}

// BatchInput is the body of POST /api/v1/documents/generate/batch.
type BatchInput struct {
	TemplateID string          `json:"templateId"`
	Format     string          `json:"format"`
	Documents  []BatchDocument `json:"documents"`
	// Version picks the template state, as in GenerateInput.
	Version json.RawMessage `json:"version"`
}

// BatchDocument is one document of a batch request.
type BatchDocument struct {
	Variables json.RawMessage `json:"variables"`
	Filename  string          `json:"filename"`
	Metadata  json.RawMessage `json:"metadata"`
}

// BatchView is the batch object of the API.
type BatchView struct {
	BatchID            string       `json:"batchId"`
	Status             string       `json:"status"`
	TemplateID         string       `json:"templateId"`
	Format             string       `json:"format"`
	TotalDocuments     int          `json:"totalDocuments"`
	CompletedDocuments int          `json:"completedDocuments"`
	FailedDocuments    int          `json:"failedDocuments"`
	Documents          []BatchEntry `json:"documents,omitempty"`
	CreatedAt          time.Time    `json:"createdAt"`
	CompletedAt        *time.Time   `json:"completedAt,omitempty"`
}

// BatchEntry is one entry of a batch's documents list.
type BatchEntry struct {
	JobID       string `json:"jobId"`
	Status      string `json:"status"`
	DownloadURL string `json:"downloadUrl,omitempty"`
	Error       string `json:"error,omitempty"`
}

// GenerateBatch validates every document up front (a bad one rejects the
// whole batch, naming its index), then records the batch and its jobs and
// queues them. It answers at once with the batch in `processing`.
func (s *DocumentService) GenerateBatch(ctx context.Context, in BatchInput) (*BatchView, error) {
	p, t, err := s.generationTarget(ctx, in.TemplateID, in.Format, in.Version)
	if err != nil {
		return nil, err
	}
	if in.Documents == nil {
		return nil, ErrRequired("documents")
	}
	n := len(in.Documents)
	if n == 0 {
		return nil, ErrInvalid("documents", "documents must hold at least one document")
	}
	if n > MaxBatchDocuments {
		return nil, (&Error{Code: ECodeBatchTooLarge, Message: "a batch holds at most 100 documents"}).WithInfo("field", "documents", "max", MaxBatchDocuments, "actual", n)
	}
	charge, plan, err := s.charge(ctx, p.TeamID)
	if err != nil {
		return nil, err
	}
	if plan.BatchSize > 0 && n > plan.BatchSize {
		return nil, Errorf(ECodePlanLimit, "the %s plan allows %d documents per batch", plan.Name, plan.BatchSize).
			WithInfo("limit", plan.BatchSize, "current", n, "plan", plan.Name, "resource", "batchSize")
	}
	ct, err := s.Templates.Compiled(t)
	if err != nil {
		return nil, err
	}
	priority := PriorityBatch
	if n > LargeBatch {
		priority = PriorityLargeBatch
	}
	now := s.Now().UTC()
	b := &Batch{ID: NewID("bat"), TeamID: p.TeamID, TemplateID: t.ID, Format: in.Format, Status: "processing", Total: n, CreatedAt: now}
	jobs := make([]*Job, n)
	for i, d := range in.Documents {
		at := func(e error) error {
			if ae, ok := e.(*Error); ok {
				return ae.WithInfo("index", i)
			}
			return e
		}
		if len(d.Variables) == 0 || string(d.Variables) == "null" {
			return nil, at(ErrRequired(fmt.Sprintf("documents[%d].variables", i)))
		}
		if len(d.Variables) > MaxBatchDocVarSize {
			return nil, at((&Error{Code: ECodeBatchDocTooLarge, Message: "variables of one batch document are limited to 100 KB"}).
				WithInfo("field", fmt.Sprintf("documents[%d].variables", i), "maxBytes", MaxBatchDocVarSize, "actualBytes", len(d.Variables)))
		}
		vars, err := decodeObject(fmt.Sprintf("documents[%d].variables", i), d.Variables)
		if err != nil {
			return nil, at(err)
		}
		if _, err := decodeObject(fmt.Sprintf("documents[%d].metadata", i), d.Metadata); err != nil {
			return nil, at(err)
		}
		if _, err := ct.Values(vars); err != nil {
			return nil, at(variableError(err))
		}
		jobs[i] = &Job{
			ID: NewID("job"), TeamID: p.TeamID, TemplateID: t.ID, TemplateVersion: t.StateVersion, BatchID: b.ID, Status: StatusPending, Format: in.Format,
			Filename: cleanFilename(d.Filename), Metadata: d.Metadata, Variables: d.Variables, Priority: priority,
			APIKeyID: p.KeyID, CreatedBy: p.UserID, CreatedAt: now,
		}
	}
	if err := s.Batches.CreateBatch(ctx, charge, b, jobs); err != nil {
		return nil, err
	}
	if err := s.queue(ctx, jobs); err != nil {
		return nil, err
	}
	return s.batchView(b, nil), nil
}

// FindBatch returns a batch with its documents and their download links.
func (s *DocumentService) FindBatch(ctx context.Context, id string) (*BatchView, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.Require(PermAttachmentsRead); err != nil {
		return nil, err
	}
	b, err := s.Batches.FindBatchByID(ctx, p.TeamID, id)
	if err != nil {
		return nil, err
	}
	jobs, err := s.Batches.FindBatchJobs(ctx, b.ID)
	if err != nil {
		return nil, err
	}
	return s.batchView(b, jobs), nil
}

func (s *DocumentService) batchView(b *Batch, jobs []*Job) *BatchView {
	v := &BatchView{
		BatchID: b.ID, Status: b.Status, TemplateID: b.TemplateID, Format: b.Format, TotalDocuments: b.Total,
		CompletedDocuments: b.Completed, FailedDocuments: b.Failed, CreatedAt: b.CreatedAt, CompletedAt: b.CompletedAt,
	}
	for _, j := range jobs {
		jv := s.View(j)
		v.Documents = append(v.Documents, BatchEntry{JobID: j.ID, Status: j.Status, DownloadURL: jv.DownloadURL, Error: j.Error})
	}
	return v
}
