package render

import (
	"errors"
	"strings"
)

// textTemplate is text with {{ expression }} placeholders, compiled once.
type textTemplate struct {
	src   string // as written, for error messages
	parts []textPart
}

// textPart is either literal text or an expression.
type textPart struct {
	literal string
	expr    *expression
}

// usesName reports whether any placeholder reads name.
func (tt *textTemplate) usesName(name string) bool {
	for _, p := range tt.parts {
		if p.expr != nil {
			for _, n := range p.expr.names {
				if n == name {
					return true
				}
			}
		}
	}
	return false
}

// usesNameInExpression reports whether a placeholder reads name other than as the
// bare placeholder {{ name }}.
func (tt *textTemplate) usesNameInExpression(name string) bool {
	for _, p := range tt.parts {
		if p.expr == nil {
			continue
		}
		if strings.TrimSpace(p.expr.src) == name {
			continue
		}
		for _, n := range p.expr.names {
			if n == name {
				return true
			}
		}
	}
	return false
}

// render evaluates the placeholders in env and joins the parts.
func (tt *textTemplate) render(ev *evaluator, env map[string]any) (string, error) {
	if len(tt.parts) == 1 && tt.parts[0].expr == nil {
		return tt.parts[0].literal, nil
	}
	var b strings.Builder
	for _, p := range tt.parts {
		if p.expr == nil {
			b.WriteString(p.literal)
			continue
		}
		v, err := ev.run(p.expr, env)
		if err != nil {
			return "", err
		}
		b.WriteString(formatValue(v))
	}
	return b.String(), nil
}

// value evaluates the template keeping the type of a lone placeholder:
// "{{ row.price }}" yields the number, "{{ row.price }} EUR" yields text.
func (tt *textTemplate) value(ev *evaluator, env map[string]any) (any, error) {
	if len(tt.parts) == 1 && tt.parts[0].expr != nil {
		return ev.run(tt.parts[0].expr, env)
	}
	return tt.render(ev, env)
}

// literal returns the template's text when it holds no placeholders.
func (tt *textTemplate) literal() (string, bool) {
	switch {
	case len(tt.parts) == 0:
		return "", true
	case len(tt.parts) == 1 && tt.parts[0].expr == nil:
		return tt.parts[0].literal, true
	}
	return "", false
}

// compileText splits src into literals and placeholders and compiles each
// placeholder; every problem is reported at path.
func (c *compiler) compileText(path, src string) *textTemplate {
	tt := &textTemplate{src: src}
	c.checkGlyphs(path, src)
	rest := src
	for {
		open := strings.Index(rest, "{{")
		if open < 0 {
			if rest != "" {
				tt.parts = append(tt.parts, textPart{literal: rest})
			}
			return tt
		}
		if open > 0 {
			tt.parts = append(tt.parts, textPart{literal: rest[:open]})
		}
		body, after, err := splitPlaceholder(rest[open+2:])
		if err != nil {
			c.add(path, "%v", err)
			return tt
		}
		x, err := c.exprs.compile(path, body)
		if err != nil {
			c.add(path, "placeholder {{%s}}: %v", clip(body, 80), err)
		} else {
			tt.parts = append(tt.parts, textPart{expr: x})
		}
		rest = after
	}
}

// splitPlaceholder finds the "}}" that closes a placeholder, skipping string
// literals and balanced braces (map literals, if/else blocks).
func splitPlaceholder(s string) (body, rest string, err error) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\'', '`':
			j := i + 1
			for ; j < len(s) && s[j] != c; j++ {
				if s[j] == '\\' && c != '`' {
					j++
				}
			}
			i = j
		case '{':
			depth++
		case '}':
			if depth > 0 {
				depth--
				continue
			}
			if i+1 < len(s) && s[i+1] == '}' {
				return s[:i], s[i+2:], nil
			}
		}
	}
	return "", "", errors.New("placeholder opened with {{ is not closed with }}")
}

// clip shortens s for messages.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
