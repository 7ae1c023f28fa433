package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEInvoiceThroughAPI generates the example e-invoice over HTTP: a
// Factur-X PDF (sync generate) with factur-x.xml inside, an XRechnung
// and a UBL invoice as format xml (async, downloaded), a wrong invoice
// refused with ERR_EINVOICE_001 naming the rule and the field (generate,
// dry run, preview), and the options Factur-X cannot be combined with.
func TestEInvoiceThroughAPI(t *testing.T) {
	s := startServer(t)
	u := s.signup("Biller")
	key := s.createKey(u.token, nil)
	var tpl, vars map[string]any
	readJSON(t, filepath.Join("testdata", "templates", "einvoice.json"), &tpl)
	readJSON(t, filepath.Join("testdata", "templates", "einvoice.vars.json"), &vars)
	created := s.must(200, "POST", "/api/templates", u.token, tpl)
	if w, _ := created.get("warnings").([]any); len(w) != 0 {
		t.Errorf("the example has warnings: %v", w)
	}
	id := created.str("id")

	t.Run("Factur-X, sync", func(t *testing.T) {
		g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "pdf", "variables": vars})
		_, h, pdf := s.download(g.str("downloadUrl"))
		if ct := h.Get("Content-Type"); ct != "application/pdf" {
			t.Errorf("Content-Type %q", ct)
		}
		if v := pdfaViolations(t, pdf, "3", "B"); v != "" {
			t.Errorf("PDF/A-3b violations:\n%s", v)
		}
		list, _ := poppler(t, pdf, "pdfdetach", "-list")
		if !strings.Contains(list, "1: factur-x.xml") {
			t.Fatalf("pdfdetach -list:\n%s", list)
		}
		path := filepath.Join(t.TempDir(), "doc.pdf")
		os.WriteFile(path, pdf, 0o600)
		out := filepath.Join(t.TempDir(), "factur-x.xml")
		if b, err := exec.Command("pdfdetach", "-save", "1", "-o", out, path).CombinedOutput(); err != nil {
			t.Fatalf("pdfdetach: %v %s", err, b)
		}
		x, _ := os.ReadFile(out)
		for _, want := range []string{"<ram:ID>urn:cen.eu:en16931:2017</ram:ID>", "<ram:ID>RE-2026-0815</ram:ID>",
			"<ram:DuePayableAmount>2186.26</ram:DuePayableAmount>", `<ram:TaxTotalAmount currencyID="EUR">341.51</ram:TaxTotalAmount>`} {
			if !strings.Contains(string(x), want) {
				t.Errorf("factur-x.xml lacks %s", want)
			}
		}
		text := pdfText(t, pdf)
		if !regexp.MustCompile(`Amount due EUR\s+2,186\.26`).MatchString(text) {
			t.Errorf("the page does not show the XML's amount due:\n%s", text)
		}
	})

	t.Run("XRechnung and UBL as xml, async", func(t *testing.T) {
		for profile, want := range map[string]string{
			"xrechnung-cii": "urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0",
			"ubl":           `<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"`,
		} {
			j := s.must(200, "POST", "/api/v1/documents/generate?async=true", key, map[string]any{"templateId": id, "format": "xml", "variables": vars,
				"einvoice": map[string]any{"profile": profile}, "filename": "RE-2026-0815"})
			done := s.waitJob(key, j.str("jobId"))
			if done.str("status") != "completed" {
				t.Fatalf("%s: %s", profile, done.raw)
			}
			_, h, x := s.download(done.str("downloadUrl"))
			if ct := h.Get("Content-Type"); ct != "application/xml" {
				t.Errorf("%s: Content-Type %q", profile, ct)
			}
			if cd := h.Get("Content-Disposition"); !strings.Contains(cd, `filename=RE-2026-0815.xml`) {
				t.Errorf("%s: Content-Disposition %q", profile, cd)
			}
			if !strings.Contains(string(x), want) || !strings.Contains(string(x), "2186.26") {
				t.Errorf("%s: the XML lacks %s or the amount due:\n%s", profile, want, x)
			}
		}
		// An XRechnung is XML: asked for as a PDF it is refused.
		r := s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "pdf", "variables": vars,
			"einvoice": map[string]any{"profile": "xrechnung-cii"}})
		s.wantError(r, 400, "ERR_VALID_003")
		if r.str("relatedInfo.field") != "einvoice.profile" {
			t.Errorf("xrechnung as pdf: %s", r.raw)
		}
	})

	t.Run("VAT categories K, G, O, L, M", func(t *testing.T) {
		// (XSD and Schematron validation of these invoices:
		// render's TestEInvoiceOfficialValidation.)
		with := func(changes map[string]any) map[string]any {
			m := map[string]any{}
			for k, v := range vars {
				m[k] = v
			}
			for k, v := range changes {
				m[k] = v
			}
			return m
		}
		line := func(cat string, rate any) []any {
			return []any{map[string]any{"description": "Label printer", "quantity": 2, "unit": "C62", "unitPrice": 289, "vatCategory": cat, "vatRate": rate}}
		}
		fr := map[string]any{"name": "Exemple SARL", "street": "1 rue de la Paix", "postcode": "75002", "city": "Paris", "country": "FR", "vatId": "FR12345678901"}
		ch := map[string]any{"name": "Beispiel Schweiz AG", "street": "Bahnhofstrasse 1", "postcode": "8001", "city": "Zürich", "country": "CH"}
		k := with(map[string]any{"customer": fr, "items": line("K", 0), "adjustments": []any{}, "deliveryDate": "2026-10-28", "deliveryCountry": "FR"})
		for name, c := range map[string]struct {
			in   map[string]any
			want []string
		}{
			"K": {k, []string{"<cbc:ID>K</cbc:ID>", "<cbc:ActualDeliveryDate>2026-10-28</cbc:ActualDeliveryDate>", "Intra-community supply", "<cbc:PayableAmount currencyID=\"EUR\">578.00<"}},
			"G": {with(map[string]any{"customer": ch, "items": line("G", 0), "adjustments": []any{}}), []string{"<cbc:ID>G</cbc:ID>", "Export outside the EU"}},
			"L": {with(map[string]any{"items": line("L", 7), "adjustments": []any{}}), []string{"<cbc:ID>L</cbc:ID>", "<cbc:Percent>7</cbc:Percent>", "618.46<"}},
			"M": {with(map[string]any{"items": line("M", 4), "adjustments": []any{}}), []string{"<cbc:ID>M</cbc:ID>", "601.12<"}},
		} {
			g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "xml", "variables": c.in,
				"einvoice": map[string]any{"profile": "ubl"}})
			_, _, x := s.download(g.str("downloadUrl"))
			for _, w := range c.want {
				if !strings.Contains(string(x), w) {
					t.Errorf("%s: the UBL lacks %s:\n%s", name, w, x)
				}
			}
		}
		// Each category's own rules, through the API.
		noCountry := with(map[string]any{"customer": fr, "items": line("K", 0), "adjustments": []any{}, "deliveryDate": "2026-10-28"})
		o := with(map[string]any{"customer": ch, "items": line("O", nil), "adjustments": []any{}})
		for _, c := range []struct {
			name, rule, field string
			in                map[string]any
		}{
			{"K without the delivery country", "BR-IC-12", "einvoice.delivery.country", noCountry},
			{"O with the seller's VAT id", "BR-O-02", "einvoice.seller.vatId", o},
			{"G with a rate", "BR-G-05", "einvoice.lines[0].vatRate", with(map[string]any{"customer": ch, "items": line("G", 19), "adjustments": []any{}})},
			{"L without a rate", "BR-AF-05", "einvoice.lines[0].vatRate", with(map[string]any{"items": line("L", 0), "adjustments": []any{}})},
		} {
			r := s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "pdf", "variables": c.in})
			s.wantError(r, 400, "ERR_EINVOICE_001")
			if r.str("relatedInfo.rule") != c.rule || r.str("relatedInfo.field") != c.field {
				t.Errorf("%s: %s", c.name, r.raw)
			}
		}
	})

	t.Run("a rule broken: ERR_EINVOICE_001 with the rule and the field", func(t *testing.T) {
		bad := map[string]any{}
		for k, v := range vars {
			bad[k] = v
		}
		bad["buyerReference"] = ""
		r := s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "xml", "variables": bad,
			"einvoice": map[string]any{"profile": "xrechnung-cii"}})
		s.wantError(r, 400, "ERR_EINVOICE_001")
		if r.str("relatedInfo.rule") != "BR-DE-15" || r.str("relatedInfo.field") != "einvoice.buyerReference" ||
			r.str("relatedInfo.expression") != "buyerReference" || !strings.Contains(r.str("message"), "BR-DE-15") || r.str("relatedInfo.jobId") == "" {
			t.Errorf("envelope: %s", r.raw)
		}
		// The same invoice is a valid Factur-X (no Leitweg-ID needed) ...
		s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "pdf", "variables": bad})
		// ... but a reverse-charge line without the buyer's VAT id is not.
		items := []any{map[string]any{"description": "Consulting", "quantity": 2, "unit": "HUR", "unitPrice": 100, "vatCategory": "AE", "vatRate": 0}}
		customer := map[string]any{"name": "Exemple SARL", "street": "1 rue de la Paix", "postcode": "75002", "city": "Paris", "country": "FR"}
		bad = map[string]any{"invoiceNumber": "RE-9", "issueDate": "2026-11-02", "dueDate": "2026-12-02", "customer": customer, "items": items}
		r = s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "pdf", "variables": bad})
		s.wantError(r, 400, "ERR_EINVOICE_001")
		if r.str("relatedInfo.rule") != "BR-AE-02" || r.str("relatedInfo.field") != "einvoice.buyer.vatId" || r.str("relatedInfo.profile") != "factur-x-en16931" {
			t.Errorf("reverse charge without the buyer's VAT id: %s", r.raw)
		}
		d := s.must(200, "POST", "/api/v1/documents/generate?dryRun=true", key, map[string]any{"templateId": id, "format": "pdf", "variables": bad})
		errs, _ := d.get("errors").([]any)
		if d.str("valid") != "false" || len(errs) != 1 || (resp{body: asMap(errs[0])}).str("code") != "ERR_EINVOICE_001" || (resp{body: asMap(errs[0])}).str("relatedInfo.rule") != "BR-AE-02" {
			t.Errorf("dry run: %s", d.raw)
		}
		p := s.do("POST", "/api/templates/"+id+"/preview", u.token, map[string]any{"variables": bad})
		s.wantError(p, 400, "ERR_EINVOICE_001")
	})

	t.Run("batch: one Factur-X per document, a wrong one fails alone", func(t *testing.T) {
		bad := map[string]any{}
		for k, v := range vars {
			bad[k] = v
		}
		bad["customer"] = map[string]any{"name": "Beispiel AG", "country": "DE", "vatId": "987654321"}
		b := s.must(200, "POST", "/api/v1/documents/generate/batch", key, map[string]any{"templateId": id, "format": "pdf",
			"einvoice":  map[string]any{"profile": "factur-x-basic"},
			"documents": []any{map[string]any{"variables": vars}, map[string]any{"variables": bad}}})
		done := s.waitBatch(key, b.str("batchId"))
		docs, ids := batchDocs(t, done)
		if len(ids) != 2 || docs[ids[0]]["status"] != "completed" || docs[ids[1]]["status"] != "failed" {
			t.Fatalf("batch: %s", done.raw)
		}
		failed := s.must(200, "GET", "/api/v1/documents/jobs/"+ids[1], key, nil)
		if failed.str("errorCode") != "ERR_EINVOICE_001" || !strings.Contains(failed.str("error"), "BR-CO-09") {
			t.Errorf("failed document: %s", failed.raw)
		}
		j := s.must(200, "GET", "/api/v1/documents/jobs/"+ids[0], key, nil)
		_, _, pdf := s.download(j.str("downloadUrl"))
		path := filepath.Join(t.TempDir(), "doc.pdf")
		os.WriteFile(path, pdf, 0o600)
		out := filepath.Join(t.TempDir(), "factur-x.xml")
		if b, err := exec.Command("pdfdetach", "-save", "1", "-o", out, path).CombinedOutput(); err != nil {
			t.Fatalf("pdfdetach: %v %s", err, b)
		}
		if x, _ := os.ReadFile(out); !strings.Contains(string(x), "urn:factur-x.eu:1p0:basic") {
			t.Errorf("the batch's document is not Factur-X BASIC:\n%s", x)
		}
	})

	t.Run("options Factur-X cannot take", func(t *testing.T) {
		for _, c := range []struct {
			body  map[string]any
			field string
		}{
			{map[string]any{"pdfa": "2b"}, "pdfa"},
			{map[string]any{"encrypt": map[string]any{"userPassword": "secret-1"}}, "encrypt"},
			{map[string]any{"einvoice": map[string]any{"profile": "zugferd"}}, "einvoice.profile"},
		} {
			body := map[string]any{"templateId": id, "format": "pdf", "variables": vars}
			for k, v := range c.body {
				body[k] = v
			}
			r := s.do("POST", "/api/v1/documents/generate", key, body)
			s.wantError(r, 400, "ERR_VALID_003")
			if r.str("relatedInfo.field") != c.field {
				t.Errorf("%v: %s", c.body, r.raw)
			}
		}
		// Without the e-invoice, encryption is fine.
		s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": id, "format": "pdf", "variables": vars,
			"einvoice": false, "encrypt": map[string]any{"userPassword": "secret-1"}})
		// A template without a mapping has no e-invoice to give.
		plain := s.createTemplate(u.token, "Plain", businessInvoice)
		r := s.do("POST", "/api/v1/documents/generate", key, map[string]any{"templateId": plain.str("id"), "format": "xml",
			"variables": map[string]any{"number": "1", "customer": "x"}})
		s.wantError(r, 400, "ERR_VALID_003")
	})
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
