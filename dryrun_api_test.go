package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// dryRunCase is a template and the variables of one document.
type dryRunCase struct {
	name, format, schema string
	vars                 map[string]any
}

const tinyPNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

func rowsOf(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"n": i + 1, "name": fmt.Sprintf("Item %03d", i+1), "region": []string{"North", "South", "East"}[i%3],
			"qty": i%7 + 1, "price": float64(i%13) + 0.5, "amount": float64(i%17)*3.25 - 10, "date": fmt.Sprintf("2026-%02d-%02d", i%12+1, i%27+1)}
	}
	return out
}

const (
	pageFooter = `{"id":"f","role":"footer","components":[{"type":"text","props":{"content":"Page {{page}} of {{pages}}","style":{"align":"center","fontSize":8}}}]}`
	itemTable  = `{"type":"table","props":{"rows":"rows","columns":[{"header":"No.","value":"{{ row.n }}","width":15},{"header":"Name","value":"{{ row.name }}"},{"header":"Amount","value":"{{ row.amount }}","format":"currency:EUR","width":30}]}}`
)

// dryRunCases are 20 varied templates: text, tables over pages, headers and
// footers, page-aware sections, images, codes, columns, workbooks.
func dryRunCases() []dryRunCase {
	long := strings.Repeat("A long paragraph that wraps over many lines and pages. ", 60)
	return []dryRunCase{
		{"text", "pdf", `{"sections":[{"id":"b","components":[{"type":"heading","props":{"content":"Hello {{ name }}"}},{"type":"text","props":{"content":"One page."}}]}]}`, map[string]any{"name": "Ada"}},
		{"long-text", "pdf", `{"sections":[{"id":"b","components":[{"type":"text","each":"paras","props":{"content":"{{ item }}"}}]}]}`, map[string]any{"paras": []any{long, long, long, long, long}}},
		{"table-120", "pdf", `{"sections":[{"id":"b","components":[` + itemTable + `]}]}`, map[string]any{"rows": rowsOf(120)}},
		{"table-continued", "pdf", `{"sections":[{"id":"b","components":[{"type":"table","props":{"rows":"rows","carryForward":"row.amount","continuedLabel":{"bottom":"Carried forward","top":"Brought forward"},"columns":[{"header":"No.","value":"{{ row.n }}","width":15},{"header":"Name","value":"{{ row.name }}"},{"header":"Amount","value":"{{ row.amount }}","format":"currency:EUR","width":30,"total":"sum"}]}}]}]}`, map[string]any{"rows": rowsOf(150)}},
		{"header-footer", "pdf", `{"sections":[{"id":"h","role":"header","components":[{"type":"text","props":{"content":"ACME report"}}]},` + pageFooter + `,{"id":"b","components":[` + itemTable + `]}]}`, map[string]any{"rows": rowsOf(90)}},
		{"sections-on", "pdf", `{"sections":[{"id":"c","role":"header","on":"first","components":[{"type":"heading","props":{"content":"Cover"}},{"type":"spacer","props":{"height":30}}]},{"id":"t","role":"footer","on":"last","components":[{"type":"keyValue","props":{"items":[{"label":"Total","value":"{{ sum(map(rows, #.amount)) }}","format":"currency:EUR"},{"label":"Rows","value":"{{ len(rows) }}"},{"label":"Signed","value":"________________"}]}}]},{"id":"n","role":"footer","on":"notLast","components":[{"type":"text","props":{"content":"continued"}}]},{"id":"b","components":[` + itemTable + `]}]}`, map[string]any{"rows": rowsOf(70)}},
		{"page-aware-body", "pdf", `{"sections":[{"id":"b","components":[{"type":"text","each":"rows","props":{"content":"{{ item.name }} is on page {{ page }} of {{ pages }}"}},{"type":"text","if":"page > 2","props":{"content":"late"}}]}]}`, map[string]any{"rows": rowsOf(130)}},
		{"keep-together", "pdf", `{"sections":[{"id":"b","components":[{"type":"columns","each":"rows","keepTogether":true,"props":{"children":[[{"type":"heading","props":{"content":"{{ item.name }}","level":3}},{"type":"text","props":{"content":"{{ item.region }}\nline two\nline three"}}],[{"type":"keyValue","props":{"items":[{"label":"Qty","value":"{{ item.qty }}"},{"label":"Price","value":"{{ item.price }}","format":"currency:EUR"}]}}]]}}]}]}`, map[string]any{"rows": rowsOf(25)}},
		{"widows", "pdf", `{"sections":[{"id":"b","components":[{"type":"spacer","props":{"height":230}},{"type":"text","each":"paras","props":{"content":"{{ item }}","widows":3,"orphans":3}}]}]}`, map[string]any{"paras": []any{long[:900], long[:700]}}},
		{"page-breaks", "pdf", `{"sections":[{"id":"a","components":[{"type":"heading","props":{"content":"A"}},{"type":"pageBreak"},{"type":"heading","props":{"content":"B"}}]},{"id":"c","components":[{"type":"pageBreak"},{"type":"text","props":{"content":"C"}},{"type":"pageBreak"},{"type":"text","props":{"content":"D"}}]}]}`, map[string]any{}},
		{"image", "pdf", `{"sections":[{"id":"b","components":[{"type":"image","props":{"src":"` + tinyPNG + `","width":80}},{"type":"image","props":{"src":"{{ logo }}","height":200}},{"type":"image","each":"photos","props":{"src":"{{ item }}","width":20}},{"type":"text","props":{"content":"after"}}]}]}`,
			map[string]any{"logo": tinyPNG, "photos": []any{grayPNG(3, 2, 0x40), grayPNG(5, 4, 0x80), grayPNG(3, 2, 0x40)}}},
		{"codes", "pdf", `{"sections":[{"id":"b","components":[{"type":"qrcode","each":"rows","props":{"value":"{{ item.name }}","size":40}},{"type":"barcode","props":{"value":"ABC-123"}}]}]}`, map[string]any{"rows": rowsOf(12)}},
		{"columns", "pdf", `{"sections":[{"id":"b","components":[{"type":"columns","props":{"children":[[{"type":"text","each":"rows","props":{"content":"{{ item.name }}"}}],[` + itemTable + `]]}}]}]}`, map[string]any{"rows": rowsOf(80)}},
		{"key-value", "pdf", `{"sections":[{"id":"b","components":[{"type":"keyValue","each":"rows","props":{"items":[{"label":"Name","value":"{{ item.name }}"},{"label":"Date","value":"{{ item.date }}","format":"date:DD.MM.YYYY"}]}}]}]}`, map[string]any{"rows": rowsOf(60)}},
		{"grouped-totals", "pdf", `{"sections":[{"id":"b","components":[{"type":"table","props":{"rows":"rows","groupBy":"region","columns":[{"header":"Region","value":"{{ row.region }}"},{"header":"Qty","value":"{{ row.qty }}","total":"sum"},{"header":"Amount","value":"{{ row.amount }}","format":"currency:EUR","total":"sum"}]}}]}]}`, map[string]any{"rows": rowsOf(100)}},
		{"landscape-letter", "pdf", `{"pageSize":"Letter","orientation":"landscape","margins":{"top":10,"bottom":10,"left":10,"right":10},"sections":[` + pageFooter + `,{"id":"b","components":[` + itemTable + `]}]}`, map[string]any{"rows": rowsOf(100)}},
		{"pages-in-expression", "pdf", `{"sections":[{"id":"f","role":"footer","components":[{"type":"text","props":{"content":"{{ page == pages ? \"end\" : \"more\" }}"}}]},{"id":"b","components":[` + itemTable + `,{"type":"text","if":"pages > 1","props":{"content":"{{ pages }} pages"}}]}]}`, map[string]any{"rows": rowsOf(60)}},
		{"xlsx-export", "xlsx", `{"sections":[{"id":"b","name":"Export","components":[` + itemTable + `]}]}`, map[string]any{"rows": rowsOf(500)}},
		{"xlsx-formulas", "xlsx", `{"sections":[{"id":"b","name":"Sales","components":[{"type":"table","props":{"rows":"rows","groupBy":"region","columns":[{"header":"Region","value":"{{ row.region }}"},{"header":"Qty","key":"q","value":"{{ row.qty }}","total":"sum"},{"header":"Price","key":"p","value":"{{ row.price }}","format":"currency:EUR"},{"header":"Amount","value":"{{ row.qty * row.price }}","formula":"={q}*{p}","format":"currency:EUR","total":"sum"}]}}]}]}`, map[string]any{"rows": rowsOf(200)}},
		{"xlsx-sheets", "xlsx", `{"sections":[{"id":"a","name":"First","components":[{"type":"text","props":{"content":"A"}},{"type":"pageBreak"},` + itemTable + `]},{"id":"c","name":"Second","components":[{"type":"keyValue","props":{"items":[{"label":"Rows","value":"{{ len(rows) }}"}]}}]}]}`, map[string]any{"rows": rowsOf(40)}},
	}
}

// pdfPageCount reads a PDF's page count with poppler's pdfinfo.
func pdfPageCount(t *testing.T, pdf []byte) int {
	t.Helper()
	cmd := exec.Command("pdfinfo", "-")
	cmd.Stdin = strings.NewReader(string(pdf))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdfinfo: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "Pages:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	t.Fatalf("pdfinfo gave no page count:\n%s", out)
	return 0
}

// pdfImageCount is the number of distinct image objects a PDF embeds, as
// poppler's pdfimages lists them (soft masks not counted).
func pdfImageCount(t *testing.T, pdf []byte) int {
	t.Helper()
	path := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("pdfimages", "-list", path).Output()
	if err != nil {
		t.Fatalf("pdfimages: %v", err)
	}
	objects := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n")[2:] {
		f := strings.Fields(line)
		if len(f) > 11 && f[2] == "image" {
			objects[f[10]] = true
		}
	}
	return len(objects)
}

// grayPNG is a data URI of a w×h grey PNG of one shade: a few bytes to
// send however large it is to decode.
func grayPNG(w, h int, shade uint8) string {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = shade
	}
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, img); err != nil {
		panic(err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
}

func num(r resp, path string) int64 {
	f, _ := r.get(path).(float64)
	return int64(f)
}

// TestDryRunPredictsTheRealDocument dry-runs 20 varied templates through
// the real server and then generates each for real: the predicted pages,
// rows, sheets and bytes are the document's, and the preview's X-Folio-*
// headers say the same. Dry runs record no job, charge no quota and send
// no webhook.
func TestDryRunPredictsTheRealDocument(t *testing.T) {
	rcv := startReceiver(t, false)
	s := webhookServer(t, rcv, "0s,100ms,200ms,300ms")
	u := s.verifiedUser("Planner")
	key := s.createKey(u.token, nil)
	s.must(200, "POST", "/api/v1/webhook-subscriptions", key, map[string]any{"url": rcv.url, "events": []string{"document.generated", "document.failed"}})

	cases := dryRunCases()
	if len(cases) != 20 {
		t.Fatalf("%d cases, want 20", len(cases))
	}
	ids := make([]string, len(cases))
	for i, c := range cases {
		tpl := s.createTemplate(u.token, "Dry "+c.name, map[string]any{"outputFormats": []string{c.format}, "schema": json.RawMessage(c.schema)})
		ids[i] = tpl.str("id")
	}
	// All dry runs first: nothing may be recorded or charged.
	dry := make([]resp, len(cases))
	for i, c := range cases {
		dry[i] = s.must(200, "POST", "/api/v1/documents/generate?dryRun=true", key, map[string]any{"templateId": ids[i], "format": c.format, "variables": c.vars})
		if dry[i].str("valid") != "true" || len(dry[i].get("errors").([]any)) != 0 {
			t.Fatalf("%s: dry run = %s", c.name, dry[i].raw)
		}
		if num(dry[i], "limits.pages") != 30 || num(dry[i], "limits.bytes") != 10<<20 || num(dry[i], "limits.memoryBytes") <= 0 || num(dry[i], "limits.documentsPerMonth") <= 0 {
			t.Fatalf("%s: limits = %v", c.name, dry[i].get("limits"))
		}
	}
	if l := s.must(200, "GET", "/api/v1/documents/jobs", key, nil); l.str("meta.total") != "0" {
		t.Fatalf("dry runs recorded jobs: %s", l.raw)
	}
	if use := s.must(200, "GET", "/api/v1/analytics/usage", key, nil); use.str("documentsGenerated") != "0" {
		t.Fatalf("dry runs were charged: %s", use.raw)
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(rcv.requests()); n != 0 {
		t.Fatalf("dry runs sent %d webhooks", n)
	}

	multiPage := 0
	for i, c := range cases {
		d := dry[i]
		g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": ids[i], "format": c.format, "variables": c.vars})
		if g.str("status") != "completed" {
			t.Fatalf("%s: generate = %s", c.name, g.raw)
		}
		_, _, doc := s.download(g.str("downloadUrl"))
		if got := int64(len(doc)); num(d, "predicted.bytes") != got {
			t.Errorf("%s: predicted %d bytes, the document has %d", c.name, num(d, "predicted.bytes"), got)
		}
		// Without the DRAFT stamp previews carry unless told otherwise.
		p := s.must(200, "POST", "/api/templates/"+ids[i]+"/preview", u.token, map[string]any{"format": c.format, "variables": c.vars, "watermark": false})
		for _, f := range []string{"Pages", "Images", "Rows", "Sheets", "Bytes"} {
			if h := p.header.Get("X-Folio-" + f); h != strconv.FormatInt(num(d, "predicted."+strings.ToLower(f)), 10) {
				t.Errorf("%s: preview X-Folio-%s %s, dry run %v", c.name, f, h, d.get("predicted."+strings.ToLower(f)))
			}
		}
		if c.format == "pdf" && !strings.Contains(c.schema, `"qrcode"`) && !strings.Contains(c.schema, `"barcode"`) {
			// Without QR codes and barcodes (drawn, not embedded), the
			// images are the PDF's image objects.
			if got := pdfImageCount(t, doc); num(d, "predicted.images") != int64(got) {
				t.Errorf("%s: predicted %d images, the PDF embeds %d", c.name, num(d, "predicted.images"), got)
			}
		}
		if c.name == "image" && num(d, "predicted.images") != 3 {
			t.Errorf("image: predicted %d images, want 3 distinct ones", num(d, "predicted.images"))
		}
		if c.format == "pdf" {
			pages := pdfPageCount(t, doc)
			if num(d, "predicted.pages") != int64(pages) {
				t.Errorf("%s: predicted %d pages, the PDF has %d", c.name, num(d, "predicted.pages"), pages)
			}
			if pages > 1 {
				multiPage++
			}
		} else if num(d, "predicted.rows") == 0 || num(d, "predicted.sheets") == 0 || num(d, "predicted.pages") != 0 {
			t.Errorf("%s: workbook prediction %v", c.name, d.get("predicted"))
		}
	}
	if multiPage < 10 {
		t.Errorf("only %d templates span pages; the cases should exercise page breaks", multiPage)
	}
	if got := rcv.waitFor(len(cases), 10*time.Second); len(got) != len(cases) {
		t.Errorf("%d webhooks for %d real documents", len(got), len(cases))
	}
}

func TestDryRunReportsProblemsWithoutFailing(t *testing.T) {
	s := startServer(t)
	u := s.signup("Checker")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Checked", map[string]any{"outputFormats": []string{"pdf"},
		"schema":    json.RawMessage(`{"sections":[{"id":"b","components":[` + itemTable + `,{"type":"text","props":{"content":"{{ note | upper }}"}}]}]}`),
		"variables": []any{map[string]any{"name": "rows", "type": "array", "required": true}, map[string]any{"name": "note", "type": "string"}}})
	id := tpl.str("id")
	gen := "/api/v1/documents/generate?dryRun=true"

	// Variables that do not fit: valid false, one error per variable, 200.
	r := s.must(200, "POST", gen, key, map[string]any{"templateId": id, "format": "pdf", "variables": map[string]any{"note": map[string]any{"x": 1}, "typo": 1}})
	errs := r.get("errors").([]any)
	if r.str("valid") != "false" || len(errs) != 2 || !strings.Contains(string(r.raw), `"variable":"rows"`) || !strings.Contains(string(r.raw), `"code":"ERR_VALID_002"`) {
		t.Fatalf("variables = %s", r.raw)
	}
	if w := r.get("warnings").([]any); len(w) != 1 || !strings.Contains(fmt.Sprint(w), "typo") {
		t.Fatalf("an undeclared variable should be a warning: %s", r.raw)
	}
	// Over the page limit: the limit error, how far it got, and the limits.
	r = s.must(200, "POST", gen, key, map[string]any{"templateId": id, "format": "pdf", "variables": map[string]any{"rows": rowsOf(2000)}})
	if r.str("valid") != "false" || !strings.Contains(string(r.raw), `"code":"ERR_LIMIT_001"`) || num(r, "predicted.pages") <= 30 || num(r, "limits.pages") != 30 {
		t.Fatalf("page limit = %s", r.raw)
	}
	// Close to a limit: a warning.
	r = s.must(200, "POST", gen, key, map[string]any{"templateId": id, "format": "pdf", "variables": map[string]any{"rows": rowsOf(1150)}})
	if r.str("valid") != "true" || num(r, "predicted.pages") < 24 || !strings.Contains(string(r.raw), "of the limit of 30") {
		t.Fatalf("near the limit = %s", r.raw)
	}
	// Request errors stay errors.
	s.wantError(s.do("POST", gen, key, map[string]any{"templateId": "tpl_nope", "format": "pdf"}), 404, "ERR_TMPL_001")
	s.wantError(s.do("POST", gen, key, map[string]any{"templateId": id, "format": "xlsx"}), 400, "ERR_JOB_002")
	s.wantError(s.do("POST", "/api/v1/documents/generate?dryRun=maybe", key, map[string]any{"templateId": id, "format": "pdf"}), 400, "ERR_VALID_003")
	if l := s.must(200, "GET", "/api/v1/documents/jobs", key, nil); l.str("meta.total") != "0" {
		t.Fatalf("dry runs recorded jobs: %s", l.raw)
	}
}

// A batch dry run checks every document: a client learns that document 73
// would exceed 30 pages before sending the batch.
func TestBatchDryRunPerDocument(t *testing.T) {
	s := startServer(t)
	u := s.signup("Batcher")
	key := s.createKey(u.token, nil)
	// Documents repeat their rows "copies" times, so a small request can
	// ask for a long document.
	table := strings.Replace(itemTable, `"rows":"rows"`, `"rows":"flatten(map(1..copies, rows))"`, 1)
	tpl := s.createTemplate(u.token, "Statements", map[string]any{"outputFormats": []string{"pdf"},
		"schema":    json.RawMessage(`{"sections":[` + pageFooter + `,{"id":"b","components":[` + table + `]}]}`),
		"variables": []any{map[string]any{"name": "copies", "type": "integer", "defaultValue": 1}}})
	docs := make([]any, 75)
	for i := range docs {
		vars := map[string]any{"rows": rowsOf(5 + i%40)}
		if i == 73 {
			vars["copies"] = 40
		}
		docs[i] = map[string]any{"variables": vars, "filename": fmt.Sprintf("statement-%d", i)}
	}
	docs[10] = map[string]any{"variables": "not an object"}
	r := s.must(200, "POST", "/api/v1/documents/generate/batch?dryRun=true", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "documents": docs})
	var out struct {
		Valid     bool
		Predicted struct{ Pages int }
		Documents []struct {
			Index     int
			Filename  string
			Valid     bool
			Errors    []struct{ Code string }
			Predicted struct{ Pages int }
		}
	}
	if err := json.Unmarshal(r.raw, &out); err != nil {
		t.Fatal(err)
	}
	if out.Valid || len(out.Documents) != 75 {
		t.Fatalf("batch = %s", r.raw)
	}
	sum := 0
	for i, d := range out.Documents {
		sum += d.Predicted.Pages
		switch i {
		case 73:
			if d.Valid || len(d.Errors) != 1 || d.Errors[0].Code != "ERR_LIMIT_001" || d.Predicted.Pages <= 30 {
				t.Errorf("document 73 = %+v", d)
			}
		case 10:
			if d.Valid || len(d.Errors) != 1 || d.Errors[0].Code != "ERR_VALID_003" {
				t.Errorf("document 10 = %+v", d)
			}
		default:
			if !d.Valid || d.Index != i || d.Filename != fmt.Sprintf("statement-%d", i) || d.Predicted.Pages < 1 {
				t.Errorf("document %d = %+v", i, d)
			}
		}
	}
	if out.Predicted.Pages != sum {
		t.Errorf("batch predicts %d pages, its documents %d", out.Predicted.Pages, sum)
	}
	// Nothing recorded; a request error is still an error.
	if l := s.must(200, "GET", "/api/v1/documents/jobs", key, nil); l.str("meta.total") != "0" {
		t.Fatalf("a batch dry run recorded jobs: %s", l.raw)
	}
	s.wantError(s.do("POST", "/api/v1/documents/generate/batch?dryRun=true", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "documents": make([]any, 101)}), 400, "ERR_LIMIT_014")
}

// An image from a variable that would take more than the render memory
// budget to decode (a 5000×5000 PNG of a few kilobytes: 400 MB of pixels
// and their copies) stops the job with ERR_LIMIT_017, and a dry run
// reports the same before anything is generated.
func TestMemoryBudgetThroughJobAndDryRun(t *testing.T) {
	s := startServer(t)
	u := s.signup("Photographer")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "Photo", map[string]any{"outputFormats": []string{"pdf"},
		"schema": json.RawMessage(`{"sections":[{"id":"b","components":[{"type":"heading","props":{"content":"Photo"}},{"type":"image","props":{"src":"{{ photo }}","width":150}}]}]}`)})
	huge := map[string]any{"photo": grayPNG(5000, 5000, 0x80)}
	if n := len(huge["photo"].(string)); n > 1<<20 {
		t.Fatalf("the image takes %d bytes to send; it should fit the 1 MB variables limit", n)
	}
	gen := map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": huge}

	d := s.must(200, "POST", "/api/v1/documents/generate?dryRun=true", key, gen)
	var dry struct {
		Valid  bool
		Errors []struct {
			Code        string
			RelatedInfo struct {
				Limit       string
				Actual, Max int64
			}
		}
		Limits struct{ MemoryBytes int64 }
	}
	if err := json.Unmarshal(d.raw, &dry); err != nil {
		t.Fatal(err)
	}
	if dry.Valid || len(dry.Errors) != 1 || dry.Errors[0].Code != "ERR_LIMIT_017" || dry.Errors[0].RelatedInfo.Limit != "memory" ||
		dry.Errors[0].RelatedInfo.Max != dry.Limits.MemoryBytes || dry.Errors[0].RelatedInfo.Actual <= dry.Limits.MemoryBytes {
		t.Fatalf("dry run = %s", d.raw)
	}

	r := s.do("POST", "/api/v1/documents/generate", key, gen)
	s.wantError(r, 400, "ERR_LIMIT_017")
	j := s.must(200, "GET", "/api/v1/documents/jobs/"+r.str("relatedInfo.jobId"), key, nil)
	if j.str("status") != "failed" || j.str("errorCode") != "ERR_LIMIT_017" || j.get("downloadUrl") != nil {
		t.Fatalf("job = %s", j.raw)
	}

	// The same template with a small photo is fine both ways.
	gen["variables"] = map[string]any{"photo": grayPNG(500, 500, 0x80)}
	if d := s.must(200, "POST", "/api/v1/documents/generate?dryRun=true", key, gen); d.str("valid") != "true" || num(d, "predicted.images") != 1 {
		t.Fatalf("small photo dry run = %s", d.raw)
	}
	if g := s.must(200, "POST", "/api/v1/documents/generate", key, gen); g.str("status") != "completed" {
		t.Fatalf("small photo = %s", g.raw)
	}
}

// A batch dry run charges no quota and sends no webhook: usage is the same
// before and after, and when a real document is generated afterwards its
// webhook is the first and only delivery.
func TestBatchDryRunChargesNothingAndSendsNoWebhook(t *testing.T) {
	rcv := startReceiver(t, false)
	s := webhookServer(t, rcv, "0s,100ms,200ms,300ms")
	u := s.verifiedUser("Batcher")
	key := s.createKey(u.token, nil)
	sub := s.must(200, "POST", "/api/v1/webhook-subscriptions", key, map[string]any{"url": rcv.url,
		"events": []string{"document.generated", "document.failed", "batch.completed", "batch.failed"}})
	tpl := s.createTemplate(u.token, "Batch dry", map[string]any{"outputFormats": []string{"pdf"},
		"schema": json.RawMessage(`{"sections":[` + pageFooter + `,{"id":"b","components":[` + itemTable + `]}]}`)})
	before := s.must(200, "GET", "/api/v1/analytics/usage", key, nil)

	docs := make([]any, 12)
	for i := range docs {
		docs[i] = map[string]any{"variables": map[string]any{"rows": rowsOf(10 + 20*i)}}
	}
	r := s.must(200, "POST", "/api/v1/documents/generate/batch?dryRun=true", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "documents": docs})
	if r.str("valid") != "true" || num(r, "predicted.pages") < 12 {
		t.Fatalf("batch dry run = %s", r.raw)
	}
	after := s.must(200, "GET", "/api/v1/analytics/usage", key, nil)
	for _, f := range []string{"documentsGenerated", "creditsUsed", "creditsRemaining"} {
		if before.str(f) != after.str(f) {
			t.Errorf("%s: %s before the batch dry run, %s after", f, before.str(f), after.str(f))
		}
	}
	if l := s.must(200, "GET", "/api/v1/documents/jobs", key, nil); l.str("meta.total") != "0" {
		t.Fatalf("a batch dry run recorded jobs: %s", l.raw)
	}

	// A real document now: its webhook must be the only one ever sent.
	g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "variables": map[string]any{"rows": rowsOf(3)}})
	if g.str("status") != "completed" {
		t.Fatalf("generate = %s", g.raw)
	}
	got := rcv.waitFor(1, 10*time.Second)
	h := s.must(200, "GET", "/api/v1/webhook-subscriptions/"+sub.str("id")+"/deliveries", key, nil)
	dels := h.get("deliveries").([]any)
	if len(got) != 1 || !strings.Contains(string(got[0].body), g.str("jobId")) || len(dels) != 1 || dels[0].(map[string]any)["event"] != "document.generated" {
		t.Fatalf("%d webhooks, deliveries %s", len(got), h.raw)
	}
	if use := s.must(200, "GET", "/api/v1/analytics/usage", key, nil); num(use, "documentsGenerated") != num(before, "documentsGenerated")+1 {
		t.Errorf("the real document should be charged once: %s", use.raw)
	}
}

// A template whose page count never settles (a page break only while the
// document has fewer than two pages) is valid, but its dry run warns.
func TestDryRunWarnsWhenPagesDoNotSettle(t *testing.T) {
	s := startServer(t)
	u := s.signup("Flipper")
	key := s.createKey(u.token, nil)
	for _, tc := range []struct {
		schema string
		warn   bool
	}{
		{`{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"A"}},{"type":"pageBreak","if":"pages < 2"},{"type":"text","props":{"content":"B"}}]}]}`, true},
		{`{"sections":[{"id":"b","components":[{"type":"text","props":{"content":"A"}},{"type":"pageBreak","if":"pages < 5"},{"type":"text","props":{"content":"B"}}]}]}`, false},
	} {
		tpl := s.createTemplate(u.token, "Flip "+strconv.FormatBool(tc.warn), map[string]any{"outputFormats": []string{"pdf"}, "schema": json.RawMessage(tc.schema)})
		d := s.must(200, "POST", "/api/v1/documents/generate?dryRun=true", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf"})
		warned := strings.Contains(string(d.raw), "the page count does not settle")
		if d.str("valid") != "true" || warned != tc.warn {
			t.Errorf("%s: dry run = %s", tc.schema, d.raw)
		}
	}
}
