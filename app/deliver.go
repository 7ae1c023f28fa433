package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
)

// DefaultRetrySchedule is the delay before each attempt (SPEC.md, Events):
// attempt 1 at once, then 1, 5 and 30 minutes after the previous failure. The
// --webhook-retry-schedule default "0s,1m,5m,30m" parses to it; a Deliverer
// without Retries uses it.
var DefaultRetrySchedule = []time.Duration{0, time.Minute, 5 * time.Minute, 30 * time.Minute}

// Delivery pool defaults (docs/webhooks.md, Delivery rules).
const (
	// DefaultWebhookWorkers is how many attempts run at once, for all teams.
	DefaultWebhookWorkers = 32
	// DefaultWebhookPerSubscription is how many of them one subscription may
	// hold: a receiver that hangs ties up at most this many workers.
	DefaultWebhookPerSubscription = 4
	// DefaultWebhookSweep is how often the deliverer dispatches events and
	// schedules deliveries that an earlier error left behind.
	DefaultWebhookSweep = time.Minute
)

// ScheduleEntry is one planned delivery attempt in the durable schedule.
type ScheduleEntry struct {
	DeliveryID     string
	SubscriptionID string
	Attempt        int
	Due            time.Time
	Key            []byte
}

// Admit tells the schedule, while it looks for a due entry, whether the
// entry's subscription may start an attempt now; when not, reopen is when it
// may (zero: unknown, the deliverer wakes the schedule up).
type Admit func(subscriptionID string, now time.Time) (ok bool, reopen time.Time)

// WebhookSchedule is the durable attempt schedule (bbolt). Entries are keyed
// by due time and delivery, so scheduling the same attempt twice (start-up
// repair racing a dispatch) keeps one entry.
type WebhookSchedule interface {
	// ScheduleAttempts adds entries; an entry already scheduled under the
	// same key is left as it is (with its lease).
	ScheduleAttempts(ctx context.Context, entries ...*ScheduleEntry) error
	// ClaimDueAttempts leases up to max due, unleased entries that admit
	// lets through, earliest first. With none it returns the earliest time
	// worth looking again (zero when none is known).
	ClaimDueAttempts(ctx context.Context, now time.Time, lease time.Duration, max int, admit Admit) ([]*ScheduleEntry, time.Time, error)
	// ReplaceAttempt removes e and, when next is not nil, schedules next, in
	// one transaction.
	ReplaceAttempt(ctx context.Context, e, next *ScheduleEntry) error
	// RemoveAttempts drops every entry of the given deliveries.
	RemoveAttempts(ctx context.Context, deliveryIDs ...string) error
	ReleaseAttemptLeases(ctx context.Context) (int, error)
	// ScheduledAttempts lists every entry, earliest first.
	ScheduledAttempts(ctx context.Context) ([]*ScheduleEntry, error)
}

// Deliverer sends webhook deliveries from the durable schedule on its own
// pool of workers, so slow receivers never hold up document generation.
//
// SQLite holds the record of every delivery (status, attempts,
// next_retry_at); bbolt holds the schedule the workers follow. A delivery is
// written to SQLite first and scheduled second; the sweep (at start and every
// Sweep) schedules any pending delivery that has no entry, at its
// next_retry_at, and dispatches events an error left undispatched.
type Deliverer struct {
	Store   WebhookStore
	Queue   WebhookSchedule
	Client  *http.Client
	Retries []time.Duration // default DefaultRetrySchedule
	// Workers bounds the attempts in flight (default DefaultWebhookWorkers);
	// PerSubscription bounds those of one subscription (default
	// DefaultWebhookPerSubscription).
	Workers, PerSubscription int
	// Timeout bounds one attempt (default 30 s).
	Timeout time.Duration
	// Lease is how long a claimed attempt stays another worker's
	// (default DefaultAttemptLease): after a replica dies, the others send
	// its attempts once their leases lapse. It must exceed Timeout.
	Lease time.Duration
	// Sweep is the period of the repair sweep (default DefaultWebhookSweep).
	Sweep  time.Duration
	Logger *slog.Logger
	Now    func() time.Time
	// Metrics records attempt outcomes (nil: none).
	Metrics *Metrics

	gate     *sendGate
	wake     chan struct{} // the claimer: the schedule changed or a slot freed
	dispatch chan struct{} // the dispatcher: events are waiting in the outbox
	run      context.Context
}

// ParseRetrySchedule reads "0s,1m,5m,30m": the delay before each attempt.
// The first attempt is always immediate, so the first delay must be 0.
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
	if out[0] != 0 {
		return nil, fmt.Errorf("--webhook-retry-schedule: the first attempt is immediate, so the first delay must be 0s, not %s", out[0])
	}
	return out, nil
}

const (
	// DefaultAttemptLease is Deliverer.Lease's default.
	DefaultAttemptLease = 2 * time.Minute
	maxResponseLog      = 64 << 10
	// idleWait bounds how long the claimer sleeps when it knows of nothing
	// due; every change of the schedule wakes it sooner.
	idleWait = 10 * time.Second
)

func (d *Deliverer) retries() []time.Duration {
	if len(d.Retries) == 0 {
		return DefaultRetrySchedule
	}
	return d.Retries
}

// Start makes interrupted work runnable (leases released, events left
// undispatched dispatched, pending deliveries without an entry scheduled)
// and starts the dispatcher and the workers. The returned function stops
// them: attempts in flight may end until grace does; those cut off then are
// not recorded and run again at the next start (receivers deduplicate on
// the event id).
func (d *Deliverer) Start(ctx context.Context) (func(grace context.Context), error) {
	workers := d.Workers
	if workers <= 0 {
		workers = DefaultWebhookWorkers
	}
	perSub := d.PerSubscription
	if perSub <= 0 {
		perSub = DefaultWebhookPerSubscription
	}
	d.gate = newSendGate(perSub, WebhookEventsPerSec, time.Second)
	d.wake = make(chan struct{}, 1)
	d.dispatch = make(chan struct{}, 1)
	if _, err := d.Queue.ReleaseAttemptLeases(ctx); err != nil {
		return nil, err
	}
	if err := d.sweep(ctx); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	run, interrupt := context.WithCancel(context.WithoutCancel(ctx))
	d.run = run
	var loops, attempts sync.WaitGroup
	loops.Add(2)
	go func() {
		defer loops.Done()
		d.dispatchLoop(ctx)
	}()
	go func() {
		defer loops.Done()
		d.claimLoop(ctx, workers, &attempts)
	}()
	return func(grace context.Context) {
		cancel()
		loops.Wait()
		finishOrInterrupt(grace, &attempts, interrupt)
	}, nil
}

// interrupted reports whether shutdown cut attempts off.
func (d *Deliverer) interrupted() bool { return d.run != nil && d.run.Err() != nil }

// Dispatch tells the dispatcher that the events, already stored in the
// outbox, wait for their deliveries. It never blocks the caller (a document
// worker) on webhook work. Before Start it dispatches them itself.
func (d *Deliverer) Dispatch(ctx context.Context, events []*Event) {
	if d.dispatch == nil {
		d.dispatchEvents(ctx, events)
		return
	}
	notify(d.dispatch)
}

// dispatchEvents turns events into scheduled deliveries, one SQLite and one
// bbolt transaction per event. It reports whether all went well; what
// failed stays in the outbox (or pending without an entry) for the sweep.
func (d *Deliverer) dispatchEvents(ctx context.Context, events []*Event) bool {
	ok := true
	for _, e := range events {
		dels, err := d.Store.DispatchEvent(ctx, e, len(d.retries()), d.Now().UTC())
		if err != nil {
			d.Logger.Error("dispatch webhook event; the sweep tries again", "event", e.ID, "err", err)
			ok = false
			continue
		}
		entries := make([]*ScheduleEntry, 0, len(dels))
		for _, del := range dels {
			entries = append(entries, d.entryFor(del))
		}
		if len(entries) == 0 {
			continue
		}
		if err := d.Queue.ScheduleAttempts(ctx, entries...); err != nil {
			d.Logger.Error("schedule webhook deliveries; the sweep tries again", "event", e.ID, "err", err)
			ok = false
		}
	}
	notify(d.wake)
	return ok
}

// dispatchOutbox dispatches what the outbox holds, 500 events at a time,
// until it is empty or an error asks to wait for the next sweep.
func (d *Deliverer) dispatchOutbox(ctx context.Context) error {
	for {
		events, err := d.Store.UndispatchedEvents(ctx, 500)
		if err != nil {
			return err
		}
		if !d.dispatchEvents(ctx, events) || len(events) < 500 {
			return nil
		}
	}
}

// sweep dispatches the outbox and schedules every pending delivery that has
// no entry in the schedule (a scheduling error, or a lost bbolt file), at
// the time SQLite records for its next attempt.
func (d *Deliverer) sweep(ctx context.Context) error {
	if err := d.dispatchOutbox(ctx); err != nil {
		return err
	}
	// Pending first, entries second: a delivery that moves on in between
	// has an entry by then, or no longer needs one.
	pending, err := d.Store.PendingDeliveries(ctx)
	if err != nil {
		return err
	}
	scheduled, err := d.Queue.ScheduledAttempts(ctx)
	if err != nil {
		return err
	}
	has := make(map[string]bool, len(scheduled))
	for _, e := range scheduled {
		has[e.DeliveryID] = true
	}
	var missing []*ScheduleEntry
	for _, del := range pending {
		if !has[del.ID] {
			missing = append(missing, d.entryFor(del))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	d.Logger.Warn("scheduling webhook deliveries that had no schedule entry", "deliveries", len(missing))
	if err := d.Queue.ScheduleAttempts(ctx, missing...); err != nil {
		return err
	}
	notify(d.wake)
	return nil
}

// entryFor is the schedule entry of a pending delivery's next attempt. Its
// due time comes from the record, so whoever schedules it (dispatch, retry,
// sweep) makes the same key.
func (d *Deliverer) entryFor(del *Delivery) *ScheduleEntry {
	due := del.CreatedAt
	if del.NextRetryAt != nil {
		due = *del.NextRetryAt
	} else if del.Attempts > 0 {
		due = d.Now()
	}
	return &ScheduleEntry{DeliveryID: del.ID, SubscriptionID: del.SubscriptionID, Attempt: del.Attempts + 1, Due: due}
}

// Schedule plans the next attempt of a pending delivery (a manual retry).
func (d *Deliverer) Schedule(ctx context.Context, del *Delivery) error {
	if err := d.Queue.ScheduleAttempts(ctx, d.entryFor(del)); err != nil {
		return err
	}
	notify(d.wake)
	return nil
}

// Cancel drops the scheduled attempts of deliveries that were cancelled.
func (d *Deliverer) Cancel(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	return d.Queue.RemoveAttempts(ctx, ids...)
}

func notify(ch chan struct{}) {
	if ch == nil {
		return
	}
	select {
	case ch <- struct{}{}:
	default:
	}
}

// dispatchLoop dispatches the outbox when told to and sweeps periodically.
func (d *Deliverer) dispatchLoop(ctx context.Context) {
	every := d.Sweep
	if every <= 0 {
		every = DefaultWebhookSweep
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		var err error
		select {
		case <-ctx.Done():
			return
		case <-d.dispatch:
			err = d.dispatchOutbox(ctx)
		case <-t.C:
			err = d.sweep(ctx)
		}
		if err != nil && ctx.Err() == nil {
			d.Logger.Error("webhook sweep", "err", err)
		}
	}
}

// claimLoop is the only claimer of the schedule: it leases the next due
// attempts whose subscriptions have room (in flight and per second), as
// many as there are free workers, and runs each on its own goroutine.
func (d *Deliverer) claimLoop(ctx context.Context, workers int, attempts *sync.WaitGroup) {
	slots := make(chan struct{}, workers) // one token per attempt running
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		select {
		case slots <- struct{}{}: // wait for a free worker
		case <-ctx.Done():
			return
		}
		free := cap(slots) - len(slots) + 1 // only this loop adds tokens
		now := d.Now()
		entries, next, err := d.Queue.ClaimDueAttempts(ctx, now, cmp.Or(d.Lease, DefaultAttemptLease), free, d.gate.admitter())
		if err != nil && ctx.Err() == nil {
			d.Logger.Error("claim webhook attempts", "err", err)
		}
		if len(entries) == 0 {
			<-slots
			wait := idleWait
			if err != nil {
				wait = time.Second
			} else if !next.IsZero() {
				wait = min(wait, max(next.Sub(now), time.Millisecond))
			}
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-d.wake:
			case <-timer.C:
			}
			continue
		}
		for i, e := range entries {
			if i > 0 {
				slots <- struct{}{}
			}
			d.gate.acquire(e.SubscriptionID)
			attempts.Add(1)
			go func() {
				defer attempts.Done()
				sent, err := d.handle(context.WithoutCancel(ctx), e)
				d.gate.release(e.SubscriptionID, sent, d.Now())
				<-slots
				notify(d.wake)
				if errors.Is(err, errInterrupted) {
					d.Logger.Warn("webhook attempt interrupted by shutdown; it runs again at the next start", "delivery", e.DeliveryID)
				} else if err != nil {
					d.Logger.Error("webhook attempt", "delivery", e.DeliveryID, "err", err)
				}
			}()
		}
	}
}

// handle runs one scheduled attempt and plans the next. sent reports
// whether a request went out.
func (d *Deliverer) handle(ctx context.Context, e *ScheduleEntry) (sent bool, err error) {
	del, err := d.Store.FindDelivery(ctx, e.DeliveryID)
	if ErrorCode(err) == ECodeDeliveryNotFound {
		return false, d.Queue.ReplaceAttempt(ctx, e, nil) // subscription deleted
	} else if err != nil {
		return false, err
	}
	if del.Status != DeliveryPending || del.Attempts >= e.Attempt {
		// Already recorded (a replay after a crash) or cancelled: follow
		// the stored state.
		return false, d.Queue.ReplaceAttempt(ctx, e, d.nextEntry(del))
	}
	sub, err := d.Store.FindSubscription(ctx, del.TeamID, del.SubscriptionID)
	if ErrorCode(err) == ECodeSubscriptionNotFound {
		return false, d.Queue.ReplaceAttempt(ctx, e, nil)
	} else if err != nil {
		return false, err
	}
	del, sent, err = d.attempt(ctx, del, sub)
	if err != nil {
		return sent, err
	}
	return sent, d.Queue.ReplaceAttempt(ctx, e, d.nextEntry(del))
}

func (d *Deliverer) nextEntry(del *Delivery) *ScheduleEntry {
	if del.Status != DeliveryPending || del.NextRetryAt == nil {
		return nil
	}
	return d.entryFor(del)
}

// attempt sends one delivery now and records the outcome. sent reports
// whether a request went out.
func (d *Deliverer) attempt(ctx context.Context, del *Delivery, sub *Subscription) (out *Delivery, sent bool, err error) {
	n := del.Attempts + 1
	a := Attempt{Number: n, At: d.Now().UTC()}
	retryable := true
	switch {
	case !sub.Enabled:
		a.Error, retryable = "subscription is disabled", false
	case len(del.Payload) > MaxWebhookPayload:
		a.Error, retryable = fmt.Sprintf("payload of %d bytes exceeds the 256 KB webhook limit", len(del.Payload)), false
	default:
		sent = true
		code, err := d.send(ctx, sub, del)
		if d.interrupted() {
			return nil, true, errInterrupted
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
	if retries := d.retries(); !a.Success && retryable && n < del.MaxAttempts && n < len(retries) {
		next := a.At.Add(retries[n])
		a.NextRetryAt = &next
	}
	if out, err = d.Store.RecordAttempt(ctx, del.ID, a); err != nil {
		return nil, sent, err
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
	return out, sent, nil
}
