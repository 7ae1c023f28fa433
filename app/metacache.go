package app

import (
	"context"
	"strconv"
	"sync"
)

// MetaGenerations reads the metadata generation: a counter the store raises
// in the same transaction as every write to API keys, users, teams,
// memberships, templates, template versions and shares, whichever process
// makes it (SQLite: triggers, migration 0016).
type MetaGenerations interface {
	MetadataGeneration(ctx context.Context) (int64, error)
}

// MetaCache keeps the metadata every API request and document reads (the
// key by its hash, its creator, the team and plan, the membership, the
// template and its version) in memory, valid for one metadata generation:
// a request reads the generation once (one statement instead of the reads
// it replaces), and a generation newer than the cache's empties it. So a
// revoked key, a changed plan or a published version takes effect on the
// next request, also when another process (folio admin) wrote it
// (docs/decisions.md, "Metadata cache").
type MetaCache struct {
	Gen MetaGenerations
	// Max bounds the number of entries (DefaultMetaCacheSize when 0).
	Max int

	mu  sync.Mutex
	gen int64
	m   map[string]any
}

// DefaultMetaCacheSize bounds a MetaCache: a few MB of keys, users, teams and
// templates (a template holds its schema).
const DefaultMetaCacheSize = 4096

type metaGenKey struct{}

// Pin reads the generation once and returns a context that carries it: the
// lookups made with that context (one request, one job) use it instead of
// reading it again, and see one consistent generation.
func (c *MetaCache) Pin(ctx context.Context) context.Context {
	if c == nil {
		return ctx
	}
	if _, ok := pinnedGen(ctx); ok {
		return ctx
	}
	g, err := c.Gen.MetadataGeneration(ctx)
	if err != nil {
		return ctx // the lookups read it themselves and report the error
	}
	return context.WithValue(ctx, metaGenKey{}, g)
}

// Repin reads the generation again and pins it in ctx, for the lookups a
// request makes after its own writes (an import that stored fonts).
func (c *MetaCache) Repin(ctx context.Context) context.Context {
	if c == nil {
		return ctx
	}
	g, err := c.Gen.MetadataGeneration(ctx)
	if err != nil {
		return ctx
	}
	return context.WithValue(ctx, metaGenKey{}, g)
}

// pinnedGen returns the generation pinned in ctx, by Pin or in the
// principal Authenticate made.
func pinnedGen(ctx context.Context) (int64, bool) {
	if g, ok := ctx.Value(metaGenKey{}).(int64); ok {
		return g, true
	}
	if p, ok := ctx.Value(principalKey{}).(*Principal); ok && p.metaGen > 0 {
		return p.metaGen, true
	}
	return 0, false
}

// lookup returns the entry under key, loading it when missing. The
// generation is read before the data, so data stored under generation g is
// at least as new as g; a reader pinned to an older generation than the
// cache's goes to the store and keeps nothing. Errors are not kept.
func lookup[T any](ctx context.Context, c *MetaCache, key string, load func() (*T, error)) (*T, error) {
	g, ok := pinnedGen(ctx)
	if !ok {
		var err error
		if g, err = c.Gen.MetadataGeneration(ctx); err != nil {
			return nil, err
		}
	}
	c.mu.Lock()
	if g > c.gen {
		c.gen, c.m = g, nil
	}
	if v, ok := c.m[key].(*T); ok && g == c.gen {
		c.mu.Unlock()
		cp := *v // callers may change what they get
		return &cp, nil
	}
	c.mu.Unlock()
	v, err := load()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if g == c.gen {
		if c.m == nil {
			c.m = map[string]any{}
		}
		max := c.Max
		if max <= 0 {
			max = DefaultMetaCacheSize
		}
		for k := range c.m { // full: drop any entry
			if len(c.m) < max {
				break
			}
			delete(c.m, k)
		}
		cp := *v
		c.m[key] = &cp
	}
	return v, nil
}

// Keys returns ks with FindAPIKeyByHash served from the cache.
func (c *MetaCache) Keys(ks KeyStore) KeyStore {
	if c == nil {
		return ks
	}
	return cachedKeys{ks, c}
}

// Users returns us with FindUserByID served from the cache.
func (c *MetaCache) Users(us UserStore) UserStore {
	if c == nil {
		return us
	}
	return cachedUsers{us, c}
}

// Teams returns ts with FindTeam and FindMember served from the cache. A
// cached team's Credits may be old (credits change with every charged
// document and do not raise the generation): give it only to services that
// read a team's name and plan; charging reads credits in its transaction.
func (c *MetaCache) Teams(ts TeamStore) TeamStore {
	if c == nil {
		return ts
	}
	return cachedTeams{ts, c}
}

// Templates returns ts with FindVisibleTemplate and FindTemplateVersion
// served from the cache.
func (c *MetaCache) Templates(ts TemplateStore) TemplateStore {
	if c == nil {
		return ts
	}
	return cachedTemplates{ts, c}
}

type cachedKeys struct {
	KeyStore
	c *MetaCache
}

func (s cachedKeys) FindAPIKeyByHash(ctx context.Context, hash string) (*APIKey, error) {
	return lookup(ctx, s.c, "key\x00"+hash, func() (*APIKey, error) { return s.KeyStore.FindAPIKeyByHash(ctx, hash) })
}

type cachedUsers struct {
	UserStore
	c *MetaCache
}

func (s cachedUsers) FindUserByID(ctx context.Context, id string) (*User, error) {
	return lookup(ctx, s.c, "user\x00"+id, func() (*User, error) { return s.UserStore.FindUserByID(ctx, id) })
}

type cachedTeams struct {
	TeamStore
	c *MetaCache
}

func (s cachedTeams) FindTeam(ctx context.Context, idOrSlug string) (*Team, error) {
	return lookup(ctx, s.c, "team\x00"+idOrSlug, func() (*Team, error) { return s.TeamStore.FindTeam(ctx, idOrSlug) })
}

func (s cachedTeams) FindMember(ctx context.Context, teamID, userID string) (*Member, error) {
	return lookup(ctx, s.c, "member\x00"+teamID+"\x00"+userID, func() (*Member, error) { return s.TeamStore.FindMember(ctx, teamID, userID) })
}

type cachedTemplates struct {
	TemplateStore
	c *MetaCache
}

// FindVisibleTemplate is keyed by the asking team and the reference: what
// one team sees is never served to another.
func (s cachedTemplates) FindVisibleTemplate(ctx context.Context, teamID, ref string) (*Template, error) {
	return lookup(ctx, s.c, "tpl\x00"+teamID+"\x00"+ref, func() (*Template, error) { return s.TemplateStore.FindVisibleTemplate(ctx, teamID, ref) })
}

func (s cachedTemplates) FindTemplateVersion(ctx context.Context, templateID string, version int) (*TemplateVersion, error) {
	return lookup(ctx, s.c, "ver\x00"+templateID+"\x00"+strconv.Itoa(version), func() (*TemplateVersion, error) {
		return s.TemplateStore.FindTemplateVersion(ctx, templateID, version)
	})
}
