package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"folio/app"
	"folio/store/internal/scan"
)

var _ app.KeyStore = (*DB)(nil)

// CreateAPIKey inserts a key (its hash, never its text); a team at its
// plan's key count (active or not) is ERR_PLAN_002.
func (db *DB) CreateAPIKey(ctx context.Context, k *app.APIKey) error {
	perms, _ := json.Marshal(k.Permissions)
	return db.tx(ctx, func(tx *Tx) error {
		if err := checkPlanCount(ctx, tx, k.TeamID, app.ResourceAPIKeys, `SELECT COUNT(*) FROM api_keys WHERE team_id = ?`, k.TeamID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO api_keys (`+scan.KeyCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			k.ID, k.TeamID, k.Name, k.KeyType, k.KeyPrefix, k.Hash, string(perms), k.IsActive, k.CreatedBy,
			msPtr(k.LastUsedAt), k.TotalRequests, k.RequestsToday, k.RequestsDay, ms(k.CreatedAt), ms(k.UpdatedAt))
		return err
	})
}

// FindAPIKeyByID returns one of a team's keys.
func (db *DB) FindAPIKeyByID(ctx context.Context, teamID, id string) (*app.APIKey, error) {
	_ = db.flush(ctx) // on failure the counts stay pending; the key is read anyway
	return scan.Key(db.read.QueryRowContext(ctx, `SELECT `+scan.KeyCols+` FROM api_keys WHERE team_id = ? AND id = ?`, teamID, id))
}

// FindAPIKeyByHash finds a key of a live team by the hash of its text.
// (`team_id IN (SELECT id FROM teams WHERE ...)` read every team.)
func (db *DB) FindAPIKeyByHash(ctx context.Context, hash string) (*app.APIKey, error) {
	return scan.Key(db.read.QueryRowContext(ctx, `SELECT `+scan.KeyCols+` FROM api_keys
		WHERE hash = ? AND EXISTS (SELECT 1 FROM teams WHERE teams.id = api_keys.team_id AND teams.deleted_at IS NULL)`, hash))
}

var keySort = map[string]string{"createdAt": "created_at", "updatedAt": "updated_at", "name": "name", "lastUsedAt": "last_used_at"}

// FindAPIKeys lists a team's keys with sorting, filter and pagination.
func (db *DB) FindAPIKeys(ctx context.Context, f app.KeyFilter) ([]*app.APIKey, int, error) {
	_ = db.flush(ctx) // on failure the counts stay pending; the keys are read anyway
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
	rows, err := db.read.QueryContext(ctx, `SELECT `+scan.KeyCols+` FROM api_keys WHERE `+cond+
		` ORDER BY `+col+` `+order+`, rowid `+order+` LIMIT ? OFFSET ?`, append(args, f.Page.Limit, f.Page.Offset())...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	keys, err := scan.List(rows, scan.Key)
	return keys, total, err
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
		k, err = scan.Key(tx.QueryRowContext(ctx, `UPDATE api_keys SET `+strings.Join(sets, ", ")+
			` WHERE team_id = ? AND id = ? RETURNING `+scan.KeyCols, append(args, teamID, id)...))
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

// TouchAPIKey counts one request and sets lastUsedAt. The count is kept in
// memory and written with a write transaction at most touchFlush later
// (touchesDue) (docs/decisions.md, API keys): a transaction of its own
// on every authenticated request was one of the API path's largest costs.
// Reads of keys write the pending counts first, so they are never stale.
func (db *DB) TouchAPIKey(_ context.Context, id string, now time.Time) error {
	db.touches.add(id, now)
	return nil
}

// touchFlush bounds how long a key's counts wait for a write transaction
// (a variable for tests).
var touchFlush = time.Second

// keyTouches are the request counts not yet written, by key and UTC day.
type keyTouches struct {
	mu      sync.Mutex
	pending map[keyDay]*touchCount
}

type keyDay struct{ id, day string }

type touchCount struct {
	n    int64
	last int64 // unix ms
}

func (t *keyTouches) add(id string, now time.Time) {
	k := keyDay{id, now.UTC().Format(time.DateOnly)}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pending == nil {
		t.pending = map[keyDay]*touchCount{}
	}
	c := t.pending[k]
	if c == nil {
		c = &touchCount{}
		t.pending[k] = c
	}
	c.n++
	c.last = max(c.last, ms(now))
}

// take removes and returns the pending counts.
func (t *keyTouches) take() map[keyDay]*touchCount {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.pending
	t.pending = nil
	return m
}

// restore puts back counts whose transaction failed.
func (t *keyTouches) restore(m map[keyDay]*touchCount) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pending == nil {
		t.pending = map[keyDay]*touchCount{}
	}
	for k, c := range m {
		if p := t.pending[k]; p != nil {
			p.n += c.n
			p.last = max(p.last, c.last)
		} else {
			t.pending[k] = c
		}
	}
}

func (t *keyTouches) any() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.pending) > 0
}

// writeTouches writes counts in tx, older days first so requestsToday ends
// on the newest day.
func writeTouches(ctx context.Context, tx *Tx, m map[keyDay]*touchCount) error {
	keys := make([]keyDay, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b keyDay) int { return strings.Compare(a.day, b.day) })
	for _, k := range keys {
		c := m[k]
		// A day older than the stored one (a request stamped before
		// midnight, written after the next day's) counts in the total only.
		if _, err := tx.ExecContext(ctx, `UPDATE api_keys SET last_used_at = MAX(COALESCE(last_used_at, 0), ?1), total_requests = total_requests + ?2,
			requests_today = CASE WHEN requests_day = ?3 THEN requests_today + ?2 WHEN requests_day > ?3 THEN requests_today ELSE ?2 END,
			requests_day = MAX(requests_day, ?3) WHERE id = ?4`,
			c.last, c.n, k.day, k.id); err != nil {
			return err
		}
	}
	return nil
}

// CountKeyDocuments returns how many documents a key generated: FinishJob
// counts each completed job of the key (counting its jobs grew with its
// history, and lost those the janitor purged).
func (db *DB) CountKeyDocuments(ctx context.Context, teamID, id string) (int64, error) {
	if err := db.flush(ctx); err != nil {
		return 0, err
	}
	var n int64
	err := db.read.QueryRowContext(ctx, `SELECT documents FROM api_keys WHERE id = ? AND team_id = ?`, id, teamID).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, app.ErrNotFound(app.ECodeKeyNotFound, "API key")
	}
	return n, err
}
