package render

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// TestInvoiceWorkbookTotals: the example invoice's workbook has its
// subtotal, VAT and total under the Amount column as live formulas, money
// rounded to cents (no float noise in the cached values), and print setup:
// A4 portrait, one page wide, the header row repeated on every page.
func TestInvoiceWorkbookTotals(t *testing.T) {
	raw, err := os.ReadFile("../testdata/templates/invoice.json")
	if err != nil {
		t.Fatal(err)
	}
	var def Definition
	if err := json.Unmarshal(raw, &def); err != nil {
		t.Fatal(err)
	}
	tpl := MustCompile(t, def)
	var vars map[string]any
	raw, err = os.ReadFile("../testdata/templates/invoice.vars.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &vars); err != nil {
		t.Fatal(err)
	}
	// Amounts whose binary arithmetic is not what the eye adds up: 3 × 0.1
	// is 0.30000000000000004, and the total 5546.320000000001.
	vars["items"] = []any{
		map[string]any{"description": "Cables", "quantity": 3, "unitPrice": 0.1},
		map[string]any{"description": "Setup", "quantity": 1, "unitPrice": 4180.47},
		map[string]any{"description": "Support", "quantity": 1, "unitPrice": 480},
	}
	f, _ := OpenXLSX(t, tpl, vars)
	defer f.Close()
	const sheet = "Invoice"
	cell := func(ref string) (string, string) {
		t.Helper()
		v, err := f.GetCellValue(sheet, ref, excelize.Options{RawCellValue: true})
		if err != nil {
			t.Fatal(err)
		}
		formula, err := f.GetCellFormula(sheet, ref)
		if err != nil {
			t.Fatal(err)
		}
		return v, formula
	}
	if h, _ := cell("E8"); h != "Amount" {
		t.Fatalf("E8 = %q, want the Amount header (rows moved?)", h)
	}
	if v, formula := cell("E9"); v != "0.3" || formula != "C9*D9" {
		t.Errorf("E9 = %q (%q), want 0.3 from C9*D9", v, formula)
	}
	for _, tt := range []struct{ label, labelRef, ref, value, formula string }{
		{"Subtotal", "D12", "E12", "4660.77", "SUM(E9:E11)"},
		{"VAT 19%", "D13", "E13", "885.55", "ROUND(E12*0.19,2)"},
		{"Total due", "D14", "E14", "5546.32", "E12+E13"},
	} {
		if got, _ := cell(tt.labelRef); got != tt.label {
			t.Errorf("%s = %q, want the label %q beside the amount", tt.labelRef, got, tt.label)
		}
		v, formula := cell(tt.ref)
		if v != tt.value || formula != tt.formula {
			t.Errorf("%s: %s = %q (formula %q), want %q (%q)", tt.label, tt.ref, v, formula, tt.value, tt.formula)
		}
	}
	for _, ref := range []string{"E9", "E10", "E11", "E12", "E13", "E14"} {
		if v, _ := cell(ref); strings.Contains(v, "0000") || strings.Contains(v, "9999") {
			t.Errorf("%s holds float noise: %s", ref, v)
		}
	}

	layout, err := f.GetPageLayout(sheet)
	if err != nil {
		t.Fatal(err)
	}
	if layout.Size == nil || *layout.Size != 9 || layout.Orientation == nil || *layout.Orientation != "portrait" ||
		layout.FitToWidth == nil || *layout.FitToWidth != 1 || layout.FitToHeight == nil || *layout.FitToHeight != 0 {
		t.Errorf("page layout: size %v, orientation %v, fit %v×%v; want A4 (9), portrait, 1 page wide", deref(layout.Size), derefS(layout.Orientation), deref(layout.FitToWidth), deref(layout.FitToHeight))
	}
	props, err := f.GetSheetProps(sheet)
	if err != nil || props.FitToPage == nil || !*props.FitToPage {
		t.Errorf("sheet does not fit to page: %+v %v", props, err)
	}
	titles := ""
	for _, n := range f.GetDefinedName() {
		if n.Name == "_xlnm.Print_Titles" && n.Scope == sheet {
			titles = n.RefersTo
		}
	}
	if titles != "'Invoice'!$8:$8" {
		t.Errorf("print titles %q, want the header row 'Invoice'!$8:$8", titles)
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func derefS(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}
