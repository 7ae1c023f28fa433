package render

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

// invoiceDefinition is a realistic one-to-two page invoice.
func invoiceDefinition() Definition {
	return Definition{
		Schema: json.RawMessage(`{"format":"pdf","pageSize":"A4","sections":[
			{"id":"header","role":"header","components":[
				{"type":"text","props":{"content":"{{ company }} · {{ companyAddress }}","style":{"align":"right","fontSize":9,"color":"#555555"}}}]},
			{"id":"footer","role":"footer","components":[
				{"type":"text","props":{"content":"Page {{page}} of {{pages}}","style":{"align":"center","fontSize":9}}}]},
			{"id":"body","components":[
				{"type":"heading","props":{"content":"Invoice {{ number }}","level":1}},
				{"type":"text","props":{"content":"Date: {{ issued | formatDate(\"DD.MM.YYYY\") }}\nDue: {{ due | formatDate(\"DD.MM.YYYY\") }}"}},
				{"type":"heading","props":{"content":"Bill to","level":3}},
				{"type":"text","props":{"content":"{{ customer.name }}\n{{ customer.address.street }}\n{{ customer.address.zip }} {{ customer.address.city }}"}},
				{"type":"heading","props":{"content":"Items","level":2}},
				{"type":"table","props":{"rows":"items","as":"line","columns":[
					{"header":"#","value":"{{ rowIndex + 1 }}","width":10},
					{"header":"Description","value":"{{ line.description }}"},
					{"header":"Qty","value":"{{ line.qty }}","format":"number","width":15},
					{"header":"Price","value":"{{ line.price }}","format":"currency:EUR","width":25},
					{"header":"Amount","value":"{{ line.qty * line.price }}","format":"currency:EUR","width":28}]}},
				{"type":"text","props":{"content":"Subtotal: {{ subtotal | currency(\"EUR\") }}","style":{"align":"right"}}},
				{"type":"text","props":{"content":"VAT {{ vatRate * 100 }}%: {{ vat | currency(\"EUR\") }}","style":{"align":"right"}}},
				{"type":"text","props":{"content":"Total: {{ total | currency(\"EUR\") }}","style":{"align":"right","bold":true}}},
				{"type":"text","if":"notes != \"\"","props":{"content":"{{ notes }}","style":{"italic":true,"fontSize":9}}}]}]}`),
		Variables: []Variable{
			{Name: "number", Type: "string", Required: true},
			{Name: "issued", Type: "date", Required: true},
			{Name: "due", Type: "date", Required: true},
			{Name: "customer", Type: "object", Required: true},
			{Name: "items", Type: "array", Required: true},
			{Name: "notes", Type: "string", DefaultValue: ""},
		},
		Constants: map[string]any{"company": "Folio GmbH", "companyAddress": "Hauptstraße 1, 50667 Köln", "vatRate": 0.19},
		CalculatedVariables: []CalculatedVariable{
			{Name: "subtotal", Expression: "sum(map(items, #.qty * #.price))"},
			{Name: "vat", Expression: "subtotal * vatRate"},
			{Name: "total", Expression: "subtotal + vat"},
		},
	}
}

func invoiceInput(lines int) map[string]any {
	items := make([]any, lines)
	for i := range items {
		items[i] = map[string]any{"description": fmt.Sprintf("Consulting, work package %d — Grüße", i+1), "qty": float64(i%5 + 1), "price": 95.5}
	}
	return map[string]any{
		"number": "2024-0042", "issued": "2024-03-01", "due": "2024-03-31",
		"customer": map[string]any{"name": "Ωμέγα Trading", "address": map[string]any{"street": "Тверская 1", "zip": "125009", "city": "Москва"}},
		"items":    items,
		"notes":    "Thank you for your business.",
	}
}

func TestInvoiceRenders(t *testing.T) {
	pdf := MustRender(t, MustCompile(t, invoiceDefinition()), invoiceInput(20), Options{})
	if n := PageCount(t, pdf); n != 1 {
		t.Errorf("pages = %d, want a one-page invoice", n)
	}
	assertLinesInOrder(t, PDFPages(t, pdf), []string{
		"Folio GmbH · Hauptstraße 1, 50667 Köln", "Invoice 2024-0042", "Date: 01.03.2024", "Ωμέγα Trading", "Тверская 1", "125009 Москва",
		"# Description Qty Price Amount", "20 Consulting, work package 20 — Grüße 5 €95.50 €477.50", "Subtotal: €5,730.00", "VAT 19%: €1,088.70", "Total: €6,818.70",
		"Thank you for your business.", "Page 1 of 1",
	})
}

// BenchmarkRenderInvoicePDF renders the one-page Unicode invoice with a
// 20-row table, Values included.
func BenchmarkRenderInvoicePDF(b *testing.B) {
	tpl := MustCompile(b, invoiceDefinition())
	input := invoiceInput(20)
	b.ReportAllocs()
	var buf bytes.Buffer
	for b.Loop() {
		values, err := tpl.Values(input)
		if err != nil {
			b.Fatal(err)
		}
		buf.Reset()
		if _, err := tpl.Render(context.Background(), &buf, PDF, values, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "bytes/doc")
}

// BenchmarkRenderInvoicePDFNewGlyphs renders the invoice of
// BenchmarkRenderInvoicePDF with letters that change in every document, in
// each of its three font styles, so that every document needs font subsets
// not made before: the cost when the per-font subset cache misses.
func BenchmarkRenderInvoicePDFNewGlyphs(b *testing.B) {
	tpl := MustCompile(b, invoiceDefinition())
	input := invoiceInput(20)
	letters := []rune("БГДЖЗИЙЛПФЦЧШЩЪЫЬЭЮЯбвгдежзийклмнпстуфхцчшщъыьэюя") // 54
	b.ReportAllocs()
	var buf bytes.Buffer
	i := 0
	for b.Loop() {
		// 54 × 53 pairs: far more than the cache holds.
		odd := string([]rune{letters[i%len(letters)], letters[(i/len(letters)+1+i)%len(letters)]})
		i++
		input["number"] = "2024-" + odd                              // heading: bold
		input["customer"].(map[string]any)["name"] = "Ωμέγα " + odd  // regular
		input["notes"] = "Thank you for your business, " + odd + "." // italic
		values, err := tpl.Values(input)
		if err != nil {
			b.Fatal(err)
		}
		buf.Reset()
		if _, err := tpl.Render(context.Background(), &buf, PDF, values, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "bytes/doc")
}

func BenchmarkCompileInvoice(b *testing.B) {
	e := MustEngine(b)
	def := invoiceDefinition()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Compile(def); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderExampleInvoicePDF renders testdata/templates/invoice.json
// (logo, QR code, barcode, columns) with 20 line items.
func BenchmarkRenderExampleInvoicePDF(b *testing.B) {
	ex, input := LoadExample(b, "invoice")
	items := input["items"].([]any)
	for len(items) < 20 {
		items = append(items, items[len(items)%5])
	}
	input["items"] = items
	benchmarkRender(b, MustCompile(b, ex.Definition), input, PDF)
}

// reportDefinition is a report that fills 30 pages: a heading, text and a
// long table under a header and a footer with page numbers.
func reportDefinition() Definition {
	return Definition{Schema: json.RawMessage(`{"sections":[
		{"id":"h","role":"header","components":[{"type":"text","props":{"content":"Folio · Quarterly report","style":{"align":"right","fontSize":8}}}]},
		{"id":"f","role":"footer","components":[{"type":"text","props":{"content":"Page {{page}} of {{pages}}","style":{"align":"center","fontSize":8}}}]},
		{"id":"b","components":[
			{"type":"heading","props":{"content":"Quarterly report — Übersicht, Ωμέγα, Отчёт"}},
			{"type":"keyValue","props":{"items":[{"label":"Rows","value":"{{ len(rows) }}"},{"label":"Total","value":"{{ sum(map(rows, #.amount)) }}","format":"currency:EUR"}]}},
			{"type":"table","props":{"rows":"rows","columns":[
				{"header":"No.","value":"{{ row.n }}","width":14},
				{"header":"Date","value":"{{ row.date }}","format":"date:DD.MM.YYYY","width":24},
				{"header":"Customer","value":"{{ row.customer }}"},
				{"header":"Status","value":"{{ row.paid ? \"paid\" : \"open\" }}","width":16},
				{"header":"Amount","value":"{{ row.amount }}","format":"currency:EUR","width":28}]}}]}]}`)}
}

func reportInput(rows int) map[string]any {
	list := make([]any, rows)
	names := []string{"Müller & Söhne", "Ωμέγα Trading", "Иванов и партнёры", "ACME Ltd"}
	for i := range list {
		list[i] = map[string]any{"n": i + 1, "date": fmt.Sprintf("2026-%02d-%02d", i%12+1, i%28+1),
			"customer": names[i%len(names)], "paid": i%3 == 0, "amount": float64(i%97) * 13.7}
	}
	return map[string]any{"rows": list}
}

// reportRows fills exactly 30 pages.
const reportRows = 1130

func TestReportFillsThirtyPages(t *testing.T) {
	pdf := MustRender(t, MustCompile(t, reportDefinition()), reportInput(reportRows), Options{})
	if n := PageCount(t, pdf); n != 30 {
		t.Errorf("pages = %d, want 30", n)
	}
}

// BenchmarkRenderReport30Pages renders a 30-page report (the page limit).
func BenchmarkRenderReport30Pages(b *testing.B) {
	benchmarkRender(b, MustCompile(b, reportDefinition()), reportInput(reportRows), PDF)
}

// exportDefinition is a one-table workbook: a header row and ten typed columns.
func exportDefinition() Definition {
	return Definition{Schema: json.RawMessage(`{"format":"xlsx","sections":[{"id":"export","name":"Orders","components":[
		{"type":"table","props":{"rows":"rows","columns":[
			{"header":"Id","value":"{{ row.id }}"},
			{"header":"Date","value":"{{ row.date }}"},
			{"header":"Customer","value":"{{ row.customer }}"},
			{"header":"Country","value":"{{ row.country }}"},
			{"header":"Items","value":"{{ row.items }}"},
			{"header":"Net","value":"{{ row.net }}","format":"currency:EUR"},
			{"header":"VAT","value":"{{ row.vat }}","format":"percent"},
			{"header":"Gross","value":"{{ row.net * (1 + row.vat) }}","format":"number:2"},
			{"header":"Paid","value":"{{ row.paid }}"},
			{"header":"Note","value":"{{ row.note }}"}]}}]}]}`)}
}

func exportInput(rows int) map[string]any {
	list := make([]any, rows)
	for i := range list {
		list[i] = map[string]any{"id": fmt.Sprintf("ORD-%06d", i+1), "date": fmt.Sprintf("2026-%02d-%02d", i%12+1, i%28+1),
			"customer": fmt.Sprintf("Customer %d — Grüße", i%500), "country": []string{"DE", "GR", "RU", "FR"}[i%4],
			"items": i%9 + 1, "net": float64(i%1000) * 1.25, "vat": 0.19, "paid": i%2 == 0, "note": "ok"}
	}
	return map[string]any{"rows": list}
}

// BenchmarkRenderXLSX10000Rows renders the largest workbook allowed:
// 10,000 rows (a header and 9,999 rows) of 10 columns.
func BenchmarkRenderXLSX10000Rows(b *testing.B) {
	benchmarkRender(b, MustCompile(b, exportDefinition()), exportInput(9999), XLSX)
}

func TestExportFillsTheRowLimit(t *testing.T) {
	if raceEnabled {
		// One goroutine rendering 10,000 rows; the row limit is the same
		// with the race detector.
		t.Skip("renders 10,000 rows in one goroutine; run without -race")
	}
	_, stats := MustRenderFormat(t, MustCompile(t, exportDefinition()), exportInput(9999), XLSX, Options{})
	if stats.Rows != 10000 {
		t.Errorf("rows = %d, want 10000", stats.Rows)
	}
}

func benchmarkRender(b *testing.B, tpl *Template, input map[string]any, format Format) {
	b.ReportAllocs()
	var buf bytes.Buffer
	for b.Loop() {
		values, err := tpl.Values(input)
		if err != nil {
			b.Fatal(err)
		}
		buf.Reset()
		if _, err := tpl.Render(context.Background(), &buf, format, values, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "bytes/doc")
}

// markdownPage is about one A4 page of Markdown from a value: headings,
// a paragraph with every inline style and links, nested lists, a quote,
// a code block and a table.
func markdownPage() string {
	var b bytes.Buffer
	for i := 1; i <= 2; i++ {
		fmt.Fprintf(&b, "## Section %d\n\nSales grew **%d %%** in *March* — see [the dashboard](https://example.com/d/%d), ~~old figures~~ and `total()`; write to <ops@example.com>. ", i, 10+i, i)
		b.WriteString("The text goes on long enough to wrap over several lines of the page, as reports do, with words of every length.\n\n")
		b.WriteString("- First point\n- Second point, longer, so that it wraps onto a second line under its own marker\n  1. nested one\n  2. nested two\n- Third\n\n")
		b.WriteString("> A quoted remark from the customer.\n\n```\nfunc total(xs []float64) (t float64) {\n\tfor _, x := range xs { t += x }\n\treturn\n}\n```\n\n")
		b.WriteString("| Region | Sales | Share |\n|:--|--:|:-:|\n| North | 1 200 | 40 % |\n| South | **900** | 30 % |\n| East | 600 | 20 % |\n\n")
	}
	return b.String()
}

// BenchmarkRenderMarkdownPDF renders a page of Markdown that arrives in a
// value (parsed at every render), with a table of contents before it: the
// contents make the layout run until the page numbers agree (three
// passes here).
func BenchmarkRenderMarkdownPDF(b *testing.B) {
	tpl := MustCompile(b, Definition{Schema: json.RawMessage(`{"sections":[{"id":"b","components":[
		{"type":"toc","props":{"title":"Contents"}},
		{"type":"markdown","props":{"content":"# Monthly report\n\n{{ body }}"}}]}]}`),
		Variables: []Variable{{Name: "body", Type: "string"}}})
	input := map[string]any{"body": markdownPage()}
	b.ReportAllocs()
	var buf bytes.Buffer
	var pages int
	for b.Loop() {
		values, err := tpl.Values(input)
		if err != nil {
			b.Fatal(err)
		}
		buf.Reset()
		st, err := tpl.Render(context.Background(), &buf, PDF, values, Options{})
		if err != nil {
			b.Fatal(err)
		}
		pages = st.Pages
	}
	b.ReportMetric(float64(buf.Len()), "bytes/doc")
	b.ReportMetric(float64(pages), "pages")
}

// BenchmarkRenderChartReport renders the chart golden case (nine charts of
// every type on two pages, German locale) and the monthly report example
// (three charts over three pages): the cost of chart-heavy report pages,
// as a PDF and as a workbook with native charts.
func BenchmarkRenderChartReport(b *testing.B) {
	def, input := LoadCase(b, "testdata/chart")
	charts := MustCompile(b, def)
	ex, report := LoadExample(b, "monthly-report")
	monthly := MustCompile(b, ex.Definition)
	for _, c := range []struct {
		name   string
		tpl    *Template
		input  map[string]any
		format Format
	}{
		{"charts/pdf", charts, input, PDF}, {"charts/xlsx", charts, input, XLSX},
		{"monthly-report/pdf", monthly, report, PDF}, {"monthly-report/xlsx", monthly, report, XLSX},
	} {
		b.Run(c.name, func(b *testing.B) { benchmarkRender(b, c.tpl, c.input, c.format) })
	}
}

// BenchmarkRenderInvoicePDFBusiness renders the invoice of
// BenchmarkRenderInvoicePDF with each business PDF option alone, so each
// one's cost per document is its time minus the "none" case's
// (docs/performance.md, Business PDF options).
func BenchmarkRenderInvoicePDFBusiness(b *testing.B) {
	tpl := MustCompile(b, invoiceDefinition())
	input := invoiceInput(20)
	for _, bc := range []struct {
		name string
		req  PDFRequest
	}{
		{"none", PDFRequest{}},
		{"metadata", PDFRequest{DocumentMetadata: json.RawMessage(`{"title":"Invoice 2024-0042","author":"Folio GmbH","subject":"Invoice","keywords":"invoice","language":"de-DE"}`)}},
		{"pdfa-3b", PDFRequest{PDFA: json.RawMessage(`"3b"`)}},
		{"watermark", PDFRequest{Watermark: json.RawMessage(`{"text":"COPY"}`)}},
		{"encrypt", PDFRequest{Encrypt: json.RawMessage(`{"userPassword":"secret","ownerPassword":"owner","permissions":["print"]}`)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			o, err := ParsePDFOptions(bc.req)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			var buf bytes.Buffer
			for b.Loop() {
				values, err := tpl.Values(input)
				if err != nil {
					b.Fatal(err)
				}
				buf.Reset()
				if _, err := tpl.Render(context.Background(), &buf, PDF, values, Options{PDF: o}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(buf.Len()), "bytes/doc")
		})
	}
}

// BenchmarkRenderEInvoice renders the example e-invoice (3 lines, one
// allowance) without an e-invoice, as Factur-X (PDF/A-3 with the XML
// inside), and as XRechnung and UBL XML alone: the cost of computing,
// checking and writing the e-invoice per document.
func BenchmarkRenderEInvoice(b *testing.B) {
	ex, input := LoadExample(b, "einvoice")
	tpl := MustCompile(b, ex.Definition)
	for _, bc := range []struct {
		name   string
		format Format
		req    string
	}{
		{"pdf-without-einvoice", PDF, `{"einvoice":false}`},
		{"pdf-pdfa-3b-without-einvoice", PDF, `{"einvoice":false,"pdfa":"3b"}`},
		{"factur-x-en16931", PDF, `{}`},
		{"xrechnung-cii-xml", XML, `{"einvoice":{"profile":"xrechnung-cii"}}`},
		{"ubl-xml", XML, `{"einvoice":{"profile":"ubl"}}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			o := mustPDFOptions(b, bc.req)
			b.ReportAllocs()
			var buf bytes.Buffer
			for b.Loop() {
				values, err := tpl.Values(input)
				if err != nil {
					b.Fatal(err)
				}
				buf.Reset()
				if _, err := tpl.Render(context.Background(), &buf, bc.format, values, Options{PDF: o}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(buf.Len()), "bytes/doc")
		})
	}
}
