package render

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
)

// The sandbox makes every member access optional, so a key missing from
// the data reaches an operator as nil and the VM reports the operator
// ("invalid operation: float64 * <nil>"), not the key. missingHint looks
// at the operation that failed and names what its operands read and the
// data lacks, with the closest key that is there.

// maxHintElements bounds how many elements of a collection missingHint
// looks through for the one that lacks a key.
const maxHintElements = 10_000

// binding is one value an operand reads: where it is in the data and
// what was found there.
type binding struct {
	path    string
	val     any
	missing bool     // the last step of path is not in the data
	null    bool     // path is in the data and null
	keys    []string // when missing: the keys that are there
}

// missingHint explains err, the failure of x in env, by the operand it
// read as nil; it returns "" when it cannot tell.
func missingHint(x *expression, env map[string]any, err error) string {
	var fe *file.Error
	if !errors.As(err, &fe) {
		return ""
	}
	tree, perr := parser.Parse(x.prog.Source().String())
	if perr != nil {
		return ""
	}
	h := hinter{env: env}
	op, ancestors := h.find(tree.Node, nil, fe.From)
	if op == nil {
		return ""
	}
	var operands []ast.Node
	switch n := op.(type) {
	case *ast.BinaryNode:
		operands = []ast.Node{n.Left, n.Right}
	case *ast.UnaryNode:
		operands = []ast.Node{n.Node}
	case *ast.CallNode:
		operands = n.Arguments
	case *ast.BuiltinNode:
		operands = n.Arguments
	}
	ancestors = append(ancestors, op)
	for _, o := range operands {
		for _, b := range h.resolve(o, ancestors) {
			switch {
			case b.missing:
				return b.path + " is missing" + suggest(b.path, b.keys)
			case b.null:
				return b.path + " is null"
			}
		}
	}
	return ""
}

type hinter struct {
	env map[string]any
}

// find returns the operation at offset from, and the nodes above it.
func (h hinter) find(n ast.Node, above []ast.Node, from int) (ast.Node, []ast.Node) {
	if n == nil {
		return nil, nil
	}
	switch n.(type) {
	case *ast.BinaryNode, *ast.UnaryNode, *ast.CallNode, *ast.BuiltinNode:
		if n.Location().From == from {
			return n, above
		}
	}
	above = append(above, n)
	for _, c := range children(n) {
		if op, anc := h.find(c, above, from); op != nil {
			return op, anc
		}
	}
	return nil, nil
}

// resolve returns what the path expression n reads from the data: one
// binding, or one per element when n reads the element of a predicate
// (#); nil when n is not a path.
func (h hinter) resolve(n ast.Node, above []ast.Node) []binding {
	switch x := n.(type) {
	case *ast.ChainNode:
		return h.resolve(x.Node, above)
	case *ast.IdentifierNode:
		if declaredAbove(x.Value, above) || strings.HasPrefix(x.Value, reservedPrefix) {
			return nil
		}
		v, ok := h.env[x.Value]
		if !ok {
			return []binding{{path: x.Value, missing: true, keys: visibleKeys(h.env)}}
		}
		return []binding{{path: x.Value, val: v, null: v == nil}}
	case *ast.PointerNode:
		if x.Name != "" {
			return nil
		}
		// # is the element of the nearest predicate: its builtin's first
		// argument is the collection.
		for i := len(above) - 1; i > 0; i-- {
			if _, ok := above[i].(*ast.PredicateNode); !ok {
				continue
			}
			b, ok := above[i-1].(*ast.BuiltinNode)
			if !ok || len(b.Arguments) == 0 {
				return nil
			}
			var out []binding
			for _, coll := range h.resolve(b.Arguments[0], above[:i-1]) {
				list, ok := coll.val.([]any)
				if coll.missing || coll.null || !ok {
					out = append(out, coll)
					continue
				}
				for j, e := range list[:min(len(list), maxHintElements)] {
					out = append(out, binding{path: fmt.Sprintf("%s[%d]", coll.path, j), val: e, null: e == nil})
				}
			}
			return out
		}
		return nil
	case *ast.MemberNode:
		if x.Method {
			return nil
		}
		var out []binding
		for _, b := range h.resolve(x.Node, above) {
			if b.missing || b.null {
				out = append(out, b)
				continue
			}
			switch prop := x.Property.(type) {
			case *ast.StringNode:
				m, ok := b.val.(map[string]any)
				if !ok {
					continue
				}
				path := b.path + "." + prop.Value
				if v, ok := m[prop.Value]; ok {
					out = append(out, binding{path: path, val: v, null: v == nil})
				} else {
					out = append(out, binding{path: path, missing: true, keys: visibleKeys(m)})
				}
			case *ast.IntegerNode:
				list, ok := b.val.([]any)
				if !ok {
					continue
				}
				path := fmt.Sprintf("%s[%d]", b.path, prop.Value)
				if i := prop.Value; i >= 0 && i < len(list) {
					out = append(out, binding{path: path, val: list[i], null: list[i] == nil})
				} else {
					out = append(out, binding{path: path, missing: true})
				}
			}
		}
		return out
	}
	return nil
}

// declaredAbove reports whether a let above binds name.
func declaredAbove(name string, above []ast.Node) bool {
	for _, n := range above {
		if d, ok := n.(*ast.VariableDeclaratorNode); ok && d.Name == name {
			return true
		}
	}
	return false
}

func visibleKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		if !strings.HasPrefix(k, reservedPrefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// suggest returns " (did you mean k?)" for the key closest to the last
// step of path: one that differs only in case, else one a few edits away.
func suggest(path string, keys []string) string {
	name := path
	if i := strings.LastIndexAny(path, ".["); i >= 0 {
		name = path[i+1:]
	}
	if k := closest(name, keys); k != "" {
		return " (did you mean " + k + "?)"
	}
	return ""
}

// maxSuggestLen is the longest name closest compares by edits.
const maxSuggestLen = 64

// closest returns the key of keys nearest to name, or "" when none is near.
func closest(name string, keys []string) string {
	for _, k := range keys {
		if strings.EqualFold(k, name) {
			return k
		}
	}
	if len(name) > maxSuggestLen {
		return ""
	}
	best, bestD := "", max(1, min(3, len(name)/3))+1
	for _, k := range keys {
		if len(k) > maxSuggestLen {
			continue
		}
		if d := editDistance(strings.ToLower(name), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the number of single-rune insertions, deletions,
// substitutions and swaps of neighbours that turn a into b (optimal
// string alignment: "widht" is one edit from "width").
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// children returns the nodes directly under n.
func children(n ast.Node) []ast.Node {
	switch x := n.(type) {
	case *ast.UnaryNode:
		return []ast.Node{x.Node}
	case *ast.BinaryNode:
		return []ast.Node{x.Left, x.Right}
	case *ast.ChainNode:
		return []ast.Node{x.Node}
	case *ast.MemberNode:
		return []ast.Node{x.Node, x.Property}
	case *ast.SliceNode:
		return []ast.Node{x.Node, x.From, x.To}
	case *ast.CallNode:
		return append([]ast.Node{x.Callee}, x.Arguments...)
	case *ast.BuiltinNode:
		return x.Arguments
	case *ast.PredicateNode:
		return []ast.Node{x.Node}
	case *ast.VariableDeclaratorNode:
		return []ast.Node{x.Value, x.Expr}
	case *ast.SequenceNode:
		return x.Nodes
	case *ast.ConditionalNode:
		return []ast.Node{x.Cond, x.Exp1, x.Exp2}
	case *ast.ArrayNode:
		return x.Nodes
	case *ast.MapNode:
		return x.Pairs
	case *ast.PairNode:
		return []ast.Node{x.Key, x.Value}
	}
	return nil
}
