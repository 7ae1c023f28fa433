package render

import (
	"fmt"
	"math/big"
	"regexp"
	"strings"
)

// The EN 16931 business rules (and XRechnung's BR-DE rules) that apply to
// the terms Folio maps, checked in Go before an e-invoice is delivered.
// The official Schematron (ConnectingEurope/eInvoicing-EN16931) checks the
// same XML in the tests; each rule here carries its official id, so the
// two can be compared (einvoice_test.go).

// ruleChecker collects violations.
type ruleChecker struct {
	inv *einvoice
	out []Violation
}

// fail records that rule is broken at field (a mapping path).
func (r *ruleChecker) fail(rule, term, field, format string, args ...any) {
	v := Violation{Rule: rule, Term: term, Field: field, Message: fmt.Sprintf(format, args...)}
	if x := r.inv.src[field]; x != nil {
		v.Expression = x.src
	}
	r.out = append(r.out, v)
}

// required fails rule when value is empty.
func (r *ruleChecker) required(rule, term, field, value, what string) {
	if strings.TrimSpace(value) == "" {
		r.fail(rule, term, field, "%s (%s) is required: map %s to it", what, term, field)
	}
}

var (
	vatPrefix   = regexp.MustCompile(`^[A-Z]{2}`)
	countryCode = regexp.MustCompile(`^[A-Z]{2}$`)
	isoCurrency = regexp.MustCompile(`^[A-Z]{3}$`)
	ibanShape   = regexp.MustCompile(`^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$`)
)

// invoiceTypeCodes are the UNTDID 1001 codes EN 16931 allows for an
// invoice (BR-CL-01), the usual ones; credit notes are 381 (and 396, 532).
var invoiceTypeCodes = map[string]bool{"380": true, "381": true, "383": true, "384": true, "386": true, "389": true,
	"326": true, "751": true, "875": true, "876": true, "877": true, "396": true, "532": true}

// xrechnungTypeCodes are those BR-DE-17 allows.
var xrechnungTypeCodes = map[string]bool{"326": true, "380": true, "384": true, "389": true, "381": true, "875": true, "876": true, "877": true}

// checkEInvoice returns every rule inv breaks.
func checkEInvoice(inv *einvoice) []Violation {
	r := &ruleChecker{inv: inv}
	r.out = append(r.out, inv.problems...)
	const p = "einvoice."
	r.required("BR-02", "BT-1", p+"number", inv.number, "The invoice number")
	r.required("BR-03", "BT-2", p+"issueDate", inv.issueDate, "The invoice issue date")
	if !invoiceTypeCodes[inv.typeCode] {
		r.fail("BR-CL-01", "BT-3", p+"typeCode", "The invoice type code %q is not an UNTDID 1001 invoice code (380 invoice, 381 credit note, 384 corrected invoice, 389 self-billed, ...)", inv.typeCode)
	}
	if inv.currency == "" {
		r.fail("BR-05", "BT-5", p+"currency", "The invoice currency code (BT-5) is required: map einvoice.currency to it")
	} else if !isoCurrency.MatchString(inv.currency) {
		r.fail("BR-CL-04", "BT-5", p+"currency", "The invoice currency %q must be an ISO 4217 code such as EUR", inv.currency)
	}
	s, b := inv.seller, inv.buyer
	r.required("BR-06", "BT-27", p+"seller.name", s.name, "The seller name")
	r.required("BR-07", "BT-44", p+"buyer.name", b.name, "The buyer name")
	// BR-08/BR-10 (postal address groups) always exist in the XML; their
	// country codes are what the rules require.
	r.required("BR-09", "BT-40", p+"seller.country", s.country, "The seller country code")
	r.required("BR-11", "BT-55", p+"buyer.country", b.country, "The buyer country code")
	for _, c := range []struct{ field, term, value string }{{p + "seller.country", "BT-40", s.country}, {p + "buyer.country", "BT-55", b.country}} {
		if c.value != "" && !countryCode.MatchString(c.value) {
			r.fail("BR-CL-14", c.term, c.field, "The country code %q must be an ISO 3166-1 alpha-2 code such as DE", c.value)
		}
	}
	if len(inv.lines) == 0 {
		r.fail("BR-16", "BG-25", p+"lines", "An invoice has at least one line: einvoice.lines.each gave none")
	}
	for i, ln := range inv.lines {
		f := fmt.Sprintf("%slines[%d].", p, i)
		r.required("BR-25", "BT-153", f+"name", ln.name, "The item name")
		if ln.quantity == nil {
			r.fail("BR-22", "BT-129", f+"quantity", "The invoiced quantity (BT-129) is required: map einvoice.lines.quantity to it")
		}
		if ln.price == nil {
			r.fail("BR-26", "BT-146", f+"price", "The item net price (BT-146) is required: map einvoice.lines.price to it")
		} else if ln.price.Sign() < 0 {
			r.fail("BR-27", "BT-146", f+"price", "The item net price (BT-146) must not be negative (it is %s)", decPlain(ln.price, 6))
		}
		r.checkCategory(ln.category, ln.rate, f+"vatCategory", f+"vatRate", "BT-151", "BT-152")
	}
	for i, ac := range inv.charges {
		f := fmt.Sprintf("%sallowancesCharges[%d].", p, i)
		if ac.amount == nil {
			rule, term := "BR-41", "BT-92"
			if ac.charge {
				rule, term = "BR-36", "BT-99"
			}
			r.fail(rule, term, f+"amount", "The allowance or charge amount (%s) is required", term)
		}
		if ac.reason == "" && ac.reasonCd == "" {
			rule, term := "BR-33", "BT-97"
			if ac.charge {
				rule, term = "BR-38", "BT-104"
			}
			r.fail(rule, term, f+"reason", "An allowance or charge needs a reason (%s) or a reason code", term)
		}
		r.checkCategory(ac.category, ac.rate, f+"vatCategory", f+"vatRate", "BT-95", "BT-96")
	}
	// Seller VAT identifiers: BR-CO-09 (country prefix).
	for _, c := range []struct{ field, term, value string }{{p + "seller.vatId", "BT-31", s.vatID}, {p + "buyer.vatId", "BT-48", b.vatID}} {
		if c.value != "" && !vatPrefix.MatchString(c.value) {
			r.fail("BR-CO-09", c.term, c.field, "The VAT identifier %q must start with an ISO 3166-1 alpha-2 country prefix (DE123456789)", c.value)
		}
	}
	// VAT categories present: BR-S-02, BR-Z-02, BR-E-02, BR-AE-02...
	cats := map[string]bool{}
	for _, g := range inv.vat {
		cats[g.category] = true
	}
	sellerTaxID := s.vatID != "" || s.taxNumber != ""
	for _, c := range []struct{ cat, rule string }{{"S", "BR-S-02"}, {"Z", "BR-Z-02"}, {"E", "BR-E-02"}, {"L", "BR-AF-02"}, {"M", "BR-AG-02"}} {
		if cats[c.cat] && !sellerTaxID {
			r.fail(c.rule, "BT-31", p+"seller.vatId", "An invoice with VAT category %s needs the seller's VAT identifier (BT-31) or tax registration (BT-32)", c.cat)
		}
	}
	if cats["K"] {
		if s.vatID == "" {
			r.fail("BR-IC-02", "BT-31", p+"seller.vatId", "An intra-community supply (category K) needs the seller's VAT identifier (BT-31)")
		}
		if b.vatID == "" {
			r.fail("BR-IC-02", "BT-48", p+"buyer.vatId", "An intra-community supply (category K) needs the buyer's VAT identifier (BT-48)")
		}
		if inv.deliveryDate == "" {
			r.fail("BR-IC-11", "BT-72", p+"delivery.date", "An intra-community supply (category K) needs the actual delivery date (BT-72): map einvoice.delivery.date to it")
		}
		if inv.deliveryCountry == "" {
			r.fail("BR-IC-12", "BT-80", p+"delivery.country", "An intra-community supply (category K) needs the deliver-to country code (BT-80): map einvoice.delivery.country to it")
		}
	}
	if inv.deliveryCountry != "" && !countryCode.MatchString(inv.deliveryCountry) {
		r.fail("BR-CL-14", "BT-80", p+"delivery.country", "The country code %q must be an ISO 3166-1 alpha-2 code such as DE", inv.deliveryCountry)
	}
	if cats["G"] && s.vatID == "" {
		r.fail("BR-G-02", "BT-31", p+"seller.vatId", "An export outside the EU (category G) needs the seller's VAT identifier (BT-31)")
	}
	if cats["O"] {
		if s.vatID != "" {
			r.fail("BR-O-02", "BT-31", p+"seller.vatId", "An invoice not subject to VAT (category O) must not carry the seller's VAT identifier (BT-31); map it to an empty value for such invoices")
		}
		if b.vatID != "" {
			r.fail("BR-O-02", "BT-48", p+"buyer.vatId", "An invoice not subject to VAT (category O) must not carry the buyer's VAT identifier (BT-48); map it to an empty value for such invoices")
		}
		if len(cats) > 1 {
			r.fail("BR-O-11", "BT-118", p+"lines", "An invoice not subject to VAT (category O) has no other VAT category: its lines, allowances and charges are all O")
		}
	}
	if cats["AE"] {
		if s.vatID == "" && s.taxNumber == "" {
			r.fail("BR-AE-02", "BT-31", p+"seller.vatId", "A reverse-charge invoice (category AE) needs the seller's VAT identifier (BT-31)")
		}
		if b.vatID == "" && b.legalID == "" {
			r.fail("BR-AE-02", "BT-48", p+"buyer.vatId", "A reverse-charge invoice (category AE) needs the buyer's VAT identifier (BT-48)")
		}
	}
	// Exemption reasons on the breakdown: BR-E-10, BR-AE-10, BR-IC-10,
	// BR-G-10, BR-O-10; none on S, Z, L, M (BR-S-10, BR-Z-10, BR-AF-10, BR-AG-10).
	for _, g := range inv.vat {
		f := p + "vatExemptionReasons." + g.category
		switch g.category {
		case "E", "AE", "K", "G", "O":
			if g.exemptionReason == "" {
				r.fail(categoryRule(g.category)+"-10", "BT-120", f, "A VAT breakdown of category %s needs an exemption reason (BT-120): map einvoice.vatExemptionReasons.%s", g.category, g.category)
			}
		case "S", "Z", "L", "M":
			if g.exemptionReason != "" {
				r.fail(categoryRule(g.category)+"-10", "BT-120", f, "A VAT breakdown of category %s must not have an exemption reason (BT-120)", g.category)
			}
		}
	}
	// Totals: the sums hold by construction; these guard the computation.
	sum := decInt(0)
	for _, ln := range inv.lines {
		if ln.net != nil {
			sum = decAdd(sum, ln.net)
		}
	}
	if sum.Cmp(inv.lineTotal) != 0 {
		r.fail("BR-CO-10", "BT-106", p+"lines", "The sum of line net amounts %s differs from the line total %s", decString(sum, 2), decString(inv.lineTotal, 2))
	}
	if decAdd(inv.taxExclusive, inv.taxTotal).Cmp(inv.grandTotal) != 0 {
		r.fail("BR-CO-15", "BT-112", p+"lines", "The grand total differs from the tax exclusive amount plus VAT")
	}
	// Payment.
	pay := inv.payment
	due := inv.payable.Sign() > 0
	if due && inv.dueDate == "" && inv.terms == "" {
		r.fail("BR-CO-25", "BT-9", p+"dueDate", "An invoice with an amount due needs a payment due date (BT-9) or payment terms (BT-20)")
	}
	if pay.meansCode != "" || pay.iban != "" {
		if pay.meansCode == "" {
			r.fail("BR-49", "BT-81", p+"payment.meansCode", "The payment means type code (BT-81) is required")
		}
		if (pay.meansCode == "30" || pay.meansCode == "58") && pay.iban == "" {
			r.fail("BR-61", "BT-84", p+"payment.iban", "A credit transfer (payment means %s) needs the payee's account (IBAN, BT-84)", pay.meansCode)
		}
		if pay.iban != "" && !ibanShape.MatchString(pay.iban) {
			r.fail("BR-CO-27", "BT-84", p+"payment.iban", "%q is not an IBAN", pay.iban)
		}
	}
	if s.legalID == "" && s.vatID == "" {
		r.fail("BR-CO-26", "BT-31", p+"seller.vatId", "The seller needs a VAT identifier (BT-31) or a legal registration identifier (BT-30)")
	}
	if inv.profile == ProfileXRechnungCII {
		r.xrechnung()
	}
	return r.out
}

// categoryRule is the prefix of the EN 16931 rules of a VAT category:
// BR-S, BR-Z, BR-E, BR-AE, BR-IC (K), BR-G, BR-O, BR-AF (L), BR-AG (M).
func categoryRule(cat string) string {
	switch cat {
	case "K":
		return "BR-IC"
	case "L":
		return "BR-AF"
	case "M":
		return "BR-AG"
	}
	return "BR-" + cat
}

// checkCategory checks a line's or an allowance's VAT category and rate:
// BR-S-05, BR-AF-05 and BR-AG-05 (a rate above zero), BR-O-05 (no rate: Folio writes none, so only another value is
// wrong), BR-Z-05, BR-E-05, BR-AE-05, BR-IC-05, BR-G-05 (zero).
func (r *ruleChecker) checkCategory(cat string, rate dec, catField, rateField, catTerm, rateTerm string) {
	if !contains(vatCategories, cat) {
		r.fail("BR-CL-17", catTerm, catField, "The VAT category %q is not one Folio writes (%s: standard, zero rated, exempt, reverse charge, intra-community supply, export outside the EU, not subject to VAT, Canary Islands IGIC, Ceuta and Melilla IPSI)", cat, strings.Join(vatCategories, ", "))
		return
	}
	switch cat {
	case "S", "L", "M":
		if rate == nil || rate.Sign() <= 0 {
			r.fail(categoryRule(cat)+"-05", rateTerm, rateField, "A line of category %s needs a VAT rate above zero (%s)", cat, rateTerm)
		}
		return
	case "O":
		if rate != nil && rate.Sign() != 0 {
			r.fail("BR-O-05", rateTerm, rateField, "A line not subject to VAT (category O) has no VAT rate, not %s", decPlain(rate, 4))
		}
		return
	}
	if rate != nil && rate.Cmp(new(big.Rat)) != 0 {
		r.fail(categoryRule(cat)+"-05", rateTerm, rateField, "A line of category %s has a VAT rate of 0, not %s", cat, decPlain(rate, 4))
	}
}

// xrechnung checks XRechnung 3.0's BR-DE rules for the terms Folio writes.
func (r *ruleChecker) xrechnung() {
	inv := r.inv
	const p = "einvoice."
	s, b := inv.seller, inv.buyer
	if inv.payment.meansCode == "" && inv.payment.iban == "" {
		r.fail("BR-DE-1", "BG-16", p+"payment", "XRechnung needs payment instructions (BG-16): map einvoice.payment.iban (and meansCode)")
	}
	if s.contactName == "" && s.contactPhone == "" && s.contactEmail == "" {
		r.fail("BR-DE-2", "BG-6", p+"seller.contactName", "XRechnung needs the seller's contact (BG-6)")
	}
	r.required("BR-DE-3", "BT-37", p+"seller.city", s.city, "XRechnung: the seller's city")
	r.required("BR-DE-4", "BT-38", p+"seller.postcode", s.postcode, "XRechnung: the seller's post code")
	r.required("BR-DE-5", "BT-41", p+"seller.contactName", s.contactName, "XRechnung: the seller's contact point")
	r.required("BR-DE-6", "BT-42", p+"seller.contactPhone", s.contactPhone, "XRechnung: the seller's contact telephone number")
	r.required("BR-DE-7", "BT-43", p+"seller.contactEmail", s.contactEmail, "XRechnung: the seller's contact email address")
	r.required("BR-DE-8", "BT-52", p+"buyer.city", b.city, "XRechnung: the buyer's city")
	r.required("BR-DE-9", "BT-53", p+"buyer.postcode", b.postcode, "XRechnung: the buyer's post code")
	r.required("BR-DE-15", "BT-10", p+"buyerReference", inv.buyerReference, "XRechnung: the buyer reference (Leitweg-ID)")
	if !xrechnungTypeCodes[inv.typeCode] {
		r.fail("BR-DE-17", "BT-3", p+"typeCode", "XRechnung allows the invoice type codes 326, 380, 384, 389, 381, 875, 876 and 877, not %q", inv.typeCode)
	}
	taxed := false // BR-DE-16 names every category but O
	for _, g := range inv.vat {
		taxed = taxed || g.category != "O"
	}
	if taxed && s.vatID == "" && s.taxNumber == "" {
		r.fail("BR-DE-16", "BT-31", p+"seller.vatId", "XRechnung: with VAT categories S, Z, E, AE, K, G, L or M the seller's VAT identifier (BT-31) or tax number (BT-32) is required")
	}
	if inv.deliveryCountry != "" || inv.deliveryCity != "" || inv.deliveryPostcode != "" {
		r.required("BR-DE-10", "BT-77", p+"delivery.city", inv.deliveryCity, "XRechnung: with a deliver-to address, its city")
		r.required("BR-DE-11", "BT-78", p+"delivery.postcode", inv.deliveryPostcode, "XRechnung: with a deliver-to address, its post code")
	}
	if inv.payment.meansCode == "58" && inv.payment.iban == "" {
		r.fail("BR-DE-23-a", "BT-84", p+"payment.iban", "XRechnung: a SEPA credit transfer needs the IBAN (BT-84)")
	}
	if inv.payment.iban != "" && !ibanValid(inv.payment.iban) {
		r.fail("BR-DE-19", "BT-84", p+"payment.iban", "%q is not a valid IBAN (its check digits are wrong)", inv.payment.iban)
	}
}

// ibanValid checks an IBAN's check digits (ISO 13616, mod 97).
func ibanValid(iban string) bool {
	if !ibanShape.MatchString(iban) {
		return false
	}
	s := iban[4:] + iban[:4]
	rem := 0
	for _, c := range s {
		var v int
		switch {
		case c >= '0' && c <= '9':
			v = int(c - '0')
			rem = (rem*10 + v) % 97
		case c >= 'A' && c <= 'Z':
			v = int(c-'A') + 10
			rem = (rem*100 + v) % 97
		default:
			return false
		}
	}
	return rem == 1
}
