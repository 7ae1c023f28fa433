package store

import (
	"bytes"
	"container/heap"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"folio/app"
)

// The job queue lives in bbolt's queue bucket and, while the server runs,
// in memory as well (docs/decisions.md, Queue):
//
//   - Enqueue is durable: it returns once its entries are committed and
//     fsynced. Enqueues that arrive while a commit runs are written together
//     in the next one (a group commit without any added delay), so eight
//     clients cost about one fsync per commit rather than one each.
//   - Claim and its lease are in memory only. A lease exists to hand a job
//     to another worker when its own stops without acknowledging it; after a
//     restart every lease is void anyway (OpenBolt reads every entry as
//     claimable), so writing leases to disk bought nothing but fsyncs.
//   - Ack removes the entry from memory at once and from the file with the
//     next commit (an enqueue, the next second's flush, or Close). An ack
//     lost to a crash brings a finished job's entry back at the next start;
//     its worker finds the job ended (StartJob) and acknowledges it again,
//     so nothing runs twice.

// ackFlush is how often acknowledgements are written when no enqueue
// carries them, and ackBatch how many make the committer write at once.
// (variables for tests).
var (
	ackFlush = time.Second
	ackBatch = 512
)

type queueItem struct {
	JobID string `json:"j"`
	// LeaseUntil was the stored lease of earlier versions; it is ignored.
	LeaseUntil int64 `json:"l,omitempty"`
}

// queue is the in-memory view of the queue bucket.
type queue struct {
	mu      sync.Mutex
	ready   entryHeap            // claimable entries, lowest key first
	entries map[string]*memEntry // every entry not acknowledged, by key
	leased  map[string]*memEntry // the claimed ones among them
	acked   [][]byte             // keys acknowledged, not yet deleted from the file

	reqs   chan *enqueueReq // to the committer
	sendMu sync.RWMutex     // held to send on reqs; Close takes it to end sends
	closed bool             // under sendMu
	stop   chan struct{}    // closed by Close, once no send is under way
	done   chan struct{}    // closed when the committer has stopped
	once   sync.Once
}

type memEntry struct {
	key        []byte
	jobID      string
	leaseUntil time.Time // zero: not leased
	index      int       // in ready; -1 when leased
}

type enqueueReq struct {
	entries []*app.QueueEntry
	done    chan error // nil: a flush of acknowledgements only
}

func newQueue() *queue {
	return &queue{entries: map[string]*memEntry{}, leased: map[string]*memEntry{}, reqs: make(chan *enqueueReq, 256), stop: make(chan struct{}), done: make(chan struct{})}
}

// loadQueue reads every stored entry as claimable.
func (b *Bolt) loadQueue() error {
	return b.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketQueue).ForEach(func(k, v []byte) error {
			var it queueItem
			if err := json.Unmarshal(v, &it); err != nil {
				return fmt.Errorf("queue entry %x: %w", k, err)
			}
			b.q.add(bytes.Clone(k), it.JobID)
			return nil
		})
	})
}

// add makes an entry claimable; q.mu is held or not yet shared.
func (q *queue) add(key []byte, jobID string) {
	e := &memEntry{key: key, jobID: jobID}
	q.entries[string(key)] = e
	heap.Push(&q.ready, e)
}

var _ app.Queue = (*Bolt)(nil)

func queueKey(priority int, seq uint64) []byte {
	k := make([]byte, 9)
	k[0] = byte(min(max(priority, 0), 255))
	binary.BigEndian.PutUint64(k[1:], seq)
	return k
}

var errQueueClosed = errors.New("the queue is closed")

// Enqueue adds entries durably; keys sort by priority then order.
func (b *Bolt) Enqueue(ctx context.Context, entries ...*app.QueueEntry) error {
	if len(entries) == 0 {
		return nil
	}
	r := &enqueueReq{entries: entries, done: make(chan error, 1)}
	b.q.sendMu.RLock()
	if b.q.closed {
		b.q.sendMu.RUnlock()
		return errQueueClosed
	}
	b.q.reqs <- r
	b.q.sendMu.RUnlock()
	// Wait for the commit even when ctx ends: the entries may be written.
	return <-r.done
}

// commitQueue is the committer: it writes waiting enqueues and
// acknowledgements together, one transaction for all that arrived during
// the previous one.
func (b *Bolt) commitQueue(every time.Duration) {
	defer close(b.q.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		var batch []*enqueueReq
		select {
		case r := <-b.q.reqs:
			batch = append(batch, r)
		case <-t.C:
		case <-b.q.stop:
			// Nothing is sent any more; write what was sent before.
			for len(b.q.reqs) > 0 {
				batch = append(batch, <-b.q.reqs)
			}
			b.commit(batch)
			return
		}
		for more := true; more; {
			select {
			case r := <-b.q.reqs:
				batch = append(batch, r)
			default:
				more = false
			}
		}
		b.commit(batch)
	}
}

// commit writes a batch of enqueues with the acknowledgements so far.
func (b *Bolt) commit(batch []*enqueueReq) {
	b.q.mu.Lock()
	acked := b.q.acked
	b.q.acked = nil
	b.q.mu.Unlock()
	n := 0
	for _, r := range batch {
		n += len(r.entries)
	}
	if n == 0 && len(acked) == 0 {
		return
	}
	err := b.db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketQueue)
		for _, k := range acked {
			if err := bk.Delete(k); err != nil {
				return err
			}
		}
		for _, r := range batch {
			for _, e := range r.entries {
				e.Key = queueKey(e.Priority, b.seq.Add(1))
				v, _ := json.Marshal(queueItem{JobID: e.JobID})
				if err := bk.Put(e.Key, v); err != nil {
					return err
				}
			}
		}
		return nil
	})
	b.q.mu.Lock()
	if err != nil {
		b.q.acked = append(b.q.acked, acked...) // tried again with the next commit
	} else {
		for _, r := range batch {
			for _, e := range r.entries {
				b.q.add(e.Key, e.JobID)
			}
		}
	}
	b.q.mu.Unlock()
	for _, r := range batch {
		if r.done != nil {
			r.done <- err
		}
	}
}

// stopQueue ends the committer after it has written what it holds.
func (b *Bolt) stopQueue() {
	b.q.once.Do(func() {
		b.q.sendMu.Lock()
		b.q.closed = true
		b.q.sendMu.Unlock()
		close(b.q.stop)
	})
	<-b.q.done
}

// Claim leases the first entry whose lease is absent or expired.
func (b *Bolt) Claim(_ context.Context, now time.Time, lease time.Duration) (*app.QueueEntry, error) {
	q := b.q
	q.mu.Lock()
	defer q.mu.Unlock()
	for k, e := range q.leased {
		if !e.leaseUntil.After(now) { // its worker stopped without an ack
			delete(q.leased, k)
			e.leaseUntil = time.Time{}
			heap.Push(&q.ready, e)
		}
	}
	if q.ready.Len() == 0 {
		return nil, nil
	}
	e := heap.Pop(&q.ready).(*memEntry)
	e.leaseUntil = now.Add(lease)
	q.leased[string(e.key)] = e
	return &app.QueueEntry{JobID: e.jobID, Priority: int(e.key[0]), Key: e.key}, nil
}

// Renew extends a claimed entry's lease to until. An entry whose lease
// already ran out is leased again, unless it was claimed again meanwhile:
// its new lease is then extended, and the job's one run guards the rest
// (app.DocumentService runs a job once at a time).
func (b *Bolt) Renew(_ context.Context, e *app.QueueEntry, until time.Time) error {
	q := b.q
	q.mu.Lock()
	defer q.mu.Unlock()
	me, ok := q.entries[string(e.Key)]
	if !ok {
		return fmt.Errorf("renew the lease of job %s: %w", e.JobID, errNotQueued)
	}
	if me.index >= 0 { // expired and put back by a Claim, not claimed since
		heap.Remove(&q.ready, me.index)
		q.leased[string(me.key)] = me
	}
	if until.After(me.leaseUntil) {
		me.leaseUntil = until
	}
	return nil
}

var errNotQueued = errors.New("the entry is no longer queued")

// Ack removes a finished entry: from memory now, from the file with the
// next commit.
func (b *Bolt) Ack(_ context.Context, e *app.QueueEntry) error {
	q := b.q
	q.mu.Lock()
	me, ok := q.entries[string(e.Key)]
	if ok {
		delete(q.entries, string(e.Key))
		delete(q.leased, string(e.Key))
		if me.index >= 0 {
			heap.Remove(&q.ready, me.index)
		}
		q.acked = append(q.acked, e.Key)
	}
	flush := len(q.acked) >= ackBatch
	q.mu.Unlock()
	if flush {
		q.sendMu.RLock()
		if !q.closed {
			select {
			case q.reqs <- &enqueueReq{}:
			default: // the committer is busy; its next commit takes them
			}
		}
		q.sendMu.RUnlock()
	}
	return nil
}

// JobIDs returns the job ids of every entry not acknowledged.
func (b *Bolt) JobIDs(context.Context) (map[string]bool, error) {
	b.q.mu.Lock()
	defer b.q.mu.Unlock()
	ids := make(map[string]bool, len(b.q.entries))
	for _, e := range b.q.entries {
		ids[e.jobID] = true
	}
	return ids, nil
}

// ReleaseLeases makes every leased entry claimable and returns how many
// were leased.
func (b *Bolt) ReleaseLeases(context.Context) (int, error) {
	q := b.q
	q.mu.Lock()
	defer q.mu.Unlock()
	n := len(q.leased)
	for k, e := range q.leased {
		delete(q.leased, k)
		e.leaseUntil = time.Time{}
		heap.Push(&q.ready, e)
	}
	return n, nil
}

// entryHeap orders claimable entries by key: priority, then arrival.
type entryHeap []*memEntry

func (h entryHeap) Len() int           { return len(h) }
func (h entryHeap) Less(i, j int) bool { return bytes.Compare(h[i].key, h[j].key) < 0 }
func (h entryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *entryHeap) Push(x any) {
	e := x.(*memEntry)
	e.index = len(*h)
	*h = append(*h, e)
}
func (h *entryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	e.index = -1
	*h = old[:len(old)-1]
	return e
}
