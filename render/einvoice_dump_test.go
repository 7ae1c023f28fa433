package render

import (
	"os"
	"testing"
)

func TestEInvoiceDump(t *testing.T) {
	dir := os.Getenv("EINVOICE_DUMP")
	if dir == "" {
		t.Skip()
	}
	ex, input := LoadExample(t, "einvoice")
	tpl := MustCompile(t, ex.Definition)
	values, err := tpl.Values(input)
	if err != nil {
		t.Fatal(err)
	}
	pdf, _ := MustRenderFormat(t, tpl, input, PDF, Options{})
	os.WriteFile(dir+"/einvoice.pdf", pdf, 0o644)
	for _, p := range einvoiceProfiles {
		x, err := tpl.EInvoiceXML(values, p)
		if err != nil {
			t.Fatal(p, err)
		}
		os.WriteFile(dir+"/"+p+".xml", x, 0o644)
	}
}
