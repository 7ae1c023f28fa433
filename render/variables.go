package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Variable types.
const (
	typeString  = "string"
	typeNumber  = "number"
	typeInteger = "integer"
	typeBoolean = "boolean"
	typeDate    = "date"
	typeArray   = "array"
	typeObject  = "object"
)

var variableTypes = map[string]bool{
	typeString: true, typeNumber: true, typeInteger: true, typeBoolean: true,
	typeDate: true, typeArray: true, typeObject: true,
}

// declaredVariable is a checked Variable with its coerced default.
type declaredVariable struct {
	Variable
	hasDefault bool
	def        any
}

// calculated is a compiled calculated variable.
type calculated struct {
	name string
	expr *expression
	deps []string // other calculated variables it reads
}

// parseVariables checks the variables, constants and calculated variables
// of a definition and orders the calculated ones by dependency.
func (c *compiler) parseVariables(def Definition) ([]declaredVariable, map[string]any, []*calculated) {
	if n := len(def.Variables) + len(def.CalculatedVariables); n > c.limits.Variables {
		c.add("variables", "the template declares %d variables, maximum %d", n, c.limits.Variables)
		return nil, nil, nil
	}
	owner := map[string]string{} // name -> path of its declaration
	claim := func(name, path string) bool {
		if msg := checkName(name); msg != "" {
			c.add(path, "%s", msg)
			return false
		}
		if prev, ok := owner[name]; ok {
			c.add(path, "%q is already declared at %s", name, prev)
			return false
		}
		owner[name] = path
		return true
	}

	vars := make([]declaredVariable, 0, len(def.Variables))
	for i, v := range def.Variables {
		path := fmt.Sprintf("variables[%d]", i)
		claim(v.Name, path+".name")
		v.Type = strings.ToLower(strings.TrimSpace(v.Type))
		if !variableTypes[v.Type] {
			c.add(path+".type", "must be one of string, number, integer, boolean, date, array, object")
			continue
		}
		d := declaredVariable{Variable: v}
		if v.DefaultValue != nil {
			val, err := coerce(v.Type, v.DefaultValue)
			if err != nil {
				c.add(path+".defaultValue", "%v", err)
				continue
			}
			d.hasDefault, d.def = true, val
		}
		vars = append(vars, d)
	}

	consts := make(map[string]any, len(def.Constants))
	names := make([]string, 0, len(def.Constants))
	for name := range def.Constants {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if claim(name, "constants."+name) {
			consts[name] = normalize(def.Constants[name])
		}
	}

	calcs := make([]*calculated, 0, len(def.CalculatedVariables))
	for i, cv := range def.CalculatedVariables {
		path := fmt.Sprintf("calculatedVariables[%d]", i)
		claim(cv.Name, path+".name")
		x := c.compileExpr(path+".expression", cv.Expression)
		if x == nil {
			continue
		}
		calcs = append(calcs, &calculated{name: cv.Name, expr: x})
	}
	isCalc := map[string]bool{}
	for _, calc := range calcs {
		isCalc[calc.name] = true
	}
	for _, calc := range calcs {
		for _, name := range calc.expr.names {
			switch {
			case isCalc[name]:
				calc.deps = append(calc.deps, name)
			case owner[name] == "" && !isHelper(name):
				c.add(calc.expr.path, "refers to unknown variable %q", name)
			}
		}
	}
	return vars, consts, c.orderCalculated(calcs)
}

// orderCalculated sorts calculated variables so each comes after those it
// reads, keeping declaration order otherwise; cycles are reported.
func (c *compiler) orderCalculated(calcs []*calculated) []*calculated {
	byName := map[string]*calculated{}
	for _, calc := range calcs {
		byName[calc.name] = calc
	}
	const (
		unvisited = iota
		visiting
		done
	)
	state := map[string]int{}
	ordered := make([]*calculated, 0, len(calcs))
	var visit func(calc *calculated, chain []string) bool
	visit = func(calc *calculated, chain []string) bool {
		switch state[calc.name] {
		case done:
			return true
		case visiting:
			cycle := append(chain[indexOf(chain, calc.name):], calc.name)
			c.add(calc.expr.path, "calculated variables depend on each other in a cycle: %s", strings.Join(cycle, " → "))
			return false
		}
		state[calc.name] = visiting
		chain = append(chain, calc.name)
		for _, dep := range calc.deps {
			if !visit(byName[dep], chain) {
				state[calc.name] = done
				return false
			}
		}
		state[calc.name] = done
		ordered = append(ordered, calc)
		return true
	}
	for _, calc := range calcs {
		visit(calc, nil)
	}
	return ordered
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return 0
}

// Values checks request variables against the declarations, coerces them,
// applies defaults, and adds constants and calculated variables (evaluated
// in dependency order). Undeclared request values pass through unchanged.
// Problems are reported as a *VariableError listing every offending variable.
func (t *Template) Values(input map[string]any) (out map[string]any, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("render: internal error checking variables: %v", r)
		}
	}()
	out = make(map[string]any, len(input)+len(t.constants)+len(t.calculated))
	for k, v := range input {
		if !strings.HasPrefix(k, reservedPrefix) {
			out[k] = normalize(v)
		}
	}
	var problems []VariableIssue
	for _, v := range t.variables {
		raw, ok := input[v.Name]
		if !ok || raw == nil {
			switch {
			case v.hasDefault:
				out[v.Name] = v.def
			case v.Required:
				problems = append(problems, VariableIssue{Variable: v.Name, Message: "is required"})
			}
			continue
		}
		val, err := coerce(v.Type, raw)
		if err != nil {
			problems = append(problems, VariableIssue{Variable: v.Name, Message: err.Error()})
			continue
		}
		out[v.Name] = val
	}
	if t.doc != nil && t.doc.missingGlyphs == missingError {
		problems = append(problems, t.MissingGlyphs(out)...)
	}
	if len(problems) > 0 {
		return nil, &VariableError{Errors: problems}
	}
	for k, v := range t.constants {
		out[k] = v
	}
	if len(t.calculated) == 0 {
		return out, nil
	}
	ev := newEvaluator(t.limits)
	env := ev.env(out, len(t.calculated))
	for _, calc := range t.calculated {
		v, err := ev.run(calc.expr, env)
		if le := (*LimitError)(nil); errors.As(err, &le) {
			return nil, err // a limit stops the work; the error names the expression
		}
		if err != nil {
			msg := err.Error()
			var xe *ExpressionError
			if errors.As(err, &xe) {
				msg = xe.Message
			}
			problems = append(problems, VariableIssue{Variable: calc.name, Message: "cannot be calculated: " + msg})
			v = nil
		}
		env[calc.name] = v
		out[calc.name] = v
	}
	if len(problems) > 0 {
		return nil, &VariableError{Errors: problems}
	}
	return out, nil
}

// coerce converts v to a declared variable type.
func coerce(typ string, v any) (any, error) {
	switch typ {
	case typeString:
		switch x := v.(type) {
		case string:
			return x, nil
		case bool, float64, float32, int, int64, int32, json.Number:
			return formatValue(x), nil
		}
		return nil, fmt.Errorf("must be a string, got %s", describe(v))
	case typeNumber:
		if _, isBool := v.(bool); !isBool {
			if f, ok := toFloat(v); ok && !math.IsInf(f, 0) && !math.IsNaN(f) {
				return f, nil
			}
		}
		return nil, fmt.Errorf("must be a number, got %s", describe(v))
	case typeInteger:
		if _, isBool := v.(bool); !isBool {
			if f, ok := toFloat(v); ok && f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
				return int(f), nil
			}
		}
		return nil, fmt.Errorf("must be an integer, got %s", describe(v))
	case typeBoolean:
		switch x := v.(type) {
		case bool:
			return x, nil
		case string:
			if b, err := strconv.ParseBool(strings.TrimSpace(x)); err == nil {
				return b, nil
			}
		}
		return nil, fmt.Errorf("must be true or false, got %s", describe(v))
	case typeDate:
		if t, ok := toTime(v); ok {
			return t, nil
		}
		return nil, fmt.Errorf("must be a date (RFC 3339 or YYYY-MM-DD), got %s", describe(v))
	case typeArray:
		if v != nil {
			if k := reflect.TypeOf(v).Kind(); k == reflect.Slice || k == reflect.Array {
				if _, isBytes := v.([]byte); !isBytes {
					return normalize(v), nil
				}
			}
		}
		return nil, fmt.Errorf("must be an array, got %s", describe(v))
	case typeObject:
		if v != nil && reflect.TypeOf(v).Kind() == reflect.Map && reflect.TypeOf(v).Key().Kind() == reflect.String {
			return normalize(v), nil
		}
		return nil, fmt.Errorf("must be an object, got %s", describe(v))
	}
	return nil, fmt.Errorf("unknown type %q", typ)
}

// normalize turns a decoded JSON value (or its Go equivalent) into the
// shapes expressions work with: nil, bool, float64, int, string, time.Time,
// []any and map[string]any. Functions, channels and the like become nil,
// as does anything nested deeper than maxValueDepth (which also stops cycles).
func normalize(v any) any {
	return normalizeAt(v, 0)
}

// same reports whether normalizing e returned e itself: the same scalar,
// or the same slice or map.
func same(n, e any) bool {
	switch a := n.(type) {
	case nil:
		return e == nil
	case []any:
		b, ok := e.([]any)
		return ok && len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
	case map[string]any:
		b, ok := e.(map[string]any)
		return ok && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	case bool, float64, int, string, time.Time:
		return n == e
	}
	return false
}

// maxValueDepth is how deeply values may nest.
const maxValueDepth = 100

func normalizeAt(v any, depth int) any {
	if depth > maxValueDepth {
		return nil
	}
	depth++
	switch x := v.(type) {
	case nil, bool, float64, int, string, time.Time:
		return x
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return f
		}
		return x.String()
	case []any:
		// Copy only when an element changes: decoded JSON is usually
		// normal already, and render never modifies values.
		var out []any
		for i, e := range x {
			n := normalizeAt(e, depth)
			if out == nil && !same(n, e) {
				out = make([]any, len(x))
				copy(out, x[:i])
			}
			if out != nil {
				out[i] = n
			}
		}
		if out == nil {
			return x
		}
		return out
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			n := normalizeAt(e, depth)
			if out == nil && !same(n, e) {
				out = make(map[string]any, len(x))
				for k2, e2 := range x {
					out[k2] = e2
				}
			}
			if out != nil {
				out[k] = n
			}
		}
		if out == nil {
			return x
		}
		return out
	}
	if f, ok := toFloat(v); ok {
		if _, isText := v.(string); !isText {
			return f
		}
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.String:
		return rv.String()
	case reflect.Bool:
		return rv.Bool()
	case reflect.Slice, reflect.Array:
		if b, ok := v.([]byte); ok {
			return string(b)
		}
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = normalizeAt(rv.Index(i).Interface(), depth)
		}
		return out
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return nil
		}
		out := make(map[string]any, rv.Len())
		iter := rv.MapRange()
		for iter.Next() {
			out[iter.Key().String()] = normalizeAt(iter.Value().Interface(), depth)
		}
		return out
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return nil
		}
		return normalizeAt(rv.Elem().Interface(), depth)
	}
	return nil
}
