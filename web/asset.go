package web

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"folio/app"
)

// maxAssetBody bounds an asset upload's request body: the largest asset as
// base64 in JSON, or as a multipart file, with room for the rest.
const maxAssetBody = app.MaxAssetBytes/3*4 + 1<<20

// readAssetUpload reads an upload or replacement: multipart (file, name)
// or JSON ({name, contentBase64}).
func readAssetUpload(w http.ResponseWriter, r *http.Request) (app.AssetUpload, error) {
	var in app.AssetUpload
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	tooBig := func() error {
		return (&app.Error{Code: app.ECodeAssetTooLarge, Message: "the upload is larger than an asset may be (20 MB)"}).
			WithInfo("maxBytes", app.MaxAssetBytes)
	}
	if ct != "multipart/form-data" {
		r.Body = http.MaxBytesReader(w, r.Body, maxAssetBody)
		err := decodeWith(r, &in, maxAssetBody)
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) || app.ErrorCode(err) == app.ECodePayloadTooLarge {
			return in, tooBig()
		}
		return in, err
	}
	r.Body = http.MaxBytesReader(w, r.Body, app.MaxAssetBytes+1<<20)
	err := r.ParseMultipartForm(1 << 20)
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return in, tooBig()
	case err != nil:
		return in, &app.Error{Code: app.ECodeInvalidJSON, Message: "the multipart body cannot be read: " + err.Error()}
	}
	defer r.MultipartForm.RemoveAll()
	if v, ok := r.MultipartForm.Value["name"]; ok && len(v) > 0 {
		in.Name = &v[0]
	}
	f, hdr, err := r.FormFile("file")
	if err != nil {
		return in, app.ErrRequired("file")
	}
	defer f.Close()
	if in.Data, err = io.ReadAll(io.LimitReader(f, app.MaxAssetBytes+1)); err != nil {
		return in, err
	}
	if in.Data == nil {
		in.Data = []byte{}
	}
	in.FileName = hdr.Filename
	return in, nil
}

// handleCreateAsset serves POST /api/assets.
func (s *Server) handleCreateAsset(w http.ResponseWriter, r *http.Request) error {
	in, err := readAssetUpload(w, r)
	if err != nil {
		return err
	}
	a, err := s.Assets.CreateAsset(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

// handleListAssets serves GET /api/assets (?kind=image|font|pdf, page, limit).
func (s *Server) handleListAssets(w http.ResponseWriter, r *http.Request) error {
	pg, err := page(r)
	if err != nil {
		return err
	}
	assets, total, err := s.Assets.FindAssets(r.Context(), app.AssetFilter{Kind: r.URL.Query().Get("kind"), Page: pg})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list{Data: assets, Meta: app.NewMeta(pg, total)})
	return nil
}

// handleGetAsset serves GET /api/assets/{id} (id or name).
func (s *Server) handleGetAsset(w http.ResponseWriter, r *http.Request) error {
	a, err := s.Assets.FindAsset(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

// handleAssetContent serves GET /api/assets/{id}/content: the bytes with
// their type. Nothing in them runs in a browser: SVGs are served under a
// policy that forbids scripts and fetches, everything as an attachment
// unless ?inline=1 asks to show an image.
func (s *Server) handleAssetContent(w http.ResponseWriter, r *http.Request) error {
	a, f, mod, err := s.Assets.OpenAsset(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Type", a.ContentType)
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox")
	h.Set("Cache-Control", "private, no-cache")
	h.Set("ETag", `"`+a.SHA256+`"`)
	disp := "attachment"
	if a.Kind == app.AssetImage && r.URL.Query().Get("inline") == "1" {
		disp = "inline"
	}
	h.Set("Content-Disposition", mime.FormatMediaType(disp, map[string]string{"filename": assetFileName(a)}))
	serveFile(w, r, "", mod, f)
	return nil
}

// assetFileName is the download name: the asset's name with its format's
// extension.
func assetFileName(a *app.Asset) string {
	name := a.Name
	if !strings.HasSuffix(strings.ToLower(name), "."+a.Format) {
		name += "." + a.Format
	}
	return name
}

// handleReplaceAsset serves PUT /api/assets/{id}: new bytes, same id.
func (s *Server) handleReplaceAsset(w http.ResponseWriter, r *http.Request) error {
	in, err := readAssetUpload(w, r)
	if err != nil {
		return err
	}
	a, err := s.Assets.ReplaceAsset(r.Context(), r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

// handleRenameAsset serves PATCH /api/assets/{id} ({name}).
func (s *Server) handleRenameAsset(w http.ResponseWriter, r *http.Request) error {
	var in app.AssetRename
	if err := decode(r, &in); err != nil {
		return err
	}
	a, err := s.Assets.RenameAsset(r.Context(), r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

// handleDeleteAsset serves DELETE /api/assets/{id}: refused while a
// template uses the asset.
func (s *Server) handleDeleteAsset(w http.ResponseWriter, r *http.Request) error {
	if err := s.Assets.DeleteAsset(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
