package storetest

import (
	"testing"
	"time"

	"folio/app"
)

var accountCases = []Case{
	{"UserReadBack", userReadBack},
	{"CreateUserDuplicateEmail", createUserDuplicateEmail},
	{"UserUpdatesNeedALiveUser", userUpdatesNeedALiveUser},
	{"RefreshTokenReuseRevokesFamily", refreshTokenReuseRevokesFamily},
	{"RefreshTokenSpentOnceConcurrently", refreshTokenSpentOnceConcurrently},
	{"EmailTokenSingleUse", emailTokenSingleUse},
	{"Sessions", sessions},
}

// userReadBack: a user reads back field for field by id and by email, with
// its personal team and owner membership made in the same call.
func userReadBack(t *testing.T, s Store) {
	at := t0.Add(1234 * time.Millisecond)
	u := mustUserAt(t, s, "read@example.com", at)
	for _, find := range []func() (*app.User, error){
		func() (*app.User, error) { return s.FindUserByID(ctx, u.ID) },
		func() (*app.User, error) { return s.FindUserByEmail(ctx, "read@example.com") },
	} {
		got, err := find()
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != u.ID || got.Email != u.Email || got.Name != u.Name || got.PasswordHash != "hash" || got.Timezone != "Europe/Berlin" ||
			got.PersonalTeamID != u.PersonalTeamID || got.EmailVerified || got.TwoFactorEnabled || got.DeletedAt != nil || got.PendingEmail != "" {
			t.Fatalf("read back %+v, wrote %+v", got, u)
		}
		if !got.CreatedAt.Equal(at) || !got.UpdatedAt.Equal(at) || got.CreatedAt.Location() != time.UTC || !got.SessionsValidFrom.Equal(time.UnixMilli(0)) {
			t.Fatalf("times %v %v %v, want %v in UTC", got.CreatedAt, got.UpdatedAt, got.SessionsValidFrom, at)
		}
	}
	team, err := s.FindTeam(ctx, u.PersonalTeamID)
	if err != nil || !team.IsPersonal || team.OwnerID != u.ID || team.MemberCount != 1 || team.Plan != "free" {
		t.Fatalf("personal team %+v %v", team, err)
	}
	m, err := s.FindMember(ctx, team.ID, u.ID)
	if err != nil || m.Role != app.RoleOwner || m.Email != u.Email || m.Name != u.Name || !m.JoinedAt.Equal(at) {
		t.Fatalf("owner membership %+v %v", m, err)
	}
	_, err = s.FindUserByID(ctx, "usr_missing")
	wantCode(t, "unknown id", err, app.ECodeUserNotFound)
	_, err = s.FindUserByEmail(ctx, "nobody@example.com")
	wantCode(t, "unknown email", err, app.ECodeUserNotFound)
}

// createUserDuplicateEmail: a taken address is ERR_USER_002 and the failed
// signup leaves no team behind.
func createUserDuplicateEmail(t *testing.T, s Store) {
	mustUser(t, s, "a@example.com")
	u := &app.User{ID: app.NewID("usr"), Email: "a@example.com", Name: "N", PasswordHash: "x", PersonalTeamID: "team_x", CreatedAt: t0, UpdatedAt: t0}
	err := s.CreateUser(ctx, u, &app.Team{ID: "team_x", Slug: "x", OwnerID: u.ID, Plan: "free", CreatedAt: t0, UpdatedAt: t0})
	wantCode(t, "duplicate email", err, app.ECodeEmailInUse)
	_, err = s.FindTeam(ctx, "team_x")
	wantCode(t, "orphan team", err, app.ECodeTeamNotFound)
	// A taken personal slug fails the whole signup too.
	first, _ := s.FindUserByEmail(ctx, "a@example.com")
	personal, _ := s.FindTeam(ctx, first.PersonalTeamID)
	u2 := &app.User{ID: app.NewID("usr"), Email: "b@example.com", Name: "N", PasswordHash: "x", PersonalTeamID: "team_y", CreatedAt: t0, UpdatedAt: t0}
	err = s.CreateUser(ctx, u2, &app.Team{ID: "team_y", Slug: personal.Slug, OwnerID: u2.ID, Plan: "free", CreatedAt: t0, UpdatedAt: t0})
	wantCode(t, "taken slug", err, app.ECodeTeamSlugTaken)
	_, err = s.FindUserByEmail(ctx, "b@example.com")
	wantCode(t, "user of a failed signup", err, app.ECodeUserNotFound)
}

// userUpdatesNeedALiveUser: verification and password changes apply to a
// known user and are ERR_USER_001 otherwise.
func userUpdatesNeedALiveUser(t *testing.T, s Store) {
	u := mustUser(t, s, "upd@example.com")
	later := t0.Add(time.Hour)
	if err := s.SetUserVerified(ctx, u.ID, later); err != nil {
		t.Fatal(err)
	}
	if err := s.SetUserPassword(ctx, u.ID, "new-hash", later.Add(time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	got, err := s.FindUserByID(ctx, u.ID)
	if err != nil || !got.EmailVerified || got.PasswordHash != "new-hash" || !got.UpdatedAt.Equal(later.Add(time.Millisecond)) || !got.CreatedAt.Equal(t0) {
		t.Fatalf("after updates: %+v %v", got, err)
	}
	wantCode(t, "verify unknown", s.SetUserVerified(ctx, "usr_missing", later), app.ECodeUserNotFound)
	wantCode(t, "password of unknown", s.SetUserPassword(ctx, "usr_missing", "h", later), app.ECodeUserNotFound)
}

// refreshTokenReuseRevokesFamily: a spent token presented again revokes
// its whole family; an expired token is refused.
func refreshTokenReuseRevokesFamily(t *testing.T, s Store) {
	u := mustUser(t, s, "r@example.com")
	mk := func(hash string) {
		t.Helper()
		if err := s.CreateRefreshToken(ctx, &app.RefreshToken{ID: app.NewID("rt"), UserID: u.ID, Hash: hash, Family: "f1", ExpiresAt: t0.Add(time.Hour), CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
	}
	mk("h1")
	rt, err := s.UseRefreshToken(ctx, "h1", t0)
	if err != nil || rt.UserID != u.ID || rt.Family != "f1" || !rt.ExpiresAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("use: %+v %v", rt, err)
	}
	mk("h2")
	_, err = s.UseRefreshToken(ctx, "h1", t0)
	wantCode(t, "reuse", err, app.ECodeBadRefreshToken)
	_, err = s.UseRefreshToken(ctx, "h2", t0)
	wantCode(t, "family member after reuse", err, app.ECodeBadRefreshToken)
	mk("h3")
	_, err = s.UseRefreshToken(ctx, "h3", t0.Add(2*time.Hour))
	wantCode(t, "expired token", err, app.ECodeBadRefreshToken)
	_, err = s.UseRefreshToken(ctx, "unknown", t0)
	wantCode(t, "unknown token", err, app.ECodeBadRefreshToken)
	// Logout revokes the family.
	if err := s.CreateRefreshToken(ctx, &app.RefreshToken{ID: app.NewID("rt"), UserID: u.ID, Hash: "g1", Family: "f2", ExpiresAt: t0.Add(time.Hour), CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeRefreshToken(ctx, "g1", t0); err != nil {
		t.Fatal(err)
	}
	_, err = s.UseRefreshToken(ctx, "g1", t0)
	wantCode(t, "revoked token", err, app.ECodeBadRefreshToken)
}

// refreshTokenSpentOnceConcurrently: of eight requests spending one token
// at once (several replicas, say), exactly one gets it.
func refreshTokenSpentOnceConcurrently(t *testing.T, s Store) {
	u := mustUser(t, s, "rc@example.com")
	if err := s.CreateRefreshToken(ctx, &app.RefreshToken{ID: app.NewID("rt"), UserID: u.ID, Hash: "once", Family: "f", ExpiresAt: t0.Add(time.Hour), CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	ok := 0
	for _, err := range concurrently(8, func(int) error { _, err := s.UseRefreshToken(ctx, "once", t0); return err }) {
		switch app.ErrorCode(err) {
		case "":
			ok++
		case app.ECodeBadRefreshToken:
		default:
			t.Fatalf("use: %v", err)
		}
	}
	if ok != 1 {
		t.Fatalf("the token was spent %d times", ok)
	}
}

// emailTokenSingleUse: a mail token is spent once, for its purpose, before
// it expires.
func emailTokenSingleUse(t *testing.T, s Store) {
	u := mustUser(t, s, "mail@example.com")
	for _, h := range []string{"e1", "e2"} {
		if err := s.CreateEmailToken(ctx, &app.EmailToken{Hash: h, UserID: u.ID, Purpose: app.PurposeVerifyEmail, Email: u.Email, ExpiresAt: t0.Add(time.Hour), CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.ConsumeEmailToken(ctx, "e1", "other_purpose", t0)
	wantCode(t, "wrong purpose", err, app.ECodeBadEmailToken)
	et, err := s.ConsumeEmailToken(ctx, "e1", app.PurposeVerifyEmail, t0)
	if err != nil || et.UserID != u.ID || et.Email != u.Email || !et.ExpiresAt.Equal(t0.Add(time.Hour)) || !et.CreatedAt.Equal(t0) {
		t.Fatalf("consume: %+v %v", et, err)
	}
	_, err = s.ConsumeEmailToken(ctx, "e1", app.PurposeVerifyEmail, t0)
	wantCode(t, "second use", err, app.ECodeBadEmailToken)
	_, err = s.ConsumeEmailToken(ctx, "e2", app.PurposeVerifyEmail, t0.Add(time.Hour))
	wantCode(t, "at expiry", err, app.ECodeBadEmailToken)
}

// sessions: a dashboard session reads back by its hash, follows its team,
// and ends alone, with its user's others, or when expired or idle.
func sessions(t *testing.T, s Store) {
	u := mustUser(t, s, "sess@example.com")
	other := mustUser(t, s, "other@example.com")
	mk := func(id, hash, user string, created time.Time) *app.WebSession {
		t.Helper()
		ws := &app.WebSession{ID: id, Hash: hash, UserID: user, TeamID: "team_a", Pending2FA: id == "s1", UserAgent: "UA", IP: "192.0.2.1",
			CreatedAt: created, LastSeenAt: created, ExpiresAt: created.Add(30 * 24 * time.Hour)}
		if err := s.CreateSession(ctx, ws); err != nil {
			t.Fatal(err)
		}
		return ws
	}
	s1 := mk("s1", "h1", u.ID, t0)
	mk("s2", "h2", u.ID, t0)
	mk("s3", "h3", u.ID, t0)
	mk("s4", "h4", other.ID, t0)
	got, err := s.FindSessionByHash(ctx, "h1")
	if err != nil || *got != *s1 {
		t.Fatalf("read back %+v %v, wrote %+v", got, err, s1)
	}
	_, err = s.FindSessionByHash(ctx, "nope")
	wantCode(t, "unknown session", err, app.ECodeUnauthenticated)

	seen := t0.Add(time.Minute)
	if err := s.TouchSession(ctx, "s1", "team_b", seen); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.FindSessionByHash(ctx, "h1"); got.TeamID != "team_b" || !got.LastSeenAt.Equal(seen) {
		t.Fatalf("after touch: %+v", got)
	}
	if err := s.DeleteSession(ctx, "s2"); err != nil {
		t.Fatal(err)
	}
	_, err = s.FindSessionByHash(ctx, "h2")
	wantCode(t, "deleted session", err, app.ECodeUnauthenticated)
	// Every session of the user but the one kept; other users' stay.
	mk("s5", "h5", u.ID, t0)
	if err := s.DeleteUserSessions(ctx, u.ID, "s1"); err != nil {
		t.Fatal(err)
	}
	for hash, live := range map[string]bool{"h1": true, "h3": false, "h5": false, "h4": true} {
		if _, err := s.FindSessionByHash(ctx, hash); (err == nil) != live {
			t.Fatalf("session %s after DeleteUserSessions: %v, want live=%v", hash, err, live)
		}
	}
	// Idle past app.SessionIdle (s4, never touched) or past the end.
	n, err := s.DeleteExpiredSessions(ctx, t0.Add(app.SessionIdle))
	if err != nil || n != 1 {
		t.Fatalf("expired idle: %d %v, want 1 (s4)", n, err)
	}
	if _, err := s.FindSessionByHash(ctx, "h1"); err != nil {
		t.Fatalf("touched session expired: %v", err)
	}
	n, err = s.DeleteExpiredSessions(ctx, t0.Add(30*24*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("expired at the end: %d %v, want 1 (s1)", n, err)
	}
	if err := s.DeleteUserSessions(ctx, u.ID, ""); err != nil {
		t.Fatal(err)
	}
}
