package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"folio/render"
	"folio/render/expr/locale"
)

// DefaultGenerateWait is how long a synchronous generate waits for its job
// unless DocumentService.GenerateWait says otherwise.
const DefaultGenerateWait = 30 * time.Second

// MaxVariablesSize limits the variables of one request (SPEC.md, Payload limits).
const MaxVariablesSize = 1 << 20

// DocumentService accepts generation requests, runs the workers and answers
// job queries.
type DocumentService struct {
	Jobs      JobStore
	Batches   BatchStore
	Templates *TemplateService
	Teams     TeamStore
	Queue     Queue
	Files     FileStore
	Downloads Downloads
	// Webhooks dispatches the events of finished jobs (nil: none).
	Webhooks *Deliverer
	Logger   *slog.Logger
	Now      func() time.Time
	// Limits overrides the generation limits of every render, timeouts
	// included; zero fields keep render.DefaultLimits (nil: all of them).
	Limits *render.Limits
	// Metrics records ended documents (nil: none).
	Metrics *Metrics
	// Meta, when set, is the cache Teams and Templates read through; a job
	// pins its generation when it starts (nil: no cache).
	Meta *MetaCache
	// GenerateWait is how long a synchronous generate waits for its job
	// before answering with the job still pending or processing (0:
	// DefaultGenerateWait).
	GenerateWait time.Duration
	// JobLease is how long a claimed job's queue lease lasts (0:
	// DefaultJobLease); its worker renews it every third of that while
	// the job runs.
	JobLease time.Duration
	// InlineMax is the largest document, in bytes, kept in the database
	// with its job's end instead of in a file (0: DefaultInlineMax;
	// negative: every document is a file).
	InlineMax int
	// Signing signs the PDFs whose template or request asks for it (nil:
	// a request with sign is refused).
	Signing *SigningService

	wake     chan struct{}
	syncRuns chan *syncRun // synchronous generates handed to a worker (unbuffered)
	workers  int
	mu       sync.Mutex
	active   map[string]bool // ids of the jobs this process runs now (under mu)
	// pdfSecrets holds the checked PDF options of jobs that encrypt, by
	// job id, until they end: passwords are never stored (pdfoptions.go).
	pdfSecrets sync.Map

	lists         batchLists // documents lists of polled batches (batchlist.go)
	linkPrintOnce sync.Once
	linkPrintHex  string

	draining chan struct{} // closed when the workers stop
	running  atomic.Int32  // live workers

	// recording counts the synchronous generates whose one write runs
	// after their worker went on to the next job (syncrun.go); stopping
	// waits for them. recordSlots bounds them.
	recording   sync.WaitGroup
	recordSlots chan struct{}
	recordQ     chan func() // to an idle recorder (recorder)
}

// GenerateInput is the body of POST /api/v1/documents/generate.
type GenerateInput struct {
	TemplateID string          `json:"templateId"`
	Format     string          `json:"format"`
	Variables  json.RawMessage `json:"variables"`
	Filename   string          `json:"filename"`
	Metadata   json.RawMessage `json:"metadata"`
	// Version picks the template state: a published version number, a
	// version id, "latest" or "draft"; absent: the newest published version,
	// else the draft (docs/decisions.md, Template versions).
	Version json.RawMessage `json:"version"`
	// Locale overrides the template schema's locale (a BCP 47 tag such as
	// de-DE): numbers, money, dates and translations follow it.
	Locale string `json:"locale"`
	// PDFRequest holds pdfa, watermark, encrypt and documentMetadata.
	render.PDFRequest
	// vars and meta are Variables and Metadata decoded, when
	// DecodeGenerateInput read the body (nil otherwise).
	vars, meta map[string]any
}

var badFilename = regexp.MustCompile(`[^\p{L}\p{N} ._()\-]+`)

// Generate makes a document. Async records a job, queues it and answers at
// once with the job pending. Otherwise a worker renders it from the values
// checked here and records it once, at its end (generateSync), waiting up
// to GenerateWait. A job that fails while waited for returns its error
// (with the jobId in relatedInfo); the job stays recorded.
func (s *DocumentService) Generate(ctx context.Context, in GenerateInput, async bool) (*JobView, error) {
	if !async {
		// In progress until answered: while more documents are in
		// progress than there are cores, a commit may wait for theirs
		// (WriteExpecter).
		s.expectWrites(1)
		defer s.expectWrites(-1)
	}
	p, t, err := s.generationTarget(ctx, in.TemplateID, in.Format, in.Version)
	if err != nil {
		return nil, err
	}
	vars, err := in.decodeBody()
	if err != nil {
		return nil, err
	}
	ct, err := s.Templates.Compiled(ctx, t, in.Locale)
	if err != nil {
		return nil, err
	}
	values, err := ct.Values(vars)
	if err != nil {
		return nil, variableError(err)
	}
	pdfOpts, err := pdfOptions(in.PDFRequest, in.Format, ct)
	if err != nil {
		return nil, err
	}
	if err := s.Signing.CheckSignature(ctx, p.TeamID, signatureFor(ct, pdfOpts, in.Format)); err != nil {
		return nil, err
	}
	now := s.Now().UTC().Truncate(time.Millisecond) // as stored: the answer matches later reads
	j := &Job{
		ID: NewTimeID("job", now), TeamID: p.TeamID, TemplateID: t.ID, TemplateVersion: t.StateVersion, Status: StatusPending, Format: in.Format,
		Filename: cleanFilename(in.Filename), Metadata: in.Metadata, Variables: in.Variables,
		Priority: PrioritySingle, APIKeyID: p.KeyID, CreatedBy: p.UserID, CreatedAt: now, Locale: in.Locale,
		PDFOptions: storedPDFOptions(in.PDFRequest),
	}
	s.keepSecrets(j.ID, pdfOpts)
	if async {
		if err := s.enqueue(ctx, j); err != nil {
			s.pdfSecrets.Delete(j.ID)
			return nil, err
		}
		return s.View(j), nil
	}
	if s.syncRuns != nil {
		return s.generateSync(ctx, j, t, ct, values)
	}
	// No workers in this process (Start was not called): the job is
	// queued for a process that runs them, and its state answered.
	if err := s.enqueue(ctx, j); err != nil {
		s.pdfSecrets.Delete(j.ID)
		return nil, err
	}
	return s.View(j), nil
}

// answer is a synchronous generate's answer for its job as found: a job
// that failed returns its error (with the jobId in relatedInfo).
func (s *DocumentService) answer(j *Job) (*JobView, error) {
	if j.Status == StatusFailed && j.ErrorCode != "" {
		e := &Error{Code: j.ErrorCode, Message: j.Error, Info: j.ErrorInfo}
		return nil, e.WithInfo("jobId", j.ID)
	}
	return s.View(j), nil
}

// generationTarget checks the caller may generate and finds the template
// (the team's own or one shared with it, in the state version selects) and
// format of a generate or batch request.
func (s *DocumentService) generationTarget(ctx context.Context, ref, format string, version json.RawMessage) (*Principal, *Template, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := p.Require(PermAttachmentsWrite); err != nil {
		return nil, nil, err
	}
	if !CanWrite(p.Role) {
		return nil, nil, &Error{Code: ECodeForbidden, Message: "viewers cannot generate documents"}
	}
	if ref == "" {
		return nil, nil, ErrRequired("templateId")
	}
	if format == "" {
		return nil, nil, ErrRequired("format")
	}
	t, err := s.Templates.TemplateForGeneration(ctx, p, ref, version)
	if err != nil {
		return nil, nil, err
	}
	if format != string(render.PDF) && format != string(render.XLSX) && format != string(render.XML) {
		return nil, nil, ErrInvalid("format", "format must be pdf, xlsx or xml (xml: the e-invoice alone)")
	}
	// xml is the e-invoice of a PDF template: the same values as its PDF
	// (pdfOptions checks that an e-invoice profile is in force).
	allowed := slices.Contains(t.OutputFormats, format) || format == string(render.XML) && slices.Contains(t.OutputFormats, string(render.PDF))
	if !allowed {
		return nil, nil, Errorf(ECodeFormatUnsupported, "template %s does not produce %s (outputFormats: %s)", t.ID, format, strings.Join(t.OutputFormats, ", ")).
			WithInfo("field", "format", "outputFormats", t.OutputFormats)
	}
	return p, t, nil
}

// enqueue writes the job rows before their queue entries, so a crash between
// the two leaves pending rows that start-up re-queues.
func (s *DocumentService) enqueue(ctx context.Context, jobs ...*Job) error {
	if len(jobs) == 0 {
		return nil
	}
	for _, j := range jobs {
		j.RequestID = RequestIDFrom(ctx)
	}
	charge, _, err := s.charge(ctx, jobs[0].TeamID)
	if err != nil {
		return err
	}
	if err := s.Jobs.CreateJobs(ctx, charge, jobs...); err != nil {
		return err
	}
	return s.queue(ctx, jobs)
}

// queue adds queue entries for recorded jobs and wakes the workers.
func (s *DocumentService) queue(ctx context.Context, jobs []*Job) error {
	entries := make([]*QueueEntry, len(jobs))
	for i, j := range jobs {
		entries[i] = &QueueEntry{JobID: j.ID, Priority: j.Priority}
	}
	if err := s.Queue.Enqueue(ctx, entries...); err != nil {
		return err
	}
	s.signal()
	return nil
}

func decodeObject(field string, raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]any{}, nil
	}
	if m, ok := fastObject(raw); ok {
		return m, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, ErrInvalid(field, "%s must be a JSON object", field)
	}
	return m, nil
}

func variableError(err error) error {
	var ve *render.VariableError
	if errors.As(err, &ve) {
		return (&Error{Code: ECodeVariables, Message: ve.Error()}).WithInfo("errors", ve.Errors)
	}
	return renderError(err, 0) // a limit a calculated variable reached, say
}

func cleanFilename(s string) string {
	s = strings.TrimSpace(badFilename.ReplaceAllString(s, "_"))
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200])
	}
	return s
}

// FindJob returns one of the caller's team's jobs.
func (s *DocumentService) FindJob(ctx context.Context, id string) (*JobView, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.Require(PermAttachmentsRead); err != nil {
		return nil, err
	}
	j, err := s.Jobs.FindJobByID(ctx, p.TeamID, id)
	if err != nil {
		return nil, err
	}
	return s.View(j), nil
}

// View turns a job into its API object, signing the download link.
func (s *DocumentService) View(j *Job) *JobView {
	v := &JobView{
		JobID: j.ID, Status: j.Status, Format: j.Format, TemplateID: j.TemplateID, TemplateVersion: j.TemplateVersion, BatchID: j.BatchID,
		Filename: j.Filename, Metadata: j.Metadata, Error: j.Error, ErrorCode: j.ErrorCode,
		CreatedAt: j.CreatedAt, CompletedAt: j.CompletedAt,
	}
	if j.Status == StatusCompleted && j.ExpiresAt != nil && s.Now().Before(*j.ExpiresAt) {
		v.DownloadURL = s.Downloads.URL(j.ID, *j.ExpiresAt)
		v.ExpiresAt = j.ExpiresAt
	}
	return v
}

// Download checks a signed link and opens the job's file; the job's
// Filename is the name the file downloads as (see downloadName). It needs
// no other authentication: the signature is the credential.
func (s *DocumentService) Download(ctx context.Context, jobID, expires, signature string) (*Job, ReadSeekCloser, time.Time, error) {
	if err := s.Downloads.Verify(jobID, expires, signature, s.Now()); err != nil {
		return nil, nil, time.Time{}, err
	}
	j, err := s.Jobs.FindJobForWorker(ctx, jobID)
	if ErrorCode(err) == ECodeJobNotFound {
		return nil, nil, time.Time{}, &Error{Code: ECodeFileGone, Message: "the document no longer exists"}
	} else if err != nil {
		return nil, nil, time.Time{}, err
	}
	if j.Status != StatusCompleted || j.FilePath == "" {
		return nil, nil, time.Time{}, &Error{Code: ECodeFileGone, Message: "the document no longer exists"}
	}
	f, mod, err := s.openDocument(ctx, j)
	if errors.Is(err, ErrFilesUnavailable) {
		return nil, nil, time.Time{}, err // 503: the file is there, its store is not
	} else if err != nil {
		return nil, nil, time.Time{}, &Error{Code: ECodeFileGone, Message: "the document no longer exists"}
	}
	j.Filename = s.downloadName(ctx, j)
	return j, f, mod, nil
}

// openDocument opens a completed job's document, from the database when
// it keeps it (job_files), else from its file; mod is when it was made.
func (s *DocumentService) openDocument(ctx context.Context, j *Job) (f ReadSeekCloser, mod time.Time, err error) {
	data, err := s.Jobs.FindJobFile(ctx, j.ID)
	if ErrorCode(err) == ECodeFileGone {
		return s.Files.OpenFile(j.FilePath)
	} else if err != nil {
		return nil, time.Time{}, err
	}
	if j.CompletedAt != nil {
		mod = *j.CompletedAt
	}
	return nopCloser{bytes.NewReader(data)}, mod, nil
}

// nopCloser is a document read from memory.
type nopCloser struct{ io.ReadSeeker }

func (nopCloser) Close() error { return nil }

// documentOptions are the render options of a document of t made for
// teamID at created: its properties name the template (title) and the
// team (author) and carry the time it was made.
func (s *DocumentService) documentOptions(ctx context.Context, t *Template, teamID string, created time.Time, interactive bool) render.Options {
	o := s.renderOptions(interactive)
	o.Title, o.Created = t.Name, created.UTC()
	o.Assets = s.Templates.assetResolver(ctx, t.TeamID) // the owner's assets, whoever generates
	// What the request names itself (attachBefore/After) is the caller's.
	o.RequestAssets = s.Templates.assetResolver(ctx, teamID)
	o.Fetch = s.Templates.Images.Resolver(t.TeamID)
	if teamID != "" {
		if team, err := s.Teams.FindTeam(ctx, teamID); err == nil {
			o.Author = team.Name
		}
	}
	return o
}

// downloadName is the name a job's file downloads as, without its
// extension: the request's filename, else the template's name and the
// day the job was made ("Invoice 2026-11-25").
func (s *DocumentService) downloadName(ctx context.Context, j *Job) string {
	if j.Filename != "" {
		return j.Filename
	}
	day := j.CreatedAt.UTC().Format("2006-01-02")
	t, err := s.Templates.Templates.FindVisibleTemplate(ctx, j.TeamID, j.TemplateID)
	if err != nil {
		return "document " + day
	}
	if name := cleanFilename(t.Name); name != "" {
		return name + " " + day
	}
	return "document " + day
}

// FindJobs lists the caller's team's jobs, newest first.
func (s *DocumentService) FindJobs(ctx context.Context, f JobFilter) ([]*JobView, ListInfo, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, ListInfo{}, err
	}
	if err := p.Require(PermAttachmentsRead); err != nil {
		return nil, ListInfo{}, err
	}
	if err := validStatus(f.Status); err != nil {
		return nil, ListInfo{}, err
	}
	f.TeamID = p.TeamID
	jobs, info, err := s.Jobs.FindJobs(ctx, f)
	if err != nil {
		return nil, ListInfo{}, err
	}
	views := make([]*JobView, len(jobs))
	for i, j := range jobs {
		views[i] = s.View(j)
	}
	return views, info, nil
}

// decodeBody checks a generate request's variables (at most 1 MB, an
// object) and metadata (an object) and returns the variables.
func (in GenerateInput) decodeBody() (map[string]any, error) {
	if n := len(in.Variables); n > MaxVariablesSize {
		return nil, (&Error{Code: ECodeVariablesTooLarge, Message: "variables exceed 1 MB"}).WithInfo("field", "variables", "maxBytes", MaxVariablesSize, "actualBytes", n)
	}
	vars := in.vars
	if vars == nil {
		var err error
		if vars, err = decodeObject("variables", in.Variables); err != nil {
			return nil, err
		}
	}
	if in.meta == nil {
		if _, err := decodeObject("metadata", in.Metadata); err != nil {
			return nil, err
		}
	}
	if err := checkLocale("locale", in.Locale); err != nil {
		return nil, err
	}
	return vars, nil
}

// checkLocale checks a request's locale override: "" or a BCP 47 tag
// Folio has formatting data for.
func checkLocale(field, tag string) error {
	if tag == "" {
		return nil
	}
	if _, err := locale.Parse(tag); err != nil {
		return ErrInvalid(field, "%s %v", field, err)
	}
	return nil
}
