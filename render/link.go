package render

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode"
)

// Links: a Markdown link or a component's "link" prop is an external
// link (http, https or mailto), drawn as a clickable URI annotation, or
// "#name", a jump to the component whose "anchor" is name or to a heading
// (each heading gets the anchor its text makes, see slug). Other schemes
// (javascript:, file:, data: ...) are refused: a PDF reader would hand
// them to the system.

// validAnchor reports whether name may be an anchor: 1 to 100 letters,
// digits (any script) and _ . : -. A function, not the regular expression
// ^[\p{L}\p{N}_.:-]{1,100}$, which compiled its large classes a hundred
// times over: 2.1 MB of heap for the life of the process.
func validAnchor(name string) bool {
	n := 0
	for _, r := range name {
		n++
		if n > 100 || !(unicode.IsLetter(r) || unicode.IsNumber(r) || r == '_' || r == '.' || r == ':' || r == '-') {
			return false
		}
	}
	return n > 0
}

// maxLinkLength bounds a link's destination.
const maxLinkLength = 2000

// checkLink returns why target cannot be a link, or nil.
func checkLink(target string) error {
	switch {
	case target == "":
		return errors.New("link is empty")
	case len(target) > maxLinkLength:
		return fmt.Errorf("link is %d bytes long, at most %d", len(target), maxLinkLength)
	case strings.HasPrefix(target, "#"):
		if !validAnchor(target[1:]) {
			return fmt.Errorf("link %q names no valid anchor: after # come 1 to 100 letters, digits, _ . : or -", clip(target, 60))
		}
		return nil
	}
	for _, r := range target {
		if r < 0x20 || r == 0x7f || unicode.IsSpace(r) {
			return fmt.Errorf("link %q holds a space or control character (write spaces as %%20)", clip(target, 60))
		}
	}
	u, err := url.Parse(target)
	if err != nil {
		return fmt.Errorf("link %q is not a URL: %v", clip(target, 60), errors.Unwrap(err))
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" {
			return fmt.Errorf("link %q has no host", clip(target, 60))
		}
		return nil
	case "mailto":
		if u.Opaque == "" && u.Path == "" {
			return fmt.Errorf("link %q has no address", clip(target, 60))
		}
		return nil
	case "":
		return fmt.Errorf("link %q is neither an http, https or mailto URL nor a #anchor", clip(target, 60))
	}
	return fmt.Errorf("link %q uses the %s: scheme: only http, https, mailto and #anchor links are allowed", clip(target, 60), clip(u.Scheme, 20))
}

// slug makes a heading's automatic anchor the way GitHub does: lower
// case, letters, digits, - and _ kept, spaces become -, the rest goes.
func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
		if b.Len() >= 80 {
			break
		}
	}
	if b.Len() == 0 {
		return "section"
	}
	return b.String()
}

// parseAnchor reads a component's optional "anchor" prop.
func (c *compiler) parseAnchor(o object, path string) string {
	name, ok := c.str(o, path, "anchor")
	if !ok {
		return ""
	}
	if !validAnchor(name) {
		c.add(path+".anchor", "must be 1 to 100 letters, digits, _ . : or -")
		return ""
	}
	return name
}

// parseLink reads a component's optional "link" prop: a URL or #anchor,
// with {{ }} placeholders. A literal one is checked here; one made by
// placeholders when it is drawn.
func (c *compiler) parseLink(o object, path string) *textTemplate {
	src, ok := c.str(o, path, "link")
	if !ok {
		return nil
	}
	tt := c.compileText(path+".link", src)
	if !strings.Contains(src, "{{") {
		if err := checkLink(strings.TrimSpace(src)); err != nil {
			c.add(path+".link", "%v", err)
		}
	}
	return tt
}
