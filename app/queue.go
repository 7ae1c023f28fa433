package app

import (
	"context"
	"io"
	"time"
)

// Job priorities (SPEC.md, Limits): lower runs first.
const (
	PrioritySingle     = 1
	PriorityBatch      = 5
	PriorityLargeBatch = 10
)

// QueueEntry is one job waiting in the durable queue.
type QueueEntry struct {
	JobID    string
	Priority int
	// Key is the store's key for the entry (set by Enqueue/Claim).
	Key []byte
}

// Queue is the durable job queue (bbolt). A claimed entry is leased: if it is
// not acked before the lease ends, Claim hands it out again.
type Queue interface {
	Enqueue(ctx context.Context, entries ...*QueueEntry) error
	// Claim leases the first runnable entry, or returns nil when none is.
	Claim(ctx context.Context, now time.Time, lease time.Duration) (*QueueEntry, error)
	// Renew extends the lease of a claimed entry to until. The worker
	// running its job renews it while the job runs, so a job that takes
	// longer than one lease is never handed to a second worker. An entry
	// that was acknowledged meanwhile returns an error.
	Renew(ctx context.Context, e *QueueEntry, until time.Time) error
	Ack(ctx context.Context, e *QueueEntry) error
	// JobIDs returns the ids of every entry, for start-up reconciliation.
	JobIDs(ctx context.Context) (map[string]bool, error)
	// ReleaseLeases makes every entry claimable again. Start-up calls it: the
	// store is held by one process, so no earlier worker can still be alive.
	ReleaseLeases(ctx context.Context) (int, error)
}

// FileStore keeps generated files on local disk.
type FileStore interface {
	// WriteFile writes name atomically (temp file, fsync, rename) and returns its size.
	WriteFile(name string, write func(w io.Writer) error) (int64, error)
	OpenFile(name string) (ReadSeekCloser, time.Time, error)
	RemoveFile(name string) error
	// RemoveTempFiles deletes the temp files of writes a crash interrupted;
	// it is called at start-up, when no write runs.
	RemoveTempFiles() (int, error)
}

// ReadSeekCloser is an open stored file.
type ReadSeekCloser interface {
	io.ReadSeeker
	io.Closer
}
