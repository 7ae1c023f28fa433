package storetest

import (
	"fmt"
	"testing"
	"time"

	"folio/app"
)

var keyCases = []Case{
	{"KeyReadBack", keyReadBack},
	{"KeyListSortsAndFilters", keyListSortsAndFilters},
	{"KeysAreScopedByTeam", keysAreScopedByTeam},
	{"KeyTouchCountsByDay", keyTouchCountsByDay},
	{"MetadataGeneration", metadataGeneration},
}

// metadataGeneration: every write to what the metadata cache holds (users,
// teams, memberships, keys) raises the generation, in its transaction;
// writes of what it does not hold (request counts, credits, sessions,
// invitations) leave it.
func metadataGeneration(t *testing.T, s Store) {
	gen := func() int64 {
		t.Helper()
		n, err := s.MetadataGeneration(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	step := func(what string, raises bool, write func() error) {
		t.Helper()
		before := gen()
		if err := write(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if after := gen(); (after > before) != raises || after < before {
			t.Fatalf("%s: generation %d -> %d, want raised=%v", what, before, after, raises)
		}
	}
	var u, guest *app.User
	step("create user", true, func() error { u = mustUser(t, s, "gen@example.com"); return nil })
	guest = mustUser(t, s, "guest@example.com")
	var team *app.Team
	step("create team", true, func() error { team = mustTeam(t, s, u, "gen", "growth", t0); return nil })
	var k *app.APIKey
	step("create key", true, func() error { k = mustKey(t, s, team.ID, u.ID, "k", t0); return nil })
	step("count a request", false, func() error { return s.TouchAPIKey(ctx, k.ID, t0) })
	step("rename key", false, func() error {
		_, err := s.UpdateAPIKey(ctx, team.ID, k.ID, app.KeyUpdate{Name: ptr("n")}, t0)
		return err
	})
	step("deactivate key", true, func() error {
		_, err := s.UpdateAPIKey(ctx, team.ID, k.ID, app.KeyUpdate{IsActive: ptr(false)}, t0)
		return err
	})
	step("add credits", false, func() error { return s.AddTeamCredits(ctx, team.ID, 5, t0) })
	step("change plan", true, func() error { return s.SetTeamPlan(ctx, team.ID, "scale", t0) })
	var inv *app.Invitation
	step("invite", false, func() error { inv = invite(t, s, team, u, guest.Email, app.RoleMember, t0); return nil })
	step("accept", true, func() error { _, err := s.AcceptInvitation(ctx, inv.ID, guest.ID, t0); return err })
	step("change role", true, func() error { _, err := s.UpdateMemberRole(ctx, team.ID, guest.ID, app.RoleAdmin, t0); return err })
	step("create session", false, func() error {
		return s.CreateSession(ctx, &app.WebSession{ID: "gs", Hash: "gh", UserID: u.ID, TeamID: team.ID, CreatedAt: t0, LastSeenAt: t0, ExpiresAt: t0.Add(time.Hour)})
	})
	step("verify user", true, func() error { return s.SetUserVerified(ctx, u.ID, t0) })
	step("remove member", true, func() error { _, err := s.RemoveMember(ctx, team.ID, guest.ID, t0); return err })
	step("delete key", true, func() error { return s.DeleteAPIKey(ctx, team.ID, k.ID) })
	step("delete team", true, func() error { return s.DeleteTeam(ctx, team.ID, t0) })
}

// keyReadBack: a key reads back by id and by hash; a deleted team's keys
// no longer authenticate; updates apply only the given fields.
func keyReadBack(t *testing.T, s Store) {
	u := mustUser(t, s, "k@example.com")
	team := mustTeam(t, s, u, "keys", "growth", t0)
	at := t0.Add(5 * time.Millisecond)
	k := mustKey(t, s, team.ID, u.ID, "Production", at)
	for _, find := range []func() (*app.APIKey, error){
		func() (*app.APIKey, error) { return s.FindAPIKeyByID(ctx, team.ID, k.ID) },
		func() (*app.APIKey, error) { return s.FindAPIKeyByHash(ctx, k.Hash) },
	} {
		got, err := find()
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != k.ID || got.TeamID != team.ID || got.Name != "Production" || got.KeyType != "live" || got.KeyPrefix != k.KeyPrefix ||
			got.Hash != k.Hash || fmt.Sprint(got.Permissions) != "[documents:write]" || !got.IsActive || got.CreatedBy != u.ID ||
			got.LastUsedAt != nil || got.TotalRequests != 0 || !got.CreatedAt.Equal(at) || !got.UpdatedAt.Equal(at) {
			t.Fatalf("read back %+v, wrote %+v", got, k)
		}
	}
	name := "Renamed"
	got, err := s.UpdateAPIKey(ctx, team.ID, k.ID, app.KeyUpdate{Name: &name, Permissions: []string{"a", "b"}}, t0.Add(time.Minute))
	if err != nil || got.Name != name || fmt.Sprint(got.Permissions) != "[a b]" || !got.IsActive || !got.UpdatedAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("update: %+v %v", got, err)
	}
	got, err = s.UpdateAPIKey(ctx, team.ID, k.ID, app.KeyUpdate{IsActive: ptr(false)}, t0.Add(2*time.Minute))
	if err != nil || got.Name != name || got.IsActive || fmt.Sprint(got.Permissions) != "[a b]" {
		t.Fatalf("deactivate: %+v %v", got, err)
	}
	_, err = s.UpdateAPIKey(ctx, team.ID, "key_missing", app.KeyUpdate{Name: &name}, t0)
	wantCode(t, "update unknown", err, app.ECodeKeyNotFound)
	if n, err := s.CountKeyDocuments(ctx, team.ID, k.ID); err != nil || n != 0 {
		t.Fatalf("documents %d %v", n, err)
	}
	_, err = s.CountKeyDocuments(ctx, team.ID, "key_missing")
	wantCode(t, "documents of unknown", err, app.ECodeKeyNotFound)
	if err := s.DeleteTeam(ctx, team.ID, t0); err != nil {
		t.Fatal(err)
	}
	_, err = s.FindAPIKeyByHash(ctx, k.Hash)
	wantCode(t, "key of a deleted team", err, app.ECodeKeyNotFound)
	_, err = s.FindAPIKeyByHash(ctx, "unknown")
	wantCode(t, "unknown hash", err, app.ECodeKeyNotFound)
}

// keyListSortsAndFilters: lists sort by each field both ways, ties in
// insertion order (reversed descending), never-used keys first ascending
// and last descending; the active filter and pages count alike.
func keyListSortsAndFilters(t *testing.T, s Store) {
	u := mustUser(t, s, "list@example.com")
	team := mustTeam(t, s, u, "list", "growth", t0)
	b := mustKey(t, s, team.ID, u.ID, "beta", t0.Add(2*time.Second))
	a := mustKey(t, s, team.ID, u.ID, "Alpha", t0.Add(1*time.Second)) // uppercase sorts before lowercase, bytewise
	c := mustKey(t, s, team.ID, u.ID, "alpha", t0.Add(2*time.Second))
	d := mustKey(t, s, team.ID, u.ID, "delta", t0.Add(3*time.Second))
	names := map[string]string{a.ID: "Alpha", b.ID: "beta", c.ID: "alpha", d.ID: "delta"}
	if err := s.TouchAPIKey(ctx, b.ID, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.TouchAPIKey(ctx, d.ID, t0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateAPIKey(ctx, team.ID, c.ID, app.KeyUpdate{IsActive: ptr(false)}, t0.Add(4*time.Second)); err != nil {
		t.Fatal(err)
	}
	list := func(f app.KeyFilter) (string, int) {
		t.Helper()
		f.TeamID = team.ID
		if f.Page.Limit == 0 {
			f.Page = page(1, 10)
		}
		keys, total, err := s.FindAPIKeys(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, k := range keys {
			out = append(out, names[k.ID])
		}
		return fmt.Sprint(out), total
	}
	for _, tc := range []struct {
		f    app.KeyFilter
		want string
	}{
		{app.KeyFilter{}, "[delta alpha beta Alpha]"},
		{app.KeyFilter{SortBy: "createdAt", SortOrder: "asc"}, "[Alpha beta alpha delta]"},
		{app.KeyFilter{SortBy: "name", SortOrder: "asc"}, "[Alpha alpha beta delta]"},
		{app.KeyFilter{SortBy: "name", SortOrder: "desc"}, "[delta beta alpha Alpha]"},
		{app.KeyFilter{SortBy: "lastUsedAt", SortOrder: "asc"}, "[Alpha alpha beta delta]"},
		{app.KeyFilter{SortBy: "lastUsedAt", SortOrder: "desc"}, "[delta beta alpha Alpha]"},
		{app.KeyFilter{SortBy: "updatedAt", SortOrder: "desc"}, "[alpha delta beta Alpha]"},
		{app.KeyFilter{SortBy: "bogus", SortOrder: "asc"}, "[Alpha beta alpha delta]"},
		{app.KeyFilter{IsActive: ptr(true), SortBy: "name", SortOrder: "asc"}, "[Alpha beta delta]"},
		{app.KeyFilter{IsActive: ptr(false)}, "[alpha]"},
	} {
		if got, _ := list(tc.f); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.f, got, tc.want)
		}
	}
	if got, total := list(app.KeyFilter{IsActive: ptr(true), SortBy: "name", SortOrder: "asc", Page: page(2, 2)}); got != "[delta]" || total != 3 {
		t.Errorf("page 2 of active keys: %s (total %d)", got, total)
	}
}

// keysAreScopedByTeam: team B cannot read, list, change or delete team A's
// keys.
func keysAreScopedByTeam(t *testing.T, s Store) {
	ua := mustUser(t, s, "a@example.com")
	ub := mustUser(t, s, "b@example.com")
	ka := mustKey(t, s, ua.PersonalTeamID, ua.ID, "A's key", t0)
	tb := ub.PersonalTeamID
	_, err := s.FindAPIKeyByID(ctx, tb, ka.ID)
	wantCode(t, "read through B", err, app.ECodeKeyNotFound)
	if keys, total, err := s.FindAPIKeys(ctx, app.KeyFilter{TeamID: tb, Page: page(1, 10)}); err != nil || total != 0 || len(keys) != 0 {
		t.Fatalf("B's list: %v %d %v", keys, total, err)
	}
	name := "stolen"
	_, err = s.UpdateAPIKey(ctx, tb, ka.ID, app.KeyUpdate{Name: &name}, t0)
	wantCode(t, "update through B", err, app.ECodeKeyNotFound)
	wantCode(t, "delete through B", s.DeleteAPIKey(ctx, tb, ka.ID), app.ECodeKeyNotFound)
	_, err = s.CountKeyDocuments(ctx, tb, ka.ID)
	wantCode(t, "documents through B", err, app.ECodeKeyNotFound)
	if k, err := s.FindAPIKeyByID(ctx, ua.PersonalTeamID, ka.ID); err != nil || k.Name != "A's key" {
		t.Fatalf("A's key after B's attempts: %+v %v", k, err)
	}
	if err := s.DeleteAPIKey(ctx, ua.PersonalTeamID, ka.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "delete twice", s.DeleteAPIKey(ctx, ua.PersonalTeamID, ka.ID), app.ECodeKeyNotFound)
}

// keyTouchCountsByDay: each request counts in the total and in its UTC
// day's count; a request stamped on a day before the stored one counts in
// the total only; lastUsedAt is the latest request.
func keyTouchCountsByDay(t *testing.T, s Store) {
	u := mustUser(t, s, "touch@example.com")
	day1 := time.Date(2026, 11, 24, 23, 59, 0, 0, time.UTC)
	k := mustKey(t, s, u.PersonalTeamID, u.ID, "k", day1)
	day2 := day1.Add(2 * time.Minute)
	check := func(what string, total, today int64, day string, last time.Time) {
		t.Helper()
		got, err := s.FindAPIKeyByID(ctx, k.TeamID, k.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.TotalRequests != total || got.RequestsToday != today || got.RequestsDay != day || got.LastUsedAt == nil || !got.LastUsedAt.Equal(last) {
			t.Fatalf("%s: total %d, today %d on %s, last %v; want %d, %d on %s, last %v",
				what, got.TotalRequests, got.RequestsToday, got.RequestsDay, got.LastUsedAt, total, today, day, last)
		}
	}
	touch := func(at time.Time) {
		t.Helper()
		if err := s.TouchAPIKey(ctx, k.ID, at); err != nil {
			t.Fatal(err)
		}
	}
	touch(day1)
	touch(day1)
	check("day 1", 2, 2, "2026-11-24", day1)
	touch(day2)
	check("day 2", 3, 1, "2026-11-25", day2)
	touch(day1.Add(30 * time.Second)) // late, from the day before
	check("a late count", 4, 1, "2026-11-25", day2)
	touch(day2.Add(time.Hour))
	check("day 2 again", 5, 2, "2026-11-25", day2.Add(time.Hour))
}
