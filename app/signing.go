package app

import (
	"context"
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/cryptobyte"
	cbasn1 "golang.org/x/crypto/cryptobyte/asn1"
	"software.sslmate.com/src/go-pkcs12"

	"folio/render"
	"folio/render/pades"
)

// Signing certificates (issue 23, docs/decisions.md "Digital
// signatures"): a team uploads a PKCS #12 file with its password; Folio
// keeps the key and chain sealed with AES-256-GCM under a key-encryption
// key of the server (<data>/keys/signing.key) and never returns either.

// Signing certificate error codes.
const (
	ECodeSigningNotFound  = "ERR_SIGN_001"
	ECodeSigningInvalid   = "ERR_SIGN_002"
	ECodeSigningForbidden = "ERR_SIGN_003"
	ECodeSigningExists    = "ERR_SIGN_004"
	ECodeSigningFailed    = "ERR_SIGN_005"
)

// Activity types of signing certificates.
const (
	ActivitySigningCertificateAdded   = "signing_certificate_added"
	ActivitySigningCertificateDeleted = "signing_certificate_deleted"
)

// MaxP12Bytes bounds an uploaded PKCS #12 file.
const MaxP12Bytes = 256 << 10

// SigningCertificate is a team's certificate and sealed key. Sealed never
// leaves the server (json:"-").
type SigningCertificate struct {
	ID          string    `json:"id"`
	TeamID      string    `json:"-"`
	Name        string    `json:"name"`
	Subject     string    `json:"subject"`
	CommonName  string    `json:"commonName"`
	Issuer      string    `json:"issuer"`
	Serial      string    `json:"serialNumber"`
	NotBefore   time.Time `json:"notBefore"`
	NotAfter    time.Time `json:"notAfter"`
	Fingerprint string    `json:"fingerprintSha256"`
	KeyType     string    `json:"keyType"`
	ChainSize   int       `json:"chainLength"`
	Expired     bool      `json:"expired"`
	CreatedBy   string    `json:"createdBy"`
	CreatedAt   time.Time `json:"createdAt"`
	Sealed      []byte    `json:"-"`
}

// SigningCertificateStore keeps signing certificates, scoped by team.
type SigningCertificateStore interface {
	CreateSigningCertificate(ctx context.Context, c *SigningCertificate) error
	FindSigningCertificates(ctx context.Context, teamID string) ([]*SigningCertificate, error)
	// FindSigningCertificate finds one by id, else by name.
	FindSigningCertificate(ctx context.Context, teamID, ref string) (*SigningCertificate, error)
	DeleteSigningCertificate(ctx context.Context, teamID, id string) error
}

// SigningService manages a team's certificates and signs documents.
type SigningService struct {
	Store    SigningCertificateStore
	Activity *ActivityLog
	// KEK is the 32-byte key sealing the private keys.
	KEK []byte
	// TSA, when set, time-stamps every signature (PAdES B-T).
	TSA *pades.TSA
	Now func() time.Time
}

// SigningUpload is an upload: the PKCS #12 bytes (multipart file, or
// base64 in JSON) and their password, given only here.
type SigningUpload struct {
	Name     string `json:"name"`
	P12      string `json:"p12Base64"`
	Password string `json:"password"`
	// Data is the file of a multipart upload.
	Data []byte `json:"-"`
}

// signingAdmin checks the caller may change the team's certificates: a
// dashboard login of an owner or admin, like other team settings.
func signingAdmin(ctx context.Context) (*Principal, error) {
	p, err := jwtAdmin(ctx)
	if err != nil {
		return nil, err
	}
	if !CanAdmin(p.Role) {
		return nil, (&Error{Code: ECodeSigningForbidden, Message: "only the team owner and admins can manage signing certificates"}).
			WithInfo("required", RoleAdmin, "granted", []string{p.Role})
	}
	return p, nil
}

// signingReader checks the caller may list certificates: API keys need
// templates:read (every key has it).
func signingReader(ctx context.Context) (*Principal, error) {
	p, err := PrincipalFrom(ctx)
	if err != nil {
		return nil, err
	}
	return p, p.Require(PermTemplatesRead)
}

func signingInvalid(field, format string, args ...any) *Error {
	return (&Error{Code: ECodeSigningInvalid, Message: fmt.Sprintf(format, args...)}).WithInfo("field", field)
}

// ParsedP12 is what an upload holds.
type ParsedP12 struct {
	Key   crypto.Signer
	Chain []*x509.Certificate
}

// ParseP12 reads a PKCS #12 file and checks it is one Folio can sign
// with: the password opens it, it holds one private key and its
// certificate (plus any chain), the key is RSA of 2048 bits or more or
// ECDSA P-256 or P-384, and the certificate is valid at now.
func ParseP12(data []byte, password string, now time.Time) (*ParsedP12, error) {
	if len(data) == 0 {
		return nil, ErrRequired("p12Base64")
	}
	if len(data) > MaxP12Bytes {
		return nil, signingInvalid("p12Base64", "the PKCS #12 file is %d bytes; at most %d are accepted", len(data), MaxP12Bytes)
	}
	if n, ok := p12Iterations(data, 0); !ok {
		return nil, signingInvalid("p12Base64", "not a PKCS #12 file: its DER encoding cannot be read")
	} else if n > maxP12Iterations {
		return nil, signingInvalid("p12Base64", "the PKCS #12 file asks for %d key-derivation iterations; at most %d are accepted (OpenSSL writes 2048)", n, maxP12Iterations)
	}
	key, leaf, cas, err := pkcs12.DecodeChain(data, password)
	if errors.Is(err, pkcs12.ErrIncorrectPassword) {
		return nil, signingInvalid("password", "the password does not open the PKCS #12 file")
	}
	if err != nil {
		return nil, signingInvalid("p12Base64", "not a PKCS #12 file with one private key and its certificate: %s", clip(err.Error(), 200))
	}
	signer, ok := key.(crypto.Signer)
	if !ok || leaf == nil {
		return nil, signingInvalid("p12Base64", "the PKCS #12 file holds no usable private key")
	}
	if err := pades.CheckKey(signer.Public()); err != nil {
		return nil, signingInvalid("p12Base64", "%s", err.Error())
	}
	if !publicKeysEqual(signer.Public(), leaf.PublicKey) {
		return nil, signingInvalid("p12Base64", "the private key does not belong to the certificate")
	}
	if now.After(leaf.NotAfter) {
		return nil, signingInvalid("p12Base64", "the certificate expired on %s", leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	if now.Before(leaf.NotBefore) {
		return nil, signingInvalid("p12Base64", "the certificate is not valid before %s", leaf.NotBefore.UTC().Format(time.RFC3339))
	}
	if leaf.KeyUsage != 0 && leaf.KeyUsage&(x509.KeyUsageDigitalSignature|x509.KeyUsageContentCommitment) == 0 {
		return nil, signingInvalid("p12Base64", "the certificate's key usage allows neither digital signatures nor non-repudiation")
	}
	return &ParsedP12{Key: signer, Chain: append([]*x509.Certificate{leaf}, cas...)}, nil
}

// maxP12Iterations bounds the key-derivation iterations of an upload's
// MAC and encryption: go-pkcs12 runs as many as the file asks, so a file
// asking for 2^31 would hold a CPU for hours. Tools write 2,048
// (OpenSSL, go-pkcs12) to 10,000 (Java, Windows); a file at the bound
// costs well under a second of CPU. A variable for the fuzz target.
var maxP12Iterations int64 = 200_000

// p12Iterations is the largest iteration count in a DER PKCS #12 file:
// the INTEGER after an OCTET STRING salt in a SEQUENCE (MacData, PBE
// and PBKDF2 parameters), looked for in every SEQUENCE, SET, explicit tag
// and OCTET STRING that holds DER. ok is false when the file is not DER
// (go-pkcs12 reads only DER too). Counts inside encrypted content cannot
// be seen before decrypting (docs/decisions.md, Digital signatures).
func p12Iterations(der []byte, depth int) (max int64, ok bool) {
	if depth > 12 {
		return 0, true
	}
	in := cryptobyte.String(der)
	for !in.Empty() {
		var elem cryptobyte.String
		var tag cbasn1.Tag
		if !in.ReadAnyASN1(&elem, &tag) {
			return 0, false
		}
		switch {
		case tag == cbasn1.OCTET_STRING:
			if n, ok := p12Iterations(elem, depth+1); ok && n > max { // opaque bytes that are not DER are fine
				max = n
			}
		case tag&0x20 != 0: // constructed: SEQUENCE, SET, [n]
			n, ok := p12Iterations(elem, depth+1)
			if !ok {
				return 0, false
			}
			max = maxInt64(max, n)
			if tag == cbasn1.SEQUENCE {
				max = maxInt64(max, saltIterations(elem))
			}
		}
	}
	return max, true
}

// saltIterations is the INTEGER following an OCTET STRING among a
// SEQUENCE's elements (1<<62 when it does not fit in 62 bits).
func saltIterations(seq cryptobyte.String) int64 {
	var max int64
	prevSalt := false
	for !seq.Empty() {
		var elem cryptobyte.String
		var tag cbasn1.Tag
		if !seq.ReadAnyASN1Element(&elem, &tag) {
			return max
		}
		if tag == cbasn1.INTEGER && prevSalt {
			var n int64
			if !elem.ReadASN1Integer(&n) || n > 1<<62 {
				n = 1 << 62
			}
			max = maxInt64(max, n)
		}
		prevSalt = tag == cbasn1.OCTET_STRING
	}
	return max
}

func maxInt64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	k, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && k.Equal(b)
}

func keyType(pub crypto.PublicKey) string {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return fmt.Sprintf("RSA %d", k.N.BitLen())
	case *ecdsa.PublicKey:
		if k.Curve == elliptic.P384() {
			return "ECDSA P-384"
		}
		return "ECDSA P-256"
	}
	return "unknown"
}

// sealedKey is the plaintext sealed in a row.
type sealedKey struct {
	Key   []byte   `json:"key"`   // PKCS #8
	Chain [][]byte `json:"chain"` // DER, leaf first
}

func (s *SigningService) aead() (cipher.AEAD, error) {
	if len(s.KEK) != 32 {
		return nil, errors.New("signing: the key-encryption key is not configured")
	}
	block, err := aes.NewCipher(s.KEK)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// additionalData binds a sealed blob to its row.
func additionalData(c *SigningCertificate) []byte {
	return []byte("folio signing key\x00" + c.TeamID + "\x00" + c.ID)
}

func (s *SigningService) seal(c *SigningCertificate, p *ParsedP12) error {
	der, err := x509.MarshalPKCS8PrivateKey(p.Key)
	if err != nil {
		return err
	}
	plain := sealedKey{Key: der}
	for _, cert := range p.Chain {
		plain.Chain = append(plain.Chain, cert.Raw)
	}
	b, err := json.Marshal(plain)
	if err != nil {
		return err
	}
	clear(der)
	a, err := s.aead()
	if err != nil {
		return err
	}
	nonce := make([]byte, a.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return err
	}
	c.Sealed = a.Seal(nonce, nonce, b, additionalData(c))
	clear(b)
	return nil
}

func (s *SigningService) open(c *SigningCertificate) (*ParsedP12, error) {
	a, err := s.aead()
	if err != nil {
		return nil, err
	}
	if len(c.Sealed) < a.NonceSize() {
		return nil, errors.New("signing: the sealed key is truncated")
	}
	b, err := a.Open(nil, c.Sealed[:a.NonceSize()], c.Sealed[a.NonceSize():], additionalData(c))
	if err != nil {
		return nil, errors.New("signing: the sealed key does not open with this server's keys/signing.key")
	}
	defer clear(b)
	var plain sealedKey
	if err := json.Unmarshal(b, &plain); err != nil {
		return nil, err
	}
	key, err := x509.ParsePKCS8PrivateKey(plain.Key)
	if err != nil {
		return nil, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, errors.New("signing: the sealed key cannot sign")
	}
	p := &ParsedP12{Key: signer}
	for _, der := range plain.Chain {
		cert, err := x509.ParseCertificate(der)
		if err != nil {
			return nil, err
		}
		p.Chain = append(p.Chain, cert)
	}
	if len(p.Chain) == 0 {
		return nil, errors.New("signing: the sealed chain is empty")
	}
	return p, nil
}

func (s *SigningService) decorate(c *SigningCertificate) *SigningCertificate {
	c.Expired = s.Now().After(c.NotAfter)
	return c
}

// CreateSigningCertificate checks an upload and keeps its key sealed.
func (s *SigningService) CreateSigningCertificate(ctx context.Context, in SigningUpload) (*SigningCertificate, error) {
	p, err := signingAdmin(ctx)
	if err != nil {
		return nil, err
	}
	data := in.Data
	if data == nil && in.P12 != "" {
		if data, err = decodeBase64(in.P12); err != nil {
			return nil, signingInvalid("p12Base64", "p12Base64 is not valid base64")
		}
	}
	now := s.Now().UTC()
	parsed, err := ParseP12(data, in.Password, now)
	if err != nil {
		return nil, err
	}
	leaf := parsed.Chain[0]
	name := strings.TrimSpace(in.Name)
	if name == "" {
		name = leaf.Subject.CommonName
	}
	if name == "" {
		return nil, ErrRequired("name")
	}
	if utf8.RuneCountInString(name) > MaxAssetName {
		return nil, ErrInvalid("name", "name is longer than %d characters", MaxAssetName)
	}
	fp := sha256.Sum256(leaf.Raw)
	c := &SigningCertificate{ID: NewID("sig"), TeamID: p.TeamID, Name: name, Subject: leaf.Subject.String(), CommonName: leaf.Subject.CommonName,
		Issuer: leaf.Issuer.String(), Serial: strings.ToUpper(leaf.SerialNumber.Text(16)), NotBefore: leaf.NotBefore.UTC(), NotAfter: leaf.NotAfter.UTC(),
		Fingerprint: strings.ToUpper(hex.EncodeToString(fp[:])), KeyType: keyType(leaf.PublicKey), ChainSize: len(parsed.Chain),
		CreatedBy: p.UserID, CreatedAt: now}
	if err := s.seal(c, parsed); err != nil {
		return nil, err
	}
	if err := s.Store.CreateSigningCertificate(ctx, c); err != nil {
		return nil, err
	}
	s.Activity.RecordActivity(ctx, Activity{TeamID: p.TeamID, Type: ActivitySigningCertificateAdded, User: ActivityUser{ID: p.UserID},
		Details: map[string]any{"certificateId": c.ID, "name": c.Name, "subject": c.Subject, "fingerprintSha256": c.Fingerprint}})
	return s.decorate(c), nil
}

// FindSigningCertificates lists the caller's team's certificates.
func (s *SigningService) FindSigningCertificates(ctx context.Context) ([]*SigningCertificate, error) {
	p, err := signingReader(ctx)
	if err != nil {
		return nil, err
	}
	list, err := s.Store.FindSigningCertificates(ctx, p.TeamID)
	for _, c := range list {
		s.decorate(c)
	}
	return list, err
}

// FindSigningCertificate returns one of the caller's team's certificates.
func (s *SigningService) FindSigningCertificate(ctx context.Context, ref string) (*SigningCertificate, error) {
	p, err := signingReader(ctx)
	if err != nil {
		return nil, err
	}
	c, err := s.Store.FindSigningCertificate(ctx, p.TeamID, ref)
	if err != nil {
		return nil, err
	}
	return s.decorate(c), nil
}

// DeleteSigningCertificate deletes one of the caller's team's
// certificates; jobs that would sign with it and have not run fail.
func (s *SigningService) DeleteSigningCertificate(ctx context.Context, ref string) error {
	p, err := signingAdmin(ctx)
	if err != nil {
		return err
	}
	c, err := s.Store.FindSigningCertificate(ctx, p.TeamID, ref)
	if err != nil {
		return err
	}
	if err := s.Store.DeleteSigningCertificate(ctx, p.TeamID, c.ID); err != nil {
		return err
	}
	s.Activity.RecordActivity(ctx, Activity{TeamID: p.TeamID, Type: ActivitySigningCertificateDeleted, User: ActivityUser{ID: p.UserID},
		Details: map[string]any{"certificateId": c.ID, "name": c.Name, "subject": c.Subject, "fingerprintSha256": c.Fingerprint}})
	return nil
}

// CheckSignature checks at request time that a team can sign with sig:
// the certificate exists in the team and has not expired.
func (s *SigningService) CheckSignature(ctx context.Context, teamID string, sig *render.Signature) error {
	if sig == nil {
		return nil
	}
	if s == nil {
		return ErrInvalid("sign", "this server does not sign documents")
	}
	c, err := s.Store.FindSigningCertificate(ctx, teamID, sig.Certificate)
	if ErrorCode(err) == ECodeSigningNotFound {
		return (&Error{Code: ECodeInvalidField, Message: fmt.Sprintf("sign.certificate: the team has no signing certificate %q (GET /api/signing-certificates lists them)", clip(sig.Certificate, 80))}).
			WithInfo("field", "sign.certificate")
	}
	if err != nil {
		return err
	}
	if s.Now().After(c.NotAfter) {
		return (&Error{Code: ECodeInvalidField, Message: fmt.Sprintf("sign.certificate: %s expired on %s; upload a current one", c.Name, c.NotAfter.UTC().Format(time.RFC3339))}).
			WithInfo("field", "sign.certificate")
	}
	return nil
}

// Sign signs a finished PDF of teamID with sig: the last step of a
// render, on its final bytes.
func (s *SigningService) Sign(ctx context.Context, teamID string, pdf []byte, sig *render.Signature) ([]byte, *Error) {
	if err := s.CheckSignature(ctx, teamID, sig); err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, &Error{Code: ECodeSigningFailed, Message: "the document could not be signed: " + e.Message, Info: e.Info}
		}
		return nil, &Error{Code: ECodeSigningFailed, Message: "the document could not be signed"}
	}
	c, err := s.Store.FindSigningCertificate(ctx, teamID, sig.Certificate)
	if err != nil {
		return nil, &Error{Code: ECodeSigningFailed, Message: "the document could not be signed: its certificate cannot be read"}
	}
	key, err := s.open(c)
	if err != nil {
		return nil, &Error{Code: ECodeSigningFailed, Message: "the document could not be signed: " + err.Error()}
	}
	o := pades.Options{Name: sig.Name, Reason: sig.Reason, Location: sig.Location, Time: s.Now().UTC(), Visible: sig.Visible, Page: sig.Page}
	if o.Name == "" {
		o.Name = c.CommonName
	}
	if sig.Visible {
		const pt = 72 / 25.4
		o.Rect = [4]float64{sig.X * pt, sig.Y * pt, sig.Width * pt, sig.Height * pt}
		o.FromTop = sig.HasPosition
	}
	if s.TSA != nil {
		o.TimeStamp = s.TSA.Token
	}
	out, err := pades.Sign(ctx, pdf, pades.Signer{Key: key.Key, Chain: key.Chain}, o)
	if err != nil {
		return nil, &Error{Code: ECodeSigningFailed, Message: "the document could not be signed: " + strings.TrimPrefix(err.Error(), "pades: ")}
	}
	return out, nil
}

// ErrSigningExists is a store's error for a second certificate of a team
// under one name.
func ErrSigningExists(name string) error {
	return (&Error{Code: ECodeSigningExists, Message: "a signing certificate named " + name + " already exists; choose another name or delete that one"}).
		WithInfo("field", "name")
}
