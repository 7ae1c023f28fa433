package app

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

var fastObjectSeeds = []string{
	`{}`, ` { } `, `{"a":1}`, `{"a":-0.5e+3,"b":[1,2,[]],"c":{"d":null,"e":true,"f":false}}`,
	`{"s":"plain","u":"Ωμέγα Москва","e":"tab\tnl\n\"q\" \\ \/ \u00e9 \ud83d\ude00 \ud800"}`,
	`{"a":1,"a":{"b":2}}`, `{"n":1e400}`, `{"n":01}`, `{"n":1.}`, `{"n":.5}`, `{"n":-}`, `{"n":+1}`, `{"n":0x10}`,
	`{"n":Infinity}`, `{"x":tru}`, `{"x":nulll}`, `{"a":1,}`, `[1]`, `null`, `"s"`, `{"a":1} x`, `{"a":"\x"}`,
	"{\"bad\":\"\xff\xfe\"}", "{\"ctl\":\"a\x01\"}", `{"a":[1,2,]}`, `{"a" 1}`, `{1:2}`, `{"a":"\u00"}`, `{"deep":[[[[[[[[[[]]]]]]]]]]}`,
	`{"big":123456789012345678901234567890,"small":1e-400,"neg":-0,"n15":-999999999999999,"n16":9999999999999999,"z":[0,-0,0.0,-0.0]}`,
}

// TestFastObject: the fast decoder gives what encoding/json gives, or
// declines.
func TestFastObject(t *testing.T) {
	for _, s := range fastObjectSeeds {
		checkFastObject(t, []byte(s))
	}
	if _, ok := fastObject([]byte(`{"a":[1,{"b":"c"}],"d":"é"}`)); !ok {
		t.Fatal("a plain object declined")
	}
}

// checkFastObject fails when fastObject decodes data and encoding/json
// does not, or to something else; and when decodeObject answers other
// than encoding/json would.
func checkFastObject(t *testing.T, data []byte) {
	t.Helper()
	var want map[string]any
	stdErr := json.Unmarshal(data, &want)
	got, ok := fastObject(data)
	if ok {
		if stdErr != nil || want == nil {
			t.Fatalf("%q: fast decoded %v; encoding/json: %v, %v", data, got, want, stdErr)
		}
		if !reflect.DeepEqual(got, want) || fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
			t.Fatalf("%q: fast %#v, encoding/json %#v", data, got, want)
		}
	}
	m, err := decodeObject("variables", data)
	switch {
	case len(data) == 0 || string(data) == "null":
		if err != nil || len(m) != 0 {
			t.Fatalf("%q: %v, %v", data, m, err)
		}
	case stdErr != nil || want == nil:
		if err == nil {
			t.Fatalf("%q: decodeObject accepted what encoding/json refuses", data)
		}
	default:
		if err != nil || !reflect.DeepEqual(m, want) {
			t.Fatalf("%q: decodeObject %#v, %v; want %#v", data, m, err, want)
		}
	}
}

func FuzzFastObject(f *testing.F) {
	for _, s := range fastObjectSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkFastObject(t, data) })
}

func BenchmarkDecodeVariables(b *testing.B) {
	data := []byte(`{"invoiceNumber":"INV-2026-0042","issueDate":"2026-11-02","customer":{"number":"C-1007","name":"Ωμέγα Trading Ltd.","street":"Тверская ул. 1","city":"Москва"},
		"items":[{"description":"Document automation — setup and onboarding","quantity":1,"unitPrice":1200},{"description":"Template design","quantity":3,"unitPrice":240.5}],"notes":"Thank you\nfor your business"}`)
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := fastObject(data); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
