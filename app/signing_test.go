package app

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/cryptobyte"
	cbasn1 "golang.org/x/crypto/cryptobyte/asn1"
	"software.sslmate.com/src/go-pkcs12"

	"folio/render"
	"folio/render/pades"
)

// testP12 is a self-signed P-256 certificate and key as PKCS #12 files
// (modern AES and legacy RC2/3DES encryption).
func testP12(tb testing.TB, password string) (modern, legacy []byte, key *ecdsa.PrivateKey) {
	tb.Helper()
	key, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(9), Subject: pkix.Name{CommonName: "Fuzz Signer"}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		tb.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	if modern, err = pkcs12.Modern.Encode(key, cert, nil, password); err != nil {
		tb.Fatal(err)
	}
	if legacy, err = pkcs12.Legacy.Encode(key, cert, nil, password); err != nil {
		tb.Fatal(err)
	}
	return modern, legacy, key
}

// FuzzParseP12: the upload parser never panics, and what it accepts is a
// key Folio signs with, matching an unexpired certificate.
func FuzzParseP12(f *testing.F) {
	modern, legacy, _ := testP12(f, "pw")
	f.Add(modern, "pw")
	f.Add(legacy, "pw")
	f.Add(modern, "wrong")
	f.Add(modern[:len(modern)/2], "pw")
	f.Add([]byte{0x30, 0x80}, "")
	f.Add([]byte{}, "")
	now := time.Now()
	// The bound is checked by TestP12IterationsBounded; here a smaller
	// one keeps every run quick.
	maxP12Iterations = 4096
	f.Fuzz(func(t *testing.T, data []byte, password string) {
		p, err := ParseP12(data, password, now)
		if err != nil {
			if c := ErrorCode(err); c != ECodeSigningInvalid && c != ECodeRequired {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if len(p.Chain) == 0 || !publicKeysEqual(p.Key.Public(), p.Chain[0].PublicKey) || now.After(p.Chain[0].NotAfter) {
			t.Fatalf("accepted a p12 that cannot sign: %+v", p)
		}
	})
}

func TestP12IterationsBounded(t *testing.T) {
	modern, legacy, _ := testP12(t, "pw")
	for _, p12 := range [][]byte{modern, legacy} {
		if n, ok := p12Iterations(p12, 0); !ok || n != 2048 {
			t.Errorf("iterations %d %v, want 2048 (go-pkcs12's)", n, ok)
		}
	}
	// The same file with its MacData asking for 2^31 - 1 iterations.
	pfx := cryptobyte.String(modern)
	var body, version, authSafe, macData, digest, salt cryptobyte.String
	if !pfx.ReadASN1(&body, cbasn1.SEQUENCE) || !body.ReadASN1Element(&version, cbasn1.INTEGER) || !body.ReadASN1Element(&authSafe, cbasn1.SEQUENCE) ||
		!body.ReadASN1(&macData, cbasn1.SEQUENCE) || !macData.ReadASN1Element(&digest, cbasn1.SEQUENCE) || !macData.ReadASN1Element(&salt, cbasn1.OCTET_STRING) {
		t.Fatal("cannot read the PFX")
	}
	var b cryptobyte.Builder
	b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
		b.AddBytes(version)
		b.AddBytes(authSafe)
		b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
			b.AddBytes(digest)
			b.AddBytes(salt)
			b.AddASN1Int64(1<<31 - 1)
		})
	})
	slow := b.BytesOrPanic()
	if n, ok := p12Iterations(slow, 0); !ok || n != 1<<31-1 {
		t.Fatalf("iterations %d %v", n, ok)
	}
	start := time.Now()
	if _, err := ParseP12(slow, "pw", time.Now()); ErrorCode(err) != ECodeSigningInvalid || !strings.Contains(err.Error(), "iterations") {
		t.Errorf("2,000,000 iterations: %v", err)
	}
	t.Logf("refused in %s", time.Since(start))
}

func TestSealedKeyOpensOnlyForItsRowAndKEK(t *testing.T) {
	modern, _, key := testP12(t, "pw")
	p, err := ParseP12(modern, "pw", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	kek := bytes.Repeat([]byte{7}, 32)
	s := &SigningService{KEK: kek, Now: time.Now}
	c := &SigningCertificate{ID: "sig_a", TeamID: "team_a"}
	if err := s.seal(c, p); err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	if bytes.Contains(c.Sealed, der) || bytes.Contains(c.Sealed, key.D.Bytes()) {
		t.Fatal("the sealed blob holds the key in clear")
	}
	got, err := s.open(c)
	if err != nil || !key.Equal(got.Key) {
		t.Fatalf("open: %v", err)
	}
	moved := *c
	moved.TeamID = "team_b"
	if _, err := s.open(&moved); err == nil {
		t.Error("a sealed key copied to another team's row opens")
	}
	other := &SigningService{KEK: bytes.Repeat([]byte{8}, 32), Now: time.Now}
	if _, err := other.open(c); err == nil {
		t.Error("a sealed key opens with another KEK")
	}
}

// memCerts is a SigningCertificateStore in memory.
type memCerts map[string]*SigningCertificate

func (m memCerts) CreateSigningCertificate(_ context.Context, c *SigningCertificate) error {
	m[c.ID] = c
	return nil
}
func (m memCerts) FindSigningCertificates(_ context.Context, teamID string) ([]*SigningCertificate, error) {
	return nil, nil
}
func (m memCerts) FindSigningCertificate(_ context.Context, teamID, ref string) (*SigningCertificate, error) {
	for _, c := range m {
		if c.TeamID == teamID && (c.ID == ref || c.Name == ref) {
			return c, nil
		}
	}
	return nil, ErrNotFound(ECodeSigningNotFound, "signing certificate")
}
func (m memCerts) DeleteSigningCertificate(_ context.Context, teamID, id string) error {
	delete(m, id)
	return nil
}

// TestSignFailuresAtRenderTime: a job whose certificate is gone, or whose
// time-stamp authority does not answer, fails with ERR_SIGN_005 and is
// never written unsigned.
func TestSignFailuresAtRenderTime(t *testing.T) {
	modern, _, _ := testP12(t, "pw")
	store := memCerts{}
	s := &SigningService{Store: store, KEK: bytes.Repeat([]byte{1}, 32), Now: time.Now}
	ctx := WithPrincipal(context.Background(), &Principal{Kind: AuthJWT, UserID: "usr_1", TeamID: "team_a", Role: RoleOwner})
	c, err := s.CreateSigningCertificate(ctx, SigningUpload{Name: "Mine", Data: modern, Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	// A closed port for the TSA.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	url := "http://" + ln.Addr().String()
	ln.Close()
	s.TSA = &pades.TSA{URL: url}
	sig := &render.Signature{Certificate: "Mine"}
	if _, e := s.Sign(context.Background(), "team_a", []byte("%PDF-1.7\n"), sig); e == nil || e.Code != ECodeSigningFailed {
		t.Errorf("unreadable PDF: %v", e)
	}
	pdf := minimalPDF("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>", "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>")
	if _, e := s.Sign(context.Background(), "team_a", pdf, sig); e == nil || e.Code != ECodeSigningFailed || !strings.Contains(e.Message, "time-stamp authority") {
		t.Errorf("TSA down: %v", e)
	}
	s.TSA = nil
	if signed, e := s.Sign(context.Background(), "team_a", pdf, sig); e != nil || !bytes.HasPrefix(signed, pdf) || !bytes.Contains(signed, []byte("/ETSI.CAdES.detached")) {
		t.Errorf("B-B: %v", e)
	}
	if _, e := s.Sign(context.Background(), "team_b", pdf, sig); e == nil || e.Code != ECodeSigningFailed || !strings.Contains(e.Message, "no signing certificate") {
		t.Errorf("another team's certificate: %v", e)
	}
	delete(store, c.ID)
	if _, e := s.Sign(context.Background(), "team_a", pdf, sig); e == nil || e.Code != ECodeSigningFailed {
		t.Errorf("deleted certificate: %v", e)
	}
}
