package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"folio/app"
)

var assetCases = []Case{
	{"AssetsReadBackAndQuota", assetsReadBackAndQuota},
	{"AssetReplaceRenameDelete", assetReplaceRenameDelete},
}

const mb = 1 << 20

func mustAsset(t *testing.T, s Store, teamID, name, kind string, size int64, at time.Time) *app.Asset {
	t.Helper()
	a := &app.Asset{ID: app.NewID("ast"), TeamID: teamID, Name: name, Kind: kind, Format: "png", ContentType: "image/png", Size: size,
		SHA256: "sha-" + name, Width: 60, Height: 20, File: "file-" + name, CreatedBy: "usr_x", CreatedAt: at, UpdatedAt: at}
	if err := s.CreateAsset(ctx, a); err != nil {
		t.Fatal(err)
	}
	return a
}

// assetsReadBackAndQuota: assets read back by id and by name, list by name
// (bytewise) and kind, never across teams, and stay within the plan's
// asset storage, concurrent uploads included.
func assetsReadBackAndQuota(t *testing.T, s Store) {
	u := mustUser(t, s, "ast@example.com") // free: 100 MB of assets
	v := mustUser(t, s, "other@example.com")
	team := u.PersonalTeamID
	font := &app.Asset{ID: app.NewID("ast"), TeamID: team, Name: "Body", Kind: "font", Format: "ttf", ContentType: "font/ttf", Size: 1000,
		SHA256: "abc", Font: &app.FontInfo{Family: "Body", Style: "normal", Weight: 400, Glyphs: 300, Outlines: "truetype"},
		File: "f1", CreatedBy: u.ID, CreatedAt: t0, UpdatedAt: t0}
	if err := s.CreateAsset(ctx, font); err != nil {
		t.Fatal(err)
	}
	logo := mustAsset(t, s, team, "logo", "image", 2000, t0.Add(time.Second))
	mustAsset(t, s, team, "Logo", "image", 3000, t0)
	for _, ref := range []string{font.ID, "Body"} {
		got, err := s.FindAsset(ctx, team, ref)
		if err != nil || got.ID != font.ID || got.Font == nil || *got.Font != *font.Font || got.Size != 1000 || got.File != "f1" || !got.CreatedAt.Equal(t0) {
			t.Fatalf("by %s: %+v %v", ref, got, err)
		}
	}
	if got, _ := s.FindAsset(ctx, team, "logo"); got.ID != logo.ID || got.Width != 60 || got.Height != 20 || got.Font != nil {
		t.Fatalf("logo %+v", got)
	}
	_, err := s.FindAsset(ctx, v.PersonalTeamID, logo.ID)
	wantCode(t, "another team's asset by id", err, app.ECodeAssetNotFound)
	_, err = s.FindAsset(ctx, v.PersonalTeamID, "logo")
	wantCode(t, "another team's asset by name", err, app.ECodeAssetNotFound)
	err = s.CreateAsset(ctx, &app.Asset{ID: app.NewID("ast"), TeamID: team, Name: "logo", Kind: "image", Size: 1, File: "x", CreatedAt: t0, UpdatedAt: t0})
	wantCode(t, "taken name", err, app.ECodeAssetExists)
	names := func(f app.AssetFilter) string {
		f.TeamID = team
		if f.Page.Limit == 0 {
			f.Page = page(1, 10)
		}
		list, total, err := s.FindAssets(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, a := range list {
			out = append(out, a.Name)
		}
		return fmt.Sprint(out, total)
	}
	if got := names(app.AssetFilter{}); got != "[Body Logo logo] 3" {
		t.Fatalf("list %s", got)
	}
	if got := names(app.AssetFilter{Kind: "image", Page: page(2, 1)}); got != "[logo] 2" {
		t.Fatalf("images page 2: %s", got)
	}
	if size, n, err := s.AssetUsage(ctx, team); err != nil || size != 6000 || n != 3 {
		t.Fatalf("usage %d %d %v", size, n, err)
	}
	// 100 MB on free: of six 30 MB uploads at once, three fit.
	ok := 0
	for _, err := range concurrently(6, func(i int) error {
		return s.CreateAsset(ctx, &app.Asset{ID: app.NewID("ast"), TeamID: v.PersonalTeamID, Name: fmt.Sprintf("big%d", i), Kind: "pdf",
			Size: 30 * mb, File: "b", CreatedAt: t0, UpdatedAt: t0})
	}) {
		if err == nil {
			ok++
		} else if app.ErrorCode(err) != app.ECodeAssetQuota {
			t.Fatal(err)
		}
	}
	if size, n, _ := s.AssetUsage(ctx, v.PersonalTeamID); ok != 3 || n != 3 || size != 90*mb {
		t.Fatalf("concurrent uploads: %d stored, usage %d in %d", ok, size, n)
	}
}

// assetReplaceRenameDelete: replacing counts the quota without the old
// bytes and returns the old file; names stay unique; deleting hands the
// check the templates using the asset (working copy or newest version) and
// honours its refusal.
func assetReplaceRenameDelete(t *testing.T, s Store) {
	u := mustUser(t, s, "rep@example.com") // free: 100 MB
	team := u.PersonalTeamID
	a := mustAsset(t, s, team, "logo", "image", 60*mb, t0)
	mustAsset(t, s, team, "other", "image", 1*mb, t0)
	repl := *a
	repl.Size, repl.File, repl.SHA256, repl.UpdatedAt = 90*mb, "file-2", "sha-2", t0.Add(time.Minute)
	old, err := s.ReplaceAsset(ctx, &repl)
	if err != nil || old != "file-logo" {
		t.Fatalf("replace: old %q %v", old, err)
	}
	if got, _ := s.FindAsset(ctx, team, a.ID); got.Size != 90*mb || got.File != "file-2" || !got.UpdatedAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("after replace %+v", got)
	}
	repl.Size = 100 * mb
	_, err = s.ReplaceAsset(ctx, &repl)
	wantCode(t, "replace past the quota", err, app.ECodeAssetQuota)
	missing := repl
	missing.ID = "ast_missing"
	_, err = s.ReplaceAsset(ctx, &missing)
	wantCode(t, "replace a missing asset", err, app.ECodeAssetNotFound)
	_, err = s.RenameAsset(ctx, team, a.ID, "other", t0)
	wantCode(t, "rename to a taken name", err, app.ECodeAssetExists)
	got, err := s.RenameAsset(ctx, team, a.ID, "brand", t0.Add(time.Hour))
	if err != nil || got.Name != "brand" || !got.UpdatedAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("rename %+v %v", got, err)
	}
	// Templates that use it: by name in the working copy, by id in the
	// newest published version; an older version's use does not count.
	if err := s.SetTeamPlan(ctx, team, "growth", t0); err != nil { // three templates
		t.Fatal(err)
	}
	mkTpl := func(name, schema string) *app.Template {
		return mustTemplate(t, s, team, u.ID, name, name, t0, func(tp *app.Template) { tp.Schema = []byte(schema) })
	}
	byName := mkTpl("zeta", `{"pages":[{"src":"asset:brand"}]}`)
	byID := mkTpl("alpha", `{"pages":[{"src":"asset:`+a.ID+`"}]}`)
	if _, err := s.PublishTemplate(ctx, byID.ID, &app.TemplateVersion{VersionInfo: app.VersionInfo{ID: app.NewID("ver"), PublishedAt: t0}}, nil); err != nil {
		t.Fatal(err)
	}
	byID.Schema = []byte(`{"pages":[]}`)
	if err := s.UpdateTemplate(ctx, byID); err != nil {
		t.Fatal(err)
	}
	old1 := mkTpl("old", `{"pages":[{"src":"asset:brand"}]}`)
	if _, err := s.PublishTemplate(ctx, old1.ID, &app.TemplateVersion{VersionInfo: app.VersionInfo{ID: app.NewID("ver"), PublishedAt: t0}}, nil); err != nil {
		t.Fatal(err)
	}
	old1.Schema = []byte(`{}`)
	if err := s.UpdateTemplate(ctx, old1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PublishTemplate(ctx, old1.ID, &app.TemplateVersion{VersionInfo: app.VersionInfo{ID: app.NewID("ver"), PublishedAt: t0}}, nil); err != nil {
		t.Fatal(err)
	}
	uses, err := s.FindAssetUses(ctx, team, []string{"brand", a.ID, "nothing"})
	if err != nil || fmt.Sprint(uses["brand"]) != fmt.Sprintf("[{%s zeta}]", byName.ID) || fmt.Sprint(uses[a.ID]) != fmt.Sprintf("[{%s alpha}]", byID.ID) || len(uses["nothing"]) != 0 {
		t.Fatalf("uses %v %v", uses, err)
	}
	inUse := errors.New("in use")
	var seen []app.AssetUse
	_, err = s.DeleteAsset(ctx, team, a.ID, func(_ *app.Asset, u []app.AssetUse) error { seen = u; return inUse })
	if !errors.Is(err, inUse) || fmt.Sprint(seen) != fmt.Sprintf("[{%s alpha} {%s zeta}]", byID.ID, byName.ID) {
		t.Fatalf("refused delete: %v, check saw %v", err, seen)
	}
	if _, err := s.FindAsset(ctx, team, a.ID); err != nil {
		t.Fatalf("a refused delete deleted: %v", err)
	}
	deleted, err := s.DeleteAsset(ctx, team, "brand", func(*app.Asset, []app.AssetUse) error { return nil })
	if err != nil || deleted.ID != a.ID {
		t.Fatalf("delete: %+v %v", deleted, err)
	}
	_, err = s.DeleteAsset(ctx, team, a.ID, func(*app.Asset, []app.AssetUse) error { return nil })
	wantCode(t, "delete twice", err, app.ECodeAssetNotFound)
}
