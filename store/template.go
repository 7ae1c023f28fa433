package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"folio/app"
)

var _ app.TemplateStore = (*DB)(nil)

const templateCols = `id, team_id, short_id, slug, name, description, template_type, output_formats, schema, variables, constants,
	calculated_variables, folder_id, is_published, published_at, created_by, created_at, updated_at`

func scanTemplate(row scanner) (*app.Template, error) {
	var t app.Template
	var formats, schema, vars, consts, calc string
	var folder sql.NullString
	var published int
	var publishedAt sql.NullInt64
	var created, updated int64
	err := row.Scan(&t.ID, &t.TeamID, &t.ShortID, &t.Slug, &t.Name, &t.Description, &t.TemplateType, &formats, &schema,
		&vars, &consts, &calc, &folder, &published, &publishedAt, &t.CreatedBy, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound(app.ECodeTemplateNotFound, "template")
	} else if err != nil {
		return nil, err
	}
	for _, c := range []struct {
		src string
		dst any
	}{{formats, &t.OutputFormats}, {vars, &t.Variables}, {consts, &t.Constants}, {calc, &t.CalculatedVariables}} {
		if err := json.Unmarshal([]byte(c.src), c.dst); err != nil {
			return nil, fmt.Errorf("template %s: %w", t.ID, err)
		}
	}
	t.Schema = json.RawMessage(schema)
	if folder.Valid {
		t.FolderID = &folder.String
	}
	t.IsPublished = published == 1
	t.PublishedAt = fromNullMS(publishedAt)
	t.CreatedAt, t.UpdatedAt = fromMS(created), fromMS(updated)
	return &t, nil
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only values that came from JSON are stored
	}
	return string(b)
}

// CreateTemplate inserts a template; a taken slug gets a numeric suffix, a
// taken name is ERR_TMPL_011.
func (db *DB) CreateTemplate(ctx context.Context, t *app.Template) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		base := t.Slug
		for i := 2; ; i++ {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM templates WHERE team_id = ? AND slug = ? AND deleted_at IS NULL`, t.TeamID, t.Slug).Scan(&n); err != nil {
				return err
			}
			if n == 0 {
				break
			}
			t.Slug = fmt.Sprintf("%s-%d", base, i)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO templates (`+templateCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			t.ID, t.TeamID, t.ShortID, t.Slug, t.Name, t.Description, t.TemplateType, mustJSON(t.OutputFormats), string(t.Schema),
			mustJSON(t.Variables), mustJSON(t.Constants), mustJSON(t.CalculatedVariables), t.FolderID, boolInt(t.IsPublished),
			msPtr(t.PublishedAt), t.CreatedBy, ms(t.CreatedAt), ms(t.UpdatedAt))
		if isUnique(err, "name") {
			return (&app.Error{Code: app.ECodeTemplateExists, Message: "a template with this name already exists"}).WithInfo("field", "name")
		}
		return err
	})
}

// FindTemplate finds a live template of a team by id, shortId or slug.
func (db *DB) FindTemplate(ctx context.Context, teamID, ref string) (*app.Template, error) {
	return scanTemplate(db.read.QueryRowContext(ctx, `SELECT `+templateCols+` FROM templates
		WHERE team_id = ? AND deleted_at IS NULL AND (id = ? OR short_id = ? OR slug = ?)
		ORDER BY id = ? DESC, short_id = ? DESC LIMIT 1`, teamID, ref, ref, ref, ref, ref))
}

// FindTemplates lists a team's live templates, newest first.
func (db *DB) FindTemplates(ctx context.Context, f app.TemplateFilter) ([]*app.Template, int, error) {
	where, args := []string{"team_id = ?", "deleted_at IS NULL"}, []any{f.TeamID}
	if f.Search != "" {
		where, args = append(where, "name LIKE ? ESCAPE '\\'"), append(args, "%"+likeEscape(f.Search)+"%")
	}
	cond := strings.Join(where, " AND ")
	var total int
	if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM templates WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+templateCols+` FROM templates WHERE `+cond+
		` ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?`, append(args, f.Page.Limit, f.Page.Offset())...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	list := []*app.Template{}
	for rows.Next() {
		t, err := scanTemplate(rows)
		if err != nil {
			return nil, 0, err
		}
		list = append(list, t)
	}
	return list, total, rows.Err()
}

// CountTemplates counts a team's live templates.
func (db *DB) CountTemplates(ctx context.Context, teamID string) (int, error) {
	var n int
	err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM templates WHERE team_id = ? AND deleted_at IS NULL`, teamID).Scan(&n)
	return n, err
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
