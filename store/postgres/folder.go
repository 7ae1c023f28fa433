package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"folio/app"
	"folio/store/internal/scan"
)

// CreateGroup inserts a folder or category.
func (db *DB) CreateGroup(ctx context.Context, g *app.TemplateGroup) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO template_groups (id, team_id, kind, name, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		g.ID, g.TeamID, g.Kind, g.Name, ms(g.CreatedAt), ms(g.UpdatedAt))
	if isUnique(err, "template_groups_team_name") {
		return app.ErrGroupNameTaken(g.Kind, g.Name)
	}
	return err
}

func findGroup(ctx context.Context, q querier, teamID, kind, id string) (*app.TemplateGroup, error) {
	return scan.Group(q.QueryRow(ctx, `SELECT `+scan.GroupCols+` FROM template_groups g WHERE g.team_id = $1 AND g.kind = $2 AND g.id = $3`,
		teamID, kind, id), kind)
}

// FindGroup finds a team's folder or category.
func (db *DB) FindGroup(ctx context.Context, teamID, kind, id string) (*app.TemplateGroup, error) {
	return findGroup(ctx, db.pool, teamID, kind, id)
}

// FindGroups lists a team's folders or categories by name (bytewise).
func (db *DB) FindGroups(ctx context.Context, teamID, kind string, pg app.Page) ([]*app.TemplateGroup, int, error) {
	var total int
	if err := db.pool.QueryRow(ctx, `SELECT COUNT(*) FROM template_groups WHERE team_id = $1 AND kind = $2`, teamID, kind).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := db.pool.Query(ctx, `SELECT `+scan.GroupCols+` FROM template_groups g WHERE g.team_id = $1 AND g.kind = $2
		ORDER BY g.name, g.seq LIMIT $3 OFFSET $4`, teamID, kind, pg.Limit, pg.Offset())
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
	err := db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := findGroup(ctx, tx, teamID, kind, id); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE template_groups SET name = $1, updated_at = $2 WHERE team_id = $3 AND kind = $4 AND id = $5`,
			name, ms(now), teamID, kind, id)
		if isUnique(err, "template_groups_team_name") {
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
	return db.metaTx(ctx, func(tx pgx.Tx) error {
		if _, err := findGroup(ctx, tx, teamID, kind, id); err != nil {
			return err
		}
		var err error
		if kind == app.GroupFolder {
			_, err = tx.Exec(ctx, `UPDATE templates SET folder_id = NULL WHERE team_id = $1 AND folder_id = $2`, teamID, id)
		} else {
			_, err = tx.Exec(ctx, `DELETE FROM template_categories WHERE category_id = $1`, id)
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM template_groups WHERE team_id = $1 AND id = $2`, teamID, id)
		return err
	})
}

// SetTemplateCategories files the team's live templates among templateIDs
// under categoryIDs (added, or replacing theirs) and returns the ids it applied to.
func (db *DB) SetTemplateCategories(ctx context.Context, teamID string, templateIDs, categoryIDs []string, replace bool, now time.Time) ([]string, error) {
	var done []string
	err := db.metaTx(ctx, func(tx pgx.Tx) error {
		done = nil
		for _, id := range templateIDs {
			tag, err := tx.Exec(ctx, `UPDATE templates SET updated_at = $1 WHERE team_id = $2 AND id = $3 AND deleted_at IS NULL`, ms(now), teamID, id)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				continue
			}
			if replace {
				if _, err := tx.Exec(ctx, `DELETE FROM template_categories WHERE template_id = $1`, id); err != nil {
					return err
				}
			}
			for _, c := range categoryIDs {
				if _, err := tx.Exec(ctx, `INSERT INTO template_categories (template_id, category_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, id, c); err != nil {
					return err
				}
			}
			done = append(done, id)
		}
		return nil
	})
	return done, err
}
