package metrics

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestWriteText(t *testing.T) {
	r := NewRegistry()
	c := r.NewCounter("app_requests_total", "Requests by route.\nSecond line.", "route", "status")
	h := r.NewHistogram("app_latency_seconds", "Latency.", []float64{0.1, 1}, "route")
	r.NewGaugeFunc("app_queue", "Queue depth.", []string{"state"}, func(set func(float64, ...string)) {
		set(3, "processing")
		set(7, "pending")
	})
	plain := r.NewCounter("app_plain_total", "No labels.")
	c.Inc("GET /a", "200")
	c.Inc("GET /a", "200")
	c.Add(5, `say "hi"\`, "500")
	h.Observe(0.05, "GET /a")
	h.Observe(0.5, "GET /a")
	h.Observe(3, "GET /a")
	plain.Inc()

	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `# HELP app_requests_total Requests by route.\nSecond line.
# TYPE app_requests_total counter
app_requests_total{route="GET /a",status="200"} 2
app_requests_total{route="say \"hi\"\\",status="500"} 5
# HELP app_latency_seconds Latency.
# TYPE app_latency_seconds histogram
app_latency_seconds_bucket{route="GET /a",le="0.1"} 1
app_latency_seconds_bucket{route="GET /a",le="1"} 2
app_latency_seconds_bucket{route="GET /a",le="+Inf"} 3
app_latency_seconds_sum{route="GET /a"} 3.55
app_latency_seconds_count{route="GET /a"} 3
# HELP app_queue Queue depth.
# TYPE app_queue gauge
app_queue{state="pending"} 7
app_queue{state="processing"} 3
# HELP app_plain_total No labels.
# TYPE app_plain_total counter
app_plain_total 1
`
	if got := b.String(); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	if c.Value("GET /a", "200") != 2 || h.Count("GET /a") != 3 || c.Value("GET /b", "200") != 0 {
		t.Fatal("Value/Count disagree with the output")
	}
	var each []string
	c.Each(func(v []string, n uint64) { each = append(each, fmt.Sprint(v, n)) })
	if got, want := strings.Join(each, ";"), `[GET /a 200] 2;[say "hi"\ 500] 5`; got != want {
		t.Fatalf("Each: %s, want %s", got, want)
	}
}

func TestConcurrentRecording(t *testing.T) {
	r := NewRegistry()
	c := r.NewCounter("c_total", "c", "k")
	h := r.NewHistogram("h_seconds", "h", []float64{1}, "k")
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 1000; j++ {
				c.Inc("x")
				h.Observe(0.5, "x")
			}
		}()
	}
	wg.Wait()
	if c.Value("x") != 8000 || h.Count("x") != 8000 {
		t.Fatalf("counter %d, histogram %d", c.Value("x"), h.Count("x"))
	}
	var b strings.Builder
	r.WriteText(&b)
	if !strings.Contains(b.String(), `h_seconds_sum{k="x"} 4000`) {
		t.Fatalf("sum lost updates:\n%s", b.String())
	}
}

func TestDuplicateAndWrongLabelsPanic(t *testing.T) {
	r := NewRegistry()
	c := r.NewCounter("x_total", "x", "a")
	mustPanic(t, func() { r.NewCounter("x_total", "again") })
	mustPanic(t, func() { c.Inc() })
	var nilCounter *Counter
	nilCounter.Inc("ignored") // a nil metric records nothing
}

func mustPanic(t *testing.T, fn func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	fn()
}

func BenchmarkCounterInc(b *testing.B) {
	c := NewRegistry().NewCounter("c_total", "c", "route", "status")
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c.Inc("GET /api/v1/documents/jobs/{jobId}", "200")
		}
	})
}
