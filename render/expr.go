package render

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser/lexer"
	"github.com/expr-lang/expr/vm"
)

// Names the sandbox reserves. Template authors cannot use names starting
// with "__"; the guard patch inserts calls to guardFunc around operations.
const (
	reservedPrefix = "__"
	budgetKey      = "__budget"
	guardFunc      = "__op"
)

// safeBuiltins are the expr builtins templates may call. Left out: the clock
// and time-zone database (now, date, duration, timezone), and builtins whose
// output can dwarf their input in one step (repeat, replace, join; safe
// versions of the last two are helpers).
var safeBuiltins = []string{
	"all", "none", "any", "one", "filter", "map", "find", "findIndex", "findLast",
	"findLastIndex", "count", "sum", "groupBy", "sortBy", "reduce", "len", "type",
	"abs", "ceil", "floor", "round", "int", "float", "string", "trim", "trimPrefix",
	"trimSuffix", "split", "splitAfter", "indexOf", "lastIndexOf", "hasPrefix",
	"hasSuffix", "max", "min", "mean", "median", "first", "last", "get", "take",
	"keys", "values", "toPairs", "fromPairs", "reverse", "uniq", "concat", "flatten", "sort",
}

// expression is one compiled expression and where it came from.
type expression struct {
	src   string
	path  string
	prog  *vm.Program
	names []string // identifiers it reads, without let-bound names and functions
	// lookup is set for a plain path such as "row.price": it is read from the
	// environment directly, without the VM (the commonest placeholder).
	lookup []string
}

// plainPath matches expressions that are only a dotted path of names.
var plainPath = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)

// lookupPath returns the path segments of a plain path expression, or nil
// when src is anything else or starts with a keyword or function name.
func lookupPath(src string) []string {
	if !plainPath.MatchString(src) {
		return nil
	}
	segs := strings.Split(src, ".")
	if exprKeywords[segs[0]] || isHelper(segs[0]) || strings.HasPrefix(segs[0], reservedPrefix) {
		return nil
	}
	for _, b := range safeBuiltins {
		if segs[0] == b {
			return nil
		}
	}
	return segs
}

// fetch reads a plain path from env the way the sandbox would: a missing
// name or key is nil. ok is false when the path crosses something other
// than an object, which the VM must handle.
func (x *expression) fetch(env map[string]any) (v any, ok bool) {
	v = env[x.lookup[0]]
	for _, seg := range x.lookup[1:] {
		switch m := v.(type) {
		case nil:
			return nil, true
		case map[string]any:
			v = m[seg]
		default:
			return nil, false
		}
	}
	return v, true
}

// exprCompiler compiles expressions with the sandbox's options.
type exprCompiler struct {
	base []expr.Option
}

func newExprCompiler(limits Limits) *exprCompiler {
	opts := []expr.Option{
		expr.AllowUndefinedVariables(),
		expr.DisableAllBuiltins(),
		expr.MaxNodes(uint(limits.Operations)),
	}
	for _, name := range safeBuiltins {
		opts = append(opts, expr.EnableBuiltin(name))
	}
	for _, h := range helpers {
		opts = append(opts, expr.Function(h.name, h.fn))
	}
	opts = append(opts, expr.Function(guardFunc, guard))
	return &exprCompiler{base: opts}
}

// compile compiles src; path locates it in error messages.
func (ec *exprCompiler) compile(path, src string) (*expression, error) {
	if strings.TrimSpace(src) == "" {
		return nil, errors.New("expression is empty")
	}
	src = strings.TrimSpace(src)
	orig := src
	src, err := callBarePipes(src)
	if err != nil {
		return nil, errors.New(firstLine(err.Error()))
	}
	names := &nameCollector{}
	opts := append(ec.base[:len(ec.base):len(ec.base)], expr.Patch(names), expr.Patch(guardPatch{}))
	prog, err := expr.Compile(src, opts...)
	if err != nil {
		return nil, errors.New(firstLine(err.Error()))
	}
	if names.reserved != "" {
		return nil, fmt.Errorf("name %q is reserved", names.reserved)
	}
	for _, fn := range names.calls {
		if !isHelper(fn) {
			return nil, fmt.Errorf("unknown function %q", fn)
		}
	}
	return &expression{src: orig, path: path, prog: prog, names: names.list(), lookup: lookupPath(src)}, nil
}

// callBarePipes lets "x | upper" mean "x | upper()", as template authors write it.
func callBarePipes(src string) (string, error) {
	tokens, err := lexer.Lex(file.NewSource(src))
	if err != nil {
		return "", err
	}
	var inserts []int // rune offsets after which "()" goes
	for i := 1; i < len(tokens); i++ {
		prev, tok := tokens[i-1], tokens[i]
		if prev.Kind != lexer.Operator || prev.Value != "|" || tok.Kind != lexer.Identifier {
			continue
		}
		if i+1 < len(tokens) && tokens[i+1].Kind == lexer.Bracket && tokens[i+1].Value == "(" {
			continue
		}
		inserts = append(inserts, tok.To)
	}
	if len(inserts) == 0 {
		return src, nil
	}
	runes := []rune(src)
	var b strings.Builder
	last := 0
	for _, at := range inserts {
		if at < last || at > len(runes) {
			return src, nil
		}
		b.WriteString(string(runes[last:at]))
		b.WriteString("()")
		last = at
	}
	b.WriteString(string(runes[last:]))
	return b.String(), nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// nameCollector records the identifiers an expression reads.
type nameCollector struct {
	seen     map[string]bool
	order    []string
	local    map[string]bool // let-bound names
	funcs    map[string]bool // called names
	calls    []string        // called names, in order
	reserved string
}

func (n *nameCollector) Visit(node *ast.Node) {
	switch x := (*node).(type) {
	case *ast.IdentifierNode:
		if strings.HasPrefix(x.Value, reservedPrefix) && n.reserved == "" {
			n.reserved = x.Value
		}
		if n.seen == nil {
			n.seen = map[string]bool{}
		}
		if !n.seen[x.Value] {
			n.seen[x.Value] = true
			n.order = append(n.order, x.Value)
		}
	case *ast.VariableDeclaratorNode:
		if n.local == nil {
			n.local = map[string]bool{}
		}
		n.local[x.Name] = true
	case *ast.CallNode:
		if id, ok := x.Callee.(*ast.IdentifierNode); ok {
			if n.funcs == nil {
				n.funcs = map[string]bool{}
			}
			if !n.funcs[id.Value] {
				n.calls = append(n.calls, id.Value)
			}
			n.funcs[id.Value] = true
		}
	}
}

func (n *nameCollector) list() []string {
	var out []string
	for _, name := range n.order {
		if !n.local[name] && !n.funcs[name] && name != "$env" {
			out = append(out, name)
		}
	}
	return out
}

// guardPatch rewrites the tree so that a missing path yields nil instead of
// an error (every member access becomes optional), and so that every
// operation that can grow a value or repeat runs through guardFunc, which
// counts operations and caps value sizes.
type guardPatch struct{}

func (guardPatch) Visit(node *ast.Node) {
	switch x := (*node).(type) {
	case *ast.MemberNode:
		if !x.Method {
			x.Optional = true
			*node = &ast.ChainNode{Node: x}
		}
	case *ast.BinaryNode, *ast.BuiltinNode:
		*node = guarded(x)
	case *ast.CallNode:
		if id, ok := x.Callee.(*ast.IdentifierNode); ok && id.Value == guardFunc {
			return
		}
		*node = guarded(x)
	case *ast.PredicateNode:
		x.Node = guarded(x.Node)
	}
}

func guarded(n ast.Node) ast.Node {
	return &ast.CallNode{
		Callee:    &ast.IdentifierNode{Value: guardFunc},
		Arguments: []ast.Node{&ast.IdentifierNode{Value: budgetKey}, n},
	}
}

// budget is the per-evaluation allowance guardFunc draws on.
type budget struct {
	ops, maxOps int
	maxString   int
	maxItems    int
}

var errNoBudget = errors.New("expression evaluated outside the sandbox")

// guard is guardFunc: it counts one operation and refuses oversized values.
func guard(params ...any) (any, error) {
	if len(params) != 2 {
		return nil, errNoBudget
	}
	b, ok := params[0].(*budget)
	if !ok || b == nil {
		return nil, errNoBudget
	}
	b.ops++
	if b.ops > b.maxOps {
		return nil, fmt.Errorf("operation budget of %d exceeded", b.maxOps)
	}
	switch v := params[1].(type) {
	case nil, bool, int, float64:
	case string:
		if len(v) > b.maxString {
			return nil, fmt.Errorf("text longer than %d bytes", b.maxString)
		}
	default:
		rv := reflect.ValueOf(v)
		switch rv.Kind() {
		case reflect.Slice, reflect.Array, reflect.Map:
			if rv.Len() > b.maxItems {
				return nil, fmt.Errorf("collection larger than %d elements", b.maxItems)
			}
		}
	}
	return params[1], nil
}

// evaluator runs expressions for one render or one Values call; it is not
// safe for concurrent use.
type evaluator struct {
	machine vm.VM
	budget  budget
}

func newEvaluator(l Limits) *evaluator {
	ops := l.runtimeOperations()
	return &evaluator{
		machine: vm.VM{MemoryBudget: uint(max(ops, 1_000_000))},
		budget: budget{
			maxOps:    ops,
			maxString: int(min(l.Bytes, 16<<20)),
			maxItems:  max(ops, 1_000_000),
		},
	}
}

// env returns a fresh evaluation environment holding values.
func (ev *evaluator) env(values map[string]any, extra int) map[string]any {
	env := make(map[string]any, len(values)+extra+1)
	for k, v := range values {
		env[k] = v
	}
	env[budgetKey] = &ev.budget
	return env
}

// run evaluates x in env, which must come from ev.env (or a copy of it).
func (ev *evaluator) run(x *expression, env map[string]any) (out any, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, &ExpressionError{Path: x.path, Expression: x.src, Message: fmt.Sprint(r)}
		}
	}()
	if x.lookup != nil {
		if v, ok := x.fetch(env); ok {
			return v, nil
		}
	}
	ev.budget.ops = 0
	out, err = ev.machine.Run(x.prog, env)
	if err != nil {
		return nil, &ExpressionError{Path: x.path, Expression: x.src, Message: firstLine(err.Error())}
	}
	return out, nil
}
