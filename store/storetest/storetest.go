// Package storetest is one table of cases that every storage backend must
// pass: package store (SQLite and bbolt) and package store/postgres run it
// from their tests, so the two are held to the same behaviour — the same
// orderings, the same app errors, the same instants read back, the same
// team scoping.
//
// A case gets a fresh, empty, migrated store. Cases use instants on whole
// milliseconds, the unit both backends keep.
package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"folio/app"
)

// Store is the part of app's storage interfaces the cases cover so far;
// a backend's tests pass a constructor of fresh ones to Run.
type Store interface {
	app.UserStore
	app.AccountStore
	app.TwoFactorStore
	app.ActivityStore
	app.TokenStore
	app.SessionStore
	app.TeamStore
	app.InvitationStore
	app.KeyStore
	app.TemplateStore
	app.AssetStore
	app.MetaGenerations
	app.JobStore
	app.BatchStore
	app.UsageStore
	app.AnalyticsStore
	DashboardStats
	// QueueTotals are /metrics' server-wide queue gauges (package main's
	// backend reads them from either store).
	QueueTotals(ctx context.Context, now time.Time) (*app.QueueTotals, error)
}

// DashboardStats are the parts of app.DashboardStore over jobs (its
// DeliveryCounts is the webhook store's).
type DashboardStats interface {
	TemplateStats(ctx context.Context, teamID string, from, to time.Time) ([]app.TemplateStat, error)
	HourCounts(ctx context.Context, teamID string, from, to time.Time) ([]app.HourCount, error)
}

// Case is one contract case.
type Case struct {
	Name string
	Run  func(t *testing.T, s Store)
}

// QueueCase is one contract case of the job queue.
type QueueCase struct {
	Name string
	Run  func(t *testing.T, q app.Queue)
}

// Run runs every case, each on a store made by open.
func Run(t *testing.T, open func(testing.TB) Store) {
	for _, c := range Cases() {
		t.Run(c.Name, func(t *testing.T) { c.Run(t, open(t)) })
	}
}

// RunQueue runs every queue case, each on a queue made by open.
func RunQueue(t *testing.T, open func(testing.TB) app.Queue) {
	for _, c := range QueueCases() {
		t.Run(c.Name, func(t *testing.T) { c.Run(t, open(t)) })
	}
}

// Cases lists the store cases.
func Cases() []Case {
	var cs []Case
	cs = append(cs, accountCases...)
	cs = append(cs, lifecycleCases...)
	cs = append(cs, teamCases...)
	cs = append(cs, keyCases...)
	cs = append(cs, templateCases...)
	cs = append(cs, assetCases...)
	cs = append(cs, jobCases...)
	cs = append(cs, batchCases...)
	cs = append(cs, usageCases...)
	cs = append(cs, analyticsCases...)
	return cs
}

// QueueCases lists the queue cases.
func QueueCases() []QueueCase { return queueCases }

// t0 is the cases' clock: a whole millisecond, UTC.
var t0 = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

var ctx = context.Background()

// mustUser creates a user with a personal team on the free plan, at t0.
func mustUser(t *testing.T, s Store, email string) *app.User {
	t.Helper()
	return mustUserAt(t, s, email, t0)
}

func mustUserAt(t *testing.T, s Store, email string, at time.Time) *app.User {
	t.Helper()
	u := &app.User{ID: app.NewID("usr"), Email: email, Name: "Name of " + email, PasswordHash: "hash", Timezone: "Europe/Berlin", CreatedAt: at, UpdatedAt: at}
	team := &app.Team{ID: app.NewID("team"), Name: "Personal", Slug: app.NewID("s"), IsPersonal: true, Plan: "free", OwnerID: u.ID, CreatedAt: at, UpdatedAt: at}
	u.PersonalTeamID = team.ID
	if err := s.CreateUser(ctx, u, team); err != nil {
		t.Fatal(err)
	}
	return u
}

// mustTeam creates a team owned by owner.
func mustTeam(t *testing.T, s Store, owner *app.User, slug, plan string, at time.Time) *app.Team {
	t.Helper()
	team := &app.Team{ID: app.NewID("team"), Name: "Team " + slug, Slug: slug, Plan: plan, OwnerID: owner.ID, CreatedAt: at, UpdatedAt: at}
	if err := s.CreateTeam(ctx, team); err != nil {
		t.Fatal(err)
	}
	return team
}

// mustKey creates an API key of team made by user.
func mustKey(t *testing.T, s Store, teamID, userID, name string, at time.Time) *app.APIKey {
	t.Helper()
	k := &app.APIKey{ID: app.NewID("key"), TeamID: teamID, Name: name, KeyType: "live", KeyPrefix: "fk_live_...", Hash: app.NewID("hash"),
		Permissions: []string{"documents:write"}, IsActive: true, CreatedBy: userID, CreatedAt: at, UpdatedAt: at}
	if err := s.CreateAPIKey(ctx, k); err != nil {
		t.Fatal(err)
	}
	return k
}

// wantCode fails unless err carries the app error code.
func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := app.ErrorCode(err); got != code {
		t.Fatalf("%s: error %v (code %q), want %s", what, err, got, code)
	}
}

// concurrently runs fn(i) for i < n at once and returns the errors.
func concurrently(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn(i)
		}()
	}
	wg.Wait()
	return errs
}
