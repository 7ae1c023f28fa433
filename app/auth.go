package app

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/crypto/bcrypt"
)

// Token lifetimes (SPEC.md, OAuth token limits; DESIGN.md section 3).
const (
	AccessTokenTTL  = time.Hour
	RefreshTokenTTL = 30 * 24 * time.Hour
	VerifyTokenTTL  = 48 * time.Hour
	MinPassword     = 8
)

// Login throttling: per email and per client IP, in a 15-minute window.
const (
	loginWindow   = 15 * time.Minute
	loginPerEmail = 10
	loginPerIP    = 50
)

// AuthConfig holds what the accounts service needs from the operator.
type AuthConfig struct {
	JWTKey      []byte
	BaseURL     string
	SignupOpen  bool
	DefaultPlan string
	// BcryptCost defaults to bcrypt.DefaultCost.
	BcryptCost int
}

// AuthService signs users up and in, and authenticates requests.
type AuthService struct {
	Users     UserStore
	Teams     TeamStore
	Tokens    TokenStore
	Keys      KeyStore
	Accounts  AccountStore   // login and restore of accounts pending deletion
	TwoFactor TwoFactorStore // login with two-factor
	Mailer    Mailer
	Limiter   Limiter
	Config    AuthConfig
	Now       func() time.Time
	// Meta, when set, is the cache Keys, Users and Teams read through: a
	// request pins its generation once, here (nil: no cache).
	Meta *MetaCache
}

// Session is what signup, login and refresh answer.
type Session struct {
	User         *User  `json:"user"`
	AccessToken  string `json:"accessToken"`
	RefreshToken string `json:"refreshToken"`
	ExpiresIn    int    `json:"expiresIn"`
}

// SignupInput is the body of POST /api/auth/signup.
type SignupInput struct {
	Email    string `json:"email"`
	Password string `json:"password"`
	Name     string `json:"name"`
	// Next is a path of this site the verification link continues to (the
	// invitation a newcomer signed up from); the dashboard checks it again
	// when the link is opened. Not part of the API's body.
	Next string `json:"-"`
}

// Validate checks the fields and normalizes the email.
func (in *SignupInput) Validate() error {
	if in.Email == "" {
		return ErrRequired("email")
	}
	if in.Password == "" {
		return ErrRequired("password")
	}
	if strings.TrimSpace(in.Name) == "" {
		return ErrRequired("name")
	}
	email, err := NormalizeEmail(in.Email)
	if err != nil {
		return err
	}
	in.Email = email
	in.Name = strings.TrimSpace(in.Name)
	if utf8.RuneCountInString(in.Name) > 255 {
		return ErrInvalid("name", "name must be at most 255 characters")
	}
	return checkPassword("password", in.Password)
}

func checkPassword(field, pw string) error {
	if utf8.RuneCountInString(pw) < MinPassword {
		return ErrInvalid(field, "password must be at least %d characters", MinPassword)
	}
	if len(pw) > 72 {
		return ErrInvalid(field, "password must be at most 72 bytes")
	}
	return nil
}

// CreateUserInput is what an operator or signup gives to create an account.
type CreateUserInput struct {
	SignupInput
	Verified bool
}

// Signup creates an account with its personal team and mails a verification link.
func (s *AuthService) Signup(ctx context.Context, in SignupInput) (*Session, error) {
	if !s.Config.SignupOpen {
		return nil, &Error{Code: ECodeSignupClosed, Message: "signup is closed on this server; ask the operator for an account"}
	}
	u, err := s.CreateUser(ctx, CreateUserInput{SignupInput: in})
	if err != nil {
		return nil, err
	}
	return s.newSession(ctx, u, "")
}

// CreateUser creates a user and personal team; unverified users get a
// verification mail. It is used by signup and by `folio admin create-user`.
func (s *AuthService) CreateUser(ctx context.Context, in CreateUserInput) (*User, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	hash, err := s.hashPassword(in.Password)
	if err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	u := &User{
		ID: NewID("usr"), Email: in.Email, Name: in.Name, PasswordHash: hash,
		EmailVerified: in.Verified, CreatedAt: now, UpdatedAt: now,
	}
	plan := s.Config.DefaultPlan
	if plan == "" {
		plan = "free"
	}
	team := &Team{
		ID: NewID("team"), Name: in.Name + "'s team", Slug: "personal-" + strings.ToLower(RandomString(10)),
		IsPersonal: true, Plan: plan, OwnerID: u.ID, MemberCount: 1, CreatedAt: now, UpdatedAt: now,
	}
	u.PersonalTeamID = team.ID
	if err := s.Users.CreateUser(ctx, u, team); err != nil {
		return nil, err
	}
	if !u.EmailVerified {
		if err := s.sendVerification(ctx, u, in.Next); err != nil {
			return nil, err
		}
	}
	return u, nil
}

func (s *AuthService) hashPassword(pw string) (string, error) {
	cost := s.Config.BcryptCost
	if cost == 0 {
		cost = bcrypt.DefaultCost
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(pw), cost)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return string(hash), nil
}

// sendVerification mails a verification link; next, when set, is a local
// path the link's page continues to.
func (s *AuthService) sendVerification(ctx context.Context, u *User, next string) error {
	raw := RandomString(40)
	now := s.Now().UTC()
	t := &EmailToken{Hash: HashToken(raw), UserID: u.ID, Purpose: PurposeVerifyEmail, Email: u.Email, ExpiresAt: now.Add(VerifyTokenTTL), CreatedAt: now}
	if err := s.Tokens.CreateEmailToken(ctx, t); err != nil {
		return err
	}
	link := strings.TrimRight(s.Config.BaseURL, "/") + "/verify-email?token=" + raw
	if strings.HasPrefix(next, "/") && !strings.HasPrefix(next, "//") {
		link += "&next=" + url.QueryEscape(next)
	}
	body := fmt.Sprintf("Hello %s,\r\n\r\nConfirm your email address for Folio by opening this link:\r\n\r\n%s\r\n\r\nor by sending this token to POST /api/auth/verify-email:\r\n\r\n%s\r\n\r\nThe link expires in 48 hours.\r\n",
		u.Name, link, raw)
	return s.Mailer.Send(ctx, Mail{To: u.Email, Subject: "Verify your email address", Body: body})
}

// LoginInput is the body of POST /api/auth/login.
type LoginInput struct {
	Email    string `json:"email"`
	Password string `json:"password"`
	Code     string `json:"code"`
}

// Login checks credentials, throttled per email and per client IP, then the
// two-factor code when two-factor is on. An account pending deletion gets
// ERR_USER_004 (restorable) or, past its grace period, ERR_USER_005.
func (s *AuthService) Login(ctx context.Context, in LoginInput, clientIP string) (*Session, error) {
	u, err := s.checkCredentials(ctx, in, clientIP)
	if err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	if u.DeletedAt != nil {
		purge := u.DeletedAt.Add(DeletionGrace)
		if !now.Before(purge) {
			return nil, &Error{Code: ECodeDeletionRunning, Message: "this account is being deleted; it can no longer be restored"}
		}
		return nil, (&Error{Code: ECodePendingDeletion, Message: "this account is pending deletion; restore it with POST /api/auth/restore before " + purge.Format(time.RFC3339)}).
			WithInfo("deletionRequestedAt", *u.DeletedAt, "purgeAt", purge, "restoreUrl", strings.TrimRight(s.Config.BaseURL, "/")+"/api/auth/restore")
	}
	if u.TwoFactorEnabled {
		if err := checkSecondFactor(ctx, s.TwoFactor, u.ID, in.Code, now); err != nil {
			return nil, err
		}
	}
	return s.newSession(ctx, u, "")
}

// checkCredentials finds the account (pending deletion included) and checks
// its password, throttled per email and per client IP.
func (s *AuthService) checkCredentials(ctx context.Context, in LoginInput, clientIP string) (*User, error) {
	if in.Email == "" {
		return nil, ErrRequired("email")
	}
	if in.Password == "" {
		return nil, ErrRequired("password")
	}
	email := strings.ToLower(strings.TrimSpace(in.Email))
	now := s.Now()
	if err := Throttle(ctx, s.Limiter, "login:ip:"+clientIP, loginPerIP, loginWindow, now); err != nil {
		return nil, err
	}
	if err := Throttle(ctx, s.Limiter, "login:email:"+email, loginPerEmail, loginWindow, now); err != nil {
		return nil, err
	}
	bad := &Error{Code: ECodeBadCredentials, Message: "invalid email or password"}
	u, err := s.Accounts.FindAccountByEmail(ctx, email)
	if ErrorCode(err) == ECodeUserNotFound {
		// Spend the same time as a real check so timing does not reveal accounts.
		_ = bcrypt.CompareHashAndPassword(dummyHash, []byte(in.Password))
		return nil, bad
	} else if err != nil {
		return nil, err
	}
	if bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte(in.Password)) != nil {
		return nil, bad
	}
	return u, nil
}

// RestoreAccount ends the pending deletion of an account, with the same
// credentials as login (two-factor code included), and signs it in. API keys
// deactivated by the deletion stay inactive until an admin reactivates them.
func (s *AuthService) RestoreAccount(ctx context.Context, in LoginInput, clientIP string) (*Session, error) {
	u, err := s.checkCredentials(ctx, in, clientIP)
	if err != nil {
		return nil, err
	}
	if u.DeletedAt == nil {
		return nil, &Error{Code: ECodeAccountNotDelete, Message: "this account is not deleted; there is nothing to restore"}
	}
	now := s.Now().UTC()
	if !now.Before(u.DeletedAt.Add(DeletionGrace)) {
		return nil, &Error{Code: ECodeRestoreFailed, Message: "failed to restore the account: its 30-day grace period has ended"}
	}
	if u.TwoFactorEnabled {
		if err := checkSecondFactor(ctx, s.TwoFactor, u.ID, in.Code, now); err != nil {
			return nil, err
		}
	}
	if err := s.Accounts.RestoreUser(ctx, u.ID, now); err != nil {
		return nil, err
	}
	u.DeletedAt = nil
	return s.newSession(ctx, u, "")
}

// dummyHash is a bcrypt hash at bcrypt.DefaultCost (of
// "folio-timing-equalizer"): comparing with it costs what checking a real
// password does. It is a constant because generating it at start-up took
// 60-160 ms of every start (TestDummyHashCost checks its cost).
var dummyHash = []byte("$2a$10$9vXp.CZplvrrb9BTKyozR.Roo8DZBD0DvRDicH.xnz79wEmSLaAie")

// Refresh rotates a refresh token into a new session.
func (s *AuthService) Refresh(ctx context.Context, refreshToken string) (*Session, error) {
	if refreshToken == "" {
		return nil, ErrRequired("refreshToken")
	}
	old, err := s.Tokens.UseRefreshToken(ctx, HashToken(refreshToken), s.Now().UTC())
	if err != nil {
		return nil, err
	}
	u, err := s.Users.FindUserByID(ctx, old.UserID)
	if err != nil {
		return nil, err
	}
	return s.newSession(ctx, u, old.Family)
}

// Logout revokes a refresh token. Unknown tokens are ignored.
func (s *AuthService) Logout(ctx context.Context, refreshToken string) error {
	if refreshToken == "" {
		return ErrRequired("refreshToken")
	}
	return s.Tokens.RevokeRefreshToken(ctx, HashToken(refreshToken), s.Now().UTC())
}

// VerifyEmail consumes a token from a verification or email-change mail.
func (s *AuthService) VerifyEmail(ctx context.Context, token string) error {
	if token == "" {
		return ErrRequired("token")
	}
	now := s.Now().UTC()
	t, err := s.Tokens.ConsumeEmailToken(ctx, HashToken(token), PurposeVerifyEmail, now)
	if ErrorCode(err) == ECodeBadEmailToken && s.Accounts != nil {
		if t, err := s.Tokens.ConsumeEmailToken(ctx, HashToken(token), PurposeChangeEmail, now); err == nil {
			return s.Accounts.ConfirmEmailChange(ctx, t.UserID, t.Email, now)
		}
	}
	if err != nil {
		return err
	}
	return s.Users.SetUserVerified(ctx, t.UserID, now)
}

// VerifyEmailByAddress marks an account verified (operator command).
func (s *AuthService) VerifyEmailByAddress(ctx context.Context, email string) error {
	u, err := s.Users.FindUserByEmail(ctx, strings.ToLower(strings.TrimSpace(email)))
	if ErrorCode(err) == ECodeUserNotFound {
		return Errorf(ECodeUserNotFound, "no user with email %q", email)
	} else if err != nil {
		return err
	}
	return s.Users.SetUserVerified(ctx, u.ID, s.Now().UTC())
}

// ResendVerification mails a new verification link to the caller; next, when
// set, is a local path the link's page continues to (as at signup).
func (s *AuthService) ResendVerification(ctx context.Context, next string) error {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return err
	}
	u, err := s.Users.FindUserByID(ctx, p.UserID)
	if err != nil {
		return err
	}
	if u.EmailVerified {
		return ErrInvalid("email", "email address is already verified")
	}
	if err := Throttle(ctx, s.Limiter, "verify-mail:"+u.ID, 5, time.Hour, s.Now()); err != nil {
		return err
	}
	return s.sendVerification(ctx, u, next)
}

// Me returns the calling user.
func (s *AuthService) Me(ctx context.Context) (*User, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	return s.Users.FindUserByID(ctx, p.UserID)
}

func (s *AuthService) newSession(ctx context.Context, u *User, family string) (*Session, error) {
	now := s.Now().UTC()
	access, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{
		Subject:   u.ID,
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(AccessTokenTTL)),
		ID:        RandomString(12),
	}).SignedString(s.Config.JWTKey)
	if err != nil {
		return nil, fmt.Errorf("sign access token: %w", err)
	}
	raw := "rt_" + RandomString(48)
	if family == "" {
		family = NewID("rtf")
	}
	rt := &RefreshToken{ID: NewID("rt"), UserID: u.ID, Hash: HashToken(raw), Family: family, ExpiresAt: now.Add(RefreshTokenTTL), CreatedAt: now}
	if err := s.Tokens.CreateRefreshToken(ctx, rt); err != nil {
		return nil, err
	}
	return &Session{User: u, AccessToken: access, RefreshToken: raw, ExpiresIn: int(AccessTokenTTL.Seconds())}, nil
}

// Authenticate turns a bearer token into a Principal: an API key (svc_sk_...)
// acts on its own team; a JWT acts on teamID when given (the caller must be a
// member) or on the user's personal team.
func (s *AuthService) Authenticate(ctx context.Context, bearer, teamID string) (*Principal, error) {
	ctx = s.Meta.Pin(ctx)
	p, err := s.authenticate(ctx, bearer, teamID)
	if err == nil {
		p.metaGen, _ = pinnedGen(ctx)
	}
	return p, err
}

func (s *AuthService) authenticate(ctx context.Context, bearer, teamID string) (*Principal, error) {
	if strings.HasPrefix(bearer, KeyPrefix) {
		return s.authenticateKey(ctx, bearer)
	}
	claims := &jwt.RegisteredClaims{}
	_, err := jwt.ParseWithClaims(bearer, claims, func(*jwt.Token) (any, error) { return s.Config.JWTKey, nil },
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithExpirationRequired(), jwt.WithTimeFunc(s.Now))
	if err != nil {
		msg := "invalid access token"
		if errors.Is(err, jwt.ErrTokenExpired) {
			msg = "access token expired"
		}
		return nil, &Error{Code: ECodeUnauthenticated, Message: msg}
	}
	u, err := s.Users.FindUserByID(ctx, claims.Subject)
	if ErrorCode(err) == ECodeUserNotFound {
		return nil, &Error{Code: ECodeUnauthenticated, Message: "invalid access token"}
	} else if err != nil {
		return nil, err
	}
	// A password change signs out every session issued before it.
	if claims.IssuedAt == nil || claims.IssuedAt.Before(u.SessionsValidFrom.Truncate(time.Second)) {
		return nil, &Error{Code: ECodeUnauthenticated, Message: "session ended by a password change; log in again"}
	}
	if teamID == "" {
		teamID = u.PersonalTeamID
	}
	// A team the user is not a member of is reported as not found.
	m, err := s.Teams.FindMember(ctx, teamID, u.ID)
	if err != nil {
		return nil, err
	}
	return &Principal{Kind: AuthJWT, UserID: u.ID, TeamID: m.TeamID, Role: m.Role, Verified: u.EmailVerified}, nil
}
