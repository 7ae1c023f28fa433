package client

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Receiver is an HTTPS webhook endpoint with its own CA, recording the event
// ids it received per job id.
type Receiver struct {
	URL   string
	CAPEM []byte

	mu      sync.Mutex
	got     map[string][]string
	batches map[string]chan string // batch id -> its end event, for WaitBatchEvent
	srv     *http.Server
}

// StartReceiver listens on 127.0.0.1 with a fresh CA and leaf certificate.
func StartReceiver() (*Receiver, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Folio soak receiver CA"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, _ := x509.ParseCertificate(caDER)
	leafKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "receiver"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(24 * time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &leafKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: leafKey}}})
	if err != nil {
		return nil, err
	}
	r := &Receiver{URL: "https://" + ln.Addr().String() + "/hooks", CAPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), got: map[string][]string{}, batches: map[string]chan string{}}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go r.srv.Serve(ln)
	return r, nil
}

// ServeHTTP records one delivery.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	var e struct {
		Event string `json:"event"`
		Data  struct {
			JobID   string `json:"jobId"`
			BatchID string `json:"batchId"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &e) == nil && e.Data.JobID != "" {
		r.mu.Lock()
		r.got[e.Data.JobID] = append(r.got[e.Data.JobID], req.Header.Get("X-Service-Event-Id"))
		r.mu.Unlock()
	}
	if e.Data.BatchID != "" && strings.HasPrefix(e.Event, "batch.") {
		select {
		case r.batch(e.Data.BatchID) <- e.Event:
		default: // a redelivery
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

func (r *Receiver) batch(id string) chan string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ch := r.batches[id]
	if ch == nil {
		ch = make(chan string, 1)
		r.batches[id] = ch
	}
	return ch
}

// WaitBatchEvent waits for the event that ends batch id (batch.completed or
// batch.failed) and returns its type.
func (r *Receiver) WaitBatchEvent(ctx context.Context, id string, timeout time.Duration) (string, error) {
	ch := r.batch(id)
	defer func() {
		r.mu.Lock()
		delete(r.batches, id)
		r.mu.Unlock()
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case ev := <-ch:
		return ev, nil
	case <-t.C:
		return "", fmt.Errorf("no batch event for %s within %s", id, timeout)
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Delivered copies what arrived: job id -> event ids.
func (r *Receiver) Delivered() map[string][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string][]string, len(r.got))
	for k, v := range r.got {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// Close stops the receiver.
func (r *Receiver) Close() error { return r.srv.Close() }
