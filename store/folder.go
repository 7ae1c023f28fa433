package store

import (
	"context"
	"time"

	"folio/app"
	"folio/store/internal/scan"
)

// CreateGroup inserts a folder or category.
func (db *DB) CreateGroup(ctx context.Context, g *app.TemplateGroup) error {
	return db.tx(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO template_groups (id, team_id, kind, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
			g.ID, g.TeamID, g.Kind, g.Name, ms(g.CreatedAt), ms(g.UpdatedAt))
		if isUnique(err, "name") {
			return app.ErrGroupNameTaken(g.Kind, g.Name)
		}
		return err
	})
}

func findGroup(ctx context.Context, q querier, teamID, kind, id string) (*app.TemplateGroup, error) {
	return scan.Group(q.queryRow(ctx, `SELECT `+scan.GroupCols+` FROM template_groups g WHERE g.team_id = ? AND g.kind = ? AND g.id = ?`,
		teamID, kind, id), kind)
}

// FindGroup finds a team's folder or category.
func (db *DB) FindGroup(ctx context.Context, teamID, kind, id string) (*app.TemplateGroup, error) {
	return findGroup(ctx, db.read, teamID, kind, id)
}

// FindGroups lists a team's folders or categories by name.
func (db *DB) FindGroups(ctx context.Context, teamID, kind string, pg app.Page) ([]*app.TemplateGroup, int, error) {
	var total int
	if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM template_groups WHERE team_id = ? AND kind = ?`, teamID, kind).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+scan.GroupCols+` FROM template_groups g WHERE g.team_id = ? AND g.kind = ?
		ORDER BY g.name, g.rowid LIMIT ? OFFSET ?`, teamID, kind, pg.Limit, pg.Offset())
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	list, err := scan.List(rows, scan.GroupOf(kind))
	return list, total, err
}

// RenameGroup renames a team's folder or category.
func (db *DB) RenameGroup(ctx context.Context, teamID, kind, id, name string, now time.Time) (*app.TemplateGroup, error) {
	var g *app.TemplateGroup
	err := db.tx(ctx, func(tx *Tx) error {
		if _, err := findGroup(ctx, tx, teamID, kind, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE template_groups SET name = ?, updated_at = ? WHERE team_id = ? AND kind = ? AND id = ?`,
			name, ms(now), teamID, kind, id)
		if isUnique(err, "name") {
			return app.ErrGroupNameTaken(kind, name)
		} else if err != nil {
			return err
		}
		g, err = findGroup(ctx, tx, teamID, kind, id)
		return err
	})
	return g, err
}

// DeleteGroup removes a folder (its templates leave it) or a category (its
// templates lose it).
func (db *DB) DeleteGroup(ctx context.Context, teamID, kind, id string) error {
	return db.tx(ctx, func(tx *Tx) error {
		if _, err := findGroup(ctx, tx, teamID, kind, id); err != nil {
			return err
		}
		var err error
		if kind == app.GroupFolder {
			_, err = tx.ExecContext(ctx, `UPDATE templates SET folder_id = NULL WHERE team_id = ? AND folder_id = ?`, teamID, id)
		} else {
			_, err = tx.ExecContext(ctx, `DELETE FROM template_categories WHERE category_id = ?`, id)
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM template_groups WHERE team_id = ? AND id = ?`, teamID, id)
		return err
	})
}

// SetTemplateCategories files the team's live templates among templateIDs
// under categoryIDs (added, or replacing theirs) and returns the ids it applied to.
func (db *DB) SetTemplateCategories(ctx context.Context, teamID string, templateIDs, categoryIDs []string, replace bool, now time.Time) ([]string, error) {
	var done []string
	err := db.tx(ctx, func(tx *Tx) error {
		done = nil
		for _, id := range templateIDs {
			res, err := tx.ExecContext(ctx, `UPDATE templates SET updated_at = ? WHERE team_id = ? AND id = ? AND deleted_at IS NULL`, ms(now), teamID, id)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				continue
			}
			if replace {
				if _, err := tx.ExecContext(ctx, `DELETE FROM template_categories WHERE template_id = ?`, id); err != nil {
					return err
				}
			}
			for _, c := range categoryIDs {
				if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO template_categories (template_id, category_id) VALUES (?, ?)`, id, c); err != nil {
					return err
				}
			}
			done = append(done, id)
		}
		return nil
	})
	return done, err
}
