package storetest

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"time"

	"folio/app"
)

var signingCases = []HookCase{
	{"SigningCertificatesScopedByTeam", signingCertificatesScopedByTeam},
}

func mustCert(t *testing.T, s HookStore, teamID, name string, sealed []byte) *app.SigningCertificate {
	t.Helper()
	c := &app.SigningCertificate{ID: app.NewID("sig"), TeamID: teamID, Name: name, Subject: "CN=" + name + ",O=Folio", CommonName: name,
		Issuer: "CN=Folio Test CA", Serial: "0a1b2c", NotBefore: t0.Add(-24 * time.Hour), NotAfter: t0.Add(365 * 24 * time.Hour),
		Fingerprint: "ab:cd:" + name, KeyType: "ECDSA P-256", ChainSize: 2, Sealed: sealed, CreatedBy: "usr_x", CreatedAt: t0}
	if err := s.CreateSigningCertificate(ctx, c); err != nil {
		t.Fatal(err)
	}
	return c
}

// signingCertificatesScopedByTeam: certificates read back whole (the
// sealed key byte for byte), by id or by name, list by name (bytewise);
// names are unique in a team, not across teams; team B never sees, finds
// or deletes A's.
func signingCertificatesScopedByTeam(t *testing.T, s HookStore, _ Outbox) {
	a := mustUser(t, s, "signer-a@example.com").PersonalTeamID
	b := mustUser(t, s, "signer-b@example.com").PersonalTeamID
	sealed := []byte{0, 1, 2, 0xff, 0xfe, 0, 'k', 0x80} // not text: NULs and bytes invalid in UTF-8
	beta := mustCert(t, s, a, "beta", sealed)
	alpha := mustCert(t, s, a, "alpha", []byte("a"))
	upper := mustCert(t, s, a, "Zeta", []byte("z"))
	theirs := mustCert(t, s, b, "beta", []byte("b")) // the same name in another team

	for _, ref := range []string{beta.ID, "beta"} {
		got, err := s.FindSigningCertificate(ctx, a, ref)
		if err != nil || got.ID != beta.ID || got.TeamID != a || got.Name != "beta" || got.Subject != beta.Subject || got.CommonName != "beta" ||
			got.Issuer != beta.Issuer || got.Serial != beta.Serial || !got.NotBefore.Equal(beta.NotBefore) || !got.NotAfter.Equal(beta.NotAfter) ||
			got.Fingerprint != beta.Fingerprint || got.KeyType != beta.KeyType || got.ChainSize != 2 || !bytes.Equal(got.Sealed, sealed) ||
			got.CreatedBy != "usr_x" || !got.CreatedAt.Equal(t0) {
			t.Fatalf("by %s: %+v, %v", ref, got, err)
		}
	}
	list, err := s.FindSigningCertificates(ctx, a)
	names := func(l []*app.SigningCertificate) []string {
		return ids(l, func(c *app.SigningCertificate) string { return c.Name })
	}
	if want := []string{"Zeta", "alpha", "beta"}; err != nil || !slices.Equal(names(list), want) {
		t.Fatalf("A's list %v, %v; want %v (bytewise)", names(list), err, want)
	}
	if list, _ := s.FindSigningCertificates(ctx, b); len(list) != 1 || list[0].ID != theirs.ID || !bytes.Equal(list[0].Sealed, []byte("b")) {
		t.Fatalf("B's list %+v", list)
	}
	if list, err := s.FindSigningCertificates(ctx, "team_none"); err != nil || len(list) != 0 {
		t.Fatalf("a team without certificates: %v, %v", list, err)
	}

	for _, ref := range []string{alpha.ID, "alpha", upper.ID} {
		_, err := s.FindSigningCertificate(ctx, b, ref)
		wantCode(t, "B finds A's "+ref, err, app.ECodeSigningNotFound)
	}
	if got, err := s.FindSigningCertificate(ctx, b, "beta"); err != nil || got.ID != theirs.ID {
		t.Fatalf("B's beta: %+v, %v", got, err)
	}
	_, err = s.FindSigningCertificate(ctx, a, "ALPHA")
	wantCode(t, "a name in another case", err, app.ECodeSigningNotFound)

	dup := *alpha
	dup.ID = app.NewID("sig")
	err = s.CreateSigningCertificate(ctx, &dup)
	wantCode(t, "a second alpha", err, app.ECodeSigningExists)
	if e, ok := errors.AsType[*app.Error](err); !ok || e.Info["field"] != "name" {
		t.Fatalf("duplicate name error %#v: want relatedInfo.field name", err)
	}

	wantCode(t, "B deletes A's", s.DeleteSigningCertificate(ctx, b, alpha.ID), app.ECodeSigningNotFound)
	if err := s.DeleteSigningCertificate(ctx, a, alpha.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "deleted twice", s.DeleteSigningCertificate(ctx, a, alpha.ID), app.ECodeSigningNotFound)
	_, err = s.FindSigningCertificate(ctx, a, "alpha")
	wantCode(t, "deleted", err, app.ECodeSigningNotFound)
	// The name is free again.
	again := mustCert(t, s, a, "alpha", []byte("again"))
	if got, _ := s.FindSigningCertificate(ctx, a, "alpha"); got.ID != again.ID {
		t.Fatalf("alpha after re-creating: %+v", got)
	}
}
