package render

import (
	"fmt"
	"sort"
	"strings"
)

// Warnings are what Compile accepts but an author probably did not mean: a
// key no component reads ("colour" for "color"), and a name an expression
// reads that the template does not declare (a request may still send it,
// so neither is an error). Each is located like a schema issue.

// Names every expression may read without a declaration.
var implicitNames = []string{"page", "pages"}

// unknownKeys returns a warning for every key of a schema object the parser
// did not ask for, with the closest key it did ask for.
func (c *compiler) unknownKeys() []Issue {
	var out []Issue
	for _, at := range c.objects {
		var keys, known []string
		for k := range at.o.fields {
			if !at.o.read[k] {
				keys = append(keys, k)
			}
		}
		if len(keys) == 0 {
			continue
		}
		for k := range at.o.read {
			known = append(known, k)
		}
		sort.Strings(keys)
		sort.Strings(known)
		for _, k := range keys {
			if len(out) >= maxIssues {
				return out
			}
			msg := "unknown key, ignored"
			if near := closest(k, known); near != "" {
				msg += " (did you mean " + near + "?)"
			}
			out = append(out, Issue{Path: at.path + "." + clip(k, 64), Message: msg})
		}
	}
	return out
}

// undeclaredNames returns a warning for every name an expression in the
// schema reads that is neither declared (variables, constants, calculated
// variables) nor bound where it is read (a loop's "as" and "index", a
// table's row, "page" and "pages"). A definition that declares nothing
// relies on request values alone (or is a schema checked on its own): there
// is nothing to compare with.
func undeclaredNames(sections []*section, def Definition, implicit ...string) []Issue {
	if len(def.Variables) == 0 && len(def.Constants) == 0 && len(def.CalculatedVariables) == 0 {
		return nil
	}
	declared := map[string]bool{}
	var known []string
	add := func(name string) {
		if !declared[name] {
			declared[name] = true
			known = append(known, name)
		}
	}
	for _, v := range def.Variables {
		add(v.Name)
	}
	for k := range def.Constants {
		add(k)
	}
	for _, cv := range def.CalculatedVariables {
		add(cv.Name)
	}
	sort.Strings(known)
	for _, n := range append(implicitNames, implicit...) {
		declared[n] = true
	}
	w := &nameWarnings{known: known, seen: map[string]bool{}}
	for _, s := range sections {
		w.components(s.components, declared)
	}
	return w.out
}

type nameWarnings struct {
	known []string // declared names, for suggestions
	seen  map[string]bool
	out   []Issue
}

func (w *nameWarnings) components(list []*component, scope map[string]bool) {
	for _, c := range list {
		for _, x := range []*expression{c.cond, c.each} {
			w.check(x, scope)
		}
		inner := scope
		if c.each != nil {
			inner = with(scope, c.as, "index")
		}
		if t, ok := c.elem.(*tableElement); ok {
			inner = with(inner, t.as, rowIndexName, groupName, carriedName)
		}
		if b, ok := c.elem.(interface{ boundNames() []string }); ok {
			inner = with(inner, b.boundNames()...) // names an element binds itself
		}
		refs := c.elem.refs()
		for _, x := range refs.exprs {
			w.check(x, inner)
		}
		for _, tt := range refs.texts {
			if tt == nil {
				continue
			}
			for _, p := range tt.parts {
				w.check(p.expr, inner)
			}
		}
		for _, kids := range refs.children {
			w.components(kids, inner)
		}
	}
}

func (w *nameWarnings) check(x *expression, scope map[string]bool) {
	if x == nil {
		return
	}
	for _, name := range x.names {
		if scope[name] || strings.HasPrefix(name, reservedPrefix) {
			continue
		}
		key := x.path + "\x00" + name
		if w.seen[key] || len(w.out) >= maxIssues {
			continue
		}
		w.seen[key] = true
		msg := fmt.Sprintf("%q is not a declared variable, constant or calculated variable; it is empty unless the request sends it", name)
		if near := closest(name, w.known); near != "" {
			msg += " (did you mean " + near + "?)"
		}
		w.out = append(w.out, Issue{Path: x.path, Message: msg})
	}
}

// with returns scope plus names.
func with(scope map[string]bool, names ...string) map[string]bool {
	out := make(map[string]bool, len(scope)+len(names))
	for k := range scope {
		out[k] = true
	}
	for _, n := range names {
		out[n] = true
	}
	return out
}

// Warnings returns what Compile accepted but the author probably did not
// mean, each with its path; nil when there is nothing to say.
func (t *Template) Warnings() []Issue { return t.warnings }
