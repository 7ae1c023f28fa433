package postgres

import (
	"context"
	"time"

	"folio/app"
)

var _ app.RateWindows = (*DB)(nil)

// hitRate counts one call in one statement: p is the previous window's
// count, read in the statement's snapshot; the upsert admits the call on
// it and the current window's count as it is when the row is locked (a
// second replica's call for the same key waits for the first one's,
// then sees its count), and adds the call when admitted or when refused
// calls count ($7). The weighted count is computed in the order
// app.MemoryLimiter computes it (prev × overlap + curr, then + 1), in
// float8 as Go's float64. The float8 parameters are passed as such.
const hitRate = `WITH p AS (SELECT calls FROM rate_windows WHERE limiter = $1 AND key = $2 AND start = $3::bigint - $4::bigint)
INSERT INTO rate_windows AS w (limiter, key, start, calls, admitted, expires_at)
SELECT $1, $2, $3, CASE WHEN o.ok OR $7::boolean THEN 1 ELSE 0 END, o.ok, $3::bigint + 2 * $4::bigint
FROM (SELECT coalesce((SELECT calls FROM p), 0) * $5::float8 + 1 <= $6::integer AS ok) o
ON CONFLICT (limiter, key, start) DO UPDATE SET
	calls = w.calls + CASE WHEN $7::boolean OR coalesce((SELECT calls FROM p), 0) * $5::float8 + w.calls + 1 <= $6::integer THEN 1 ELSE 0 END,
	admitted = coalesce((SELECT calls FROM p), 0) * $5::float8 + w.calls + 1 <= $6::integer
RETURNING calls, admitted, coalesce((SELECT calls FROM p), 0)`

// HitRate counts one call of a limiter in the windows every replica
// shares: one round trip per call.
func (db *DB) HitRate(ctx context.Context, c app.RateCall) (app.RateHit, error) {
	start := c.Start()
	h := app.RateHit{Start: start}
	err := db.pool.QueryRow(ctx, hitRate, c.Limiter, c.Key, ms(start), c.Window.Milliseconds(), c.Overlap(), c.Limit, c.CountRefused).
		Scan(&h.Curr, &h.Allowed, &h.Prev)
	return h, err
}

// rateSweepRows bounds one delete of expired windows, so that a sweep
// after a flood of keys is a series of short statements.
const rateSweepRows = 5000

// SweepRateWindows deletes the windows that stopped counting before now
// and returns how many.
func (db *DB) SweepRateWindows(ctx context.Context, now time.Time) (int, error) {
	n := 0
	for {
		tag, err := db.pool.Exec(ctx, `DELETE FROM rate_windows WHERE ctid = ANY(ARRAY(
			SELECT ctid FROM rate_windows WHERE expires_at < $1 LIMIT $2))`, ms(now), rateSweepRows)
		if err != nil {
			return n, err
		}
		n += int(tag.RowsAffected())
		if tag.RowsAffected() < rateSweepRows {
			return n, nil
		}
	}
}
