package app

import (
	"sync"
	"time"
)

// sendGate holds each subscription to at most perSub attempts in flight and
// at most rate attempts per window, the way a receiver sees them.
//
// An attempt counts from the moment it is admitted until window after it
// ended (its answer came back, or it failed). A receiver can only see a
// request between those two moments, so when the last of any set of requests
// that reached it within one window was admitted, all the others were still
// counted: no window at the receiver holds more than rate requests, whatever
// the network delays. An attempt that ended without being sent stops
// counting at once.
type sendGate struct {
	perSub int
	rate   int
	window time.Duration

	mu   sync.Mutex
	subs map[string]*subSends
}

type subSends struct {
	inFlight int
	ended    []time.Time // ends of sent attempts within the window, oldest first
}

func newSendGate(perSub, rate int, window time.Duration) *sendGate {
	return &sendGate{perSub: max(min(perSub, rate), 1), rate: rate, window: window, subs: map[string]*subSends{}}
}

// admitter returns an Admit for one pass over the schedule: it lets an
// entry through when its subscription may start one more attempt now,
// counting the entries it already let through in this pass as started.
// When not, reopen is when it may (zero: when one of its attempts ends).
// Entries without a subscription (scheduled by an older version) pass.
// Attempts other replicas hold (elsewhere) count as in flight: the limit of
// attempts in flight holds for the cluster. The rate is still counted per
// process.
func (g *sendGate) admitter() Admit {
	taken := map[string]int{}
	return func(sub string, elsewhere int, now time.Time) (bool, time.Time) {
		ok, reopen := g.admit(sub, now, taken[sub]+elsewhere)
		if ok {
			taken[sub]++
		}
		return ok, reopen
	}
}

// admit reports whether the subscription, with extra attempts about to
// start, may start one more now.
func (g *sendGate) admit(sub string, now time.Time, extra int) (ok bool, reopen time.Time) {
	if g == nil || sub == "" {
		return true, time.Time{}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.subs[sub]
	if s == nil {
		s = &subSends{}
	}
	s.trim(now, g.window)
	if s.inFlight == 0 && len(s.ended) == 0 {
		delete(g.subs, sub) // idle: forget it
	}
	inFlight := s.inFlight + extra
	if inFlight >= g.perSub {
		return false, time.Time{}
	}
	if n := inFlight + len(s.ended); n >= g.rate {
		// n-rate+1 ended attempts must leave the window; inFlight < rate,
		// so that many exist.
		return false, s.ended[n-g.rate].Add(g.window)
	}
	return true, time.Time{}
}

// acquire counts an attempt as started (after admit, or unconditionally for
// test events).
func (g *sendGate) acquire(sub string) {
	if g == nil || sub == "" {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.subs[sub]
	if s == nil {
		s = &subSends{}
		g.subs[sub] = s
	}
	s.inFlight++
}

// release ends an attempt at now; sent says whether a request went out.
func (g *sendGate) release(sub string, sent bool, now time.Time) {
	if g == nil || sub == "" {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.subs[sub]
	if s == nil {
		return
	}
	s.inFlight = max(s.inFlight-1, 0)
	if sent {
		s.ended = append(s.ended, now)
	}
	s.trim(now, g.window)
	if len(s.ended) > g.rate {
		s.ended = s.ended[len(s.ended)-g.rate:]
	}
	if s.inFlight == 0 && len(s.ended) == 0 {
		delete(g.subs, sub)
	}
}

// trim forgets attempts that ended a whole window ago.
func (s *subSends) trim(now time.Time, window time.Duration) {
	cut := now.Add(-window)
	i := 0
	for i < len(s.ended) && !s.ended[i].After(cut) {
		i++
	}
	s.ended = s.ended[i:]
}
