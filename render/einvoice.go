package render

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"
)

// E-invoices (issue 23, docs/templates.md "E-invoices"): a schema's
// "einvoice" maps the template's variables to EN 16931 business terms.
// The amounts are computed once here, with exact decimal arithmetic
// (math/big), and the same computed values are what the template draws
// (the "einvoice" variable: lines with their net amounts, the VAT
// breakdown, the totals) and what the XML says (einvoice_cii.go,
// einvoice_ubl.go), after the EN 16931 rules have been checked
// (einvoice_rules.go).

// E-invoice profiles.
const (
	ProfileFacturXEN16931 = "factur-x-en16931"
	ProfileFacturXBasic   = "factur-x-basic"
	ProfileXRechnungCII   = "xrechnung-cii"
	ProfileUBL            = "ubl"
)

var einvoiceProfiles = []string{ProfileFacturXEN16931, ProfileFacturXBasic, ProfileXRechnungCII, ProfileUBL}

// XML is the format of an e-invoice delivered as XML alone.
const XML Format = "xml"

// facturX reports whether profile embeds its XML in a PDF/A-3.
func facturX(profile string) bool {
	return profile == ProfileFacturXEN16931 || profile == ProfileFacturXBasic
}

// ProfileDeliversXML reports whether a profile's e-invoice is an XML
// document of its own (XRechnung, UBL) rather than a PDF with the XML
// embedded (Factur-X).
func ProfileDeliversXML(profile string) bool {
	return profile == ProfileXRechnungCII || profile == ProfileUBL
}

// einvoiceSpec is a schema's "einvoice": the profile and, for every
// business term, the expression giving it.
type einvoiceSpec struct {
	profile string
	fields  map[string]*expression // top-level terms: number, issueDate, ...
	seller  map[string]*expression
	buyer   map[string]*expression
	payment map[string]*expression
	deliver map[string]*expression // delivery
	lines   *einvoiceList
	charges *einvoiceList          // allowancesCharges
	exempt  map[string]*expression // vatExemptionReasons by category
}

// einvoiceList is a repeated group: "each" yields the elements, bound to "as".
type einvoiceList struct {
	each   *expression
	as     string
	fields map[string]*expression
}

var (
	einvoiceTopKeys     = []string{"number", "issueDate", "typeCode", "currency", "dueDate", "buyerReference", "orderReference", "paymentTerms", "note", "prepaid", "precedingInvoice"}
	einvoicePartyKeys   = []string{"name", "street", "street2", "city", "postcode", "country", "vatId", "taxNumber", "legalId", "electronicAddress", "electronicAddressScheme", "contactName", "contactPhone", "contactEmail"}
	einvoicePaymentKeys = []string{"meansCode", "iban", "bic", "accountName", "reference"}
	einvoiceDeliverKeys = []string{"date", "city", "postcode", "country"}
	einvoiceLineKeys    = []string{"id", "name", "description", "quantity", "unitCode", "price", "vatCategory", "vatRate", "note"}
	einvoiceChargeKeys  = []string{"charge", "amount", "reason", "reasonCode", "vatCategory", "vatRate"}
)

// parseEInvoice reads the schema's "einvoice".
func (c *compiler) parseEInvoice(o object) *einvoiceSpec {
	if !o.present("einvoice") {
		return nil
	}
	const path = "schema.einvoice"
	m, ok := c.object(path, o.raw("einvoice"))
	if !ok {
		return nil
	}
	s := &einvoiceSpec{}
	if p, ok := c.str(m, path, "profile"); ok {
		s.profile = c.checkProfile(path+".profile", p)
	}
	s.fields = c.einvoiceFields(m, path, einvoiceTopKeys)
	for _, g := range []struct {
		key  string
		keys []string
		dst  *map[string]*expression
	}{{"seller", einvoicePartyKeys, &s.seller}, {"buyer", einvoicePartyKeys, &s.buyer}, {"payment", einvoicePaymentKeys, &s.payment},
		{"delivery", einvoiceDeliverKeys, &s.deliver}} {
		if !m.present(g.key) {
			*g.dst = map[string]*expression{}
			continue
		}
		if sub, ok := c.object(path+"."+g.key, m.raw(g.key)); ok {
			*g.dst = c.einvoiceFields(sub, path+"."+g.key, g.keys)
		}
	}
	if m.present("lines") {
		s.lines = c.einvoiceList(m, path, "lines", einvoiceLineKeys)
	} else {
		c.add(path+".lines", "is required: an expression list (\"each\") and the terms of each invoice line")
	}
	if m.present("allowancesCharges") {
		s.charges = c.einvoiceList(m, path, "allowancesCharges", einvoiceChargeKeys)
	}
	s.exempt = map[string]*expression{}
	if m.present("vatExemptionReasons") {
		if sub, ok := c.object(path+".vatExemptionReasons", m.raw("vatExemptionReasons")); ok {
			var cats []string
			for k := range sub.fields {
				cats = append(cats, k)
			}
			sort.Strings(cats)
			for _, cat := range cats {
				if !contains(vatCategories, cat) {
					c.add(path+".vatExemptionReasons."+cat, "is not a VAT category Folio supports (%s)", strings.Join(vatCategories, ", "))
					continue
				}
				if src, ok := c.str(sub, path+".vatExemptionReasons", cat); ok {
					s.exempt[cat] = c.compileExpr(path+".vatExemptionReasons."+cat, src)
				}
			}
		}
	}
	return s
}

func (c *compiler) checkProfile(path, p string) string {
	for _, want := range einvoiceProfiles {
		if strings.EqualFold(p, want) {
			return want
		}
	}
	c.add(path, "must be one of %s", strings.Join(einvoiceProfiles, ", "))
	return ""
}

// einvoiceFields compiles the expressions of keys found in o.
func (c *compiler) einvoiceFields(o object, path string, keys []string) map[string]*expression {
	out := map[string]*expression{}
	for _, k := range keys {
		src, ok := c.str(o, path, k)
		if !ok || strings.TrimSpace(src) == "" {
			continue
		}
		if x := c.compileExpr(path+"."+k, src); x != nil {
			out[k] = x
		}
	}
	return out
}

func (c *compiler) einvoiceList(m object, path, key string, keys []string) *einvoiceList {
	p := path + "." + key
	o, ok := c.object(p, m.raw(key))
	if !ok {
		return nil
	}
	l := &einvoiceList{as: defaultAs}
	src, ok := c.str(o, p, "each")
	if !ok {
		c.add(p+".each", "is required: the expression giving the list")
		return nil
	}
	l.each = c.compileExpr(p+".each", src)
	if as, ok := c.str(o, p, "as"); ok {
		if msg := checkName(as); msg != "" {
			c.add(p+".as", "%s", msg)
		}
		l.as = as
	}
	l.fields = c.einvoiceFields(o, p, keys)
	if l.each == nil {
		return nil
	}
	return l
}

// einvoiceRequest is a request's "einvoice": {profile} or false.
type einvoiceRequest struct {
	off     bool
	profile string
}

func (c *compiler) parseEInvoiceRequest(path string, raw json.RawMessage) *einvoiceRequest {
	var b bool
	if err := json.Unmarshal(raw, &b); err == nil {
		if b {
			c.add(path, "must be an object {\"profile\": ...} or false")
			return nil
		}
		return &einvoiceRequest{off: true}
	}
	o, ok := c.object(path, raw)
	if !ok {
		return nil
	}
	r := &einvoiceRequest{}
	if p, ok := c.str(o, path, "profile"); ok {
		if strings.EqualFold(p, "none") {
			return &einvoiceRequest{off: true}
		}
		r.profile = c.checkProfile(path+".profile", p)
	} else {
		c.add(path+".profile", "is required (%s, or \"none\")", strings.Join(einvoiceProfiles, ", "))
	}
	return r
}

// --- decimal arithmetic -------------------------------------------------

// dec is an exact decimal number.
type dec = *big.Rat

func decInt(n int64) dec { return new(big.Rat).SetInt64(n) }

func decAdd(a, b dec) dec { return new(big.Rat).Add(a, b) }
func decSub(a, b dec) dec { return new(big.Rat).Sub(a, b) }
func decMul(a, b dec) dec { return new(big.Rat).Mul(a, b) }

// decRound rounds r to places decimals, halves away from zero (EN 16931
// amounts have two).
func decRound(r dec, places int) dec {
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(places)), nil)
	n := new(big.Int).Mul(r.Num(), scale)
	d := r.Denom()
	q, m := new(big.Int).QuoRem(n, d, new(big.Int))
	// |m|*2 >= d: round away from zero
	m2 := new(big.Int).Mul(new(big.Int).Abs(m), big.NewInt(2))
	if m2.Cmp(d) >= 0 {
		if n.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return new(big.Rat).SetFrac(q, scale)
}

// decString writes r with exactly places decimals (r is rounded first).
func decString(r dec, places int) string {
	return decRound(r, places).FloatString(places)
}

// decPlain writes r with as few decimals as hold it exactly, at most max
// (prices and quantities: "12.5", "3").
func decPlain(r dec, max int) string {
	s := decRound(r, max).FloatString(max)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// decFloat is r as a float64 for the template (two-decimal amounts
// format back to the same digits).
func decFloat(r dec) float64 {
	f, _ := strconv.ParseFloat(r.FloatString(10), 64)
	return f
}

// toDec reads an expression's value as a decimal: a number, or text
// holding one ("12.50").
func toDec(v any) (dec, bool) {
	switch n := v.(type) {
	case int:
		return decInt(int64(n)), true
	case int64:
		return decInt(n), true
	case int32:
		return decInt(int64(n)), true
	case uint:
		return new(big.Rat).SetUint64(uint64(n)), true
	case float64:
		r, ok := new(big.Rat).SetString(strconv.FormatFloat(n, 'f', -1, 64))
		return r, ok
	case float32:
		r, ok := new(big.Rat).SetString(strconv.FormatFloat(float64(n), 'f', -1, 32))
		return r, ok
	case json.Number:
		return toDec(string(n))
	case string:
		s := strings.TrimSpace(n)
		if s == "" || strings.ContainsAny(s, "/eE") {
			return nil, false
		}
		r, ok := new(big.Rat).SetString(s)
		return r, ok
	}
	return nil, false
}

// --- the invoice --------------------------------------------------------

// einvoice is one invoice's business terms, computed.
type einvoice struct {
	profile                                string
	number, typeCode, currency             string
	issueDate, dueDate                     string // YYYY-MM-DD
	buyerReference, orderReference, terms  string
	precedingInvoice                       string
	notes                                  []string
	seller, buyer                          party
	lines                                  []invoiceLine
	charges                                []allowanceCharge
	vat                                    []vatGroup
	payment                                payment
	deliveryDate, deliveryCountry          string // BT-72 (YYYY-MM-DD), BT-80
	deliveryCity, deliveryPostcode         string // BT-77, BT-78
	lineTotal, allowanceTotal, chargeTotal dec
	taxExclusive, taxTotal, grandTotal     dec
	prepaid, payable                       dec
	hasPrepaid                             bool
	src                                    map[string]*expression // field path → its expression, for messages
	problems                               []Violation            // values that could not be read
}

type party struct {
	name, street, street2, city, postcode, country string
	vatID, taxNumber, legalID                      string
	endpoint, endpointScheme                       string
	contactName, contactPhone, contactEmail        string
}

type invoiceLine struct {
	id, name, description, unitCode, category, note string
	quantity, price, rate, net                      dec
}

type allowanceCharge struct {
	charge                     bool
	amount, rate               dec
	category, reason, reasonCd string
}

type vatGroup struct {
	category           string
	rate, base, amount dec
	exemptionReason    string
	index              int // first appearance, for a stable order
}

type payment struct {
	meansCode, iban, bic, accountName, reference string
}

// vatCategories are the VAT category codes (UNCL 5305) Folio writes:
// standard rate, zero rated, exempt, reverse charge, intra-community
// supply, export outside the EU, not subject to VAT, Canary Islands
// (IGIC) and Ceuta and Melilla (IPSI).
var vatCategories = []string{"S", "Z", "E", "AE", "K", "G", "O", "L", "M"}

// einvoiceEval evaluates a spec's expressions against values.
type einvoiceEval struct {
	ev  *evaluator
	env map[string]any
	inv *einvoice
}

// value evaluates x, recording it as field's source; nil when x is absent.
func (e *einvoiceEval) value(field string, x *expression) (any, error) {
	if x == nil {
		return nil, nil
	}
	e.inv.src[field] = x
	return e.ev.run(x, e.env)
}

// text evaluates x as text; an absent expression or a nil value is "".
func (e *einvoiceEval) text(field string, x *expression) (string, error) {
	v, err := e.value(field, x)
	if err != nil {
		return "", err
	}
	switch s := v.(type) {
	case nil:
		return "", nil
	case string:
		return strings.TrimSpace(s), nil
	case bool:
		return strconv.FormatBool(s), nil
	}
	if d, ok := toDec(v); ok {
		return decPlain(d, 6), nil
	}
	if t, ok := v.(time.Time); ok {
		return t.Format("2006-01-02"), nil
	}
	return strings.TrimSpace(fmt.Sprint(v)), nil
}

// number evaluates x as a decimal; nil when absent or empty.
func (e *einvoiceEval) number(field, term string, x *expression) (dec, error) {
	v, err := e.value(field, x)
	if err != nil {
		return nil, err
	}
	if v == nil || v == "" {
		return nil, nil
	}
	d, ok := toDec(v)
	if !ok {
		e.inv.problems = append(e.inv.problems, Violation{Term: term, Field: field, Expression: x.src,
			Message: fmt.Sprintf("%s (%s) must be a number, not %s", field, term, describeValue(v))})
		return nil, nil
	}
	return d, nil
}

// date evaluates x as a date (YYYY-MM-DD or RFC 3339); "" when absent.
func (e *einvoiceEval) date(field, term string, x *expression) (string, error) {
	v, err := e.value(field, x)
	if err != nil {
		return "", err
	}
	switch d := v.(type) {
	case nil:
		return "", nil
	case time.Time:
		return d.Format("2006-01-02"), nil
	case string:
		if strings.TrimSpace(d) == "" {
			return "", nil
		}
		if t, ok := parseDate(strings.TrimSpace(d)); ok {
			return t.Format("2006-01-02"), nil
		}
	}
	e.inv.problems = append(e.inv.problems, Violation{Term: term, Field: field, Expression: x.src,
		Message: fmt.Sprintf("%s (%s) must be a date (YYYY-MM-DD), not %s", field, term, describeValue(v))})
	return "", nil
}

func describeValue(v any) string {
	s := fmt.Sprintf("%v", v)
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// buildEInvoice evaluates the spec and computes the amounts. It does not
// check the EN 16931 rules (checkEInvoice does).
func (t *Template) buildEInvoice(s *einvoiceSpec, profile string, values map[string]any, limits Limits) (*einvoice, error) {
	ev := newEvaluator(limits)
	inv := &einvoice{profile: profile, src: map[string]*expression{}}
	e := &einvoiceEval{ev: ev, env: ev.env(values, 2), inv: inv}
	const p = "einvoice."
	var err error
	text := func(dst *string, field string, x *expression) {
		if err == nil {
			*dst, err = e.text(field, x)
		}
	}
	text(&inv.number, p+"number", s.fields["number"])
	text(&inv.typeCode, p+"typeCode", s.fields["typeCode"])
	text(&inv.currency, p+"currency", s.fields["currency"])
	text(&inv.buyerReference, p+"buyerReference", s.fields["buyerReference"])
	text(&inv.orderReference, p+"orderReference", s.fields["orderReference"])
	text(&inv.terms, p+"paymentTerms", s.fields["paymentTerms"])
	text(&inv.precedingInvoice, p+"precedingInvoice", s.fields["precedingInvoice"])
	if err != nil {
		return nil, err
	}
	if inv.typeCode == "" {
		inv.typeCode = "380"
	}
	inv.currency = strings.ToUpper(inv.currency)
	if inv.issueDate, err = e.date(p+"issueDate", "BT-2", s.fields["issueDate"]); err != nil {
		return nil, err
	}
	if inv.dueDate, err = e.date(p+"dueDate", "BT-9", s.fields["dueDate"]); err != nil {
		return nil, err
	}
	if x := s.fields["note"]; x != nil {
		inv.src[p+"note"] = x
		v, err := ev.run(x, e.env)
		if err != nil {
			return nil, err
		}
		switch n := v.(type) {
		case []any:
			for _, item := range n {
				if s := strings.TrimSpace(fmt.Sprint(item)); item != nil && s != "" {
					inv.notes = append(inv.notes, s)
				}
			}
		case nil:
		default:
			if s := strings.TrimSpace(fmt.Sprint(n)); s != "" {
				inv.notes = append(inv.notes, s)
			}
		}
	}
	for _, g := range []struct {
		name string
		m    map[string]*expression
		dst  *party
	}{{"seller", s.seller, &inv.seller}, {"buyer", s.buyer, &inv.buyer}} {
		f := p + g.name + "."
		d := g.dst
		for _, k := range []struct {
			key string
			dst *string
		}{{"name", &d.name}, {"street", &d.street}, {"street2", &d.street2}, {"city", &d.city}, {"postcode", &d.postcode},
			{"country", &d.country}, {"vatId", &d.vatID}, {"taxNumber", &d.taxNumber}, {"legalId", &d.legalID},
			{"electronicAddress", &d.endpoint}, {"electronicAddressScheme", &d.endpointScheme},
			{"contactName", &d.contactName}, {"contactPhone", &d.contactPhone}, {"contactEmail", &d.contactEmail}} {
			text(k.dst, f+k.key, g.m[k.key])
		}
		d.country = strings.ToUpper(d.country)
		if d.endpoint != "" && d.endpointScheme == "" {
			d.endpointScheme = "EM"
		}
	}
	pay := &inv.payment
	text(&pay.meansCode, p+"payment.meansCode", s.payment["meansCode"])
	text(&pay.iban, p+"payment.iban", s.payment["iban"])
	text(&pay.bic, p+"payment.bic", s.payment["bic"])
	text(&pay.accountName, p+"payment.accountName", s.payment["accountName"])
	text(&pay.reference, p+"payment.reference", s.payment["reference"])
	if err != nil {
		return nil, err
	}
	text(&inv.deliveryCountry, p+"delivery.country", s.deliver["country"])
	text(&inv.deliveryCity, p+"delivery.city", s.deliver["city"])
	text(&inv.deliveryPostcode, p+"delivery.postcode", s.deliver["postcode"])
	if err != nil {
		return nil, err
	}
	inv.deliveryCountry = strings.ToUpper(inv.deliveryCountry)
	if inv.deliveryDate, err = e.date(p+"delivery.date", "BT-72", s.deliver["date"]); err != nil {
		return nil, err
	}
	pay.iban = strings.ToUpper(strings.ReplaceAll(pay.iban, " ", ""))
	if pay.meansCode == "" && pay.iban != "" {
		pay.meansCode = "58" // SEPA credit transfer
	}
	exempt := map[string]string{}
	for cat, x := range s.exempt {
		var r string
		text(&r, p+"vatExemptionReasons."+cat, x)
		exempt[cat] = r
	}
	if err != nil {
		return nil, err
	}
	if inv.prepaid, err = e.number(p+"prepaid", "BT-113", s.fields["prepaid"]); err != nil {
		return nil, err
	}
	inv.hasPrepaid = inv.prepaid != nil
	// Lines.
	if l := s.lines; l != nil {
		items, err := e.list(p+"lines", l)
		if err != nil {
			return nil, err
		}
		for i, item := range items {
			e.env[l.as] = item
			f := fmt.Sprintf("%slines[%d].", p, i)
			var ln invoiceLine
			text(&ln.id, f+"id", l.fields["id"])
			text(&ln.name, f+"name", l.fields["name"])
			text(&ln.description, f+"description", l.fields["description"])
			text(&ln.unitCode, f+"unitCode", l.fields["unitCode"])
			text(&ln.category, f+"vatCategory", l.fields["vatCategory"])
			text(&ln.note, f+"note", l.fields["note"])
			if err != nil {
				return nil, err
			}
			if ln.id == "" {
				ln.id = strconv.Itoa(i + 1)
			}
			if ln.unitCode == "" {
				ln.unitCode = "C62" // one (unit)
			}
			ln.category = strings.ToUpper(ln.category)
			if ln.category == "" {
				ln.category = "S"
			}
			if ln.quantity, err = e.number(f+"quantity", "BT-129", l.fields["quantity"]); err != nil {
				return nil, err
			}
			if ln.price, err = e.number(f+"price", "BT-146", l.fields["price"]); err != nil {
				return nil, err
			}
			if ln.rate, err = e.number(f+"vatRate", "BT-152", l.fields["vatRate"]); err != nil {
				return nil, err
			}
			if ln.quantity != nil && ln.price != nil {
				ln.net = decRound(decMul(ln.quantity, ln.price), 2) // BT-131
			}
			inv.lines = append(inv.lines, ln)
		}
		delete(e.env, l.as)
	}
	// Document-level allowances and charges.
	if l := s.charges; l != nil {
		items, err := e.list(p+"allowancesCharges", l)
		if err != nil {
			return nil, err
		}
		for i, item := range items {
			e.env[l.as] = item
			f := fmt.Sprintf("%sallowancesCharges[%d].", p, i)
			var ac allowanceCharge
			if x := l.fields["charge"]; x != nil {
				inv.src[f+"charge"] = x
				v, err := ev.run(x, e.env)
				if err != nil {
					return nil, err
				}
				ac.charge = v == true || v == "true" || v == "charge"
			}
			text(&ac.reason, f+"reason", l.fields["reason"])
			text(&ac.reasonCd, f+"reasonCode", l.fields["reasonCode"])
			text(&ac.category, f+"vatCategory", l.fields["vatCategory"])
			if err != nil {
				return nil, err
			}
			ac.category = strings.ToUpper(ac.category)
			if ac.category == "" {
				ac.category = "S"
			}
			if ac.amount, err = e.number(f+"amount", "BT-92", l.fields["amount"]); err != nil {
				return nil, err
			}
			if ac.amount != nil {
				ac.amount = decRound(ac.amount, 2)
			}
			if ac.rate, err = e.number(f+"vatRate", "BT-96", l.fields["vatRate"]); err != nil {
				return nil, err
			}
			inv.charges = append(inv.charges, ac)
		}
		delete(e.env, l.as)
	}
	inv.compute(exempt)
	return inv, nil
}

// list evaluates a list's "each" expression.
func (e *einvoiceEval) list(field string, l *einvoiceList) ([]any, error) {
	e.inv.src[field] = l.each
	v, err := e.ev.run(l.each, e.env)
	if err != nil {
		return nil, err
	}
	switch items := v.(type) {
	case nil:
		return nil, nil
	case []any:
		return items, nil
	case []map[string]any:
		out := make([]any, len(items))
		for i, m := range items {
			out[i] = m
		}
		return out, nil
	}
	return nil, &ExpressionError{Path: l.each.path, Expression: l.each.src, Message: fmt.Sprintf("must give a list, not %s", describeValue(v))}
}

// vatKey groups VAT by category and rate (BG-23).
func vatKey(cat string, rate dec) string {
	r := "0"
	if rate != nil {
		r = decPlain(rate, 4)
	}
	return cat + "|" + r
}

// compute works out the line total, the VAT breakdown and the totals:
// VAT per category and rate on that category's base (BR-S-08, ...),
// rounded to two decimals, then summed (BR-CO-14).
func (inv *einvoice) compute(exempt map[string]string) {
	zero := decInt(0)
	inv.lineTotal, inv.allowanceTotal, inv.chargeTotal = zero, zero, zero
	groups := map[string]*vatGroup{}
	group := func(cat string, rate dec) *vatGroup {
		k := vatKey(cat, rate)
		g := groups[k]
		if g == nil {
			r := rate
			if r == nil {
				r = zero
			}
			g = &vatGroup{category: cat, rate: r, base: zero, index: len(groups), exemptionReason: exempt[cat]}
			groups[k] = g
		}
		return g
	}
	for _, ln := range inv.lines {
		if ln.net == nil {
			continue
		}
		inv.lineTotal = decAdd(inv.lineTotal, ln.net)
		g := group(ln.category, ln.rate)
		g.base = decAdd(g.base, ln.net)
	}
	for _, ac := range inv.charges {
		if ac.amount == nil {
			continue
		}
		g := group(ac.category, ac.rate)
		if ac.charge {
			inv.chargeTotal = decAdd(inv.chargeTotal, ac.amount)
			g.base = decAdd(g.base, ac.amount)
		} else {
			inv.allowanceTotal = decAdd(inv.allowanceTotal, ac.amount)
			g.base = decSub(g.base, ac.amount)
		}
	}
	inv.taxTotal = zero
	for _, g := range groups {
		g.amount = decRound(decMul(g.base, new(big.Rat).Quo(g.rate, decInt(100))), 2)
		inv.taxTotal = decAdd(inv.taxTotal, g.amount)
		inv.vat = append(inv.vat, *g)
	}
	sort.Slice(inv.vat, func(i, j int) bool { return inv.vat[i].index < inv.vat[j].index })
	inv.taxExclusive = decAdd(decSub(inv.lineTotal, inv.allowanceTotal), inv.chargeTotal)
	inv.grandTotal = decAdd(inv.taxExclusive, inv.taxTotal)
	if inv.prepaid == nil {
		inv.prepaid = zero
	}
	inv.prepaid = decRound(inv.prepaid, 2)
	inv.payable = decSub(inv.grandTotal, inv.prepaid)
}

// namespace is the "einvoice" variable the template draws: the computed
// lines, VAT breakdown and totals, as numbers rounded as the XML has them.
func (inv *einvoice) namespace() map[string]any {
	lines := make([]any, len(inv.lines))
	for i, ln := range inv.lines {
		lines[i] = map[string]any{
			"id": ln.id, "name": ln.name, "description": ln.description, "unitCode": ln.unitCode,
			"quantity": optFloat(ln.quantity), "price": optFloat(ln.price), "vatCategory": ln.category,
			"vatRate": optFloat(ln.rate), "netAmount": optFloat(ln.net), "note": ln.note,
		}
	}
	vat := make([]any, len(inv.vat))
	for i, g := range inv.vat {
		vat[i] = map[string]any{"category": g.category, "rate": decFloat(g.rate), "base": decFloat(g.base),
			"amount": decFloat(g.amount), "exemptionReason": g.exemptionReason}
	}
	charges := make([]any, len(inv.charges))
	for i, ac := range inv.charges {
		charges[i] = map[string]any{"charge": ac.charge, "amount": optFloat(ac.amount), "reason": ac.reason,
			"vatCategory": ac.category, "vatRate": optFloat(ac.rate)}
	}
	return map[string]any{
		"profile": inv.profile, "number": inv.number, "currency": inv.currency, "issueDate": inv.issueDate, "dueDate": inv.dueDate,
		"typeCode": inv.typeCode,
		"lines":    lines, "vat": vat, "allowancesCharges": charges,
		"totals": map[string]any{
			"lines": decFloat(inv.lineTotal), "allowances": decFloat(inv.allowanceTotal), "charges": decFloat(inv.chargeTotal),
			"taxExclusive": decFloat(inv.taxExclusive), "tax": decFloat(inv.taxTotal), "taxInclusive": decFloat(inv.grandTotal),
			"prepaid": decFloat(inv.prepaid), "payable": decFloat(inv.payable),
		},
	}
}

func optFloat(d dec) any {
	if d == nil {
		return nil
	}
	return decFloat(d)
}

// einvoiceRun is what a render with an e-invoice settled: the profile in
// force ("" for none) and, once computed, the invoice.
type einvoiceRun struct {
	profile string
	inv     *einvoice
	xml     []byte
}

// EInvoiceNamespace is the name of the variable holding the computed invoice.
const EInvoiceNamespace = "einvoice"

// prepareEInvoice computes the template's e-invoice for values (when it
// maps one), checks it against the rules of the profile in force and
// writes its XML; it returns values with the "einvoice" variable added.
func (t *Template) prepareEInvoice(values map[string]any, in *docInfo, format Format, limits Limits) (map[string]any, error) {
	s := t.doc.einvoice
	if s == nil {
		return values, nil
	}
	inv, err := t.buildEInvoice(s, in.biz.einvoice.profile, values, limits)
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(values)+1)
	for k, v := range values {
		out[k] = v
	}
	out[EInvoiceNamespace] = inv.namespace()
	profile := in.biz.einvoice.profile
	if profile == "" || format == XLSX {
		return out, nil
	}
	if vs := checkEInvoice(inv); len(vs) > 0 {
		return nil, &EInvoiceError{Profile: profile, Violations: vs}
	}
	in.biz.einvoice.inv = inv
	in.biz.einvoice.xml = inv.xml()
	return out, nil
}

// xml writes the invoice in its profile's syntax.
func (inv *einvoice) xml() []byte {
	if inv.profile == ProfileUBL {
		return inv.ubl()
	}
	return inv.cii()
}

// EInvoiceXML computes the template's e-invoice for values in profile,
// checks it and returns its XML (tests and tools; Render does the same).
func (t *Template) EInvoiceXML(values map[string]any, profile string) ([]byte, error) {
	if t.doc.einvoice == nil {
		return nil, fmt.Errorf("render: the template maps no e-invoice")
	}
	inv, err := t.buildEInvoice(t.doc.einvoice, profile, values, t.limits)
	if err != nil {
		return nil, err
	}
	if vs := checkEInvoice(inv); len(vs) > 0 {
		return nil, &EInvoiceError{Profile: profile, Violations: vs}
	}
	return inv.xml(), nil
}

// EInvoiceProfile is the profile a render with o uses ("" for none).
func (t *Template) EInvoiceProfile(o PDFOptions) string {
	profile := ""
	if t.doc.einvoice != nil {
		profile = t.doc.einvoice.profile
	}
	if r := o.einvoice; r != nil {
		profile = r.profile
		if r.off {
			profile = ""
		}
	}
	return profile
}

// Violation is one EN 16931 (or XRechnung) rule an e-invoice breaks.
type Violation struct {
	Rule       string `json:"rule,omitempty"` // BR-CO-10, BR-DE-15, ...
	Term       string `json:"term,omitempty"` // the business term: BT-31
	Field      string `json:"field"`          // the mapping's path: einvoice.seller.vatId
	Expression string `json:"expression,omitempty"`
	Message    string `json:"message"`
}

// EInvoiceError lists the rules an e-invoice breaks; the first decides
// the message.
type EInvoiceError struct {
	Profile    string
	Violations []Violation
}

func (e *EInvoiceError) Error() string {
	v := e.Violations[0]
	msg := v.Message
	if v.Rule != "" {
		msg = v.Rule + ": " + msg
	}
	if len(e.Violations) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(e.Violations)-1)
	}
	if e.Profile == "" {
		return "e-invoice: " + msg
	}
	return "the " + e.Profile + " e-invoice breaks its rules: " + msg
}

// facturXName is the embedded file's name Factur-X fixes.
const facturXName = "factur-x.xml"

// checkEInvoiceOptions refuses what an e-invoice cannot be combined with:
// a Factur-X invoice is a PDF/A-3 (so not encrypted, not PDF/A-2), and a
// request for a profile needs a template that maps the terms.
func (t *Template) checkEInvoiceOptions(o PDFOptions) error {
	profile := t.EInvoiceProfile(o)
	if o.einvoice != nil && !o.einvoice.off && t.doc.einvoice == nil {
		return &SchemaError{Issues: []Issue{{Path: "einvoice", Message: "the template maps no EN 16931 terms (its schema has no \"einvoice\"): see docs/templates.md, E-invoices"}}}
	}
	if !facturX(profile) {
		return nil
	}
	if o.encrypt != nil {
		return &SchemaError{Issues: []Issue{{Path: "encrypt", Message: fmt.Sprintf("cannot be combined with the %s e-invoice: Factur-X is a PDF/A-3, which forbids encryption", profile)}}}
	}
	pdfa := t.doc.business.pdfa
	field := "pdfa"
	if o.pdfa != nil {
		pdfa = *o.pdfa
	} else {
		field = "schema.pdfa"
	}
	if pdfa.part != 0 && pdfa.part != 3 || o.pdfa != nil && pdfa.part == 0 {
		return &SchemaError{Issues: []Issue{{Path: field, Message: fmt.Sprintf("is %q, and the %s e-invoice needs PDF/A-3 (\"3b\" or \"3u\"; leave pdfa out and Folio writes 3b)", pdfa, profile)}}}
	}
	return nil
}

// writeFacturXXMP adds the Factur-X XMP schema and its PDF/A extension
// schema description (Factur-X 1.0, section 6.2.2) to an XMP packet.
func writeFacturXXMP(b *bytes.Buffer, x einvoiceRun) {
	if !facturX(x.profile) || len(x.xml) == 0 {
		return
	}
	level := "EN 16931"
	if x.profile == ProfileFacturXBasic {
		level = "BASIC"
	}
	b.WriteString(`<rdf:Description rdf:about="" xmlns:fx="urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#">` + "\n")
	b.WriteString("<fx:DocumentType>INVOICE</fx:DocumentType>\n<fx:DocumentFileName>" + facturXName + "</fx:DocumentFileName>\n")
	b.WriteString("<fx:Version>1.0</fx:Version>\n<fx:ConformanceLevel>" + level + "</fx:ConformanceLevel>\n</rdf:Description>\n")
	b.WriteString(`<rdf:Description rdf:about="" xmlns:pdfaExtension="http://www.aiim.org/pdfa/ns/extension/" xmlns:pdfaSchema="http://www.aiim.org/pdfa/ns/schema#" xmlns:pdfaProperty="http://www.aiim.org/pdfa/ns/property#">` + "\n")
	b.WriteString("<pdfaExtension:schemas><rdf:Bag><rdf:li rdf:parseType=\"Resource\">\n")
	b.WriteString("<pdfaSchema:schema>Factur-X PDFA Extension Schema</pdfaSchema:schema>\n")
	b.WriteString("<pdfaSchema:namespaceURI>urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#</pdfaSchema:namespaceURI>\n")
	b.WriteString("<pdfaSchema:prefix>fx</pdfaSchema:prefix>\n<pdfaSchema:property><rdf:Seq>\n")
	for _, p := range [][2]string{
		{"DocumentFileName", "The name of the embedded XML document"},
		{"DocumentType", "The type of the hybrid document in capital letters, e.g. INVOICE or ORDER"},
		{"Version", "The actual version of the standard applying to the embedded XML document"},
		{"ConformanceLevel", "The conformance level of the embedded XML document"},
	} {
		b.WriteString("<rdf:li rdf:parseType=\"Resource\"><pdfaProperty:name>" + p[0] + "</pdfaProperty:name><pdfaProperty:valueType>Text</pdfaProperty:valueType>" +
			"<pdfaProperty:category>external</pdfaProperty:category><pdfaProperty:description>" + p[1] + "</pdfaProperty:description></rdf:li>\n")
	}
	b.WriteString("</rdf:Seq></pdfaSchema:property>\n</rdf:li></rdf:Bag></pdfaExtension:schemas>\n</rdf:Description>\n")
}

// writeEInvoiceXML writes a render's e-invoice as the document itself
// (format xml: XRechnung, UBL, or a Factur-X profile's CII alone).
func (t *Template) writeEInvoiceXML(ctx context.Context, w io.Writer, in docInfo) (Stats, error) {
	x := in.biz.einvoice
	if x.profile == "" || len(x.xml) == 0 {
		return Stats{}, &EInvoiceError{Violations: []Violation{{Field: "einvoice.profile",
			Message: "format xml is the e-invoice alone: the template or the request must choose an e-invoice profile"}}}
	}
	if err := ctx.Err(); err != nil {
		return Stats{}, err
	}
	n, err := w.Write(x.xml)
	return Stats{Bytes: int64(n)}, err
}

// checkEInvoiceName refuses a variable, constant or calculated variable
// named "einvoice" in a template with a mapping: that name holds the
// computed invoice.
func (c *compiler) checkEInvoiceName(def Definition) {
	taken := false
	for _, v := range def.Variables {
		taken = taken || v.Name == EInvoiceNamespace
	}
	for _, cv := range def.CalculatedVariables {
		taken = taken || cv.Name == EInvoiceNamespace
	}
	if _, ok := def.Constants[EInvoiceNamespace]; ok || taken {
		c.add("schema.einvoice", "the name %q holds the computed invoice in a template with an e-invoice mapping: rename the variable or constant of that name", EInvoiceNamespace)
	}
}
