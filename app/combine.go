package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"folio/render/pdfmerge"
)

// A PDF batch's completed documents can be downloaded as one file with a
// bookmark (outline entry) per document (issue 23): GET
// /api/v1/documents/batches/{batchId}/combined, with a signed link like a
// job's download, shown in the batch as combinedUrl once it has ended. The
// file is put together when it is downloaded, from the documents as they
// are kept, so it costs nothing for batches nobody combines and is gone
// when they are. Encrypted documents are not combined: each has its own
// passwords, which Folio no longer has.

// combinedPrefix marks a signature as a combined batch's, so a job's
// link can never open a batch, nor a batch's a job.
const combinedPrefix = "combined:"

// CombinedURL returns the signed link to a batch's combined file.
func (d Downloads) CombinedURL(batchID string, expires time.Time) string {
	e := expires.Unix()
	return strings.TrimRight(d.BaseURL, "/") + "/api/v1/documents/batches/" + batchID + "/combined?expires=" +
		strconv.FormatInt(e, 10) + "&signature=" + d.signature(combinedPrefix+batchID, e)
}

// Combined checks a combined file's signed link and puts the file
// together: the batch's completed documents in request order, each under
// a bookmark "N. <filename or document title>". name is the file's name.
func (s *DocumentService) Combined(ctx context.Context, batchID, expires, signature string) (pdf []byte, name string, err error) {
	if err := s.Downloads.Verify(combinedPrefix+batchID, expires, signature, s.Now()); err != nil {
		e := err.(*Error)
		fresh := "GET /api/v1/documents/batches/" + batchID
		return nil, "", (&Error{Code: e.Code, Message: strings.SplitN(e.Message, ";", 2)[0] + "; " + fresh + " with your API key answers a fresh combinedUrl"}).
			WithInfo("batchId", batchID, "freshLink", fresh)
	}
	gone := &Error{Code: ECodeFileGone, Message: "the batch's documents no longer exist"}
	rows, err := s.Batches.FindBatchDocs(ctx, batchID, nil)
	if err != nil {
		return nil, "", err
	}
	var docs []pdfmerge.Document
	for i, r := range rows {
		if r.Status != StatusCompleted {
			continue
		}
		j, err := s.Jobs.FindJobForWorker(ctx, r.JobID)
		if err != nil || j.Status != StatusCompleted || j.FilePath == "" || j.Format != "pdf" {
			continue
		}
		var o jobPDFOptions
		if len(j.PDFOptions) > 0 && json.Unmarshal(j.PDFOptions, &o) == nil && o.Encrypted {
			return nil, "", (&Error{Code: ECodeInvalidField, Message: "the batch's documents are encrypted, each with its own passwords: they cannot be combined; download them one by one"}).
				WithInfo("field", "encrypt", "jobId", j.ID)
		}
		f, _, err := s.openDocument(ctx, j)
		if err != nil {
			continue
		}
		data, err := io.ReadAll(io.LimitReader(f, 256<<20))
		f.Close()
		if err != nil {
			return nil, "", err
		}
		seq := i
		if r.Seq >= 0 {
			seq = r.Seq
		}
		docs = append(docs, pdfmerge.Document{PDF: data, Prefix: fmt.Sprintf("%d. ", seq+1), Title: j.Filename})
	}
	if len(docs) == 0 {
		return nil, "", gone
	}
	out, err := pdfmerge.Combine(docs)
	if err != nil {
		s.logger().Error("combine batch", "batch", batchID, "err", err)
		return nil, "", &Error{Code: ECodeRenderFailed, Message: "the batch's documents could not be combined"}
	}
	return out, "batch " + batchID, nil
}
