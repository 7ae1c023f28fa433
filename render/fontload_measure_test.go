package render

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"testing"
	"time"
)

func heapMB() float64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

func rssMB() string {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range bytes.Split(b, []byte("\n")) {
		if bytes.HasPrefix(l, []byte("VmRSS")) {
			return string(bytes.TrimSpace(l[6:]))
		}
	}
	return "?"
}

// TestMeasureFontLoading prints engine creation time and heap (FOLIO_MEASURE=1).
func TestMeasureFontLoading(t *testing.T) {
	if os.Getenv("FOLIO_MEASURE") == "" {
		t.Skip("FOLIO_MEASURE=1 to measure")
	}
	h0 := heapMB()
	t0 := time.Now()
	e, err := NewEngine(embeddedFonts())
	if err != nil {
		t.Fatal(err)
	}
	d := time.Since(t0)
	t.Logf("NewEngine %v; heap %.1f MB -> %.1f MB; rss %s", d, h0, heapMB(), rssMB())
	render := func(def Definition, vars map[string]any) time.Duration {
		tpl, err := e.Compile(def)
		if err != nil {
			t.Fatal(err)
		}
		v, err := tpl.Values(vars)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		t0 := time.Now()
		if _, err := tpl.Render(context.Background(), &buf, PDF, v, Options{}); err != nil {
			t.Fatal(err)
		}
		return time.Since(t0)
	}
	d = render(invoiceDefinition(), invoiceInput(20))
	t.Logf("first Latin invoice %v; heap %.1f MB; rss %s", d, heapMB(), rssMB())
	d = render(invoiceDefinition(), invoiceInput(20))
	t.Logf("second Latin invoice %v", d)
	for _, w := range worldInvoices {
		d = render(schemaDef(worldTemplate), w.vars())
		t.Logf("%s page %v; heap %.1f MB", w.lang, d, heapMB())
	}
	t.Logf("after every script: heap %.1f MB; rss %s", heapMB(), rssMB())
}
