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
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultRetrySchedule is the delay before each attempt (DESIGN.md section 5):
// attempt 1 at once, then 1, 5 and 30 minutes after the previous failure.
var DefaultRetrySchedule = []time.Duration{0, time.Minute, 5 * time.Minute, 30 * time.Minute}

// ScheduleEntry is one planned delivery attempt in the durable schedule.
type ScheduleEntry struct {
	DeliveryID string
	Attempt    int
	Due        time.Time
	Key        []byte
}

// WebhookSchedule is the durable attempt schedule (bbolt).
type WebhookSchedule interface {
	ScheduleAttempts(ctx context.Context, entries ...*ScheduleEntry) error
	// ClaimDueAttempt leases the earliest due entry; with none due it returns
	// nil and the time the next one falls due (zero when there is none).
	ClaimDueAttempt(ctx context.Context, now time.Time, lease time.Duration) (*ScheduleEntry, time.Time, error)
	// ReplaceAttempt removes e and, when next is not nil, schedules next, in
	// one transaction.
	ReplaceAttempt(ctx context.Context, e, next *ScheduleEntry) error
	ReleaseAttemptLeases(ctx context.Context) (int, error)
	ScheduledDeliveryIDs(ctx context.Context) (map[string]bool, error)
}

// Deliverer sends webhook deliveries from the durable schedule on its own
// worker pool, so slow receivers never hold up document generation.
type Deliverer struct {
	Store   WebhookStore
	Queue   WebhookSchedule
	Client  *http.Client
	Limiter Limiter
	Retries []time.Duration
	Workers int
	// Timeout bounds one attempt (default 30 s).
	Timeout time.Duration
	Logger  *slog.Logger
	Now     func() time.Time
	// Metrics records attempt outcomes (nil: none).
	Metrics *Metrics

	wake chan struct{}
	run  context.Context // ends when the shutdown grace does; attempts then stop unrecorded
}

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

// ParseRetrySchedule reads "0s,1m,5m,30m".
func ParseRetrySchedule(s string) ([]time.Duration, error) {
	var out []time.Duration
	for _, part := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d < 0 {
			return nil, fmt.Errorf("--webhook-retry-schedule: %q is not a duration", part)
		}
		out = append(out, d)
	}
	if len(out) == 0 || len(out) > 20 {
		return nil, errors.New("--webhook-retry-schedule needs 1 to 20 delays")
	}
	return out, nil
}

const (
	attemptLease   = 2 * time.Minute
	maxResponseLog = 64 << 10
)

// Start makes interrupted work runnable (leases released, events left
// undispatched dispatched, pending deliveries without an entry scheduled)
// and starts the workers. The returned function stops them: attempts in
// flight may end until grace does; those cut off then are not recorded and
// run again at the next start (receivers deduplicate on the event id).
func (d *Deliverer) Start(ctx context.Context) (func(grace context.Context), error) {
	d.wake = make(chan struct{}, 1)
	if _, err := d.Queue.ReleaseAttemptLeases(ctx); err != nil {
		return nil, err
	}
	for {
		events, err := d.Store.UndispatchedEvents(ctx, 500)
		if err != nil {
			return nil, err
		}
		d.Dispatch(ctx, events)
		if len(events) < 500 {
			break
		}
	}
	pending, err := d.Store.PendingDeliveries(ctx)
	if err != nil {
		return nil, err
	}
	scheduled, err := d.Queue.ScheduledDeliveryIDs(ctx)
	if err != nil {
		return nil, err
	}
	for _, del := range pending {
		if !scheduled[del.ID] {
			due := d.Now()
			if del.NextRetryAt != nil {
				due = *del.NextRetryAt
			}
			if err := d.Queue.ScheduleAttempts(ctx, &ScheduleEntry{DeliveryID: del.ID, Attempt: del.Attempts + 1, Due: due}); err != nil {
				return nil, err
			}
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	run, interrupt := context.WithCancel(context.WithoutCancel(ctx))
	d.run = run
	var wg sync.WaitGroup
	for range max(d.Workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.work(ctx)
		}()
	}
	return func(grace context.Context) {
		cancel()
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-grace.Done():
			interrupt()
			<-done
		}
		interrupt()
	}, nil
}

// interrupted reports whether shutdown cut attempts off.
func (d *Deliverer) interrupted() bool { return d.run != nil && d.run.Err() != nil }

// Dispatch turns events into scheduled deliveries. A failure is logged: the
// event stays undispatched and the next start dispatches it.
func (d *Deliverer) Dispatch(ctx context.Context, events []*Event) {
	for _, e := range events {
		dels, err := d.Store.DispatchEvent(ctx, e, len(d.Retries), d.Now().UTC())
		if err != nil {
			d.Logger.Error("dispatch webhook event", "event", e.ID, "err", err)
			continue
		}
		for _, del := range dels {
			if err := d.Queue.ScheduleAttempts(ctx, &ScheduleEntry{DeliveryID: del.ID, Attempt: 1, Due: del.CreatedAt}); err != nil {
				d.Logger.Error("schedule webhook delivery", "delivery", del.ID, "err", err)
			}
		}
	}
	d.signal()
}

// Schedule plans the next attempt of a pending delivery now.
func (d *Deliverer) Schedule(ctx context.Context, del *Delivery) error {
	if err := d.Queue.ScheduleAttempts(ctx, &ScheduleEntry{DeliveryID: del.ID, Attempt: del.Attempts + 1, Due: d.Now()}); err != nil {
		return err
	}
	d.signal()
	return nil
}

func (d *Deliverer) signal() {
	if d.wake == nil {
		return
	}
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func (d *Deliverer) work(ctx context.Context) {
	timer := time.NewTimer(time.Second)
	defer timer.Stop()
	for ctx.Err() == nil {
		now := d.Now()
		e, next, err := d.Queue.ClaimDueAttempt(ctx, now, attemptLease)
		if err != nil {
			d.Logger.Error("claim webhook attempt", "err", err)
		}
		if e == nil {
			wait := time.Second
			if !next.IsZero() && next.Sub(now) < wait {
				wait = max(next.Sub(now), time.Millisecond)
			}
			timer.Reset(wait)
			select {
			case <-ctx.Done():
			case <-d.wake:
			case <-timer.C:
			}
			continue
		}
		d.signal()
		if err := d.handle(context.WithoutCancel(ctx), e); errors.Is(err, errInterrupted) {
			d.Logger.Warn("webhook attempt interrupted by shutdown; it runs again at the next start", "delivery", e.DeliveryID)
		} else if err != nil {
			d.Logger.Error("webhook attempt", "delivery", e.DeliveryID, "err", err)
		}
	}
}

// handle runs one scheduled attempt and plans the next.
func (d *Deliverer) handle(ctx context.Context, e *ScheduleEntry) error {
	del, err := d.Store.FindDelivery(ctx, e.DeliveryID)
	if ErrorCode(err) == ECodeDeliveryNotFound {
		return d.Queue.ReplaceAttempt(ctx, e, nil) // subscription deleted
	} else if err != nil {
		return err
	}
	if del.Status != DeliveryPending || del.Attempts >= e.Attempt {
		// Already recorded (a replay after a crash): follow the stored state.
		return d.Queue.ReplaceAttempt(ctx, e, d.nextEntry(del))
	}
	sub, err := d.Store.FindSubscription(ctx, del.TeamID, del.SubscriptionID)
	if ErrorCode(err) == ECodeSubscriptionNotFound {
		return d.Queue.ReplaceAttempt(ctx, e, nil)
	} else if err != nil {
		return err
	}
	if dec := d.Limiter.Allow("webhook:"+sub.ID, WebhookEventsPerSec, time.Second, d.Now()); !dec.Allowed {
		// Over 100 events per second: wait, do not drop.
		return d.Queue.ReplaceAttempt(ctx, e, &ScheduleEntry{DeliveryID: del.ID, Attempt: e.Attempt, Due: d.Now().Add(max(dec.RetryAfter, 10*time.Millisecond))})
	}
	if del, err = d.attempt(ctx, del, sub); err != nil {
		return err
	}
	return d.Queue.ReplaceAttempt(ctx, e, d.nextEntry(del))
}

func (d *Deliverer) nextEntry(del *Delivery) *ScheduleEntry {
	if del.Status != DeliveryPending || del.NextRetryAt == nil {
		return nil
	}
	return &ScheduleEntry{DeliveryID: del.ID, Attempt: del.Attempts + 1, Due: *del.NextRetryAt}
}

// attempt sends one delivery now and records the outcome.
func (d *Deliverer) attempt(ctx context.Context, del *Delivery, sub *Subscription) (*Delivery, error) {
	n := del.Attempts + 1
	a := Attempt{Number: n, At: d.Now().UTC()}
	retryable := true
	switch {
	case !sub.Enabled:
		a.Error, retryable = "subscription is disabled", false
	case len(del.Payload) > MaxWebhookPayload:
		a.Error, retryable = fmt.Sprintf("payload of %d bytes exceeds the 256 KB webhook limit", len(del.Payload)), false
	default:
		code, err := d.send(ctx, sub, del)
		if d.interrupted() {
			return nil, errInterrupted
		}
		a.ResponseTime = d.Now().Sub(a.At).Milliseconds()
		if code != 0 {
			a.StatusCode = &code
		}
		switch {
		case err != nil:
			a.Error = err.Error()
		case code >= 200 && code < 300:
			a.Success = true
		case code >= 300 && code < 400:
			a.Error = fmt.Sprintf("HTTP %d: redirects are not followed", code)
		default:
			a.Error = fmt.Sprintf("HTTP %d", code)
		}
	}
	if !a.Success && retryable && n < del.MaxAttempts && n < len(d.Retries) {
		next := a.At.Add(d.Retries[n])
		a.NextRetryAt = &next
	}
	out, err := d.Store.RecordAttempt(ctx, del.ID, a)
	if err != nil {
		return nil, err
	}
	outcome := WebhookSuccess
	switch {
	case a.Success:
	case !retryable:
		outcome = WebhookSkipped
	case a.StatusCode != nil:
		outcome = WebhookHTTPError
	default:
		outcome = WebhookNetError
	}
	d.Metrics.WebhookAttempt(outcome)
	reqID := del.RequestID
	if reqID == "" {
		reqID = RequestIDFrom(ctx)
	}
	status := 0 // no answer
	if a.StatusCode != nil {
		status = *a.StatusCode
	}
	d.Logger.Info("webhook attempt", "delivery", del.ID, "subscription", sub.ID, "event", del.Event, "attempt", n,
		"success", a.Success, "status_code", status, "error", a.Error, "request_id", reqID)
	return out, nil
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
		return errors.New("refused: the target resolves to a non-public address")
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
