package scan

import (
	"encoding/json"

	"folio/app"
)

// Outbox stores events in a backend's outbox (table events) inside the
// transaction that causes them, only those an enabled subscription of
// their team asks for: a team without webhooks keeps no payloads. The
// backend gives the two statements.
type Outbox struct {
	// Subscribed returns the event types a team's enabled subscriptions
	// ask for (SubscribedTypes reads them).
	Subscribed func(teamID string) (map[string]bool, error)
	// Insert stores one event.
	Insert func(e *app.Event) error
}

// Build builds the events of a job's end with build and stores those an
// enabled subscription of teamID asks for, returning them. A team without
// one (most teams) gets no event built: build marshals a payload and signs
// a download link, work that would be thrown away.
func (o Outbox) Build(teamID string, build func() ([]*app.Event, error)) ([]*app.Event, error) {
	types, err := o.Subscribed(teamID)
	if err != nil || len(types) == 0 {
		return nil, err
	}
	built, err := build()
	if err != nil {
		return nil, err
	}
	return o.Store(built, map[string]map[string]bool{teamID: types})
}

// Store stores the events their teams' subscriptions ask for (wanted:
// team -> event type -> wanted, read when a team is missing) and returns
// those it stored.
func (o Outbox) Store(events []*app.Event, wanted map[string]map[string]bool) ([]*app.Event, error) {
	var stored []*app.Event
	for _, e := range events {
		if wanted[e.TeamID] == nil {
			types, err := o.Subscribed(e.TeamID)
			if err != nil {
				return nil, err
			}
			wanted[e.TeamID] = types
		}
		if !wanted[e.TeamID][e.Type] {
			continue
		}
		if err := o.Insert(e); err != nil {
			return nil, err
		}
		stored = append(stored, e)
	}
	return stored, nil
}

// SubscribedTypes reads rows of subscriptions' events columns (JSON
// arrays) into the set of event types they ask for.
func SubscribedTypes(rows Rows) (map[string]bool, error) {
	out := map[string]bool{}
	for rows.Next() {
		var raw string
		if err := rows.Scan(&raw); err != nil {
			return nil, err
		}
		var list []string
		if err := json.Unmarshal([]byte(raw), &list); err != nil {
			return nil, err
		}
		for _, t := range list {
			out[t] = true
		}
	}
	return out, rows.Err()
}
