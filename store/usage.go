package store

import (
	"context"
	"database/sql"
	"errors"

	"folio/app"
	"folio/store/internal/scan"
)

var _ app.UsageStore = (*DB)(nil)

// FindUsage returns a team's counters for a month (zero when none).
func (db *DB) FindUsage(ctx context.Context, teamID, month string) (app.UsageCounts, error) {
	return scan.Usage(db.read.QueryRowContext(ctx, `SELECT documents, credits_used FROM usage WHERE team_id = ? AND month = ?`, teamID, month))
}

// chargeJobs pays for jobs inside the transaction that inserts them: from
// the month's quota first, then from credits. Two concurrent requests are
// serialized by SQLite's single writer, so they cannot overspend.
func chargeJobs(ctx context.Context, tx *Tx, c *app.Charge, jobs []*app.Job) error {
	if c == nil || len(jobs) == 0 {
		return nil
	}
	var used, credits int64
	err := tx.QueryRowContext(ctx, `SELECT documents FROM usage WHERE team_id = ? AND month = ?`, c.TeamID, c.Month).Scan(&used)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if err := tx.QueryRowContext(ctx, `SELECT credits FROM teams WHERE id = ?`, c.TeamID).Scan(&credits); err != nil {
		return err
	}
	n := int64(len(jobs))
	fromQuota, fromCredits, err := c.Split(used, credits, n)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO usage (team_id, month, documents, credits_used) VALUES (?, ?, ?, ?)
		ON CONFLICT (team_id, month) DO UPDATE SET documents = documents + excluded.documents, credits_used = credits_used + excluded.credits_used`,
		c.TeamID, c.Month, fromQuota, fromCredits); err != nil {
		return err
	}
	tx.quota.set(c.TeamID, c.Month, used+fromQuota)
	if fromCredits > 0 {
		if _, err := tx.ExecContext(ctx, `UPDATE teams SET credits = credits - ? WHERE id = ?`, fromCredits, c.TeamID); err != nil {
			return err
		}
	}
	for i, j := range jobs {
		how := "quota"
		if int64(i) >= fromQuota {
			how = "credits"
		}
		if _, err := tx.ExecContext(ctx, `UPDATE jobs SET charged = ?, charge_month = ? WHERE id = ?`, how, c.Month, j.ID); err != nil {
			return err
		}
	}
	return nil
}

// refundJob gives a failed job's charge back, once.
func refundJob(ctx context.Context, tx *Tx, j *app.Job) error {
	var how, month string
	if err := tx.QueryRowContext(ctx, `SELECT charged, charge_month FROM jobs WHERE id = ?`, j.ID).Scan(&how, &month); err != nil {
		return err
	}
	switch how {
	case "quota":
		if _, err := tx.ExecContext(ctx, `UPDATE usage SET documents = documents - 1 WHERE team_id = ? AND month = ?`, j.TeamID, month); err != nil {
			return err
		}
	case "credits":
		if _, err := tx.ExecContext(ctx, `UPDATE usage SET credits_used = credits_used - 1 WHERE team_id = ? AND month = ?`, j.TeamID, month); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE teams SET credits = credits + 1 WHERE id = ?`, j.TeamID); err != nil {
			return err
		}
	default:
		return nil
	}
	_, err := tx.ExecContext(ctx, `UPDATE jobs SET charged = '' WHERE id = ?`, j.ID)
	return err
}
