package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"folio/render"
)

// Asset kinds (DESIGN.md section 10).
const (
	AssetImage = "image"
	AssetFont  = "font"
	AssetPDF   = "pdf"
)

// Asset error codes (docs/decisions.md, Assets). The storage quota is a
// quota error like the monthly one: ERR_QUOTA_012, 429.
const (
	ECodeAssetNotFound  = "ERR_ASSET_001"
	ECodeAssetInvalid   = "ERR_ASSET_002"
	ECodeAssetInUse     = "ERR_ASSET_003"
	ECodeAssetForbidden = "ERR_ASSET_004"
	ECodeAssetTooLarge  = "ERR_ASSET_005"
	ECodeAssetExists    = "ERR_ASSET_006"
	ECodeAssetQuota     = "ERR_QUOTA_012"
)

// MaxAssetName bounds an asset's name, like a template's.
const MaxAssetName = 255

// Asset is a file a team keeps for its templates: an image, a font or a
// PDF, referred to as "asset:<name>" or "asset:<id>".
type Asset struct {
	ID     string `json:"id"`
	TeamID string `json:"-"`
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	// Format is the file's format, read from its bytes: png, jpeg, webp,
	// svg, ttf, otf or pdf.
	Format      string    `json:"format"`
	ContentType string    `json:"contentType"`
	Size        int64     `json:"size"`
	SHA256      string    `json:"sha256"`
	Width       int       `json:"width,omitempty"`
	Height      int       `json:"height,omitempty"`
	Font        *FontInfo `json:"font,omitempty"`
	// Reference is how a template names it: asset:<name>.
	Reference  string `json:"reference"`
	ContentURL string `json:"contentUrl"`
	// UsedBy lists the team's templates whose working copy or newest
	// published version refers to it.
	UsedBy    []AssetUse `json:"usedBy"`
	CreatedAt time.Time  `json:"createdAt"`
	UpdatedAt time.Time  `json:"updatedAt"`
	CreatedBy string     `json:"-"`
	// File is where the bytes are kept in the FileStore.
	File string `json:"-"`
}

// AssetUse names a template that refers to an asset.
type AssetUse struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// AssetFilter selects a team's assets for listing.
type AssetFilter struct {
	TeamID string
	Kind   string // "" for every kind
	Page   Page
}

// AssetStore keeps assets' records; their bytes are in the FileStore.
type AssetStore interface {
	// CreateAsset inserts an asset: ERR_ASSET_006 when the team has one by
	// that name, ERR_QUOTA_012 when its plan's asset storage would be
	// exceeded (checked in the inserting transaction).
	CreateAsset(ctx context.Context, a *Asset) error
	// FindAsset finds a team's asset by id, else by name.
	FindAsset(ctx context.Context, teamID, ref string) (*Asset, error)
	FindAssets(ctx context.Context, f AssetFilter) ([]*Asset, int, error)
	// ReplaceAsset writes new content fields (and name) of an asset,
	// checking the quota without its old size; it returns the old File.
	ReplaceAsset(ctx context.Context, a *Asset) (oldFile string, err error)
	RenameAsset(ctx context.Context, teamID, id, name string, now time.Time) (*Asset, error)
	// DeleteAsset removes an asset in one transaction with check, which is
	// given the templates using it and may refuse.
	DeleteAsset(ctx context.Context, teamID, id string, check func(a *Asset, uses []AssetUse) error) (*Asset, error)
	// FindAssetUses returns, for each reference among refs (an asset's id or
	// name), the team's live templates whose working copy or newest
	// published version holds it.
	FindAssetUses(ctx context.Context, teamID string, refs []string) (map[string][]AssetUse, error)
	// AssetUsage is the bytes and number of a team's assets.
	AssetUsage(ctx context.Context, teamID string) (bytes int64, count int, err error)
}

// AssetService applies the asset rules.
type AssetService struct {
	Assets AssetStore
	Teams  TeamStore
	Files  FileStore
	Memory MemoryGate // image decodes on upload wait for memory here
	Now    func() time.Time
	// Meta, when set, keeps each team's list of font assets for one
	// metadata generation (the fonts its templates may choose).
	Meta *MetaCache
}

// AssetUpload is an upload or replacement: the file's bytes (multipart
// "file") or base64 text (JSON "contentBase64"), and a name.
type AssetUpload struct {
	Name          *string `json:"name"`
	ContentBase64 *string `json:"contentBase64"`
	// Data is the multipart file; FileName its name, the default name.
	Data     []byte `json:"-"`
	FileName string `json:"-"`
}

// AssetRename is the body of PATCH /api/assets/{id}.
type AssetRename struct {
	Name *string `json:"name"`
}

// assetFile is where an asset's bytes are kept: a new name for every
// content, so a replacement never overwrites what a reader has open.
func assetFile(teamID, id string) string {
	return "assets/" + teamID + "/" + id + "-" + RandomString(8)
}

// assetReader checks the caller may read the team's assets: API keys need
// templates:read (every key has it).
func assetReader(ctx context.Context) (*Principal, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	return p, p.Require(PermTemplatesRead)
}

// assetWriter checks the caller may change the team's assets: API keys
// need templates:write, users a role that edits templates.
func assetWriter(ctx context.Context) (*Principal, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	if p.Kind != AuthJWT {
		if err := p.Require(PermTemplatesWrite); err != nil {
			return nil, err
		}
	}
	if !CanWrite(p.Role) {
		return nil, &Error{Code: ECodeAssetForbidden, Message: "viewers cannot change assets; ask an owner or admin for the member role"}
	}
	return p, nil
}

// checkAssetName trims and checks a name: it is what follows "asset:" in
// a template, so it has no control characters, slashes or leading "ast_"
// (the id prefix).
func checkAssetName(name string) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return "", ErrRequired("name")
	case utf8.RuneCountInString(name) > MaxAssetName:
		return "", ErrInvalid("name", "name must be at most %d characters", MaxAssetName)
	case strings.HasPrefix(name, "ast_"):
		return "", ErrInvalid("name", "name must not start with ast_, which starts asset ids")
	case strings.ContainsAny(name, `/\`) || strings.IndexFunc(name, unicode.IsControl) >= 0 || !utf8.ValidString(name):
		return "", ErrInvalid("name", "name must not hold slashes or control characters")
	}
	return name, nil
}

// defaultAssetName makes a name from an uploaded file's name.
func defaultAssetName(file string) string {
	if i := strings.LastIndexAny(file, `/\`); i >= 0 {
		file = file[i+1:]
	}
	file = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, file)
	return strings.TrimPrefix(strings.TrimSpace(file), "ast_")
}

// content returns the upload's bytes.
func (in AssetUpload) content() ([]byte, error) {
	if in.Data != nil {
		return in.Data, nil
	}
	if in.ContentBase64 == nil || *in.ContentBase64 == "" {
		return nil, ErrRequired("contentBase64")
	}
	s := strings.TrimSpace(*in.ContentBase64)
	if strings.HasPrefix(s, "data:") {
		if i := strings.Index(s, ";base64,"); i >= 0 {
			s = s[i+len(";base64,"):]
		}
	}
	if base64.StdEncoding.DecodedLen(len(s)) > MaxAssetBytes+3 {
		return nil, errTooLarge(base64.StdEncoding.DecodedLen(len(s)), MaxAssetBytes, "an asset")
	}
	b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return nil, ErrInvalid("contentBase64", "contentBase64 is not valid base64")
	}
	return b, nil
}

// check reads an upload's bytes and checks them, decoding a raster image's
// pixels under the memory gate renders share.
func (s *AssetService) check(ctx context.Context, in AssetUpload) ([]byte, *checked, error) {
	data, err := in.content()
	if err != nil {
		return nil, nil, err
	}
	c, err := s.checkBytes(ctx, data)
	return data, c, err
}

func (s *AssetService) checkBytes(ctx context.Context, data []byte) (*checked, error) {
	c, err := checkAsset(data)
	if err != nil {
		return nil, err
	}
	if c.decode != nil {
		release := func() {}
		if s.Memory != nil {
			wait, cancel := context.WithTimeout(ctx, avatarWait)
			defer cancel()
			if release, err = s.Memory.Reserve(wait, c.decodeCost); err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, (&Error{Code: ECodeRenderTimeout, Message: "the image was not read: the server was busy with documents for too long; try again"}).
					WithInfo("busy", true)
			}
		}
		err := c.decode()
		release()
		if err != nil {
			return nil, errAsset("%s", upperFirst(err.Error()))
		}
	}
	return c, nil
}

// fill sets the content fields of a from the checked bytes.
func (a *Asset) fill(c *checked, data []byte) {
	sum := sha256.Sum256(data)
	a.Kind, a.Format, a.ContentType, a.Size, a.SHA256 = c.kind, c.format, c.contentType, int64(len(data)), hex.EncodeToString(sum[:])
	a.Width, a.Height, a.Font = c.width, c.height, c.font
}

// decorate sets the derived fields of assets read from the store.
func decorate(a *Asset) {
	a.Reference = "asset:" + a.Name
	a.ContentURL = "/api/assets/" + a.ID + "/content"
	if a.UsedBy == nil {
		a.UsedBy = []AssetUse{}
	}
}

// write stores the bytes under a new file name.
func (s *AssetService) write(a *Asset, data []byte) error {
	a.File = assetFile(a.TeamID, a.ID)
	if _, err := s.Files.WriteFile(a.File, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
		return fmt.Errorf("store asset: %w", err)
	}
	return nil
}

// CreateAsset checks and stores a new asset in the caller's team.
func (s *AssetService) CreateAsset(ctx context.Context, in AssetUpload) (*Asset, error) {
	p, err := assetWriter(ctx)
	if err != nil {
		return nil, err
	}
	raw := ""
	if in.Name != nil {
		raw = *in.Name
	} else if in.Data != nil {
		raw = defaultAssetName(in.FileName)
	}
	name, err := checkAssetName(raw)
	if err != nil {
		return nil, err
	}
	data, c, err := s.check(ctx, in)
	if err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	a := &Asset{ID: NewID("ast"), TeamID: p.TeamID, Name: name, CreatedAt: now, UpdatedAt: now, CreatedBy: p.UserID}
	a.fill(c, data)
	if err := s.write(a, data); err != nil {
		return nil, err
	}
	if err := s.Assets.CreateAsset(ctx, a); err != nil {
		s.Files.RemoveFile(a.File)
		return nil, err
	}
	decorate(a)
	return a, nil
}

// FindAssets lists the caller's team's assets, each with the templates using it.
func (s *AssetService) FindAssets(ctx context.Context, f AssetFilter) ([]*Asset, int, error) {
	p, err := assetReader(ctx)
	if err != nil {
		return nil, 0, err
	}
	if f.Kind != "" && f.Kind != AssetImage && f.Kind != AssetFont && f.Kind != AssetPDF {
		return nil, 0, ErrInvalid("kind", "kind must be image, font or pdf")
	}
	f.TeamID = p.TeamID
	list, total, err := s.Assets.FindAssets(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	if err := s.usedBy(ctx, p.TeamID, list...); err != nil {
		return nil, 0, err
	}
	return list, total, nil
}

// usedBy fills UsedBy of the team's assets.
func (s *AssetService) usedBy(ctx context.Context, teamID string, list ...*Asset) error {
	var refs []string
	for _, a := range list {
		refs = append(refs, a.ID, a.Name)
	}
	uses, err := s.Assets.FindAssetUses(ctx, teamID, refs)
	if err != nil {
		return err
	}
	for _, a := range list {
		a.UsedBy = mergeUses(uses[a.ID], uses[a.Name])
		decorate(a)
	}
	return nil
}

func mergeUses(lists ...[]AssetUse) []AssetUse {
	out := []AssetUse{}
	for _, l := range lists {
		for _, u := range l {
			if !slices.ContainsFunc(out, func(o AssetUse) bool { return o.ID == u.ID }) {
				out = append(out, u)
			}
		}
	}
	slices.SortFunc(out, func(a, b AssetUse) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// FindAsset returns one of the caller's team's assets (by id or name).
func (s *AssetService) FindAsset(ctx context.Context, ref string) (*Asset, error) {
	p, err := assetReader(ctx)
	if err != nil {
		return nil, err
	}
	a, err := s.Assets.FindAsset(ctx, p.TeamID, ref)
	if err != nil {
		return nil, err
	}
	return a, s.usedBy(ctx, p.TeamID, a)
}

// OpenAsset opens the bytes of one of the caller's team's assets.
func (s *AssetService) OpenAsset(ctx context.Context, ref string) (*Asset, ReadSeekCloser, time.Time, error) {
	p, err := assetReader(ctx)
	if err != nil {
		return nil, nil, time.Time{}, err
	}
	a, err := s.Assets.FindAsset(ctx, p.TeamID, ref)
	if err != nil {
		return nil, nil, time.Time{}, err
	}
	f, _, err := s.Files.OpenFile(a.File)
	if err != nil {
		return nil, nil, time.Time{}, fmt.Errorf("open asset %s: %w", a.ID, err)
	}
	decorate(a)
	return a, f, a.UpdatedAt, nil
}

// ReplaceAsset gives an asset new bytes of the same kind (the same checks
// as an upload); its id, and its name unless one is given, stay.
func (s *AssetService) ReplaceAsset(ctx context.Context, ref string, in AssetUpload) (*Asset, error) {
	p, err := assetWriter(ctx)
	if err != nil {
		return nil, err
	}
	a, err := s.Assets.FindAsset(ctx, p.TeamID, ref)
	if err != nil {
		return nil, err
	}
	if in.Name != nil {
		if a.Name, err = checkAssetName(*in.Name); err != nil {
			return nil, err
		}
	}
	data, c, err := s.check(ctx, in)
	if err != nil {
		return nil, err
	}
	if c.kind != a.Kind {
		return nil, errAsset("%s is a %s asset and the file is a %s; replace it with a %s, or upload the file as a new asset", a.Name, a.Kind, c.kind, a.Kind).
			WithInfo("kind", a.Kind, "fileKind", c.kind)
	}
	a.fill(c, data)
	a.UpdatedAt = s.Now().UTC()
	if err := s.write(a, data); err != nil {
		return nil, err
	}
	old, err := s.Assets.ReplaceAsset(ctx, a)
	if err != nil {
		s.Files.RemoveFile(a.File)
		return nil, err
	}
	s.Files.RemoveFile(old)
	return a, s.usedBy(ctx, p.TeamID, a)
}

// RenameAsset renames an asset. Templates that name it by its old name no
// longer find it (those naming it by id do); the answer's usedBy shows who
// uses the new name.
func (s *AssetService) RenameAsset(ctx context.Context, ref string, in AssetRename) (*Asset, error) {
	p, err := assetWriter(ctx)
	if err != nil {
		return nil, err
	}
	if in.Name == nil {
		return nil, ErrRequired("name")
	}
	name, err := checkAssetName(*in.Name)
	if err != nil {
		return nil, err
	}
	a, err := s.Assets.FindAsset(ctx, p.TeamID, ref)
	if err != nil {
		return nil, err
	}
	if a, err = s.Assets.RenameAsset(ctx, p.TeamID, a.ID, name, s.Now().UTC()); err != nil {
		return nil, err
	}
	return a, s.usedBy(ctx, p.TeamID, a)
}

// DeleteAsset deletes an asset no template uses; one in use is refused
// (ERR_ASSET_003) with the templates using it.
func (s *AssetService) DeleteAsset(ctx context.Context, ref string) error {
	p, err := assetWriter(ctx)
	if err != nil {
		return err
	}
	a, err := s.Assets.FindAsset(ctx, p.TeamID, ref)
	if err != nil {
		return err
	}
	gone, err := s.Assets.DeleteAsset(ctx, p.TeamID, a.ID, func(a *Asset, uses []AssetUse) error {
		if len(uses) == 0 {
			return nil
		}
		names := make([]string, len(uses))
		for i, u := range uses {
			names[i] = u.Name
		}
		those := "those templates"
		if len(uses) == 1 {
			those = "that template"
		}
		return (&Error{Code: ECodeAssetInUse, Message: fmt.Sprintf("%s is used by %s: %s; take it out of %s (and publish) first",
			a.Name, Plural(int64(len(uses)), "template"), strings.Join(names, ", "), those)}).
			WithInfo("templates", uses)
	})
	if err != nil {
		return err
	}
	s.Files.RemoveFile(gone.File)
	return nil
}

// ResolveAsset returns the kind and bytes of a team's asset named by ref
// ("asset:<name or id>" or the name or id alone): what the render engine
// draws with. The team is the template's, whoever generates.
func (s *AssetService) ResolveAsset(ctx context.Context, teamID, ref string) (kind string, data []byte, err error) {
	ref = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(ref), "asset:"))
	a, err := s.Assets.FindAsset(ctx, teamID, ref)
	if err != nil {
		if ErrorCode(err) == ECodeAssetNotFound {
			return "", nil, (&Error{Code: ECodeAssetNotFound, Message: fmt.Sprintf("asset:%s not found: the team has no asset with that name or id", clip(ref, 80))}).
				WithInfo("reference", "asset:"+clip(ref, 80))
		}
		return "", nil, err
	}
	f, _, err := s.Files.OpenFile(a.File)
	if err != nil {
		return "", nil, fmt.Errorf("open asset %s: %w", a.ID, err)
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, MaxAssetBytes+1))
	if err != nil {
		return "", nil, fmt.Errorf("read asset %s: %w", a.ID, err)
	}
	return a.Kind, data, nil
}

// TeamFonts lists a team's font assets with their family, style and
// weight: what the text engine matches a template's fontFamily against
// (then loads with ResolveAsset).
func (s *AssetService) TeamFonts(ctx context.Context, teamID string) ([]*Asset, error) {
	var out []*Asset
	for page := 1; ; page++ {
		list, total, err := s.Assets.FindAssets(ctx, AssetFilter{TeamID: teamID, Kind: AssetFont, Page: Page{Page: page, Limit: MaxLimit}})
		if err != nil {
			return nil, err
		}
		out = append(out, list...)
		if len(list) == 0 || len(out) >= total {
			return out, nil
		}
	}
}

// AssetStorage is a team's asset storage against its plan's.
type AssetStorage struct {
	UsedBytes int64 `json:"usedBytes"`
	// LimitBytes is the plan's asset storage; null when it has none (unlimited).
	LimitBytes *int64 `json:"limitBytes"`
	Assets     int    `json:"assets"`
}

// Storage reports the caller's team's asset storage.
func (s *AssetService) Storage(ctx context.Context) (*AssetStorage, error) {
	p, err := assetReader(ctx)
	if err != nil {
		return nil, err
	}
	return s.storageOf(ctx, p.TeamID)
}

func (s *AssetService) storageOf(ctx context.Context, teamID string) (*AssetStorage, error) {
	team, err := s.Teams.FindTeam(ctx, teamID)
	if err != nil {
		return nil, err
	}
	used, n, err := s.Assets.AssetUsage(ctx, teamID)
	if err != nil {
		return nil, err
	}
	st := &AssetStorage{UsedBytes: used, Assets: n}
	if plan, err := FindPlan(team.Plan); err == nil && plan.AssetBytes > 0 {
		st.LimitBytes = &plan.AssetBytes
	}
	return st, nil
}

// CheckAssetBytes refuses (ERR_QUOTA_012) adding size bytes of assets to a
// team on the plan that already keeps used bytes. The store calls it in the
// transaction that writes the asset.
func (p Plan) CheckAssetBytes(used, size int64) error {
	if p.AssetBytes == 0 || used+size <= p.AssetBytes {
		return nil
	}
	return (&Error{Code: ECodeAssetQuota, Message: fmt.Sprintf("asset storage quota exceeded: the %s plan keeps %s of assets, %s are used and the file is %s; delete assets or change plan",
		p.Name, sizeText(p.AssetBytes), sizeText(used), sizeText(size))}).
		WithInfo("limitBytes", p.AssetBytes, "usedBytes", used, "fileBytes", size, "plan", p.Name)
}

// AssetRefs returns the assets a template schema refers to: every string
// value "asset:<ref>" anywhere in it (image src today; fontFamily,
// attachBefore/After and others as the engine learns them), each ref once,
// sorted.
func AssetRefs(schema json.RawMessage) []string {
	var refs []string
	if !bytes.Contains(schema, []byte("asset:")) {
		return nil
	}
	var v any
	if err := json.Unmarshal(schema, &v); err != nil {
		return nil
	}
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if depth > 64 {
			return
		}
		switch v := v.(type) {
		case string:
			if r, ok := strings.CutPrefix(strings.TrimSpace(v), "asset:"); ok && r != "" && !unicode.IsSpace(rune(r[0])) && !slices.Contains(refs, r) {
				refs = append(refs, r)
			}
		case []any:
			for _, e := range v {
				walk(e, depth+1)
			}
		case map[string]any:
			for _, e := range v {
				walk(e, depth+1)
			}
		}
	}
	walk(v, 0)
	slices.Sort(refs)
	return refs
}

// assetResolver is the render engine's view of a team's assets (nil when
// the service has no asset library).
func (s *TemplateService) assetResolver(ctx context.Context, teamID string) render.AssetResolver {
	if s.Assets == nil {
		return nil
	}
	return func(ref string) (string, []byte, error) { return s.Assets.ResolveAsset(ctx, teamID, ref) }
}

// AddAssetUse appends u to list unless the template is already in it.
func AddAssetUse(list []AssetUse, u AssetUse) []AssetUse {
	for _, have := range list {
		if have.ID == u.ID {
			return list
		}
	}
	return append(list, u)
}

// AssetUsesOf are the templates using any of refs (an asset's id and
// name), each once, in the order found.
func AssetUsesOf(uses map[string][]AssetUse, refs ...string) []AssetUse {
	var all []AssetUse
	for _, ref := range refs {
		for _, u := range uses[ref] {
			all = AddAssetUse(all, u)
		}
	}
	return all
}

// CheckAssetQuota refuses size more bytes of assets (ERR_QUOTA_012) for a
// team on the plan named plan when its plan keeps no more; used counts the
// team's stored bytes (except an asset being replaced) and is called only
// when the plan has a quota.
func CheckAssetQuota(plan string, size int64, used func() (int64, error)) error {
	p, err := FindPlan(plan)
	if err != nil || p.AssetBytes == 0 {
		return nil
	}
	n, err := used()
	if err != nil {
		return err
	}
	return p.CheckAssetBytes(n, size)
}

// ErrAssetNameTaken is ERR_ASSET: the team has an asset named name.
func ErrAssetNameTaken(name string) error {
	return (&Error{Code: ECodeAssetExists, Message: "an asset named " + name + " already exists; choose another name or replace that asset"}).
		WithInfo("field", "name")
}
