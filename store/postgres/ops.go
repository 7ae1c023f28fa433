package postgres

import (
	"context"
	"time"

	"folio/app"
	"folio/store/internal/scan"
)

// QueueTotals counts unfinished jobs and webhook deliveries of every team
// for /metrics' queue gauges, as the embedded store does (store/ops.go).
func (db *DB) QueueTotals(ctx context.Context, now time.Time) (*app.QueueTotals, error) {
	return scan.QueueTotals(db.pool.QueryRow(ctx, scan.QueueTotalsQuery), now)
}
