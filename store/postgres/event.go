package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"folio/app"
	"folio/store/internal/scan"
)

// Events are stored in the outbox (table events, 0010) in the transaction
// that causes them, only when an enabled subscription of their team asks
// for them: a team without webhooks keeps no payloads (as package store).

// buildEvents builds the events of a job's end with build and stores those
// an enabled subscription of teamID asks for, returning them. A team
// without one gets no event built.
func buildEvents(ctx context.Context, tx pgx.Tx, teamID string, build func() ([]*app.Event, error)) ([]*app.Event, error) {
	types, err := subscribedEvents(ctx, tx, teamID)
	if err != nil || len(types) == 0 {
		return nil, err
	}
	built, err := build()
	if err != nil {
		return nil, err
	}
	return storeWanted(ctx, tx, built, map[string]map[string]bool{teamID: types})
}

// storeWanted stores the events their teams' subscriptions ask for
// (wanted: team -> event type -> wanted, read when missing) and returns
// them.
func storeWanted(ctx context.Context, tx pgx.Tx, events []*app.Event, wanted map[string]map[string]bool) ([]*app.Event, error) {
	var stored []*app.Event
	for _, e := range events {
		if wanted[e.TeamID] == nil {
			types, err := subscribedEvents(ctx, tx, e.TeamID)
			if err != nil {
				return nil, err
			}
			wanted[e.TeamID] = types
		}
		if !wanted[e.TeamID][e.Type] {
			continue
		}
		if _, err := tx.Exec(ctx, `INSERT INTO events (id, team_id, type, payload, created_at, request_id) VALUES ($1, $2, $3, $4, $5, $6)`,
			e.ID, e.TeamID, e.Type, string(e.Payload), ms(e.CreatedAt), e.RequestID); err != nil {
			return nil, err
		}
		stored = append(stored, e)
	}
	return stored, nil
}

// subscribedEvents returns the event types the team's enabled
// subscriptions ask for.
func subscribedEvents(ctx context.Context, tx pgx.Tx, teamID string) (map[string]bool, error) {
	rows, err := tx.Query(ctx, `SELECT events FROM webhook_subscriptions WHERE team_id = $1 AND enabled`, teamID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var raw string
		if err := rows.Scan(&raw); err != nil {
			return nil, err
		}
		if err := scan.AddEventTypes(out, raw); err != nil {
			return nil, err
		}
	}
	return out, rows.Err()
}
