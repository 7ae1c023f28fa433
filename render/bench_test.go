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
				{"type":"text","each":"items","as":"line","props":{"content":"{{ index + 1 }}. {{ line.description }}: {{ line.qty }} × {{ line.price | currency(\"EUR\") }} = {{ line.qty * line.price | currency(\"EUR\") }}"}},
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
	assertLinesInOrder(t, ExtractText(t, pdf), []string{
		"Folio GmbH · Hauptstraße 1, 50667 Köln", "Invoice 2024-0042", "Date: 01.03.2024", "Ωμέγα Trading", "Тверская 1", "125009 Москва",
		"20. Consulting, work package 20 — Grüße: 5 × €95.50 = €477.50", "Subtotal: €5,730.00", "VAT 19%: €1,088.70", "Total: €6,818.70",
		"Thank you for your business.", "Page 1 of 1",
	})
}

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
