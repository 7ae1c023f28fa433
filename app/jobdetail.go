package app

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"regexp"
	"strconv"
	"time"
)

// JobDetails is what a person looking at one job wants beyond its API
// object: how big and how long the document is, how long it took, which
// key asked for it and with which values.
type JobDetails struct {
	*JobView
	Size     int64          // bytes of the stored file; 0 before it exists
	Pages    int            // PDF pages; 0 when not known
	Sheets   int            // XLSX sheets; 0 when not known
	Duration *time.Duration // rendering time, when the job ran
	APIKeyID string         // the key that queued the job; "" for a dashboard or JWT call
	// Variables are the request's values as sent (JSON), cut at
	// MaxShownVariables bytes; VariablesCut says it was cut.
	Variables    json.RawMessage
	VariablesCut bool
}

// MaxShownVariables is the most of a job's variables JobDetails returns.
const MaxShownVariables = 64 << 10

// JobDetails returns one of the caller's team's jobs with its details.
func (s *DocumentService) JobDetails(ctx context.Context, id string) (*JobDetails, error) {
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
	d := &JobDetails{JobView: s.View(j), Size: j.FileSize, APIKeyID: j.APIKeyID}
	if j.DurationMS != nil {
		dur := time.Duration(*j.DurationMS) * time.Millisecond
		d.Duration = &dur
	}
	if len(j.Variables) > 0 {
		d.Variables = readableJSON(j.Variables)
		if len(d.Variables) > MaxShownVariables {
			d.Variables, d.VariablesCut = d.Variables[:MaxShownVariables], true
		}
	}
	if j.Status == StatusCompleted && j.FilePath != "" {
		d.Pages, d.Sheets = s.countParts(ctx, j)
	}
	return d, nil
}

// readableJSON indents JSON and writes <, > and & as they are (stored
// values have them escaped as \u003c); raw is returned as it is when it
// does not parse.
func readableJSON(raw json.RawMessage) json.RawMessage {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return raw
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if enc.Encode(v) != nil {
		return raw
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// pdfPageCount finds the page count of a PDF in its page tree's root
// (render writes one "/Type /Pages" object with "/Count n").
var pdfPageCount = regexp.MustCompile(`/Type /Pages\s[^>]*?/Count (\d+)`)

// sheetPart names the sheets of a workbook.
var sheetPart = regexp.MustCompile(`^xl/worksheets/sheet\d+\.xml$`)

// countParts reads a job's stored file for its pages (PDF) or sheets
// (XLSX); zero when the file is gone or unreadable.
func (s *DocumentService) countParts(ctx context.Context, j *Job) (pages, sheets int) {
	f, _, err := s.openDocument(ctx, j)
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 64<<20))
	if err != nil {
		return 0, 0
	}
	switch j.Format {
	case "pdf":
		if m := pdfPageCount.FindSubmatch(data); m != nil {
			pages, _ = strconv.Atoi(string(m[1]))
		}
	case "xlsx":
		if zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data))); err == nil {
			for _, f := range zr.File {
				if sheetPart.MatchString(f.Name) {
					sheets++
				}
			}
		}
	}
	return pages, sheets
}
