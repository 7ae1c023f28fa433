package pades

import (
	"encoding/asn1"
	"io"
	"math/big"
	"net/http"
	"sync/atomic"
	"time"
)

// TimeStampServer is a minimal RFC 3161 time-stamp authority over HTTP:
// it stamps a request's digest with its clock and signs the TSTInfo with
// Signer, whose certificate should allow time stamping. Folio's tests
// use it on loopback for PAdES B-T; it is not a production TSA (no
// accuracy, no policy choice, serials from a counter).
type TimeStampServer struct {
	Signer Signer
	Now    func() time.Time
	// Calls counts the requests answered.
	Calls atomic.Int64
}

// oidTestPolicy is the TSA policy stamped (an arc of the example enterprise number).
var oidTestPolicy = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 32473, 1}

func (t *TimeStampServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := t.Calls.Add(1)
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	var req struct {
		Version        int
		MessageImprint messageImprint
		Nonce          *big.Int `asn1:"optional"`
		CertReq        bool     `asn1:"optional"`
	}
	if _, err := asn1.Unmarshal(body, &req); err != nil || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/timestamp-query" {
		http.Error(w, "not an RFC 3161 time-stamp query", http.StatusBadRequest)
		return
	}
	info, err := asn1.Marshal(struct {
		Version        int
		Policy         asn1.ObjectIdentifier
		MessageImprint messageImprint
		SerialNumber   *big.Int
		GenTime        time.Time `asn1:"generalized"`
		Nonce          *big.Int  `asn1:"optional"`
	}{1, oidTestPolicy, req.MessageImprint, big.NewInt(n), t.Now().UTC().Truncate(time.Second), req.Nonce})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	h, _, _, err := hashFor(t.Signer.Key.Public())
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	hh := h.New()
	hh.Write(info)
	token, err := buildCMS(cmsInput{signer: t.Signer, digest: hh.Sum(nil), contentType: oidTSTInfo, content: info})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	resp, _ := asn1.Marshal(struct {
		Status struct{ Status int }
		Token  asn1.RawValue
	}{Token: asn1.RawValue{FullBytes: token}})
	w.Header().Set("Content-Type", "application/timestamp-reply")
	w.Write(resp)
}
