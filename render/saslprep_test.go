package render

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// The examples of RFC 4013 section 3, and a few more of each table.
func TestSASLprep(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"I\u00adX", "IX", ""},           // soft hyphen mapped to nothing
		{"user", "user", ""},             // no transformation
		{"USER", "USER", ""},             // case preserved
		{"\u00aa", "a", ""},              // NFKC
		{"\u2168", "IX", ""},             // NFKC
		{"\u0007", "", "U+0007"},         // prohibited
		{"\u0627\u0031", "", "end with"}, // bidi: RandALCat first but not last
		{"a\u00a0b", "a b", ""},          // non-ASCII space to SPACE
		{"\ufb01le", "file", ""},         // ligature
		{"pass\u200bword", "password", ""},
		{"\ue000", "", "U+E000"},                     // private use
		{"\u202eabc", "", "U+202E"},                  // change display properties
		{"\u05d0\u05d1", "\u05d0\u05d1", ""},         // Hebrew alone is fine
		{"\u05d0a\u05d1", "", "mixes right-to-left"}, // but not mixed with Latin
		{"s3cret pass", "s3cret pass", ""},
		{"\xff", "", "UTF-8"},
	} {
		got, err := saslprep(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("saslprep(%+q) = %+q, %v; want an error with %q", tc.in, got, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("saslprep(%+q) = %+q, %v; want %+q", tc.in, got, err, tc.want)
		}
	}
}

// A password is prepared before it is used: the file opens with what a
// reader gets from the typed text, and a prohibited character is an error
// naming the field.
func TestEncryptPasswordIsPrepared(t *testing.T) {
	tpl := businessTemplate(t, "")
	o := mustOptions(t, PDFRequest{Encrypt: json.RawMessage(`{"userPassword":"Stra\u00dfe\u00ad\u2168\u00a0ok","ownerPassword":"o"}`)})
	pdf := MustRender(t, tpl, businessValues, Options{PDF: o})
	if out, err := QPDF(t, pdf, "--show-encryption", "--password=Straße"+"IX ok"); err != nil || !strings.Contains(out, "Supplied password is user password") {
		t.Errorf("the prepared password does not open the file: %v\n%s", err, out)
	}
	text := runTool(t, "pdftotext", pdf, "-upw", "StraßeIX ok", "-enc", "UTF-8", "-f", "1", "-l", "1")
	if !strings.Contains(text, "Rechnung 2026-0042") {
		t.Errorf("pdftotext with the prepared password reads:\n%s", text)
	}
	_, err := ParsePDFOptions(PDFRequest{Encrypt: json.RawMessage(`{"userPassword":"bell\u0007"}`)})
	if err == nil || !strings.Contains(err.Error(), "encrypt.userPassword") || !strings.Contains(err.Error(), "U+0007") {
		t.Errorf("a prohibited character: %v", err)
	}
}

func FuzzSASLprep(f *testing.F) {
	for _, s := range []string{"I\u00adX", "\u2168", "\u0627\u0031", "a\u00a0b", "\ufb01", "\u05d0\u05d1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := saslprep(s)
		if err != nil {
			return
		}
		if !utf8.ValidString(out) {
			t.Fatalf("saslprep(%+q) = %+q, not UTF-8", s, out)
		}
		for _, r := range out {
			if prohibited(r) || mappedToNothing(r) {
				t.Fatalf("saslprep(%+q) = %+q keeps U+%04X", s, out, r)
			}
		}
	})
}
