package render

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"testing"
)

// FuzzEInvoiceValues feeds arbitrary variables to the example e-invoice:
// computing and checking it never panics, and every XML it writes (in
// each syntax, checked or not) is well-formed.
func FuzzEInvoiceValues(f *testing.F) {
	ex, input := LoadExample(f, "einvoice")
	tpl := MustCompile(f, ex.Definition)
	seed, _ := json.Marshal(input)
	f.Add(seed)
	f.Add([]byte(`{"invoiceNumber":"<&>","issueDate":"2026-02-30","dueDate":"x","customer":{"name":"\u0000"},"items":[{"quantity":"1e400","unitPrice":"-0.005","vatRate":"NaN","vatCategory":"ae"}]}`))
	f.Add([]byte(`{"invoiceNumber":"1","issueDate":"2026-01-01","dueDate":"2026-01-01","customer":{},"items":[{"quantity":99999999999999999999,"unitPrice":0.1,"vatRate":33.333333}],"adjustments":[{"charge":"charge","amount":"12.345"}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var vars map[string]any
		if json.Unmarshal(raw, &vars) != nil {
			return
		}
		values, err := tpl.Values(vars)
		if err != nil {
			return
		}
		for _, profile := range einvoiceProfiles {
			inv, err := tpl.buildEInvoice(tpl.doc.einvoice, profile, values, tpl.limits)
			var xe *ExpressionError
			if err != nil {
				if !errors.As(err, &xe) {
					t.Fatalf("%s: %v", profile, err)
				}
				return
			}
			_ = checkEInvoice(inv)
			_ = inv.namespace()
			d := xml.NewDecoder(bytes.NewReader(inv.xml()))
			for {
				_, err := d.Token()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("%s: the XML is not well-formed: %v\n%s", profile, err, inv.xml())
				}
			}
		}
	})
}
