package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"folio/app"
	"folio/store/internal/scan"
)

// Events are stored in the outbox (table events, 0010) in the transaction
// that causes them, only when an enabled subscription of their team asks
// for them (scan.Outbox), as in package store.

// outbox stores events in tx.
func outbox(ctx context.Context, tx pgx.Tx) scan.Outbox {
	return scan.Outbox{
		Subscribed: func(teamID string) (map[string]bool, error) {
			rows, err := tx.Query(ctx, `SELECT events FROM webhook_subscriptions WHERE team_id = $1 AND enabled`, teamID)
			if err != nil {
				return nil, err
			}
			defer rows.Close()
			return scan.SubscribedTypes(rows)
		},
		Insert: func(e *app.Event) error {
			_, err := tx.Exec(ctx, `INSERT INTO events (id, team_id, type, payload, created_at, request_id) VALUES ($1, $2, $3, $4, $5, $6)`,
				e.ID, e.TeamID, e.Type, string(e.Payload), ms(e.CreatedAt), e.RequestID)
			return err
		},
	}
}
