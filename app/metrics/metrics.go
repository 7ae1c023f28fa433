// Package metrics keeps counters and histograms in memory and writes them,
// with gauges computed at scrape time, in the Prometheus text exposition
// format (version 0.0.4). It is a few hundred lines instead of the
// prometheus/client_golang dependency tree (docs/decisions.md, Operations).
//
// Recording is lock-free after a series' first use: a sync.Map lookup and
// atomic adds.
package metrics

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Registry holds metric families in registration order.
type Registry struct {
	mu       sync.Mutex
	families []*family
}

type family struct {
	name, help, typ string
	labels          []string
	write           func(w *bufio.Writer, f *family)
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

func (r *Registry) add(f *family) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, g := range r.families {
		if g.name == f.name {
			panic("metrics: duplicate metric " + f.name)
		}
	}
	r.families = append(r.families, f)
}

// Counter is a monotonically increasing count per label combination.
type Counter struct {
	labels []string
	series sync.Map // key -> *counterSeries
}

type counterSeries struct {
	values []string
	n      atomic.Uint64
}

// NewCounter registers a counter with the given label names.
func (r *Registry) NewCounter(name, help string, labels ...string) *Counter {
	c := &Counter{labels: labels}
	r.add(&family{name: name, help: help, typ: "counter", labels: labels, write: func(w *bufio.Writer, f *family) {
		for _, s := range sortedSeries[*counterSeries](&c.series) {
			writeSample(w, f.name, f.labels, s.values, "", "", float64(s.n.Load()))
		}
	}})
	return c
}

// Inc adds one to the series named by labelValues.
func (c *Counter) Inc(labelValues ...string) { c.Add(1, labelValues...) }

// Add adds n to the series named by labelValues.
func (c *Counter) Add(n uint64, labelValues ...string) {
	if c == nil {
		return
	}
	key := seriesKey(c.labels, labelValues)
	s, ok := c.series.Load(key)
	if !ok {
		s, _ = c.series.LoadOrStore(key, &counterSeries{values: append([]string(nil), labelValues...)})
	}
	s.(*counterSeries).n.Add(n)
}

// Value returns the count of one series (0 when it was never touched).
func (c *Counter) Value(labelValues ...string) uint64 {
	if s, ok := c.series.Load(seriesKey(c.labels, labelValues)); ok {
		return s.(*counterSeries).n.Load()
	}
	return 0
}

// Each calls fn with every series' label values and count, in label order.
func (c *Counter) Each(fn func(labelValues []string, n uint64)) {
	for _, s := range sortedSeries[*counterSeries](&c.series) {
		fn(s.values, s.n.Load())
	}
}

// Histogram counts observations into fixed buckets per label combination.
type Histogram struct {
	labels  []string
	buckets []float64 // upper bounds, ascending; +Inf is implicit
	series  sync.Map  // key -> *histogramSeries
}

type histogramSeries struct {
	values []string
	counts []atomic.Uint64 // per bucket, not cumulative; the last is +Inf
	sum    atomic.Uint64   // float64 bits
}

// NewHistogram registers a histogram with the given bucket upper bounds.
func (r *Registry) NewHistogram(name, help string, buckets []float64, labels ...string) *Histogram {
	b := append([]float64(nil), buckets...)
	sort.Float64s(b)
	h := &Histogram{labels: labels, buckets: b}
	r.add(&family{name: name, help: help, typ: "histogram", labels: labels, write: func(w *bufio.Writer, f *family) {
		for _, s := range sortedSeries[*histogramSeries](&h.series) {
			var cum uint64
			for i := range s.counts {
				cum += s.counts[i].Load()
				le := "+Inf"
				if i < len(h.buckets) {
					le = formatFloat(h.buckets[i])
				}
				writeSample(w, f.name+"_bucket", f.labels, s.values, "le", le, float64(cum))
			}
			writeSample(w, f.name+"_sum", f.labels, s.values, "", "", math.Float64frombits(s.sum.Load()))
			writeSample(w, f.name+"_count", f.labels, s.values, "", "", float64(cum))
		}
	}})
	return h
}

// Observe records v in the series named by labelValues.
func (h *Histogram) Observe(v float64, labelValues ...string) {
	if h == nil {
		return
	}
	key := seriesKey(h.labels, labelValues)
	x, ok := h.series.Load(key)
	if !ok {
		x, _ = h.series.LoadOrStore(key, &histogramSeries{values: append([]string(nil), labelValues...), counts: make([]atomic.Uint64, len(h.buckets)+1)})
	}
	s := x.(*histogramSeries)
	s.counts[sort.SearchFloat64s(h.buckets, v)].Add(1)
	for {
		old := s.sum.Load()
		if s.sum.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// Count returns how many observations one series holds.
func (h *Histogram) Count(labelValues ...string) uint64 {
	x, ok := h.series.Load(seriesKey(h.labels, labelValues))
	if !ok {
		return 0
	}
	var n uint64
	for i := range x.(*histogramSeries).counts {
		n += x.(*histogramSeries).counts[i].Load()
	}
	return n
}

// NewGaugeFunc registers a gauge whose values fn reports at every scrape by
// calling set once per series.
func (r *Registry) NewGaugeFunc(name, help string, labels []string, fn func(set func(v float64, labelValues ...string))) {
	r.add(&family{name: name, help: help, typ: "gauge", labels: labels, write: func(w *bufio.Writer, f *family) {
		type sample struct {
			values []string
			v      float64
		}
		var out []sample
		fn(func(v float64, labelValues ...string) {
			out = append(out, sample{append([]string(nil), labelValues...), v})
		})
		sort.SliceStable(out, func(i, j int) bool { return strings.Join(out[i].values, "\xff") < strings.Join(out[j].values, "\xff") })
		for _, s := range out {
			writeSample(w, f.name, f.labels, s.values, "", "", s.v)
		}
	}})
}

// ContentType is the media type of WriteText's output.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// WriteText writes every family in the text exposition format.
func (r *Registry) WriteText(w io.Writer) error {
	r.mu.Lock()
	fams := append([]*family(nil), r.families...)
	r.mu.Unlock()
	bw := bufio.NewWriter(w)
	for _, f := range fams {
		fmt.Fprintf(bw, "# HELP %s %s\n# TYPE %s %s\n", f.name, escapeHelp(f.help), f.name, f.typ)
		f.write(bw, f)
	}
	return bw.Flush()
}

func seriesKey(labels, values []string) string {
	if len(values) != len(labels) {
		panic(fmt.Sprintf("metrics: %d label values for labels %v", len(values), labels))
	}
	switch len(values) {
	case 0:
		return ""
	case 1:
		return values[0]
	}
	return strings.Join(values, "\xff")
}

type withValues interface{ labelValues() []string }

func (s *counterSeries) labelValues() []string   { return s.values }
func (s *histogramSeries) labelValues() []string { return s.values }

func sortedSeries[S withValues](m *sync.Map) []S {
	var out []S
	m.Range(func(_, v any) bool { out = append(out, v.(S)); return true })
	sort.Slice(out, func(i, j int) bool {
		return strings.Join(out[i].labelValues(), "\xff") < strings.Join(out[j].labelValues(), "\xff")
	})
	return out
}

func writeSample(w *bufio.Writer, name string, labels, values []string, extraName, extraValue string, v float64) {
	w.WriteString(name)
	if len(labels) > 0 || extraName != "" {
		w.WriteByte('{')
		for i, l := range labels {
			if i > 0 {
				w.WriteByte(',')
			}
			w.WriteString(l)
			w.WriteString(`="`)
			w.WriteString(escapeLabel(values[i]))
			w.WriteByte('"')
		}
		if extraName != "" {
			if len(labels) > 0 {
				w.WriteByte(',')
			}
			w.WriteString(extraName)
			w.WriteString(`="`)
			w.WriteString(extraValue)
			w.WriteByte('"')
		}
		w.WriteByte('}')
	}
	w.WriteByte(' ')
	w.WriteString(formatFloat(v))
	w.WriteByte('\n')
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
var helpEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`)

func escapeLabel(s string) string { return labelEscaper.Replace(s) }
func escapeHelp(s string) string  { return helpEscaper.Replace(s) }
