package app

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

var generateInputSeeds = []string{
	`{"templateId":"tpl_1","format":"pdf","variables":{"number":"1","items":[{"q":2,"p":1.5}],"x":null}}`,
	` { "templateId" : "invoice" , "format" : "pdf" , "variables" : { } , "metadata" : {"orderId":42} , "filename" : "a b.pdf" , "locale" : "de-DE" , "version" : "latest" } `,
	`{"templateId":"t","format":"xlsx","version":3}`, `{"templateId":"t","version":-1.5e3}`, `{"version":1e400}`,
	`{}`, `{ }`, `{"templateId":"caf\u00e9 \"q\"","filename":"\ud83d\ude00"}`, "{\"templateId\":\"\xff\"}",
	`{"TemplateId":"t"}`, `{"templateid":"t"}`, `{"format":"pdf","format":"xlsx"}`, `{"variables":{},"variables":{"a":1}}`,
	`{"templateId":1}`, `{"templateId":null}`, `{"variables":null}`, `{"variables":[1]}`, `{"variables":"s"}`, `{"metadata":true}`,
	`{"version":true}`, `{"version":{"n":1}}`, `{"pdfa":"2b"}`, `{"watermark":{"text":"X"}}`, `{"unknown":1}`,
	`{"templateId":"t",}`, `{"templateId":"t"} x`, `{"templateId":"t"}{}`, `{"templateId" "t"}`, `{templateId:"t"}`, `[1]`, `null`, ``, `{`,
	`{"variables":{"a":1,}}`, `{"variables":{"a":01}}`, `{"variables":{"n":1e400}}`, `{"variables":{"s":"a\x"}}`, "{\"variables\":{\"c\":\"\x01\"}}",
	`{"variables":{"deep":[[[[[[[[[[{}]]]]]]]]]]}}`, `{"variables":{"a":1},"metadata":{"b":[true,false,null,"x",-0]}}`,
}

// TestDecodeGenerateInput: the one-pass decoder gives what encoding/json
// gives, or declines; decodeBody answers the same either way.
func TestDecodeGenerateInput(t *testing.T) {
	for _, s := range generateInputSeeds {
		checkGenerateInput(t, []byte(s))
	}
	for _, s := range []string{generateInputSeeds[0], generateInputSeeds[1], generateInputSeeds[2], `{}`} {
		if _, ok := DecodeGenerateInput([]byte(s)); !ok {
			t.Fatalf("%s: declined", s)
		}
	}
}

func checkGenerateInput(t *testing.T, data []byte) {
	t.Helper()
	var want GenerateInput
	stdErr := json.Unmarshal(data, &want)
	got, ok := DecodeGenerateInput(data)
	if !ok {
		return
	}
	if stdErr != nil {
		t.Fatalf("%q: decoded %+v; encoding/json: %v", data, got, stdErr)
	}
	plain := got
	plain.vars, plain.meta = nil, nil
	if !reflect.DeepEqual(plain, want) {
		t.Fatalf("%q: got %+v, encoding/json %+v", data, plain, want)
	}
	gv, gerr := got.decodeBody()
	wv, werr := want.decodeBody()
	if fmt.Sprint(gerr) != fmt.Sprint(werr) || !reflect.DeepEqual(gv, wv) || fmt.Sprintf("%#v", gv) != fmt.Sprintf("%#v", wv) {
		t.Fatalf("%q: decodeBody %#v, %v; from encoding/json's %#v, %v", data, gv, gerr, wv, werr)
	}
	if got.meta != nil {
		wm, err := decodeObject("metadata", want.Metadata)
		if err != nil || fmt.Sprintf("%#v", got.meta) != fmt.Sprintf("%#v", wm) {
			t.Fatalf("%q: metadata %#v; encoding/json %#v, %v", data, got.meta, wm, err)
		}
	}
}

func FuzzDecodeGenerateInput(f *testing.F) {
	for _, s := range generateInputSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkGenerateInput(t, data) })
}

func BenchmarkDecodeGenerateInput(b *testing.B) {
	data := []byte(`{"templateId":"tpl_01JD2K3M4N5P6Q7R8S9T","format":"pdf","variables":{"invoiceNumber":"INV-2026-0042","issueDate":"2026-11-02","customer":{"number":"C-1007","name":"Ωμέγα Trading Ltd.","street":"Тверская ул. 1","city":"Москва"},
		"items":[{"description":"Document automation — setup and onboarding","quantity":1,"unitPrice":1200},{"description":"Template design","quantity":3,"unitPrice":240.5}],"notes":"Thank you\nfor your business"}}`)
	b.Run("one pass", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			in, ok := DecodeGenerateInput(data)
			if !ok {
				b.Fatal("declined")
			}
			if _, err := in.decodeBody(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var in GenerateInput
			if err := json.Unmarshal(data, &in); err != nil {
				b.Fatal(err)
			}
			if _, err := in.decodeBody(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
