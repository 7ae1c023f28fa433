package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"folio/render"
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
	// Version rises with every change of one of the batch's jobs (status,
	// deletion), in the same transaction.
	Version int64
	// States holds one BatchState a document, in request order; empty for
	// batches created before it existed (migration 0017).
	States string
}

// EndStatus tells, once a job's end was counted in b, whether that was
// the batch's last job (ends) and the status it ends with: completed when
// any document completed, failed otherwise. A batch that already ended
// never ends again.
func (b *Batch) EndStatus() (status string, ends bool) {
	if b.Status != StatusProcessing || b.Completed+b.Failed < b.Total {
		return "", false
	}
	if b.Completed == 0 {
		return StatusFailed, true
	}
	return StatusCompleted, true
}

// BatchState is a document's state in Batch.States.
type BatchState = byte

// The states of Batch.States.
const (
	BatchPending    BatchState = 'p'
	BatchProcessing BatchState = 'r'
	BatchCompleted  BatchState = 'c'
	BatchFailed     BatchState = 'f'
	BatchGone       BatchState = '-' // deleted
)

// BatchDoc is what a batch's documents list shows of one of its jobs.
type BatchDoc struct {
	JobID     string
	Seq       int // index in Batch.States; -1 for batches without states
	Status    string
	Error     string
	ExpiresAt *time.Time
}

// BatchStore keeps batches.
type BatchStore interface {
	// CreateBatch inserts the batch and its jobs in one transaction.
	CreateBatch(ctx context.Context, charge *Charge, b *Batch, jobs []*Job) error
	// FindBatchByID returns a batch with its version and states.
	FindBatchByID(ctx context.Context, teamID, id string) (*Batch, error)
	// FindBatchDocs returns a batch's documents in request order, or
	// those among ids (not nil) in any order.
	FindBatchDocs(ctx context.Context, batchID string, ids []string) ([]BatchDoc, error)
}

// BatchInput is the body of POST /api/v1/documents/generate/batch.
type BatchInput struct {
	TemplateID string          `json:"templateId"`
	Format     string          `json:"format"`
	Documents  []BatchDocument `json:"documents"`
	// Version picks the template state, as in GenerateInput.
	Version json.RawMessage `json:"version"`
	// Locale overrides the template schema's locale for every document.
	Locale string `json:"locale"`
	// PDFRequest holds pdfa, watermark, encrypt and documentMetadata for
	// every document; a document's own encrypt and documentMetadata win.
	render.PDFRequest
}

// BatchDocument is one document of a batch request.
type BatchDocument struct {
	Variables json.RawMessage `json:"variables"`
	Filename  string          `json:"filename"`
	Metadata  json.RawMessage `json:"metadata"`
	// Encrypt and DocumentMetadata replace the batch's for this document
	// (a payslip with its employee's password).
	Encrypt          json.RawMessage `json:"encrypt,omitempty"`
	DocumentMetadata json.RawMessage `json:"documentMetadata,omitempty"`
}

// BatchView is the batch object of the API; BatchJSON adds its documents
// list (the answer to batch creation has none).
type BatchView struct {
	BatchID            string     `json:"batchId"`
	Status             string     `json:"status"`
	TemplateID         string     `json:"templateId"`
	Format             string     `json:"format"`
	TotalDocuments     int        `json:"totalDocuments"`
	CompletedDocuments int        `json:"completedDocuments"`
	FailedDocuments    int        `json:"failedDocuments"`
	CreatedAt          time.Time  `json:"createdAt"`
	CompletedAt        *time.Time `json:"completedAt,omitempty"`
	// CombinedURL is a signed link to the batch's completed PDF documents
	// as one file with a bookmark each (combine.go), once the batch has
	// ended; it expires with the first of their links.
	CombinedURL       string     `json:"combinedUrl,omitempty"`
	CombinedExpiresAt *time.Time `json:"combinedExpiresAt,omitempty"`
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
	n, err := checkBatchSize(in.Documents)
	if err != nil {
		return nil, err
	}
	charge, plan, err := s.charge(ctx, p.TeamID)
	if err != nil {
		return nil, err
	}
	if plan.BatchSize > 0 && n > plan.BatchSize {
		return nil, Errorf(ECodePlanLimit, "the %s plan allows %d documents per batch", plan.Name, plan.BatchSize).
			WithInfo("limit", plan.BatchSize, "current", n, "plan", plan.Name, "resource", "batchSize")
	}
	if err := checkLocale("locale", in.Locale); err != nil {
		return nil, err
	}
	ct, err := s.Templates.Compiled(ctx, t, in.Locale)
	if err != nil {
		return nil, err
	}
	priority := PriorityBatch
	if n > LargeBatch {
		priority = PriorityLargeBatch
	}
	now := s.Now().UTC().Truncate(time.Millisecond) // as stored
	b := &Batch{ID: NewTimeID("bat", now), TeamID: p.TeamID, TemplateID: t.ID, Format: in.Format, Status: "processing", Total: n, CreatedAt: now}
	jobs := make([]*Job, n)
	opts := make([]render.PDFOptions, n)
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
		pdfOpts, err := batchPDFOptions(in, i, d, ct)
		if err != nil {
			return nil, at(err)
		}
		if i == 0 { // sign is the batch's, the same for every document
			if err := s.Signing.CheckSignature(ctx, p.TeamID, signatureFor(ct, pdfOpts, in.Format)); err != nil {
				return nil, err
			}
		}
		opts[i] = pdfOpts
		jobs[i] = &Job{
			ID: NewTimeID("job", now), TeamID: p.TeamID, TemplateID: t.ID, TemplateVersion: t.StateVersion, BatchID: b.ID, Status: StatusPending, Format: in.Format,
			Filename: cleanFilename(d.Filename), Metadata: d.Metadata, Variables: d.Variables, Priority: priority,
			APIKeyID: p.KeyID, CreatedBy: p.UserID, CreatedAt: now, RequestID: RequestIDFrom(ctx), Locale: in.Locale,
			PDFOptions: storedPDFOptions(in.pdfRequest(d)),
		}
	}
	for i, j := range jobs {
		s.keepSecrets(j.ID, opts[i])
	}
	if err := s.Batches.CreateBatch(ctx, charge, b, jobs); err != nil {
		for _, j := range jobs {
			s.pdfSecrets.Delete(j.ID)
		}
		return nil, err
	}
	if err := s.queue(ctx, jobs); err != nil {
		return nil, err
	}
	return s.batchView(b), nil
}

func (s *DocumentService) batchView(b *Batch) *BatchView {
	return &BatchView{
		BatchID: b.ID, Status: b.Status, TemplateID: b.TemplateID, Format: b.Format, TotalDocuments: b.Total,
		CompletedDocuments: b.Completed, FailedDocuments: b.Failed, CreatedAt: b.CreatedAt, CompletedAt: b.CompletedAt,
	}
}

// BatchDryRun is the answer of POST /api/v1/documents/generate/batch?dryRun=true:
// every document checked and rendered like a job, then thrown away. Predicted
// adds up the documents' figures.
type BatchDryRun struct {
	Valid     bool             `json:"valid"`
	Errors    []DryRunIssue    `json:"errors"`
	Warnings  []DryRunIssue    `json:"warnings"`
	Predicted Prediction       `json:"predicted"`
	Limits    DryRunLimits     `json:"limits"`
	Documents []DocumentDryRun `json:"documents"`
}

// DocumentDryRun is one document of a batch dry run.
type DocumentDryRun struct {
	Index     int           `json:"index"`
	Filename  string        `json:"filename,omitempty"`
	Valid     bool          `json:"valid"`
	Errors    []DryRunIssue `json:"errors"`
	Warnings  []DryRunIssue `json:"warnings"`
	Predicted Prediction    `json:"predicted"`
}

// BatchDryRunTime bounds a batch dry run, which renders in the request:
// documents not reached by then are reported as not checked.
const BatchDryRunTime = 90 * time.Second

// DryRunBatch checks a batch request document by document and renders
// each without storing it. Problems of the request itself (no documents,
// more than 100) are errors as for a real batch; problems of single
// documents, and a batch larger than the plan allows, are reported in the
// answer. No batch or job is recorded, no quota charged, no webhook sent.
func (s *DocumentService) DryRunBatch(ctx context.Context, in BatchInput) (*BatchDryRun, error) {
	p, t, err := s.generationTarget(ctx, in.TemplateID, in.Format, in.Version)
	if err != nil {
		return nil, err
	}
	n, err := checkBatchSize(in.Documents)
	if err != nil {
		return nil, err
	}
	_, plan, err := s.charge(ctx, p.TeamID)
	if err != nil {
		return nil, err
	}
	if err := checkLocale("locale", in.Locale); err != nil {
		return nil, err
	}
	ct, err := s.Templates.Compiled(ctx, t, in.Locale)
	if err != nil {
		return nil, err
	}
	out := &BatchDryRun{Errors: []DryRunIssue{}, Warnings: templateWarnings(ct), Documents: make([]DocumentDryRun, n),
		Limits: s.dryRunLimits(in.Format, plan, plan.BatchSize)}
	if plan.BatchSize > 0 && n > plan.BatchSize {
		out.Errors = append(out.Errors, DryRunIssue{Code: ECodePlanLimit, Message: fmt.Sprintf("the %s plan allows %d documents per batch", plan.Name, plan.BatchSize),
			Info: map[string]any{"limit": plan.BatchSize, "current": n, "plan": plan.Name, "resource": "batchSize"}})
	}
	deadline, cancel := context.WithTimeout(ctx, BatchDryRunTime)
	defer cancel()
	for i, d := range in.Documents {
		doc := &out.Documents[i]
		*doc = DocumentDryRun{Index: i, Filename: cleanFilename(d.Filename), Errors: []DryRunIssue{}, Warnings: []DryRunIssue{}}
		if issue := batchDocumentIssue(i, d); issue != nil {
			doc.Errors = append(doc.Errors, *issue)
		} else if deadline.Err() != nil {
			doc.Errors = append(doc.Errors, DryRunIssue{Code: ECodeRenderTimeout,
				Message: fmt.Sprintf("not checked: the dry run took longer than %s", BatchDryRunTime)})
		} else {
			vars, _ := decodeObject("variables", d.Variables)
			pdfOpts, err := batchPDFOptions(in, i, d, ct)
			if err != nil {
				return nil, err
			}
			if err := s.Signing.CheckSignature(ctx, p.TeamID, signatureFor(ct, pdfOpts, in.Format)); err != nil {
				return nil, err
			}
			c, err := s.dryRender(deadline, t, ct, in.Format, vars, pdfOpts)
			if err != nil && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			doc.Errors, doc.Warnings, doc.Predicted = c.Errors, c.Warnings, c.Predicted
			if err != nil { // the batch's own deadline passed during this document
				doc.Errors = append(doc.Errors, DryRunIssue{Code: ECodeRenderTimeout,
					Message: fmt.Sprintf("not checked: the dry run took longer than %s", BatchDryRunTime)})
			}
		}
		doc.Valid = len(doc.Errors) == 0
		out.Predicted.Pages += doc.Predicted.Pages
		out.Predicted.Images += doc.Predicted.Images
		out.Predicted.Rows += doc.Predicted.Rows
		out.Predicted.Sheets += doc.Predicted.Sheets
		out.Predicted.Bytes += doc.Predicted.Bytes
	}
	out.Valid = len(out.Errors) == 0
	for _, d := range out.Documents {
		out.Valid = out.Valid && d.Valid
	}
	return out, nil
}

// batchDocumentIssue checks what a real batch refuses a document for
// before rendering it, as a dry run reports it.
func batchDocumentIssue(i int, d BatchDocument) *DryRunIssue {
	issue := func(err error) *DryRunIssue {
		var e *Error
		if errors.As(err, &e) {
			return &DryRunIssue{Code: e.Code, Message: e.Message, Info: e.Info}
		}
		return &DryRunIssue{Code: ECodeInvalidField, Message: err.Error()}
	}
	field := fmt.Sprintf("documents[%d].variables", i)
	switch {
	case len(d.Variables) == 0 || string(d.Variables) == "null":
		return issue(ErrRequired(field))
	case len(d.Variables) > MaxBatchDocVarSize:
		return issue((&Error{Code: ECodeBatchDocTooLarge, Message: "variables of one batch document are limited to 100 KB"}).
			WithInfo("field", field, "maxBytes", MaxBatchDocVarSize, "actualBytes", len(d.Variables)))
	}
	if _, err := decodeObject(field, d.Variables); err != nil {
		return issue(err)
	}
	if _, err := decodeObject(fmt.Sprintf("documents[%d].metadata", i), d.Metadata); err != nil {
		return issue(err)
	}
	return nil
}

// checkBatchSize checks that a batch request holds 1 to MaxBatchDocuments
// documents and returns how many.
func checkBatchSize(docs []BatchDocument) (int, error) {
	if docs == nil {
		return 0, ErrRequired("documents")
	}
	n := len(docs)
	if n == 0 {
		return 0, ErrInvalid("documents", "documents must hold at least one document")
	}
	if n > MaxBatchDocuments {
		return 0, (&Error{Code: ECodeBatchTooLarge, Message: "a batch holds at most 100 documents"}).WithInfo("field", "documents", "max", MaxBatchDocuments, "actual", n)
	}
	return n, nil
}
