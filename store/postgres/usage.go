package postgres

import (
	"context"
	"database/sql"
	"errors"

	"github.com/jackc/pgx/v5"

	"folio/app"
	"folio/store/internal/scan"
)

var _ app.UsageStore = (*DB)(nil)

// FindUsage returns a team's counters for a month (zero when none).
func (db *DB) FindUsage(ctx context.Context, teamID, month string) (app.UsageCounts, error) {
	return scan.Usage(db.pool.QueryRow(ctx, `SELECT documents, credits_used FROM usage WHERE team_id = $1 AND month = $2`, teamID, month))
}

// chargeJobs pays for n jobs inside the transaction that inserts them:
// from the month's quota first, then from credits. It returns how each is
// paid ("quota" or "credits"; "" for all when c is nil) and the month.
//
// SQLite's single writer kept two charges apart; here the team's row is
// locked first, so charges of one team from any replica are counted one
// after the other and cannot overspend. A charge without a quota is never
// refused: its one upsert needs no lock.
func chargeJobs(ctx context.Context, tx pgx.Tx, c *app.Charge, n int) (hows []string, month string, err error) {
	hows = make([]string, n)
	if c == nil || n == 0 {
		return hows, "", nil
	}
	var fromQuota, fromCredits int64
	if c.Quota == app.NoQuota {
		fromQuota = int64(n)
	} else {
		var used, credits int64
		if err := tx.QueryRow(ctx, `SELECT credits FROM teams WHERE id = $1 FOR UPDATE`, c.TeamID).Scan(&credits); err != nil {
			return nil, "", err
		}
		err := tx.QueryRow(ctx, `SELECT documents FROM usage WHERE team_id = $1 AND month = $2`, c.TeamID, c.Month).Scan(&used)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, "", err
		}
		if fromQuota, fromCredits, err = c.Split(used, credits, int64(n)); err != nil {
			return nil, "", err
		}
		if fromCredits > 0 {
			if _, err := tx.Exec(ctx, `UPDATE teams SET credits = credits - $1 WHERE id = $2`, fromCredits, c.TeamID); err != nil {
				return nil, "", err
			}
		}
	}
	if _, err := tx.Exec(ctx, `INSERT INTO usage AS u (team_id, month, documents, credits_used) VALUES ($1, $2, $3, $4)
		ON CONFLICT (team_id, month) DO UPDATE SET documents = u.documents + excluded.documents, credits_used = u.credits_used + excluded.credits_used`,
		c.TeamID, c.Month, fromQuota, fromCredits); err != nil {
		return nil, "", err
	}
	for i := range hows {
		hows[i] = "quota"
		if int64(i) >= fromQuota {
			hows[i] = "credits"
		}
	}
	return hows, c.Month, nil
}

// refundJob gives a job's charge back, once: the job's row (locked by the
// caller's UPDATE or SELECT ... FOR UPDATE) forgets how it was paid in the
// same statement that reads it. A credit goes back to the team before the
// usage row is touched, the order charges take.
func refundJob(ctx context.Context, tx pgx.Tx, jobID, teamID string) error {
	var how, month string
	err := tx.QueryRow(ctx, `UPDATE jobs SET charged = '' FROM (SELECT charged, charge_month FROM jobs WHERE id = $1) AS old
		WHERE jobs.id = $1 AND old.charged != '' RETURNING old.charged, old.charge_month`, jobID).Scan(&how, &month)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	} else if err != nil {
		return err
	}
	switch how {
	case "quota":
		_, err = tx.Exec(ctx, `UPDATE usage SET documents = documents - 1 WHERE team_id = $1 AND month = $2`, teamID, month)
	case "credits":
		if _, err = tx.Exec(ctx, `UPDATE teams SET credits = credits + 1 WHERE id = $1`, teamID); err == nil {
			_, err = tx.Exec(ctx, `UPDATE usage SET credits_used = credits_used - 1 WHERE team_id = $1 AND month = $2`, teamID, month)
		}
	}
	return err
}
