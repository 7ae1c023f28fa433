package scan

import "encoding/json"

// AddEventTypes adds the event types of a subscription's events column (a
// JSON array) to types: what a team's enabled subscriptions ask for.
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
