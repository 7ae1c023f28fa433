package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"folio/app"
	"folio/store/internal/scan"
)

var _ app.AssetStore = (*DB)(nil)

// checkAssetQuota refuses size more bytes of assets (ERR_QUOTA_012) when
// the team's plan keeps no more; except is an asset whose bytes are being
// replaced. It runs in the writing transaction, which holds the write lock
// from BEGIN, so two uploads are counted one after the other.
func checkAssetQuota(ctx context.Context, tx *Tx, teamID, except string, size int64) error {
	var name string
	err := tx.QueryRowContext(ctx, `SELECT plan FROM teams WHERE id = ?`, teamID).Scan(&name)
	if errors.Is(err, sql.ErrNoRows) {
		return app.ErrNotFound(app.ECodeTeamNotFound, "team")
	} else if err != nil {
		return err
	}
	return app.CheckAssetQuota(name, size, func() (used int64, err error) {
		err = tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(size), 0) FROM assets WHERE team_id = ? AND id != ?`, teamID, except).Scan(&used)
		return used, err
	})
}

// CreateAsset inserts an asset within the team's asset storage quota.
func (db *DB) CreateAsset(ctx context.Context, a *app.Asset) error {
	return db.tx(ctx, func(tx *Tx) error {
		if err := checkAssetQuota(ctx, tx, a.TeamID, "", a.Size); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO assets (`+scan.AssetCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			scan.AssetValues(a)...)
		if isUnique(err, "name") {
			return app.ErrAssetNameTaken(a.Name)
		}
		return err
	})
}

func findAsset(ctx context.Context, q querier, teamID, ref string) (*app.Asset, error) {
	if strings.HasPrefix(ref, "ast_") {
		a, err := scan.Asset(q.queryRow(ctx, `SELECT `+scan.AssetCols+` FROM assets WHERE id = ? AND team_id = ?`, ref, teamID))
		if app.ErrorCode(err) != app.ECodeAssetNotFound {
			return a, err
		}
	}
	return scan.Asset(q.queryRow(ctx, `SELECT `+scan.AssetCols+` FROM assets WHERE team_id = ? AND name = ?`, teamID, ref))
}

// FindAsset finds a team's asset by id, else by name.
func (db *DB) FindAsset(ctx context.Context, teamID, ref string) (*app.Asset, error) {
	return findAsset(ctx, db.read, teamID, ref)
}

// FindAssets lists a team's assets by name, optionally of one kind.
func (db *DB) FindAssets(ctx context.Context, f app.AssetFilter) ([]*app.Asset, int, error) {
	where, args := `team_id = ?`, []any{f.TeamID}
	if f.Kind != "" {
		where, args = where+` AND kind = ?`, append(args, f.Kind)
	}
	var total int
	if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM assets WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+scan.AssetCols+` FROM assets WHERE `+where+` ORDER BY name LIMIT ? OFFSET ?`,
		append(args, f.Page.Limit, f.Page.Offset())...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	list, err := scan.List(rows, scan.Asset)
	return list, total, err
}

// ReplaceAsset writes an asset's new content and name, within the quota
// counted without its old bytes, and returns the old file's name.
func (db *DB) ReplaceAsset(ctx context.Context, a *app.Asset) (string, error) {
	var old string
	err := db.tx(ctx, func(tx *Tx) error {
		cur, err := findAsset(ctx, tx, a.TeamID, a.ID)
		if err != nil {
			return err
		}
		old = cur.File
		if err := checkAssetQuota(ctx, tx, a.TeamID, a.ID, a.Size); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE assets SET name = ?, format = ?, content_type = ?, size = ?, sha256 = ?, width = ?, height = ?,
			font = ?, file = ?, updated_at = ? WHERE id = ? AND team_id = ?`,
			a.Name, a.Format, a.ContentType, a.Size, a.SHA256, a.Width, a.Height, scan.FontJSON(a.Font), a.File, ms(a.UpdatedAt), a.ID, a.TeamID)
		if isUnique(err, "name") {
			return app.ErrAssetNameTaken(a.Name)
		}
		return err
	})
	return old, err
}

// RenameAsset renames a team's asset.
func (db *DB) RenameAsset(ctx context.Context, teamID, id, name string, now time.Time) (*app.Asset, error) {
	var a *app.Asset
	err := db.tx(ctx, func(tx *Tx) error {
		if _, err := findAsset(ctx, tx, teamID, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE assets SET name = ?, updated_at = ? WHERE id = ? AND team_id = ?`, name, ms(now), id, teamID)
		if isUnique(err, "name") {
			return app.ErrAssetNameTaken(name)
		} else if err != nil {
			return err
		}
		a, err = findAsset(ctx, tx, teamID, id)
		return err
	})
	return a, err
}

// DeleteAsset removes a team's asset unless check, given the templates
// using it, refuses.
func (db *DB) DeleteAsset(ctx context.Context, teamID, id string, check func(*app.Asset, []app.AssetUse) error) (*app.Asset, error) {
	var a *app.Asset
	err := db.tx(ctx, func(tx *Tx) error {
		var err error
		if a, err = findAsset(ctx, tx, teamID, id); err != nil {
			return err
		}
		uses, err := findAssetUses(ctx, tx, teamID, []string{a.ID, a.Name})
		if err != nil {
			return err
		}
		if err := check(a, app.AssetUsesOf(uses, a.ID, a.Name)); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM assets WHERE id = ? AND team_id = ?`, a.ID, teamID)
		return err
	})
	return a, err
}

// FindAssetUses returns the live templates of the team whose working copy
// or newest published version refers to each of refs.
func (db *DB) FindAssetUses(ctx context.Context, teamID string, refs []string) (map[string][]app.AssetUse, error) {
	return findAssetUses(ctx, db.read, teamID, refs)
}

func findAssetUses(ctx context.Context, q querier, teamID string, refs []string) (map[string][]app.AssetUse, error) {
	out := map[string][]app.AssetUse{}
	for len(refs) > 0 {
		n := min(len(refs), 200)
		chunk := refs[:n]
		refs = refs[n:]
		args := []any{teamID}
		for _, r := range chunk {
			args = append(args, r)
		}
		rows, err := q.query(ctx, `SELECT DISTINCT r.ref, t.id, t.name FROM template_asset_refs r JOIN templates t ON t.id = r.template_id
			WHERE r.team_id = ? AND r.ref IN (?`+strings.Repeat(", ?", n-1)+`) AND t.deleted_at IS NULL
			AND (r.version = 0 OR r.version = t.published_version) ORDER BY t.name`, args...)
		if err != nil {
			return nil, err
		}
		err = scan.AssetUses(rows, out)
		rows.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// AssetUsage is the bytes and number of a team's assets.
func (db *DB) AssetUsage(ctx context.Context, teamID string) (int64, int, error) {
	var size int64
	var n int
	err := db.read.QueryRowContext(ctx, `SELECT COALESCE(SUM(size), 0), COUNT(*) FROM assets WHERE team_id = ?`, teamID).Scan(&size, &n)
	return size, n, err
}

// writeAssetRefs records the asset references of a template's working copy
// (version 0) or of one of its versions, replacing what was recorded.
func writeAssetRefs(ctx context.Context, tx *Tx, teamID, templateID string, version int, schema json.RawMessage) error {
	if version == 0 {
		if _, err := tx.ExecContext(ctx, `DELETE FROM template_asset_refs WHERE template_id = ? AND version = 0`, templateID); err != nil {
			return err
		}
	}
	for _, ref := range app.AssetRefs(schema) {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO template_asset_refs (template_id, version, team_id, ref) VALUES (?, ?, ?, ?)`,
			templateID, version, teamID, ref); err != nil {
			return err
		}
	}
	return nil
}
