package postgres

import (
	"context"
	"database/sql"
	"time"

	"folio/app"
	"folio/store/internal/scan"
)

// QueueTotals counts unfinished jobs and webhook deliveries of every team
// for /metrics' queue gauges, as the embedded store does (store/ops.go).
func (db *DB) QueueTotals(ctx context.Context, now time.Time) (*app.QueueTotals, error) {
	var t app.QueueTotals
	var oldest sql.NullInt64
	err := db.pool.QueryRow(ctx, `SELECT
		(SELECT COUNT(*) FROM jobs WHERE status = 'pending'),
		(SELECT COUNT(*) FROM jobs WHERE status = 'processing'),
		(SELECT MIN(created_at) FROM jobs WHERE status = 'pending'),
		(SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending')`).Scan(&t.Pending, &t.Processing, &oldest, &t.PendingDeliveries)
	if err != nil {
		return nil, err
	}
	if oldest.Valid {
		t.OldestPendingAge = max(0, now.Sub(scan.FromMS(oldest.Int64)))
	}
	return &t, nil
}
