package render

import (
	"bytes"
	"strings"
)

// Guideline (specification) identifiers, BT-24.
const (
	guidelineEN16931  = "urn:cen.eu:en16931:2017"
	guidelineBasic    = "urn:cen.eu:en16931:2017#compliant#urn:factur-x.eu:1p0:basic"
	guidelineXRechnun = "urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0"
)

// xmlWriter writes indented XML elements.
type xmlWriter struct {
	b     bytes.Buffer
	depth int
}

func (w *xmlWriter) indent() { w.b.WriteString(strings.Repeat("  ", w.depth)) }

// open starts an element; attrs are name, value pairs.
func (w *xmlWriter) open(name string, attrs ...string) {
	w.indent()
	w.b.WriteString("<" + name)
	w.attrs(attrs)
	w.b.WriteString(">\n")
	w.depth++
}

func (w *xmlWriter) close(name string) {
	w.depth--
	w.indent()
	w.b.WriteString("</" + name + ">\n")
}

func (w *xmlWriter) attrs(attrs []string) {
	for i := 0; i+1 < len(attrs); i += 2 {
		w.b.WriteString(" " + attrs[i] + `="` + xmlText(attrs[i+1]) + `"`)
	}
}

// leaf writes <name attrs>text</name>.
func (w *xmlWriter) leaf(name, text string, attrs ...string) {
	w.indent()
	w.b.WriteString("<" + name)
	w.attrs(attrs)
	w.b.WriteString(">" + xmlText(text) + "</" + name + ">\n")
}

// opt writes a leaf when text is not empty.
func (w *xmlWriter) opt(name, text string, attrs ...string) {
	if text != "" {
		w.leaf(name, text, attrs...)
	}
}

func ciiDate(d string) string { return strings.ReplaceAll(d, "-", "") }

// cii writes the invoice as UN/CEFACT Cross Industry Invoice D16B (the
// syntax of Factur-X and XRechnung CII), in the element order of the
// D16B XML Schema.
func (inv *einvoice) cii() []byte {
	w := &xmlWriter{}
	w.b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	w.open("rsm:CrossIndustryInvoice",
		"xmlns:rsm", "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100",
		"xmlns:qdt", "urn:un:unece:uncefact:data:standard:QualifiedDataType:100",
		"xmlns:ram", "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100",
		"xmlns:udt", "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100")
	w.open("rsm:ExchangedDocumentContext")
	w.open("ram:GuidelineSpecifiedDocumentContextParameter")
	guideline := guidelineEN16931
	switch inv.profile {
	case ProfileFacturXBasic:
		guideline = guidelineBasic
	case ProfileXRechnungCII:
		guideline = guidelineXRechnun
	}
	w.leaf("ram:ID", guideline)
	w.close("ram:GuidelineSpecifiedDocumentContextParameter")
	w.close("rsm:ExchangedDocumentContext")

	w.open("rsm:ExchangedDocument")
	w.leaf("ram:ID", inv.number)
	w.leaf("ram:TypeCode", inv.typeCode)
	w.open("ram:IssueDateTime")
	w.leaf("udt:DateTimeString", ciiDate(inv.issueDate), "format", "102")
	w.close("ram:IssueDateTime")
	for _, n := range inv.notes {
		w.open("ram:IncludedNote")
		w.leaf("ram:Content", n)
		w.close("ram:IncludedNote")
	}
	w.close("rsm:ExchangedDocument")

	w.open("rsm:SupplyChainTradeTransaction")
	for _, ln := range inv.lines {
		w.open("ram:IncludedSupplyChainTradeLineItem")
		w.open("ram:AssociatedDocumentLineDocument")
		w.leaf("ram:LineID", ln.id)
		if ln.note != "" && inv.profile != ProfileFacturXBasic {
			w.open("ram:IncludedNote")
			w.leaf("ram:Content", ln.note)
			w.close("ram:IncludedNote")
		}
		w.close("ram:AssociatedDocumentLineDocument")
		w.open("ram:SpecifiedTradeProduct")
		w.leaf("ram:Name", ln.name)
		if inv.profile != ProfileFacturXBasic {
			w.opt("ram:Description", ln.description)
		}
		w.close("ram:SpecifiedTradeProduct")
		w.open("ram:SpecifiedLineTradeAgreement")
		w.open("ram:NetPriceProductTradePrice")
		w.leaf("ram:ChargeAmount", decPlainMin(ln.price, 2, 6))
		w.close("ram:NetPriceProductTradePrice")
		w.close("ram:SpecifiedLineTradeAgreement")
		w.open("ram:SpecifiedLineTradeDelivery")
		w.leaf("ram:BilledQuantity", decPlainMin(ln.quantity, 0, 6), "unitCode", ln.unitCode)
		w.close("ram:SpecifiedLineTradeDelivery")
		w.open("ram:SpecifiedLineTradeSettlement")
		w.open("ram:ApplicableTradeTax")
		w.leaf("ram:TypeCode", "VAT")
		w.leaf("ram:CategoryCode", ln.category)
		if ln.category != "O" { // BR-O-05: no rate
			w.leaf("ram:RateApplicablePercent", decPlainMin(rateOrZero(ln.rate), 0, 4))
		}
		w.close("ram:ApplicableTradeTax")
		w.open("ram:SpecifiedTradeSettlementLineMonetarySummation")
		w.leaf("ram:LineTotalAmount", amount(ln.net))
		w.close("ram:SpecifiedTradeSettlementLineMonetarySummation")
		w.close("ram:SpecifiedLineTradeSettlement")
		w.close("ram:IncludedSupplyChainTradeLineItem")
	}

	w.open("ram:ApplicableHeaderTradeAgreement")
	w.opt("ram:BuyerReference", inv.buyerReference)
	inv.ciiParty(w, "ram:SellerTradeParty", inv.seller, true)
	inv.ciiParty(w, "ram:BuyerTradeParty", inv.buyer, false)
	if inv.orderReference != "" {
		w.open("ram:BuyerOrderReferencedDocument")
		w.leaf("ram:IssuerAssignedID", inv.orderReference)
		w.close("ram:BuyerOrderReferencedDocument")
	}
	w.close("ram:ApplicableHeaderTradeAgreement")
	w.open("ram:ApplicableHeaderTradeDelivery")
	if inv.deliveryCountry != "" {
		w.open("ram:ShipToTradeParty")
		w.open("ram:PostalTradeAddress")
		w.opt("ram:PostcodeCode", inv.deliveryPostcode)
		w.opt("ram:CityName", inv.deliveryCity)
		w.leaf("ram:CountryID", inv.deliveryCountry)
		w.close("ram:PostalTradeAddress")
		w.close("ram:ShipToTradeParty")
	}
	if inv.deliveryDate != "" {
		w.open("ram:ActualDeliverySupplyChainEvent")
		w.open("ram:OccurrenceDateTime")
		w.leaf("udt:DateTimeString", ciiDate(inv.deliveryDate), "format", "102")
		w.close("ram:OccurrenceDateTime")
		w.close("ram:ActualDeliverySupplyChainEvent")
	}
	w.close("ram:ApplicableHeaderTradeDelivery")

	w.open("ram:ApplicableHeaderTradeSettlement")
	w.opt("ram:PaymentReference", inv.payment.reference)
	w.leaf("ram:InvoiceCurrencyCode", inv.currency)
	if pay := inv.payment; pay.meansCode != "" {
		w.open("ram:SpecifiedTradeSettlementPaymentMeans")
		w.leaf("ram:TypeCode", pay.meansCode)
		if pay.iban != "" {
			w.open("ram:PayeePartyCreditorFinancialAccount")
			w.leaf("ram:IBANID", pay.iban)
			if inv.profile != ProfileFacturXBasic { // BT-85 is not in BASIC
				w.opt("ram:AccountName", pay.accountName)
			}
			w.close("ram:PayeePartyCreditorFinancialAccount")
		}
		if pay.bic != "" && inv.profile != ProfileFacturXBasic {
			w.open("ram:PayeeSpecifiedCreditorFinancialInstitution")
			w.leaf("ram:BICID", pay.bic)
			w.close("ram:PayeeSpecifiedCreditorFinancialInstitution")
		}
		w.close("ram:SpecifiedTradeSettlementPaymentMeans")
	}
	for _, g := range inv.vat {
		w.open("ram:ApplicableTradeTax")
		w.leaf("ram:CalculatedAmount", amount(g.amount))
		w.leaf("ram:TypeCode", "VAT")
		w.opt("ram:ExemptionReason", g.exemptionReason)
		w.leaf("ram:BasisAmount", amount(g.base))
		w.leaf("ram:CategoryCode", g.category)
		// BR-48 would allow no rate for O; XRechnung's BR-DE-14 wants one.
		w.leaf("ram:RateApplicablePercent", decPlainMin(g.rate, 0, 4))
		w.close("ram:ApplicableTradeTax")
	}
	for _, ac := range inv.charges {
		w.open("ram:SpecifiedTradeAllowanceCharge")
		w.open("ram:ChargeIndicator")
		w.leaf("udt:Indicator", boolText(ac.charge))
		w.close("ram:ChargeIndicator")
		w.leaf("ram:ActualAmount", amount(ac.amount))
		w.opt("ram:ReasonCode", ac.reasonCd)
		w.opt("ram:Reason", ac.reason)
		w.open("ram:CategoryTradeTax")
		w.leaf("ram:TypeCode", "VAT")
		w.leaf("ram:CategoryCode", ac.category)
		if ac.category != "O" { // BR-O-06, BR-O-07: no rate
			w.leaf("ram:RateApplicablePercent", decPlainMin(rateOrZero(ac.rate), 0, 4))
		}
		w.close("ram:CategoryTradeTax")
		w.close("ram:SpecifiedTradeAllowanceCharge")
	}
	if inv.terms != "" || inv.dueDate != "" {
		w.open("ram:SpecifiedTradePaymentTerms")
		w.opt("ram:Description", inv.terms)
		if inv.dueDate != "" {
			w.open("ram:DueDateDateTime")
			w.leaf("udt:DateTimeString", ciiDate(inv.dueDate), "format", "102")
			w.close("ram:DueDateDateTime")
		}
		w.close("ram:SpecifiedTradePaymentTerms")
	}
	w.open("ram:SpecifiedTradeSettlementHeaderMonetarySummation")
	w.leaf("ram:LineTotalAmount", amount(inv.lineTotal))
	if len(inv.charges) > 0 {
		w.leaf("ram:ChargeTotalAmount", amount(inv.chargeTotal))
		w.leaf("ram:AllowanceTotalAmount", amount(inv.allowanceTotal))
	}
	w.leaf("ram:TaxBasisTotalAmount", amount(inv.taxExclusive))
	w.leaf("ram:TaxTotalAmount", amount(inv.taxTotal), "currencyID", inv.currency)
	w.leaf("ram:GrandTotalAmount", amount(inv.grandTotal))
	if inv.hasPrepaid {
		w.leaf("ram:TotalPrepaidAmount", amount(inv.prepaid))
	}
	w.leaf("ram:DuePayableAmount", amount(inv.payable))
	w.close("ram:SpecifiedTradeSettlementHeaderMonetarySummation")
	if inv.precedingInvoice != "" {
		w.open("ram:InvoiceReferencedDocument")
		w.leaf("ram:IssuerAssignedID", inv.precedingInvoice)
		w.close("ram:InvoiceReferencedDocument")
	}
	w.close("ram:ApplicableHeaderTradeSettlement")
	w.close("rsm:SupplyChainTradeTransaction")
	w.close("rsm:CrossIndustryInvoice")
	return w.b.Bytes()
}

// ciiParty writes a seller or buyer trade party.
func (inv *einvoice) ciiParty(w *xmlWriter, name string, p party, seller bool) {
	w.open(name)
	w.leaf("ram:Name", p.name)
	if p.legalID != "" {
		w.open("ram:SpecifiedLegalOrganization")
		w.leaf("ram:ID", p.legalID)
		w.close("ram:SpecifiedLegalOrganization")
	}
	// The seller's contact (BG-6) is not in BASIC.
	if (p.contactName != "" || p.contactPhone != "" || p.contactEmail != "") && inv.profile != ProfileFacturXBasic {
		w.open("ram:DefinedTradeContact")
		w.opt("ram:PersonName", p.contactName)
		if p.contactPhone != "" {
			w.open("ram:TelephoneUniversalCommunication")
			w.leaf("ram:CompleteNumber", p.contactPhone)
			w.close("ram:TelephoneUniversalCommunication")
		}
		if p.contactEmail != "" {
			w.open("ram:EmailURIUniversalCommunication")
			w.leaf("ram:URIID", p.contactEmail)
			w.close("ram:EmailURIUniversalCommunication")
		}
		w.close("ram:DefinedTradeContact")
	}
	w.open("ram:PostalTradeAddress")
	w.opt("ram:PostcodeCode", p.postcode)
	w.opt("ram:LineOne", p.street)
	w.opt("ram:LineTwo", p.street2)
	w.opt("ram:CityName", p.city)
	w.leaf("ram:CountryID", p.country)
	w.close("ram:PostalTradeAddress")
	if p.endpoint != "" {
		w.open("ram:URIUniversalCommunication")
		w.leaf("ram:URIID", p.endpoint, "schemeID", p.endpointScheme)
		w.close("ram:URIUniversalCommunication")
	}
	if p.taxNumber != "" && seller {
		w.open("ram:SpecifiedTaxRegistration")
		w.leaf("ram:ID", p.taxNumber, "schemeID", "FC")
		w.close("ram:SpecifiedTaxRegistration")
	}
	if p.vatID != "" {
		w.open("ram:SpecifiedTaxRegistration")
		w.leaf("ram:ID", p.vatID, "schemeID", "VA")
		w.close("ram:SpecifiedTaxRegistration")
	}
	w.close(name)
}

// amount writes an amount with two decimals ("" for none).
func amount(d dec) string {
	if d == nil {
		return "0.00"
	}
	return decString(d, 2)
}

// decPlainMin writes d with at least min and at most max decimals.
func decPlainMin(d dec, min, max int) string {
	if d == nil {
		d = decInt(0)
	}
	s := decPlain(d, max)
	if min > 0 {
		i := strings.IndexByte(s, '.')
		if i < 0 {
			s += "." + strings.Repeat("0", min)
		} else if n := len(s) - i - 1; n < min {
			s += strings.Repeat("0", min-n)
		}
	}
	return s
}

func rateOrZero(d dec) dec {
	if d == nil {
		return decInt(0)
	}
	return d
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
