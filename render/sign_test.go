package render

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestSignOption(t *testing.T) {
	// The schema's sign is checked when the template is saved.
	_, err := MustEngine(t).Compile(Definition{Schema: json.RawMessage(`{"sign":{"reason":"x","page":"middle","x":10},"sections":[{"id":"s","components":[]}]}`)})
	var se *SchemaError
	if !errors.As(err, &se) {
		t.Fatalf("Compile: %v", err)
	}
	paths := map[string]bool{}
	for _, is := range se.Issues {
		paths[is.Path] = true
	}
	for _, want := range []string{"schema.sign.certificate", "schema.sign.page", "schema.sign"} {
		if !paths[want] {
			t.Errorf("no issue at %s: %v", want, se.Issues)
		}
	}

	tpl := MustCompile(t, Definition{Schema: json.RawMessage(`{"sign":{"certificate":"Contracts","reason":"ok","visible":true,"page":2,"x":15,"y":200,"width":60},"sections":[{"id":"s","components":[]}]}`)})
	s := tpl.Signature(PDFOptions{})
	if s == nil || s.Certificate != "Contracts" || s.Reason != "ok" || !s.Visible || s.Page != 2 || !s.HasPosition || s.X != 15 || s.Y != 200 || s.Width != 60 || s.Height != 25 {
		t.Fatalf("template signature: %+v", s)
	}
	// A request's sign replaces it; false turns it off.
	if s := tpl.Signature(mustOptions(t, PDFRequest{Sign: json.RawMessage(`{"certificate":"sig_x","page":"first"}`)})); s == nil || s.Certificate != "sig_x" || s.Page != -1 || s.Visible {
		t.Errorf("request signature: %+v", s)
	}
	if s := tpl.Signature(mustOptions(t, PDFRequest{Sign: json.RawMessage(`false`)})); s != nil {
		t.Errorf("sign false: %+v", s)
	}
	// Not with encrypt: in one request, or a request encrypting a template that signs.
	if _, err := ParsePDFOptions(PDFRequest{Sign: json.RawMessage(`{"certificate":"c"}`), Encrypt: json.RawMessage(`{"userPassword":"x"}`)}); err == nil {
		t.Error("sign and encrypt accepted")
	}
	err = tpl.CheckPDFOptions(mustOptions(t, PDFRequest{Encrypt: json.RawMessage(`{"userPassword":"x"}`)}))
	if !errors.As(err, &se) || se.Issues[0].Path != "sign" || !strings.Contains(se.Issues[0].Message, `"sign": false`) {
		t.Errorf("encrypting a signing template: %v", err)
	}
	if err := tpl.CheckPDFOptions(mustOptions(t, PDFRequest{Encrypt: json.RawMessage(`{"userPassword":"x"}`), Sign: json.RawMessage(`false`)})); err != nil {
		t.Errorf("encrypt with sign false: %v", err)
	}
	if o := mustOptions(t, PDFRequest{Sign: json.RawMessage(`{"certificate":"c"}`)}); o.PDFOnly() != "sign" {
		t.Errorf("PDFOnly: %q", o.PDFOnly())
	}
}
