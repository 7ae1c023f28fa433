package app

import "slices"

// Capability is what a group of a key's permissions lets it do, in words
// for people; Permissions are the spec's codes behind it.
type Capability struct {
	Label       string
	Permissions []string
}

// capabilities are the groups the create flags grant (KeyFlags.Permissions),
// in the words of the dashboard's form.
var capabilities = []Capability{
	{"Read templates and jobs, download documents", []string{PermTemplatesRead, PermAttachmentsRead, PermEmailsRead}},
	{"Generate documents and manage webhooks", []string{PermAttachmentsWrite, PermEmailsWrite, PermWebhooksWrite}},
	{"Read analytics", []string{PermAnalyticsRead}},
	{"Create, change and delete templates", []string{PermTemplatesWrite}},
}

// KeyCapabilities describes permissions as what they allow: one entry per
// group the key holds any of (with the codes it holds), then any code no
// group knows, as it is.
func KeyCapabilities(perms []string) []Capability {
	var out []Capability
	known := map[string]bool{}
	for _, c := range capabilities {
		var held []string
		for _, p := range c.Permissions {
			known[p] = true
			if slices.Contains(perms, p) {
				held = append(held, p)
			}
		}
		if len(held) > 0 {
			out = append(out, Capability{Label: c.Label, Permissions: held})
		}
	}
	for _, p := range perms {
		if !known[p] {
			out = append(out, Capability{Label: p, Permissions: []string{p}})
		}
	}
	return out
}
