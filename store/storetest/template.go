package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"folio/app"
	"folio/render"
)

var templateCases = []Case{
	{"TemplateReadBackAndSlugs", templateReadBackAndSlugs},
	{"TemplateListSearchAndFilters", templateListSearchAndFilters},
	{"TemplateUpdateAndDelete", templateUpdateAndDelete},
	{"PublishAndRestore", publishAndRestore},
	{"Shares", shares},
	{"FoldersAndCategories", foldersAndCategories},
}

// mustTemplate creates a template of team named name at at.
func mustTemplate(t *testing.T, s Store, teamID, userID, name, slug string, at time.Time, mod func(*app.Template)) *app.Template {
	t.Helper()
	tpl := &app.Template{ID: app.NewID("tpl"), TeamID: teamID, ShortID: app.NewID("s"), Slug: slug, Name: name, TemplateType: app.TypeAttachment,
		OutputFormats: []string{"pdf"}, Schema: []byte(`{"pages":[]}`), Variables: []render.Variable{}, Constants: map[string]any{},
		CalculatedVariables: []render.CalculatedVariable{}, CreatedBy: userID, CreatedAt: at, UpdatedAt: at}
	if mod != nil {
		mod(tpl)
	}
	if err := s.CreateTemplate(ctx, tpl); err != nil {
		t.Fatal(err)
	}
	return tpl
}

// templateReadBackAndSlugs: a template reads back by id, shortId, slug and
// name; a taken slug gets a numeric suffix and a taken name is refused;
// other teams find nothing.
func templateReadBackAndSlugs(t *testing.T, s Store) {
	u := mustUser(t, s, "tpl@example.com")
	other := mustUser(t, s, "other@example.com")
	team := mustTeam(t, s, u, "tpls", "growth", t0)
	cat1 := &app.TemplateGroup{ID: app.NewID("cat"), TeamID: team.ID, Kind: app.GroupCategory, Name: "B", CreatedAt: t0, UpdatedAt: t0}
	cat2 := &app.TemplateGroup{ID: app.NewID("cat"), TeamID: team.ID, Kind: app.GroupCategory, Name: "A", CreatedAt: t0, UpdatedAt: t0}
	for _, g := range []*app.TemplateGroup{cat1, cat2} {
		if err := s.CreateGroup(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	at := t0.Add(7 * time.Millisecond)
	tpl := mustTemplate(t, s, team.ID, u.ID, "Invoice", "invoice", at, func(tp *app.Template) {
		tp.Description = "Monthly"
		tp.OutputFormats = []string{"pdf", "xlsx"}
		tp.Variables = []render.Variable{{Name: "customer", Type: "string", Required: true}}
		tp.Constants = map[string]any{"vat": 0.19}
		tp.SampleData = map[string]any{"customer": "ACME"}
		tp.CategoryIDs = []string{cat1.ID, cat2.ID}
	})
	for _, ref := range []string{tpl.ID, tpl.ShortID, "invoice"} {
		got, err := s.FindTemplate(ctx, team.ID, ref)
		if err != nil {
			t.Fatalf("by %s: %v", ref, err)
		}
		if got.ID != tpl.ID || got.Name != "Invoice" || got.Description != "Monthly" || fmt.Sprint(got.OutputFormats) != "[pdf xlsx]" ||
			string(got.Schema) != `{"pages":[]}` || len(got.Variables) != 1 || got.Variables[0].Name != "customer" || !got.Variables[0].Required ||
			got.Constants["vat"] != 0.19 || got.SampleData["customer"] != "ACME" || fmt.Sprint(got.CategoryIDs) != fmt.Sprint([]string{cat1.ID, cat2.ID}) ||
			got.FolderID != nil || got.IsPublished || got.PublishedAt != nil || got.PublishedVersion != 0 || !got.HasDraft ||
			!got.CreatedAt.Equal(at) || !got.UpdatedAt.Equal(at) || got.CreatedBy != u.ID || got.Permission != "" {
			t.Fatalf("read back by %s: %+v", ref, got)
		}
	}
	if got, err := s.FindTemplateByName(ctx, team.ID, "Invoice"); err != nil || got.ID != tpl.ID {
		t.Fatalf("by name: %v %v", got, err)
	}
	second := mustTemplate(t, s, team.ID, u.ID, "Invoice 2", "invoice", t0, nil)
	third := mustTemplate(t, s, team.ID, u.ID, "Invoice 3", "invoice", t0, nil)
	if second.Slug != "invoice-2" || third.Slug != "invoice-3" {
		t.Fatalf("slugs %s, %s; want invoice-2, invoice-3", second.Slug, third.Slug)
	}
	err := s.CreateTemplate(ctx, &app.Template{ID: app.NewID("tpl"), TeamID: team.ID, ShortID: app.NewID("s"), Slug: "x", Name: "Invoice",
		TemplateType: app.TypeAttachment, OutputFormats: []string{"pdf"}, Schema: []byte(`{}`), CreatedBy: u.ID, CreatedAt: t0, UpdatedAt: t0})
	wantCode(t, "taken name", err, app.ECodeTemplateExists)
	for _, ref := range []string{tpl.ID, tpl.ShortID, "invoice"} {
		_, err := s.FindTemplate(ctx, other.PersonalTeamID, ref)
		wantCode(t, "another team's template by "+ref, err, app.ECodeTemplateNotFound)
		_, err = s.FindVisibleTemplate(ctx, other.PersonalTeamID, ref)
		wantCode(t, "another team's unshared template by "+ref, err, app.ECodeTemplateNotFound)
	}
	_, err = s.FindTemplateByName(ctx, other.PersonalTeamID, "Invoice")
	wantCode(t, "another team's template by name", err, app.ECodeTemplateNotFound)
	// The free plan holds two templates, whatever the concurrency.
	ok := 0
	for _, err := range concurrently(6, func(i int) error {
		return s.CreateTemplate(ctx, &app.Template{ID: app.NewID("tpl"), TeamID: other.PersonalTeamID, ShortID: app.NewID("s"), Slug: "same",
			Name: fmt.Sprintf("T %d", i), TemplateType: app.TypeAttachment, OutputFormats: []string{"pdf"}, Schema: []byte(`{}`),
			CreatedBy: other.ID, CreatedAt: t0, UpdatedAt: t0})
	}) {
		if err == nil {
			ok++
		} else if app.ErrorCode(err) != app.ECodePlanLimit {
			t.Fatal(err)
		}
	}
	if list, total, _ := s.FindTemplates(ctx, app.TemplateFilter{TeamID: other.PersonalTeamID, Page: page(1, 10)}); ok != 2 || total != 2 ||
		list[0].Slug == list[1].Slug {
		t.Fatalf("concurrent creates on free: %d made, %d listed", ok, total)
	}
}

// templateListSearchAndFilters: lists are newest first (ties newest
// written first); the search ignores the case of ASCII letters only and
// takes % and _ literally; folder, category and type filter.
func templateListSearchAndFilters(t *testing.T, s Store) {
	u := mustUser(t, s, "list@example.com")
	team := mustTeam(t, s, u, "lists", "growth", t0)
	folder := &app.TemplateGroup{ID: app.NewID("fld"), TeamID: team.ID, Kind: app.GroupFolder, Name: "F", CreatedAt: t0, UpdatedAt: t0}
	cat := &app.TemplateGroup{ID: app.NewID("cat"), TeamID: team.ID, Kind: app.GroupCategory, Name: "C", CreatedAt: t0, UpdatedAt: t0}
	for _, g := range []*app.TemplateGroup{folder, cat} {
		if err := s.CreateGroup(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	mustTemplate(t, s, team.ID, u.ID, "Invoice", "a", t0, func(tp *app.Template) { tp.FolderID = &folder.ID })
	mustTemplate(t, s, team.ID, u.ID, "ÉTÉ report", "b", t0.Add(time.Second), func(tp *app.Template) { tp.CategoryIDs = []string{cat.ID} })
	mustTemplate(t, s, team.ID, u.ID, "100% INVOICE_x", "c", t0.Add(time.Second), func(tp *app.Template) { tp.TemplateType = "email" })
	mustTemplate(t, s, team.ID, u.ID, "1000 invoices", "d", t0.Add(2*time.Second), nil)
	names := func(f app.TemplateFilter) string {
		t.Helper()
		f.TeamID = team.ID
		if f.Page.Limit == 0 {
			f.Page = page(1, 10)
		}
		list, total, err := s.FindTemplates(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tp := range list {
			out = append(out, tp.Name)
		}
		return fmt.Sprintf("%q %d", out, total)
	}
	for _, tc := range []struct {
		f    app.TemplateFilter
		want string
	}{
		{app.TemplateFilter{}, `["1000 invoices" "100% INVOICE_x" "ÉTÉ report" "Invoice"] 4`},
		{app.TemplateFilter{Search: "invoice"}, `["1000 invoices" "100% INVOICE_x" "Invoice"] 3`},
		{app.TemplateFilter{Search: "100%"}, `["100% INVOICE_x"] 1`},
		{app.TemplateFilter{Search: "e_x"}, `["100% INVOICE_x"] 1`},
		{app.TemplateFilter{Search: "été"}, `[] 0`},
		{app.TemplateFilter{Search: "ÉTÉ"}, `["ÉTÉ report"] 1`},
		{app.TemplateFilter{Search: "ÉTÉ REPORT"}, `["ÉTÉ report"] 1`},
		{app.TemplateFilter{Search: "éTÉ report"}, `[] 0`},
		{app.TemplateFilter{FolderID: folder.ID}, `["Invoice"] 1`},
		{app.TemplateFilter{CategoryID: cat.ID}, `["ÉTÉ report"] 1`},
		{app.TemplateFilter{TemplateType: "email"}, `["100% INVOICE_x"] 1`},
		{app.TemplateFilter{Page: page(2, 3)}, `["Invoice"] 4`},
	} {
		if got := names(tc.f); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.f, got, tc.want)
		}
	}
}

// templateUpdateAndDelete: updates keep names and slugs unique in the team;
// deletion takes live templates of the team only, and ends their shares.
func templateUpdateAndDelete(t *testing.T, s Store) {
	u := mustUser(t, s, "upd@example.com")
	v := mustUser(t, s, "viewer@example.com")
	team := mustTeam(t, s, u, "upd", "growth", t0)
	a := mustTemplate(t, s, team.ID, u.ID, "A", "a", t0, nil)
	b := mustTemplate(t, s, team.ID, u.ID, "B", "b", t0, nil)
	theirs := mustTemplate(t, s, v.PersonalTeamID, v.ID, "Theirs", "theirs", t0, nil)
	a.Name, a.Description, a.UpdatedAt = "A2", "changed", t0.Add(time.Minute)
	if err := s.UpdateTemplate(ctx, a); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.FindTemplate(ctx, team.ID, a.ID); got.Name != "A2" || got.Description != "changed" || !got.UpdatedAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("after update: %+v", got)
	}
	a.Name = "B"
	wantCode(t, "taken name", s.UpdateTemplate(ctx, a), app.ECodeTemplateExists)
	a.Name, a.Slug = "A2", "b"
	wantCode(t, "taken slug", s.UpdateTemplate(ctx, a), app.ECodeInvalidField)
	sh := &app.TemplateShare{ID: app.NewID("shr"), TemplateID: b.ID, OwnerTeamID: team.ID, TargetTeamID: v.PersonalTeamID, Permission: "view",
		CreatedBy: u.ID, CreatedAt: t0, UpdatedAt: t0}
	if err := s.CreateShare(ctx, sh); err != nil {
		t.Fatal(err)
	}
	gone, err := s.DeleteTemplates(ctx, team.ID, []string{b.ID, theirs.ID, "tpl_missing"}, u.ID, t0.Add(time.Hour))
	if err != nil || fmt.Sprint(gone) != fmt.Sprint([]string{b.ID}) {
		t.Fatalf("deleted %v %v, want only b", gone, err)
	}
	_, err = s.FindTemplate(ctx, team.ID, b.ID)
	wantCode(t, "deleted template", err, app.ECodeTemplateNotFound)
	if _, err := s.FindTemplate(ctx, v.PersonalTeamID, theirs.ID); err != nil {
		t.Fatalf("another team's template deleted: %v", err)
	}
	_, err = s.FindShare(ctx, sh.ID)
	wantCode(t, "share of a deleted template", err, app.ECodeShareNotFound)
	if gone, _ := s.DeleteTemplates(ctx, team.ID, []string{b.ID}, u.ID, t0); len(gone) != 0 {
		t.Fatalf("deleted twice: %v", gone)
	}
	b.Name = "B again"
	wantCode(t, "update deleted", s.UpdateTemplate(ctx, b), app.ECodeTemplateNotFound)
	// Name and slug are free again.
	mustTemplate(t, s, team.ID, u.ID, "B", "b", t0, nil)
}

// publishAndRestore: publishing numbers versions from 1, clears the draft,
// and keeps each version's content; restoring publishes an old version
// again; concurrent publishes get distinct numbers.
func publishAndRestore(t *testing.T, s Store) {
	u := mustUser(t, s, "pub@example.com")
	team := mustTeam(t, s, u, "pub", "growth", t0)
	tpl := mustTemplate(t, s, team.ID, u.ID, "Doc", "doc", t0, func(tp *app.Template) { tp.Description = "one" })
	pub := func(at time.Time, notes string) *app.Template {
		t.Helper()
		got, err := s.PublishTemplate(ctx, tpl.ID, &app.TemplateVersion{VersionInfo: app.VersionInfo{ID: app.NewID("ver"), ReleaseNotes: notes,
			PublishedAt: at, PublishedBy: u.ID}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	p1 := pub(t0.Add(time.Minute), "first")
	if p1.PublishedVersion != 1 || !p1.IsPublished || p1.HasDraft {
		t.Fatalf("after publish: %+v", p1)
	}
	got, _ := s.FindTemplate(ctx, team.ID, tpl.ID)
	if got.PublishedVersion != 1 || got.HasDraft || !got.PublishedAt.Equal(t0.Add(time.Minute)) || !got.UpdatedAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("stored after publish: %+v", got)
	}
	got.Description, got.UpdatedAt = "two", t0.Add(2*time.Minute)
	if err := s.UpdateTemplate(ctx, got); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.FindTemplate(ctx, team.ID, tpl.ID); !got.HasDraft {
		t.Fatal("a changed working copy has no draft")
	}
	pub(t0.Add(3*time.Minute), "second")
	refused := errors.New("refused")
	if _, err := s.PublishTemplate(ctx, tpl.ID, &app.TemplateVersion{VersionInfo: app.VersionInfo{ID: app.NewID("ver"), PublishedAt: t0, PublishedBy: u.ID}},
		func(tp *app.Template) error { return refused }); !errors.Is(err, refused) {
		t.Fatalf("refusing check: %v", err)
	}
	restored, err := s.RestoreTemplateVersion(ctx, tpl.ID, 1, &app.TemplateVersion{VersionInfo: app.VersionInfo{ID: app.NewID("ver"),
		ReleaseNotes: "back", PublishedAt: t0.Add(4 * time.Minute), PublishedBy: u.ID, RestoredFrom: ptr(1)}})
	if err != nil || restored.PublishedVersion != 3 || restored.Description != "one" || restored.HasDraft {
		t.Fatalf("restore: %+v %v", restored, err)
	}
	_, err = s.RestoreTemplateVersion(ctx, tpl.ID, 9, &app.TemplateVersion{VersionInfo: app.VersionInfo{ID: app.NewID("ver"), PublishedAt: t0}})
	wantCode(t, "restore a missing version", err, app.ECodeVersionNotFound)
	list, total, err := s.FindTemplateVersions(ctx, tpl.ID, page(1, 2))
	if err != nil || total != 3 || len(list) != 2 || list[0].Version != 3 || list[1].Version != 2 {
		t.Fatalf("versions %v %d %v", list, total, err)
	}
	v3 := list[0]
	if v3.Description != "one" || v3.ReleaseNotes != "back" || v3.RestoredFrom == nil || *v3.RestoredFrom != 1 || v3.TeamID != team.ID ||
		!v3.PublishedAt.Equal(t0.Add(4*time.Minute)) || v3.PublishedBy != u.ID || v3.ContentHash == "" || v3.Name != "Doc" {
		t.Fatalf("version 3: %+v", v3)
	}
	if v2, err := s.FindTemplateVersion(ctx, tpl.ID, 2); err != nil || v2.Description != "two" || v2.RestoredFrom != nil || v2.ReleaseNotes != "second" {
		t.Fatalf("version 2: %+v %v", v2, err)
	}
	if byID, err := s.FindTemplateVersionByID(ctx, v3.ID); err != nil || byID.Version != 3 {
		t.Fatalf("by id: %+v %v", byID, err)
	}
	_, err = s.FindTemplateVersion(ctx, tpl.ID, 7)
	wantCode(t, "missing version", err, app.ECodeVersionNotFound)
	_, err = s.FindTemplateVersionByID(ctx, "ver_missing")
	wantCode(t, "missing version id", err, app.ECodeVersionNotFound)
	for _, err := range concurrently(5, func(int) error {
		_, err := s.PublishTemplate(ctx, tpl.ID, &app.TemplateVersion{VersionInfo: app.VersionInfo{ID: app.NewID("ver"), PublishedAt: t0, PublishedBy: u.ID}}, nil)
		return err
	}) {
		if err != nil {
			t.Fatalf("concurrent publish: %v", err)
		}
	}
	if list, total, _ := s.FindTemplateVersions(ctx, tpl.ID, page(1, 20)); total != 8 || list[0].Version != 8 {
		t.Fatalf("after concurrent publishes: %d versions, newest %d", total, list[0].Version)
	}
}

// shares: a template is shared once per team; shares list oldest first
// for the owner and newest first for the target, which sees the template
// with its permission, by id or shortId but never by slug.
func shares(t *testing.T, s Store) {
	owner := mustUser(t, s, "own@example.com")
	a := mustUser(t, s, "a@example.com")
	b := mustUser(t, s, "b@example.com")
	team := mustTeam(t, s, owner, "owner-team", "growth", t0)
	tpl := mustTemplate(t, s, team.ID, owner.ID, "Shared", "shared", t0, nil)
	mk := func(target string, at time.Time, perm string) *app.TemplateShare {
		t.Helper()
		sh := &app.TemplateShare{ID: app.NewID("shr"), TemplateID: tpl.ID, OwnerTeamID: team.ID, TargetTeamID: target, Permission: perm,
			CreatedBy: owner.ID, CreatedAt: at, UpdatedAt: at}
		if err := s.CreateShare(ctx, sh); err != nil {
			t.Fatal(err)
		}
		return sh
	}
	sa := mk(a.PersonalTeamID, t0.Add(time.Minute), "view")
	sb := mk(b.PersonalTeamID, t0.Add(time.Minute), "edit")
	err := s.CreateShare(ctx, &app.TemplateShare{ID: app.NewID("shr"), TemplateID: tpl.ID, OwnerTeamID: team.ID, TargetTeamID: a.PersonalTeamID,
		Permission: "edit", CreatedBy: owner.ID, CreatedAt: t0, UpdatedAt: t0})
	wantCode(t, "shared twice", err, app.ECodeAlreadyShared)
	list, err := s.FindShares(ctx, tpl.ID)
	if err != nil || len(list) != 2 || list[0].ID != sa.ID || list[1].ID != sb.ID || list[0].TargetTeamName != "Personal" || !list[0].CreatedAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("shares %+v %v", list, err)
	}
	for _, ref := range []string{tpl.ID, tpl.ShortID} {
		got, err := s.FindVisibleTemplate(ctx, a.PersonalTeamID, ref)
		if err != nil || got.ID != tpl.ID || got.Permission != "view" {
			t.Fatalf("visible by %s: %+v %v", ref, got, err)
		}
	}
	_, err = s.FindVisibleTemplate(ctx, a.PersonalTeamID, "shared")
	wantCode(t, "a shared template by slug", err, app.ECodeTemplateNotFound)
	up, err := s.UpdateShare(ctx, sa.ID, "edit", t0.Add(time.Hour))
	if err != nil || up.Permission != "edit" || !up.UpdatedAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("update share: %+v %v", up, err)
	}
	tpl2 := mustTemplate(t, s, team.ID, owner.ID, "Second", "second", t0, nil)
	if err := s.CreateShare(ctx, &app.TemplateShare{ID: app.NewID("shr"), TemplateID: tpl2.ID, OwnerTeamID: team.ID, TargetTeamID: a.PersonalTeamID,
		Permission: "view", CreatedBy: owner.ID, CreatedAt: t0.Add(2 * time.Minute), UpdatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	with, err := s.FindSharedWithTeam(ctx, a.PersonalTeamID)
	if err != nil || len(with) != 2 || with[0].ID != tpl2.ID || with[1].ID != tpl.ID || with[1].Permission != "edit" || with[1].OwnerTeamName != "Team owner-team" ||
		!with[0].SharedAt.Equal(t0.Add(2*time.Minute)) || with[1].ShortID != tpl.ShortID {
		t.Fatalf("shared with a: %+v %v", with, err)
	}
	if err := s.DeleteShare(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "delete twice", s.DeleteShare(ctx, sb.ID), app.ECodeShareNotFound)
	_, err = s.UpdateShare(ctx, sb.ID, "view", t0)
	wantCode(t, "update a deleted share", err, app.ECodeShareNotFound)
	_, err = s.FindVisibleTemplate(ctx, b.PersonalTeamID, tpl.ID)
	wantCode(t, "visible after unsharing", err, app.ECodeTemplateNotFound)
	// A deleted owner team hides what it shared.
	if err := s.DeleteTeam(ctx, team.ID, t0); err != nil {
		t.Fatal(err)
	}
	if with, _ := s.FindSharedWithTeam(ctx, a.PersonalTeamID); len(with) != 0 {
		t.Fatalf("shares of a deleted team: %v", with)
	}
	_, err = s.FindVisibleTemplate(ctx, a.PersonalTeamID, tpl.ID)
	wantCode(t, "visible from a deleted team", err, app.ECodeTemplateNotFound)
}

// foldersAndCategories: groups are per team and kind, listed by name
// (bytewise) with live template counts; deleting a folder empties it,
// deleting a category unfiles its templates; filing applies to the team's
// live templates only.
func foldersAndCategories(t *testing.T, s Store) {
	u := mustUser(t, s, "grp@example.com")
	v := mustUser(t, s, "other@example.com")
	team := mustTeam(t, s, u, "grp", "growth", t0)
	mkGroup := func(kind, name string) *app.TemplateGroup {
		t.Helper()
		g := &app.TemplateGroup{ID: app.NewID(kind[:3]), TeamID: team.ID, Kind: kind, Name: name, CreatedAt: t0, UpdatedAt: t0}
		if err := s.CreateGroup(ctx, g); err != nil {
			t.Fatal(err)
		}
		return g
	}
	fb, fa := mkGroup(app.GroupFolder, "beta"), mkGroup(app.GroupFolder, "Alpha")
	c1, c2 := mkGroup(app.GroupCategory, "alpha"), mkGroup(app.GroupCategory, "beta") // the same names as folders: another kind
	err := s.CreateGroup(ctx, &app.TemplateGroup{ID: app.NewID("fld"), TeamID: team.ID, Kind: app.GroupFolder, Name: "beta", CreatedAt: t0, UpdatedAt: t0})
	wantCode(t, "taken folder name", err, app.ECodeInvalidField)
	t1 := mustTemplate(t, s, team.ID, u.ID, "T1", "t1", t0, func(tp *app.Template) { tp.FolderID = &fb.ID })
	t2 := mustTemplate(t, s, team.ID, u.ID, "T2", "t2", t0, func(tp *app.Template) { tp.FolderID = &fb.ID })
	theirs := mustTemplate(t, s, v.PersonalTeamID, v.ID, "Theirs", "theirs", t0, nil)
	folders, total, err := s.FindGroups(ctx, team.ID, app.GroupFolder, page(1, 10))
	if err != nil || total != 2 || folders[0].ID != fa.ID || folders[1].ID != fb.ID || folders[1].TemplateCount != 2 || folders[0].TemplateCount != 0 {
		t.Fatalf("folders %+v %d %v", folders, total, err)
	}
	done, err := s.SetTemplateCategories(ctx, team.ID, []string{t1.ID, t2.ID, theirs.ID}, []string{c2.ID, c1.ID}, false, t0.Add(time.Minute))
	if err != nil || fmt.Sprint(done) != fmt.Sprint([]string{t1.ID, t2.ID}) {
		t.Fatalf("filed %v %v", done, err)
	}
	if got, _ := s.FindTemplate(ctx, team.ID, t1.ID); fmt.Sprint(got.CategoryIDs) != fmt.Sprint([]string{c2.ID, c1.ID}) || !got.UpdatedAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("t1 categories %v at %v", got.CategoryIDs, got.UpdatedAt)
	}
	if _, err := s.SetTemplateCategories(ctx, team.ID, []string{t1.ID}, []string{c1.ID}, true, t0); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.FindTemplate(ctx, team.ID, t1.ID); fmt.Sprint(got.CategoryIDs) != fmt.Sprint([]string{c1.ID}) {
		t.Fatalf("t1 categories after replacing: %v", got.CategoryIDs)
	}
	if g, err := s.FindGroup(ctx, team.ID, app.GroupCategory, c1.ID); err != nil || g.TemplateCount != 2 || g.Name != "alpha" {
		t.Fatalf("category %+v %v", g, err)
	}
	_, err = s.FindGroup(ctx, team.ID, app.GroupFolder, c1.ID)
	wantCode(t, "a category as a folder", err, app.ECodeFolderNotFound)
	_, err = s.FindGroup(ctx, v.PersonalTeamID, app.GroupCategory, c1.ID)
	wantCode(t, "another team's category", err, app.ECodeCategoryNotFound)
	_, err = s.RenameGroup(ctx, team.ID, app.GroupFolder, fa.ID, "beta", t0)
	wantCode(t, "rename to a taken name", err, app.ECodeInvalidField)
	if g, err := s.RenameGroup(ctx, team.ID, app.GroupFolder, fa.ID, "gamma", t0.Add(time.Hour)); err != nil || g.Name != "gamma" || !g.UpdatedAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("rename: %+v %v", g, err)
	}
	if err := s.DeleteGroup(ctx, team.ID, app.GroupFolder, fb.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.FindTemplate(ctx, team.ID, t1.ID); got.FolderID != nil {
		t.Fatalf("t1 still in the deleted folder %v", *got.FolderID)
	}
	if err := s.DeleteGroup(ctx, team.ID, app.GroupCategory, c1.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.FindTemplate(ctx, team.ID, t2.ID); fmt.Sprint(got.CategoryIDs) != fmt.Sprint([]string{c2.ID}) {
		t.Fatalf("t2 categories after deleting one: %v", got.CategoryIDs)
	}
	wantCode(t, "delete twice", s.DeleteGroup(ctx, team.ID, app.GroupCategory, c1.ID), app.ECodeCategoryNotFound)
	wantCode(t, "delete through another team", s.DeleteGroup(ctx, v.PersonalTeamID, app.GroupCategory, c2.ID), app.ECodeCategoryNotFound)
}
