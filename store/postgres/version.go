package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"folio/app"
	"folio/store/internal/scan"
)

func insertVersion(ctx context.Context, tx pgx.Tx, v *app.TemplateVersion) error {
	_, err := tx.Exec(ctx, `INSERT INTO template_versions (`+scan.VersionCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
		scan.VersionValues(v)...)
	return err
}

// publish records v (content taken from t) as t's next version and marks t
// published, in tx.
func publish(ctx context.Context, tx pgx.Tx, t *app.Template, v *app.TemplateVersion) error {
	t.FillVersion(v)
	if err := insertVersion(ctx, tx, v); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE templates SET description = $1, output_formats = $2, schema = $3, variables = $4, constants = $5,
		calculated_variables = $6, sample_data = $7, published_version = $8, published_hash = $9, is_published = true, published_at = $10, updated_at = $10 WHERE id = $11`,
		t.Description, mustJSON(t.OutputFormats), string(t.Schema), mustJSON(t.Variables), mustJSON(t.Constants),
		mustJSON(t.CalculatedVariables), sampleJSON(t.SampleData), v.Version, v.ContentHash, ms(v.PublishedAt), t.ID); err != nil {
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

// liveTemplate reads a live template and locks its row: of two replicas
// publishing it at once, the second waits and numbers its version after
// the first's.
func liveTemplate(ctx context.Context, tx pgx.Tx, id string) (*app.Template, error) {
	return scan.Template(tx.QueryRow(ctx, `SELECT `+templateCols+` FROM templates t WHERE t.id = $1 AND t.deleted_at IS NULL FOR UPDATE OF t`, id))
}

// PublishTemplate copies the working copy of a live template into its next
// version, in one transaction; check may refuse.
func (db *DB) PublishTemplate(ctx context.Context, templateID string, v *app.TemplateVersion, check func(*app.Template) error) (*app.Template, error) {
	var t *app.Template
	err := db.metaTx(ctx, func(tx pgx.Tx) error {
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
	err := db.metaTx(ctx, func(tx pgx.Tx) error {
		var err error
		if t, err = liveTemplate(ctx, tx, templateID); err != nil {
			return err
		}
		src, err := scan.Version(tx.QueryRow(ctx, `SELECT `+scan.VersionCols+` FROM template_versions WHERE template_id = $1 AND version = $2`, templateID, from))
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
	if err := db.pool.QueryRow(ctx, `SELECT COUNT(*) FROM template_versions WHERE template_id = $1`, templateID).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := db.pool.Query(ctx, `SELECT `+scan.VersionCols+` FROM template_versions WHERE template_id = $1
		ORDER BY version DESC LIMIT $2 OFFSET $3`, templateID, pg.Limit, pg.Offset())
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	list, err := scan.List(rows, scan.Version)
	return list, total, err
}

// FindTemplateVersion finds a template's version by number.
func (db *DB) FindTemplateVersion(ctx context.Context, templateID string, version int) (*app.TemplateVersion, error) {
	return scan.Version(db.pool.QueryRow(ctx, `SELECT `+scan.VersionCols+` FROM template_versions WHERE template_id = $1 AND version = $2`, templateID, version))
}

// FindTemplateVersionByID finds a version by id.
func (db *DB) FindTemplateVersionByID(ctx context.Context, id string) (*app.TemplateVersion, error) {
	return scan.Version(db.pool.QueryRow(ctx, `SELECT `+scan.VersionCols+` FROM template_versions WHERE id = $1`, id))
}
