package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"folio/app"
	"folio/store/internal/scan"
)

// CreateShare inserts a share; the team may hold one share per template.
func (db *DB) CreateShare(ctx context.Context, sh *app.TemplateShare) error {
	_, err := db.metaExec(ctx, `INSERT INTO template_shares (id, template_id, owner_team_id, target_team_id, permission, created_by,
		created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		sh.ID, sh.TemplateID, sh.OwnerTeamID, sh.TargetTeamID, sh.Permission, sh.CreatedBy, ms(sh.CreatedAt), ms(sh.UpdatedAt))
	if isUnique(err, "") {
		return app.ErrAlreadyShared()
	}
	return err
}

// FindShares lists a template's shares, oldest first.
func (db *DB) FindShares(ctx context.Context, templateID string) ([]*app.TemplateShare, error) {
	rows, err := db.pool.Query(ctx, scan.ShareSelect+` WHERE s.template_id = $1 ORDER BY s.created_at, s.seq`, templateID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list, err := scan.List(rows, scan.Share)
	return list, err
}

// FindShare finds a share by id.
func (db *DB) FindShare(ctx context.Context, id string) (*app.TemplateShare, error) {
	return scan.Share(db.pool.QueryRow(ctx, scan.ShareSelect+` WHERE s.id = $1`, id))
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
		sh, err = scan.Share(tx.QueryRow(ctx, scan.ShareSelect+` WHERE s.id = $1`, id))
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
	rows, err := db.pool.Query(ctx, scan.SharedSelect+`
		WHERE s.target_team_id = $1 ORDER BY s.created_at DESC, s.seq DESC`, teamID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list, err := scan.List(rows, scan.Shared)
	return list, err
}
