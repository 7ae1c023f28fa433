package store

import (
	"context"
	"time"

	"folio/app"
	"folio/store/internal/scan"
)

// CreateShare inserts a share; the team may hold one share per template.
func (db *DB) CreateShare(ctx context.Context, sh *app.TemplateShare) error {
	return db.tx(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO template_shares (id, template_id, owner_team_id, target_team_id, permission, created_by,
			created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			sh.ID, sh.TemplateID, sh.OwnerTeamID, sh.TargetTeamID, sh.Permission, sh.CreatedBy, ms(sh.CreatedAt), ms(sh.UpdatedAt))
		if isUnique(err, "") {
			return app.ErrAlreadyShared()
		}
		return err
	})
}

// FindShares lists a template's shares, oldest first.
func (db *DB) FindShares(ctx context.Context, templateID string) ([]*app.TemplateShare, error) {
	rows, err := db.read.QueryContext(ctx, scan.ShareSelect+` WHERE s.template_id = ? ORDER BY s.created_at, s.rowid`, templateID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list, err := scan.List(rows, scan.Share)
	return list, err
}

// FindShare finds a share by id.
func (db *DB) FindShare(ctx context.Context, id string) (*app.TemplateShare, error) {
	return scan.Share(db.read.QueryRowContext(ctx, scan.ShareSelect+` WHERE s.id = ?`, id))
}

// UpdateShare changes a share's permission.
func (db *DB) UpdateShare(ctx context.Context, id, permission string, now time.Time) (*app.TemplateShare, error) {
	var sh *app.TemplateShare
	err := db.tx(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE template_shares SET permission = ?, updated_at = ? WHERE id = ?`, permission, ms(now), id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return app.ErrNotFound(app.ECodeShareNotFound, "share")
		}
		sh, err = scan.Share(tx.QueryRowContext(ctx, scan.ShareSelect+` WHERE s.id = ?`, id))
		return err
	})
	return sh, err
}

// DeleteShare removes a share.
func (db *DB) DeleteShare(ctx context.Context, id string) error {
	return db.tx(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM template_shares WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return app.ErrNotFound(app.ECodeShareNotFound, "share")
		}
		return nil
	})
}

// FindSharedWithTeam lists the live templates of live teams shared with a
// team, newest share first.
func (db *DB) FindSharedWithTeam(ctx context.Context, teamID string) ([]*app.SharedTemplate, error) {
	rows, err := db.read.QueryContext(ctx, scan.SharedSelect+`
		WHERE s.target_team_id = ? ORDER BY s.created_at DESC, s.rowid DESC`, teamID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list, err := scan.List(rows, scan.Shared)
	return list, err
}
