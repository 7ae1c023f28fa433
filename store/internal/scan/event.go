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
	// ask for (EventTypes reads them).
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
// team -> event type -> wanted, read when a team is missing;
// WantedEvents) and returns those it stored.
func (o Outbox) Store(events []*app.Event, wanted map[string]map[string]bool) ([]*app.Event, error) {
	stored, err := WantedEvents(events, wanted, o.Subscribed)
	if err != nil {
		return nil, err
	}
	for _, e := range stored {
		if err := o.Insert(e); err != nil {
			return nil, err
		}
	}
	return stored, nil
}

// AddEventTypes adds the event types of a subscription's events column (a
// JSON array) to types.
func AddEventTypes(types map[string]bool, raw string) error {
	var list []string
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		return err
	}
	for _, t := range list {
		types[t] = true
	}
	return nil
}
