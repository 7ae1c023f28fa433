package pades

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/json"
	"io"
	"math/big"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"

	"folio/assets"
	"folio/render"
)

// TestCA is a self-signed CA and a leaf it issued, for tests.
type testPKI struct {
	ca     *x509.Certificate
	caKey  crypto.Signer
	signer Signer
}

func newKey(tb testing.TB, kind string) crypto.Signer {
	tb.Helper()
	var k crypto.Signer
	var err error
	switch kind {
	case "rsa":
		k, err = rsa.GenerateKey(rand.Reader, 2048)
	case "p384":
		k, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	default:
		k, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

func issue(tb testing.TB, tmpl, parent *x509.Certificate, pub crypto.PublicKey, parentKey crypto.Signer) *x509.Certificate {
	tb.Helper()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, parentKey)
	if err != nil {
		tb.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// newPKI makes a CA and a leaf for name with a key of kind (rsa, p256, p384).
func newPKI(tb testing.TB, kind, name string) testPKI {
	tb.Helper()
	caKey := newKey(tb, "p256")
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Folio Test CA", Organization: []string{"Folio Tests"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	ca := issue(tb, caTmpl, caTmpl, caKey.Public(), caKey)
	key := newKey(tb, kind)
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(4242), Subject: pkix.Name{CommonName: name, Organization: []string{"ACME GmbH"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment}
	leaf := issue(tb, leafTmpl, ca, key.Public(), caKey)
	return testPKI{ca: ca, caKey: caKey, signer: Signer{Key: key, Chain: []*x509.Certificate{leaf, ca}}}
}

var (
	engineOnce sync.Once
	engine     *render.Engine
)

// renderPDF renders a three-page document with Folio's engine.
func renderPDF(tb testing.TB, extra string) []byte {
	tb.Helper()
	engineOnce.Do(func() {
		set := assets.Fonts()
		conv := func(list []assets.FontFamily) []render.FontFamily {
			out := make([]render.FontFamily, len(list))
			for i, f := range list {
				out[i].Name = f.Name
				for s, file := range []*assets.FontFile{f.Regular, f.Bold, f.Italic, f.BoldItalic} {
					if file != nil {
						out[i].Lazy[s] = &render.FontFile{Name: file.Name, Coverage: file.Coverage, Load: file.Bytes}
					}
				}
			}
			return out
		}
		var err error
		engine, err = render.NewEngine(render.Fonts{Families: conv(set.Families), Fallbacks: conv(set.Fallbacks)})
		if err != nil {
			tb.Fatal(err)
		}
	})
	schema := `{` + extra + `"metadata":{"title":"Contract 7","author":"ACME GmbH"},"sections":[{"id":"s","components":[
		{"type":"heading","props":{"content":"Contract"}},{"type":"text","props":{"content":"Grüße — signed below"}},
		{"type":"pageBreak"},{"type":"text","props":{"content":"second page"}}]}]}`
	tpl, err := engine.Compile(render.Definition{Schema: json.RawMessage(schema)})
	if err != nil {
		tb.Fatal(err)
	}
	values, err := tpl.Values(map[string]any{})
	if err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := tpl.Render(context.Background(), &buf, render.PDF, values, render.Options{}); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func needTool(tb testing.TB, name string) {
	tb.Helper()
	if _, err := exec.LookPath(name); err != nil {
		tb.Skipf("%s not installed", name)
	}
}

func writeTemp(tb testing.TB, b []byte, name string) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		tb.Fatal(err)
	}
	return p
}

// PDFSig runs poppler's pdfsig (no certificate trust check: the test CA
// is not in NSS's store) and returns its output.
func PDFSig(tb testing.TB, pdf []byte) string {
	tb.Helper()
	needTool(tb, "pdfsig")
	out, _ := exec.Command("pdfsig", "-nocert", writeTemp(tb, pdf, "signed.pdf")).CombinedOutput()
	return string(out)
}

func mustSign(tb testing.TB, pdf []byte, s Signer, o Options) []byte {
	tb.Helper()
	out, err := Sign(context.Background(), pdf, s, o)
	if err != nil {
		tb.Fatalf("Sign: %v", err)
	}
	if !bytes.HasPrefix(out, pdf) {
		tb.Fatal("the signed file does not begin with the original bytes (not an incremental update)")
	}
	return out
}

var signTime = time.Date(2026, 11, 26, 7, 30, 0, 0, time.UTC)

func TestSignVerifiesWithPDFSig(t *testing.T) {
	pdf := renderPDF(t, "")
	for _, kind := range []string{"rsa", "p256", "p384"} {
		t.Run(kind, func(t *testing.T) {
			pki := newPKI(t, kind, "Erika Mustermann")
			for _, visible := range []bool{false, true} {
				signed := mustSign(t, pdf, pki.signer, Options{Name: "Erika Mustermann", Reason: "Vertrag genehmigt", Location: "Zürich", Time: signTime, Visible: visible})
				out := PDFSig(t, signed)
				for _, want := range []string{"Signature #1", "Signer Certificate Common Name: Erika Mustermann", "Signature Validation: Signature is Valid.",
					"Signature Type: ETSI.CAdES.detached", "Total document signed", "Signing Time: Nov 26 2026 07:30:00"} {
					if !strings.Contains(out, want) {
						t.Errorf("visible=%v: pdfsig lacks %q:\n%s", visible, want, out)
					}
				}
				if qout, err := exec.Command("qpdf", "--check", writeTemp(t, signed, "q.pdf")).CombinedOutput(); err != nil {
					t.Errorf("qpdf --check: %v\n%s", err, qout)
				}
			}
		})
	}
}

func TestSignedByteChangedIsInvalid(t *testing.T) {
	pki := newPKI(t, "p256", "Erika Mustermann")
	signed := mustSign(t, renderPDF(t, ""), pki.signer, Options{Name: "Erika", Time: signTime})
	i := bytes.Index(signed, []byte("second page"))
	if i < 0 {
		// The content is compressed: change a byte of the first stream instead.
		i = bytes.Index(signed, []byte("stream\n")) + 20
	}
	bad := bytes.Clone(signed)
	bad[i] ^= 0x01
	out := PDFSig(t, bad)
	if strings.Contains(out, "Signature is Valid.") || !strings.Contains(out, "Signature Validation:") {
		t.Errorf("pdfsig accepts a modified document:\n%s", out)
	}
}

// NewTestTSA starts a TimeStampServer on loopback with a certificate for
// time stamping issued by a test CA.
func NewTestTSA(tb testing.TB, now time.Time) (*TimeStampServer, *httptest.Server) {
	tb.Helper()
	pki := newPKI(tb, "p256", "Folio Test TSA")
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(77), Subject: pkix.Name{CommonName: "Folio Test TSA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageTimeStamping}}
	key := newKey(tb, "p256")
	leaf := issue(tb, leafTmpl, pki.ca, key.Public(), pki.caKey)
	t := &TimeStampServer{Signer: Signer{Key: key, Chain: []*x509.Certificate{leaf, pki.ca}}, Now: func() time.Time { return now }}
	srv := httptest.NewServer(t)
	tb.Cleanup(srv.Close)
	return t, srv
}

func TestSignWithTimestampIsBT(t *testing.T) {
	stamped := time.Date(2026, 11, 26, 7, 31, 15, 0, time.UTC)
	tsa, srv := NewTestTSA(t, stamped)
	pki := newPKI(t, "rsa", "Erika Mustermann")
	client := &TSA{URL: srv.URL}
	signed := mustSign(t, renderPDF(t, ""), pki.signer, Options{Name: "Erika Mustermann", Reason: "Approved", Time: signTime,
		TimeStamp: client.Token})
	if n := tsa.Calls.Load(); n != 1 {
		t.Fatalf("the TSA was called %d times, want 1", n)
	}
	out := PDFSig(t, signed)
	if !strings.Contains(out, "Signature is Valid.") {
		t.Errorf("pdfsig:\n%s", out)
	}
	// OpenSSL reads the CMS independently: the unsigned attribute holds a
	// time-stamp token whose TSTInfo has the TSA's time.
	needTool(t, "openssl")
	dir := t.TempDir()
	cmd := exec.Command("pdfsig", "-nocert", "-dump", writeTemp(t, signed, "s.pdf"))
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pdfsig -dump: %v %s", err, b)
	}
	printed, err := exec.Command("openssl", "cms", "-cmsout", "-print", "-inform", "DER", "-in", filepath.Join(dir, "s.pdf.sig0")).CombinedOutput()
	if err != nil {
		t.Fatalf("openssl cms -print: %v\n%s", err, printed)
	}
	for _, want := range []string{"id-smime-aa-timeStampToken", "id-smime-aa-signingCertificateV2", "messageDigest", "contentType"} {
		if !strings.Contains(string(printed), want) {
			t.Errorf("openssl cms -print lacks %s", want)
		}
	}
	if strings.Contains(string(printed), "signingTime") {
		t.Error("PAdES B forbids the signing-time attribute; /M carries it")
	}
	// The token's time, read back by OpenSSL's ts command.
	tok := extractToken(t, signed)
	reply, err := exec.Command("openssl", "ts", "-reply", "-token_in", "-in", writeTemp(t, tok, "tok.der"), "-token_out", "-text").CombinedOutput()
	if err != nil {
		t.Fatalf("openssl ts: %v\n%s", err, reply)
	}
	if !strings.Contains(string(reply), "Time stamp: Nov 26 07:31:15 2026 GMT") {
		t.Errorf("openssl ts -text:\n%s", reply)
	}
}

// extractToken returns the time-stamp token of the first signature.
func extractToken(tb testing.TB, signed []byte) []byte {
	tb.Helper()
	i := bytes.Index(signed, []byte("/Contents <"))
	j := bytes.IndexByte(signed[i:], '>')
	hexed := strings.TrimRight(string(signed[i+len("/Contents <"):i+j]), "0")
	if len(hexed)%2 == 1 {
		hexed += "0"
	}
	raw := make([]byte, len(hexed)/2)
	for k := range raw {
		var b byte
		for _, c := range hexed[2*k : 2*k+2] {
			b <<= 4
			switch {
			case c >= '0' && c <= '9':
				b |= byte(c - '0')
			default:
				b |= byte(c-'a') + 10
			}
		}
		raw[k] = b
	}
	at := bytes.Index(raw, []byte{0x06, 0x0b, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x10, 0x02, 0x0e}) // id-aa-timeStampToken
	if at < 0 {
		tb.Fatal("no time-stamp token attribute")
	}
	var attr struct {
		Type   asn1.ObjectIdentifier
		Values []asn1.RawValue `asn1:"set"`
	}
	// The attribute's SEQUENCE header sits just before the OID.
	for back := 2; back <= 6; back++ {
		if rest, err := asn1.Unmarshal(raw[at-back:], &attr); err == nil && len(attr.Values) == 1 && len(rest) >= 0 {
			return attr.Values[0].FullBytes
		}
	}
	tb.Fatal("cannot read the time-stamp attribute")
	return nil
}

// TestSignMergedAndResigned signs what pdfcpu wrote (a merge: object
// streams and a cross-reference stream, as the merge option produces),
// including a PDF/A-2b part, then signs the result again: both
// signatures verify, the first one covering the revision it signed.
func TestSignMergedAndResigned(t *testing.T) {
	a, b := renderPDF(t, `"pdfa":"2b",`), renderPDF(t, "")
	var merged bytes.Buffer
	conf := model.NewDefaultConfiguration()
	if err := api.MergeRaw([]io.ReadSeeker{bytes.NewReader(a), bytes.NewReader(b)}, &merged, false, conf); err != nil {
		t.Fatalf("pdfcpu merge: %v", err)
	}
	if !bytes.Contains(merged.Bytes(), []byte("/XRef")) {
		t.Log("pdfcpu wrote a classic cross-reference table")
	}
	first := newPKI(t, "p256", "First Signer")
	second := newPKI(t, "rsa", "Second Signer")
	once := mustSign(t, merged.Bytes(), first.signer, Options{Name: "First Signer", Reason: "merged", Time: signTime, Visible: true, Page: -1})
	out := PDFSig(t, once)
	if !strings.Contains(out, "Signer Certificate Common Name: First Signer") || !strings.Contains(out, "Signature is Valid.") || !strings.Contains(out, "Total document signed") {
		t.Errorf("merged and signed:\n%s", out)
	}
	twice := mustSign(t, once, second.signer, Options{Name: "Second Signer", Time: signTime.Add(time.Minute), Visible: true, Rect: [4]float64{40, 40, 180, 60}, FromTop: true})
	out = PDFSig(t, twice)
	if strings.Count(out, "Signature is Valid.") != 2 || !strings.Contains(out, "Signature #2") || !strings.Contains(out, "Signer Certificate Common Name: Second Signer") {
		t.Errorf("signed twice:\n%s", out)
	}
	if qout, err := exec.Command("qpdf", "--check", writeTemp(t, twice, "q.pdf")).CombinedOutput(); err != nil {
		t.Errorf("qpdf --check: %v\n%s", err, qout)
	}
	if qout, err := exec.Command("pdfinfo", writeTemp(t, twice, "i.pdf")).CombinedOutput(); err != nil || !strings.Contains(string(qout), "Pages:           4") {
		t.Errorf("pdfinfo: %v\n%s", err, qout)
	}
}

func TestSignRefusesWhatItCannotSign(t *testing.T) {
	pki := newPKI(t, "p256", "X")
	for name, pdf := range map[string][]byte{"empty": nil, "not a PDF": []byte("hello"), "truncated": renderPDF(t, "")[:2000]} {
		if _, err := Sign(context.Background(), pdf, pki.signer, Options{Time: signTime}); err == nil {
			t.Errorf("%s: signed", name)
		}
	}
	if _, err := Sign(context.Background(), renderPDF(t, ""), pki.signer, Options{Time: signTime, Visible: true, Page: 9}); err == nil || !strings.Contains(err.Error(), "page 9") {
		t.Errorf("page 9 of 2: %v", err)
	}
}

// BenchmarkSign measures signing a two-page document (docs/performance.md).
func BenchmarkSign(b *testing.B) {
	pdf := renderPDF(b, "")
	for _, kind := range []string{"rsa", "p256"} {
		pki := newPKI(b, kind, "Bench")
		for _, visible := range []bool{false, true} {
			name := kind + "/invisible"
			if visible {
				name = kind + "/visible"
			}
			b.Run(name, func(b *testing.B) {
				// CPU time per signature beside the wall time: on a shared,
				// loaded machine the wall time mostly measures waiting.
				var before, after syscall.Rusage
				syscall.Getrusage(syscall.RUSAGE_SELF, &before)
				for b.Loop() {
					if _, err := Sign(context.Background(), pdf, pki.signer, Options{Name: "Bench", Reason: "r", Time: signTime, Visible: visible}); err != nil {
						b.Fatal(err)
					}
				}
				syscall.Getrusage(syscall.RUSAGE_SELF, &after)
				cpu := time.Duration(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) * time.Nanosecond
				b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
			})
		}
	}
}
