package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf16"

	"folio/app"
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

func writePreview(w http.ResponseWriter, format string, doc []byte, st app.PreviewStats) error {
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
	h.Set("X-Folio-Warnings", warningsHeader(st.Warnings))
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

// warningsHeader writes a preview's warnings as a JSON array in ASCII
// (characters past it as \uXXXX escapes), as a header can carry them.
func warningsHeader(list []app.DryRunIssue) string {
	if len(list) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(list)
	var out strings.Builder
	for _, r := range string(b) {
		switch {
		case r < 0x80:
			out.WriteRune(r)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&out, "\\u%04x\\u%04x", r1, r2)
		default:
			fmt.Fprintf(&out, "\\u%04x", r)
		}
	}
	return out.String()
}
