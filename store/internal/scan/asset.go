package scan

import (
	"database/sql"
	"encoding/json"
	"errors"

	"folio/app"
)

// AssetCols are the columns of an asset, as Asset reads them.
const AssetCols = `id, team_id, name, kind, format, content_type, size, sha256, width, height, font, file, created_by, created_at, updated_at`

// Asset reads one row of AssetCols.
func Asset(row Row) (*app.Asset, error) {
	var a app.Asset
	var font string
	var created, updated int64
	err := row.Scan(&a.ID, &a.TeamID, &a.Name, &a.Kind, &a.Format, &a.ContentType, &a.Size, &a.SHA256, &a.Width, &a.Height,
		&font, &a.File, &a.CreatedBy, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound(app.ECodeAssetNotFound, "asset")
	} else if err != nil {
		return nil, err
	}
	if font != "" {
		a.Font = &app.FontInfo{}
		if err := json.Unmarshal([]byte(font), a.Font); err != nil {
			return nil, err
		}
	}
	a.CreatedAt, a.UpdatedAt = FromMS(created), FromMS(updated)
	return &a, nil
}

// AssetValues are the values of AssetCols for a, in order.
func AssetValues(a *app.Asset) []any {
	return []any{a.ID, a.TeamID, a.Name, a.Kind, a.Format, a.ContentType, a.Size, a.SHA256, a.Width, a.Height, FontJSON(a.Font), a.File,
		a.CreatedBy, MS(a.CreatedAt), MS(a.UpdatedAt)}
}

// FontJSON is a font's metadata as stored, "" for an asset that is no font.
func FontJSON(f *app.FontInfo) string {
	if f == nil {
		return ""
	}
	return JSON(f)
}

// AssetUses reads rows of (ref, template id, template name) into the
// templates using each ref, each template once per ref.
func AssetUses(rows Rows, out map[string][]app.AssetUse) error {
	for rows.Next() {
		var ref string
		var u app.AssetUse
		if err := rows.Scan(&ref, &u.ID, &u.Name); err != nil {
			return err
		}
		out[ref] = app.AddAssetUse(out[ref], u)
	}
	return rows.Err()
}
