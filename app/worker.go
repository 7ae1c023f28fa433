package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"folio/render"
)

// The queue lease outlasts the longest render (render.DefaultLimits: 60 s
// PDF, 120 s XLSX); the worker renews it while its job runs anyway, since a
// job may wait for render memory for longer than that under load.
const (
	DefaultJobLease = 3 * time.Minute
	idlePoll        = time.Second
	// OrphanAge is how old a pending job without a queue entry must be
	// before the running server queues it again: younger ones may still be
	// between their row write and their queue write.
	OrphanAge = time.Minute
	// MaxJobCrashes is how many runs of one job may end with the process
	// dying (its first run and two retries); the next start fails the job
	// instead of running it, so a document that crashes the renderer
	// cannot keep the service down across restarts.
	MaxJobCrashes = 3
)

// errInterrupted ends a job that shutdown stopped before it was recorded:
// the job stays queued and runs again at the next start.
var errInterrupted = errors.New("interrupted by shutdown")

// Start re-queues jobs a crash left behind, removes the temp files of
// interrupted writes and starts n workers. While they run, pending jobs whose
// queue write failed are queued again every OrphanAge. The returned function
// stops them: no job is claimed any more, running jobs may finish until grace
// ends, and the ones still running then are interrupted and left queued
// (processing, lease held) for the next start.
func (s *DocumentService) Start(ctx context.Context, n int) (stop func(grace context.Context), err error) {
	s.wake = make(chan struct{}, 1)
	s.syncRuns = make(chan *syncRun)
	s.recordSlots = make(chan struct{}, recordSlotsPerWorker*max(n, 1))
	s.recordQ = make(chan func())
	s.draining = make(chan struct{})
	s.workers = max(n, 1)
	if err := s.reconcile(ctx); err != nil {
		return nil, err
	}
	claim, stopClaiming := context.WithCancel(ctx)
	run, interrupt := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	for range max(n, 1) {
		wg.Add(1)
		s.running.Add(1)
		go func() {
			defer wg.Done()
			defer s.running.Add(-1)
			s.work(claim, run)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(OrphanAge)
		defer t.Stop()
		for {
			select {
			case <-claim.Done():
				return
			case <-t.C:
				if err := s.RequeueOrphans(claim); err != nil && claim.Err() == nil {
					s.logger().Error("re-queue orphaned jobs", "err", err)
				}
			}
		}
	}()
	var once sync.Once
	return func(grace context.Context) {
		once.Do(func() {
			close(s.draining)
			stopClaiming()
			finishOrInterrupt(grace, &wg, interrupt)
			s.recording.Wait() // the writes of renders already done
		})
	}, nil
}

// finishOrInterrupt lets the work wg counts finish until grace ends, then
// interrupts what is left and waits for it to stop. Shutdown of the
// document workers and of the webhook deliverer both end this way.
func finishOrInterrupt(grace context.Context, wg *sync.WaitGroup, interrupt context.CancelFunc) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-grace.Done():
		interrupt()
		<-done
	}
	interrupt()
}

// WorkersRunning returns how many workers are taking jobs (0 once stopping).
func (s *DocumentService) WorkersRunning() int {
	select {
	case <-s.drain():
		return 0
	default:
		return int(s.running.Load())
	}
}

// drain is closed when the workers stop; nil (never ready) before Start.
func (s *DocumentService) drain() <-chan struct{} {
	if s.draining == nil {
		return nil
	}
	return s.draining
}

// reconcile makes interrupted jobs runnable again at start-up, before any
// worker runs: it releases any lease the queue still holds (the bbolt queue
// keeps leases in memory, so none survive a restart), enqueues every
// pending or processing job without a queue entry (the job row is written
// first, so a crash can leave a row without an entry), and removes the temp
// files of writes a crash interrupted.
func (s *DocumentService) reconcile(ctx context.Context) error {
	if n, err := s.Queue.ReleaseLeases(ctx); err != nil {
		return err
	} else if n > 0 {
		s.logger().Info("released leases of jobs interrupted by a stop", "count", n)
	}
	if err := s.requeue(ctx, time.Time{}); err != nil {
		return err
	}
	if n, err := s.Files.RemoveTempFiles(); err != nil {
		return err
	} else if n > 0 {
		s.logger().Info("removed temp files of interrupted writes", "count", n)
	}
	return nil
}

// RequeueOrphans queues again the pending and processing jobs older than
// OrphanAge that have no queue entry: a queue write that failed after its job
// was recorded and paid for (the client got a 500) must not leave the job
// waiting for the next restart. Running workers call it every OrphanAge.
func (s *DocumentService) RequeueOrphans(ctx context.Context) error {
	return s.requeue(ctx, s.Now().Add(-OrphanAge))
}

// requeue enqueues the unfinished jobs created before createdBefore (zero:
// all) that have no queue entry. The queue is read first: a job acked in
// between has ended and is no longer unfinished. An entry added twice is
// harmless: a job runs once at a time (begin) and to its end once
// (StartJob and FinishJob guard it).
func (s *DocumentService) requeue(ctx context.Context, createdBefore time.Time) error {
	queued, err := s.Queue.JobIDs(ctx)
	if err != nil {
		return err
	}
	ids, err := s.Jobs.UnfinishedJobIDs(ctx, createdBefore)
	if err != nil {
		return err
	}
	var missing []*QueueEntry
	for _, id := range ids {
		if !queued[id] {
			j, err := s.Jobs.FindJobForWorker(ctx, id)
			if ErrorCode(err) == ECodeJobNotFound {
				continue // deleted meanwhile
			} else if err != nil {
				return err
			}
			missing = append(missing, &QueueEntry{JobID: id, Priority: j.Priority})
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if err := s.Queue.Enqueue(ctx, missing...); err != nil {
		return err
	}
	s.logger().Info("re-queued unfinished jobs that had no queue entry", "count", len(missing))
	s.signal()
	return nil
}

func (s *DocumentService) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// work claims jobs while claim lasts and runs them under run, which ends
// only when the shutdown grace does.
func (s *DocumentService) work(claim, run context.Context) {
	ctx := claim
	idle := time.NewTimer(idlePoll)
	defer idle.Stop()
	for ctx.Err() == nil {
		// A synchronous generate waiting for a worker goes first: its
		// client is waiting, and it has no queue entry (syncrun.go).
		select {
		case r := <-s.syncRuns:
			s.runSync(run, r)
			continue
		default:
		}
		e, err := s.Queue.Claim(ctx, s.Now(), s.jobLease())
		if err != nil {
			s.logger().Error("claim job", "err", err)
		}
		if e == nil {
			idle.Reset(idlePoll)
			select {
			case <-ctx.Done():
			case <-s.wake:
			case <-idle.C:
			case r := <-s.syncRuns:
				s.runSync(run, r)
			}
			continue
		}
		// More work may be waiting: pass the wake-up on to another worker.
		s.signal()
		if !s.begin(e.JobID) {
			// Queued twice, or its lease lapsed, and another worker runs
			// it now: starting it here would render it twice and count a
			// crash (StartJob). The entry is left leased: the running
			// worker acknowledges it when it is its own, else it comes
			// back when this lease lapses and finds the job ended.
			s.logger().Warn("job already running; not started twice", "job", e.JobID)
			continue
		}
		stopRenewing := s.renewLease(e)
		err = s.process(run, e)
		stopRenewing()
		s.end(e.JobID)
		if errors.Is(err, errInterrupted) {
			s.logger().Warn("job interrupted by shutdown; it stays queued for the next start", "job", e.JobID)
			continue
		} else if err != nil {
			s.logger().Error("process job", "job", e.JobID, "err", err)
			continue // the lease expires and the job runs again
		}
		if err := s.Queue.Ack(context.WithoutCancel(ctx), e); err != nil {
			s.logger().Error("ack job", "job", e.JobID, "err", err)
		}
	}
}

// jobLease is the queue lease of a claimed job.
func (s *DocumentService) jobLease() time.Duration {
	if s.JobLease > 0 {
		return s.JobLease
	}
	return DefaultJobLease
}

// begin records that this process runs job id, unless it runs it already.
// Leases live in memory and one process holds the queue, so this is the
// whole of "one run at a time": no other process can be running the job.
func (s *DocumentService) begin(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active[id] {
		return false
	}
	if s.active == nil {
		s.active = map[string]bool{}
	}
	s.active[id] = true
	return true
}

// end records that job id's run is over.
func (s *DocumentService) end(id string) {
	s.mu.Lock()
	delete(s.active, id)
	s.mu.Unlock()
}

// ReleaseRunning returns the jobs this process is running to pending, for
// an exit that cannot wait for them (a forced exit): their runs were cut
// short, not crashed, so the next start runs them again without counting a
// crash (MaxJobCrashes). It stops at ctx's end; a job not released by then
// counts its run as a crash at the next start.
func (s *DocumentService) ReleaseRunning(ctx context.Context) (int, error) {
	s.mu.Lock()
	ids := make([]string, 0, len(s.active))
	for id := range s.active {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	for i, id := range ids {
		if err := s.Jobs.ReleaseJob(ctx, id); err != nil {
			return i, err
		}
	}
	return len(ids), nil
}

// renewLease renews e's lease every third of the lease until the returned
// function is called, so a running job is never claimed again while its
// worker lives (a render may wait for memory longer than one lease). A
// worker that dies takes the renewals with it, and the lease then lapses
// as before.
func (s *DocumentService) renewLease(e *QueueEntry) (stop func()) {
	lease := s.jobLease()
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(max(lease/3, time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if err := s.Queue.Renew(context.Background(), e, s.Now().Add(lease)); err != nil {
					s.logger().Error("renew job lease", "job", e.JobID, "err", err)
				}
			}
		}
	}()
	return func() { close(done); <-stopped }
}

// process runs one claimed job to its end. It returns an error only when the
// outcome could not be recorded, or errInterrupted when run ended first; the
// job then stays queued.
func (s *DocumentService) process(run context.Context, e *QueueEntry) error {
	s.expectWrites(1) // in progress until its end is written (WriteExpecter)
	defer s.expectWrites(-1)
	ctx := context.WithoutCancel(run) // records are written even while shutting down
	j, ok, err := s.Jobs.StartJob(ctx, e.JobID, s.Now().UTC())
	if err != nil {
		return err
	}
	if !ok {
		return nil // already ended (a redelivered entry): never done twice
	}
	run = s.Meta.Pin(run) // one metadata generation for the job's reads
	start := time.Now()
	var res JobResult
	if j.Crashes >= MaxJobCrashes {
		s.logger().Error("job quarantined: the process died during each of its last runs", "job", j.ID, "team", j.TeamID,
			"template", j.TemplateID, "crashes", j.Crashes)
		res = JobResult{Status: StatusFailed, ErrorCode: ECodeJobQuarantined, CompletedAt: s.Now().UTC(),
			Error:     fmt.Sprintf("the document crashed the renderer %d times (its first run and %d retries); it was stopped and will not run again", j.Crashes, MaxJobCrashes-1),
			ErrorInfo: map[string]any{"crashes": j.Crashes}}
	} else {
		res = s.run(run, j)
	}
	if run.Err() != nil {
		// Not a failure of the document, nor a crash: it runs again.
		if err := s.Jobs.ReleaseJob(ctx, j.ID); err != nil {
			s.logger().Error("release interrupted job", "job", j.ID, "err", err)
		}
		return errInterrupted
	}
	if res.unstored {
		// The entry is acknowledged; retryLater queues the job again.
		return s.retryLater(ctx, j)
	}
	res.DurationMS = time.Since(start).Milliseconds()
	out, err := s.Jobs.FinishJob(ctx, j.ID, res, s.jobEvents)
	if err != nil {
		return err
	}
	s.ended(ctx, j, res, out, start)
	return nil
}

// ended does what follows a job's recorded end: a file whose job was
// deleted while it ran is removed, the events are dispatched, the waiters
// told, the document counted and logged.
func (s *DocumentService) ended(ctx context.Context, j *Job, res JobResult, out FinishOutcome, start time.Time) {
	if !out.Ended && res.FilePath != "" && len(res.Output) == 0 {
		// Deleted while it ran: its file must not outlive it. (A job that
		// another worker already finished keeps the same file name and
		// content, so only a missing record means delete.)
		if _, err := s.Jobs.FindJobForWorker(ctx, j.ID); ErrorCode(err) == ECodeJobNotFound {
			_ = s.Files.RemoveFile(res.FilePath)
		}
	}
	if out.Ended && s.Webhooks != nil && len(out.Events) > 0 {
		s.Webhooks.Dispatch(ctx, out.Events)
	}
	if out.Ended {
		s.pdfSecrets.Delete(j.ID)
		s.Metrics.DocumentEnded(j.Format, res.Status, time.Since(start))
		s.logger().Info("job ended", "job", j.ID, "team", j.TeamID, "status", res.Status, "format", j.Format,
			"bytes", res.FileSize, "duration_ms", time.Since(start).Milliseconds(), "code", res.ErrorCode, "request_id", j.RequestID)
	}
}

// run renders a job and stores its document, turning every failure into a
// result.
func (s *DocumentService) run(ctx context.Context, j *Job) (res JobResult) {
	defer s.recoverRender(j, &res)
	t, err := s.Templates.TemplateForJob(ctx, j)
	if err != nil {
		if ErrorCode(err) != "" {
			return s.failed(ErrorCode(err), err.(*Error).Message, nil)
		}
		return s.failed(ECodeRenderFailed, "template could not be loaded", nil)
	}
	ct, err := s.Templates.Compiled(ctx, t, j.Locale)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return s.failed(e.Code, e.Message, e.Info)
		}
		return s.failed(ECodeSchemaInvalid, "template schema is invalid", nil)
	}
	vars, err := decodeObject("variables", j.Variables)
	if err != nil {
		return s.failed(ECodeInvalidField, "variables must be a JSON object", nil)
	}
	pdfOpts, perr := s.jobPDFOptionsFor(j, ct)
	if perr != nil {
		return s.failed(perr.Code, perr.Message, perr.Info)
	}
	values, err := ct.Values(vars)
	if err != nil {
		e := variableError(err).(*Error)
		return s.failed(e.Code, e.Message, e.Info)
	}
	doc, res := s.render(ctx, j, t, ct, values, pdfOpts)
	if res.Status == StatusFailed || res.unstored {
		return res
	}
	return s.keep(ctx, j, doc)
}

// expectWrites tells the job store that n more (or, negative, fewer)
// documents are in progress: a synchronous generate from its checks to its
// answer, a queued job from its start to its end's write
// (WriteExpecter).
func (s *DocumentService) expectWrites(n int) {
	if e, ok := s.Jobs.(WriteExpecter); ok {
		e.ExpectWrites(n)
	}
}

// failed is the result of a job that failed.
func (s *DocumentService) failed(code, msg string, info map[string]any) JobResult {
	return JobResult{Status: StatusFailed, ErrorCode: code, Error: msg, ErrorInfo: info, CompletedAt: s.Now().UTC()}
}

// recoverRender turns a panic of a render into the job's failure.
func (s *DocumentService) recoverRender(j *Job, res *JobResult) {
	if r := recover(); r != nil {
		s.logger().Error("render panic", "job", j.ID, "panic", r, "stack", string(debug.Stack()))
		*res = s.failed(ECodeRenderFailed, "internal error while rendering the document", nil)
	}
}

// render renders j from values checked against ct. On failure res is the
// job's failed result and doc is nil; otherwise res is zero.
func (s *DocumentService) render(ctx context.Context, j *Job, t *Template, ct *render.Template, values map[string]any, pdfOpts render.PDFOptions) (doc []byte, res JobResult) {
	defer s.recoverRender(j, &res)
	// The engine applies the timeout once the render's memory is reserved:
	// a job waiting behind other renders does not time out for it.
	timeout := s.renderTimeout(j.Format)
	var buf docBuffer
	opts := s.documentOptions(ctx, t, j.TeamID, j.CreatedAt, false)
	opts.PDF = pdfOpts
	if _, err := ct.Render(ctx, &buf, render.Format(j.Format), values, opts); err != nil {
		if errors.Is(err, ErrFilesUnavailable) {
			// An asset the document uses could not be read: it runs again
			// once the file store is back, like a document not stored.
			s.logger().Warn("file store unavailable while rendering; the job will run again", "job", j.ID, "err", err)
			return nil, JobResult{unstored: true}
		}
		e := renderError(err, timeout)
		return nil, s.failed(e.Code, e.Message, e.Info)
	}
	doc = buf.bytes()
	// Signing is the last step, on the final bytes (an incremental
	// update): whatever changed the document before stays signed.
	if sig := signatureFor(ct, pdfOpts, j.Format); sig != nil {
		if s.Signing == nil {
			return nil, s.failed(ECodeSigningFailed, "this server does not sign documents", nil)
		}
		signed, e := s.Signing.Sign(ctx, j.TeamID, doc, sig)
		if e != nil {
			return nil, s.failed(e.Code, e.Message, e.Info)
		}
		doc = signed
	}
	return doc, JobResult{}
}

// docBuffer collects a rendered document: a PDF's bytes are handed over by
// the engine (render.Keeper), other formats are written.
type docBuffer struct {
	kept []byte
	buf  bytes.Buffer
}

func (b *docBuffer) Write(p []byte) (int, error) { return b.buf.Write(p) }

// Keep takes the engine's bytes of the whole document. Render calls it
// once, after which nothing else is written.
func (b *docBuffer) Keep(p []byte) { b.kept = p }

func (b *docBuffer) bytes() []byte {
	if b.kept != nil {
		return b.kept
	}
	return b.buf.Bytes()
}

// keep stores a rendered document and returns the job's completed result:
// a document of at most InlineMax bytes goes into the database with the
// job's end (res.Output, no file: one durable write per document); a
// larger one is written to a file now (temp file, fsync, rename).
func (s *DocumentService) keep(ctx context.Context, j *Job, doc []byte) JobResult {
	name := s.documentName(j)
	now := s.Now().UTC()
	exp := now.Add(s.retention(ctx, j.TeamID))
	res := JobResult{Status: StatusCompleted, FilePath: name, FileSize: int64(len(doc)), CompletedAt: now, ExpiresAt: &exp}
	if s.inline(doc) {
		res.Output = doc
		return res
	}
	size, err := s.Files.WriteFile(name, func(w io.Writer) error { _, err := w.Write(doc); return err })
	if errors.Is(err, ErrFilesUnavailable) {
		// Not the document's fault, nor lasting: it is made again once
		// the store is back (an S3 PUT is all or nothing, so no partial
		// file is left behind and no link to one was ever given).
		s.logger().Warn("file store unavailable; the job will run again", "job", j.ID, "err", err)
		return JobResult{unstored: true}
	}
	if err != nil {
		s.logger().Error("write document", "job", j.ID, "err", err)
		if errors.Is(err, syscall.ENOSPC) {
			return s.failed(ECodeStorage, "the document could not be stored: the server's disk is full", nil)
		}
		return s.failed(ECodeStorage, "the document could not be stored", nil)
	}
	res.FileSize = size
	return res
}

// documentName is the name of a job's document, under files/ when it is
// a file.
func (s *DocumentService) documentName(j *Job) string { return path.Join(j.TeamID, j.ID+"."+j.Format) }

// renderOptions are the options of a job's render, or with interactive
// of a preview's or dry run's: those wait for memory in the engine's
// smaller interactive share, after waiting jobs, and at most as long as
// the render may take.
func (s *DocumentService) renderOptions(interactive bool) render.Options {
	o := render.Options{Limits: s.limits()}
	if interactive {
		o.Interactive, o.MemoryWait = true, o.Limits.PDFTimeout
	}
	return o
}

// renderError maps an engine failure to the error a client sees.
func renderError(err error, timeout time.Duration) *Error {
	var le *render.LimitError
	var ee *render.ExpressionError
	var ae *Error
	var ie *render.EInvoiceError
	var att *render.AttachmentError
	switch {
	case errors.As(err, &ie):
		return eInvoiceError(ie)
	case errors.As(err, &att):
		return (&Error{Code: ECodeAssetInvalid, Message: att.Error()}).WithInfo("field", att.Path, "reference", "asset:"+att.Ref)
	case errors.As(err, &le):
		return (&Error{Code: le.Code, Message: le.Error()}).WithInfo("limit", le.Limit, "actual", le.Actual, "max", le.Max)
	case errors.As(err, &ee):
		return (&Error{Code: ECodeExpression, Message: ee.Error()}).WithInfo("path", ee.Path, "expression", ee.Expression)
	case errors.As(err, &ae):
		return ae // an asset the template names is missing (ERR_ASSET_001)
	case errors.Is(err, render.ErrBusy):
		return (&Error{Code: ECodeRenderTimeout, Message: "not rendered: the server was busy with other documents for too long; try again"}).
			WithInfo("timeoutSeconds", int(timeout.Seconds()), "busy", true)
	case errors.Is(err, context.DeadlineExceeded):
		return (&Error{Code: ECodeRenderTimeout, Message: fmt.Sprintf("rendering took longer than %s", timeout)}).WithInfo("timeoutSeconds", int(timeout.Seconds()))
	default:
		return &Error{Code: ECodeRenderFailed, Message: "rendering failed: " + err.Error()}
	}
}

func (s *DocumentService) retention(ctx context.Context, teamID string) time.Duration {
	if team, err := s.Teams.FindTeam(ctx, teamID); err == nil {
		if p, err := FindPlan(team.Plan); err == nil {
			return p.FileRetention
		}
	}
	return 24 * time.Hour
}

func (s *DocumentService) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}

// Delays before a job whose file could not be stored runs again: doubling
// from StoreRetryMin with each attempt, at most StoreRetryMax.
const (
	StoreRetryMin = time.Second
	StoreRetryMax = 30 * time.Second
)

// retryLater returns a job whose document could not be stored (the file
// store is unavailable) to pending and queues it again after a delay that
// grows with its attempts. It retries for as long as the store is away:
// nothing about the document is wrong. The job's row is pending meanwhile,
// so if this process stops before the delay ends, the next start queues
// it, and while it runs RequeueOrphans does (after OrphanAge).
func (s *DocumentService) retryLater(ctx context.Context, j *Job) error {
	if err := s.Jobs.ReleaseJob(ctx, j.ID); err != nil {
		return err
	}
	delay := StoreRetryMax
	if n := max(j.Attempts-1, 0); n < 5 {
		delay = min(StoreRetryMin<<n, StoreRetryMax)
	}
	priority := j.Priority
	time.AfterFunc(delay, func() {
		select {
		case <-s.drain():
			return // stopping: the next start queues the pending job
		default:
		}
		e := &QueueEntry{JobID: j.ID, Priority: priority}
		if err := s.Queue.Enqueue(context.Background(), e); err != nil {
			s.logger().Error("queue job again after storage failure", "job", j.ID, "err", err)
			return
		}
		s.signal()
	})
	return nil
}
