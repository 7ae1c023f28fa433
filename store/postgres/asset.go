package postgres

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"folio/app"
	"folio/store/internal/scan"
)

var _ app.AssetStore = (*DB)(nil)

// checkAssetQuota refuses size more bytes of assets (ERR_QUOTA_012) when
// the team's plan keeps no more; except is an asset whose bytes are being
// replaced. It locks the team's row first, so uploads of one team from
// any replica are counted one after the other.
func checkAssetQuota(ctx context.Context, tx pgx.Tx, teamID, except string, size int64) error {
	var name string
	err := tx.QueryRow(ctx, `SELECT plan FROM teams WHERE id = $1 FOR UPDATE`, teamID).Scan(&name)
	if errors.Is(err, pgx.ErrNoRows) {
		return app.ErrNotFound(app.ECodeTeamNotFound, "team")
	} else if err != nil {
		return err
	}
	return app.CheckAssetQuota(name, size, func() (used int64, err error) {
		err = tx.QueryRow(ctx, `SELECT COALESCE(SUM(size), 0)::bigint FROM assets WHERE team_id = $1 AND id != $2`, teamID, except).Scan(&used)
		return used, err
	})
}

// CreateAsset inserts an asset within the team's asset storage quota.
func (db *DB) CreateAsset(ctx context.Context, a *app.Asset) error {
	// Under the metadata generation's lock: a font asset raises it (0013).
	return db.metaTx(ctx, func(tx pgx.Tx) error {
		if err := checkAssetQuota(ctx, tx, a.TeamID, "", a.Size); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO assets (`+scan.AssetCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
			scan.AssetValues(a)...)
		if isUnique(err, "assets_team_name") {
			return app.ErrAssetNameTaken(a.Name)
		}
		return err
	})
}

func findAsset(ctx context.Context, q querier, teamID, ref string) (*app.Asset, error) {
	if strings.HasPrefix(ref, "ast_") {
		a, err := scan.Asset(q.QueryRow(ctx, `SELECT `+scan.AssetCols+` FROM assets WHERE id = $1 AND team_id = $2`, ref, teamID))
		if app.ErrorCode(err) != app.ECodeAssetNotFound {
			return a, err
		}
	}
	return scan.Asset(q.QueryRow(ctx, `SELECT `+scan.AssetCols+` FROM assets WHERE team_id = $1 AND name = $2`, teamID, ref))
}

// FindAsset finds a team's asset by id, else by name.
func (db *DB) FindAsset(ctx context.Context, teamID, ref string) (*app.Asset, error) {
	return findAsset(ctx, db.pool, teamID, ref)
}

// FindAssets lists a team's assets by name, optionally of one kind.
func (db *DB) FindAssets(ctx context.Context, f app.AssetFilter) ([]*app.Asset, int, error) {
	where, args := `team_id = $1`, []any{f.TeamID}
	if f.Kind != "" {
		where, args = where+` AND kind = $2`, append(args, f.Kind)
	}
	var total int
	if err := db.pool.QueryRow(ctx, `SELECT COUNT(*) FROM assets WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	n := len(args)
	rows, err := db.pool.Query(ctx, `SELECT `+scan.AssetCols+` FROM assets WHERE `+where+` ORDER BY name LIMIT $`+strconv.Itoa(n+1)+` OFFSET $`+strconv.Itoa(n+2),
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
	err := db.metaTx(ctx, func(tx pgx.Tx) error {
		cur, err := findAsset(ctx, tx, a.TeamID, a.ID)
		if err != nil {
			return err
		}
		old = cur.File
		if err := checkAssetQuota(ctx, tx, a.TeamID, a.ID, a.Size); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE assets SET name = $1, format = $2, content_type = $3, size = $4, sha256 = $5, width = $6, height = $7,
			font = $8, file = $9, updated_at = $10 WHERE id = $11 AND team_id = $12`,
			a.Name, a.Format, a.ContentType, a.Size, a.SHA256, a.Width, a.Height, scan.FontJSON(a.Font), a.File, ms(a.UpdatedAt), a.ID, a.TeamID)
		if isUnique(err, "assets_team_name") {
			return app.ErrAssetNameTaken(a.Name)
		} else if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 { // deleted by another replica meanwhile
			return app.ErrNotFound(app.ECodeAssetNotFound, "asset")
		}
		return nil
	})
	return old, err
}

// RenameAsset renames a team's asset.
func (db *DB) RenameAsset(ctx context.Context, teamID, id, name string, now time.Time) (*app.Asset, error) {
	var a *app.Asset
	err := db.metaTx(ctx, func(tx pgx.Tx) error {
		if _, err := findAsset(ctx, tx, teamID, id); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE assets SET name = $1, updated_at = $2 WHERE id = $3 AND team_id = $4`, name, ms(now), id, teamID)
		if isUnique(err, "assets_team_name") {
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
// using it, refuses. It runs under the metadata generation's lock, which
// every template write takes first: no template can start using the asset
// between the check and the delete, as SQLite's single writer ensured.
func (db *DB) DeleteAsset(ctx context.Context, teamID, id string, check func(*app.Asset, []app.AssetUse) error) (*app.Asset, error) {
	var a *app.Asset
	err := db.metaTx(ctx, func(tx pgx.Tx) error {
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
		_, err = tx.Exec(ctx, `DELETE FROM assets WHERE id = $1 AND team_id = $2`, a.ID, teamID)
		return err
	})
	return a, err
}

// FindAssetUses returns the live templates of the team whose working copy
// or newest published version refers to each of refs.
func (db *DB) FindAssetUses(ctx context.Context, teamID string, refs []string) (map[string][]app.AssetUse, error) {
	return findAssetUses(ctx, db.pool, teamID, refs)
}

func findAssetUses(ctx context.Context, q querier, teamID string, refs []string) (map[string][]app.AssetUse, error) {
	out := map[string][]app.AssetUse{}
	if len(refs) == 0 {
		return out, nil
	}
	rows, err := q.Query(ctx, `SELECT DISTINCT r.ref, t.id, t.name FROM template_asset_refs r JOIN templates t ON t.id = r.template_id
		WHERE r.team_id = $1 AND r.ref = ANY($2) AND t.deleted_at IS NULL
		AND (r.version = 0 OR r.version = t.published_version) ORDER BY t.name`, teamID, refs)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return out, scan.AssetUses(rows, out)
}

// AssetUsage is the bytes and number of a team's assets.
func (db *DB) AssetUsage(ctx context.Context, teamID string) (int64, int, error) {
	var size int64
	var n int
	err := db.pool.QueryRow(ctx, `SELECT COALESCE(SUM(size), 0)::bigint, COUNT(*) FROM assets WHERE team_id = $1`, teamID).Scan(&size, &n)
	return size, n, err
}
