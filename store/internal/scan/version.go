package scan

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"folio/app"
)

// VersionCols are the columns of a template version, as Version reads them.
const VersionCols = `id, template_id, team_id, version, release_notes, restored_from, name, description, template_type,
	output_formats, schema, variables, constants, calculated_variables, sample_data, content_hash, published_by, published_at`

// Version reads one row of VersionCols.
func Version(row Row) (*app.TemplateVersion, error) {
	var v app.TemplateVersion
	var formats, schema, vars, consts, calc, sample string
	var restored sql.NullInt64
	var published int64
	err := row.Scan(&v.ID, &v.TemplateID, &v.TeamID, &v.Version, &v.ReleaseNotes, &restored, &v.Name, &v.Description, &v.TemplateType,
		&formats, &schema, &vars, &consts, &calc, &sample, &v.ContentHash, &v.PublishedBy, &published)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound(app.ECodeVersionNotFound, "version")
	} else if err != nil {
		return nil, err
	}
	for _, c := range []struct {
		src string
		dst any
	}{{formats, &v.OutputFormats}, {vars, &v.Variables}, {consts, &v.Constants}, {calc, &v.CalculatedVariables}, {sample, &v.SampleData}} {
		if err := json.Unmarshal([]byte(c.src), c.dst); err != nil {
			return nil, fmt.Errorf("template version %s: %w", v.ID, err)
		}
	}
	v.Schema = json.RawMessage(schema)
	if restored.Valid {
		n := int(restored.Int64)
		v.RestoredFrom = &n
	}
	v.PublishedAt = FromMS(published)
	return &v, nil
}

// VersionValues are the values of VersionCols for v, in order.
func VersionValues(v *app.TemplateVersion) []any {
	return []any{v.ID, v.TemplateID, v.TeamID, v.Version, v.ReleaseNotes, v.RestoredFrom, v.Name, v.Description, v.TemplateType,
		JSON(v.OutputFormats), string(v.Schema), JSON(v.Variables), JSON(v.Constants), JSON(v.CalculatedVariables),
		SampleJSON(v.SampleData), v.ContentHash, v.PublishedBy, MS(v.PublishedAt)}
}
