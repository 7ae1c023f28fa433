package web

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"folio/app"
)

// handleGenerate serves POST /api/v1/documents/generate[?async=true][?dryRun=true].
// A dry run answers the checks and predicted figures and records nothing.
func (s *Server) handleGenerate(w http.ResponseWriter, r *http.Request) error {
	in, err := decodeGenerate(r)
	if err != nil {
		return err
	}
	async, err := boolQuery(r, "async")
	if err != nil {
		return err
	}
	if dry, err := boolQuery(r, "dryRun"); err != nil {
		return err
	} else if dry != nil && *dry {
		d, err := s.Documents.DryRun(r.Context(), in)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, d)
		return nil
	}
	j, err := s.Documents.Generate(r.Context(), in, async != nil && *async)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, j)
	return nil
}

// handleGetJob serves GET /api/v1/documents/jobs/{jobId}.
func (s *Server) handleGetJob(w http.ResponseWriter, r *http.Request) error {
	j, err := s.Documents.FindJob(r.Context(), r.PathValue("jobId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, j)
	return nil
}

// handleListJobs serves GET /api/v1/documents/jobs.
func (s *Server) handleListJobs(w http.ResponseWriter, r *http.Request) error {
	pg, err := page(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	jobs, info, err := s.Documents.FindJobs(r.Context(), app.JobFilter{Status: q.Get("status"), TemplateID: q.Get("templateId"), Page: pg,
		Cursor: q.Get("cursor")})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list{Data: jobs, Meta: info.Meta(pg)})
	return nil
}

var contentTypes = map[string]string{
	"pdf":  "application/pdf",
	"xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	"xml":  "application/xml", // an e-invoice alone (XRechnung, UBL, Factur-X's CII)
}

// attachment is a Content-Disposition naming a download (RFC 6266): an
// ASCII filename every client reads and, when the name is not ASCII,
// filename* with the UTF-8 name, which clients that know it prefer.
func attachment(name string) string {
	ascii := true
	for _, r := range name {
		if r >= utf8.RuneSelf || r < ' ' {
			ascii = false
			break
		}
	}
	if ascii {
		return mime.FormatMediaType("attachment", map[string]string{"filename": name})
	}
	fallback := strings.Map(func(r rune) rune {
		if r >= utf8.RuneSelf || r < ' ' {
			return '_'
		}
		return r
	}, name)
	var b strings.Builder
	for _, c := range []byte(name) {
		// RFC 5987 attr-char: ALPHA / DIGIT / "!#$&+-.^_`|~"
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$&+-.^_`|~", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return mime.FormatMediaType("attachment", map[string]string{"filename": fallback}) + "; filename*=UTF-8''" + b.String()
}

// handleDownload serves GET /api/v1/documents/jobs/{jobId}/download: the
// signed link is the only credential.
func (s *Server) handleDownload(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	j, f, mod, err := s.Documents.Download(r.Context(), r.PathValue("jobId"), q.Get("expires"), q.Get("signature"))
	if err != nil {
		return err
	}
	defer f.Close()
	name := j.Filename
	if name == "" {
		name = j.ID
	}
	w.Header().Set("Content-Type", contentTypes[j.Format])
	w.Header().Set("Content-Disposition", attachment(name+"."+j.Format))
	w.Header().Set("Cache-Control", "private, no-store")
	serveFile(w, r, "", mod, f)
	return nil
}

// handleCombined serves GET /api/v1/documents/batches/{batchId}/combined:
// the batch's PDF documents as one file; the signed link is the only
// credential, as for a job's download.
func (s *Server) handleCombined(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	pdf, name, err := s.Documents.Combined(r.Context(), r.PathValue("batchId"), q.Get("expires"), q.Get("signature"))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", contentTypes["pdf"])
	w.Header().Set("Content-Disposition", attachment(name+".pdf"))
	w.Header().Set("Cache-Control", "private, no-store")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(pdf))
	return nil
}

// handleGenerateBatch serves POST /api/v1/documents/generate/batch[?dryRun=true].
func (s *Server) handleGenerateBatch(w http.ResponseWriter, r *http.Request) error {
	var in app.BatchInput
	if err := decode(r, &in); err != nil {
		return err
	}
	if dry, err := boolQuery(r, "dryRun"); err != nil {
		return err
	} else if dry != nil && *dry {
		d, err := s.Documents.DryRunBatch(r.Context(), in)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, d)
		return nil
	}
	b, err := s.Documents.GenerateBatch(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, b)
	return nil
}

// handleGetBatch serves GET /api/v1/documents/batches/{batchId}, with an
// ETag: a poll sending it back in If-None-Match while the batch has not
// changed gets 304 and no body. The answer may be kept by the client
// (private) but must be checked again each time (no-cache).
func (s *Server) handleGetBatch(w http.ResponseWriter, r *http.Request) error {
	body, etag, err := s.Documents.BatchJSON(r.Context(), r.PathValue("batchId"))
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Cache-Control", "private, no-cache")
	if etag != "" {
		h.Set("ETag", etag)
		if etagMatches(r.Header.Get("If-None-Match"), etag) {
			w.WriteHeader(http.StatusNotModified)
			return nil
		}
	}
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(body)
	return nil
}

// etagMatches reports whether an If-None-Match header names etag (weak
// comparison, as RFC 9110 asks for If-None-Match).
func etagMatches(header, etag string) bool {
	for header != "" {
		var tag string
		tag, header, _ = strings.Cut(header, ",")
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if tag == "*" || tag == strings.TrimPrefix(etag, "W/") {
			return true
		}
	}
	return false
}

// handleRetryJob serves POST /api/v1/documents/jobs/{jobId}/retry.
func (s *Server) handleRetryJob(w http.ResponseWriter, r *http.Request) error {
	j, err := s.Documents.RetryJob(r.Context(), r.PathValue("jobId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"jobId": j.JobID, "status": j.Status, "message": "job queued for retry as " + j.JobID})
	return nil
}

type jobIDs struct {
	JobIDs []string `json:"jobIds"`
}

// handleRetryJobs serves POST /api/v1/documents/jobs/bulk/retry.
func (s *Server) handleRetryJobs(w http.ResponseWriter, r *http.Request) error {
	var in jobIDs
	if err := decode(r, &in); err != nil {
		return err
	}
	n, err := s.Documents.RetryJobs(r.Context(), in.JobIDs)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"queued": n, "message": itoa(n) + " failed job(s) queued for retry"})
	return nil
}

// handleDeleteJob serves DELETE /api/v1/documents/jobs/{jobId}.
func (s *Server) handleDeleteJob(w http.ResponseWriter, r *http.Request) error {
	if err := s.Documents.DeleteJob(r.Context(), r.PathValue("jobId")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleDeleteJobs serves DELETE /api/v1/documents/jobs/bulk.
func (s *Server) handleDeleteJobs(w http.ResponseWriter, r *http.Request) error {
	var in jobIDs
	if err := decode(r, &in); err != nil {
		return err
	}
	n, err := s.Documents.DeleteJobs(r.Context(), in.JobIDs)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": n, "message": itoa(n) + " job(s) deleted"})
	return nil
}

// handleExportJobs serves GET /api/v1/documents/jobs/export, streaming a CSV
// (default) or JSON file of the team's job log.
func (s *Server) handleExportJobs(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	format := q.Get("format")
	if format == "" {
		format = "csv"
	}
	if format != "csv" && format != "json" {
		return app.ErrInvalid("format", "format must be csv or json")
	}
	f := app.ExportFilter{Status: q.Get("status")}
	if err := f.Validate(); err != nil {
		return err
	}
	for _, d := range []struct {
		name string
		dst  **time.Time
		end  bool
	}{{"startDate", &f.From, false}, {"endDate", &f.To, true}} {
		if v := q.Get(d.name); v != "" {
			t, dateOnly, err := app.ParseTime(v)
			if err != nil {
				return app.ErrInvalid(d.name, "%s must be an ISO 8601 date (2026-01-31) or date-time", d.name)
			}
			if d.end && dateOnly {
				t = t.AddDate(0, 0, 1)
			}
			*d.dst = &t
		}
	}
	// Check access before the first byte goes out.
	if _, err := s.Documents.QueueStats(r.Context()); err != nil {
		return err
	}
	ct := "text/csv; charset=utf-8"
	if format == "json" {
		ct = "application/json"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": "jobs-" + time.Now().UTC().Format("20060102-150405") + "." + format}))
	w.Header().Set("Cache-Control", "no-store")
	if err := s.Documents.ExportJobs(r.Context(), f, format, w); err != nil {
		s.Logger.Error("export jobs", "err", err, "request_id", requestID(r.Context()))
	}
	return nil
}

// handleQueueStats serves GET /api/v1/documents/queue/stats.
func (s *Server) handleQueueStats(w http.ResponseWriter, r *http.Request) error {
	st, err := s.Documents.QueueStats(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

// handleDocumentAnalytics serves GET /api/v1/documents/analytics.
func (s *Server) handleDocumentAnalytics(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	a, err := s.Analytics.Documents(r.Context(), q.Get("startDate"), q.Get("endDate"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

// handleUsage serves GET /api/v1/analytics/usage.
func (s *Server) handleUsage(w http.ResponseWriter, r *http.Request) error {
	u, err := s.Analytics.Usage(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, u)
	return nil
}

// handleTemplateAnalytics serves GET /api/templates/{id}/analytics and
// GET /api/v1/templates/{id}/analytics.
func (s *Server) handleTemplateAnalytics(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	a, err := s.Analytics.Template(r.Context(), r.PathValue("id"), q.Get("period"), q.Get("startDate"), q.Get("endDate"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

// handleWallet serves GET /api/dashboard/analytics/wallet.
func (s *Server) handleWallet(w http.ResponseWriter, r *http.Request) error {
	v, err := s.Analytics.Wallet(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// handleHealth serves GET /api/dashboard/analytics/health.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) error {
	v, err := s.Analytics.Health(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// handleInsights serves GET /api/dashboard/analytics/insights.
func (s *Server) handleInsights(w http.ResponseWriter, r *http.Request) error {
	v, err := s.Analytics.Insights(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// handleAnalyticsExport serves GET /api/dashboard/analytics/export: a CSV of
// documents per day (startDate, endDate; default the last 30 days).
func (s *Server) handleAnalyticsExport(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if _, _, err := app.Period(q.Get("startDate"), q.Get("endDate"), time.Hour, time.Now()); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="documents-per-day.csv"`)
	if err := s.Analytics.ExportDaily(r.Context(), q.Get("startDate"), q.Get("endDate"), w); err != nil {
		s.Logger.Error("analytics export", "err", err, "request_id", requestID(r.Context()))
	}
	return nil
}
