package postgres

import (
	"context"
	"hash/fnv"
	"time"

	"folio/app"
)

var _ app.TaskLock = (*DB)(nil)

// taskLock is the advisory lock key of a periodic task: a hash of its
// name, apart from the migrations' fixed key.
func taskLock(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte("folio task " + name))
	return int64(h.Sum64())
}

// RunTask runs fn unless another replica is running the task called name
// (a session advisory lock, taken without waiting, on a connection held
// for the run: a replica that dies frees it with its connection) or began
// it less than gap before now (task_runs). fn does its own work in its
// own short transactions on other connections.
func (db *DB) RunTask(ctx context.Context, name string, gap time.Duration, now time.Time, fn func(context.Context) error) (bool, error) {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Release()
	key := taskLock(name)
	var locked bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&locked); err != nil || !locked {
		return false, err
	}
	defer func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, key); err != nil {
			conn.Conn().Close(context.Background()) // the lock goes with the connection
		}
	}()
	tag, err := conn.Exec(ctx, `INSERT INTO task_runs (name, started_at) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET started_at = excluded.started_at WHERE task_runs.started_at <= $3`,
		name, ms(now), ms(now.Add(-gap)))
	if err != nil || tag.RowsAffected() == 0 {
		return false, err
	}
	return true, fn(ctx)
}
