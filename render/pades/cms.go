package pades

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"errors"
	"fmt"
	"slices"

	"golang.org/x/crypto/cryptobyte"
	cbasn1 "golang.org/x/crypto/cryptobyte/asn1"
)

// CMS (RFC 5652) SignedData as PAdES baseline B-B asks for it (ETSI EN
// 319 142-1): detached, signed attributes content-type, message-digest
// and ESS signing-certificate-v2 (no signing-time: the signature
// dictionary's /M carries the claimed time), the signer's chain in
// certificates, and for B-T an RFC 3161 signature-time-stamp as an
// unsigned attribute.

var (
	oidData              = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 1}
	oidSignedData        = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 2}
	oidContentType       = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 3}
	oidMessageDigest     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 4}
	oidSigningCertV2     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 16, 2, 47}
	oidTimeStampToken    = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 16, 2, 14}
	oidTSTInfo           = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 16, 1, 4}
	oidSHA256            = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 2, 1}
	oidSHA384            = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 2, 2}
	oidSHA256WithRSA     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 11}
	oidSHA384WithRSA     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 12}
	oidECDSAWithSHA256   = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 2}
	oidECDSAWithSHA384   = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 3}
	errUnsupportedSigner = errors.New("pades: the key must be RSA (2048 bits or more) or ECDSA P-256 or P-384")
)

// Signer is a private key with its certificate chain, leaf first.
type Signer struct {
	Key   crypto.Signer
	Chain []*x509.Certificate
}

// CheckKey reports whether key is one Folio signs with: RSA of at least
// 2048 bits, or ECDSA on P-256 or P-384.
func CheckKey(key crypto.PublicKey) error {
	switch k := key.(type) {
	case *rsa.PublicKey:
		if k.N.BitLen() < 2048 {
			return fmt.Errorf("the RSA key has %d bits; at least 2048 are needed", k.N.BitLen())
		}
		return nil
	case *ecdsa.PublicKey:
		if k.Curve == elliptic.P256() || k.Curve == elliptic.P384() {
			return nil
		}
		return fmt.Errorf("the ECDSA key is on %s; only P-256 and P-384 are accepted", k.Curve.Params().Name)
	}
	return fmt.Errorf("the key is a %T; only RSA (2048 bits or more) and ECDSA P-256 or P-384 are accepted", key)
}

// hashFor is the digest a key signs with: SHA-384 for P-384, else SHA-256.
func hashFor(key crypto.PublicKey) (crypto.Hash, asn1.ObjectIdentifier, asn1.ObjectIdentifier, error) {
	switch k := key.(type) {
	case *rsa.PublicKey:
		return crypto.SHA256, oidSHA256, oidSHA256WithRSA, nil
	case *ecdsa.PublicKey:
		if k.Curve == elliptic.P384() {
			return crypto.SHA384, oidSHA384, oidECDSAWithSHA384, nil
		}
		return crypto.SHA256, oidSHA256, oidECDSAWithSHA256, nil
	}
	return 0, nil, nil, errUnsupportedSigner
}

// digestOID names h in an AlgorithmIdentifier.
func digestOID(h crypto.Hash) asn1.ObjectIdentifier {
	if h == crypto.SHA384 {
		return oidSHA384
	}
	return oidSHA256
}

// cmsInput is one SignedData to build.
type cmsInput struct {
	signer Signer
	// digest is the hash of the signed content (made with hashFor's hash).
	digest []byte
	// contentType is the signed content's type; content is encapsulated
	// when not nil (a time-stamp token), else the signature is detached.
	contentType asn1.ObjectIdentifier
	content     []byte
	// timestamp returns an RFC 3161 token over the signature value, or
	// nil when the signature is B-B only.
	timestamp func(signature []byte, h crypto.Hash) ([]byte, error)
}

func addOID(b *cryptobyte.Builder, oid asn1.ObjectIdentifier) {
	b.AddASN1ObjectIdentifier(oid)
}

// addAlgorithm writes an AlgorithmIdentifier; RSA's has NULL parameters.
func addAlgorithm(b *cryptobyte.Builder, oid asn1.ObjectIdentifier, null bool) {
	b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
		addOID(b, oid)
		if null {
			b.AddASN1NULL()
		}
	})
}

// attribute is one Attribute ::= SEQUENCE { type, SET OF value }, DER.
func attribute(oid asn1.ObjectIdentifier, value []byte) []byte {
	var b cryptobyte.Builder
	b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
		addOID(b, oid)
		b.AddASN1(cbasn1.SET, func(b *cryptobyte.Builder) { b.AddBytes(value) })
	})
	return b.BytesOrPanic()
}

func der(f func(b *cryptobyte.Builder)) []byte {
	var b cryptobyte.Builder
	f(&b)
	return b.BytesOrPanic()
}

// signingCertificateV2 is the ESS attribute value (RFC 5035) naming the
// signer's certificate by its SHA-256 hash and issuer and serial.
func signingCertificateV2(cert *x509.Certificate) []byte {
	h := sha256.Sum256(cert.Raw)
	return der(func(b *cryptobyte.Builder) {
		b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { // SigningCertificateV2
			b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { // certs
				b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { // ESSCertIDv2 (hashAlgorithm: SHA-256, the default)
					b.AddASN1OctetString(h[:])
					b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { // IssuerSerial
						b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { // GeneralNames
							b.AddASN1(cbasn1.Tag(4).ContextSpecific().Constructed(), func(b *cryptobyte.Builder) {
								b.AddBytes(cert.RawIssuer)
							})
						})
						b.AddASN1BigInt(cert.SerialNumber)
					})
				})
			})
		})
	})
}

// setOf sorts DER elements as a DER SET OF requires.
func setOf(elems [][]byte) []byte {
	s := slices.Clone(elems)
	slices.SortFunc(s, bytes.Compare)
	return bytes.Join(s, nil)
}

// buildCMS returns the DER ContentInfo of a SignedData over in.
func buildCMS(in cmsInput) ([]byte, error) {
	if len(in.signer.Chain) == 0 || in.signer.Key == nil {
		return nil, errors.New("pades: a signer needs a key and its certificate")
	}
	leaf := in.signer.Chain[0]
	h, digestAlg, sigAlg, err := hashFor(in.signer.Key.Public())
	if err != nil {
		return nil, err
	}
	_, isRSA := in.signer.Key.Public().(*rsa.PublicKey)
	contentType := in.contentType
	if contentType == nil {
		contentType = oidData
	}
	attrs := setOf([][]byte{
		attribute(oidContentType, der(func(b *cryptobyte.Builder) { addOID(b, contentType) })),
		attribute(oidMessageDigest, der(func(b *cryptobyte.Builder) { b.AddASN1OctetString(in.digest) })),
		attribute(oidSigningCertV2, signingCertificateV2(leaf)),
	})
	// The signature covers the attributes as a SET (RFC 5652 5.4).
	toSign := der(func(b *cryptobyte.Builder) {
		b.AddASN1(cbasn1.SET, func(b *cryptobyte.Builder) { b.AddBytes(attrs) })
	})
	hh := h.New()
	hh.Write(toSign)
	signature, err := in.signer.Key.Sign(rand.Reader, hh.Sum(nil), h)
	if err != nil {
		return nil, fmt.Errorf("pades: signing: %w", err)
	}
	var unsigned []byte
	if in.timestamp != nil {
		token, err := in.timestamp(signature, h)
		if err != nil {
			return nil, err
		}
		unsigned = attribute(oidTimeStampToken, token)
	}
	return der(func(b *cryptobyte.Builder) {
		b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { // ContentInfo
			addOID(b, oidSignedData)
			b.AddASN1(cbasn1.Tag(0).ContextSpecific().Constructed(), func(b *cryptobyte.Builder) {
				b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { // SignedData
					version := int64(1)
					if in.content != nil {
						version = 3 // encapsulated content other than id-data
					}
					b.AddASN1Int64(version)
					b.AddASN1(cbasn1.SET, func(b *cryptobyte.Builder) { addAlgorithm(b, digestAlg, false) })
					b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { // EncapsulatedContentInfo
						addOID(b, contentType)
						if in.content != nil {
							b.AddASN1(cbasn1.Tag(0).ContextSpecific().Constructed(), func(b *cryptobyte.Builder) {
								b.AddASN1OctetString(in.content)
							})
						}
					})
					b.AddASN1(cbasn1.Tag(0).ContextSpecific().Constructed(), func(b *cryptobyte.Builder) {
						for _, c := range in.signer.Chain {
							b.AddBytes(c.Raw)
						}
					})
					b.AddASN1(cbasn1.SET, func(b *cryptobyte.Builder) {
						b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { // SignerInfo
							b.AddASN1Int64(1)
							b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { // IssuerAndSerialNumber
								b.AddBytes(leaf.RawIssuer)
								b.AddASN1BigInt(leaf.SerialNumber)
							})
							addAlgorithm(b, digestAlg, false)
							b.AddASN1(cbasn1.Tag(0).ContextSpecific().Constructed(), func(b *cryptobyte.Builder) { b.AddBytes(attrs) })
							addAlgorithm(b, sigAlg, isRSA)
							b.AddASN1OctetString(signature)
							if unsigned != nil {
								b.AddASN1(cbasn1.Tag(1).ContextSpecific().Constructed(), func(b *cryptobyte.Builder) { b.AddBytes(unsigned) })
							}
						})
					})
				})
			})
		})
	}), nil
}
