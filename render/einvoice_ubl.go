package render

// ubl writes the invoice as an OASIS UBL 2.1 Invoice (a CreditNote for
// type code 381), in the element order of the UBL 2.1 XML Schema.
func (inv *einvoice) ubl() []byte {
	credit := inv.typeCode == "381"
	root, line, qty, typeEl := "Invoice", "cac:InvoiceLine", "cbc:InvoicedQuantity", "cbc:InvoiceTypeCode"
	if credit {
		root, line, qty, typeEl = "CreditNote", "cac:CreditNoteLine", "cbc:CreditedQuantity", "cbc:CreditNoteTypeCode"
	}
	w := &xmlWriter{}
	cur := inv.currency
	w.b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	w.open(root,
		"xmlns", "urn:oasis:names:specification:ubl:schema:xsd:"+root+"-2",
		"xmlns:cac", "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2",
		"xmlns:cbc", "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2")
	w.leaf("cbc:CustomizationID", guidelineEN16931)
	w.leaf("cbc:ID", inv.number)
	w.leaf("cbc:IssueDate", inv.issueDate)
	if !credit {
		w.opt("cbc:DueDate", inv.dueDate)
	}
	w.leaf(typeEl, inv.typeCode)
	for _, n := range inv.notes {
		w.leaf("cbc:Note", n)
	}
	w.leaf("cbc:DocumentCurrencyCode", cur)
	w.opt("cbc:BuyerReference", inv.buyerReference)
	if inv.orderReference != "" {
		w.open("cac:OrderReference")
		w.leaf("cbc:ID", inv.orderReference)
		w.close("cac:OrderReference")
	}
	if inv.precedingInvoice != "" {
		w.open("cac:BillingReference")
		w.open("cac:InvoiceDocumentReference")
		w.leaf("cbc:ID", inv.precedingInvoice)
		w.close("cac:InvoiceDocumentReference")
		w.close("cac:BillingReference")
	}
	w.open("cac:AccountingSupplierParty")
	ublParty(w, inv.seller, true)
	w.close("cac:AccountingSupplierParty")
	w.open("cac:AccountingCustomerParty")
	ublParty(w, inv.buyer, false)
	w.close("cac:AccountingCustomerParty")
	if inv.deliveryDate != "" || inv.deliveryCountry != "" {
		w.open("cac:Delivery")
		w.opt("cbc:ActualDeliveryDate", inv.deliveryDate)
		if inv.deliveryCountry != "" {
			w.open("cac:DeliveryLocation")
			w.open("cac:Address")
			w.opt("cbc:CityName", inv.deliveryCity)
			w.opt("cbc:PostalZone", inv.deliveryPostcode)
			w.open("cac:Country")
			w.leaf("cbc:IdentificationCode", inv.deliveryCountry)
			w.close("cac:Country")
			w.close("cac:Address")
			w.close("cac:DeliveryLocation")
		}
		w.close("cac:Delivery")
	}
	if pay := inv.payment; pay.meansCode != "" {
		w.open("cac:PaymentMeans")
		w.leaf("cbc:PaymentMeansCode", pay.meansCode)
		if credit {
			w.opt("cbc:PaymentDueDate", inv.dueDate)
		}
		w.opt("cbc:PaymentID", pay.reference)
		if pay.iban != "" {
			w.open("cac:PayeeFinancialAccount")
			w.leaf("cbc:ID", pay.iban)
			w.opt("cbc:Name", pay.accountName)
			if pay.bic != "" {
				w.open("cac:FinancialInstitutionBranch")
				w.leaf("cbc:ID", pay.bic)
				w.close("cac:FinancialInstitutionBranch")
			}
			w.close("cac:PayeeFinancialAccount")
		}
		w.close("cac:PaymentMeans")
	}
	if inv.terms != "" {
		w.open("cac:PaymentTerms")
		w.leaf("cbc:Note", inv.terms)
		w.close("cac:PaymentTerms")
	}
	for _, ac := range inv.charges {
		w.open("cac:AllowanceCharge")
		w.leaf("cbc:ChargeIndicator", boolText(ac.charge))
		w.opt("cbc:AllowanceChargeReasonCode", ac.reasonCd)
		w.opt("cbc:AllowanceChargeReason", ac.reason)
		w.leaf("cbc:Amount", amount(ac.amount), "currencyID", cur)
		ublTaxCategory(w, "cac:TaxCategory", ac.category, rateOrZero(ac.rate), "", false)
		w.close("cac:AllowanceCharge")
	}
	w.open("cac:TaxTotal")
	w.leaf("cbc:TaxAmount", amount(inv.taxTotal), "currencyID", cur)
	for _, g := range inv.vat {
		w.open("cac:TaxSubtotal")
		w.leaf("cbc:TaxableAmount", amount(g.base), "currencyID", cur)
		w.leaf("cbc:TaxAmount", amount(g.amount), "currencyID", cur)
		ublTaxCategory(w, "cac:TaxCategory", g.category, g.rate, g.exemptionReason, true)
		w.close("cac:TaxSubtotal")
	}
	w.close("cac:TaxTotal")
	w.open("cac:LegalMonetaryTotal")
	w.leaf("cbc:LineExtensionAmount", amount(inv.lineTotal), "currencyID", cur)
	w.leaf("cbc:TaxExclusiveAmount", amount(inv.taxExclusive), "currencyID", cur)
	w.leaf("cbc:TaxInclusiveAmount", amount(inv.grandTotal), "currencyID", cur)
	if len(inv.charges) > 0 {
		w.leaf("cbc:AllowanceTotalAmount", amount(inv.allowanceTotal), "currencyID", cur)
		w.leaf("cbc:ChargeTotalAmount", amount(inv.chargeTotal), "currencyID", cur)
	}
	if inv.hasPrepaid {
		w.leaf("cbc:PrepaidAmount", amount(inv.prepaid), "currencyID", cur)
	}
	w.leaf("cbc:PayableAmount", amount(inv.payable), "currencyID", cur)
	w.close("cac:LegalMonetaryTotal")
	for _, ln := range inv.lines {
		w.open(line)
		w.leaf("cbc:ID", ln.id)
		w.opt("cbc:Note", ln.note)
		w.leaf(qty, decPlainMin(ln.quantity, 0, 6), "unitCode", ln.unitCode)
		w.leaf("cbc:LineExtensionAmount", amount(ln.net), "currencyID", cur)
		w.open("cac:Item")
		w.opt("cbc:Description", ln.description)
		w.leaf("cbc:Name", ln.name)
		ublTaxCategory(w, "cac:ClassifiedTaxCategory", ln.category, rateOrZero(ln.rate), "", false)
		w.close("cac:Item")
		w.open("cac:Price")
		w.leaf("cbc:PriceAmount", decPlainMin(ln.price, 2, 6), "currencyID", cur)
		w.close("cac:Price")
		w.close(line)
	}
	w.close(root)
	return w.b.Bytes()
}

// ublTaxCategory writes a tax category; breakdown is true for the VAT
// breakdown's (BG-23), which has a rate even for O (BR-O-05 to 07 forbid
// one on lines, allowances and charges only).
func ublTaxCategory(w *xmlWriter, name, cat string, rate dec, reason string, breakdown bool) {
	w.open(name)
	w.leaf("cbc:ID", cat)
	if cat != "O" || breakdown {
		w.leaf("cbc:Percent", decPlainMin(rate, 0, 4))
	}
	w.opt("cbc:TaxExemptionReason", reason)
	w.open("cac:TaxScheme")
	w.leaf("cbc:ID", "VAT")
	w.close("cac:TaxScheme")
	w.close(name)
}

func ublParty(w *xmlWriter, p party, seller bool) {
	w.open("cac:Party")
	if p.endpoint != "" {
		w.leaf("cbc:EndpointID", p.endpoint, "schemeID", p.endpointScheme)
	}
	w.open("cac:PostalAddress")
	w.opt("cbc:StreetName", p.street)
	w.opt("cbc:AdditionalStreetName", p.street2)
	w.opt("cbc:CityName", p.city)
	w.opt("cbc:PostalZone", p.postcode)
	w.open("cac:Country")
	w.leaf("cbc:IdentificationCode", p.country)
	w.close("cac:Country")
	w.close("cac:PostalAddress")
	if p.vatID != "" {
		w.open("cac:PartyTaxScheme")
		w.leaf("cbc:CompanyID", p.vatID)
		w.open("cac:TaxScheme")
		w.leaf("cbc:ID", "VAT")
		w.close("cac:TaxScheme")
		w.close("cac:PartyTaxScheme")
	}
	if p.taxNumber != "" && seller {
		w.open("cac:PartyTaxScheme")
		w.leaf("cbc:CompanyID", p.taxNumber)
		w.open("cac:TaxScheme")
		w.leaf("cbc:ID", "FC")
		w.close("cac:TaxScheme")
		w.close("cac:PartyTaxScheme")
	}
	w.open("cac:PartyLegalEntity")
	w.leaf("cbc:RegistrationName", p.name)
	w.opt("cbc:CompanyID", p.legalID)
	w.close("cac:PartyLegalEntity")
	if p.contactName != "" || p.contactPhone != "" || p.contactEmail != "" {
		w.open("cac:Contact")
		w.opt("cbc:Name", p.contactName)
		w.opt("cbc:Telephone", p.contactPhone)
		w.opt("cbc:ElectronicMail", p.contactEmail)
		w.close("cac:Contact")
	}
	w.close("cac:Party")
}
