package app

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// NewWebhookClient returns the HTTP client for deliveries: TLS verified
// against the system roots plus extraCA, self-signed leaves refused, no
// redirects, 30 s per attempt, and (unless allowPrivate) no connection to a
// non-public address.
func NewWebhookClient(allowPrivate bool, extraCA []byte) (*http.Client, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if len(extraCA) > 0 && !pool.AppendCertsFromPEM(extraCA) {
		return nil, errors.New("--webhook-ca holds no PEM certificate")
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	if !allowPrivate {
		dialer.Control = guardDial
	}
	tr := &http.Transport{
		Proxy:       nil,
		DialContext: dialer.DialContext,
		TLSClientConfig: &tls.Config{
			RootCAs:    pool,
			MinVersion: tls.VersionTLS12,
			VerifyConnection: func(cs tls.ConnectionState) error {
				if len(cs.PeerCertificates) > 0 && selfSigned(cs.PeerCertificates[0]) {
					return errors.New("self-signed certificates are not supported")
				}
				return nil
			},
		},
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: WebhookAttemptTimeout,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       WebhookAttemptTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}, nil
}

// selfSigned reports whether c signed itself. CheckSignatureFrom would refuse
// a non-CA "parent", so the signature is checked directly.
func selfSigned(c *x509.Certificate) bool {
	return bytes.Equal(c.RawIssuer, c.RawSubject) && c.CheckSignature(c.SignatureAlgorithm, c.RawTBSCertificate, c.Signature) == nil
}

// send POSTs the signed payload and returns the status code.
func (d *Deliverer) send(ctx context.Context, sub *Subscription, del *Delivery) (int, error) {
	ts := strconv.FormatInt(d.Now().Unix(), 10)
	timeout := WebhookAttemptTimeout
	if d.Timeout > 0 {
		timeout = d.Timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if d.run != nil {
		defer context.AfterFunc(d.run, cancel)() // shutdown's grace ended
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sub.URL, bytes.NewReader(del.Payload))
	if err != nil {
		return 0, err
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "Folio-Webhooks/1")
	h.Set("X-Service-Signature", Sign(sub.Secret, ts, del.Payload))
	h.Set("X-Service-Timestamp", ts)
	h.Set("X-Service-Event-Id", del.EventID)
	h.Set("X-Service-Event-Type", del.Event)
	res, err := d.Client.Do(req)
	if err != nil {
		return 0, describeSendError(err, timeout)
	}
	defer res.Body.Close()
	// Read a little of the answer so the connection can be reused; never
	// more, whatever the receiver sends back.
	io.Copy(io.Discard, io.LimitReader(res.Body, maxResponseLog))
	return res.StatusCode, nil
}

func describeSendError(err error, timeout time.Duration) error {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return fmt.Errorf("timeout: no answer within %s", timeout)
	case strings.Contains(err.Error(), "connection refused"):
		return errors.New("connection refused")
	case strings.Contains(err.Error(), "not a public address"):
		return errors.New("refused: the target resolves to a non-public address (allowed only with --webhook-allow-private)")
	case strings.Contains(err.Error(), "certificate") || strings.Contains(err.Error(), "tls:") || strings.Contains(err.Error(), "x509"):
		return fmt.Errorf("TLS error: %s", lastPart(err.Error()))
	}
	return fmt.Errorf("request failed: %s", lastPart(err.Error()))
}

func lastPart(s string) string {
	if i := strings.LastIndex(s, ": "); i >= 0 && i+2 < len(s) {
		return s[i+2:]
	}
	return s
}

// Sign returns the X-Service-Signature value for a body sent at timestamp ts:
// "v1=" + hex HMAC-SHA256 of "<ts>.<body>" keyed with the secret.
func Sign(secret, ts string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(body)
	return "v1=" + hex.EncodeToString(m.Sum(nil))
}
