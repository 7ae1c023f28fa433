package scan

import (
	"database/sql"
	"time"

	"folio/app"
)

// QueueTotalsQuery counts unfinished jobs and webhook deliveries of every
// team for /metrics' queue gauges: the same statement in both engines
// (no arguments), read by QueueTotals. Partial indexes on pending and
// processing rows keep it cheap whatever the job history.
const QueueTotalsQuery = `SELECT
	(SELECT COUNT(*) FROM jobs WHERE status = 'pending'),
	(SELECT COUNT(*) FROM jobs WHERE status = 'processing'),
	(SELECT MIN(created_at) FROM jobs WHERE status = 'pending'),
	(SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending')`

// QueueTotals reads the row of QueueTotalsQuery as it reads at now: the
// oldest pending job's age is zero when there is none, and never negative.
func QueueTotals(row Row, now time.Time) (*app.QueueTotals, error) {
	var t app.QueueTotals
	var oldest sql.NullInt64
	if err := row.Scan(&t.Pending, &t.Processing, &oldest, &t.PendingDeliveries); err != nil {
		return nil, err
	}
	if oldest.Valid {
		t.OldestPendingAge = max(0, now.Sub(FromMS(oldest.Int64)))
	}
	return &t, nil
}
