package render

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRenderPDF(t *testing.T) {
	tests := []struct {
		name      string
		schema    string
		input     map[string]any
		wantLines []string // lines pdftotext must produce, in order
		wantPages int
		wantSize  string // pdfinfo "Page size" prefix
	}{
		{
			name:      "unicode text comes out as it went in",
			schema:    `{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"Grüße, Ωμέγα, Привет"}}]}]}`,
			wantLines: []string{"Grüße, Ωμέγα, Привет"},
			wantPages: 1,
			wantSize:  "595.28 x 841.89",
		},
		{
			name: "placeholders, helpers and styles",
			schema: `{"pageSize":"Letter","orientation":"landscape","sections":[{"id":"b","components":[
				{"type":"heading","props":{"content":"Invoice {{ number }}","level":2}},
				{"type":"text","props":{"content":"Dear {{ customer.name }}, you owe {{ total | currency(\"EUR\") }}.","style":{"bold":true,"italic":true,"color":"#336699","align":"right","fontSize":14}}},
				{"type":"text","props":{"content":"City: {{ customer.address.city | upper }}{{ customer.address.zip }}"}}]}]}`,
			input: map[string]any{"number": "2024-001", "total": 1234.5,
				"customer": map[string]any{"name": "Jürgen", "address": map[string]any{"city": "Köln"}}},
			wantLines: []string{"Invoice 2024-001", "Dear Jürgen, you owe €1,234.50.", "City: KÖLN"},
			wantPages: 1,
			wantSize:  "792 x 612",
		},
		{
			name: "if and each",
			schema: `{"sections":[{"id":"b","components":[
				{"type":"text","if":"vip","props":{"content":"VIP customer"}},
				{"type":"text","if":"!vip","props":{"content":"regular customer"}},
				{"type":"text","each":"items","as":"line","props":{"content":"{{ index + 1 }}. {{ line.name }} × {{ line.qty }} = {{ line.qty * line.price }}"}},
				{"type":"text","each":"none","props":{"content":"never"}}]}]}`,
			input: map[string]any{"vip": true, "items": []any{
				map[string]any{"name": "Tea", "qty": 2, "price": 1.5},
				map[string]any{"name": "Cake", "qty": 1, "price": 3.25},
			}},
			wantLines: []string{"VIP customer", "1. Tea × 2 = 3", "2. Cake × 1 = 3.25"},
			wantPages: 1,
		},
		{
			name: "header and footer repeat with page numbers",
			schema: `{"sections":[
				{"id":"h","role":"header","components":[{"type":"text","props":{"content":"ACME Ltd"}}]},
				{"id":"f","role":"footer","components":[{"type":"text","props":{"content":"Page {{page}} of {{pages}}","style":{"align":"center"}}}]},
				{"id":"b","components":[{"type":"text","each":"rows","props":{"content":"row {{ item }}"}}]}]}`,
			input:     map[string]any{"rows": numbers(120)},
			wantLines: []string{"ACME Ltd", "row 1", "Page 1 of 4", "ACME Ltd", "Page 2 of 4", "ACME Ltd", "Page 3 of 4", "ACME Ltd", "row 120", "Page 4 of 4"},
			wantPages: 4,
		},
		{
			name: "pages inside an expression takes two passes",
			schema: `{"sections":[
				{"id":"f","role":"footer","components":[{"type":"text","props":{"content":"{{ page == pages ? \"last page\" : \"continued on page \" + string(page + 1) }}"}}]},
				{"id":"b","components":[{"type":"text","each":"rows","props":{"content":"row {{ item }}"}}]}]}`,
			input:     map[string]any{"rows": numbers(80)},
			wantLines: []string{"continued on page 2", "continued on page 3", "last page"},
			wantPages: 3,
		},
		{
			name: "long paragraph wraps and breaks pages",
			schema: `{"sections":[{"id":"b","components":[
				{"type":"text","props":{"content":"{{ text }}"}},
				{"type":"text","props":{"content":"THE END"}}]}]}`,
			input:     map[string]any{"text": strings.Repeat("lorem ipsum dolor sit amet ", 800)},
			wantLines: []string{"THE END"},
			wantPages: 5,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pdf := MustRender(t, MustCompile(t, schemaDef(tt.schema)), tt.input, Options{})
			text := ExtractText(t, pdf)
			assertLinesInOrder(t, text, tt.wantLines)
			info := PDFInfo(t, pdf)
			if got, want := info["Pages"], itoa(tt.wantPages); got != want {
				t.Errorf("pages = %s, want %s", got, want)
			}
			if tt.wantSize != "" && !strings.HasPrefix(info["Page size"], tt.wantSize) {
				t.Errorf("page size = %q, want %q", info["Page size"], tt.wantSize)
			}
		})
	}
}

func numbers(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

func itoa(n int) string { return strings.TrimSpace(formatValue(n)) }

// assertLinesInOrder checks that every wanted line appears, whole and in order.
func assertLinesInOrder(t *testing.T, text string, want []string) {
	t.Helper()
	lines := strings.Split(text, "\n")
	i := 0
	for _, w := range want {
		for i < len(lines) && strings.TrimSpace(lines[i]) != w {
			i++
		}
		if i == len(lines) {
			t.Errorf("line %q not found (in order) in:\n%s", w, clip(text, 2000))
			return
		}
		i++
	}
}

func TestRenderPDFKeepsLongWordsOnPage(t *testing.T) {
	word := strings.Repeat("Donaudampfschifffahrtsgesellschaft", 12)
	tpl := MustCompile(t, schemaDef(`{"sections":[{"id":"b","components":[
		{"type":"heading","props":{"content":"{{ word }}"}},
		{"type":"text","props":{"content":"{{ word }} and {{ word }}","style":{"align":"right"}}}]}]}`))
	pdf := MustRender(t, tpl, map[string]any{"word": word}, Options{})
	const pageWidth, margin = 595.28, 20 * 72 / 25.4
	boxes := WordBoxes(t, pdf)
	if len(boxes) < 6 {
		t.Fatalf("found %d words, want the long words split over several lines", len(boxes))
	}
	for _, b := range boxes {
		if b[0] < margin-1 || b[2] > pageWidth-margin+1 {
			t.Errorf("word box x %.1f..%.1f leaves the content area %.1f..%.1f", b[0], b[2], margin, pageWidth-margin)
		}
	}
	joined := strings.Join(strings.Fields(ExtractText(t, pdf)), "")
	if got, want := strings.Count(joined, "Donaudampfschifffahrtsgesellschaft"), 36; got != want {
		t.Errorf("word appears %d times, want %d (no characters lost)", got, want)
	}
}

func TestRenderPDFLimits(t *testing.T) {
	manyRows := `{"sections":[{"id":"b","components":[{"type":"text","each":"rows","props":{"content":"row {{ item }}"}}]}]}`
	tests := []struct {
		name      string
		schema    string
		input     map[string]any
		limits    Limits
		wantCode  string
		wantLimit string
		wantMsg   string
	}{
		{
			name:      "pages",
			schema:    `{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"{{ text }}"}}]}]}`,
			input:     map[string]any{"text": strings.Repeat("lorem ipsum dolor sit amet ", 10000)},
			wantCode:  "ERR_LIMIT_001",
			wantLimit: LimitPages,
			wantMsg:   "PDF page limit exceeded: 31 pages, maximum 30",
		},
		{
			name:      "pages, lowered",
			schema:    manyRows,
			input:     map[string]any{"rows": numbers(200)},
			limits:    Limits{Pages: 2},
			wantCode:  "ERR_LIMIT_001",
			wantLimit: LimitPages,
			wantMsg:   "PDF page limit exceeded: 3 pages, maximum 2",
		},
		{
			name:      "bytes",
			schema:    manyRows,
			input:     map[string]any{"rows": numbers(10)},
			limits:    Limits{Bytes: 2000},
			wantCode:  "ERR_LIMIT_006",
			wantLimit: LimitBytes,
		},
		{
			name:      "loop iterations",
			schema:    manyRows,
			input:     map[string]any{"rows": numbers(1001)},
			wantCode:  "ERR_LIMIT_007",
			wantLimit: LimitLoopIterations,
			wantMsg:   "loop iteration limit exceeded: 1001 iterations, maximum 1000",
		},
		{
			name: "loop iterations over all loops together",
			schema: `{"sections":[{"id":"b","components":[
				{"type":"text","each":"rows","props":{"content":"a {{ item }}"}},
				{"type":"text","each":"rows","props":{"content":"b {{ item }}"}}]}]}`,
			input:     map[string]any{"rows": numbers(6)},
			limits:    Limits{LoopIterations: 10},
			wantCode:  "ERR_LIMIT_007",
			wantLimit: LimitLoopIterations,
		},
		{
			name:      "images",
			schema:    `{"sections":[{"id":"b","components":[{"type":"qrcode","each":"rows","props":{"value":"code {{ item }}","size":10}}]}]}`,
			input:     map[string]any{"rows": numbers(60)},
			wantCode:  "ERR_LIMIT_002",
			wantLimit: LimitImages,
			wantMsg:   "PDF image limit exceeded: 51 images, maximum 50",
		},
		{
			name:      "pages, by a table",
			schema:    `{"sections":[{"id":"b","components":[{"type":"table","props":{"rows":"rows","columns":[{"header":"N","value":"{{ row }}"}]}}]}]}`,
			input:     map[string]any{"rows": numbers(5000)},
			wantCode:  "ERR_LIMIT_001",
			wantLimit: LimitPages,
			wantMsg:   "PDF page limit exceeded: 31 pages, maximum 30",
		},
		{
			name:      "pages, inside columns",
			schema:    `{"sections":[{"id":"b","components":[{"type":"columns","props":{"children":[[{"type":"text","each":"rows","props":{"content":"row {{ item }}"}}],[]]}}]}]}`,
			input:     map[string]any{"rows": numbers(1000)},
			limits:    Limits{Pages: 2},
			wantCode:  "ERR_LIMIT_001",
			wantLimit: LimitPages,
		},
		{
			name:      "components",
			schema:    `{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"a"}},{"type":"text","props":{"content":"b"}}]}]}`,
			limits:    Limits{Components: 1},
			wantCode:  "ERR_LIMIT_009",
			wantLimit: LimitComponents,
			wantMsg:   "component count exceeded: 2 components, maximum 1",
		},
		{
			name:      "nesting depth",
			schema:    `{"sections":[{"id":"b","components":[` + nestedComponents(3, "") + `]}]}`,
			limits:    Limits{NestingDepth: 2},
			wantCode:  "ERR_LIMIT_008",
			wantLimit: LimitNestingDepth,
			wantMsg:   "nesting depth exceeded: 3 levels, maximum 2",
		},
		{
			name:      "nested loops",
			schema:    `{"sections":[{"id":"b","components":[` + nestedComponents(2, `"each":"rows",`) + `]}]}`,
			input:     map[string]any{"rows": numbers(2)},
			limits:    Limits{LoopDepth: 1},
			wantCode:  "ERR_LIMIT_008",
			wantLimit: LimitLoopDepth,
			wantMsg:   "nested loop depth exceeded: 2 levels, maximum 1",
		},
		{
			name:      "nested conditions",
			schema:    `{"sections":[{"id":"b","components":[` + nestedComponents(3, `"if":"true",`) + `]}]}`,
			limits:    Limits{ConditionalDepth: 2},
			wantCode:  "ERR_LIMIT_008",
			wantLimit: LimitConditionalDepth,
			wantMsg:   "conditional nesting exceeded: 3 levels, maximum 2",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl := MustCompile(t, schemaDef(tt.schema))
			values, err := tpl.Values(tt.input)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			_, err = tpl.Render(context.Background(), &buf, PDF, values, Options{Limits: tt.limits})
			var le *LimitError
			if !errors.As(err, &le) {
				t.Fatalf("err = %v, want a *LimitError", err)
			}
			if le.Code != tt.wantCode || le.Limit != tt.wantLimit {
				t.Errorf("got %s/%s, want %s/%s", le.Code, le.Limit, tt.wantCode, tt.wantLimit)
			}
			if tt.wantMsg != "" && le.Error() != tt.wantMsg {
				t.Errorf("message = %q, want %q", le.Error(), tt.wantMsg)
			}
			if le.Actual <= le.Max {
				t.Errorf("actual %d should exceed max %d", le.Actual, le.Max)
			}
			if buf.Len() != 0 {
				t.Errorf("wrote %d bytes on failure, want none", buf.Len())
			}
		})
	}
}

func TestRenderChecksVariableLimit(t *testing.T) {
	def := schemaDef(`{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"{{ a }}{{ b }}"}}]}]}`)
	def.Variables = []Variable{{Name: "a", Type: "string"}}
	def.CalculatedVariables = []CalculatedVariable{{Name: "b", Expression: "a + a"}}
	tpl := MustCompile(t, def)
	values, err := tpl.Values(map[string]any{"a": "x"})
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []Format{PDF, XLSX} {
		_, err = tpl.Render(context.Background(), &bytes.Buffer{}, format, values, Options{Limits: Limits{Variables: 1}})
		var le *LimitError
		if !errors.As(err, &le) || le.Code != "ERR_LIMIT_018" || le.Limit != LimitVariables || le.Actual != 2 || le.Max != 1 {
			t.Errorf("%s: err = %v, want ERR_LIMIT_018 with 2 variables, maximum 1", format, err)
		}
	}
}

func TestRenderPDFStopsWhenContextEnds(t *testing.T) {
	tpl := MustCompile(t, schemaDef(`{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"x"}}]}]}`))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var buf bytes.Buffer
	_, err := tpl.Render(ctx, &buf, PDF, nil, Options{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	ctx, cancel = context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	_, err = tpl.Render(ctx, &buf, PDF, nil, Options{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want context.DeadlineExceeded", err)
	}
}

func TestRenderPDFExpressionErrors(t *testing.T) {
	tests := []struct {
		name     string
		content  string
		wantPath string
		wantMsg  string
	}{
		{"runaway string", `{{ reduce(1..200, #acc + #acc, "xxxxxxxxxx") }}`, "schema.sections[0].components[0].props.content", "text longer than"},
		{"runaway operations", `{{ sum(map(1..900, sum(map(1..900, # * 2)))) }}`, "schema.sections[0].components[0].props.content", "budget"},
		{"type error at run time", `{{ name - 1 }}`, "schema.sections[0].components[0].props.content", "invalid operation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if raceEnabled && tt.name == "runaway operations" {
				// 810,000 operations in one goroutine until the budget
				// stops them (14 s of the race step at load 10).
				t.Skip("a long loop in one goroutine; run without -race")
			}
			tpl := MustCompile(t, schemaDef(`{"sections":[{"id":"b","components":[{"type":"text","props":{"content":`+quote(tt.content)+`}}]}]}`))
			var buf bytes.Buffer
			start := time.Now()
			_, err := tpl.Render(context.Background(), &buf, PDF, map[string]any{"name": "x"}, Options{})
			var xe *ExpressionError
			if !errors.As(err, &xe) {
				t.Fatalf("err = %v, want *ExpressionError", err)
			}
			if xe.Path != tt.wantPath || !strings.Contains(xe.Message, tt.wantMsg) {
				t.Errorf("got %s: %s, want %s: …%s…", xe.Path, xe.Message, tt.wantPath, tt.wantMsg)
			}
			if d := time.Since(start); d > scaled(5*time.Second) {
				t.Errorf("took %v to stop", d)
			}
		})
	}
}

func TestRenderPDFEachNeedsArray(t *testing.T) {
	tpl := MustCompile(t, schemaDef(`{"sections":[{"id":"b","components":[{"type":"text","each":"n","props":{"content":"x"}}]}]}`))
	_, err := tpl.Render(context.Background(), &bytes.Buffer{}, PDF, map[string]any{"n": 3.0}, Options{})
	var xe *ExpressionError
	if !errors.As(err, &xe) || xe.Path != "schema.sections[0].components[0].each" {
		t.Errorf("err = %v, want an ExpressionError at the each", err)
	}
}

func TestRenderPDFIsReproducibleAndConcurrent(t *testing.T) {
	tpl := MustCompile(t, schemaDef(`{"sections":[
		{"id":"f","role":"footer","components":[{"type":"text","props":{"content":"{{page}}/{{pages}}"}}]},
		{"id":"b","components":[{"type":"heading","props":{"content":"{{ title }}"}},{"type":"text","each":"rows","props":{"content":"row {{ item }}"}}]}]}`))
	input := map[string]any{"title": "Report", "rows": numbers(100)}
	want := MustRender(t, tpl, input, Options{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := MustRender(t, tpl, input, Options{}); !bytes.Equal(got, want) {
				t.Error("concurrent render produced different bytes")
			}
		}()
	}
	wg.Wait()
}

func TestRenderPDFEmbedsOnlyUsedStyles(t *testing.T) {
	needTool(t, "pdffonts")
	plain := MustRender(t, MustCompile(t, schemaDef(`{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"plain"}}]}]}`)), nil, Options{})
	withHeading := MustRender(t, MustCompile(t, schemaDef(`{"sections":[{"id":"b","components":[{"type":"heading","props":{"content":"bold"}}]}]}`)), nil, Options{})
	if got := fonts(t, plain); !slices.Equal(got, []string{"NotoSans-Regular"}) {
		t.Errorf("plain document embeds %v, want the regular font only", got)
	}
	if got := fonts(t, withHeading); !slices.Equal(got, []string{"NotoSans-Bold"}) {
		t.Errorf("heading document embeds %v, want the bold font only", got)
	}
	if got, want := strings.Count(ExtractText(t, plain), "plain"), 1; got != want {
		t.Errorf("text count = %d, want %d", got, want)
	}
}

func TestRenderUnsupportedFormat(t *testing.T) {
	tpl := MustCompile(t, schemaDef(`{"sections":[]}`))
	for _, f := range []Format{"docx", ""} {
		if _, err := tpl.Render(context.Background(), &bytes.Buffer{}, f, nil, Options{}); err == nil {
			t.Errorf("format %q: want an error", f)
		}
	}
}

func TestRenderEmptyDocumentHasOnePage(t *testing.T) {
	pdf := MustRender(t, MustCompile(t, schemaDef(`{"sections":[]}`)), nil, Options{})
	if got, want := PageCount(t, pdf), 1; got != want {
		t.Errorf("pages = %d, want %d", got, want)
	}
}

func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}
