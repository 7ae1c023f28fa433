package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"folio/app"
	"folio/store/internal/scan"
)

var _ app.KeyStore = (*DB)(nil)

// CreateAPIKey inserts a key (its hash, never its text); a team at its
// plan's key count (active or not) is ERR_PLAN_002.
func (db *DB) CreateAPIKey(ctx context.Context, k *app.APIKey) error {
	perms, _ := json.Marshal(k.Permissions)
	return db.metaTx(ctx, func(tx pgx.Tx) error {
		if err := checkPlanCount(ctx, tx, k.TeamID, app.ResourceAPIKeys, `SELECT COUNT(*) FROM api_keys WHERE team_id = $1`, k.TeamID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO api_keys (`+scan.KeyCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
			k.ID, k.TeamID, k.Name, k.KeyType, k.KeyPrefix, k.Hash, string(perms), k.IsActive, k.CreatedBy,
			msPtr(k.LastUsedAt), k.TotalRequests, k.RequestsToday, k.RequestsDay, ms(k.CreatedAt), ms(k.UpdatedAt))
		return err
	})
}

// FindAPIKeyByID returns one of a team's keys.
func (db *DB) FindAPIKeyByID(ctx context.Context, teamID, id string) (*app.APIKey, error) {
	return scan.Key(db.pool.QueryRow(ctx, `SELECT `+scan.KeyCols+` FROM api_keys WHERE team_id = $1 AND id = $2`, teamID, id))
}

// FindAPIKeyByHash finds a key of a live team by the hash of its text.
func (db *DB) FindAPIKeyByHash(ctx context.Context, hash string) (*app.APIKey, error) {
	return scan.Key(db.pool.QueryRow(ctx, `SELECT `+scan.KeyCols+` FROM api_keys
		WHERE hash = $1 AND EXISTS (SELECT 1 FROM teams WHERE teams.id = api_keys.team_id AND teams.deleted_at IS NULL)`, hash))
}

var keySort = map[string]string{"createdAt": "created_at", "updatedAt": "updated_at", "name": "name", "lastUsedAt": "last_used_at"}

// FindAPIKeys lists a team's keys with sorting, filter and pagination.
// NULLs (keys never used) sort first ascending and last descending, as
// SQLite sorts them.
func (db *DB) FindAPIKeys(ctx context.Context, f app.KeyFilter) ([]*app.APIKey, int, error) {
	where, args := []string{"team_id = $1"}, []any{f.TeamID}
	if f.IsActive != nil {
		where, args = append(where, "is_active = $2"), append(args, *f.IsActive)
	}
	cond := strings.Join(where, " AND ")
	var total int
	if err := db.pool.QueryRow(ctx, `SELECT COUNT(*) FROM api_keys WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	order := "DESC NULLS LAST"
	if f.SortOrder == "asc" {
		order = "ASC NULLS FIRST"
	}
	col := keySort[f.SortBy]
	if col == "" {
		col = "created_at"
	}
	n := len(args)
	rows, err := db.pool.Query(ctx, `SELECT `+scan.KeyCols+` FROM api_keys WHERE `+cond+
		` ORDER BY `+col+` `+order+`, seq `+order+fmt.Sprintf(` LIMIT $%d OFFSET $%d`, n+1, n+2), append(args, f.Page.Limit, f.Page.Offset())...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	keys, err := scan.List(rows, scan.Key)
	return keys, total, err
}

// UpdateAPIKey applies the given fields and returns the key.
func (db *DB) UpdateAPIKey(ctx context.Context, teamID, id string, upd app.KeyUpdate, now time.Time) (*app.APIKey, error) {
	sets, args := []string{"updated_at = $1"}, []any{ms(now)}
	set := func(col string, v any) {
		args = append(args, v)
		sets = append(sets, fmt.Sprintf("%s = $%d", col, len(args)))
	}
	if upd.Name != nil {
		set("name", *upd.Name)
	}
	if upd.Permissions != nil {
		perms, _ := json.Marshal(upd.Permissions)
		set("permissions", string(perms))
	}
	if upd.IsActive != nil {
		set("is_active", *upd.IsActive)
	}
	n := len(args)
	var k *app.APIKey
	err := db.metaTx(ctx, func(tx pgx.Tx) error {
		var err error
		k, err = scan.Key(tx.QueryRow(ctx, `UPDATE api_keys SET `+strings.Join(sets, ", ")+
			fmt.Sprintf(` WHERE team_id = $%d AND id = $%d RETURNING `, n+1, n+2)+scan.KeyCols, append(args, teamID, id)...))
		return err
	})
	return k, err
}

// DeleteAPIKey removes a key.
func (db *DB) DeleteAPIKey(ctx context.Context, teamID, id string) error {
	n, err := db.metaExec(ctx, `DELETE FROM api_keys WHERE team_id = $1 AND id = $2`, teamID, id)
	if err != nil {
		return err
	}
	if n == 0 {
		return app.ErrNotFound(app.ECodeKeyNotFound, "API key")
	}
	return nil
}

// TouchAPIKey counts one request and sets lastUsedAt, in a statement of
// its own. (The SQLite store keeps counts in memory for its next write
// transaction; with several replicas each would hold its own, so here
// every request writes. Batching per replica is a possible later saving.)
// A request stamped on a day older than the stored one (written after
// the next day's) counts in the total only.
func (db *DB) TouchAPIKey(ctx context.Context, id string, now time.Time) error {
	day := now.UTC().Format(time.DateOnly)
	_, err := db.pool.Exec(ctx, `UPDATE api_keys SET last_used_at = GREATEST(COALESCE(last_used_at, 0), $1), total_requests = total_requests + 1,
		requests_today = CASE WHEN requests_day = $2 THEN requests_today + 1 WHEN requests_day > $2 THEN requests_today ELSE 1 END,
		requests_day = GREATEST(requests_day, $2) WHERE id = $3`, ms(now), day, id)
	return err
}

// CountKeyDocuments returns how many documents a key generated (FinishJob
// counts each completed job of the key).
func (db *DB) CountKeyDocuments(ctx context.Context, teamID, id string) (int64, error) {
	var n int64
	err := db.pool.QueryRow(ctx, `SELECT documents FROM api_keys WHERE id = $1 AND team_id = $2`, id, teamID).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, app.ErrNotFound(app.ECodeKeyNotFound, "API key")
	}
	return n, err
}
