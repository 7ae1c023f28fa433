package web

import (
	"errors"
	"io"
	"mime"
	"net/http"

	"folio/app"
)

// maxSigningBody bounds a certificate upload: the largest PKCS #12 file
// as base64 in JSON or as a multipart file, with room for the rest.
const maxSigningBody = app.MaxP12Bytes/3*4 + 64<<10

// readSigningUpload reads POST /api/signing-certificates: multipart
// (file, password, name) or JSON ({name, p12Base64, password}). A
// multipart body this small stays in memory: the p12 never touches disk.
func readSigningUpload(w http.ResponseWriter, r *http.Request) (app.SigningUpload, error) {
	var in app.SigningUpload
	tooBig := func() error {
		return (&app.Error{Code: app.ECodeSigningInvalid, Message: "the upload is larger than a PKCS #12 file may be (256 KB)"}).
			WithInfo("maxBytes", app.MaxP12Bytes)
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxSigningBody)
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "multipart/form-data" {
		err := decodeWith(r, &in, maxSigningBody)
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) || app.ErrorCode(err) == app.ECodePayloadTooLarge {
			return in, tooBig()
		}
		return in, err
	}
	err := r.ParseMultipartForm(maxSigningBody)
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return in, tooBig()
	case err != nil:
		return in, &app.Error{Code: app.ECodeInvalidJSON, Message: "the multipart body cannot be read: " + err.Error()}
	}
	defer r.MultipartForm.RemoveAll()
	if v := r.MultipartForm.Value["name"]; len(v) > 0 {
		in.Name = v[0]
	}
	if v := r.MultipartForm.Value["password"]; len(v) > 0 {
		in.Password = v[0]
	}
	f, _, err := r.FormFile("file")
	if err != nil {
		return in, app.ErrRequired("file")
	}
	defer f.Close()
	if in.Data, err = io.ReadAll(io.LimitReader(f, app.MaxP12Bytes+1)); err != nil {
		return in, err
	}
	if in.Data == nil {
		in.Data = []byte{}
	}
	return in, nil
}

// handleCreateSigningCertificate serves POST /api/signing-certificates.
func (s *Server) handleCreateSigningCertificate(w http.ResponseWriter, r *http.Request) error {
	in, err := readSigningUpload(w, r)
	if err != nil {
		return err
	}
	c, err := s.Signing.CreateSigningCertificate(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

// handleListSigningCertificates serves GET /api/signing-certificates
// (page, limit): a team has few, read at once and paged here.
func (s *Server) handleListSigningCertificates(w http.ResponseWriter, r *http.Request) error {
	pg, err := page(r)
	if err != nil {
		return err
	}
	certs, err := s.Signing.FindSigningCertificates(r.Context())
	if err != nil {
		return err
	}
	total := len(certs)
	from := min(total, (pg.Page-1)*pg.Limit)
	certs = certs[from:min(total, from+pg.Limit)]
	if certs == nil {
		certs = []*app.SigningCertificate{}
	}
	writeJSON(w, http.StatusOK, list{Data: certs, Meta: app.NewMeta(pg, total)})
	return nil
}

// handleGetSigningCertificate serves GET /api/signing-certificates/{id} (id or name).
func (s *Server) handleGetSigningCertificate(w http.ResponseWriter, r *http.Request) error {
	c, err := s.Signing.FindSigningCertificate(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

// handleDeleteSigningCertificate serves DELETE /api/signing-certificates/{id}.
func (s *Server) handleDeleteSigningCertificate(w http.ResponseWriter, r *http.Request) error {
	if err := s.Signing.DeleteSigningCertificate(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
