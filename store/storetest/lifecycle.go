package storetest

import (
	"fmt"
	"testing"
	"time"

	"folio/app"
)

var lifecycleCases = []Case{
	{"ProfileAndPreferences", profileAndPreferences},
	{"EmailChange", emailChange},
	{"PasswordChangeEndsSessions", passwordChangeEndsSessions},
	{"TwoFactorLifecycle", twoFactorLifecycle},
	{"ActivityFeed", activityFeed},
	{"DeletionAndRestore", deletionAndRestore},
	{"PurgeHandsTeamsOn", purgeHandsTeamsOn},
}

// profileAndPreferences: profile fields and mail opt-ins change one at a
// time; the defaults are product updates only.
func profileAndPreferences(t *testing.T, s Store) {
	u := mustUser(t, s, "p@example.com")
	name := "New Name"
	got, err := s.UpdateUserProfile(ctx, u.ID, app.ProfileUpdate{Name: &name}, t0.Add(time.Second))
	if err != nil || got.Name != name || got.Timezone != "Europe/Berlin" || !got.UpdatedAt.Equal(t0.Add(time.Second)) {
		t.Fatalf("name: %+v %v", got, err)
	}
	tz := "UTC"
	if got, err := s.UpdateUserProfile(ctx, u.ID, app.ProfileUpdate{Timezone: &tz}, t0); err != nil || got.Name != name || got.Timezone != "UTC" {
		t.Fatalf("timezone: %+v %v", got, err)
	}
	_, err = s.UpdateUserProfile(ctx, "usr_missing", app.ProfileUpdate{Name: &name}, t0)
	wantCode(t, "profile of unknown", err, app.ECodeUserNotFound)
	p, err := s.FindEmailPreferences(ctx, u.ID)
	if err != nil || *p != (app.EmailPreferences{ProductUpdates: true}) {
		t.Fatalf("default preferences %+v %v", p, err)
	}
	p, err = s.UpdateEmailPreferences(ctx, u.ID, app.EmailPreferencesInput{WeeklyDigest: ptr(true), ProductUpdates: ptr(false)}, t0)
	if err != nil || *p != (app.EmailPreferences{WeeklyDigest: true}) {
		t.Fatalf("updated preferences %+v %v", p, err)
	}
	if p, _ := s.FindEmailPreferences(ctx, u.ID); *p != (app.EmailPreferences{WeeklyDigest: true}) {
		t.Fatalf("preferences read back %+v", p)
	}
	_, err = s.FindEmailPreferences(ctx, "usr_missing")
	wantCode(t, "preferences of unknown", err, app.ECodeUserNotFound)
	if err := s.SetUserAvatar(ctx, u.ID, "/avatars/a.png", t0); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.FindUserByID(ctx, u.ID); got.ProfilePictureURL != "/avatars/a.png" {
		t.Fatalf("avatar %q", got.ProfilePictureURL)
	}
	wantCode(t, "avatar of unknown", s.SetUserAvatar(ctx, "usr_missing", "", t0), app.ECodeUserNotFound)
}

// emailChange: only the pending address can be confirmed, and not when
// another account has it.
func emailChange(t *testing.T, s Store) {
	u := mustUser(t, s, "old@example.com")
	mustUser(t, s, "taken@example.com")
	pending := "new@example.com"
	if _, err := s.UpdateUserProfile(ctx, u.ID, app.ProfileUpdate{PendingEmail: &pending}, t0); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "not the pending address", s.ConfirmEmailChange(ctx, u.ID, "other@example.com", t0), app.ECodeBadEmailToken)
	if err := s.ConfirmEmailChange(ctx, u.ID, pending, t0); err != nil {
		t.Fatal(err)
	}
	got, err := s.FindUserByEmail(ctx, pending)
	if err != nil || got.ID != u.ID || !got.EmailVerified || got.PendingEmail != "" {
		t.Fatalf("after the change: %+v %v", got, err)
	}
	wantCode(t, "confirmed twice", s.ConfirmEmailChange(ctx, u.ID, pending, t0), app.ECodeBadEmailToken)
	taken := "taken@example.com"
	if _, err := s.UpdateUserProfile(ctx, u.ID, app.ProfileUpdate{PendingEmail: &taken}, t0); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "a taken address", s.ConfirmEmailChange(ctx, u.ID, taken, t0), app.ECodeEmailInUse)
}

// passwordChangeEndsSessions: a new password revokes every refresh token
// and refuses access tokens issued before it (SessionsValidFrom).
func passwordChangeEndsSessions(t *testing.T, s Store) {
	u := mustUser(t, s, "pw@example.com")
	if err := s.CreateRefreshToken(ctx, &app.RefreshToken{ID: app.NewID("rt"), UserID: u.ID, Hash: "rt1", Family: "f", ExpiresAt: t0.Add(time.Hour), CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	at := t0.Add(time.Minute)
	if err := s.ChangeUserPassword(ctx, u.ID, "hash2", at); err != nil {
		t.Fatal(err)
	}
	_, err := s.UseRefreshToken(ctx, "rt1", at)
	wantCode(t, "refresh token after a password change", err, app.ECodeBadRefreshToken)
	if got, _ := s.FindUserByID(ctx, u.ID); got.PasswordHash != "hash2" || !got.SessionsValidFrom.Equal(at) {
		t.Fatalf("after the change: %+v", got)
	}
	wantCode(t, "password of unknown", s.ChangeUserPassword(ctx, "usr_missing", "h", at), app.ECodeUserNotFound)
}

// twoFactorLifecycle: setup, enabling with a code's step, replays refused,
// backup codes spent once, and disabling.
func twoFactorLifecycle(t *testing.T, s Store) {
	u := mustUser(t, s, "2fa@example.com")
	tf, err := s.FindTwoFactor(ctx, u.ID)
	if err != nil || *tf != (app.TwoFactor{UserID: u.ID}) {
		t.Fatalf("before setup: %+v %v", tf, err)
	}
	wantCode(t, "enable before setup", s.EnableTwoFactor(ctx, u.ID, 5, nil, t0), app.ECodeBadTwoFactor)
	if err := s.StartTwoFactor(ctx, u.ID, "SECRET1", []string{"c1", "c2", "c3"}, t0); err != nil {
		t.Fatal(err)
	}
	// A second start replaces the unfinished setup.
	if err := s.StartTwoFactor(ctx, u.ID, "SECRET2", []string{"d1", "d2"}, t0); err != nil {
		t.Fatal(err)
	}
	tf, _ = s.FindTwoFactor(ctx, u.ID)
	if tf.Secret != "SECRET2" || tf.Enabled || tf.BackupCodesRemaining != 2 || tf.LastStep != 0 {
		t.Fatalf("pending setup: %+v", tf)
	}
	if err := s.EnableTwoFactor(ctx, u.ID, 100, []string{"e1", "e2", "e3", "e4"}, t0); err != nil {
		t.Fatal(err)
	}
	tf, _ = s.FindTwoFactor(ctx, u.ID)
	if !tf.Enabled || tf.LastStep != 100 || tf.BackupCodesRemaining != 4 {
		t.Fatalf("enabled: %+v", tf)
	}
	if got, _ := s.FindUserByID(ctx, u.ID); !got.TwoFactorEnabled {
		t.Fatal("the user is not marked two-factor")
	}
	wantCode(t, "start while on", s.StartTwoFactor(ctx, u.ID, "X", nil, t0), app.ECodeTwoFactorOn)
	wantCode(t, "the enabling step again", s.UseTOTPStep(ctx, u.ID, 100, t0), app.ECodeBadTwoFactor)
	wantCode(t, "an older step", s.UseTOTPStep(ctx, u.ID, 99, t0), app.ECodeBadTwoFactor)
	if err := s.UseTOTPStep(ctx, u.ID, 101, t0); err != nil {
		t.Fatal(err)
	}
	// One step used from eight places at once (replicas) is accepted once.
	ok := 0
	for _, err := range concurrently(8, func(int) error { return s.UseTOTPStep(ctx, u.ID, 102, t0) }) {
		if err == nil {
			ok++
		} else if app.ErrorCode(err) != app.ECodeBadTwoFactor {
			t.Fatal(err)
		}
	}
	if ok != 1 {
		t.Fatalf("step 102 accepted %d times", ok)
	}
	if err := s.UseBackupCode(ctx, u.ID, "e2", t0); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "a spent backup code", s.UseBackupCode(ctx, u.ID, "e2", t0), app.ECodeBadTwoFactor)
	wantCode(t, "an old backup code", s.UseBackupCode(ctx, u.ID, "d1", t0), app.ECodeBadTwoFactor)
	if tf, _ := s.FindTwoFactor(ctx, u.ID); tf.BackupCodesRemaining != 3 {
		t.Fatalf("remaining %d, want 3", tf.BackupCodesRemaining)
	}
	if err := s.ReplaceBackupCodes(ctx, u.ID, []string{"f1"}, t0); err != nil {
		t.Fatal(err)
	}
	if tf, _ := s.FindTwoFactor(ctx, u.ID); tf.BackupCodesRemaining != 1 {
		t.Fatalf("remaining after replacing %d, want 1", tf.BackupCodesRemaining)
	}
	if err := s.DisableTwoFactor(ctx, u.ID, t0); err != nil {
		t.Fatal(err)
	}
	if tf, _ := s.FindTwoFactor(ctx, u.ID); *tf != (app.TwoFactor{UserID: u.ID}) {
		t.Fatalf("after disabling: %+v", tf)
	}
	if got, _ := s.FindUserByID(ctx, u.ID); got.TwoFactorEnabled {
		t.Fatal("still marked two-factor")
	}
}

// activityFeed: a team's feed lists newest first (ties newest written
// first), with people's current names, pages with a More flag, and never
// another team's events.
func activityFeed(t *testing.T, s Store) {
	u := mustUser(t, s, "act@example.com")
	other := mustUser(t, s, "target@example.com")
	add := func(team, typ string, at time.Time, mod func(*app.Activity)) {
		t.Helper()
		a := &app.Activity{ID: app.NewID("act"), TeamID: team, Type: typ, User: app.ActivityUser{ID: u.ID}, Timestamp: at}
		if mod != nil {
			mod(a)
		}
		if err := s.CreateActivity(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	team := u.PersonalTeamID
	add(team, "template_created", t0, func(a *app.Activity) {
		a.Template = &app.ActivityTemplate{ID: "tpl_1", Name: "Invoice"}
	})
	add(team, "member_invited", t0.Add(time.Second), func(a *app.Activity) {
		a.Target = &app.ActivityUser{Email: "invitee@example.com"}
		a.Details = map[string]any{"role": "member", "n": 2.5}
	})
	add(team, "role_changed", t0.Add(time.Second), func(a *app.Activity) { a.Target = &app.ActivityUser{ID: other.ID} })
	add(other.PersonalTeamID, "elsewhere", t0.Add(time.Hour), nil)
	renamed := "Renamed Actor"
	if _, err := s.UpdateUserProfile(ctx, u.ID, app.ProfileUpdate{Name: &renamed}, t0); err != nil {
		t.Fatal(err)
	}
	list, info, err := s.FindActivities(ctx, team, page(1, 2))
	if err != nil {
		t.Fatal(err)
	}
	if info.Total != 3 || !info.More || info.Estimate || len(list) != 2 {
		t.Fatalf("page 1: %d events, info %+v", len(list), info)
	}
	if list[0].Type != "role_changed" || list[1].Type != "member_invited" {
		t.Fatalf("order: %s, %s", list[0].Type, list[1].Type)
	}
	if list[0].User.Name != renamed || list[0].User.Email != u.Email || list[0].Target == nil || list[0].Target.Name != other.Name ||
		list[0].Target.Email != other.Email || !list[0].Timestamp.Equal(t0.Add(time.Second)) || list[0].TeamID != team {
		t.Fatalf("role_changed: %+v target %+v", list[0], list[0].Target)
	}
	if tg := list[1].Target; tg == nil || tg.ID != "" || tg.Email != "invitee@example.com" || fmt.Sprint(list[1].Details) != "map[n:2.5 role:member]" {
		t.Fatalf("member_invited: %+v target %+v", list[1], tg)
	}
	list, info, err = s.FindActivities(ctx, team, page(2, 2))
	if err != nil || len(list) != 1 || info.More || list[0].Template == nil || list[0].Template.Name != "Invoice" || list[0].Target != nil || list[0].Details != nil {
		t.Fatalf("page 2: %+v %+v %v", list, info, err)
	}
}

// deletionAndRestore: a deletion request hides the account from login
// lookups (not from FindAccountByEmail), revokes tokens, deactivates the
// keys it made, and can be undone once.
func deletionAndRestore(t *testing.T, s Store) {
	u := mustUser(t, s, "del@example.com")
	k := mustKey(t, s, u.PersonalTeamID, u.ID, "k", t0)
	if err := s.CreateRefreshToken(ctx, &app.RefreshToken{ID: app.NewID("rt"), UserID: u.ID, Hash: "rt", Family: "f", ExpiresAt: t0.Add(time.Hour), CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	at := t0.Add(time.Minute)
	if err := s.RequestUserDeletion(ctx, u.ID, "other", "bye", at); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "asked twice", s.RequestUserDeletion(ctx, u.ID, "other", "", at), app.ECodeDeletionRunning)
	_, err := s.FindUserByID(ctx, u.ID)
	wantCode(t, "login lookup while pending", err, app.ECodeUserNotFound)
	acct, err := s.FindAccountByEmail(ctx, u.Email)
	if err != nil || acct.DeletedAt == nil || !acct.DeletedAt.Equal(at) {
		t.Fatalf("account while pending: %+v %v", acct, err)
	}
	if got, _ := s.FindAPIKeyByID(ctx, u.PersonalTeamID, k.ID); got.IsActive {
		t.Fatal("the user's key is still active")
	}
	_, err = s.UseRefreshToken(ctx, "rt", at)
	wantCode(t, "refresh token while pending", err, app.ECodeBadRefreshToken)
	ids, err := s.FindUsersToPurge(ctx, at)
	if err != nil || fmt.Sprint(ids) != fmt.Sprint([]string{u.ID}) {
		t.Fatalf("to purge at the request: %v %v", ids, err)
	}
	if ids, _ := s.FindUsersToPurge(ctx, at.Add(-time.Millisecond)); len(ids) != 0 {
		t.Fatalf("to purge before the request: %v", ids)
	}
	if err := s.RestoreUser(ctx, u.ID, at); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "restored twice", s.RestoreUser(ctx, u.ID, at), app.ECodeRestoreFailed)
	if got, err := s.FindUserByID(ctx, u.ID); err != nil || got.DeletedAt != nil {
		t.Fatalf("after restore: %+v %v", got, err)
	}
	// A purge for a request the restore undid does nothing.
	if err := s.PurgeUser(ctx, u.ID, at, at); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FindUserByID(ctx, u.ID); err != nil {
		t.Fatalf("a restored account was purged: %v", err)
	}
}

// purgeHandsTeamsOn: purging an account deletes its personal team, hands
// each team it owned to the longest-standing admin (else member), deletes
// a team with nobody left, records it in the feeds, erases the personal
// data and frees the address.
func purgeHandsTeamsOn(t *testing.T, s Store) {
	u := mustUser(t, s, "gone@example.com")
	admin1 := mustUser(t, s, "admin1@example.com")
	admin2 := mustUser(t, s, "admin2@example.com")
	member := mustUser(t, s, "member@example.com")
	shared := mustTeam(t, s, u, "shared", "growth", t0)
	join(t, s, shared, u, member, app.RoleMember, t0.Add(time.Minute))
	join(t, s, shared, u, admin2, app.RoleAdmin, t0.Add(3*time.Minute))
	join(t, s, shared, u, admin1, app.RoleAdmin, t0.Add(2*time.Minute))
	alone := mustTeam(t, s, u, "alone", "growth", t0)
	guestOf := mustTeam(t, s, member, "guest-of", "growth", t0)
	join(t, s, guestOf, member, u, app.RoleViewer, t0)
	if err := s.StartTwoFactor(ctx, u.ID, "S", []string{"c"}, t0); err != nil {
		t.Fatal(err)
	}
	at := t0.Add(time.Hour)
	if err := s.RequestUserDeletion(ctx, u.ID, "", "", at); err != nil {
		t.Fatal(err)
	}
	// Not yet: the request is after before.
	if err := s.PurgeUser(ctx, u.ID, at.Add(-time.Second), at); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FindAccountByEmail(ctx, u.Email); err != nil {
		t.Fatalf("purged too early: %v", err)
	}
	purged := at.Add(30 * 24 * time.Hour)
	if err := s.PurgeUser(ctx, u.ID, purged, purged); err != nil {
		t.Fatal(err)
	}
	_, err := s.FindAccountByEmail(ctx, u.Email)
	wantCode(t, "purged account", err, app.ECodeUserNotFound)
	_, err = s.FindTeam(ctx, u.PersonalTeamID)
	wantCode(t, "personal team", err, app.ECodeTeamNotFound)
	_, err = s.FindTeam(ctx, alone.ID)
	wantCode(t, "a team with nobody left", err, app.ECodeTeamNotFound)
	got, err := s.FindTeam(ctx, shared.ID)
	if err != nil || got.OwnerID != admin1.ID || got.MemberCount != 3 {
		t.Fatalf("shared team: %+v %v, want owned by admin1", got, err)
	}
	if m, _ := s.FindMember(ctx, shared.ID, admin1.ID); m.Role != app.RoleOwner {
		t.Fatalf("heir's role %s", m.Role)
	}
	if list, _, _ := s.FindMembers(ctx, guestOf.ID, page(1, 10)); len(list) != 1 {
		t.Fatalf("the team it was a guest of keeps %d members, want 1", len(list))
	}
	feed, _, err := s.FindActivities(ctx, shared.ID, page(1, 10))
	if err != nil || len(feed) != 2 {
		t.Fatalf("shared feed: %v %v", feed, err)
	}
	types := map[string]*app.Activity{}
	for _, a := range feed {
		types[a.Type] = a
	}
	rc, left := types[app.ActivityRoleChanged], types[app.ActivityMemberLeft]
	if rc == nil || left == nil || rc.Target == nil || rc.Target.ID != admin1.ID || rc.Details["from"] != app.RoleAdmin ||
		rc.User.Name != "Deleted user" || rc.User.Email != "" || !rc.Timestamp.Equal(purged) {
		t.Fatalf("feed after the purge: %+v %+v", rc, left)
	}
	if feed, _, _ := s.FindActivities(ctx, guestOf.ID, page(1, 10)); len(feed) != 1 || feed[0].Type != app.ActivityMemberLeft {
		t.Fatalf("guest team feed: %v", feed)
	}
	if tf, _ := s.FindTwoFactor(ctx, u.ID); tf.Secret != "" {
		t.Fatal("two-factor secret kept")
	}
	// The address is free for a new account; purging again does nothing.
	mustUser(t, s, "gone@example.com")
	if err := s.PurgeUser(ctx, u.ID, purged, purged); err != nil {
		t.Fatal(err)
	}
}
