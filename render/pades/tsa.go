package pades

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"encoding/asn1"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"time"

	"golang.org/x/crypto/cryptobyte"
	cbasn1 "golang.org/x/crypto/cryptobyte/asn1"
)

// TSA asks an RFC 3161 time-stamp authority for tokens (PAdES B-T).
type TSA struct {
	URL    string
	Client *http.Client // nil: a client with a 30-second timeout
}

// maxTSAReply bounds a time-stamp reply.
const maxTSAReply = 1 << 20

// TimeStampRequest is the DER TimeStampReq for a digest made with h.
func TimeStampRequest(digest []byte, h crypto.Hash, nonce *big.Int) []byte {
	return der(func(b *cryptobyte.Builder) {
		b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
			b.AddASN1Int64(1)
			b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { // MessageImprint
				addAlgorithm(b, digestOID(h), false)
				b.AddASN1OctetString(digest)
			})
			b.AddASN1BigInt(nonce)
			b.AddASN1Boolean(true) // certReq: the TSA's certificate in the token
		})
	})
}

type messageImprint struct {
	Algorithm     algorithmIdentifier
	HashedMessage []byte
}

type algorithmIdentifier struct {
	Algorithm  asn1.ObjectIdentifier
	Parameters asn1.RawValue `asn1:"optional"`
}

// TSTInfo is the signed content of a time-stamp token (RFC 3161 2.4.2).
type TSTInfo struct {
	Version        int
	Policy         asn1.ObjectIdentifier
	MessageImprint messageImprint
	SerialNumber   *big.Int
	GenTime        time.Time     `asn1:"generalized"`
	Accuracy       accuracy      `asn1:"optional"`
	Ordering       bool          `asn1:"optional"`
	Nonce          *big.Int      `asn1:"optional"`
	TSA            asn1.RawValue `asn1:"optional,tag:0"`
	Extensions     asn1.RawValue `asn1:"optional,tag:1"`
}

type accuracy struct {
	Seconds int `asn1:"optional"`
	Millis  int `asn1:"optional,tag:0"`
	Micros  int `asn1:"optional,tag:1"`
}

type pkiStatusInfo struct {
	Status       int
	StatusString []string       `asn1:"optional,utf8"`
	FailInfo     asn1.BitString `asn1:"optional"`
}

type timeStampResp struct {
	Status pkiStatusInfo
	Token  asn1.RawValue `asn1:"optional"`
}

type contentInfo struct {
	ContentType asn1.ObjectIdentifier
	Content     asn1.RawValue `asn1:"explicit,tag:0"`
}

type encapContent struct {
	ContentType asn1.ObjectIdentifier
	Content     []byte `asn1:"explicit,optional,tag:0"`
}

// ParseTimeStampToken reads the TSTInfo of a token (a ContentInfo holding
// SignedData); it does not check the TSA's signature.
func ParseTimeStampToken(token []byte) (*TSTInfo, error) {
	var ci contentInfo
	if rest, err := asn1.Unmarshal(token, &ci); err != nil || len(rest) > 0 || !ci.ContentType.Equal(oidSignedData) {
		return nil, errors.New("not a CMS SignedData")
	}
	s := cryptobyte.String(ci.Content.Bytes)
	var body, algs, encap cryptobyte.String
	var version int64
	if !s.ReadASN1(&body, cbasn1.SEQUENCE) || !body.ReadASN1Integer(&version) || !body.ReadASN1(&algs, cbasn1.SET) || !body.ReadASN1Element(&encap, cbasn1.SEQUENCE) {
		return nil, errors.New("malformed SignedData")
	}
	var content encapContent
	if _, err := asn1.Unmarshal(encap, &content); err != nil {
		return nil, fmt.Errorf("malformed encapsulated content: %w", err)
	}
	if !content.ContentType.Equal(oidTSTInfo) || len(content.Content) == 0 {
		return nil, errors.New("the SignedData does not hold a TSTInfo")
	}
	var info TSTInfo
	if _, err := asn1.Unmarshal(content.Content, &info); err != nil {
		return nil, fmt.Errorf("malformed TSTInfo: %w", err)
	}
	return &info, nil
}

// Token asks the TSA for a token over data, hashed with h, and checks
// that the reply stamps that digest with the request's nonce.
func (t *TSA) Token(ctx context.Context, data []byte, h crypto.Hash) ([]byte, error) {
	hh := h.New()
	hh.Write(data)
	digest := hh.Sum(nil)
	nonce, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 63))
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(TimeStampRequest(digest, h, nonce)))
	if err != nil {
		return nil, fmt.Errorf("time-stamp authority: %w", err)
	}
	req.Header.Set("Content-Type", "application/timestamp-query")
	c := t.Client
	if c == nil {
		c = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("time-stamp authority: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTSAReply+1))
	if err != nil {
		return nil, fmt.Errorf("time-stamp authority: reading the reply: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("time-stamp authority answered HTTP %d", resp.StatusCode)
	}
	if len(body) > maxTSAReply {
		return nil, errors.New("time-stamp authority: the reply is larger than 1 MB")
	}
	var r timeStampResp
	if rest, err := asn1.Unmarshal(body, &r); err != nil || len(rest) > 0 {
		return nil, errors.New("time-stamp authority: the reply is not an RFC 3161 TimeStampResp")
	}
	if r.Status.Status != 0 && r.Status.Status != 1 {
		return nil, fmt.Errorf("time-stamp authority refused the request (status %d %v)", r.Status.Status, r.Status.StatusString)
	}
	if len(r.Token.FullBytes) == 0 {
		return nil, errors.New("time-stamp authority: the reply holds no token")
	}
	info, err := ParseTimeStampToken(r.Token.FullBytes)
	if err != nil {
		return nil, fmt.Errorf("time-stamp authority: %w", err)
	}
	if !bytes.Equal(info.MessageImprint.HashedMessage, digest) || info.Nonce == nil || info.Nonce.Cmp(nonce) != 0 {
		return nil, errors.New("time-stamp authority: the token stamps another digest or nonce")
	}
	return r.Token.FullBytes, nil
}
