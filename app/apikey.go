package app

import (
	"context"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// KeyPrefix starts every API key: the service prefix and the secret-key marker.
const KeyPrefix = "svc_sk_"

// Permission strings (DESIGN.md section 4).
const (
	PermTemplatesRead    = "templates:read"
	PermTemplatesWrite   = "templates:write"
	PermAttachmentsRead  = "attachments:read"
	PermAttachmentsWrite = "attachments:write"
	PermEmailsRead       = "emails:read"
	PermEmailsWrite      = "emails:write"
	PermWebhooksWrite    = "webhooks:write"
	PermAnalyticsRead    = "analytics:read"
)

// APIKey is a team's secret key for programmatic access.
type APIKey struct {
	ID          string     `json:"id"`
	TeamID      string     `json:"teamId"`
	Name        string     `json:"name"`
	KeyType     string     `json:"keyType"`
	KeyPrefix   string     `json:"keyPrefix"`
	Permissions []string   `json:"permissions"`
	IsActive    bool       `json:"isActive"`
	PlainKey    string     `json:"plainKey,omitempty"`
	LastUsedAt  *time.Time `json:"lastUsedAt"`
	CreatedAt   time.Time  `json:"createdAt"`
	UpdatedAt   time.Time  `json:"updatedAt"`

	CreatedBy     string `json:"-"`
	Hash          string `json:"-"`
	TotalRequests int64  `json:"-"`
	RequestsToday int64  `json:"-"`
	RequestsDay   string `json:"-"`
}

// KeyFlags are the create/update permission flags of the management API.
type KeyFlags struct {
	SendEmails      *bool `json:"send_emails"`
	ReadAnalytics   *bool `json:"read_analytics"`
	ManageTemplates *bool `json:"manage_templates"`
}

// Permissions maps flags to permission strings; absent flags take the
// defaults (send_emails and read_analytics on, manage_templates off).
func (f KeyFlags) Permissions() []string {
	on := func(b *bool, def bool) bool {
		if b == nil {
			return def
		}
		return *b
	}
	perms := []string{PermTemplatesRead, PermAttachmentsRead, PermEmailsRead}
	if on(f.SendEmails, true) {
		perms = append(perms, PermAttachmentsWrite, PermEmailsWrite, PermWebhooksWrite)
	}
	if on(f.ReadAnalytics, true) {
		perms = append(perms, PermAnalyticsRead)
	}
	if on(f.ManageTemplates, false) {
		perms = append(perms, PermTemplatesWrite)
	}
	return perms
}

// flagsOf recovers the flags from stored permissions, so a PATCH that sets
// one flag keeps the others.
func flagsOf(perms []string) KeyFlags {
	b := func(v bool) *bool { return &v }
	return KeyFlags{
		SendEmails:      b(slices.Contains(perms, PermAttachmentsWrite)),
		ReadAnalytics:   b(slices.Contains(perms, PermAnalyticsRead)),
		ManageTemplates: b(slices.Contains(perms, PermTemplatesWrite)),
	}
}

// KeyStats is the usage statistics object of GET /api/api-keys/:id/stats.
type KeyStats struct {
	TotalRequests      int64      `json:"totalRequests"`
	RequestsToday      int64      `json:"requestsToday"`
	LastUsedAt         *time.Time `json:"lastUsedAt"`
	DocumentsGenerated int64      `json:"documentsGenerated"`
	EmailsSent         int64      `json:"emailsSent"`
}

// KeyFilter selects keys of one team for listing.
type KeyFilter struct {
	TeamID    string
	IsActive  *bool
	SortBy    string // createdAt, updatedAt, name, lastUsedAt
	SortOrder string // asc or desc
	Page      Page
}

// KeyUpdate holds the optional fields of PATCH /api/api-keys/:id.
type KeyUpdate struct {
	Name        *string
	Permissions []string
	IsActive    *bool
}

// KeyStore keeps API keys. Every method but FindAPIKeyByHash is team-scoped.
type KeyStore interface {
	CreateAPIKey(ctx context.Context, k *APIKey) error
	FindAPIKeyByID(ctx context.Context, teamID, id string) (*APIKey, error)
	FindAPIKeyByHash(ctx context.Context, hash string) (*APIKey, error)
	FindAPIKeys(ctx context.Context, f KeyFilter) ([]*APIKey, int, error)
	UpdateAPIKey(ctx context.Context, teamID, id string, upd KeyUpdate, now time.Time) (*APIKey, error)
	DeleteAPIKey(ctx context.Context, teamID, id string) error
	// TouchAPIKey records one request made with the key.
	TouchAPIKey(ctx context.Context, id string, now time.Time) error
	// CountKeyDocuments counts completed documents generated with the key.
	CountKeyDocuments(ctx context.Context, teamID, id string) (int64, error)
}

// KeyService manages API keys. It is reachable only with a JWT.
type KeyService struct {
	Keys  KeyStore
	Teams TeamStore
	Now   func() time.Time
}

// KeyInput is the body of POST and PATCH /api/api-keys.
type KeyInput struct {
	Name        *string   `json:"name"`
	Permissions *KeyFlags `json:"permissions"`
	IsActive    *bool     `json:"isActive"`
}

func jwtAdmin(ctx context.Context) (*Principal, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if p.Kind != AuthJWT {
		return nil, &Error{Code: ECodeJWTOnly, Message: "this endpoint needs a dashboard login (JWT); API keys cannot use it"}
	}
	return p, nil
}

func checkKeyName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", ErrRequired("name")
	}
	if utf8.RuneCountInString(name) > 100 {
		return "", ErrInvalid("name", "name must be at most 100 characters")
	}
	return name, nil
}

// CreateAPIKey creates a key and returns it with its plain text, once.
func (s *KeyService) CreateAPIKey(ctx context.Context, in KeyInput) (*APIKey, error) {
	p, err := jwtAdmin(ctx)
	if err != nil {
		return nil, err
	}
	if !CanAdmin(p.Role) {
		return nil, &Error{Code: ECodeKeyForbidden, Message: "only team owners and admins can manage API keys"}
	}
	if in.Name == nil {
		return nil, ErrRequired("name")
	}
	name, err := checkKeyName(*in.Name)
	if err != nil {
		return nil, err
	}
	var flags KeyFlags
	if in.Permissions != nil {
		flags = *in.Permissions
	}
	plain := KeyPrefix + RandomString(40)
	now := s.Now().UTC()
	k := &APIKey{
		ID: NewID("key"), TeamID: p.TeamID, Name: name, KeyType: "secret",
		KeyPrefix: plain[:len(KeyPrefix)+6] + "...", Permissions: flags.Permissions(), IsActive: true,
		CreatedAt: now, UpdatedAt: now, CreatedBy: p.UserID, Hash: HashToken(plain),
	}
	if err := s.Keys.CreateAPIKey(ctx, k); err != nil { // checks the plan's key count
		return nil, err
	}
	k.PlainKey = plain
	return k, nil
}

// FindAPIKeys lists the team's keys without their secrets.
func (s *KeyService) FindAPIKeys(ctx context.Context, f KeyFilter) ([]*APIKey, int, error) {
	p, err := jwtAdmin(ctx)
	if err != nil {
		return nil, 0, err
	}
	f.TeamID = p.TeamID
	switch f.SortBy {
	case "":
		f.SortBy = "createdAt"
	case "createdAt", "updatedAt", "name", "lastUsedAt":
	default:
		return nil, 0, ErrInvalid("sortBy", "sortBy must be createdAt, updatedAt, name or lastUsedAt")
	}
	switch f.SortOrder {
	case "":
		f.SortOrder = "desc"
	case "asc", "desc":
	default:
		return nil, 0, ErrInvalid("sortOrder", "sortOrder must be asc or desc")
	}
	return s.Keys.FindAPIKeys(ctx, f)
}

// FindAPIKeyByID returns one of the team's keys.
func (s *KeyService) FindAPIKeyByID(ctx context.Context, id string) (*APIKey, error) {
	p, err := jwtAdmin(ctx)
	if err != nil {
		return nil, err
	}
	return s.Keys.FindAPIKeyByID(ctx, p.TeamID, id)
}

// UpdateAPIKey changes name, permissions or active state.
func (s *KeyService) UpdateAPIKey(ctx context.Context, id string, in KeyInput) (*APIKey, error) {
	p, err := jwtAdmin(ctx)
	if err != nil {
		return nil, err
	}
	if !CanAdmin(p.Role) {
		return nil, &Error{Code: ECodeKeyForbidden, Message: "only team owners and admins can manage API keys"}
	}
	cur, err := s.Keys.FindAPIKeyByID(ctx, p.TeamID, id)
	if err != nil {
		return nil, err
	}
	var upd KeyUpdate
	if in.Name != nil {
		name, err := checkKeyName(*in.Name)
		if err != nil {
			return nil, err
		}
		upd.Name = &name
	}
	if in.Permissions != nil {
		flags := flagsOf(cur.Permissions)
		if in.Permissions.SendEmails != nil {
			flags.SendEmails = in.Permissions.SendEmails
		}
		if in.Permissions.ReadAnalytics != nil {
			flags.ReadAnalytics = in.Permissions.ReadAnalytics
		}
		if in.Permissions.ManageTemplates != nil {
			flags.ManageTemplates = in.Permissions.ManageTemplates
		}
		upd.Permissions = flags.Permissions()
	}
	upd.IsActive = in.IsActive
	return s.Keys.UpdateAPIKey(ctx, p.TeamID, id, upd, s.Now().UTC())
}

// RevokeAPIKey deactivates a key; it can be reactivated with PATCH.
func (s *KeyService) RevokeAPIKey(ctx context.Context, id string) (*APIKey, error) {
	off := false
	return s.UpdateAPIKey(ctx, id, KeyInput{IsActive: &off})
}

// DeleteAPIKey removes a key for good.
func (s *KeyService) DeleteAPIKey(ctx context.Context, id string) error {
	p, err := jwtAdmin(ctx)
	if err != nil {
		return err
	}
	if !CanAdmin(p.Role) {
		return &Error{Code: ECodeKeyForbidden, Message: "only team owners and admins can manage API keys"}
	}
	return s.Keys.DeleteAPIKey(ctx, p.TeamID, id)
}

// APIKeyStats returns a key's usage statistics.
func (s *KeyService) APIKeyStats(ctx context.Context, id string) (*KeyStats, error) {
	p, err := jwtAdmin(ctx)
	if err != nil {
		return nil, err
	}
	k, err := s.Keys.FindAPIKeyByID(ctx, p.TeamID, id)
	if err != nil {
		return nil, err
	}
	docs, err := s.Keys.CountKeyDocuments(ctx, p.TeamID, id)
	if err != nil {
		return nil, err
	}
	today := k.RequestsToday
	if k.RequestsDay != s.Now().UTC().Format(time.DateOnly) {
		today = 0
	}
	return &KeyStats{TotalRequests: k.TotalRequests, RequestsToday: today, LastUsedAt: k.LastUsedAt, DocumentsGenerated: docs}, nil
}

// authenticateKey finds an active key by its hash and records its use.
func (s *AuthService) authenticateKey(ctx context.Context, plain string) (*Principal, error) {
	k, err := s.Keys.FindAPIKeyByHash(ctx, HashToken(plain))
	if ErrorCode(err) == ECodeKeyNotFound {
		return nil, &Error{Code: ECodeKeyInvalid, Message: "invalid API key"}
	} else if err != nil {
		return nil, err
	}
	if !k.IsActive {
		return nil, &Error{Code: ECodeKeyInactive, Message: "API key is deactivated"}
	}
	if err := s.Keys.TouchAPIKey(ctx, k.ID, s.Now().UTC()); err != nil {
		return nil, err
	}
	// A key is as verified as the account that created it (ERR_AUTH_006
	// guards the same actions for keys as for logins).
	u, err := s.Users.FindUserByID(ctx, k.CreatedBy)
	verified := err == nil && u.EmailVerified
	return &Principal{Kind: AuthKey, UserID: k.CreatedBy, TeamID: k.TeamID, Role: RoleMember, KeyID: k.ID, Permissions: k.Permissions, Verified: verified}, nil
}
