package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestLetterExampleIsALetter: the dashboard's letter example renders as a
// business letter: letterhead, the sender's return line, the recipient's
// address block, place and date, a subject, the greeting, paragraphs, a
// closing, a signature with name and title, and a footer with the
// company's details.
func TestLetterExampleIsALetter(t *testing.T) {
	s := startServer(t)
	u := s.signup("Writer")
	key := s.createKey(u.token, nil)
	var tpl, vars map[string]any
	readJSON(t, filepath.Join("web", "dashboard", "examples", "blank.json"), &tpl)
	readJSON(t, filepath.Join("web", "dashboard", "examples", "blank.vars.json"), &vars)
	created := s.must(200, "POST", "/api/templates", u.token, tpl)
	if w, _ := created.get("warnings").([]any); len(w) != 0 {
		t.Errorf("the example has warnings: %v", w)
	}
	g := s.must(200, "POST", "/api/v1/documents/generate", key, map[string]any{"templateId": created.str("id"), "format": "pdf", "variables": vars})
	_, _, pdf := s.download(g.str("downloadUrl"))
	if n := pdfPageCount(t, pdf); n != 1 {
		t.Errorf("%d pages, want one", n)
	}
	text := blanks.ReplaceAllString(pdfText(t, pdf), " ")
	for _, want := range []string{
		"Folio Demo GmbH", // letterhead
		"Folio Demo GmbH · Hauptstraße 1 · 50667 Köln", // return line
		"Ada Lovelace", "Analytical Engines B.V.", "Keizersgracht 123", "1015 CJ Amsterdam", "Netherlands",
		"Köln, 25 November 2026",
		"Your order 2026-1187: confirmation and delivery dates",
		"Dear Ada Lovelace,",
		"Thank you for your order of 18 November 2026",
		"I look forward to working with you.",
		"Kind regards,",
		"Jonas Weber", "Customer Success, Folio Demo GmbH",
		"VAT ID DE123456789",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the letter lacks %q:\n%s", want, text)
		}
	}
	// In reading order: address, date, subject, greeting, body, closing, signature.
	last := -1
	for _, part := range []string{"Keizersgracht 123", "25 November 2026", "Your order", "Dear Ada", "Thank you", "Kind regards", "Jonas Weber"} {
		i := strings.Index(text, part)
		if i <= last {
			t.Errorf("%q is out of order in:\n%s", part, text)
		}
		last = i
	}
	if info := pdfInfo(t, pdf); info["Title"] != "Your order 2026-1187: confirmation and delivery dates" || info["Author"] != "Folio Demo GmbH" {
		t.Errorf("properties: Title %q, Author %q", info["Title"], info["Author"])
	}
}
