package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"folio/app"
)

// purgeStep is how many rows one retention transaction deletes at most:
// each step is short, and commits, so the requests and workers of every
// replica write between two steps.
const purgeStep = 500

// step runs fn, which deletes at most purgeStep rows of table and returns
// how many, in a transaction of its own, and counts it in st.
func (db *DB) step(ctx context.Context, st *app.SweepStats, table string, fn func(tx pgx.Tx) (int, error)) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	t0 := time.Now()
	var n int
	err := db.tx(ctx, func(tx pgx.Tx) error {
		var err error
		n, err = fn(tx)
		return err
	})
	if err != nil {
		return 0, err
	}
	st.Count(table, n, time.Since(t0))
	return n, nil
}

// PurgeJobs deletes ended job records past their retention, and ended
// batches whose jobs are all gone, in steps. A step locks the rows it
// picks with SKIP LOCKED: a row another transaction holds (a user's
// delete) is left to it or to the next pass, so a step never waits on a
// request. The delete triggers keep each batch's version and states, as
// for any other delete.
func (db *DB) PurgeJobs(ctx context.Context, completedBefore, failedBefore time.Time) (app.SweepStats, error) {
	start := time.Now()
	st := app.SweepStats{Deleted: map[string]int{}}
	done := func(err error) (app.SweepStats, error) {
		st.Duration = time.Since(start)
		return st, err
	}
	for _, p := range []struct {
		status string
		before time.Time
	}{{app.StatusCompleted, completedBefore}, {app.StatusFailed, failedBefore}} {
		for {
			n, err := db.step(ctx, &st, "jobs", func(tx pgx.Tx) (int, error) {
				tag, err := tx.Exec(ctx, `DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE status = $1 AND completed_at < $2
					ORDER BY completed_at LIMIT $3 FOR UPDATE SKIP LOCKED)`, p.status, ms(p.before), purgeStep)
				return int(tag.RowsAffected()), err
			})
			if err != nil {
				return done(err)
			}
			if n < purgeStep {
				break
			}
		}
	}
	return done(db.purgeBatches(ctx, &st, completedBefore))
}

// purgeBatches deletes the batches that ended before a time and have no
// job left, walking them in the order they ended a window at a time (the
// window's batches that still have jobs, kept longer when failed, are
// passed over, not read again by every step).
func (db *DB) purgeBatches(ctx context.Context, st *app.SweepStats, before time.Time) error {
	var at, seq int64 = -1, 0
	for {
		rows, err := db.pool.Query(ctx, `SELECT seq, id, completed_at FROM batches WHERE status != 'processing' AND completed_at < $1
			AND (completed_at, seq) > ($2, $3) ORDER BY completed_at, seq LIMIT $4`, ms(before), at, seq, purgeStep)
		if err != nil {
			return err
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&seq, &id, &at); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		if _, err := db.step(ctx, st, "batches", func(tx pgx.Tx) (int, error) {
			tag, err := tx.Exec(ctx, `DELETE FROM batches b WHERE id = ANY($1) AND status != 'processing'
				AND NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.batch_id = b.id AND jobs.batch_id != '')`, ids)
			return int(tag.RowsAffected()), err
		}); err != nil {
			return err
		}
	}
}
