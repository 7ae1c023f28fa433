package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"folio/render"
)

// A poll of a batch (GET /api/v1/documents/batches/:id) reads the batch row
// alone: its version rises with every change of one of its jobs and its
// states hold each document's state (migration 0017). The documents list
// is kept here per batch, each entry encoded once; a poll whose version
// and counters match what is kept answers the kept body, and one that
// finds a newer version updates the entries whose state changed, reading
// only the jobs that ended since (their links and errors), once each. So
// the reads of a poll do not grow with the batch, and a batch's polls read
// each of its jobs about once in all (issue 24).

// maxBatchLists bounds the batches kept (about 50 KB each for 100
// documents): enough for the batches being polled at once.
const maxBatchLists = 64

// batchLists keeps the documents lists of recently polled batches.
type batchLists struct {
	mu   sync.Mutex
	m    map[string]*batchList
	tick uint64
}

// batchList is one batch's documents list as of a version.
type batchList struct {
	mu      sync.Mutex
	used    uint64 // under batchLists.mu
	built   bool
	version int64
	head    batchHead
	states  string // the states docs reflect; "" without states
	docs    []batchListDoc
	exact   bool      // docs are exactly the version's (else no ETag)
	body    []byte    // the answer as of version, head and the links' expiry
	etag    string    // "" when not exact
	until   time.Time // when a link shown in body expires (zero: none)
}

// batchHead is what a batch row shows besides its documents.
type batchHead struct {
	status            string
	completed, failed int
}

type batchListDoc struct {
	BatchDoc
	gone bool
	link bool   // json shows a download link
	json []byte // the entry as encoded
}

func (c *batchLists) get(id string) *batchList {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]*batchList{}
	}
	c.tick++
	l := c.m[id]
	if l == nil {
		if len(c.m) >= maxBatchLists {
			var old string
			var at uint64
			for k, v := range c.m {
				if old == "" || v.used < at {
					old, at = k, v.used
				}
			}
			delete(c.m, old)
		}
		l = &batchList{}
		c.m[id] = l
	}
	l.used = c.tick
	return l
}

// trim drops every kept list (the idle trim).
func (c *batchLists) trim() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.m)
	c.m = nil
	return n
}

// BatchJSON returns a batch as the API shows it, encoded, with its ETag:
// the same ETag means the same body (empty when the body may be newer than
// the batch's version, which happens only when a job is deleted during the
// poll). See the comment at the top of this file.
func (s *DocumentService) BatchJSON(ctx context.Context, id string) (body []byte, etag string, err error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, "", err
	}
	if err := p.Require(PermAttachmentsRead); err != nil {
		return nil, "", err
	}
	b, err := s.Batches.FindBatchByID(ctx, p.TeamID, id)
	if err != nil {
		return nil, "", err
	}
	l := s.lists.get(b.ID)
	l.mu.Lock()
	defer l.mu.Unlock()
	now := s.Now()
	head := batchHead{b.Status, b.Completed, b.Failed}
	fresh := l.built && (l.version > b.Version || l.version == b.Version && l.head == head) // a concurrent poll may have kept a newer one
	if fresh && (l.until.IsZero() || now.Before(l.until)) {
		return l.body, l.etag, nil
	}
	if !fresh {
		if err := s.updateList(ctx, b, l, now); err != nil {
			l.built = false
			return nil, "", err
		}
	}
	s.encodeList(b, l, now)
	return l.body, l.etag, nil
}

// updateList brings l's documents to b's version.
func (s *DocumentService) updateList(ctx context.Context, b *Batch, l *batchList, now time.Time) error {
	exact := true
	if b.States == "" || l.states == "" || len(l.states) != len(b.States) {
		// First poll (or a batch without states): read every document.
		rows, err := s.Batches.FindBatchDocs(ctx, b.ID, nil)
		if err != nil {
			return err
		}
		if b.States == "" {
			l.docs = l.docs[:0]
			for _, r := range rows {
				l.docs = append(l.docs, s.batchListDoc(r, now))
			}
		} else {
			l.docs = make([]batchListDoc, len(b.States))
			for i := range l.docs {
				l.docs[i] = batchListDoc{gone: true}
			}
			for _, r := range rows {
				if r.Seq >= 0 && r.Seq < len(l.docs) {
					l.docs[r.Seq] = s.batchListDoc(r, now)
				}
			}
			// The rows may be newer than b: its states say what they were.
			for i := range l.docs {
				exact = l.setState(i, b.States[i], nil, now, s) && exact
			}
		}
	} else {
		var ended []string
		for i := range len(b.States) {
			if b.States[i] == l.states[i] {
				continue
			}
			switch b.States[i] {
			case BatchPending, BatchProcessing, BatchGone:
				l.setState(i, b.States[i], nil, now, s)
			default:
				ended = append(ended, l.docs[i].JobID)
			}
		}
		if len(ended) > 0 {
			rows, err := s.Batches.FindBatchDocs(ctx, b.ID, ended)
			if err != nil {
				return err
			}
			found := make(map[int]BatchDoc, len(rows))
			for _, r := range rows {
				found[r.Seq] = r
			}
			for i := range len(b.States) {
				if b.States[i] != l.states[i] && b.States[i] != BatchPending && b.States[i] != BatchProcessing && b.States[i] != BatchGone {
					r, ok := found[i]
					var row *BatchDoc
					if ok {
						row = &r
					}
					exact = l.setState(i, b.States[i], row, now, s) && exact
				}
			}
		}
	}
	l.built, l.exact, l.version, l.head, l.states = true, exact, b.Version, batchHead{b.Status, b.Completed, b.Failed}, b.States
	return nil
}

// setState sets document i to state st; an ended state takes the job's
// row (nil: use the row l holds, if it shows that state). It reports false
// when the row needed is gone (deleted after the version read).
func (l *batchList) setState(i int, st BatchState, row *BatchDoc, now time.Time, s *DocumentService) bool {
	d := &l.docs[i]
	switch st {
	case BatchGone:
		d.gone = true
		return true
	case BatchPending, BatchProcessing:
		if d.JobID == "" {
			return false // not read: deleted since
		}
		d.gone = false
		d.Status, d.Error, d.ExpiresAt = StatusPending, "", nil
		if st == BatchProcessing {
			d.Status = StatusProcessing
		}
		*d = s.batchListDoc(d.BatchDoc, now)
		return true
	}
	if row == nil && !d.gone && d.JobID != "" && batchStateOf(d.Status) == st {
		return true
	}
	if row == nil {
		d.gone = true
		return false
	}
	*d = s.batchListDoc(*row, now)
	return true
}

func batchStateOf(status string) BatchState {
	switch status {
	case StatusPending:
		return BatchPending
	case StatusProcessing:
		return BatchProcessing
	case StatusCompleted:
		return BatchCompleted
	case StatusFailed:
		return BatchFailed
	}
	return '?'
}

// batchListDoc encodes a document's entry as of now.
func (s *DocumentService) batchListDoc(r BatchDoc, now time.Time) batchListDoc {
	e := BatchEntry{JobID: r.JobID, Status: r.Status, Error: r.Error}
	link := r.Status == StatusCompleted && r.ExpiresAt != nil && now.Before(*r.ExpiresAt) // as View
	if link {
		e.DownloadURL = s.Downloads.URL(r.JobID, *r.ExpiresAt)
	}
	b, _ := json.Marshal(e)
	return batchListDoc{BatchDoc: r, link: link, json: b}
}

// encodeList builds l's body as of now: links that expired since the
// entries were encoded are dropped first.
func (s *DocumentService) encodeList(b *Batch, l *batchList, now time.Time) {
	expired := 0
	var until time.Time
	for i := range l.docs {
		d := &l.docs[i]
		if d.gone || d.Status != StatusCompleted || d.ExpiresAt == nil {
			continue
		}
		if !now.Before(*d.ExpiresAt) {
			expired++
			if d.link {
				*d = s.batchListDoc(d.BatchDoc, now)
			}
		} else if until.IsZero() || d.ExpiresAt.Before(until) {
			until = *d.ExpiresAt
		}
	}
	l.until = until
	view := s.batchView(b)
	if b.Status == StatusCompleted && b.Format == string(render.PDF) && !until.IsZero() {
		view.CombinedURL, view.CombinedExpiresAt = s.Downloads.CombinedURL(b.ID, until), &until
	}
	head, _ := json.Marshal(view)
	n := len(head) + 16
	for _, d := range l.docs {
		n += len(d.json) + 1
	}
	body := make([]byte, 0, n)
	body = append(body, head[:len(head)-1]...)
	body = append(body, `,"documents":[`...)
	first := true
	for _, d := range l.docs {
		if d.gone {
			continue
		}
		if !first {
			body = append(body, ',')
		}
		body = append(body, d.json...)
		first = false
	}
	body = append(body, "]}\n"...)
	l.body, l.etag = body, ""
	if l.exact {
		l.etag = `"b` + strconv.FormatInt(l.version, 36) + "." + string(batchStateOf(b.Status)) + strconv.Itoa(b.Completed) + "." +
			strconv.Itoa(b.Failed) + "." + strconv.Itoa(expired) + "." + s.linkPrint() + `"`
	}
}

// linkPrint is a short fingerprint of the link key and base URL, so an
// ETag changes when the links in the body would.
func (s *DocumentService) linkPrint() string {
	s.linkPrintOnce.Do(func() {
		h := sha256.Sum256(append([]byte(s.Downloads.BaseURL+"\x00"), s.Downloads.Key...))
		s.linkPrintHex = hex.EncodeToString(h[:4])
	})
	return s.linkPrintHex
}
