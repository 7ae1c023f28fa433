package postgres

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"folio/app"
)

// TestMetadataWritesDoNotDeadlock: purges that hand teams on (teams,
// members, users, activity) run while the same teams get keys, role
// changes and new members, from many connections at once, as replicas
// would. Each raises the metadata generation; taking its lock first
// (metaTx) keeps them from deadlocking on each other's rows, so every call
// ends with its own outcome, never a deadlock error.
func TestMetadataWritesDoNotDeadlock(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	mk := func(email string) *app.User {
		u := &app.User{ID: app.NewID("usr"), Email: email, Name: email, PasswordHash: "h", CreatedAt: now, UpdatedAt: now}
		team := &app.Team{ID: app.NewID("team"), Name: "P", Slug: app.NewID("s"), IsPersonal: true, Plan: "free", OwnerID: u.ID, CreatedAt: now, UpdatedAt: now}
		u.PersonalTeamID = team.ID
		if err := db.CreateUser(ctx, u, team); err != nil {
			t.Fatal(err)
		}
		return u
	}
	const teams = 4
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for i := range teams {
		owner, heir := mk(fmt.Sprintf("owner%d@example.com", i)), mk(fmt.Sprintf("heir%d@example.com", i))
		team := &app.Team{ID: app.NewID("team"), Name: "T", Slug: fmt.Sprintf("t%d", i), Plan: "scale", OwnerID: owner.ID, CreatedAt: now, UpdatedAt: now}
		if err := db.CreateTeam(ctx, team); err != nil {
			t.Fatal(err)
		}
		inv := &app.Invitation{ID: app.NewID("inv"), TeamID: team.ID, Email: heir.Email, Role: app.RoleMember, InvitedByID: owner.ID, ExpiresAt: now.Add(time.Hour), CreatedAt: now}
		if err := db.CreateInvitation(ctx, inv, now); err != nil {
			t.Fatal(err)
		}
		if _, err := db.AcceptInvitation(ctx, inv.ID, heir.ID, now); err != nil {
			t.Fatal(err)
		}
		var newcomers []*app.User
		for j := range 3 {
			newcomers = append(newcomers, mk(fmt.Sprintf("new%d-%d@example.com", i, j)))
		}
		run := func(fn func() error) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := fn(); err != nil && app.ErrorCode(err) == "" {
					errs <- err
				}
			}()
		}
		run(func() error {
			if err := db.RequestUserDeletion(ctx, owner.ID, "", "", now); err != nil {
				return err
			}
			return db.PurgeUser(ctx, owner.ID, now, now)
		})
		run(func() error {
			for range 5 {
				k := &app.APIKey{ID: app.NewID("key"), TeamID: team.ID, Name: "k", KeyType: "live", KeyPrefix: "p", Hash: app.NewID("h"),
					Permissions: []string{}, IsActive: true, CreatedBy: heir.ID, CreatedAt: now, UpdatedAt: now}
				if err := db.CreateAPIKey(ctx, k); err != nil {
					return err
				}
				if _, err := db.UpdateAPIKey(ctx, team.ID, k.ID, app.KeyUpdate{IsActive: new(bool)}, now); err != nil {
					return err
				}
			}
			return nil
		})
		run(func() error {
			for _, role := range []string{app.RoleAdmin, app.RoleViewer, app.RoleAdmin} {
				if _, err := db.UpdateMemberRole(ctx, team.ID, heir.ID, role, now); err != nil {
					return err
				}
			}
			return nil
		})
		for _, u := range newcomers {
			run(func() error {
				inv := &app.Invitation{ID: app.NewID("inv"), TeamID: team.ID, Email: u.Email, Role: app.RoleViewer, InvitedByID: heir.ID, ExpiresAt: now.Add(time.Hour), CreatedAt: now}
				if err := db.CreateInvitation(ctx, inv, now); err != nil {
					return err
				}
				_, err := db.AcceptInvitation(ctx, inv.ID, u.ID, now)
				return err
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent metadata write: %v", err)
	}
	for i := range teams {
		team, err := db.FindTeam(ctx, fmt.Sprintf("t%d", i))
		if err != nil {
			t.Fatal(err)
		}
		heir, _ := db.FindUserByEmail(ctx, fmt.Sprintf("heir%d@example.com", i))
		if team.OwnerID != heir.ID {
			t.Errorf("team t%d owned by %s, want its heir", i, team.OwnerID)
		}
	}
}
