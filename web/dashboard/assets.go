package dashboard

import (
	"io"
	"mime"
	"net/http"

	"folio/app"
)

// maxUpload bounds the body of an asset upload form: the largest asset
// and the rest of the form.
const maxUpload = app.MaxAssetBytes + 1<<20

// assetList serves GET /app/assets: the team's images, fonts and PDFs,
// who uses each, the storage against the plan's, and the upload form.
func (d *Dashboard) assetList(c *call) error {
	ctx := c.r.Context()
	kind := c.r.URL.Query().Get("kind")
	list, total, err := d.Assets.FindAssets(ctx, app.AssetFilter{Kind: kind, Page: app.Page{Page: 1, Limit: app.MaxLimit}})
	if err != nil {
		return err
	}
	st, err := d.Assets.Storage(ctx)
	if err != nil {
		return err
	}
	return d.render(c, "assets", "Assets", map[string]any{"Assets": list, "Total": total, "Kind": kind, "Storage": st,
		"CanWrite": app.CanWrite(c.P.Role), "MaxBytes": int64(app.MaxAssetBytes)})
}

// assetUpload serves POST /app/assets (multipart: file, name).
func (d *Dashboard) assetUpload(c *call) error {
	in, err := c.assetFile()
	if err != nil {
		return c.done(err, "/app/assets", "")
	}
	if name := c.form("name"); name != "" {
		in.Name = &name
	}
	a, err := d.Assets.CreateAsset(c.r.Context(), in)
	if err != nil {
		return c.done(err, "/app/assets", "")
	}
	return c.redirect("/app/assets", "ok", "Uploaded "+a.Name+". Use it in a template as "+a.Reference+".")
}

// assetReplace serves POST /app/assets/{id}/replace (multipart: file).
func (d *Dashboard) assetReplace(c *call) error {
	in, err := c.assetFile()
	if err != nil {
		return c.done(err, "/app/assets", "")
	}
	a, err := d.Assets.ReplaceAsset(c.r.Context(), c.r.PathValue("id"), in)
	if err != nil {
		return c.done(err, "/app/assets", "")
	}
	return c.redirect("/app/assets", "ok", "Replaced the file of "+a.Name+"; templates using it draw the new one.")
}

// assetDelete serves POST /app/assets/{id}/delete. An asset in use is
// refused with the templates that use it.
func (d *Dashboard) assetDelete(c *call) error {
	err := d.Assets.DeleteAsset(c.r.Context(), c.r.PathValue("id"))
	return c.done(err, "/app/assets", "Asset deleted.")
}

// assetContent serves GET /app/assets/{id}/content: an image shown in the
// list (a thumbnail) or any asset downloaded, with the API's headers.
func (d *Dashboard) assetContent(c *call) error {
	a, f, mod, err := d.Assets.OpenAsset(c.r.Context(), c.r.PathValue("id"))
	if err != nil {
		return err
	}
	defer f.Close()
	h := c.w.Header()
	h.Set("Content-Type", a.ContentType)
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox")
	h.Set("Cache-Control", "private, no-cache")
	disp := "attachment"
	if a.Kind == app.AssetImage && c.r.URL.Query().Get("inline") == "1" {
		disp = "inline"
	}
	h.Set("Content-Disposition", mime.FormatMediaType(disp, map[string]string{"filename": a.Name + "." + a.Format}))
	http.ServeContent(c.w, c.r, "", mod, f)
	return nil
}

// assetFile reads the form's file.
func (c *call) assetFile() (app.AssetUpload, error) {
	var in app.AssetUpload
	c.parseForm()
	f, hdr, err := c.r.FormFile("file")
	if err != nil {
		return in, app.ErrRequired("file")
	}
	defer f.Close()
	if in.Data, err = io.ReadAll(io.LimitReader(f, app.MaxAssetBytes+1)); err != nil {
		return in, err
	}
	in.FileName = hdr.Filename
	return in, nil
}
