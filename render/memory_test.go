package render

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/image/font/gofont/goregular"
)

// pngDataURI is a w×h 8-bit RGBA PNG of gradients, written row by row so
// that making it takes no memory worth measuring: small to send, big to
// decode.
func pngDataURI(tb testing.TB, w, h int) string {
	tb.Helper()
	var out bytes.Buffer
	out.Write(pngSignature)
	chunk := func(kind string, data []byte) {
		out.Write(binary.BigEndian.AppendUint32(nil, uint32(len(data))))
		body := append([]byte(kind), data...)
		out.Write(body)
		out.Write(binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE(body)))
	}
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(w))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(h))
	chunk("IHDR", append(ihdr, 8, 6, 0, 0, 0))
	var idat bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&idat, zlib.BestSpeed)
	row := make([]byte, 1+4*w)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			copy(row[1+4*x:], []byte{uint8(x), uint8(y), 128, 200})
		}
		zw.Write(row)
	}
	zw.Close()
	chunk("IDAT", idat.Bytes())
	chunk("IEND", nil)
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(out.Bytes())
}

var imageDef = schemaDef(`{"sections":[{"id":"b","components":[{"type":"image","props":{"src":"{{ logo }}","width":100}}]}]}`)

func TestMemoryBudgetRefusesImagesBeforeDecoding(t *testing.T) {
	tpl := MustCompile(t, imageDef)
	values, _ := tpl.Values(map[string]any{"logo": pngDataURI(t, 2000, 1500)})
	// 3 megapixels: 24 MB to decode and convert, 24 MB for fpdf to embed.
	st, err := tpl.Render(context.Background(), &bytes.Buffer{}, PDF, values, Options{Limits: Limits{Memory: 32 << 20}})
	var le *LimitError
	if !errors.As(err, &le) || le.Code != "ERR_LIMIT_017" || le.Limit != LimitMemory || le.Max != 32<<20 || le.Actual <= le.Max {
		t.Fatalf("got %v, want ERR_LIMIT_017", err)
	}
	if !strings.Contains(err.Error(), "render memory budget exceeded") || st.Memory > 32<<20 {
		t.Errorf("error %q, stats %+v", err, st)
	}
	// The default budget takes it.
	st, err = tpl.Render(context.Background(), &bytes.Buffer{}, PDF, values, Options{})
	if err != nil || st.Memory < 40<<20 || st.Memory > DefaultMemory {
		t.Errorf("default budget: %+v, %v", st, err)
	}
}

func TestMemoryBudgetCountsSheetsAndOutput(t *testing.T) {
	tpl := MustCompile(t, exportDefinition())
	values, _ := tpl.Values(exportInput(5000))
	_, err := tpl.Render(context.Background(), &bytes.Buffer{}, XLSX, values, Options{Limits: Limits{Memory: 1 << 20}})
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitMemory {
		t.Fatalf("got %v, want the memory budget exceeded", err)
	}
	st, err := tpl.Render(context.Background(), &bytes.Buffer{}, XLSX, values, Options{})
	if err != nil || st.Memory < st.Bytes || st.Memory > 64<<20 {
		t.Errorf("stats %+v, %v: the budget should count the sheet data and the output", st, err)
	}
	pdf := MustCompile(t, reportDefinition())
	values, _ = pdf.Values(reportInput(200))
	st, err = pdf.Render(context.Background(), &bytes.Buffer{}, PDF, values, Options{Limits: Limits{Memory: 64 << 10}})
	if !errors.As(err, &le) || le.Limit != LimitMemory {
		t.Errorf("PDF page content: got %+v, %v", st, err)
	}
}

func TestMemoryGateQueuesRenders(t *testing.T) {
	g := &memoryGate{capacity: 100}
	ctx := context.Background()
	r1, err := g.acquire(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan func(), 1)
	go func() {
		r, _ := g.acquire(ctx, 60)
		got <- r
	}()
	select {
	case <-got:
		t.Fatal("the second reservation should wait")
	case <-time.After(50 * time.Millisecond):
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := g.acquire(short, 10); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a reservation behind a waiting one should wait too: %v", err)
	}
	r1()
	r1() // releasing twice gives back once
	r2 := <-got
	if r2 == nil || g.used != 60 {
		t.Fatalf("used %d", g.used)
	}
	r2()
	// A reservation larger than the capacity takes all of it.
	r3, err := g.acquire(ctx, 1000)
	if err != nil || g.used != 100 {
		t.Fatalf("used %d, %v", g.used, err)
	}
	r3()
	if g.used != 0 || len(g.waiters) != 0 {
		t.Errorf("used %d, %d waiting", g.used, len(g.waiters))
	}
}

func TestRenderWaitsForMemory(t *testing.T) {
	e, err := NewEngine(Fonts{Regular: goregular.TTF})
	if err != nil {
		t.Fatal(err)
	}
	e.SetMemory(DefaultMemory)
	tpl, err := e.Compile(schemaDef(`{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"x"}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	release, _ := e.memory.acquire(context.Background(), DefaultMemory)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := tpl.Render(ctx, &bytes.Buffer{}, PDF, nil, Options{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a render should wait while the engine's memory is reserved: %v", err)
	}
	release()
	if _, err := tpl.Render(context.Background(), &bytes.Buffer{}, PDF, nil, Options{}); err != nil {
		t.Error(err)
	}
}

// memoryScenarios are the renders whose peak memory docs/performance.md
// publishes.
var memoryScenarios = []struct {
	name, what string
	format     Format
	setup      func(tb testing.TB) (Definition, map[string]any)
}{
	{"invoice", "example invoice, 20 items, logo, QR code, barcode", PDF, func(tb testing.TB) (Definition, map[string]any) {
		ex, input := LoadExample(tb, "invoice")
		items := input["items"].([]any)
		for len(items) < 20 {
			items = append(items, items[len(items)%5])
		}
		input["items"] = items
		return ex.Definition, input
	}},
	{"report-30-pages", "30-page report, 1,130-row table", PDF, func(tb testing.TB) (Definition, map[string]any) {
		return reportDefinition(), reportInput(reportRows)
	}},
	{"statement-continued", "statement with continued rows and carried totals, page-aware footers, 3 layout passes", PDF, func(tb testing.TB) (Definition, map[string]any) {
		def, input := LoadCase(tb, "testdata/sections-on")
		var schema map[string]any
		_ = json.Unmarshal(def.Schema, &schema)
		table := schema["sections"].([]any)[5].(map[string]any)["components"].([]any)[0].(map[string]any)["props"].(map[string]any)
		table["continuedLabel"] = "Carried {{ carried }}"
		table["carryForward"] = "row.amount"
		def.Schema, _ = json.Marshal(schema)
		rows := input["rows"].([]any)
		for len(rows) < 800 {
			rows = append(rows, rows[len(rows)%62])
		}
		input["rows"] = rows
		return def, input
	}},
	{"image-12mp", "one 4000×3000 PNG from a variable", PDF, func(tb testing.TB) (Definition, map[string]any) {
		return imageDef, map[string]any{"logo": pngDataURI(tb, 4000, 3000)}
	}},
	{"image-25mp-refused", "a 5000×5000 PNG: refused by the budget before decoding", PDF, func(tb testing.TB) (Definition, map[string]any) {
		return imageDef, map[string]any{"logo": pngDataURI(tb, 5000, 5000)}
	}},
	{"xlsx-10000-rows", "10,000-row workbook, 10 typed columns", XLSX, func(tb testing.TB) (Definition, map[string]any) {
		return exportDefinition(), exportInput(9999)
	}},
	{"xlsx-grouped-formulas", "2,000 rows grouped by region, formulas, subtotals, totals", XLSX, func(tb testing.TB) (Definition, map[string]any) {
		def, input := LoadCase(tb, "testdata/table-totals")
		sales := input["sales"].([]any)
		for len(sales) < 2000 {
			sales = append(sales, sales[len(sales)%24])
		}
		input["sales"] = sales
		return def, input
	}},
}

// TestPeakMemory measures the peak memory of each scenario in a process of
// its own and prints the table docs/performance.md publishes. It runs only
// with FOLIO_PEAK_MEMORY=1 (each scenario is a fresh test binary).
func TestPeakMemory(t *testing.T) {
	if name := os.Getenv("FOLIO_PEAK_SCENARIO"); name != "" {
		peakScenario(t, name)
		return
	}
	if os.Getenv("FOLIO_PEAK_MEMORY") == "" {
		t.Skip("set FOLIO_PEAK_MEMORY=1 to measure the peak memory of each scenario")
	}
	var b strings.Builder
	b.WriteString("| scenario | what | output | budgeted (Stats.Memory) | peak Go heap | peak RSS | RSS of an idle process |\n|---|---|---:|---:|---:|---:|---:|\n")
	base := measure(t, "idle")
	for _, sc := range memoryScenarios {
		m := measure(t, sc.name)
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s | %s |\n", sc.name, sc.what, m["result"], mb(m["budgeted"]), mb(m["heap"]), mb(m["rss"]), mb(base["rss"]))
	}
	t.Log("\n" + b.String())
}

func mb(s string) string {
	n, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return fmt.Sprintf("%.1f MB", n/(1<<20))
}

// measure runs one scenario in a child test process and returns what it
// printed, with its peak RSS.
func measure(t *testing.T, name string) map[string]string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPeakMemory$", "-test.v")
	cmd.Env = append(os.Environ(), "FOLIO_PEAK_SCENARIO="+name)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
	m := map[string]string{}
	for _, f := range strings.Fields(string(out)) {
		if k, v, ok := strings.Cut(f, "="); ok {
			m[k] = v
		}
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m["rss"] = strconv.FormatInt(ru.Maxrss*1024, 10)
	}
	return m
}

// peakScenario renders one scenario, sampling the Go heap every
// millisecond, and prints its figures.
func peakScenario(t *testing.T, name string) {
	tpl := MustCompile(t, invoiceDefinition()) // the engine and fonts, as a server has them
	if name == "idle" {
		fmt.Println("result=- budgeted=0 heap=0")
		return
	}
	var format Format
	var input map[string]any
	for _, sc := range memoryScenarios {
		if sc.name == name {
			var def Definition
			def, input = sc.setup(t)
			tpl, format = MustCompile(t, def), sc.format
		}
	}
	values, err := tpl.Values(input)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	peak := uint64(0)
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms) // exact, though it stops the world
			peak = max(peak, ms.HeapAlloc-min(base, ms.HeapAlloc))
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	var buf bytes.Buffer
	st, err := tpl.Render(context.Background(), &buf, format, values, Options{})
	close(done)
	<-stopped
	// A render faster than the sampling still shows in what it allocated.
	runtime.ReadMemStats(&ms)
	peak = max(peak, ms.HeapAlloc-min(base, ms.HeapAlloc))
	result := fmt.Sprintf("%.0fKB", float64(buf.Len())/1024)
	var le *LimitError
	if errors.As(err, &le) {
		result = le.Code
	} else if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("result=%s budgeted=%d heap=%d\n", result, st.Memory, peak)
}
