package scan

import (
	"database/sql"
	"errors"

	"folio/app"
)

// GroupCols are read by Group (alias g); the template count covers live templates.
const GroupCols = `g.id, g.team_id, g.kind, g.name, g.created_at, g.updated_at,
	CASE g.kind WHEN 'folder' THEN (SELECT COUNT(*) FROM templates t WHERE t.folder_id = g.id AND t.deleted_at IS NULL)
	ELSE (SELECT COUNT(*) FROM template_categories c JOIN templates t ON t.id = c.template_id AND t.deleted_at IS NULL
		WHERE c.category_id = g.id) END`

// Group reads one row of GroupCols; no row is the kind's not-found error.
func Group(row Row, kind string) (*app.TemplateGroup, error) {
	var g app.TemplateGroup
	var created, updated int64
	err := row.Scan(&g.ID, &g.TeamID, &g.Kind, &g.Name, &created, &updated, &g.TemplateCount)
	if errors.Is(err, sql.ErrNoRows) {
		if kind == app.GroupCategory {
			return nil, app.ErrNotFound(app.ECodeCategoryNotFound, "category")
		}
		return nil, app.ErrNotFound(app.ECodeFolderNotFound, "folder")
	} else if err != nil {
		return nil, err
	}
	g.CreatedAt, g.UpdatedAt = FromMS(created), FromMS(updated)
	return &g, nil
}

// GroupOf is Group for rows of one kind, for List.
func GroupOf(kind string) func(Row) (*app.TemplateGroup, error) {
	return func(row Row) (*app.TemplateGroup, error) { return Group(row, kind) }
}
