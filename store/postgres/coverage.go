package postgres

import (
	"fmt"
	"net/url"

	"folio/app"
)

// Part is one piece of storage the server needs from its database, and
// whether this package provides it yet.
type Part struct {
	Name string
	Done bool
}

// implements reports whether DB satisfies interface T.
func implements[T any]() bool {
	_, ok := any((*DB)(nil)).(T)
	return ok
}

// Parts lists what folio serve wires to its database (main.go), in the
// order the backend is being built: app's storage interfaces, then what
// the embedded install keeps outside them. It is computed from DB's
// methods, so it shrinks as they are written.
func Parts() []Part {
	return []Part{
		{"UserStore", implements[app.UserStore]()},
		{"TokenStore", implements[app.TokenStore]()},
		{"SessionStore", implements[app.SessionStore]()},
		{"TeamStore", implements[app.TeamStore]()},
		{"InvitationStore", implements[app.InvitationStore]()},
		{"KeyStore", implements[app.KeyStore]()},
		{"Queue", implements[app.Queue]()},
		{"AccountStore", implements[app.AccountStore]()},
		{"TwoFactorStore", implements[app.TwoFactorStore]()},
		{"ActivityStore", implements[app.ActivityStore]()},
		{"TemplateStore", implements[app.TemplateStore]()},
		{"AssetStore", implements[app.AssetStore]()},
		{"JobStore", implements[app.JobStore]()},
		{"BatchStore", implements[app.BatchStore]()},
		{"UsageStore", implements[app.UsageStore]()},
		{"AnalyticsStore", implements[app.AnalyticsStore]()},
		{"DashboardStore", implements[app.DashboardStore]()},
		{"WebhookStore", implements[app.WebhookStore]()},
		{"WebhookSchedule", implements[app.WebhookSchedule]()},
		{"MetaGenerations", implements[app.MetaGenerations]()},
		{"SigningCertificateStore", implements[app.SigningCertificateStore]()},
		{"RateWindows (rate-limit windows and login throttles, shared and swept)", implements[app.RateWindows]() && implements[app.RateSweeper]()},
		{"Secrets (the jwt, download and signing keys, created once for every replica)", implements[app.Secrets]()},
		{"TaskLock (the janitor's retention pass on one replica at a time)", implements[app.TaskLock]()},
	}
}

// Missing names the parts not provided yet; folio serve --database-url
// refuses to start while any is.
func Missing() []string {
	var out []string
	for _, p := range Parts() {
		if !p.Done {
			out = append(out, p.Name)
		}
	}
	return out
}

// CheckURL checks that u is a PostgreSQL connection URL.
func CheckURL(u string) error {
	p, err := url.Parse(u)
	if err != nil {
		return err
	}
	if p.Scheme != "postgres" && p.Scheme != "postgresql" {
		return fmt.Errorf("want a postgres:// URL, got scheme %q", p.Scheme)
	}
	return nil
}
