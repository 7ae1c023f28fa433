package app

import (
	"encoding/json"
	"fmt"
	"time"
)

// EventBuilder makes the events of a job's end. FinishJob calls it inside the
// transaction that records the end, with the batch and its jobs when the job
// ended its batch, so events are stored exactly when the end is.
type EventBuilder func(j *Job, b *Batch, batchJobs []*Job) ([]*Event, error)

// BatchEventBuilder makes the event of a batch that ended because its last
// unfinished jobs were deleted; DeleteJobs calls it inside its transaction.
type BatchEventBuilder func(b *Batch, batchJobs []*Job) (*Event, error)

// jobEvents builds document.generated or document.failed for the job, and
// batch.completed or batch.failed when it was the last of its batch. The
// data fields are exactly SPEC.md's event table: a document of a batch
// carries no batchId (its batch event lists it instead).
func (s *DocumentService) jobEvents(j *Job, b *Batch, batchJobs []*Job) ([]*Event, error) {
	now := s.Now().UTC()
	at := now
	if j.CompletedAt != nil {
		at = *j.CompletedAt
	}
	meta := j.Metadata
	if len(meta) == 0 {
		meta = json.RawMessage("{}")
	}
	var data map[string]any
	typ := EventDocumentGenerated
	if j.Status == StatusCompleted {
		v := s.View(j)
		data = map[string]any{"jobId": j.ID, "templateId": j.TemplateID, "format": j.Format, "status": j.Status,
			"downloadUrl": v.DownloadURL, "expiresAt": v.ExpiresAt, "generatedAt": at, "metadata": meta}
	} else {
		typ = EventDocumentFailed
		data = map[string]any{"jobId": j.ID, "templateId": j.TemplateID, "format": j.Format, "status": j.Status,
			"error": j.Error, "errorCode": j.ErrorCode, "failedAt": at, "metadata": meta}
	}
	e, err := NewEvent(j.TeamID, typ, now, data)
	if err != nil {
		return nil, err
	}
	e.RequestID = j.RequestID
	events := []*Event{e}
	if b != nil {
		be, err := s.batchEvent(b, batchJobs, now)
		if err != nil {
			return nil, err
		}
		be.RequestID = j.RequestID
		events = append(events, be)
	}
	return events, nil
}

func (s *DocumentService) batchEvent(b *Batch, jobs []*Job, now time.Time) (*Event, error) {
	at := now
	if b.CompletedAt != nil {
		at = *b.CompletedAt
	}
	if b.Status == StatusFailed {
		// Jobs deleted before they ended count as failed "deleted" and are
		// no longer listed.
		code, msg := "", DeletedJobError
		for _, j := range jobs {
			if j.Status == StatusFailed {
				code, msg = j.ErrorCode, j.Error
				break
			}
		}
		return NewEvent(b.TeamID, EventBatchFailed, now, map[string]any{"batchId": b.ID, "templateId": b.TemplateID, "format": b.Format,
			"status": b.Status, "error": fmt.Sprintf("all %d documents failed; first error: %s", b.Total, msg), "errorCode": code, "failedAt": at})
	}
	docs := make([]map[string]any, 0, len(jobs))
	for _, j := range jobs {
		if j.Status == StatusCompleted {
			docs = append(docs, map[string]any{"jobId": j.ID, "status": j.Status, "downloadUrl": s.View(j).DownloadURL})
		} else {
			docs = append(docs, map[string]any{"jobId": j.ID, "status": j.Status, "error": j.Error})
		}
	}
	return NewEvent(b.TeamID, EventBatchCompleted, now, map[string]any{"batchId": b.ID, "templateId": b.TemplateID, "format": b.Format,
		"status": b.Status, "totalDocuments": b.Total, "completedDocuments": b.Completed, "failedDocuments": b.Failed,
		"completedAt": at, "documents": docs})
}
