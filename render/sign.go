package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// Signature is a checked "sign" option: {certificate, reason, location,
// name, visible, page, x, y, width, height}. The engine only checks it;
// the caller signs the finished PDF (render/pades) with the team's
// certificate, as the last step, so the signature covers every byte.
type Signature struct {
	// Certificate names the team's signing certificate (id or name).
	Certificate string
	// Name is the signer's name shown; empty: the certificate's common name.
	Name, Reason, Location string
	Visible                bool
	// Page is the visible signature's page from 1; 0 is the last, -1 the first.
	Page int
	// X and Y place the box's top left corner, in millimetres from the
	// page's top left; HasPosition false puts it in the lower right corner.
	X, Y, Width, Height float64
	HasPosition         bool
	off                 bool
}

// maxSignText bounds reason, location and name.
const maxSignText = 200

// parseSign reads a sign option; false (requests only) turns off the
// template's.
func (c *compiler) parseSign(path string, raw json.RawMessage, request bool) *Signature {
	if s := bytes.TrimSpace(raw); string(s) == "false" && request {
		return &Signature{off: true}
	}
	o, ok := c.object(path, raw)
	if !ok {
		return nil
	}
	s := &Signature{Width: 70, Height: 25}
	cert, ok := c.str(o, path, "certificate")
	s.Certificate = strings.TrimSpace(cert)
	if !ok || s.Certificate == "" {
		c.add(path+".certificate", "is required: the id or name of one of the team's signing certificates")
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"name", &s.Name}, {"reason", &s.Reason}, {"location", &s.Location}} {
		if v, ok := c.str(o, path, f.key); ok {
			if utf8.RuneCountInString(v) > maxSignText {
				c.add(path+"."+f.key, "is longer than %d characters", maxSignText)
			}
			*f.dst = strings.TrimSpace(v)
		}
	}
	if v, ok := c.boolean(o, path, "visible"); ok {
		s.Visible = v
	}
	if o.present("page") {
		var n int
		var word string
		switch {
		case json.Unmarshal(o.raw("page"), &n) == nil && n >= 1:
			s.Page = n
		case json.Unmarshal(o.raw("page"), &word) == nil && (word == "last" || word == "first"):
			if word == "first" {
				s.Page = -1
			}
		default:
			c.add(path+".page", `must be a page number from 1, "first" or "last"`)
		}
	}
	_, hasX := c.number(o, path, "x")
	_, hasY := c.number(o, path, "y")
	if hasX != hasY {
		c.add(path, "needs both x and y, or neither (the lower right corner)")
	}
	s.HasPosition = hasX && hasY
	s.X = c.length(o, path, "x", 0, maxLength, 0)
	s.Y = c.length(o, path, "y", 0, maxLength, 0)
	s.Width = c.length(o, path, "width", 20, maxLength, s.Width)
	s.Height = c.length(o, path, "height", 8, maxLength, s.Height)
	return s
}

// Signature is the signature a render with o asks for: the request's
// over the template's; nil when there is none.
func (t *Template) Signature(o PDFOptions) *Signature {
	s := t.doc.business.sign
	if o.sign != nil {
		s = o.sign
	}
	if s == nil || s.off {
		return nil
	}
	return s
}

// signEncryptIssue is the problem of a signature asked of an encrypted document.
func signEncryptIssue() *SchemaError {
	return &SchemaError{Issues: []Issue{{Path: "sign", Message: "cannot be combined with encrypt (the template signs; send \"sign\": false to drop it): " +
		"Folio signs the finished file, and an encrypted one would have to be signed before it is encrypted; sign or encrypt, not both"}}}
}
