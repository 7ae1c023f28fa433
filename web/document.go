package web

import (
	"mime"
	"net/http"

	"folio/app"
)

// handleGenerate serves POST /api/v1/documents/generate[?async=true].
func (s *Server) handleGenerate(w http.ResponseWriter, r *http.Request) error {
	var in app.GenerateInput
	if err := decode(r, &in); err != nil {
		return err
	}
	async, err := boolQuery(r, "async")
	if err != nil {
		return err
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
	jobs, total, err := s.Documents.FindJobs(r.Context(), app.JobFilter{Status: q.Get("status"), TemplateID: q.Get("templateId"), Page: pg})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list{Data: jobs, Meta: app.NewMeta(pg, total)})
	return nil
}

var contentTypes = map[string]string{
	"pdf":  "application/pdf",
	"xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
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
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name + "." + j.Format}))
	w.Header().Set("Cache-Control", "private, no-store")
	http.ServeContent(w, r, "", mod, f)
	return nil
}
