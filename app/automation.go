package app

import (
	"context"
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// AutomationField describes one template input for a third-party automation
// tool. Arrays and objects carry the fields of their elements as children.
type AutomationField struct {
	Key      string       `json:"key"`
	Label    string       `json:"label"`
	Type     string       `json:"type"`
	Required bool         `json:"required"`
	HelpText string       `json:"helpText,omitempty"`
	Children []ChildField `json:"children,omitempty"`
}

// ChildField is a field of an array element or of an object.
type ChildField struct {
	Key   string `json:"key"`
	Label string `json:"label"`
	Type  string `json:"type"`
}

// AutomationFields derives the input fields of a template's published state
// (else its draft) from its variables. The fields of an object or of an
// array's elements come from the variable's defaultValue and from how the
// schema uses it: {{customer.name}}, a component with "each": "items" and
// {{item.qty}}, or a table with "rows": "items" and {{row.qty}}.
func (s *TemplateService) AutomationFields(ctx context.Context, ref TemplateRef) ([]AutomationField, error) {
	p, t, err := s.access(ctx, ref, actRead)
	if err != nil {
		return nil, err
	}
	if t.PublishedVersion > 0 {
		v, err := s.findVersion(ctx, p, t, versionSel{kind: selLatest})
		if err != nil {
			return nil, err
		}
		t = withVersion(t, v)
	}
	return automationFields(t), nil
}

func automationFields(t *Template) []AutomationField {
	var schema any
	_ = json.Unmarshal(t.Schema, &schema)
	texts := stringsIn(schema, nil)
	for _, c := range t.CalculatedVariables {
		texts = append(texts, c.Expression)
	}
	fields := make([]AutomationField, 0, len(t.Variables))
	for _, v := range t.Variables {
		typ := v.Type
		if typ == "" {
			typ = "string"
		}
		f := AutomationField{Key: v.Name, Label: humanize(v.Name), Type: typ, Required: v.Required, HelpText: v.Description}
		var kids childSet
		switch typ {
		case "object":
			kids.fromValue(v.DefaultValue)
			kids.fromRefs(texts, v.Name)
		case "array":
			if list, ok := v.DefaultValue.([]any); ok && len(list) > 0 {
				kids.fromValue(list[0])
			}
			loops(schema, v.Name, &kids)
		}
		f.Children = kids.list
		fields = append(fields, f)
	}
	return fields
}

// childSet collects child fields in order of discovery, each key once.
type childSet struct{ list []ChildField }

func (c *childSet) add(key, typ string) {
	for i, f := range c.list {
		if f.Key == key {
			if f.Type == "string" && typ != "string" {
				c.list[i].Type = typ
			}
			return
		}
	}
	c.list = append(c.list, ChildField{Key: key, Label: humanize(key), Type: typ})
}

// fromValue adds the keys of an example object, sorted.
func (c *childSet) fromValue(v any) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	for _, k := range sortedKeys(m) {
		c.add(k, valueType(m[k]))
	}
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// fromRefs adds every field read as name.field in the texts.
func (c *childSet) fromRefs(texts []string, name string) {
	if !identRE.MatchString(name) {
		return
	}
	re := regexp.MustCompile(`(?:^|[^\w.$])` + name + `\.([A-Za-z_][A-Za-z0-9_]*)`)
	for _, s := range texts {
		for _, m := range re.FindAllStringSubmatch(s, -1) {
			c.add(m[1], "string")
		}
	}
}

// loops finds the components repeated over the array variable name (by
// "each" or a table's "rows") and adds the element fields they read.
func loops(node any, name string, kids *childSet) {
	switch n := node.(type) {
	case []any:
		for _, v := range n {
			loops(v, name, kids)
		}
	case map[string]any:
		if each, ok := n["each"].(string); ok && bareExpr(each) == name {
			alias, _ := n["as"].(string)
			if alias == "" {
				alias = defaultLoopName
			}
			kids.fromRefs(stringsIn(n, nil), alias)
		}
		if n["type"] == "table" {
			if props, ok := n["props"].(map[string]any); ok {
				if rows, ok := props["rows"].(string); ok && bareExpr(rows) == name {
					kids.fromRefs(stringsIn(props["columns"], nil), "row")
				}
			}
		}
		for _, k := range sortedKeys(n) {
			loops(n[k], name, kids)
		}
	}
}

// defaultLoopName is the element name of an "each" without "as" (render's default).
const defaultLoopName = "item"

func bareExpr(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "{{") && strings.HasSuffix(s, "}}") {
		s = strings.TrimSpace(s[2 : len(s)-2])
	}
	return s
}

// stringsIn appends every string value under node.
func stringsIn(node any, out []string) []string {
	switch n := node.(type) {
	case string:
		out = append(out, n)
	case []any:
		for _, v := range n {
			out = stringsIn(v, out)
		}
	case map[string]any:
		for _, k := range sortedKeys(n) {
			out = stringsIn(n[k], out)
		}
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func valueType(v any) string {
	switch v.(type) {
	case bool:
		return "boolean"
	case float64, json.Number:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "string"
}

// humanize turns a variable name into a label: customerName and
// customer_name become "Customer Name".
func humanize(name string) string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, string(cur))
			cur = nil
		}
	}
	runes := []rune(name)
	for i, r := range runes {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ' ':
			flush()
			continue
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(runes[i-1]) || unicode.IsDigit(runes[i-1])):
			flush()
		}
		cur = append(cur, r)
	}
	flush()
	for i, w := range words {
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		words[i] = string(r)
	}
	if len(words) == 0 {
		return name
	}
	return strings.Join(words, " ")
}
