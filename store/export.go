package store

import (
	"bytes"
	"sort"

	"folio/app"
)

// QueuedEntries lists the queue's entries not acknowledged, in claim order
// (priority, then order of enqueueing), each with its key (priority byte,
// then the big-endian sequence number). folio admin migrate copies them
// into PostgreSQL's queue, whose keys have the same form.
func (b *Bolt) QueuedEntries() []*app.QueueEntry {
	b.q.mu.Lock()
	out := make([]*app.QueueEntry, 0, len(b.q.entries))
	for _, e := range b.q.entries {
		out = append(out, &app.QueueEntry{JobID: e.jobID, Priority: int(e.key[0]), Key: bytes.Clone(e.key)})
	}
	b.q.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].Key, out[j].Key) < 0 })
	return out
}
