package store

import (
	"context"
	"strings"
	"time"

	"folio/app"
	"folio/store/internal/scan"
)

var _ app.TemplateStore = (*DB)(nil)

// templateCols are read by scan.Template (alias t): its columns, then
// the category ids in the order they were filed.
const templateCols = scan.TemplateCols + `,
	(SELECT json_group_array(category_id) FROM (SELECT c.category_id FROM template_categories c WHERE c.template_id = t.id ORDER BY c.rowid))`

func sampleJSON(d map[string]any) string { return scan.SampleJSON(d) }

func mustJSON(v any) string { return scan.JSON(v) }

// CreateTemplate inserts a template with its categories; a taken slug gets a
// numeric suffix, a taken name is ERR_TMPL_011, a team at its plan's template
// count is ERR_PLAN_002.
func (db *DB) CreateTemplate(ctx context.Context, t *app.Template) error {
	return db.tx(ctx, func(tx *Tx) error {
		if err := checkPlanCount(ctx, tx, t.TeamID, app.ResourceTemplates,
			`SELECT COUNT(*) FROM templates WHERE team_id = ? AND deleted_at IS NULL`, t.TeamID); err != nil {
			return err
		}
		base := t.Slug
		for i := 2; ; i++ {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM templates WHERE team_id = ? AND slug = ? AND deleted_at IS NULL`, t.TeamID, t.Slug).Scan(&n); err != nil {
				return err
			}
			if n == 0 {
				break
			}
			t.Slug = app.SuffixedSlug(base, i)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO templates (`+scan.TemplateInsertCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			t.ID, t.TeamID, t.ShortID, t.Slug, t.Name, t.Description, t.TemplateType, mustJSON(t.OutputFormats), string(t.Schema),
			mustJSON(t.Variables), mustJSON(t.Constants), mustJSON(t.CalculatedVariables), sampleJSON(t.SampleData), t.FolderID, t.IsPublished,
			msPtr(t.PublishedAt), t.CreatedBy, ms(t.CreatedAt), ms(t.UpdatedAt))
		if isUnique(err, "name") {
			return app.ErrTemplateNameTaken(t.Name)
		} else if err != nil {
			return err
		}
		for _, c := range t.CategoryIDs {
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO template_categories (template_id, category_id) VALUES (?, ?)`, t.ID, c); err != nil {
				return err
			}
		}
		return writeAssetRefs(ctx, tx, t.TeamID, t.ID, 0, t.Schema)
	})
}

// FindTemplate finds a live template of a team by id, shortId or slug.
func (db *DB) FindTemplate(ctx context.Context, teamID, ref string) (*app.Template, error) {
	return findTemplate(ctx, db.read, teamID, ref)
}

func findTemplate(ctx context.Context, q querier, teamID, ref string) (*app.Template, error) {
	return scan.Template(q.queryRow(ctx, `SELECT `+templateCols+` FROM templates t
		WHERE t.team_id = ? AND t.deleted_at IS NULL AND (t.id = ? OR t.short_id = ? OR t.slug = ?)
		ORDER BY t.id = ? DESC, t.short_id = ? DESC LIMIT 1`, teamID, ref, ref, ref, ref, ref))
}

// FindVisibleTemplate finds a live template the team owns, else one a live
// team shares with it (by id or shortId: slugs are only unique per team).
func (db *DB) FindVisibleTemplate(ctx context.Context, teamID, ref string) (*app.Template, error) {
	t, err := findTemplate(ctx, db.read, teamID, ref)
	if app.ErrorCode(err) != app.ECodeTemplateNotFound {
		return t, err
	}
	var perm string
	t, err = scan.Template(db.read.QueryRowContext(ctx, `SELECT `+templateCols+`, s.permission FROM templates t
		JOIN template_shares s ON s.template_id = t.id
		JOIN teams o ON o.id = t.team_id AND o.deleted_at IS NULL
		WHERE s.target_team_id = ? AND t.deleted_at IS NULL AND (t.id = ? OR t.short_id = ?) LIMIT 1`, teamID, ref, ref), &perm)
	if err != nil {
		return nil, err
	}
	t.Permission = perm
	return t, nil
}

// FindTemplateByName finds a live template of a team by its exact name.
func (db *DB) FindTemplateByName(ctx context.Context, teamID, name string) (*app.Template, error) {
	return scan.Template(db.read.QueryRowContext(ctx, `SELECT `+templateCols+` FROM templates t
		WHERE t.team_id = ? AND t.name = ? AND t.deleted_at IS NULL`, teamID, name))
}

// FindTemplates lists a team's live templates, newest first.
func (db *DB) FindTemplates(ctx context.Context, f app.TemplateFilter) ([]*app.Template, int, error) {
	where, args := []string{"t.team_id = ?", "t.deleted_at IS NULL"}, []any{f.TeamID}
	if f.Search != "" {
		where, args = append(where, `t.name LIKE ? ESCAPE '\'`), append(args, "%"+likeEscape(f.Search)+"%")
	}
	if f.FolderID != "" {
		where, args = append(where, "t.folder_id = ?"), append(args, f.FolderID)
	}
	if f.CategoryID != "" {
		where, args = append(where, "EXISTS (SELECT 1 FROM template_categories c WHERE c.template_id = t.id AND c.category_id = ?)"), append(args, f.CategoryID)
	}
	if f.TemplateType != "" {
		where, args = append(where, "t.template_type = ?"), append(args, f.TemplateType)
	}
	cond := strings.Join(where, " AND ")
	var total int
	if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM templates t WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	limit := f.Page.Limit
	if limit <= 0 {
		limit = app.DefaultLimit
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+templateCols+` FROM templates t WHERE `+cond+
		` ORDER BY t.created_at DESC, t.rowid DESC LIMIT ? OFFSET ?`, append(args, limit, max(f.Page.Offset(), 0))...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	list, err := scan.List(rows, scan.TemplateRow)
	return list, total, err
}

// UpdateTemplate writes the editable fields of a live template.
func (db *DB) UpdateTemplate(ctx context.Context, t *app.Template) error {
	return db.tx(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE templates SET name = ?, slug = ?, description = ?, output_formats = ?, schema = ?,
			variables = ?, constants = ?, calculated_variables = ?, sample_data = ?, folder_id = ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL`,
			t.Name, t.Slug, t.Description, mustJSON(t.OutputFormats), string(t.Schema), mustJSON(t.Variables), mustJSON(t.Constants),
			mustJSON(t.CalculatedVariables), sampleJSON(t.SampleData), t.FolderID, ms(t.UpdatedAt), t.ID)
		switch {
		case isUnique(err, "name"):
			return app.ErrTemplateNameTaken(t.Name)
		case isUnique(err, "slug"):
			return app.ErrTemplateSlugTaken(t.Slug)
		case err != nil:
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return app.ErrNotFound(app.ECodeTemplateNotFound, "template")
		}
		return writeAssetRefs(ctx, tx, t.TeamID, t.ID, 0, t.Schema)
	})
}

// DeleteTemplates soft-deletes the team's live templates among ids and ends
// their shares; versions, categories and jobs stay.
func (db *DB) DeleteTemplates(ctx context.Context, teamID string, ids []string, by string, now time.Time) ([]string, error) {
	var gone []string
	err := db.tx(ctx, func(tx *Tx) error {
		gone = nil
		for _, id := range ids {
			res, err := tx.ExecContext(ctx, `UPDATE templates SET deleted_at = ?, deleted_by = ?, updated_at = ?
				WHERE team_id = ? AND id = ? AND deleted_at IS NULL`, ms(now), by, ms(now), teamID, id)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				continue
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM template_shares WHERE template_id = ?`, id); err != nil {
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
