package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"folio/app"
)

// concurrently runs n inserts at once and returns how many passed and the
// first ERR_PLAN_002 refusal; any other error fails the test.
func concurrently(t *testing.T, n int, insert func(i int) error) (int, *app.Error) {
	t.Helper()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = insert(i)
		}()
	}
	wg.Wait()
	ok := 0
	var refusal *app.Error
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case app.ErrorCode(err) == app.ECodePlanLimit:
			if refusal == nil {
				refusal = err.(*app.Error)
			}
		default:
			t.Fatalf("insert: %v", err)
		}
	}
	return ok, refusal
}

// TestPlanCountsCheckedOnInsert: the store counts a team's templates, keys
// and members in the inserting transaction, so concurrent inserts never go
// past the plan.
func TestPlanCountsCheckedOnInsert(t *testing.T) {
	ctx := context.Background()
	db := mustDB(t)
	u := mustUser(t, db, "plan@example.com") // personal team on free: 2 templates, 1 key
	team := u.PersonalTeamID
	now := time.Now().UTC()

	ok, refusal := concurrently(t, 10, func(i int) error {
		return db.CreateTemplate(ctx, &app.Template{ID: app.NewID("tpl"), TeamID: team, ShortID: app.NewID("s"), Slug: fmt.Sprintf("t-%d", i),
			Name: fmt.Sprintf("T %d", i), TemplateType: app.TypeAttachment, OutputFormats: []string{"pdf"}, Schema: []byte(`{}`),
			CreatedBy: u.ID, CreatedAt: now, UpdatedAt: now})
	})
	if ok != 2 || refusal == nil || refusal.Info["limit"] != 2 || refusal.Info["current"] != 2 || refusal.Info["resource"] != app.ResourceTemplates {
		t.Fatalf("templates: %d inserted, refusal %+v", ok, refusal)
	}

	ok, refusal = concurrently(t, 10, func(i int) error {
		return db.CreateAPIKey(ctx, &app.APIKey{ID: app.NewID("key"), TeamID: team, Name: "k", KeyType: "secret", KeyPrefix: "svc_sk_...",
			Hash: app.NewID("hash"), Permissions: []string{}, IsActive: true, CreatedBy: u.ID, CreatedAt: now, UpdatedAt: now})
	})
	if ok != 1 || refusal == nil || refusal.Info["limit"] != 1 || refusal.Info["resource"] != app.ResourceAPIKeys {
		t.Fatalf("keys: %d inserted, refusal %+v", ok, refusal)
	}

	// A starter team (3 members) with its owner: two more seats, pending
	// invitations included.
	starter := &app.Team{ID: app.NewID("team"), Name: "S", Slug: app.NewID("s"), Plan: "starter", OwnerID: u.ID, CreatedAt: now, UpdatedAt: now}
	if err := db.CreateTeam(ctx, starter); err != nil {
		t.Fatal(err)
	}
	ok, refusal = concurrently(t, 10, func(i int) error {
		return db.CreateInvitation(ctx, &app.Invitation{ID: app.NewID("inv"), TeamID: starter.ID, Email: fmt.Sprintf("g%d@example.com", i),
			Role: app.RoleMember, ExpiresAt: now.Add(time.Hour), CreatedAt: now, InvitedByID: u.ID}, now)
	})
	if ok != 2 || refusal == nil || refusal.Info["limit"] != 3 || refusal.Info["current"] != 3 || refusal.Info["resource"] != app.ResourceMembers {
		t.Fatalf("invitations: %d inserted, refusal %+v", ok, refusal)
	}
	// Accepting counts members only: after a move to free (1 member) the
	// pending invitations can no longer be accepted.
	if err := db.SetTeamPlan(ctx, starter.ID, "free", now); err != nil {
		t.Fatal(err)
	}
	invs, _, err := db.FindTeamInvitations(ctx, starter.ID, now, app.Page{Page: 1, Limit: 10})
	if err != nil || len(invs) != 2 {
		t.Fatalf("pending invitations: %v %v", invs, err)
	}
	guest := mustUser(t, db, invs[0].Email)
	if _, err := db.AcceptInvitation(ctx, invs[0].ID, guest.ID, now); app.ErrorCode(err) != app.ECodePlanLimit {
		t.Fatalf("accept beyond the plan: %v", err)
	}
}
