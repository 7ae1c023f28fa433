package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"folio/app"
)

// checkPlanCount refuses an insert that would take the team past its
// plan's count of resource (ERR_PLAN_002); count is a query of the
// current number. It locks the team's row first: inserts of the same team
// from any replica wait for each other's commit and count it, as
// SQLite's single writer made them do.
func checkPlanCount(ctx context.Context, tx pgx.Tx, teamID, resource, count string, args ...any) error {
	var name string
	err := tx.QueryRow(ctx, `SELECT plan FROM teams WHERE id = $1 FOR UPDATE`, teamID).Scan(&name)
	if errors.Is(err, pgx.ErrNoRows) {
		return app.ErrNotFound(app.ECodeTeamNotFound, "team")
	} else if err != nil {
		return err
	}
	return app.CheckPlanCount(name, resource, func() (n int, err error) {
		err = tx.QueryRow(ctx, count, args...).Scan(&n)
		return n, err
	})
}
