package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// localeInvoice is one invoice template for every language: its schema
// says en-US, requests override it, and its words come from translations.
var localeInvoice = map[string]any{
	"name":          "World invoice",
	"outputFormats": []string{"pdf", "xlsx"},
	"schema": map[string]any{
		"locale": "en-US",
		"translations": map[string]any{
			"en": map[string]any{"invoice": "Invoice", "date": "Date", "total": "Total", "vat": "VAT"},
			"de": map[string]any{"invoice": "Rechnung", "date": "Datum", "total": "Summe", "vat": "MwSt."},
			"fr": map[string]any{"invoice": "Facture", "date": "Date", "total": "Total", "vat": "TVA"},
			"ja": map[string]any{"invoice": "請求書", "date": "日付", "total": "合計", "vat": "消費税"},
			"ar": map[string]any{"invoice": "فاتورة", "date": "التاريخ", "total": "الإجمالي", "vat": "الضريبة"},
			"pl": map[string]any{"invoice": "Faktura", "date": "Data", "total": "Razem", "vat": "VAT"},
		},
		"sections": []any{map[string]any{"id": "body", "name": "Invoice", "components": []any{
			map[string]any{"type": "heading", "props": map[string]any{"content": `{{ t("invoice") }} {{ number }}`}},
			map[string]any{"type": "text", "props": map[string]any{"content": `{{ t("date") }}: {{ formatDate(date, "long") }} / {{ formatDate(date, "full") }}`}},
			map[string]any{"type": "table", "props": map[string]any{"rows": "items", "columns": []any{
				map[string]any{"header": "Item", "value": "{{ row.name }}"},
				map[string]any{"header": "Due", "value": "{{ row.due }}", "format": "date"},
				map[string]any{"header": "Amount", "value": "{{ row.amount }}", "format": "currency:EUR"},
			}}},
			map[string]any{"type": "text", "props": map[string]any{"content": `{{ t("total") }}: {{ total | currency("EUR") }} | {{ t("vat") }} {{ formatPercent(0.19) }} | {{ formatNumber(total, 2) }} | {{ currency(total, "JPY") }}`}},
		}}},
	},
	"variables": []any{
		map[string]any{"name": "number", "type": "string", "required": true},
		map[string]any{"name": "date", "type": "date", "required": true},
		map[string]any{"name": "items", "type": "array", "required": true},
	},
	"calculatedVariables": []any{map[string]any{"name": "total", "expression": "sum(map(items, #.amount))"}},
}

var localeVars = map[string]any{"number": "2026-7", "date": "2026-11-25", "items": []any{
	map[string]any{"name": "Consulting", "due": "2026-12-24", "amount": 1234.56},
	map[string]any{"name": "Licence", "due": "2026-12-31", "amount": 1233010.94},
}}

// spaces turns the no-break spaces CLDR puts in numbers (U+00A0, U+202F)
// into plain ones, as a reader sees them.
var spaces = strings.NewReplacer("\u00a0", " ", "\u202f", " ")

func TestLocaleInvoiceThroughAPI(t *testing.T) {
	s := startServer(t)
	u := s.signup("worldbiller")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "World invoice", localeInvoice)
	if w := tpl.get("warnings"); w != nil && len(w.([]any)) > 0 {
		t.Fatalf("a complete translation table warns: %s", tpl.raw)
	}

	for _, tc := range []struct {
		locale string
		want   []string // in pdftotext's text, no-break spaces as spaces
	}{
		{"", []string{"Invoice 2026-7", "Date: November 25, 2026 / Wednesday, November 25, 2026", "Dec 24, 2026", "€1,234.56", "€1,233,010.94",
			"Total: €1,234,245.50 | VAT 19% | 1,234,245.50 | ¥1,234,246"}},
		{"de-DE", []string{"Rechnung 2026-7", "Datum: 25. November 2026 / Mittwoch, 25. November 2026", "24.12.2026", "1.234,56 €", "1.233.010,94 €",
			"Summe: 1.234.245,50 € | MwSt. 19 % | 1.234.245,50 | 1.234.246 ¥"}},
		{"fr-CH", []string{"Facture 2026-7", "Date: 25 novembre 2026 / mercredi, 25 novembre 2026", "24 déc. 2026", "1'234,56 €",
			"Total: 1'234'245,50 € | TVA 19% | 1'234'245,50 | 1'234'246 JPY"}},
		{"en-IN", []string{"Invoice 2026-7", "Date: 25 November 2026 / Wednesday, 25 November 2026", "24 Dec 2026", "€1,234.56", "€12,33,010.94",
			"Total: €12,34,245.50 | VAT 19% | 12,34,245.50 | JP¥12,34,246"}},
		{"ja-JP", []string{"請求書 2026-7", "日付: 2026年11月25日 / 2026年11月25日水曜日", "2026/12/24", "€1,234.56",
			"合計: €1,234,245.50 | 消費税 19% | 1,234,245.50 | ￥1,234,246"}},
		{"pl-PL", []string{"Faktura 2026-7", "Data: 25 listopada 2026 / środa, 25 listopada 2026", "24 gru 2026", "1234,56 €", "1 233 010,94 €",
			"Razem: 1 234 245,50 € | VAT 19% | 1 234 245,50 | 1 234 246 JPY"}},
	} {
		t.Run("pdf "+tc.locale, func(t *testing.T) {
			g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{
				"templateId": tpl.str("id"), "format": "pdf", "locale": tc.locale, "variables": localeVars})
			_, _, pdf := s.download(g.str("downloadUrl"))
			text := spaces.Replace(pdfText(t, pdf))
			for _, want := range tc.want {
				if !strings.Contains(text, want) {
					t.Errorf("%s: PDF text lacks %q:\n%s", tc.locale, want, text)
				}
			}
		})
	}

	// Egyptian Arabic writes Arabic-Indic digits (CLDR's default numbering
	// system for ar-EG). The PDF text layer carries them; which order a
	// reader extracts mixed right-to-left runs in is the text path's work,
	// so the check is on runs that read the same either way.
	t.Run("pdf ar-EG", func(t *testing.T) {
		g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{
			"templateId": tpl.str("id"), "format": "pdf", "locale": "ar-EG", "variables": localeVars})
		_, _, pdf := s.download(g.str("downloadUrl"))
		text := pdfText(t, pdf)
		// The percent sign sits left of the digits on the page; pdftotext
		// gives the number and its sign in either order.
		for _, want := range []string{"٢٠٢٦", "١٬٢٣٤٫٥٦", "١٬٢٣٣٬٠١٠٫٩٤", "١٩٪"} {
			if !strings.Contains(text, want) && !(want == "١٩٪" && strings.Contains(text, "٪١٩")) {
				t.Errorf("ar-EG: PDF text lacks %q:\n%s", want, text)
			}
		}
		// Words: in logical order once the text path reorders runs, in
		// visual order (letters reversed) before.
		for _, word := range []string{"فاتورة", "نوفمبر", "الأربعاء"} {
			if !strings.Contains(text, word) && !strings.Contains(text, reverse(word)) {
				t.Errorf("ar-EG: PDF text lacks %q:\n%s", word, text)
			}
		}
		if strings.Contains(text, "1,234.56") || strings.Contains(text, "November") || strings.Contains(text, "/2026") {
			t.Errorf("ar-EG shows Latin digits or English names:\n%s", text)
		}
	})

	// An async job and a batch carry their locale to the worker.
	t.Run("async and batch de-DE", func(t *testing.T) {
		a := s.must(200, "POST", "/api/v1/documents/generate?async=true", key, map[string]any{
			"templateId": tpl.str("id"), "format": "pdf", "locale": "de-DE", "variables": localeVars})
		b := s.must(200, "POST", "/api/v1/documents/generate/batch", key, map[string]any{
			"templateId": tpl.str("id"), "format": "pdf", "locale": "de-DE", "documents": []any{map[string]any{"variables": localeVars}}})
		jobs := []string{a.str("jobId")}
		batch := s.must(200, "GET", "/api/v1/documents/batches/"+b.str("batchId"), key, nil)
		for _, d := range batch.get("documents").([]any) {
			jobs = append(jobs, d.(map[string]any)["jobId"].(string))
		}
		for _, id := range jobs {
			j := s.waitJob(key, id)
			_, _, pdf := s.download(j.str("downloadUrl"))
			if text := spaces.Replace(pdfText(t, pdf)); !strings.Contains(text, "Summe: 1.234.245,50 €") {
				t.Errorf("job %s is not in German:\n%s", id, text)
			}
		}
	})

	// A workbook keeps numbers and dates typed; its number formats carry the
	// locale's currency symbol and placement and date patterns.
	for _, tc := range []struct {
		locale, money, date string
	}{
		{"", `"€"#,##0.00;-"€"#,##0.00`, `[$-409]mmm d, yyyy`},
		{"de-DE", "#,##0.00\"\u00a0€\";-#,##0.00\"\u00a0€\"", `dd.mm.yyyy`},
		{"fr-CH", "#,##0.00\"\u00a0€\";-#,##0.00\"\u00a0€\"", `[$-100C]d mmm yyyy`},
		{"ja-JP", `"€"#,##0.00;-"€"#,##0.00`, `yyyy/mm/dd`},
		{"pl-PL", "#,##0.00\"\u00a0€\";-#,##0.00\"\u00a0€\"", `[$-415]d mmm yyyy`},
	} {
		t.Run("xlsx "+tc.locale, func(t *testing.T) {
			g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{
				"templateId": tpl.str("id"), "format": "xlsx", "locale": tc.locale, "variables": localeVars})
			_, _, data := s.download(g.str("downloadUrl"))
			f, err := excelize.OpenReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sheet := f.GetSheetList()[0]
			amount, due := findCell(t, f, sheet, "1234.56"), findCell(t, f, sheet, "46380")
			if typ, _ := f.GetCellType(sheet, amount); typ != excelize.CellTypeNumber && typ != excelize.CellTypeUnset {
				t.Errorf("amount cell %s is %v, not a number", amount, typ)
			}
			if got := numFmt(t, f, sheet, amount); got != tc.money {
				t.Errorf("amount format = %q, want %q", got, tc.money)
			}
			if got := numFmt(t, f, sheet, due); got != tc.date {
				t.Errorf("date format = %q, want %q", got, tc.date)
			}
		})
	}

	// A JPY column has no minor unit in any locale.
	t.Run("xlsx JPY", func(t *testing.T) {
		def := map[string]any{"template": map[string]any{"schema": map[string]any{"locale": "ja-JP", "sections": []any{map[string]any{"id": "b", "components": []any{
			map[string]any{"type": "table", "props": map[string]any{"rows": "items", "columns": []any{
				map[string]any{"header": "Amount", "value": "{{ row.amount }}", "format": "currency:JPY"}}}}}}}}},
			"format": "xlsx", "variables": map[string]any{"items": []any{map[string]any{"amount": 1234.5}}}}
		r := s.must(200, "POST", "/api/templates/preview", u.token, def)
		f, err := excelize.OpenReader(bytes.NewReader(r.raw))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		sheet := f.GetSheetList()[0]
		ref := findCell(t, f, sheet, "1235")
		if got, want := numFmt(t, f, sheet, ref), `"￥"#,##0;-"￥"#,##0`; got != want {
			t.Errorf("JPY format = %q, want %q", got, want)
		}
	})
}

func TestLocaleRequestErrorsAndWarnings(t *testing.T) {
	s := startServer(t)
	u := s.signup("localechecker")
	key := s.createKey(u.token, nil)
	tpl := s.createTemplate(u.token, "World invoice", localeInvoice)

	// A malformed or unknown override is the request's error, naming the field.
	for _, bad := range []string{"not a locale", "xx-YY", "tlh"} {
		r := s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "locale": bad, "variables": localeVars})
		s.wantError(r, 400, "ERR_VALID_003")
		if r.str("relatedInfo.field") != "locale" {
			t.Errorf("%q: error %s", bad, r.raw)
		}
	}
	s.wantError(s.do("POST", "/api/v1/documents/generate/batch", key, map[string]any{"templateId": tpl.str("id"), "format": "pdf", "locale": "de_DE_x",
		"documents": []any{map[string]any{"variables": localeVars}}}), 400, "ERR_VALID_003")
	s.wantError(s.do("POST", "/api/templates/"+tpl.str("id")+"/preview", u.token, map[string]any{"locale": "??", "variables": localeVars}), 400, "ERR_VALID_003")

	// A schema locale is checked when the template is saved, with its path.
	bad := map[string]any{"name": "Bad", "outputFormats": []string{"pdf"}, "schema": map[string]any{"locale": "de-DE-x-", "sections": []any{map[string]any{"id": "b", "components": []any{}}}}}
	r := s.do("POST", "/api/templates", u.token, bad)
	s.wantError(r, 400, "ERR_TMPL_008")
	if !strings.Contains(string(r.raw), "schema.locale") {
		t.Errorf("schema locale error lacks its path: %s", r.raw)
	}

	// Missing translations are warnings with paths on save and in a dry run.
	partial := map[string]any{"name": "Partial", "outputFormats": []string{"pdf"}, "schema": map[string]any{
		"translations": map[string]any{"en": map[string]any{"hello": "Hello"}, "de": map[string]any{}},
		"sections": []any{map[string]any{"id": "b", "components": []any{
			map[string]any{"type": "text", "props": map[string]any{"content": `{{ t("hello") }} {{ t("bye") }}`}}}}}}}
	saved := s.must(200, "POST", "/api/templates", u.token, partial)
	warnings := mustJSON(t, saved.get("warnings"))
	for _, want := range []string{`schema.sections[0].components[0].props.content`, `translation \"bye\" is missing`, `translation \"hello\" is missing in \"de\"`} {
		if !strings.Contains(warnings, want) {
			t.Errorf("save warnings lack %s: %s", want, warnings)
		}
	}
	dry := s.must(200, "POST", "/api/v1/documents/generate?dryRun=true", key, map[string]any{"templateId": saved.str("id"), "format": "pdf", "locale": "de-CH", "variables": map[string]any{}})
	if w := mustJSON(t, dry.get("warnings")); !strings.Contains(w, `translation \"bye\" is missing`) {
		t.Errorf("dry run warnings: %s", dry.raw)
	}
	// de-CH falls back to de, then to the template's language (en), then the key.
	g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": saved.str("id"), "format": "pdf", "locale": "de-CH", "variables": map[string]any{}})
	_, _, pdf := s.download(g.str("downloadUrl"))
	if text := pdfText(t, pdf); !strings.Contains(text, "Hello bye") {
		t.Errorf("fallback text: %q", text)
	}
}

// findCell returns the first cell whose raw value is v.
func findCell(t *testing.T, f *excelize.File, sheet, v string) string {
	t.Helper()
	rows, err := f.GetRows(sheet, excelize.Options{RawCellValue: true})
	if err != nil {
		t.Fatal(err)
	}
	for r, row := range rows {
		for c, cell := range row {
			if cell == v {
				ref, _ := excelize.CoordinatesToCellName(c+1, r+1)
				return ref
			}
		}
	}
	t.Fatalf("no cell holds %s: %v", v, rows)
	return ""
}

// numFmt returns a cell's custom number format.
func numFmt(t *testing.T, f *excelize.File, sheet, ref string) string {
	t.Helper()
	id, err := f.GetCellStyle(sheet, ref)
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.GetStyle(id)
	if err != nil || st.CustomNumFmt == nil {
		return ""
	}
	return *st.CustomNumFmt
}

func reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}
