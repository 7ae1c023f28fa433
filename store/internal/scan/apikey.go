package scan

import (
	"database/sql"
	"encoding/json"
	"errors"

	"folio/app"
)

// KeyCols are the columns of an API key, as Key reads them.
const KeyCols = `id, team_id, name, key_type, key_prefix, hash, permissions, is_active, created_by, last_used_at, total_requests, requests_today, requests_day, created_at, updated_at`

// Key reads one row of KeyCols.
func Key(row Row) (*app.APIKey, error) {
	var k app.APIKey
	var perms string
	var last sql.NullInt64
	var created, updated int64
	err := row.Scan(&k.ID, &k.TeamID, &k.Name, &k.KeyType, &k.KeyPrefix, &k.Hash, &perms, &k.IsActive, &k.CreatedBy, &last,
		&k.TotalRequests, &k.RequestsToday, &k.RequestsDay, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound(app.ECodeKeyNotFound, "API key")
	} else if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(perms), &k.Permissions); err != nil {
		return nil, err
	}
	k.LastUsedAt = FromNullMS(last)
	k.CreatedAt, k.UpdatedAt = FromMS(created), FromMS(updated)
	return &k, nil
}
