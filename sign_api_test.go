package main

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"io/fs"
	"log/slog"
	"math/big"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"software.sslmate.com/src/go-pkcs12"

	"folio/render/pades"
)

// testCert is a leaf issued by a fresh test CA, with its key.
type testCert struct {
	key        crypto.Signer
	leaf, ca   *x509.Certificate
	keyDER     []byte // PKCS #8
	keyPEM     []byte
	leafPEM    []byte
	caPEM      []byte
	commonName string
}

func newTestCert(t testing.TB, kind, cn string, notAfter time.Time) testCert {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Folio Test CA"}, NotBefore: now.Add(-48 * time.Hour),
		NotAfter: now.Add(48 * time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	var key crypto.Signer
	switch kind {
	case "rsa1024":
		key, _ = rsa.GenerateKey(rand.Reader, 1024)
	case "rsa":
		key, _ = rsa.GenerateKey(rand.Reader, 2048)
	case "p224":
		key, _ = ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	default:
		key, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(0x5151), Subject: pkix.Name{CommonName: cn, Organization: []string{"ACME GmbH"}},
		NotBefore: now.Add(-24 * time.Hour), NotAfter: notAfter, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	keyDER, _ := x509.MarshalPKCS8PrivateKey(key)
	return testCert{key: key, leaf: leaf, ca: ca, keyDER: keyDER, commonName: cn,
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		leafPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		caPEM:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})}
}

// p12 is the certificate as a modern (AES-256, PBKDF2) PKCS #12 file.
func (c testCert) p12(t testing.TB, password string) []byte {
	t.Helper()
	b, err := pkcs12.Modern.Encode(c.key, c.leaf, []*x509.Certificate{c.ca}, password)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// opensslP12 is the certificate exported by the openssl command.
func (c testCert) opensslP12(t *testing.T, password string) []byte {
	t.Helper()
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not installed")
	}
	dir := t.TempDir()
	for name, b := range map[string][]byte{"key.pem": c.keyPEM, "cert.pem": c.leafPEM, "ca.pem": c.caPEM} {
		os.WriteFile(filepath.Join(dir, name), b, 0o600)
	}
	cmd := exec.Command("openssl", "pkcs12", "-export", "-inkey", "key.pem", "-in", "cert.pem", "-certfile", "ca.pem", "-passout", "pass:"+password, "-out", "out.p12")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("openssl pkcs12: %v\n%s", err, out)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "out.p12"))
	return b
}

// pdfsig runs poppler's pdfsig without trust checks (the test CA is in no store).
func pdfsig(t *testing.T, pdf []byte) string {
	t.Helper()
	out, _ := poppler(t, pdf, "pdfsig", "-nocert")
	return out
}

func wantValidSignature(t *testing.T, pdf []byte, signer string) {
	t.Helper()
	out := pdfsig(t, pdf)
	for _, want := range []string{"Signature #1", "Signer Certificate Common Name: " + signer, "Signature Type: ETSI.CAdES.detached",
		"Total document signed", "Signature Validation: Signature is Valid."} {
		if !strings.Contains(out, want) {
			t.Errorf("pdfsig lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Signature #2") {
		t.Errorf("more than one signature:\n%s", out)
	}
}

// signatureDict is the signature dictionary's entries as qpdf's JSON shows them.
func signatureDict(t *testing.T, pdf []byte) string {
	t.Helper()
	out, ok := poppler(t, pdf, "qpdf", "--json=2", "--json-key=qpdf")
	if !ok {
		t.Fatalf("qpdf --json: %s", out)
	}
	i := strings.Index(out, `"/Type": "/Sig"`)
	if i < 0 {
		t.Fatalf("no /Sig dictionary in qpdf's JSON")
	}
	start := strings.LastIndex(out[:i], "{")
	end := strings.Index(out[i:], "}")
	return out[start : i+end]
}

func TestSignaturesThroughAPI(t *testing.T) {
	var logs syncBuffer
	tsaCert := newTestCert(t, "p256", "Folio Test TSA", time.Now().Add(24*time.Hour))
	tsaTime := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	tsa := &pades.TimeStampServer{Signer: pades.Signer{Key: tsaCert.key, Chain: []*x509.Certificate{tsaCert.leaf, tsaCert.ca}}, Now: func() time.Time { return tsaTime }}
	tsaSrv := httptest.NewServer(tsa)
	defer tsaSrv.Close()
	s := startMain(t, &Main{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}, func(c *Config) {
		c.TSAURL = tsaSrv.URL
	})
	owner := s.verifiedUser("signer")
	key := s.createKey(owner.token, nil)
	const password = "p12-Walrus-71523"
	cert := newTestCert(t, "rsa", "Erika Mustermann", time.Now().Add(30*24*time.Hour))
	p12 := cert.p12(t, password)
	var responses [][]byte // every answer, searched for key material at the end
	keep := func(r resp) resp { responses = append(responses, r.raw); return r }

	// Upload (multipart), list, get: metadata only.
	up := keep(s.upload("/api/signing-certificates", owner.token, p12, map[string]string{"password": password, "name": "Contracts"}))
	if up.status != 200 {
		t.Fatalf("upload: %d %s", up.status, up.raw)
	}
	certID := up.str("id")
	if !strings.HasPrefix(certID, "sig_") || up.str("commonName") != "Erika Mustermann" || up.str("subject") != "CN=Erika Mustermann,O=ACME GmbH" ||
		up.str("issuer") != "CN=Folio Test CA" || up.str("serialNumber") != "5151" || up.str("keyType") != "RSA 2048" || len(up.str("fingerprintSha256")) != 64 ||
		up.get("expired") != false || up.str("name") != "Contracts" {
		t.Errorf("upload answer: %s", up.raw)
	}
	list := keep(s.must(200, "GET", "/api/signing-certificates", key, nil))
	if l := dataList(t, list); len(l) != 1 || l[0]["id"] != certID {
		t.Errorf("list with an API key: %s", list.raw)
	}
	keep(s.must(200, "GET", "/api/signing-certificates/Contracts", key, nil))

	t.Run("upload errors", func(t *testing.T) {
		r := keep(s.upload("/api/signing-certificates", owner.token, p12, map[string]string{"password": "wrong"}))
		s.wantError(r, 400, "ERR_SIGN_002")
		if r.str("relatedInfo.field") != "password" {
			t.Errorf("wrong password: %s", r.raw)
		}
		expired := newTestCert(t, "p256", "Old", time.Now().Add(-time.Hour))
		r = keep(s.do("POST", "/api/signing-certificates", owner.token, map[string]any{"p12Base64": base64.StdEncoding.EncodeToString(expired.p12(t, "x")), "password": "x"}))
		s.wantError(r, 400, "ERR_SIGN_002")
		if !strings.Contains(r.str("message"), "expired") {
			t.Errorf("expired: %s", r.raw)
		}
		for _, kind := range []string{"rsa1024", "p224"} {
			weak := newTestCert(t, kind, "Weak", time.Now().Add(time.Hour))
			r = keep(s.do("POST", "/api/signing-certificates", owner.token, map[string]any{"p12Base64": base64.StdEncoding.EncodeToString(weak.p12(t, "x")), "password": "x"}))
			s.wantError(r, 400, "ERR_SIGN_002")
		}
		r = keep(s.do("POST", "/api/signing-certificates", owner.token, map[string]any{"p12Base64": base64.StdEncoding.EncodeToString([]byte("not a p12")), "password": "x"}))
		s.wantError(r, 400, "ERR_SIGN_002")
		r = keep(s.upload("/api/signing-certificates", owner.token, p12, map[string]string{"password": password, "name": "Contracts"}))
		s.wantError(r, 400, "ERR_SIGN_004")
		// API keys and members who are not admins cannot upload.
		s.wantError(keep(s.upload("/api/signing-certificates", key, p12, map[string]string{"password": password})), 403, "ERR_AUTH_004")
		team := s.newTeam(owner, "Signers")
		member := s.verifiedUser("member")
		s.join(owner, team, member, "member")
		s.wantError(keep(s.upload("/api/signing-certificates", member.token, p12, map[string]string{"password": password}, "X-Team-Id", team)), 403, "ERR_SIGN_003")
	})

	t.Run("a PKCS #12 file made by openssl", func(t *testing.T) {
		other := newTestCert(t, "p256", "Max Muster", time.Now().Add(24*time.Hour))
		r := keep(s.upload("/api/signing-certificates", owner.token, other.opensslP12(t, "ossl-pw"), map[string]string{"password": "ossl-pw", "name": "OpenSSL"}))
		if r.status != 200 || r.str("keyType") != "ECDSA P-256" || r.str("commonName") != "Max Muster" {
			t.Fatalf("openssl p12: %s", r.raw)
		}
		g := keep(s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": s.createTemplate(owner.token, "Plain", invoiceTemplate).str("id"),
			"format": "pdf", "variables": map[string]any{"number": "1", "customer": "C"}, "sign": map[string]any{"certificate": "OpenSSL"}}))
		_, _, pdf := s.download(g.str("downloadUrl"))
		wantValidSignature(t, pdf, "Max Muster")
	})

	// A PDF/A-2b contract whose template signs, visibly.
	contract := map[string]any{
		"name": "Contract", "outputFormats": []string{"pdf"},
		"schema": map[string]any{
			"pdfa": "2b",
			"sign": map[string]any{"certificate": "Contracts", "reason": "Vertrag genehmigt", "location": "Zürich", "visible": true, "page": "last"},
			"sections": []any{map[string]any{"id": "body", "components": []any{
				map[string]any{"type": "heading", "props": map[string]any{"content": "Contract {{number}}"}},
				map[string]any{"type": "text", "props": map[string]any{"content": "Between ACME and {{customer}} — Grüße"}},
			}}},
		},
		"variables": []any{map[string]any{"name": "number", "type": "string", "required": true}, map[string]any{"name": "customer", "type": "string", "required": true}},
	}
	tpl := s.createTemplate(owner.token, "Contract", contract)
	id := tpl.str("id")
	vars := map[string]any{"number": "C-7", "customer": "Müller AG"}

	t.Run("single: PAdES B-T, visible, PDF/A-2b kept", func(t *testing.T) {
		g := keep(s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "pdf", "variables": vars}))
		_, _, pdf := s.download(g.str("downloadUrl"))
		wantValidSignature(t, pdf, "Erika Mustermann")
		d := signatureDict(t, pdf)
		for _, want := range []string{`"/Reason": "u:Vertrag genehmigt"`, `"/Location": "u:Zürich"`, `"/Name": "u:Erika Mustermann"`, `"/SubFilter": "/ETSI.CAdES.detached"`, `"/M": "u:D:`} {
			if !strings.Contains(d, want) {
				t.Errorf("signature dictionary lacks %s:\n%s", want, d)
			}
		}
		if v := pdfaViolations(t, pdf, "2", "B"); v != "" {
			t.Errorf("a signed PDF/A-2b breaks PDF/A:\n%s", v)
		}
		if out, ok := poppler(t, pdf, "qpdf", "--check"); !ok {
			t.Errorf("qpdf --check:\n%s", out)
		}
		if text, _ := poppler(t, pdf, "pdftotext"); !strings.Contains(text, "Müller AG") {
			t.Errorf("text: %s", text)
		}
		// B-T: the signature carries the TSA's time-stamp token (openssl).
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "d.pdf"), pdf, 0o600)
		cmd := exec.Command("pdfsig", "-nocert", "-dump", "d.pdf")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("pdfsig -dump: %v %s", err, out)
		}
		printed, err := exec.Command("openssl", "cms", "-cmsout", "-print", "-inform", "DER", "-in", filepath.Join(dir, "d.pdf.sig0")).CombinedOutput()
		if err != nil || !strings.Contains(string(printed), "id-smime-aa-timeStampToken") || !strings.Contains(string(printed), "id-smime-aa-signingCertificateV2") {
			t.Errorf("openssl cms -print: %v\n%s", err, printed)
		}
		if tsa.Calls.Load() == 0 {
			t.Error("the TSA was never asked")
		}
		// A byte changed after signing: pdfsig reports the signature invalid.
		bad := bytes.Clone(pdf)
		i := bytes.Index(bad, []byte("/Producer"))
		if i < 0 {
			i = 200
		}
		bad[i+1] ^= 0x20
		if out := pdfsig(t, bad); strings.Contains(out, "Signature is Valid.") {
			t.Errorf("a modified document still verifies:\n%s", out)
		}
	})

	t.Run("async: the request's invisible signature over the template's", func(t *testing.T) {
		a := keep(s.must(200, "POST", "/api/v1/documents/generate?async=true", key, map[string]any{"templateId": id, "format": "pdf", "variables": vars,
			"sign": map[string]any{"certificate": certID, "reason": "Copy", "visible": false}}))
		j := keep(s.waitJob(key, a.str("jobId")))
		_, _, pdf := s.download(j.str("downloadUrl"))
		wantValidSignature(t, pdf, "Erika Mustermann")
		if d := signatureDict(t, pdf); !strings.Contains(d, `"/Reason": "u:Copy"`) {
			t.Errorf("reason: %s", d)
		}
		// sign false: no signature.
		g := keep(s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "pdf", "variables": vars, "sign": false}))
		_, _, pdf = s.download(g.str("downloadUrl"))
		if out := pdfsig(t, pdf); !strings.Contains(out, "does not contain any signatures") {
			t.Errorf("sign false still signs:\n%s", out)
		}
	})

	t.Run("batch: every document signed", func(t *testing.T) {
		b := keep(s.must(200, "POST", "/api/v1/documents/generate/batch", key, map[string]any{"templateId": id, "format": "pdf",
			"documents": []any{map[string]any{"variables": vars}, map[string]any{"variables": map[string]any{"number": "C-8", "customer": "Other"}}}}))
		batch := keep(s.waitBatch(key, b.str("batchId")))
		docs := batch.get("documents").([]any)
		if len(docs) != 2 {
			t.Fatalf("batch: %s", batch.raw)
		}
		for _, d := range docs {
			_, _, pdf := s.download(d.(map[string]any)["downloadUrl"].(string))
			wantValidSignature(t, pdf, "Erika Mustermann")
		}
	})

	t.Run("preview is not signed; dry run checks the certificate", func(t *testing.T) {
		r := s.must(200, "POST", "/api/templates/"+id+"/preview", owner.token, map[string]any{"variables": vars})
		if out := pdfsig(t, r.raw); !strings.Contains(out, "does not contain any signatures") {
			t.Errorf("preview signed:\n%s", out)
		}
		r = keep(s.must(200, "POST", "/api/v1/documents/generate?dryRun=true", key, map[string]any{"templateId": id, "format": "pdf", "variables": vars}))
		if r.get("valid") != true {
			t.Errorf("dry run: %s", r.raw)
		}
		r = keep(s.do("POST", "/api/v1/documents/generate?dryRun=true", key, map[string]any{"templateId": id, "format": "pdf", "variables": vars,
			"sign": map[string]any{"certificate": "nope"}}))
		s.wantError(r, 400, "ERR_VALID_003")
		if r.str("relatedInfo.field") != "sign.certificate" {
			t.Errorf("dry run, unknown certificate: %s", r.raw)
		}
	})

	t.Run("validation", func(t *testing.T) {
		for _, tc := range []struct {
			body  map[string]any
			field string
		}{
			{map[string]any{"sign": map[string]any{"reason": "x"}}, "sign.certificate"},
			{map[string]any{"sign": map[string]any{"certificate": certID, "page": 0}}, "sign.page"},
			{map[string]any{"sign": map[string]any{"certificate": certID, "colour": "red"}}, "sign.colour"},
			{map[string]any{"sign": "yes"}, "sign"},
			{map[string]any{"pdfa": "none", "encrypt": map[string]any{"userPassword": "x"}}, "sign"},
			{map[string]any{"sign": map[string]any{"certificate": "missing"}}, "sign.certificate"},
		} {
			body := map[string]any{"templateId": id, "format": "pdf", "variables": vars}
			for k, v := range tc.body {
				body[k] = v
			}
			r := keep(s.do("POST", "/api/v1/documents/generate", key, body))
			s.wantError(r, 400, "ERR_VALID_003")
			if r.str("relatedInfo.field") != tc.field {
				t.Errorf("%v: field %q, want %q: %s", tc.body, r.str("relatedInfo.field"), tc.field, r.raw)
			}
		}
	})

	t.Run("team B cannot use or see team A's certificate", func(t *testing.T) {
		b := s.verifiedUser("intruder")
		bKey := s.createKey(b.token, nil)
		s.wantError(keep(s.do("GET", "/api/signing-certificates/"+certID, bKey, nil)), 404, "ERR_SIGN_001")
		s.wantError(keep(s.do("DELETE", "/api/signing-certificates/"+certID, b.token, nil)), 404, "ERR_SIGN_001")
		if l := dataList(t, keep(s.must(200, "GET", "/api/signing-certificates", bKey, nil))); len(l) != 0 {
			t.Errorf("team B lists %v", l)
		}
		bTpl := s.createTemplate(b.token, "Plain", invoiceTemplate).str("id")
		r := keep(s.do("POST", "/api/v1/documents/generate", bKey, map[string]any{"templateId": bTpl, "format": "pdf",
			"variables": map[string]any{"number": "1", "customer": "C"}, "sign": map[string]any{"certificate": certID}}))
		s.wantError(r, 400, "ERR_VALID_003")
		r = keep(s.do("POST", "/api/v1/documents/generate/batch", bKey, map[string]any{"templateId": bTpl, "format": "pdf",
			"sign": map[string]any{"certificate": "Contracts"}, "documents": []any{map[string]any{"variables": map[string]any{"number": "1", "customer": "C"}}}}))
		s.wantError(r, 400, "ERR_VALID_003")
	})

	t.Run("delete, with the activity feed", func(t *testing.T) {
		r := s.do("DELETE", "/api/signing-certificates/"+certID, key, nil)
		s.wantError(r, 403, "ERR_AUTH_004")
		if r := s.do("DELETE", "/api/signing-certificates/"+certID, owner.token, nil); r.status != 204 {
			t.Fatalf("delete: %d %s", r.status, r.raw)
		}
		s.wantError(keep(s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "pdf", "variables": vars})), 400, "ERR_VALID_003")
		feed := keep(s.must(200, "GET", "/api/teams/activity", owner.token, nil))
		for _, want := range []string{"signing_certificate_added", "signing_certificate_deleted"} {
			if !strings.Contains(string(feed.raw), want) {
				t.Errorf("activity lacks %s: %s", want, feed.raw)
			}
		}
	})

	// No key material anywhere: answers, the data directory, the log.
	secrets := map[string][]byte{"the private key (PKCS #8)": cert.keyDER, "the private key (PEM)": cert.keyPEM, "the p12 file": p12,
		"the p12 password": []byte(password), "the p12 (base64)": []byte(base64.StdEncoding.EncodeToString(p12)[:64])}
	for _, raw := range responses {
		for what, b := range secrets {
			if bytes.Contains(raw, b) {
				t.Errorf("an answer holds %s: %.200s", what, raw)
			}
		}
	}
	filepath.WalkDir(s.Config.Data, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(path)
		for what, secret := range secrets {
			if bytes.Contains(b, secret) {
				t.Errorf("%s holds %s", path, what)
			}
		}
		return nil
	})
	for what, secret := range secrets {
		if strings.Contains(logs.String(), string(secret)) {
			t.Errorf("the log holds %s", what)
		}
	}
	if info, err := os.Stat(filepath.Join(s.Config.Data, "keys", "signing.key")); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("keys/signing.key: %v %v", info, err)
	}
}
