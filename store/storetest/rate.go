package storetest

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"folio/app"
)

// RateCase is one contract case of the rate-limit windows: the embedded
// limiter's memory (saved to bbolt) and PostgreSQL's shared table must
// decide every call alike.
type RateCase struct {
	Name string
	Run  func(t *testing.T, w app.RateWindows)
}

// RunRate runs every rate case, each on empty windows made by open.
func RunRate(t *testing.T, open func(testing.TB) app.RateWindows) {
	for _, c := range rateCases {
		t.Run(c.Name, func(t *testing.T) { c.Run(t, open(t)) })
	}
}

var rateCases = []RateCase{
	{"AdmitsUpToTheLimit", rateAdmitsUpToTheLimit},
	{"PreviousWindowWeighs", ratePreviousWindowWeighs},
	{"RetryAfterAlike", rateRetryAfterAlike},
	{"KeysApart", rateKeysApart},
	{"ConcurrentCallsCountedOnce", rateConcurrentCallsCountedOnce},
}

// allow is one call through the server's limiter over w.
func allow(t *testing.T, w app.RateWindows, countRefused bool, key string, limit int, win time.Duration, at time.Time) app.Decision {
	t.Helper()
	d, err := (&app.RateLimiter{Windows: w, Name: "api", CountRefused: countRefused}).Allow(ctx, key, limit, win, at)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// rateAdmitsUpToTheLimit: limit calls pass with the remaining count
// falling to 0, the next is refused with the window's reset; a refused
// call uses up the limit only when refused calls count.
func rateAdmitsUpToTheLimit(t *testing.T, w app.RateWindows) {
	for _, countRefused := range []bool{false, true} {
		key := fmt.Sprintf("team:a:%v", countRefused)
		for i := 1; i <= 3; i++ {
			d := allow(t, w, countRefused, key, 3, time.Minute, t0.Add(time.Duration(i)*time.Second))
			if !d.Allowed || d.Remaining != 3-i || d.Limit != 3 || !d.ResetAt.Equal(t0.Add(time.Minute)) {
				t.Fatalf("countRefused %v, call %d: %+v", countRefused, i, d)
			}
		}
		d := allow(t, w, countRefused, key, 3, time.Minute, t0.Add(10*time.Second))
		if d.Allowed || d.Remaining != 0 || d.RetryAfter <= 0 {
			t.Fatalf("countRefused %v, call 4: %+v", countRefused, d)
		}
		h, err := w.HitRate(ctx, app.RateCall{Limiter: "api", Key: key, Limit: 3, Window: time.Minute, Now: t0.Add(11 * time.Second), CountRefused: countRefused})
		if err != nil {
			t.Fatal(err)
		}
		want := 3
		if countRefused {
			want = 5 // the fourth and this fifth call
		}
		if h.Allowed || h.Curr != want || h.Prev != 0 || !h.Start.Equal(t0) {
			t.Fatalf("countRefused %v: hit %+v, want %d calls counted", countRefused, h, want)
		}
	}
}

// ratePreviousWindowWeighs: the previous window's calls weigh by the part
// of the sliding window still over it; a window two back weighs nothing.
func ratePreviousWindowWeighs(t *testing.T, w app.RateWindows) {
	for i := range 10 {
		allow(t, w, false, "k", 10, time.Minute, t0.Add(time.Duration(i)*time.Second))
	}
	// 15 s into the next minute the 10 weigh 7.5: two more fit (9.5 + 1 > 10).
	at := t0.Add(75 * time.Second)
	for i := range 2 {
		if d := allow(t, w, false, "k", 10, time.Minute, at); !d.Allowed {
			t.Fatalf("call %d at 75 s refused: %+v", i+1, d)
		}
	}
	if d := allow(t, w, false, "k", 10, time.Minute, at); d.Allowed {
		t.Fatalf("third call at 75 s admitted: %+v", d)
	}
	// The minute after next: only the 2 of the previous minute weigh.
	h, err := w.HitRate(ctx, app.RateCall{Limiter: "api", Key: "k", Limit: 10, Window: time.Minute, Now: t0.Add(150 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if !h.Allowed || h.Prev != 2 || h.Curr != 1 || !h.Start.Equal(t0.Add(2*time.Minute)) {
		t.Fatalf("two minutes on: %+v", h)
	}
	h, err = w.HitRate(ctx, app.RateCall{Limiter: "api", Key: "k", Limit: 10, Window: time.Minute, Now: t0.Add(10 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if !h.Allowed || h.Prev != 0 || h.Curr != 1 {
		t.Fatalf("ten minutes on: %+v", h)
	}
}

// rateRetryAfterAlike: the Retry-After of a refused call is the one
// app's tests derive by hand (app/ratelimit_test.go), on every store.
func rateRetryAfterAlike(t *testing.T, w app.RateWindows) {
	for _, tc := range []struct {
		name         string
		countRefused bool
		burstAt      time.Duration // 10 calls
		refusedAt    time.Duration
		want         time.Duration
	}{
		{"current window full, refused calls count", true, 0, 5 * time.Second, 66 * time.Second},
		{"current window full, refused calls free", false, 0, 5 * time.Second, 61 * time.Second},
		{"previous window weighs", true, -time.Minute, 3 * time.Second, 9 * time.Second},
		{"previous window weighs, refused free", false, -time.Minute, 3 * time.Second, 3 * time.Second},
	} {
		key := "retry:" + tc.name
		for range 10 {
			allow(t, w, tc.countRefused, key, 10, time.Minute, t0.Add(tc.burstAt))
		}
		d := allow(t, w, tc.countRefused, key, 10, time.Minute, t0.Add(tc.refusedAt))
		if d.Allowed || d.RetryAfter != tc.want {
			t.Errorf("%s: %+v, want refused with RetryAfter %v", tc.name, d, tc.want)
		}
		if d := allow(t, w, tc.countRefused, key, 10, time.Minute, t0.Add(tc.refusedAt+tc.want)); !d.Allowed {
			t.Errorf("%s: refused again after Retry-After: %+v", tc.name, d)
		}
	}
}

// rateKeysApart: every key has its own count; a long key (an email a
// client made up) is stored bounded and still counted on its own.
func rateKeysApart(t *testing.T, w app.RateWindows) {
	long := "login:email:" + strings.Repeat("x", 10_000) + "@example.com"
	longer := long + "m"
	for _, key := range []string{"team:a", "team:b", long, longer} {
		if d := allow(t, w, false, key, 1, time.Minute, t0); !d.Allowed {
			t.Fatalf("%.40s: first call refused", key)
		}
		if d := allow(t, w, false, key, 1, time.Minute, t0); d.Allowed {
			t.Fatalf("%.40s: second call admitted", key)
		}
	}
	if d := allow(t, w, false, "team:c", 1, 15*time.Minute, t0); !d.Allowed {
		t.Fatal("a third key was refused")
	}
}

// rateConcurrentCallsCountedOnce: 40 calls at once for one key with a
// limit of 23 admit exactly 23.
func rateConcurrentCallsCountedOnce(t *testing.T, w app.RateWindows) {
	var admitted atomic.Int32
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 5 {
				d, err := (&app.RateLimiter{Windows: w, Name: "api"}).Allow(ctx, "team:hot", 23, time.Minute, t0.Add(time.Duration(i*5+j)*time.Millisecond))
				if err != nil {
					t.Error(err)
					return
				}
				if d.Allowed {
					admitted.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if n := admitted.Load(); n != 23 {
		t.Fatalf("%d of 40 concurrent calls admitted, want 23", n)
	}
}
