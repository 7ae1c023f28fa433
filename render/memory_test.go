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
	if raceEnabled {
		// One goroutine rendering a 3-megapixel image (26 s of the race step
		// at load 10); TestMemoryGateQueuesRenders and the concurrent renders
		// cover the gate under -race.
		t.Skip("renders a 3-megapixel image in one goroutine; run without -race")
	}
	tpl := MustCompile(t, imageDef)
	values, _ := tpl.Values(map[string]any{"logo": pngDataURI(t, 2000, 1500)})
	// 3 megapixels, 8-bit RGBA: 12 MB to decode, 24 MB for fpdf to embed.
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
	if err != nil || st.Memory < 36_000_000 || st.Memory > DefaultMemory {
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
	r1, err := g.acquire(ctx, 60, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *reservation, 1)
	go func() {
		r, _ := g.acquire(ctx, 60, false, 0)
		got <- r
	}()
	waitForWaiters(t, g, 1, 0)
	short, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := g.acquire(short, 10, false, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("a reservation behind a waiting one should wait too: %v", err)
	}
	r1.release()
	r1.release() // releasing twice gives back once
	r2 := <-got
	if r2 == nil || g.used != 60 {
		t.Fatalf("used %d", g.used)
	}
	r2.release()
	// A reservation larger than the capacity takes all of it.
	r3, err := g.acquire(ctx, 1000, false, 0)
	if err != nil || g.used != 100 {
		t.Fatalf("used %d, %v", g.used, err)
	}
	r3.release()
	if g.used != 0 || len(g.jobs)+len(g.previews) != 0 {
		t.Errorf("used %d, %d waiting", g.used, len(g.jobs)+len(g.previews))
	}
}

// waitForWaiters waits until jobs jobs and previews interactive renders
// are queued at g: the test goes on once they are, whatever the time.
func waitForWaiters(t *testing.T, g *memoryGate, jobs, previews int) {
	t.Helper()
	for {
		g.mu.Lock()
		j, p := len(g.jobs), len(g.previews)
		g.mu.Unlock()
		if j == jobs && p == previews {
			return
		}
		if j > jobs || p > previews {
			t.Fatalf("%d jobs and %d previews waiting, want %d and %d", j, p, jobs, previews)
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}

// Interactive renders hold at most their share of the pool and are served
// after waiting jobs, so previews and dry runs cannot keep jobs waiting.
func TestMemoryGateKeepsRoomForJobs(t *testing.T) {
	g := &memoryGate{capacity: 100} // interactive share: 50
	ctx := context.Background()
	p1, _ := g.acquire(ctx, 1000, true, 0) // cut to the share
	if g.used != 50 || g.interactive != 50 {
		t.Fatalf("used %d, interactive %d", g.used, g.interactive)
	}
	p1.release()
	p1, _ = g.acquire(ctx, 30, true, 0)
	p2, _ := g.acquire(ctx, 20, true, 0)
	// The share is full: the next preview waits, but a job does not.
	preview := make(chan *reservation, 1)
	go func() {
		r, _ := g.acquire(ctx, 10, true, 0)
		preview <- r
	}()
	waitForWaiters(t, g, 0, 1)
	job, err := g.acquire(ctx, 50, false, 0)
	if err != nil || g.used != 100 {
		t.Fatalf("a job should get the rest of the pool: used %d, %v", g.used, err)
	}
	// A job waiting for memory is served before the preview that waited first.
	jobs := make(chan *reservation, 1)
	go func() {
		r, _ := g.acquire(ctx, 40, false, 0)
		jobs <- r
	}()
	waitForWaiters(t, g, 1, 1)
	p1.release() // 30 free: not enough for the job, and the preview must not pass it
	if len(preview) != 0 {
		t.Fatal("a preview was served before a waiting job")
	}
	p2.release() // 50 free: the job, then the preview (share: 0 + 10 of 50)
	r := <-jobs
	q := <-preview
	if g.used != 50+40+10 || g.interactive != 10 {
		t.Fatalf("used %d, interactive %d", g.used, g.interactive)
	}
	for _, x := range []*reservation{r, q, job} {
		x.release()
	}
	// A bounded wait ends with ErrBusy.
	hold, _ := g.acquire(ctx, 100, false, 0)
	if _, err := g.acquire(ctx, 10, true, time.Nanosecond); !errors.Is(err, ErrBusy) {
		t.Errorf("bounded wait: %v", err)
	}
	hold.release()
	if g.used != 0 || g.interactive != 0 || len(g.jobs)+len(g.previews) != 0 {
		t.Errorf("used %d, interactive %d, %d waiting", g.used, g.interactive, len(g.jobs)+len(g.previews))
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
	hold, _ := e.memory.acquire(context.Background(), DefaultMemory, false, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tpl.Render(ctx, &bytes.Buffer{}, PDF, nil, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("a render should wait while the engine's memory is reserved: %v", err)
	}
	if _, err := tpl.Render(context.Background(), &bytes.Buffer{}, PDF, nil, Options{Interactive: true, MemoryWait: time.Nanosecond}); !errors.Is(err, ErrBusy) {
		t.Errorf("a preview that may wait a moment: %v", err)
	}
	hold.release()
	if _, err := tpl.Render(context.Background(), &bytes.Buffer{}, PDF, nil, Options{}); err != nil {
		t.Error(err)
	}
}

// A job queued behind renders that hold the whole pool completes once they
// end, even though it waited longer than its own timeout: the timeout
// counts rendering, not waiting for memory.
func TestJobTimeoutStartsAfterTheMemoryWait(t *testing.T) {
	e := MustEngine(t)
	const pool = 64 << 20
	e.SetMemory(pool)
	tpl := MustCompile(t, schemaDef(`{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"x"}}]}]}`))
	tpl.engine = e
	hold, _ := e.memory.acquire(context.Background(), pool, false, 0) // a job holding everything
	const timeout = 500 * time.Millisecond
	done := make(chan error, 1)
	go func() {
		_, err := tpl.Render(context.Background(), &bytes.Buffer{}, PDF, nil, Options{Limits: Limits{PDFTimeout: timeout}})
		done <- err
	}()
	waitForWaiters(t, &e.memory, 1, 0)
	// The job has now waited at least its whole timeout.
	<-time.After(timeout)
	if len(done) != 0 {
		t.Fatalf("the job did not wait for memory: %v", <-done)
	}
	// Previews cannot take the memory the job waits for.
	if _, err := tpl.Render(context.Background(), &bytes.Buffer{}, PDF, nil, Options{Interactive: true, MemoryWait: time.Nanosecond}); !errors.Is(err, ErrBusy) {
		t.Errorf("a preview went before the waiting job: %v", err)
	}
	hold.release()
	if err := <-done; err != nil {
		t.Errorf("the job failed after waiting for memory: %v", err)
	}
}

// A PDF without large images reserves far less than its budget, so more
// renders run at once; one with a large image from a variable reserves
// what decoding it needs; a render whose estimate is too low grows its
// reservation rather than overrunning the pool unseen.
func TestReservationFollowsWhatARenderNeeds(t *testing.T) {
	l := DefaultLimits()
	text := MustCompile(t, schemaDef(`{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"{{ logo }}"}}]}]}`))
	image := MustCompile(t, imageDef)
	small := map[string]any{"logo": pngHeader(10, 10)}
	big := map[string]any{"logo": pngHeader(4000, 3000)}
	want := int64(l.Pages)*pageContentReserve + 3*l.Bytes
	for _, tc := range []struct {
		name   string
		tpl    *Template
		format Format
		values map[string]any
		want   int64
	}{
		{"text", text, PDF, big, want}, // a data URI shown as text is not an image
		{"small image", image, PDF, small, want},
		{"12 MP image", image, PDF, big, int64(l.Pages)*pageContentReserve + l.Bytes + imageCost(pngHeader(4000, 3000))},
		{"workbook", text, XLSX, small, l.Memory},
	} {
		if got := tc.tpl.reservationFor(tc.format, tc.values, l); got != tc.want || got > l.Memory {
			t.Errorf("%s: reserves %d, want %d (budget %d)", tc.name, got, tc.want, l.Memory)
		}
	}
	// Two text renders fit a pool of one budget, beside a holder.
	e := MustEngine(t)
	e.SetMemory(DefaultMemory)
	text.engine = e
	hold, _ := e.memory.acquire(context.Background(), DefaultMemory-want, false, 0)
	if _, err := text.Render(context.Background(), &bytes.Buffer{}, PDF, small, Options{}); err != nil {
		t.Fatal(err)
	}
	hold.release()
	// cover grows a reservation without waiting, and release gives all back.
	g := &memoryGate{capacity: 100}
	r, _ := g.acquire(context.Background(), 10, true, 0)
	m := memoryMeter{budget: 1000, res: r}
	if err := m.hold(120); err != nil || g.used != 120 || g.interactive != 120 {
		t.Fatalf("used %d, interactive %d, %v", g.used, g.interactive, err)
	}
	r.release()
	if g.used != 0 || g.interactive != 0 {
		t.Errorf("used %d, interactive %d after release", g.used, g.interactive)
	}
}

// pngHeader is a data URI holding only a PNG's signature and header: what
// the memory estimate reads.
func pngHeader(w, h int) string {
	head := append([]byte{}, pngSignature...)
	head = append(head, 0, 0, 0, 13, 'I', 'H', 'D', 'R')
	head = binary.BigEndian.AppendUint32(head, uint32(w))
	head = binary.BigEndian.AppendUint32(head, uint32(h))
	head = append(head, 8, 6, 0, 0, 0, 0, 0, 0, 0)
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(head)
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
