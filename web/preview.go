package web

import (
	"net/http"
	"strconv"

	"folio/app"
	"folio/render"
)

// handlePreview serves POST /api/templates/{id}/preview: the rendered file,
// with the render figures in X-Folio-* headers; nothing is recorded.
func (s *Server) handlePreview(w http.ResponseWriter, r *http.Request) error {
	var in app.PreviewInput
	if err := decodeOptional(r, &in); err != nil {
		return err
	}
	doc, st, err := s.Documents.Preview(r.Context(), r.PathValue("id"), in)
	if err != nil {
		return err
	}
	return writePreview(w, in.Format, doc, st)
}

// handlePreviewDefinition serves POST /api/templates/preview: a definition
// sent in the body (not stored) rendered like handlePreview.
func (s *Server) handlePreviewDefinition(w http.ResponseWriter, r *http.Request) error {
	var in app.PreviewDefinitionInput
	if err := decode(r, &in); err != nil {
		return err
	}
	doc, st, err := s.Documents.PreviewDefinition(r.Context(), in)
	if err != nil {
		return err
	}
	return writePreview(w, in.Format, doc, st)
}

func writePreview(w http.ResponseWriter, format string, doc []byte, st render.Stats) error {
	if format == "" {
		format = "pdf"
	}
	h := w.Header()
	h.Set("Content-Type", contentTypes[format])
	h.Set("Content-Disposition", `inline; filename="preview.`+format+`"`)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Folio-Pages", strconv.Itoa(st.Pages))
	h.Set("X-Folio-Images", strconv.Itoa(st.Images))
	h.Set("X-Folio-Rows", strconv.Itoa(st.Rows))
	h.Set("X-Folio-Sheets", strconv.Itoa(st.Sheets))
	h.Set("X-Folio-Bytes", strconv.Itoa(len(doc)))
	h.Set("Content-Length", strconv.Itoa(len(doc)))
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(doc)
	return err
}

// handleValidateSchema serves POST /api/templates/validate-schema.
func (s *Server) handleValidateSchema(w http.ResponseWriter, r *http.Request) error {
	var in app.ValidateSchemaInput
	if err := decode(r, &in); err != nil {
		return err
	}
	v, err := s.Templates.ValidateSchema(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// handleValidateVariables serves POST /api/templates/validate-variables.
func (s *Server) handleValidateVariables(w http.ResponseWriter, r *http.Request) error {
	var in app.ValidateVariablesInput
	if err := decode(r, &in); err != nil {
		return err
	}
	v, err := s.Templates.ValidateVariables(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}
