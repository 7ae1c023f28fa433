package store

import (
	"context"
	"database/sql"
	"errors"

	"folio/app"
)

// checkPlanCount refuses one more of resource (ERR_PLAN_002) when the team's
// plan allows no more. count is the SQL that counts the current ones. It runs
// in the transaction that inserts the new row, and write transactions take
// the write lock at BEGIN (one writer connection, _txlock=immediate), so two
// concurrent creates are counted one after the other.
func checkPlanCount(ctx context.Context, tx *Tx, teamID, resource, count string, args ...any) error {
	var name string
	err := tx.QueryRowContext(ctx, `SELECT plan FROM teams WHERE id = ?`, teamID).Scan(&name)
	if errors.Is(err, sql.ErrNoRows) {
		return app.ErrNotFound(app.ECodeTeamNotFound, "team")
	} else if err != nil {
		return err
	}
	return app.CheckPlanCount(name, resource, func() (n int, err error) {
		err = tx.QueryRowContext(ctx, count, args...).Scan(&n)
		return n, err
	})
}
