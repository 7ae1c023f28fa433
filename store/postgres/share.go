package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"folio/app"
)

// shareSelect reads shares of live templates with live target teams.
const shareSelect = `SELECT s.id, s.template_id, s.owner_team_id, s.target_team_id, tm.name, s.permission, s.created_by,
	s.created_at, s.updated_at FROM template_shares s
	JOIN teams tm ON tm.id = s.target_team_id AND tm.deleted_at IS NULL
	JOIN templates t ON t.id = s.template_id AND t.deleted_at IS NULL`

func scanShare(row scanner) (*app.TemplateShare, error) {
	var sh app.TemplateShare
	var created, updated int64
	err := row.Scan(&sh.ID, &sh.TemplateID, &sh.OwnerTeamID, &sh.TargetTeamID, &sh.TargetTeamName, &sh.Permission, &sh.CreatedBy, &created, &updated)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, app.ErrNotFound(app.ECodeShareNotFound, "share")
	} else if err != nil {
		return nil, err
	}
	sh.CreatedAt, sh.UpdatedAt = fromMS(created), fromMS(updated)
	return &sh, nil
}

// CreateShare inserts a share; the team may hold one share per template.
func (db *DB) CreateShare(ctx context.Context, sh *app.TemplateShare) error {
	_, err := db.metaExec(ctx, `INSERT INTO template_shares (id, template_id, owner_team_id, target_team_id, permission, created_by,
		created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		sh.ID, sh.TemplateID, sh.OwnerTeamID, sh.TargetTeamID, sh.Permission, sh.CreatedBy, ms(sh.CreatedAt), ms(sh.UpdatedAt))
	if isUnique(err, "") {
		return (&app.Error{Code: app.ECodeAlreadyShared, Message: "the template is already shared with this team; change the share's permission instead"}).
			WithInfo("field", "targetTeamId")
	}
	return err
}

// FindShares lists a template's shares, oldest first.
func (db *DB) FindShares(ctx context.Context, templateID string) ([]*app.TemplateShare, error) {
	rows, err := db.pool.Query(ctx, shareSelect+` WHERE s.template_id = $1 ORDER BY s.created_at, s.seq`, templateID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []*app.TemplateShare{}
	for rows.Next() {
		sh, err := scanShare(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, sh)
	}
	return list, rows.Err()
}

// FindShare finds a share by id.
func (db *DB) FindShare(ctx context.Context, id string) (*app.TemplateShare, error) {
	return scanShare(db.pool.QueryRow(ctx, shareSelect+` WHERE s.id = $1`, id))
}

// UpdateShare changes a share's permission.
func (db *DB) UpdateShare(ctx context.Context, id, permission string, now time.Time) (*app.TemplateShare, error) {
	var sh *app.TemplateShare
	err := db.metaTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE template_shares SET permission = $1, updated_at = $2 WHERE id = $3`, permission, ms(now), id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return app.ErrNotFound(app.ECodeShareNotFound, "share")
		}
		sh, err = scanShare(tx.QueryRow(ctx, shareSelect+` WHERE s.id = $1`, id))
		return err
	})
	return sh, err
}

// DeleteShare removes a share.
func (db *DB) DeleteShare(ctx context.Context, id string) error {
	n, err := db.metaExec(ctx, `DELETE FROM template_shares WHERE id = $1`, id)
	if err != nil {
		return err
	}
	if n == 0 {
		return app.ErrNotFound(app.ECodeShareNotFound, "share")
	}
	return nil
}

// FindSharedWithTeam lists the live templates of live teams shared with a
// team, newest share first.
func (db *DB) FindSharedWithTeam(ctx context.Context, teamID string) ([]*app.SharedTemplate, error) {
	rows, err := db.pool.Query(ctx, `SELECT t.id, t.short_id, t.name, t.template_type, o.id, o.name, s.permission, s.created_at
		FROM template_shares s
		JOIN templates t ON t.id = s.template_id AND t.deleted_at IS NULL
		JOIN teams o ON o.id = t.team_id AND o.deleted_at IS NULL
		WHERE s.target_team_id = $1 ORDER BY s.created_at DESC, s.seq DESC`, teamID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []*app.SharedTemplate{}
	for rows.Next() {
		var st app.SharedTemplate
		var at int64
		if err := rows.Scan(&st.ID, &st.ShortID, &st.Name, &st.TemplateType, &st.OwnerTeamID, &st.OwnerTeamName, &st.Permission, &at); err != nil {
			return nil, err
		}
		st.SharedAt = fromMS(at)
		list = append(list, &st)
	}
	return list, rows.Err()
}
