package app

import (
	"context"
	"strings"
	"time"
)

// Dashboard session lifetimes: a session ends after SessionIdle without a
// request or SessionMax after login, whichever comes first; the two-factor
// step of a login must follow the password within SessionPending.
const (
	SessionIdle    = 7 * 24 * time.Hour
	SessionMax     = 30 * 24 * time.Hour
	SessionPending = 5 * time.Minute
	// sessionTouch is how stale last_seen_at may get before a request
	// writes it again (one write per session per minute, not per request).
	sessionTouch = time.Minute
)

// WebSession is a dashboard login: the browser holds the token in a cookie,
// the store only its hash. It is separate from the API's access and refresh
// tokens.
type WebSession struct {
	ID     string
	Hash   string
	UserID string
	// TeamID is the team the dashboard acts on (the "current team").
	TeamID string
	// Pending2FA marks a login whose password was right but whose
	// two-factor code is still to come; it authenticates nothing.
	Pending2FA bool
	UserAgent  string
	IP         string
	CreatedAt  time.Time
	LastSeenAt time.Time
	ExpiresAt  time.Time
}

// live reports whether the session may still be used at now.
func (s *WebSession) live(now time.Time) bool {
	if !now.Before(s.ExpiresAt) {
		return false
	}
	if s.Pending2FA {
		return now.Before(s.CreatedAt.Add(SessionPending))
	}
	return now.Before(s.LastSeenAt.Add(SessionIdle))
}

// SessionStore keeps dashboard sessions.
type SessionStore interface {
	CreateSession(ctx context.Context, s *WebSession) error
	// FindSessionByHash returns a session by its token hash (ERR_AUTH_003 when none).
	FindSessionByHash(ctx context.Context, hash string) (*WebSession, error)
	// TouchSession records a request and the session's current team.
	TouchSession(ctx context.Context, id, teamID string, now time.Time) error
	DeleteSession(ctx context.Context, id string) error
	// DeleteUserSessions ends every session of a user but keepID ("" for all).
	DeleteUserSessions(ctx context.Context, userID, keepID string) error
	// DeleteExpiredSessions removes sessions past their end and returns how many.
	DeleteExpiredSessions(ctx context.Context, now time.Time) (int, error)
}

// SessionService signs people in and out of the dashboard and turns a
// session cookie into the same Principal a JWT gives the API, so every page
// goes through the services' rules like an API call.
type SessionService struct {
	Sessions SessionStore
	Auth     *AuthService
	Now      func() time.Time
}

// Client describes the browser of a new session (shown to its owner).
type Client struct {
	IP        string
	UserAgent string
	// LastTeams is the team each user last worked in on this browser
	// (user id to team id): a login there starts in it again.
	LastTeams map[string]string
}

// StartedSession is a new session and the token for its cookie.
type StartedSession struct {
	Token   string
	Session *WebSession
	User    *User
}

var errNoSession = &Error{Code: ECodeUnauthenticated, Message: "not signed in, or the session ended; log in again"}

// Login checks email and password with the API login's rules (throttling,
// accounts pending deletion, two-factor). With two-factor on and no code it
// returns a pending session and ERR_AUTH_011: CompleteLogin takes the code.
func (s *SessionService) Login(ctx context.Context, in LoginInput, c Client) (*StartedSession, error) {
	u, err := s.Auth.checkCredentials(ctx, in, c.IP)
	if err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	if err := deletionState(u, now, s.Auth.Config.BaseURL); err != nil {
		return nil, err
	}
	if u.TwoFactorEnabled {
		if strings.TrimSpace(in.Code) == "" {
			st, err := s.start(ctx, u, u.PersonalTeamID, c, true)
			if err != nil {
				return nil, err
			}
			return st, &Error{Code: ECodeTwoFactorRequired, Message: "enter the 6-digit code from your authenticator app, or a backup code"}
		}
		if err := checkSecondFactor(ctx, s.Auth.TwoFactor, u.ID, in.Code, now); err != nil {
			return nil, err
		}
	}
	return s.start(ctx, u, s.homeTeam(ctx, u, c), c, false)
}

// homeTeam is the team a login starts in: the one the user last worked in
// on this browser while they are still its member, else their personal team.
func (s *SessionService) homeTeam(ctx context.Context, u *User, c Client) string {
	if id := c.LastTeams[u.ID]; id != "" && id != u.PersonalTeamID {
		if m, err := s.Auth.Teams.FindMember(ctx, id, u.ID); err == nil {
			return m.TeamID
		}
	}
	return u.PersonalTeamID
}

// deletionState refuses accounts pending deletion like the API login does.
func deletionState(u *User, now time.Time, baseURL string) error {
	if u.DeletedAt == nil {
		return nil
	}
	purge := u.DeletedAt.Add(DeletionGrace)
	if !now.Before(purge) {
		return &Error{Code: ECodeDeletionRunning, Message: "this account is being deleted; it can no longer be restored"}
	}
	return (&Error{Code: ECodePendingDeletion, Message: "this account is pending deletion; restore it with POST /api/auth/restore before " + purge.Format(time.RFC3339)}).
		WithInfo("deletionRequestedAt", *u.DeletedAt, "purgeAt", purge, "restoreUrl", strings.TrimRight(baseURL, "/")+"/api/auth/restore")
}

// CompleteLogin takes the two-factor code for a pending login and replaces
// the pending session with a full one. Wrong codes count against the same
// per-email budget as password attempts.
func (s *SessionService) CompleteLogin(ctx context.Context, pendingToken, code string, c Client) (*StartedSession, error) {
	now := s.Now().UTC()
	ps, err := s.Sessions.FindSessionByHash(ctx, HashToken(pendingToken))
	if err != nil {
		return nil, errNoSession
	}
	if !ps.Pending2FA || !ps.live(now) {
		return nil, &Error{Code: ECodeUnauthenticated, Message: "the login expired; enter your email and password again"}
	}
	u, err := s.Auth.Users.FindUserByID(ctx, ps.UserID)
	if err != nil {
		return nil, errNoSession
	}
	if err := Throttle(ctx, s.Auth.Limiter, "login:email:"+u.Email, loginPerEmail, loginWindow, now); err != nil {
		return nil, err
	}
	if err := checkSecondFactor(ctx, s.Auth.TwoFactor, u.ID, code, now); err != nil {
		return nil, err
	}
	if err := s.Sessions.DeleteSession(ctx, ps.ID); err != nil {
		return nil, err
	}
	return s.start(ctx, u, s.homeTeam(ctx, u, c), c, false)
}

// Signup creates an account (mailing the verification link) and signs it in.
func (s *SessionService) Signup(ctx context.Context, in SignupInput, c Client) (*StartedSession, error) {
	if !s.Auth.Config.SignupOpen {
		return nil, &Error{Code: ECodeSignupClosed, Message: "signup is closed on this server; ask the operator for an account"}
	}
	u, err := s.Auth.CreateUser(ctx, CreateUserInput{SignupInput: in})
	if err != nil {
		return nil, err
	}
	return s.start(ctx, u, u.PersonalTeamID, c, false)
}

// Restore ends the pending deletion of an account (the API's restore, same
// credentials and two-factor code) and signs it in. The API token pair that
// restoring issues is revoked at once: the dashboard uses its own session.
func (s *SessionService) Restore(ctx context.Context, in LoginInput, c Client) (*StartedSession, error) {
	sess, err := s.Auth.RestoreAccount(ctx, in, c.IP)
	if err != nil {
		return nil, err
	}
	if err := s.Auth.Logout(ctx, sess.RefreshToken); err != nil {
		return nil, err
	}
	return s.start(ctx, sess.User, s.homeTeam(ctx, sess.User, c), c, false)
}

// Renew replaces the caller's session with a new one on the same team and
// ends the user's other sessions (after a password change).
func (s *SessionService) Renew(ctx context.Context, token string, c Client) (*StartedSession, error) {
	old, err := s.Sessions.FindSessionByHash(ctx, HashToken(token))
	if err != nil {
		return nil, errNoSession
	}
	u, err := s.Auth.Users.FindUserByID(ctx, old.UserID)
	if err != nil {
		return nil, errNoSession
	}
	st, err := s.start(ctx, u, old.TeamID, c, false)
	if err != nil {
		return nil, err
	}
	return st, s.Sessions.DeleteUserSessions(ctx, u.ID, st.Session.ID)
}

func (s *SessionService) start(ctx context.Context, u *User, teamID string, c Client, pending bool) (*StartedSession, error) {
	now := s.Now().UTC()
	token := "ses_" + RandomString(43)
	ua := c.UserAgent
	if len(ua) > 300 {
		ua = ua[:300]
	}
	ws := &WebSession{ID: NewID("ses"), Hash: HashToken(token), UserID: u.ID, TeamID: teamID, Pending2FA: pending,
		UserAgent: ua, IP: c.IP, CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(SessionMax)}
	if pending {
		ws.ExpiresAt = now.Add(SessionPending)
	}
	if err := s.Sessions.CreateSession(ctx, ws); err != nil {
		return nil, err
	}
	return &StartedSession{Token: token, Session: ws, User: u}, nil
}

// Authenticate turns a session token into the caller: the same Principal a
// JWT gives (Kind AuthJWT, so dashboard-only rules apply alike), acting on
// the session's team. A team the user has left falls back to the personal
// team. Password changes and account deletion end sessions, as they end JWTs.
func (s *SessionService) Authenticate(ctx context.Context, token string) (*Principal, *WebSession, error) {
	if token == "" {
		return nil, nil, errNoSession
	}
	now := s.Now().UTC()
	ws, err := s.Sessions.FindSessionByHash(ctx, HashToken(token))
	if err != nil {
		return nil, nil, errNoSession
	}
	if ws.Pending2FA || !ws.live(now) {
		return nil, nil, errNoSession
	}
	u, err := s.Auth.Users.FindUserByID(ctx, ws.UserID)
	if ErrorCode(err) == ECodeUserNotFound {
		return nil, nil, errNoSession
	} else if err != nil {
		return nil, nil, err
	}
	if ws.CreatedAt.Before(u.SessionsValidFrom.Truncate(time.Second)) {
		return nil, nil, &Error{Code: ECodeUnauthenticated, Message: "session ended by a password change; log in again"}
	}
	m, err := s.Auth.Teams.FindMember(ctx, ws.TeamID, u.ID)
	if ErrorCode(err) == ECodeTeamNotFound {
		m, err = s.Auth.Teams.FindMember(ctx, u.PersonalTeamID, u.ID)
	}
	if err != nil {
		return nil, nil, err
	}
	if m.TeamID != ws.TeamID || now.Sub(ws.LastSeenAt) > sessionTouch {
		ws.TeamID, ws.LastSeenAt = m.TeamID, now
		if err := s.Sessions.TouchSession(ctx, ws.ID, ws.TeamID, now); err != nil {
			return nil, nil, err
		}
	}
	return &Principal{Kind: AuthJWT, UserID: u.ID, TeamID: m.TeamID, Role: m.Role, Verified: u.EmailVerified}, ws, nil
}

// SwitchTeam makes the session act on another of the user's teams (by id
// or slug); a team the user is not a member of is not found.
func (s *SessionService) SwitchTeam(ctx context.Context, ws *WebSession, ref string) (*Team, error) {
	t, err := s.Auth.Teams.FindTeam(ctx, ref)
	if err != nil {
		return nil, err
	}
	if _, err := s.Auth.Teams.FindMember(ctx, t.ID, ws.UserID); err != nil {
		return nil, err
	}
	if err := s.Sessions.TouchSession(ctx, ws.ID, t.ID, s.Now().UTC()); err != nil {
		return nil, err
	}
	ws.TeamID = t.ID
	return t, nil
}

// Logout ends the session of token; unknown tokens are ignored.
func (s *SessionService) Logout(ctx context.Context, token string) error {
	if token == "" {
		return nil
	}
	ws, err := s.Sessions.FindSessionByHash(ctx, HashToken(token))
	if err != nil {
		return nil
	}
	return s.Sessions.DeleteSession(ctx, ws.ID)
}

// EndAll ends every session of a user (account deletion).
func (s *SessionService) EndAll(ctx context.Context, userID string) error {
	return s.Sessions.DeleteUserSessions(ctx, userID, "")
}

// Sweep removes expired sessions (a janitor task).
func (s *SessionService) Sweep(ctx context.Context) error {
	_, err := s.Sessions.DeleteExpiredSessions(ctx, s.Now().UTC())
	return err
}
