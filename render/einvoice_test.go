package render

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

// The e-invoice tests check Folio's XML with the official artifacts,
// vendored in testdata/einvoice (docs/decisions.md, "E-invoices"): the
// CII D16B and UBL 2.1 XML Schemas with xmllint, and the EN 16931
// Schematron (XSLT 2.0, ConnectingEurope/eInvoicing-EN16931) with
// Saxon-HE. The JVM starts once per syntax: every file of a syntax is
// transformed in one Saxon run over a directory.

const saxonJar = "/usr/share/java/Saxon-HE.jar"

// needEInvoiceTools skips (outside CI) or fails when java, Saxon or
// xmllint are missing (.ci/run installs them).
func needEInvoiceTools(tb testing.TB) {
	tb.Helper()
	_, errJava := exec.LookPath("java")
	_, errLint := exec.LookPath("xmllint")
	_, errJar := os.Stat(saxonJar)
	if errJava != nil || errLint != nil || errJar != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("java, xmllint or %s missing (default-jre-headless libsaxonhe-java libxml2-utils)", saxonJar)
		}
		tb.Skip("java, Saxon-HE or xmllint not installed")
	}
}

// einvoiceCases are the invoices the example template must turn into
// valid e-invoices: the issue's five kinds.
func einvoiceCases(tb testing.TB) map[string]map[string]any {
	tb.Helper()
	_, base := LoadExample(tb, "einvoice")
	with := func(changes map[string]any) map[string]any {
		raw, _ := json.Marshal(base)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		for k, v := range changes {
			m[k] = v
		}
		return m
	}
	item := func(desc string, qty, price any, cat string, rate any) map[string]any {
		return map[string]any{"description": desc, "quantity": qty, "unit": "C62", "unitPrice": price, "vatCategory": cat, "vatRate": rate}
	}
	return map[string]map[string]any{
		// Domestic, two rates and an allowance: the example's own values.
		"domestic": with(nil),
		// Reverse charge to a French business.
		"reverse-charge": with(map[string]any{
			"customer": map[string]any{"name": "Exemple SARL", "street": "1 rue de la Paix", "postcode": "75002", "city": "Paris",
				"country": "FR", "vatId": "FR12345678901", "email": "compta@exemple.example"},
			"items":       []any{item("Consulting, October", 12, 110, "AE", 0), item("Travel costs", 1, 230.4, "AE", 0)},
			"adjustments": []any{},
			"notes":       "Reverse charge: the recipient owes the VAT (Art. 196 Directive 2006/112/EC).",
		}),
		// Several rates, zero rated and exempt lines.
		"several-rates": with(map[string]any{
			"items": []any{item("Software licence", 2, 499.99, "S", 19), item("Handbook", 4, 12.45, "S", 7),
				item("Export packaging", 1, 30, "Z", 0), item("Training (exempt)", 1, 800, "E", 0), item("Cables", 7, 3.333, "S", 19)},
			"adjustments": []any{},
		}),
		// Allowances and charges over two rates.
		"allowances-charges": with(map[string]any{
			"adjustments": []any{
				map[string]any{"charge": false, "amount": 25.5, "reason": "Early booking discount", "vatCategory": "S", "vatRate": 19},
				map[string]any{"charge": true, "amount": 9.9, "reason": "Shipping", "vatCategory": "S", "vatRate": 7},
				map[string]any{"charge": true, "amount": 4.95, "reason": "Packaging", "vatCategory": "S", "vatRate": 19},
			},
		}),
		// A credit note for the domestic invoice.
		"credit-note": with(map[string]any{
			"typeCode": "381", "invoiceNumber": "GS-2026-0007", "precedingInvoice": "RE-2026-0815",
			"items":       []any{item("Developer support (credited hours)", 2, 95.35, "S", 19)},
			"adjustments": []any{},
		}),
		// Goods to a business in another member state (K): both VAT
		// identifiers, the delivery date and country.
		"intra-community": with(map[string]any{
			"customer": map[string]any{"name": "Exemple SARL", "street": "1 rue de la Paix", "postcode": "75002", "city": "Paris",
				"country": "FR", "vatId": "FR12345678901", "email": "compta@exemple.example"},
			"items":        []any{item("Label printer", 3, 289, "K", 0), item("Label rolls", 40, 4.75, "K", 0)},
			"adjustments":  []any{map[string]any{"charge": true, "amount": 24, "reason": "Freight", "vatCategory": "K", "vatRate": 0}},
			"deliveryDate": "2026-10-28", "deliveryCountry": "FR", "deliveryCity": "Paris", "deliveryPostcode": "75002",
		}),
		// An export to Switzerland (G).
		"export": with(map[string]any{
			"customer": map[string]any{"name": "Beispiel Schweiz AG", "street": "Bahnhofstrasse 1", "postcode": "8001", "city": "Zürich",
				"country": "CH", "email": "kreditoren@beispiel.example"},
			"items":       []any{item("Label printer", 2, 289, "G", 0)},
			"adjustments": []any{},
		}),
		// Not subject to VAT (O): a seller without VAT identifier (the
		// template's constant changed: "company"), a buyer without one.
		"not-subject": with(map[string]any{
			"company": map[string]any{"name": "Verein Folio e.V.", "street": "Hauptstraße 1", "postcode": "50667", "city": "Köln",
				"country": "DE", "registration": "VR 4711", "contact": "Erika Mustermann", "phone": "+49 221 123456",
				"email": "kasse@folio.example", "iban": "DE89370400440532013000", "bic": "COBADEFFXXX"},
			"customer": map[string]any{"name": "Max Muster", "street": "Ringstraße 3", "postcode": "50668", "city": "Köln",
				"country": "DE", "email": "max@muster.example"},
			"items":       []any{item("Membership 2027", 1, 60, "O", nil), item("Workshop ticket", 2, 15, "O", nil)},
			"adjustments": []any{},
		}),
		// Canary Islands IGIC (L), at two rates.
		"canary-islands": with(map[string]any{
			"items":       []any{item("Label printer", 1, 289, "L", 7), item("Printed manual", 2, 12, "L", 3)},
			"adjustments": []any{},
		}),
		// Ceuta and Melilla IPSI (M).
		"ceuta-melilla": with(map[string]any{
			"items":       []any{item("Label printer", 1, 289, "M", 4)},
			"adjustments": []any{},
		}),
	}
}

// svrlFailure is one failed assertion of a Schematron report.
type svrlFailure struct {
	ID, Flag, Location, Text string
}

// readSVRL reads the Schematron reports Saxon wrote into out, one per
// XML file of dir, and returns the failures by file name.
func readSVRL(tb testing.TB, dir, out string) map[string][]svrlFailure {
	tb.Helper()
	files, _ := os.ReadDir(dir)
	res := map[string][]svrlFailure{}
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join(out, f.Name()))
		if err != nil {
			tb.Fatalf("no report for %s: %v", f.Name(), err)
		}
		var report struct {
			Failed []struct {
				ID       string `xml:"id,attr"`
				Flag     string `xml:"flag,attr"`
				Location string `xml:"location,attr"`
				Text     string `xml:"text"`
			} `xml:"failed-assert"`
			Fired []struct{} `xml:"fired-rule"`
		}
		if err := xml.Unmarshal(raw, &report); err != nil {
			tb.Fatalf("report for %s: %v", f.Name(), err)
		}
		if len(report.Fired) == 0 {
			tb.Fatalf("the Schematron fired no rule on %s: not an invoice of its syntax?", f.Name())
		}
		res[f.Name()] = []svrlFailure{}
		for _, fa := range report.Failed {
			res[f.Name()] = append(res[f.Name()], svrlFailure{fa.ID, fa.Flag, fa.Location, strings.Join(strings.Fields(fa.Text), " ")})
		}
	}
	return res
}

// xmlSchemaCheck validates files against an XSD with xmllint.
func xmlSchemaCheck(tb testing.TB, xsd string, files ...string) {
	tb.Helper()
	if len(files) == 0 {
		return
	}
	args := append([]string{"--noout", "--schema", xsd}, files...)
	if b, err := exec.Command("xmllint", args...).CombinedOutput(); err != nil {
		tb.Errorf("xmllint --schema %s: %v\n%s", filepath.Base(xsd), err, b)
	}
}

// wrongInvoices are invoices that break one rule each: Folio refuses them
// and the official Schematron reports the same rule on the same XML
// (written without Folio's check).
var wrongInvoices = []struct {
	name, rule string
	change     func(m map[string]any)
}{
	{"no-seller-name", "BR-06", func(m map[string]any) {
		m["company"] = map[string]any{"name": "", "country": "DE", "vatId": "DE123456789"}
	}},
	{"standard-rate-zero", "BR-S-05", func(m map[string]any) { m["items"].([]any)[0].(map[string]any)["vatRate"] = 0 }},
	{"exempt-without-reason", "BR-E-10", func(m map[string]any) {
		m["items"].([]any)[0].(map[string]any)["vatCategory"] = "E"
		m["items"].([]any)[0].(map[string]any)["vatRate"] = 0
		m["exemptionNote"] = ""
	}},
	{"reverse-charge-without-buyer-vat", "BR-AE-02", func(m map[string]any) {
		for _, it := range m["items"].([]any) {
			it.(map[string]any)["vatCategory"], it.(map[string]any)["vatRate"] = "AE", 0
		}
		m["adjustments"] = []any{}
		delete(m["customer"].(map[string]any), "vatId")
	}},
	{"negative-price", "BR-27", func(m map[string]any) { m["items"].([]any)[1].(map[string]any)["unitPrice"] = -5 }},
	{"vat-id-without-country", "BR-CO-09", func(m map[string]any) { m["customer"].(map[string]any)["vatId"] = "987654321" }},
	{"country-not-a-code", "BR-CL-14", func(m map[string]any) { m["customer"].(map[string]any)["country"] = "Germany" }},
	{"no-currency-prefix-in-seller-vat", "BR-CO-09", func(m map[string]any) {
		m["company"] = map[string]any{"name": "Folio Demo GmbH", "country": "DE", "vatId": "123456789", "city": "Köln", "postcode": "50667"}
	}},
	{"intra-community-without-delivery-country", "BR-IC-12", func(m map[string]any) {
		for _, it := range m["items"].([]any) {
			it.(map[string]any)["vatCategory"], it.(map[string]any)["vatRate"] = "K", 0
		}
		m["adjustments"] = []any{}
		m["deliveryDate"] = "2026-10-28"
	}},
	{"not-subject-with-seller-vat-id", "BR-O-02", func(m map[string]any) {
		for _, it := range m["items"].([]any) {
			it.(map[string]any)["vatCategory"], it.(map[string]any)["vatRate"] = "O", nil
		}
		m["adjustments"] = []any{}
		delete(m["customer"].(map[string]any), "vatId")
	}},
	{"export-with-a-rate", "BR-G-05", func(m map[string]any) {
		for _, it := range m["items"].([]any) {
			it.(map[string]any)["vatCategory"] = "G"
		}
		m["adjustments"] = []any{}
	}},
	{"export-without-reason", "BR-G-10", func(m map[string]any) {
		for _, it := range m["items"].([]any) {
			it.(map[string]any)["vatCategory"], it.(map[string]any)["vatRate"] = "G", 0
		}
		m["adjustments"] = []any{}
		m["exportNote"] = ""
	}},
}

// wrongXRechnungs break one BR-DE rule each (KoSIT's XRechnung Schematron).
var wrongXRechnungs = []struct {
	name, rule string
	vars       map[string]any
	company    map[string]any
}{
	{"no-leitweg-id", "BR-DE-15", map[string]any{"buyerReference": ""}, nil},
	{"no-seller-phone", "BR-DE-6", nil, map[string]any{"phone": ""}},
	{"no-seller-postcode", "BR-DE-4", nil, map[string]any{"postcode": ""}},
	{"no-seller-city", "BR-DE-3", nil, map[string]any{"city": ""}},
	{"no-payment", "BR-DE-1", nil, map[string]any{"iban": "", "bic": ""}},
	{"no-buyer-postcode", "BR-DE-9", map[string]any{"customer": map[string]any{"name": "Beispiel AG", "street": "Marktplatz 7", "city": "München", "country": "DE"}}, nil},
}

// buildUnchecked computes the example's invoice for input in profile and
// returns its XML and Folio's violations, without refusing it.
func buildUnchecked(tb testing.TB, tpl *Template, input map[string]any, profile string) ([]byte, []Violation) {
	tb.Helper()
	values, err := tpl.Values(input)
	if err != nil {
		tb.Fatal(err)
	}
	inv, err := tpl.buildEInvoice(tpl.doc.einvoice, profile, values, tpl.limits)
	if err != nil {
		tb.Fatal(err)
	}
	return inv.xml(), checkEInvoice(inv)
}

// TestEInvoiceOfficialValidation writes the five example invoices in
// every profile and checks them with the official XML Schemas and
// EN 16931 Schematron; the wrong invoices are refused by Folio and
// reported by the Schematron with the same rule.
func TestEInvoiceOfficialValidation(t *testing.T) {
	if raceEnabled {
		t.Skip("the JVM runs are the same with the race detector; the plain run checks them")
	}
	needEInvoiceTools(t)
	ex, _ := LoadExample(t, "einvoice")
	tpl := MustCompile(t, ex.Definition)
	dirs := map[string]string{"cii": t.TempDir(), "ubl": t.TempDir(), "xrechnung": t.TempDir(), "basic": t.TempDir()}
	var ciiFiles, basicFiles, ublInvoices, ublCredits []string
	cases := einvoiceCases(t)
	for name, input := range cases {
		tpl := tpl
		if c, ok := input["company"]; ok {
			// The seller is a constant of the template: change it there.
			tpl = MustCompile(t, withConstant(t, ex.Definition, "company", c))
			delete(input, "company")
		}
		values, err := tpl.Values(input)
		if err != nil {
			t.Fatal(name, err)
		}
		for _, profile := range einvoiceProfiles {
			x, err := tpl.EInvoiceXML(values, profile)
			if err != nil {
				t.Errorf("%s %s: %v", name, profile, err)
				continue
			}
			syntax := "cii"
			switch profile {
			case ProfileUBL:
				syntax = "ubl"
			case ProfileFacturXBasic:
				// Checked by the Factur-X BASIC XSD and Schematron, which
				// include the EN 16931 rules, instead of the CII D16B ones.
				syntax = "basic"
			}
			path := filepath.Join(dirs[syntax], "good_"+name+"_"+profile+".xml")
			if err := os.WriteFile(path, x, 0o600); err != nil {
				t.Fatal(err)
			}
			if profile == ProfileXRechnungCII {
				// The KoSIT XRechnung rules check it too.
				if err := os.WriteFile(filepath.Join(dirs["xrechnung"], filepath.Base(path)), x, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			switch {
			case syntax == "cii":
				ciiFiles = append(ciiFiles, path)
			case syntax == "basic":
				basicFiles = append(basicFiles, path)
			case input["typeCode"] == "381":
				ublCredits = append(ublCredits, path)
			default:
				ublInvoices = append(ublInvoices, path)
			}
		}
	}
	// The wrong invoices, in CII (Factur-X EN 16931 and BASIC) and UBL.
	folio := map[string][]Violation{}
	for _, w := range wrongInvoices {
		input := cases["domestic"]
		raw, _ := json.Marshal(input)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		w.change(m)
		for _, profile := range []string{ProfileFacturXEN16931, ProfileFacturXBasic, ProfileUBL} {
			def := ex.Definition
			if c, ok := m["company"]; ok {
				// The seller is a constant of the template: change it there.
				def = withConstant(t, def, "company", c)
			}
			wt := MustCompile(t, def)
			x, vs := buildUnchecked(t, wt, m, profile)
			syntax := map[string]string{ProfileFacturXEN16931: "cii", ProfileFacturXBasic: "basic", ProfileUBL: "ubl"}[profile]
			file := "bad_" + w.name + ".xml"
			if err := os.WriteFile(filepath.Join(dirs[syntax], file), x, 0o600); err != nil {
				t.Fatal(err)
			}
			folio[syntax+"/"+file] = vs
		}
	}
	// The wrong XRechnung invoices (BR-DE rules), checked by the KoSIT rules.
	for _, w := range wrongXRechnungs {
		raw, _ := json.Marshal(cases["domestic"])
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		def := ex.Definition
		if c := w.company; c != nil {
			company := map[string]any{}
			for k, v := range ex.Definition.Constants["company"].(map[string]any) {
				company[k] = v
			}
			for k, v := range c {
				company[k] = v
			}
			def = withConstant(t, def, "company", company)
		}
		for k, v := range w.vars {
			m[k] = v
		}
		x, vs := buildUnchecked(t, MustCompile(t, def), m, ProfileXRechnungCII)
		file := "bad_" + w.name + ".xml"
		if err := os.WriteFile(filepath.Join(dirs["xrechnung"], file), x, 0o600); err != nil {
			t.Fatal(err)
		}
		folio["xrechnung/"+file] = vs
	}
	xmlSchemaCheck(t, filepath.Join("testdata", "einvoice", "cii", "xsd", "CrossIndustryInvoice_100pD16B.xsd"), ciiFiles...)
	xmlSchemaCheck(t, filepath.Join("testdata", "einvoice", "facturx-basic", "xsd", "FACTUR-X_BASIC.xsd"), basicFiles...)
	xmlSchemaCheck(t, filepath.Join("testdata", "einvoice", "ubl", "xsd", "maindoc", "UBL-Invoice-2.1.xsd"), ublInvoices...)
	xmlSchemaCheck(t, filepath.Join("testdata", "einvoice", "ubl", "xsd", "maindoc", "UBL-CreditNote-2.1.xsd"), ublCredits...)
	reports := map[string]map[string][]svrlFailure{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	// The Java runs (one per syntax, every file of it in one run) go
	// side by side; failures are reported once both end.
	errs := map[string]string{}
	outs := map[string]string{"cii": t.TempDir(), "ubl": t.TempDir()}
	outs["xrechnung"] = t.TempDir()
	outs["basic"] = t.TempDir()
	xrXSLT := compileSchematron(t, filepath.Join("testdata", "einvoice", "xrechnung", "cii", "XRechnung-CII-validation.sch"))
	for syntax, xslt := range map[string]string{"cii": filepath.Join("testdata", "einvoice", "cii", "EN16931-CII-validation.xslt"),
		"ubl": filepath.Join("testdata", "einvoice", "ubl", "EN16931-UBL-validation.xslt"), "xrechnung": xrXSLT,
		"basic": filepath.Join("testdata", "einvoice", "facturx-basic", "FACTUR-X_BASIC.xslt")} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command("java", "-cp", saxonJar, "net.sf.saxon.Transform", "-s:"+dirs[syntax], "-xsl:"+xslt, "-o:"+outs[syntax])
			b, err := cmd.CombinedOutput()
			if err != nil {
				mu.Lock()
				errs[syntax] = fmt.Sprintf("saxon (%s): %v\n%s", syntax, err, b)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, e := range errs {
		t.Fatal(e)
	}
	for syntax := range outs {
		reports[syntax] = readSVRL(t, dirs[syntax], outs[syntax])
	}

	for syntax, files := range reports {
		names := make([]string, 0, len(files))
		for f := range files {
			names = append(names, f)
		}
		sort.Strings(names)
		for _, f := range names {
			fails := files[f]
			if strings.HasPrefix(f, "good_") {
				for _, fa := range fails {
					if fa.Flag == "fatal" || fa.Flag == "" {
						t.Errorf("%s: the EN 16931 Schematron reports %s: %s (at %s)", f, fa.ID, fa.Text, fa.Location)
					}
				}
				continue
			}
			var rule string
			for _, w := range wrongInvoices {
				if "bad_"+w.name+".xml" == f && syntax != "xrechnung" {
					rule = w.rule
				}
			}
			for _, w := range wrongXRechnungs {
				if "bad_"+w.name+".xml" == f && syntax == "xrechnung" {
					rule = w.rule
				}
			}
			ids := map[string]bool{}
			for _, fa := range fails {
				ids[fa.ID] = true
				// The Factur-X BASIC Schematron checks code lists against
				// its code database, under rule ids of its own.
				if syntax == "basic" && strings.Contains(fa.Text, "Value of 'ram:CountryID' is not allowed") {
					ids["BR-CL-14"] = true
				}
			}
			ours := map[string]bool{}
			for _, v := range folio[syntax+"/"+f] {
				ours[v.Rule] = true
			}
			if !ours[rule] {
				t.Errorf("%s %s: Folio did not report %s (it reported %v)", syntax, f, rule, folio[syntax+"/"+f])
			}
			if !ids[rule] {
				t.Errorf("%s %s: the official Schematron did not report %s (it reported %v)", syntax, f, rule, fails)
			}
		}
	}
	if t.Failed() {
		return
	}
	t.Logf("%d CII, %d Factur-X BASIC and %d UBL files checked by XSD and Schematron, %d by the XRechnung rules", len(reports["cii"]), len(reports["basic"]), len(reports["ubl"]), len(reports["xrechnung"]))
}

// withConstant returns def with constant name set to v.
func withConstant(tb testing.TB, def Definition, name string, v any) Definition {
	tb.Helper()
	c := map[string]any{}
	for k, old := range def.Constants {
		c[k] = old
	}
	c[name] = v
	def.Constants = c
	return def
}

// TestEInvoiceRulesRefuse checks that a render with a profile refuses a
// wrong invoice with its rule and path, and that rules of XRechnung
// apply to that profile only.
func TestEInvoiceRulesRefuse(t *testing.T) {
	ex, input := LoadExample(t, "einvoice")
	tpl := MustCompile(t, ex.Definition)
	input["buyerReference"] = ""
	values, err := tpl.Values(input)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tpl.EInvoiceXML(values, ProfileFacturXEN16931); err != nil {
		t.Fatalf("Factur-X needs no buyer reference: %v", err)
	}
	_, err = tpl.EInvoiceXML(values, ProfileXRechnungCII)
	var ee *EInvoiceError
	if !errors.As(err, &ee) {
		t.Fatalf("XRechnung without a buyer reference: %v, want an EInvoiceError", err)
	}
	v := ee.Violations[0]
	if v.Rule != "BR-DE-15" || v.Field != "einvoice.buyerReference" || v.Expression != "buyerReference" || v.Term != "BT-10" {
		t.Errorf("violation = %+v", v)
	}
	// A render fails the same way, for PDF and XML.
	_, err = tpl.Render(t.Context(), &strings.Builder{}, XML, values, Options{PDF: mustPDFOptions(t, `{"einvoice":{"profile":"xrechnung-cii"}}`)})
	if !errors.As(err, &ee) || ee.Violations[0].Rule != "BR-DE-15" {
		t.Errorf("render xml: %v", err)
	}
	input["items"].([]any)[0].(map[string]any)["quantity"] = "many"
	values, _ = tpl.Values(input)
	_, err = tpl.Render(t.Context(), &strings.Builder{}, PDF, values, Options{})
	if !errors.As(err, &ee) || ee.Violations[0].Field != "einvoice.lines[0].quantity" || ee.Violations[0].Expression != "item.quantity" {
		t.Errorf("render pdf with a quantity of text: %v", err)
	}
}

func mustPDFOptions(tb testing.TB, js string) PDFOptions {
	tb.Helper()
	var r PDFRequest
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		tb.Fatal(err)
	}
	o, err := ParsePDFOptions(r)
	if err != nil {
		tb.Fatal(err)
	}
	return o
}

// TestEInvoiceOptionsConflicts: Factur-X is a PDF/A-3, so an explicit
// PDF/A-2 or encryption is refused, and a template without a mapping
// cannot be asked for an e-invoice.
func TestEInvoiceOptionsConflicts(t *testing.T) {
	ex, _ := LoadExample(t, "einvoice")
	tpl := MustCompile(t, ex.Definition)
	for js, field := range map[string]string{
		`{"pdfa":"2b"}`:                    "pdfa",
		`{"pdfa":"none"}`:                  "pdfa",
		`{"encrypt":{"userPassword":"x"}}`: "encrypt",
	} {
		err := tpl.CheckPDFOptions(mustPDFOptions(t, js))
		var se *SchemaError
		if !errors.As(err, &se) || se.Issues[0].Path != field {
			t.Errorf("%s: %v, want an issue at %s", js, err, field)
		}
	}
	for _, js := range []string{`{"pdfa":"3b"}`, `{"pdfa":"3u"}`, `{"einvoice":false,"encrypt":{"userPassword":"x"}}`, `{"einvoice":{"profile":"ubl"},"encrypt":{"userPassword":"x"}}`} {
		if err := tpl.CheckPDFOptions(mustPDFOptions(t, js)); err != nil {
			t.Errorf("%s: %v", js, err)
		}
	}
	plain, _ := LoadExample(t, "invoice")
	if err := MustCompile(t, plain.Definition).CheckPDFOptions(mustPDFOptions(t, `{"einvoice":{"profile":"ubl"}}`)); err == nil {
		t.Error("an e-invoice of a template without a mapping was accepted")
	}
	var r PDFRequest
	_ = json.Unmarshal([]byte(`{"einvoice":{"profile":"zugferd-1"}}`), &r)
	if _, err := ParsePDFOptions(r); err == nil || !strings.Contains(err.Error(), "factur-x-en16931") {
		t.Errorf("unknown profile: %v", err)
	}
}

// TestFacturXPDF renders the example as Factur-X and reads it back with
// independent tools: the structural PDF/A-3b checker, pdfdetach for the
// embedded factur-x.xml (the same bytes as the XML alone), pikepdf for
// the AF relationship, MIME type and XMP extension schema, and pdftotext
// for the totals the page shows, which must be the XML's.
func TestFacturXPDF(t *testing.T) {
	needTool(t, "pdfdetach")
	ex, input := LoadExample(t, "einvoice")
	tpl := MustCompile(t, ex.Definition)
	for _, profile := range []string{ProfileFacturXEN16931, ProfileFacturXBasic} {
		t.Run(profile, func(t *testing.T) {
			opts := Options{PDF: mustPDFOptions(t, `{"einvoice":{"profile":"`+profile+`"}}`)}
			pdf, _ := MustRenderFormat(t, tpl, input, PDF, opts)
			if v := CheckPDFA(t, pdf, "3", "B"); len(v) > 0 {
				t.Errorf("not PDF/A-3b:\n%s", strings.Join(v, "\n"))
			}
			path := writeTemp(t, pdf)
			list, err := exec.Command("pdfdetach", "-list", path).CombinedOutput()
			if err != nil || !strings.Contains(string(list), "1: factur-x.xml") {
				t.Fatalf("pdfdetach -list: %v %s", err, list)
			}
			out := filepath.Join(t.TempDir(), "factur-x.xml")
			if b, err := exec.Command("pdfdetach", "-save", "1", "-o", out, path).CombinedOutput(); err != nil {
				t.Fatalf("pdfdetach -save: %v %s", err, b)
			}
			embedded, _ := os.ReadFile(out)
			values, _ := tpl.Values(input)
			alone, err := tpl.EInvoiceXML(values, profile)
			if err != nil || string(alone) != string(embedded) {
				t.Errorf("the embedded XML differs from the e-invoice's XML (%v)", err)
			}
			level := map[string]string{ProfileFacturXEN16931: "EN 16931", ProfileFacturXBasic: "BASIC"}[profile]
			script := `
import sys, pikepdf
pdf = pikepdf.open(sys.argv[1])
af = pdf.Root.AF
fs = af[0]
names = pdf.Root.Names.EmbeddedFiles.Names
ef = fs.EF.F
xmp = pdf.open_metadata()
print(str(fs.AFRelationship), str(fs.F), str(fs.UF), str(names[0]), names[1].objgen == fs.objgen, str(ef.Subtype), "/ModDate" in ef.Params)
print(xmp.get("{urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#}DocumentType"), xmp.get("{urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#}DocumentFileName"),
      xmp.get("{urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#}Version"), "|" + str(xmp.get("{urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#}ConformanceLevel")) + "|")
print(xmp.get("{http://www.aiim.org/pdfa/ns/id/}part"), xmp.get("{http://www.aiim.org/pdfa/ns/id/}conformance"))
raw = bytes(pdf.Root.Metadata.read_bytes()).decode()
print("urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#</pdfaSchema:namespaceURI>" in raw)
`
			got, err := exec.Command(pdfaPython, "-c", script, path).CombinedOutput()
			if err != nil {
				t.Fatalf("pikepdf: %v\n%s", err, got)
			}
			want := "/Data factur-x.xml factur-x.xml factur-x.xml True /text/xml True\nINVOICE factur-x.xml 1.0 |" + level + "|\n3 B\nTrue\n"
			if string(got) != want {
				t.Errorf("read back:\n%s\nwant:\n%s", got, want)
			}
			// The page shows the XML's totals.
			text := ExtractText(t, pdf, "-layout")
			var doc struct {
				Sum struct {
					Lines, Basis, Tax, Grand, Due string
				}
			}
			re := func(tag string) string {
				// The header's amount: the last element of that name.
				all := regexp.MustCompile("<ram:"+tag+`[^>]*>([^<]+)<`).FindAllStringSubmatch(string(embedded), -1)
				if all == nil {
					t.Fatalf("no %s in the XML", tag)
				}
				return all[len(all)-1][1]
			}
			doc.Sum.Lines, doc.Sum.Basis, doc.Sum.Tax, doc.Sum.Grand, doc.Sum.Due = re("LineTotalAmount"), re("TaxBasisTotalAmount"), re("TaxTotalAmount"), re("GrandTotalAmount"), re("DuePayableAmount")
			for label, v := range map[string]string{"Sum of lines": doc.Sum.Lines, "Total without VAT": doc.Sum.Basis, "VAT": doc.Sum.Tax, "Total EUR": doc.Sum.Grand, "Amount due EUR": doc.Sum.Due} {
				if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(label) + `\s+` + regexp.QuoteMeta(grouped(v)) + `$`).MatchString(text) {
					t.Errorf("the page does not show %s %s (the XML's):\n%s", label, grouped(v), text)
				}
			}
		})
	}
}

// grouped writes "2186.26" as the example shows it: "2,186.26".
func grouped(s string) string {
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String() + "." + frac
}

// TestEInvoiceArithmetic pins the EN 16931 rounding: line net amounts
// rounded half away from zero, VAT per category and rate on its base.
func TestEInvoiceArithmetic(t *testing.T) {
	for _, c := range []struct {
		in     string
		places int
		want   string
	}{{"619.775", 2, "619.78"}, {"-0.005", 2, "-0.01"}, {"0.004999", 2, "0.00"}, {"2.5", 0, "3"}, {"1.0049999999", 2, "1.00"}} {
		r, _ := new(big.Rat).SetString(c.in)
		if got := decString(r, c.places); got != c.want {
			t.Errorf("round %s = %s, want %s", c.in, got, c.want)
		}
	}
	cases := einvoiceCases(t)
	ex, _ := LoadExample(t, "einvoice")
	tpl := MustCompile(t, ex.Definition)
	values, _ := tpl.Values(cases["several-rates"])
	inv, err := tpl.buildEInvoice(tpl.doc.einvoice, ProfileFacturXEN16931, values, tpl.limits)
	if err != nil {
		t.Fatal(err)
	}
	// 7 × 3.333 = 23.331 → 23.33; S 19 %: 999.98 + 23.33 = 1023.31 → 194.4289 → 194.43.
	var got []string
	for _, g := range inv.vat {
		got = append(got, fmt.Sprintf("%s %s: %s → %s", g.category, decPlain(g.rate, 2), amount(g.base), amount(g.amount)))
	}
	want := []string{"S 19: 1023.31 → 194.43", "S 7: 49.80 → 3.49", "Z 0: 30.00 → 0.00", "E 0: 800.00 → 0.00"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("VAT breakdown\n%s\nwant\n%s", strings.Join(got, "; "), strings.Join(want, "; "))
	}
	if amount(inv.grandTotal) != "2101.03" || amount(inv.taxExclusive) != "1903.11" {
		t.Errorf("totals %s %s", amount(inv.taxExclusive), amount(inv.grandTotal))
	}
	ns := inv.namespace()
	if tot := ns["totals"].(map[string]any); tot["taxInclusive"] != 2101.03 || tot["tax"] != 197.92 {
		t.Errorf("namespace totals %v", tot)
	}
}

// compileSchematron turns a Schematron schema (XSLT 2 query binding) into
// an XSLT 2.0 stylesheet writing an SVRL report of the failed assertions,
// for the KoSIT XRechnung rules, which are published as .sch only. It
// covers what those files use: ns, let (global and per rule), pattern,
// rule (the first rule of a pattern whose context matches a node fires),
// assert with id and flag, include of a pattern, and xsl:function.
func compileSchematron(tb testing.TB, path string) string {
	tb.Helper()
	type node struct {
		XMLName xml.Name
		Attrs   []xml.Attr `xml:",any,attr"`
		Nodes   []node     `xml:",any"`
		Text    string     `xml:",chardata"`
	}
	read := func(p string) node {
		raw, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		var n node
		if err := xml.Unmarshal(raw, &n); err != nil {
			tb.Fatal(err)
		}
		return n
	}
	attr := func(n node, name string) string {
		for _, a := range n.Attrs {
			if a.Name.Local == name && a.Name.Space == "" {
				return a.Value
			}
		}
		return ""
	}
	raw, _ := os.ReadFile(path)
	root := read(path)
	var b strings.Builder
	b.WriteString(`<xsl:stylesheet version="2.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:svrl="http://purl.oclc.org/dsdl/svrl" xmlns:u="utils"`)
	var patterns []node
	var globals, functions strings.Builder
	var walk func(n node, dir string)
	walk = func(n node, dir string) {
		for _, c := range n.Nodes {
			switch c.XMLName.Local {
			case "ns":
				fmt.Fprintf(&b, ` xmlns:%s="%s"`, attr(c, "prefix"), xmlText(attr(c, "uri")))
			case "let":
				fmt.Fprintf(&globals, "<xsl:variable name=\"%s\" select=\"%s\"/>\n", attr(c, "name"), xmlText(attr(c, "value")))
			case "include":
				p := filepath.Join(dir, attr(c, "href"))
				inc := read(p)
				if inc.XMLName.Local == "pattern" {
					walk(inc, filepath.Dir(p)) // its lets are global
					patterns = append(patterns, inc)
				}
			case "pattern":
				walk(node{Nodes: func() (lets []node) {
					for _, l := range c.Nodes {
						if l.XMLName.Local == "let" {
							lets = append(lets, l)
						}
					}
					return
				}()}, dir)
				patterns = append(patterns, c)
			}
		}
	}
	walk(root, filepath.Dir(path))
	for _, m := range regexp.MustCompile(`(?s)<xsl:function.*?</xsl:function>`).FindAll(raw, -1) {
		functions.Write(m)
		functions.WriteString("\n")
	}
	b.WriteString(">\n")
	b.WriteString(functions.String())
	b.WriteString(globals.String())
	b.WriteString("<xsl:template match=\"/\"><svrl:schematron-output>\n")
	for i := range patterns {
		fmt.Fprintf(&b, "<xsl:apply-templates select=\"/\" mode=\"M%d\"/>\n", i)
	}
	b.WriteString("</svrl:schematron-output></xsl:template>\n")
	for i, p := range patterns {
		j := 0
		for _, r := range p.Nodes {
			if r.XMLName.Local != "rule" {
				continue
			}
			ctx := xmlText(attr(r, "context"))
			fmt.Fprintf(&b, "<xsl:template match=\"%s\" mode=\"M%d\" priority=\"%d\">\n<svrl:fired-rule context=\"%s\"/>\n", ctx, i, 1000-j, ctx)
			j++
			for _, a := range r.Nodes {
				switch a.XMLName.Local {
				case "let":
					fmt.Fprintf(&b, "<xsl:variable name=\"%s\" select=\"%s\"/>\n", attr(a, "name"), xmlText(attr(a, "value")))
				case "assert":
					fmt.Fprintf(&b, "<xsl:if test=\"not(%s)\"><svrl:failed-assert id=\"%s\" flag=\"%s\" location=\"{path()}\"><svrl:text>%s</svrl:text></svrl:failed-assert></xsl:if>\n",
						xmlText(attr(a, "test")), attr(a, "id"), attr(a, "flag"), xmlText(strings.Join(strings.Fields(a.Text), " ")))
				}
			}
			fmt.Fprintf(&b, "<xsl:apply-templates select=\"@*|node()\" mode=\"M%d\"/>\n</xsl:template>\n", i)
		}
		fmt.Fprintf(&b, "<xsl:template match=\"text()\" mode=\"M%d\" priority=\"-1\"/>\n", i)
		fmt.Fprintf(&b, "<xsl:template match=\"@*|node()\" mode=\"M%d\" priority=\"-2\"><xsl:apply-templates select=\"@*|node()\" mode=\"M%d\"/></xsl:template>\n", i, i)
	}
	b.WriteString("</xsl:stylesheet>\n")
	out := filepath.Join(tb.TempDir(), "xrechnung.xslt")
	if err := os.WriteFile(out, []byte(b.String()), 0o600); err != nil {
		tb.Fatal(err)
	}
	return out
}

// TestEInvoiceSchemaErrors: a mapping's mistakes are reported when the
// template is saved, at their paths.
func TestEInvoiceSchemaErrors(t *testing.T) {
	ex, _ := LoadExample(t, "einvoice")
	var schema map[string]any
	_ = json.Unmarshal(ex.Schema, &schema)
	e := schema["einvoice"].(map[string]any)
	e["profile"] = "zugferd"
	e["lines"].(map[string]any)["quantity"] = "item.quantity +"
	e["vatExemptionReasons"] = map[string]any{"B": "'split payment'"}
	schema["pdfa"] = "2b"
	raw, _ := json.Marshal(schema)
	def := ex.Definition
	def.Schema = raw
	_, err := MustEngine(t).Compile(def)
	var se *SchemaError
	if !errors.As(err, &se) {
		t.Fatalf("compile: %v", err)
	}
	got := map[string]bool{}
	for _, is := range se.Issues {
		got[is.Path] = true
	}
	for _, want := range []string{"schema.einvoice.profile", "schema.einvoice.lines.quantity", "schema.einvoice.vatExemptionReasons.B"} {
		if !got[want] {
			t.Errorf("no issue at %s: %v", want, se.Issues)
		}
	}
	named := ex.Definition
	named.Constants = map[string]any{"einvoice": 1, "company": ex.Definition.Constants["company"]}
	if _, err := MustEngine(t).Compile(named); err == nil || !strings.Contains(err.Error(), "computed invoice") {
		t.Errorf("a constant named einvoice: %v", err)
	}
	e["profile"] = "factur-x-basic"
	e["lines"].(map[string]any)["quantity"] = "item.quantity"
	delete(e, "vatExemptionReasons")
	raw, _ = json.Marshal(schema)
	def.Schema = raw
	if _, err := MustEngine(t).Compile(def); err == nil || !strings.Contains(err.Error(), "schema.pdfa") {
		t.Errorf("Factur-X with pdfa 2b: %v", err)
	}
}
