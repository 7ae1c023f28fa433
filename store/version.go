package store

import (
	"context"

	"folio/app"
	"folio/store/internal/scan"
)

func insertVersion(ctx context.Context, tx *Tx, v *app.TemplateVersion) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO template_versions (`+scan.VersionCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		scan.VersionValues(v)...)
	return err
}

// publish records v (content taken from t) as t's next version and marks t
// published, in tx.
func publish(ctx context.Context, tx *Tx, t *app.Template, v *app.TemplateVersion) error {
	t.FillVersion(v)
	if err := insertVersion(ctx, tx, v); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE templates SET description = ?, output_formats = ?, schema = ?, variables = ?, constants = ?,
		calculated_variables = ?, sample_data = ?, published_version = ?, published_hash = ?, is_published = 1, published_at = ?, updated_at = ? WHERE id = ?`,
		t.Description, mustJSON(t.OutputFormats), string(t.Schema), mustJSON(t.Variables), mustJSON(t.Constants),
		mustJSON(t.CalculatedVariables), sampleJSON(t.SampleData), v.Version, v.ContentHash, ms(v.PublishedAt), ms(v.PublishedAt), t.ID); err != nil {
		return err
	}
	if err := writeAssetRefs(ctx, tx, t.TeamID, t.ID, 0, t.Schema); err != nil {
		return err
	}
	if err := writeAssetRefs(ctx, tx, t.TeamID, t.ID, v.Version, v.Schema); err != nil {
		return err
	}
	t.MarkPublished(v)
	return nil
}

func liveTemplate(ctx context.Context, tx *Tx, id string) (*app.Template, error) {
	return scan.Template(tx.QueryRowContext(ctx, `SELECT `+templateCols+` FROM templates t WHERE t.id = ? AND t.deleted_at IS NULL`, id))
}

// PublishTemplate copies the working copy of a live template into its next
// version, in one transaction; check may refuse.
func (db *DB) PublishTemplate(ctx context.Context, templateID string, v *app.TemplateVersion, check func(*app.Template) error) (*app.Template, error) {
	var t *app.Template
	err := db.tx(ctx, func(tx *Tx) error {
		var err error
		if t, err = liveTemplate(ctx, tx, templateID); err != nil {
			return err
		}
		if check != nil {
			if err := check(t); err != nil {
				return err
			}
		}
		return publish(ctx, tx, t, v)
	})
	return t, err
}

// RestoreTemplateVersion makes version `from` the working copy of a live
// template and publishes it as the next version, in one transaction.
func (db *DB) RestoreTemplateVersion(ctx context.Context, templateID string, from int, v *app.TemplateVersion) (*app.Template, error) {
	var t *app.Template
	err := db.tx(ctx, func(tx *Tx) error {
		var err error
		if t, err = liveTemplate(ctx, tx, templateID); err != nil {
			return err
		}
		src, err := scan.Version(tx.QueryRowContext(ctx, `SELECT `+scan.VersionCols+` FROM template_versions WHERE template_id = ? AND version = ?`, templateID, from))
		if err != nil {
			return err
		}
		t.RestoreContent(src)
		return publish(ctx, tx, t, v)
	})
	return t, err
}

// FindTemplateVersions lists a template's versions, newest first.
func (db *DB) FindTemplateVersions(ctx context.Context, templateID string, pg app.Page) ([]*app.TemplateVersion, int, error) {
	var total int
	if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM template_versions WHERE template_id = ?`, templateID).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+scan.VersionCols+` FROM template_versions WHERE template_id = ?
		ORDER BY version DESC LIMIT ? OFFSET ?`, templateID, pg.Limit, pg.Offset())
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	list, err := scan.List(rows, scan.Version)
	return list, total, err
}

// FindTemplateVersion finds a template's version by number.
func (db *DB) FindTemplateVersion(ctx context.Context, templateID string, version int) (*app.TemplateVersion, error) {
	return scan.Version(db.read.QueryRowContext(ctx, `SELECT `+scan.VersionCols+` FROM template_versions WHERE template_id = ? AND version = ?`, templateID, version))
}

// FindTemplateVersionByID finds a version by id.
func (db *DB) FindTemplateVersionByID(ctx context.Context, id string) (*app.TemplateVersion, error) {
	return scan.Version(db.read.QueryRowContext(ctx, `SELECT `+scan.VersionCols+` FROM template_versions WHERE id = ?`, id))
}
