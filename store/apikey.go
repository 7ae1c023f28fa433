package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"folio/app"
)

var _ app.KeyStore = (*DB)(nil)

const keyCols = `id, team_id, name, key_type, key_prefix, hash, permissions, is_active, created_by, last_used_at, total_requests, requests_today, requests_day, created_at, updated_at`

func scanKey(row scanner) (*app.APIKey, error) {
	var k app.APIKey
	var perms string
	var active int
	var last sql.NullInt64
	var created, updated int64
	err := row.Scan(&k.ID, &k.TeamID, &k.Name, &k.KeyType, &k.KeyPrefix, &k.Hash, &perms, &active, &k.CreatedBy, &last,
		&k.TotalRequests, &k.RequestsToday, &k.RequestsDay, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound(app.ECodeKeyNotFound, "API key")
	} else if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(perms), &k.Permissions); err != nil {
		return nil, err
	}
	k.IsActive = active == 1
	k.LastUsedAt = fromNullMS(last)
	k.CreatedAt, k.UpdatedAt = fromMS(created), fromMS(updated)
	return &k, nil
}

// CreateAPIKey inserts a key (its hash, never its text); a team at its
// plan's key count (active or not) is ERR_PLAN_002.
func (db *DB) CreateAPIKey(ctx context.Context, k *app.APIKey) error {
	perms, _ := json.Marshal(k.Permissions)
	return db.tx(ctx, func(tx *Tx) error {
		if err := checkPlanCount(ctx, tx, k.TeamID, app.ResourceAPIKeys, `SELECT COUNT(*) FROM api_keys WHERE team_id = ?`, k.TeamID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO api_keys (`+keyCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			k.ID, k.TeamID, k.Name, k.KeyType, k.KeyPrefix, k.Hash, string(perms), boolInt(k.IsActive), k.CreatedBy,
			msPtr(k.LastUsedAt), k.TotalRequests, k.RequestsToday, k.RequestsDay, ms(k.CreatedAt), ms(k.UpdatedAt))
		return err
	})
}

// FindAPIKeyByID returns one of a team's keys.
func (db *DB) FindAPIKeyByID(ctx context.Context, teamID, id string) (*app.APIKey, error) {
	return scanKey(db.read.QueryRowContext(ctx, `SELECT `+keyCols+` FROM api_keys WHERE team_id = ? AND id = ?`, teamID, id))
}

// FindAPIKeyByHash finds a key of a live team by the hash of its text.
func (db *DB) FindAPIKeyByHash(ctx context.Context, hash string) (*app.APIKey, error) {
	return scanKey(db.read.QueryRowContext(ctx, `SELECT `+keyCols+` FROM api_keys
		WHERE hash = ? AND team_id IN (SELECT id FROM teams WHERE deleted_at IS NULL)`, hash))
}

var keySort = map[string]string{"createdAt": "created_at", "updatedAt": "updated_at", "name": "name", "lastUsedAt": "last_used_at"}

// FindAPIKeys lists a team's keys with sorting, filter and pagination.
func (db *DB) FindAPIKeys(ctx context.Context, f app.KeyFilter) ([]*app.APIKey, int, error) {
	where, args := []string{"team_id = ?"}, []any{f.TeamID}
	if f.IsActive != nil {
		where, args = append(where, "is_active = ?"), append(args, boolInt(*f.IsActive))
	}
	cond := strings.Join(where, " AND ")
	var total int
	if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM api_keys WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	order := "DESC"
	if f.SortOrder == "asc" {
		order = "ASC"
	}
	col := keySort[f.SortBy]
	if col == "" {
		col = "created_at"
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+keyCols+` FROM api_keys WHERE `+cond+
		` ORDER BY `+col+` `+order+`, rowid `+order+` LIMIT ? OFFSET ?`, append(args, f.Page.Limit, f.Page.Offset())...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	keys := []*app.APIKey{}
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, 0, err
		}
		keys = append(keys, k)
	}
	return keys, total, rows.Err()
}

// UpdateAPIKey applies the given fields and returns the key.
func (db *DB) UpdateAPIKey(ctx context.Context, teamID, id string, upd app.KeyUpdate, now time.Time) (*app.APIKey, error) {
	var k *app.APIKey
	err := db.tx(ctx, func(tx *Tx) error {
		sets, args := []string{"updated_at = ?"}, []any{ms(now)}
		if upd.Name != nil {
			sets, args = append(sets, "name = ?"), append(args, *upd.Name)
		}
		if upd.Permissions != nil {
			perms, _ := json.Marshal(upd.Permissions)
			sets, args = append(sets, "permissions = ?"), append(args, string(perms))
		}
		if upd.IsActive != nil {
			sets, args = append(sets, "is_active = ?"), append(args, boolInt(*upd.IsActive))
		}
		var err error
		k, err = scanKey(tx.QueryRowContext(ctx, `UPDATE api_keys SET `+strings.Join(sets, ", ")+
			` WHERE team_id = ? AND id = ? RETURNING `+keyCols, append(args, teamID, id)...))
		return err
	})
	return k, err
}

// DeleteAPIKey removes a key.
func (db *DB) DeleteAPIKey(ctx context.Context, teamID, id string) error {
	res, err := db.write.ExecContext(ctx, `DELETE FROM api_keys WHERE team_id = ? AND id = ?`, teamID, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return app.ErrNotFound(app.ECodeKeyNotFound, "API key")
	}
	return nil
}

// TouchAPIKey counts one request and sets lastUsedAt.
func (db *DB) TouchAPIKey(ctx context.Context, id string, now time.Time) error {
	day := now.UTC().Format(time.DateOnly)
	_, err := db.write.ExecContext(ctx, `UPDATE api_keys SET last_used_at = ?, total_requests = total_requests + 1,
		requests_today = CASE WHEN requests_day = ? THEN requests_today + 1 ELSE 1 END, requests_day = ? WHERE id = ?`,
		ms(now), day, day, id)
	return err
}

// CountKeyDocuments counts completed documents generated with a key.
func (db *DB) CountKeyDocuments(ctx context.Context, teamID, id string) (int64, error) {
	var n int64
	err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM jobs WHERE api_key_id = ? AND team_id = ? AND status = 'completed'`, id, teamID).Scan(&n)
	return n, err
}
