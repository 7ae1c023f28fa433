package render

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// exampleTemplate is the body of POST /api/templates, as the example files hold it.
type exampleTemplate struct {
	Name          string   `json:"name"`
	Description   string   `json:"description"`
	TemplateType  string   `json:"templateType"`
	OutputFormats []string `json:"outputFormats"`
	Definition
}

// LoadExample reads ../testdata/templates/<name>.json and <name>.vars.json.
func LoadExample(tb testing.TB, name string) (exampleTemplate, map[string]any) {
	tb.Helper()
	dir := filepath.Join("..", "testdata", "templates")
	raw, err := os.ReadFile(filepath.Join(dir, name+".json"))
	if err != nil {
		tb.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var ex exampleTemplate
	if err := dec.Decode(&ex); err != nil {
		tb.Fatalf("%s.json: %v", name, err)
	}
	if ex.Name == "" || len(ex.OutputFormats) == 0 || len(ex.Schema) == 0 {
		tb.Fatalf("%s.json lacks name, outputFormats or schema", name)
	}
	var input map[string]any
	MustReadJSON(tb, filepath.Join(dir, name+".vars.json"), &input)
	return ex, input
}

func TestExampleTemplates(t *testing.T) {
	tests := []struct {
		name      string
		pages     int
		wantPDF   []string // lines, in order
		wantSheet map[string][]string
	}{
		{
			name:  "invoice",
			pages: 1,
			wantPDF: []string{
				"Folio Demo GmbH", "Invoice INV-2026-0042", "Bill to Invoice number INV-2026-0042",
				"Ωμέγα Trading Ltd. Invoice date 02.11.2026", "Тверская ул. 1 Due date 02.12.2026", "RUSSIA",
				"# Description Qty Unit price Amount",
				"3 Developer support (hours) 6.5 €95.00 €617.50",
				"4 Grüße-Paket: Übersetzung der Vorlagen (DE/EL/RU) 1 €380.00 €380.00",
				"Subtotal €2,966.50", "VAT 19% €563.64", "Total due €3,530.14",
				"Thank you for your business. Payment within 30 days without deduction.",
				"INV-2026-0042",
				"Folio Demo GmbH · IBAN DE89 3704 0044 0532 0130 00 · BIC COBADEFFXXX · Page 1 of 1",
			},
			wantSheet: map[string][]string{"Invoice": {"Invoice INV-2026-0042", "Total due", "3530.14"}},
		},
		{
			name:  "monthly-report",
			pages: 3,
			wantPDF: []string{
				"Folio Demo GmbH · Sales report November 2026", "Sales report November 2026",
				"Change on last month 7.0%",
				"November was driven by the Growth plan launch and strong demand in the DACH region",
				"(regional figures). Refunds stayed below 3 % of revenue.",
				"Region Orders Revenue Share", "DACH 1,012 €48,210.50 52.6%", "Ελλάδα 141 €6,120.75 6.7%",
				"Confidential · Page 1 of 3",
				"Daily sales", "Date Orders Revenue Refunds Net", "Sun 01.11. 81 €4,754.43 €93.86 €4,660.57",
				"Top products", "1 FOL-002 Growth plan 160 €23,840.00", "Confidential · Page 3 of 3",
			},
			wantSheet: map[string][]string{
				"Summary":      {"Revenue by region", "DACH"},
				"Daily sales":  {"Daily sales", "Net revenue"},
				"Top products": {"Growth plan"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex, input := LoadExample(t, tt.name)
			tpl := MustCompile(t, ex.Definition)
			pdf, stats := MustRenderFormat(t, tpl, input, PDF, Options{})
			if stats.Pages != tt.pages {
				t.Errorf("pages = %d, want %d", stats.Pages, tt.pages)
			}
			text := PDFPages(t, pdf)
			assertLinesInOrder(t, text, tt.wantPDF)
			xlsx, stats := MustRenderFormat(t, tpl, input, XLSX, Options{})
			if stats.Sheets != len(tt.wantSheet) {
				t.Errorf("sheets = %d, want %d", stats.Sheets, len(tt.wantSheet))
			}
			dump := DumpXLSX(t, xlsx)
			for sheet, wants := range tt.wantSheet {
				if !strings.Contains(dump, "sheet \""+sheet+"\"") {
					t.Errorf("no sheet %q in\n%s", sheet, clip(dump, 3000))
				}
				for _, w := range wants {
					if !strings.Contains(dump, w) {
						t.Errorf("sheet %q lacks %q", sheet, w)
					}
				}
			}
		})
	}
}

// TestDocumentedHelperExamples keeps the helper table of docs/templates.md true.
func TestDocumentedHelperExamples(t *testing.T) {
	values := map[string]any{
		"issueDate": "2026-03-01", "month": "2026-11-01", "d": "2026-11-01", "country": "Germany",
		"name": "Zoë", "nickname": "", "tags": []any{"a", "b", "c"}, "iban": "DE89 3704 0044 0532 0130 00",
	}
	tests := map[string]string{
		`{{ 1234.5 | currency("EUR") }}`: "€1,234.50",
		`{{ 9 | currency("CHF") }} · {{ 1500 | currency("JPY") }} · {{ -3 | currency("USD") }}`: "9.00 CHF · ¥1,500 · -$3.00",
		`{{ 1234567.891 | formatNumber(2) }} · {{ formatNumber(1234.56) }}`:                     "1,234,567.89 · 1,235",
		`{{ issueDate | formatDate("DD.MM.YYYY") }}`:                                            "01.03.2026",
		`{{ month | formatDate("MMMM YYYY") }} · {{ d | formatDate("ddd D MMM") }}`:             "November 2026 · Sun 1 Nov",
		`{{ d | formatDate("2 January 2006") }}`:                                                "1 November 2026",
		`{{ country | upper }}`:                                                                 "GERMANY",
		`{{ nickname | default(name) }}`:                                                        "Zoë",
		`{{ tags | join(" · ") }}`:                                                              "a · b · c",
		`{{ iban | replace(" ", "") }}`:                                                         "DE89370400440532013000",
		`{{ 0.1 + 0.2 }} {{ "vip" in tags }} {{ missing ?? "none" }}`:                           "0.3 false none",
		`{{ 0.19 | formatPercent }} · {{ formatPercent(0.075, 1) }}`:                            "19% · 7.5%",
		`{{ issueDate | formatDate("long") }} · {{ issueDate | formatDate("full") }}`:           "March 1, 2026 · Sunday, March 1, 2026",
		`{{ t("invoice") }}`:                                                                    "invoice",
	}
	for content, want := range tests {
		if got, err := renderText(t, content, values); err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", content, got, err, want)
		}
	}
}

func TestExamplesRenderConcurrently(t *testing.T) {
	for _, name := range []string{"invoice", "monthly-report"} {
		ex, input := LoadExample(t, name)
		tpl := MustCompile(t, ex.Definition)
		for _, format := range []Format{PDF, XLSX} {
			want, _ := MustRenderFormat(t, tpl, input, format, Options{})
			done := make(chan []byte)
			for range 3 {
				go func() {
					values, err := tpl.Values(input)
					if err != nil {
						t.Error(err)
					}
					var buf bytes.Buffer
					if _, err := tpl.Render(t.Context(), &buf, format, values, Options{}); err != nil {
						t.Error(err)
					}
					done <- buf.Bytes()
				}()
			}
			for range 3 {
				if got := <-done; !bytes.Equal(got, want) {
					t.Errorf("%s %s: a concurrent render differs", name, format)
				}
			}
		}
	}
}
