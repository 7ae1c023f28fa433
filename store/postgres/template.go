package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"folio/app"
	"folio/store/internal/scan"
)

var _ app.TemplateStore = (*DB)(nil)

// templateCols are read by scan.Template (alias t): its columns, then
// the category ids in the order they were filed.
const templateCols = scan.TemplateCols + `,
	COALESCE((SELECT json_agg(c.category_id ORDER BY c.seq) FROM template_categories c WHERE c.template_id = t.id)::text, '[]')`

func sampleJSON(d map[string]any) string { return scan.SampleJSON(d) }

func mustJSON(v any) string { return scan.JSON(v) }

// CreateTemplate inserts a template with its categories; a taken slug gets a
// numeric suffix, a taken name is ERR_TMPL_011, a team at its plan's template
// count is ERR_PLAN_002. The plan count locks the team, so the slug check
// after it sees every other insert of the team.
func (db *DB) CreateTemplate(ctx context.Context, t *app.Template) error {
	return db.metaTx(ctx, func(tx pgx.Tx) error {
		if err := checkPlanCount(ctx, tx, t.TeamID, app.ResourceTemplates,
			`SELECT COUNT(*) FROM templates WHERE team_id = $1 AND deleted_at IS NULL`, t.TeamID); err != nil {
			return err
		}
		base := t.Slug
		for i := 2; ; i++ {
			var n int
			if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM templates WHERE team_id = $1 AND slug = $2 AND deleted_at IS NULL`, t.TeamID, t.Slug).Scan(&n); err != nil {
				return err
			}
			if n == 0 {
				break
			}
			t.Slug = app.SuffixedSlug(base, i)
		}
		_, err := tx.Exec(ctx, `INSERT INTO templates (`+scan.TemplateInsertCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
			t.ID, t.TeamID, t.ShortID, t.Slug, t.Name, t.Description, t.TemplateType, mustJSON(t.OutputFormats), string(t.Schema),
			mustJSON(t.Variables), mustJSON(t.Constants), mustJSON(t.CalculatedVariables), sampleJSON(t.SampleData), t.FolderID, t.IsPublished,
			msPtr(t.PublishedAt), t.CreatedBy, ms(t.CreatedAt), ms(t.UpdatedAt))
		if isUnique(err, "templates_team_name") {
			return app.ErrTemplateNameTaken(t.Name)
		} else if err != nil {
			return err
		}
		for _, c := range t.CategoryIDs {
			if _, err := tx.Exec(ctx, `INSERT INTO template_categories (template_id, category_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, t.ID, c); err != nil {
				return err
			}
		}
		return writeAssetRefs(ctx, tx, t.TeamID, t.ID, 0, t.Schema)
	})
}

// writeAssetRefs records the asset references of a template's working copy
// (version 0, replacing the previous ones) or of a published version.
func writeAssetRefs(ctx context.Context, tx pgx.Tx, teamID, templateID string, version int, schema json.RawMessage) error {
	if version == 0 {
		if _, err := tx.Exec(ctx, `DELETE FROM template_asset_refs WHERE template_id = $1 AND version = 0`, templateID); err != nil {
			return err
		}
	}
	for _, ref := range app.AssetRefs(schema) {
		if _, err := tx.Exec(ctx, `INSERT INTO template_asset_refs (template_id, version, team_id, ref) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
			templateID, version, teamID, ref); err != nil {
			return err
		}
	}
	return nil
}

// FindTemplate finds a live template of a team by id, shortId or slug.
func (db *DB) FindTemplate(ctx context.Context, teamID, ref string) (*app.Template, error) {
	return findTemplate(ctx, db.pool, teamID, ref)
}

func findTemplate(ctx context.Context, q querier, teamID, ref string) (*app.Template, error) {
	return scan.Template(q.QueryRow(ctx, `SELECT `+templateCols+` FROM templates t
		WHERE t.team_id = $1 AND t.deleted_at IS NULL AND (t.id = $2 OR t.short_id = $2 OR t.slug = $2)
		ORDER BY t.id = $2 DESC, t.short_id = $2 DESC LIMIT 1`, teamID, ref))
}

// FindVisibleTemplate finds a live template the team owns, else one a live
// team shares with it (by id or shortId: slugs are only unique per team).
func (db *DB) FindVisibleTemplate(ctx context.Context, teamID, ref string) (*app.Template, error) {
	t, err := findTemplate(ctx, db.pool, teamID, ref)
	if app.ErrorCode(err) != app.ECodeTemplateNotFound {
		return t, err
	}
	var perm string
	t, err = scan.Template(db.pool.QueryRow(ctx, `SELECT `+templateCols+`, s.permission FROM templates t
		JOIN template_shares s ON s.template_id = t.id
		JOIN teams o ON o.id = t.team_id AND o.deleted_at IS NULL
		WHERE s.target_team_id = $1 AND t.deleted_at IS NULL AND (t.id = $2 OR t.short_id = $2) LIMIT 1`, teamID, ref), &perm)
	if err != nil {
		return nil, err
	}
	t.Permission = perm
	return t, nil
}

// FindTemplateByName finds a live template of a team by its exact name.
func (db *DB) FindTemplateByName(ctx context.Context, teamID, name string) (*app.Template, error) {
	return scan.Template(db.pool.QueryRow(ctx, `SELECT `+templateCols+` FROM templates t
		WHERE t.team_id = $1 AND t.name = $2 AND t.deleted_at IS NULL`, teamID, name))
}

// asciiLower folds A-Z only: SQLite's LIKE ignores the case of ASCII
// letters and no others, and so does the search here, whatever the
// database's collation would do with lower() or ILIKE.
const asciiUpper, asciiLowerSet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz"

func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

// FindTemplates lists a team's live templates, newest first.
func (db *DB) FindTemplates(ctx context.Context, f app.TemplateFilter) ([]*app.Template, int, error) {
	where, args := []string{"t.team_id = $1", "t.deleted_at IS NULL"}, []any{f.TeamID}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "$?", fmt.Sprintf("$%d", len(args))))
	}
	if f.Search != "" {
		add(`translate(t.name, '`+asciiUpper+`', '`+asciiLowerSet+`') LIKE $? ESCAPE '\'`, "%"+asciiLower(likeEscape(f.Search))+"%")
	}
	if f.FolderID != "" {
		add("t.folder_id = $?", f.FolderID)
	}
	if f.CategoryID != "" {
		add("EXISTS (SELECT 1 FROM template_categories c WHERE c.template_id = t.id AND c.category_id = $?)", f.CategoryID)
	}
	if f.TemplateType != "" {
		add("t.template_type = $?", f.TemplateType)
	}
	cond := strings.Join(where, " AND ")
	var total int
	if err := db.pool.QueryRow(ctx, `SELECT COUNT(*) FROM templates t WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	limit := f.Page.Limit
	if limit <= 0 {
		limit = app.DefaultLimit
	}
	n := len(args)
	rows, err := db.pool.Query(ctx, `SELECT `+templateCols+` FROM templates t WHERE `+cond+
		fmt.Sprintf(` ORDER BY t.created_at DESC, t.seq DESC LIMIT $%d OFFSET $%d`, n+1, n+2), append(args, limit, max(f.Page.Offset(), 0))...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	list, err := scan.List(rows, scan.TemplateRow)
	return list, total, err
}

// UpdateTemplate writes the editable fields of a live template.
func (db *DB) UpdateTemplate(ctx context.Context, t *app.Template) error {
	return db.metaTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE templates SET name = $1, slug = $2, description = $3, output_formats = $4, schema = $5,
			variables = $6, constants = $7, calculated_variables = $8, sample_data = $9, folder_id = $10, updated_at = $11 WHERE id = $12 AND deleted_at IS NULL`,
			t.Name, t.Slug, t.Description, mustJSON(t.OutputFormats), string(t.Schema), mustJSON(t.Variables), mustJSON(t.Constants),
			mustJSON(t.CalculatedVariables), sampleJSON(t.SampleData), t.FolderID, ms(t.UpdatedAt), t.ID)
		switch {
		case isUnique(err, "templates_team_name"):
			return app.ErrTemplateNameTaken(t.Name)
		case isUnique(err, "templates_team_slug"):
			return app.ErrTemplateSlugTaken(t.Slug)
		case err != nil:
			return err
		}
		if tag.RowsAffected() == 0 {
			return app.ErrNotFound(app.ECodeTemplateNotFound, "template")
		}
		return writeAssetRefs(ctx, tx, t.TeamID, t.ID, 0, t.Schema)
	})
}

// DeleteTemplates soft-deletes the team's live templates among ids and ends
// their shares; versions, categories and jobs stay.
func (db *DB) DeleteTemplates(ctx context.Context, teamID string, ids []string, by string, now time.Time) ([]string, error) {
	var gone []string
	err := db.metaTx(ctx, func(tx pgx.Tx) error {
		gone = nil
		for _, id := range ids {
			tag, err := tx.Exec(ctx, `UPDATE templates SET deleted_at = $1, deleted_by = $2, updated_at = $1
				WHERE team_id = $3 AND id = $4 AND deleted_at IS NULL`, ms(now), by, teamID, id)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				continue
			}
			if _, err := tx.Exec(ctx, `DELETE FROM template_shares WHERE template_id = $1`, id); err != nil {
				return err
			}
			gone = append(gone, id)
		}
		return nil
	})
	return gone, err
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
