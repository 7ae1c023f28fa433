package app

import (
	"context"
	"sync"
	"time"

	"folio/render"
)

// DefaultInlineMax is the largest document kept in the database with its
// job's end rather than in a file: a small document (an invoice is 11 KB)
// costs a share of one grouped SQLite commit instead of a temp file, two
// fsyncs and a rename; past about 64 KB the single writer copying pages
// costs more than a file written beside it (store's BenchmarkKeepDocument;
// docs/decisions.md, One durable write per document).
const DefaultInlineMax = 64 << 10

// inline reports whether doc is kept in the database.
func (s *DocumentService) inline(doc []byte) bool {
	max := s.InlineMax
	if max == 0 {
		max = DefaultInlineMax
	}
	return len(doc) <= max
}

// A syncRun is a synchronous generate handed to a worker. Nothing of it is
// written before its end: no job row, no queue entry, no file. The worker
// renders the values the request checked and records the job, its charge,
// its document and its events in one transaction (RecordJob). When the
// process dies before that, nothing was promised: the client had no answer
// and its retry is the only job. Only when the request must answer before
// the end (GenerateWait passed, or the server is stopping) is the job
// written first, as processing, so the answer's jobId can be polled; a
// crash then leaves that row, which the next start runs again like any
// interrupted job.
type syncRun struct {
	job    *Job
	tpl    *Template
	ct     *render.Template
	values map[string]any
	charge *Charge
	pin    context.Context // carries the request's metadata generation

	done chan struct{} // closed when the run is over

	mu       sync.Mutex // held while either side writes the job
	started  time.Time
	recorded bool  // a row exists (written before the end)
	finished bool  // the end is recorded, in ended or err
	ended    *Job  // the job as its end recorded it (nil: deleted meanwhile)
	err      error // the end could not be recorded
}

// generateSync hands j to a worker and waits up to GenerateWait for its
// end. When no worker takes it in that time, or the server stops first,
// the job is queued durably, as an async one, and answered pending.
func (s *DocumentService) generateSync(ctx context.Context, j *Job, t *Template, ct *render.Template, values map[string]any) (*JobView, error) {
	charge, _, err := s.charge(ctx, j.TeamID)
	if err != nil {
		return nil, err
	}
	// Refused before the render, not after it; RecordJob charges.
	if err := s.Jobs.CheckQuota(ctx, charge, 1); err != nil {
		return nil, err
	}
	j.RequestID = RequestIDFrom(ctx)
	r := &syncRun{job: j, tpl: t, ct: ct, values: values, charge: charge, pin: ctx, done: make(chan struct{})}
	wait := s.GenerateWait
	if wait <= 0 {
		wait = DefaultGenerateWait
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case s.syncRuns <- r:
	case <-timer.C:
		return s.queueInstead(ctx, j)
	case <-s.drain():
		return s.queueInstead(ctx, j)
	case <-ctx.Done():
		return nil, ctx.Err() // nothing was written
	}
	select {
	case <-r.done:
	case <-timer.C:
	case <-ctx.Done():
		// The worker records the job anyway; nobody hears the answer.
		return nil, ctx.Err()
	case <-s.drain():
		// Shutting down: the running job may still finish within the
		// grace period, or is queued for the next start when interrupted.
		select {
		case <-r.done:
		case <-timer.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	got, err := s.syncState(ctx, r)
	if err != nil {
		return nil, err
	}
	return s.answer(got)
}

// queueInstead records and queues a synchronous generate that no worker
// took, and answers its state.
func (s *DocumentService) queueInstead(ctx context.Context, j *Job) (*JobView, error) {
	if err := s.enqueue(ctx, j); err != nil {
		return nil, err
	}
	return s.View(j), nil
}

// syncState is the job of a run the request answers now: as its end
// recorded it, or, when it has not ended, as written now (processing).
func (s *DocumentService) syncState(ctx context.Context, r *syncRun) (*Job, error) {
	ctx = context.WithoutCancel(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		if r.err != nil {
			return nil, r.err
		}
		if r.ended == nil {
			return nil, ErrNotFound(ECodeJobNotFound, "job")
		}
		return r.ended, nil
	}
	if !r.recorded {
		if err := s.recordRunning(ctx, r); err != nil {
			return nil, err
		}
	}
	return s.Jobs.FindJobForWorker(ctx, r.job.ID)
}

// recordRunning writes a running synchronous job's row, processing and
// charged, without a queue entry (its worker is running it; if the process
// dies, the next start queues it as it does every unfinished job). r.mu is
// held.
func (s *DocumentService) recordRunning(ctx context.Context, r *syncRun) error {
	j := *r.job
	started := r.started
	j.Status, j.StartedAt, j.Attempts = StatusProcessing, &started, 1
	if err := s.Jobs.CreateJobs(ctx, r.charge, &j); err != nil {
		return err
	}
	r.recorded = true
	return nil
}

// runSync runs a synchronous generate on a worker: render, then one write.
func (s *DocumentService) runSync(run context.Context, r *syncRun) {
	j := r.job
	ctx := context.WithoutCancel(run) // records are written even while shutting down
	s.begin(j.ID)
	detached := false // the write went on without this worker
	defer func() {
		if !detached {
			s.end(j.ID)
			close(r.done)
		}
	}()
	start := time.Now()
	r.mu.Lock()
	r.started = s.Now().UTC()
	r.mu.Unlock()
	if g, ok := pinnedGen(r.pin); ok {
		run = context.WithValue(run, metaGenKey{}, g) // the request's reads and the render's agree
	}
	var doc []byte
	var res JobResult
	if pdfOpts, perr := s.jobPDFOptionsFor(j, r.ct); perr != nil {
		res = s.failed(perr.Code, perr.Message, perr.Info)
	} else {
		doc, res = s.render(run, j, r.tpl, r.ct, r.values, pdfOpts)
	}
	if run.Err() != nil {
		s.interruptSync(ctx, r)
		return
	}
	if res.Status != StatusFailed && !res.unstored {
		if !s.inline(doc) {
			// A file is written outside the transaction: its job's row
			// must exist first, so that a crash between the two leaves a
			// job that runs again, never a file that nothing names.
			r.mu.Lock()
			var err error
			if !r.recorded {
				err = s.recordRunning(ctx, r)
			}
			r.mu.Unlock()
			if err != nil {
				r.finish(nil, err)
				s.logger().Error("record job", "job", j.ID, "err", err)
				return
			}
		}
		res = s.keep(run, j, doc) // the request may answer meanwhile: r.mu is free
	}
	if res.unstored {
		// The file store is away: the job runs again from the queue, and
		// the request answers it pending.
		s.retrySync(ctx, r)
		return
	}
	res.DurationMS = time.Since(start).Milliseconds()
	// The one write runs beside the next render: the worker takes its next
	// job while the writer commits this one, so the cores keep rendering
	// while a commit waits for the disk, and the documents that end
	// meanwhile share one commit (docs/decisions.md, Issue 24: CPU beyond
	// render, second pass). The request still answers only after the
	// write; stopping waits for it (Start).
	s.recordSlots <- struct{}{}
	s.recording.Add(1)
	detached = true
	s.record(func() {
		defer func() {
			<-s.recordSlots
			s.end(j.ID)
			close(r.done)
			s.recording.Done()
		}()
		s.recordSync(ctx, r, res, start)
	})
}

// record runs fn on an idle recorder, or on a new one when none is idle.
// Recorders outlive their write: a goroutine started for each document
// grew its stack again for every one (the store's write, then the job's
// log line: 0.008 ms of copying stacks a document under load, issue 24,
// eleventh session). There are at most as many as recordSlots allows
// writes at once; one idle for recorderIdle ends.
func (s *DocumentService) record(fn func()) {
	select {
	case s.recordQ <- fn:
	default:
		go s.recorder(fn)
	}
}

// recorderIdle is how long a recorder waits for the next write.
const recorderIdle = 10 * time.Second

func (s *DocumentService) recorder(fn func()) {
	idle := time.NewTimer(recorderIdle)
	defer idle.Stop()
	for {
		fn()
		idle.Reset(recorderIdle)
		select {
		case fn = <-s.recordQ:
		case <-idle.C:
			return
		}
	}
}

// recordSlotsPerWorker bounds the synchronous writes still running per
// worker: past it, a worker waits for the writer before its next render
// (each holds a rendered document in memory).
const recordSlotsPerWorker = 4

// recordSync writes a synchronous generate's end: its job in one
// transaction (RecordJob), or its row's end when the row was written
// first (FinishJob).
func (s *DocumentService) recordSync(ctx context.Context, r *syncRun, res JobResult, start time.Time) {
	j := r.job
	r.mu.Lock()
	var out FinishOutcome
	var err error
	if r.recorded {
		out, err = s.Jobs.FinishJob(ctx, j.ID, res, s.jobEvents)
	} else {
		out, err = s.Jobs.RecordJob(ctx, r.charge, j, res, s.jobEvents)
	}
	r.finished, r.ended, r.err = true, out.Job, err
	r.mu.Unlock()
	if err != nil {
		s.pdfSecrets.Delete(j.ID)
		s.logger().Error("record job", "job", j.ID, "err", err)
		return
	}
	s.ended(ctx, j, res, out, start)
}

// finish records the run's end.
func (r *syncRun) finish(ended *Job, err error) {
	r.mu.Lock()
	r.finished, r.ended, r.err = true, ended, err
	r.mu.Unlock()
}

// interruptSync makes a synchronous generate that shutdown interrupted a
// queued job: pending, with a queue entry, so the next start runs it and
// the request answers it pending.
func (s *DocumentService) interruptSync(ctx context.Context, r *syncRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var err error
	if r.recorded {
		err = s.Jobs.ReleaseJob(ctx, r.job.ID)
		if err == nil {
			err = s.queue(ctx, []*Job{r.job})
		}
	} else if err = s.Jobs.CreateJobs(ctx, r.charge, r.job); err == nil {
		r.recorded = true
		err = s.queue(ctx, []*Job{r.job})
	}
	if err != nil {
		s.logger().Error("queue interrupted job", "job", r.job.ID, "err", err)
		r.finished, r.err = true, err
		return
	}
	s.logger().Warn("job interrupted by shutdown; it stays queued for the next start", "job", r.job.ID)
}

// retrySync queues again a synchronous job that could not read or store
// its files (the file store is unavailable), recording it first when
// nothing was written yet, and ends the run with the job as pending.
func (s *DocumentService) retrySync(ctx context.Context, r *syncRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var err error
	if !r.recorded {
		err = s.recordRunning(ctx, r)
	}
	var got *Job
	if err == nil {
		if err = s.retryLater(ctx, r.job); err == nil {
			got, err = s.Jobs.FindJobForWorker(ctx, r.job.ID)
		}
	}
	if err != nil {
		s.logger().Error("queue job again after storage failure", "job", r.job.ID, "err", err)
	}
	r.finished, r.ended, r.err = true, got, err
}
