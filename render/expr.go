package render

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"unsafe"

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

// calledAs is the name a helper is registered under. t is registered as
// "__t" and calls of t(...) are renamed to it: a function named t would
// hide every variable or loop item named t ({{ t.name }}), which
// templates written before translations use.
func calledAs(name string) string {
	if name == "t" {
		return reservedPrefix + "t"
	}
	return name
}

// exprCompiler compiles expressions with the sandbox's options.
type exprCompiler struct {
	base []expr.Option
	// fmt is passed to every locale-aware helper call (see localeHelpers).
	fmt *formatting
	// tkeys are the literal keys of t("key") calls, for the warnings.
	tkeys []translationUse
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
		opts = append(opts, expr.Function(calledAs(h.name), h.fn))
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
	f := ec.fmt
	if f == nil {
		f = defaultFormatting
	}
	opts := append(ec.base[:len(ec.base):len(ec.base)], expr.Patch(names), expr.Patch(guardPatch{fmt: f}))
	prog, err := expr.Compile(src, opts...)
	if err != nil {
		return nil, errors.New(firstLine(err.Error()))
	}
	if names.env {
		return nil, errors.New("$env is not available in templates: name the variables you need")
	}
	if names.reserved != "" {
		return nil, fmt.Errorf("name %q is reserved", names.reserved)
	}
	for _, fn := range names.calls {
		if !isHelper(fn) {
			return nil, fmt.Errorf("unknown function %q", fn)
		}
	}
	for _, key := range names.tkeys {
		ec.tkeys = append(ec.tkeys, translationUse{path: path, key: key})
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
	env      bool     // $env, the whole evaluation environment, is read
	tkeys    []string // literal keys of t("key") calls
}

func (n *nameCollector) Visit(node *ast.Node) {
	switch x := (*node).(type) {
	case *ast.IdentifierNode:
		if strings.HasPrefix(x.Value, reservedPrefix) && n.reserved == "" {
			n.reserved = x.Value
		}
		// $env would hand a template the environment itself: a map that
		// holds the sandbox's budget and, once a calculated variable stores
		// it, itself.
		if x.Value == "$env" {
			n.env = true
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
			if id.Value == "t" && len(x.Arguments) == 1 {
				if key, ok := x.Arguments[0].(*ast.StringNode); ok {
					n.tkeys = append(n.tkeys, key.Value)
				}
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
// operation that can grow a value or repeat, and every array or map
// literal, runs through guardFunc, which counts operations, caps value
// sizes, counts the bytes made and bounds how deeply values nest. Every
// value an expression makes passes through it: the others are read from
// the environment (whose values are bounded already) or are parts of
// values that passed.
//
// It also passes the template's formatting to locale-aware helpers, as a
// first argument their authors never write.
type guardPatch struct{ fmt *formatting }

func (g guardPatch) Visit(node *ast.Node) {
	switch x := (*node).(type) {
	case *ast.MemberNode:
		if !x.Method {
			x.Optional = true
			*node = &ast.ChainNode{Node: x}
		}
	case *ast.BinaryNode, *ast.BuiltinNode, *ast.ArrayNode, *ast.MapNode:
		*node = guarded(x)
	case *ast.CallNode:
		id, ok := x.Callee.(*ast.IdentifierNode)
		if ok && id.Value == guardFunc {
			return
		}
		if ok && localeHelpers[id.Value] {
			x.Arguments = append([]ast.Node{&ast.ConstantNode{Value: g.fmt}}, x.Arguments...)
		}
		if ok {
			id.Value = calledAs(id.Value)
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
	// bytes counts the size of every string and collection the
	// evaluation makes, up to maxBytes. A collection counts everything it
	// holds, as if written out: values may share parts (reduce(1..30,
	// [#acc, #acc]) holds one array 2^30 times), and builtins that walk
	// them (flatten, ==, string) cost that much.
	bytes, maxBytes int64
	// sizes caches what each collection seen measures, so that a
	// collection built from earlier ones costs its length, not its size.
	// Entries hold the value, which keeps its address from being reused
	// within the evaluation.
	sizes map[valueID]valueSize
}

// valueID identifies a slice or map by its data pointer and length.
type valueID struct {
	ptr uintptr
	n   int
	m   bool
}

// valueSize is what a value holds: how many levels of collections nest in
// it and its size written out, in bytes.
type valueSize struct {
	v     any
	depth int
	size  int64
}

// Byte estimates of a collection's parts: an interface value, and a map
// entry with its key.
const (
	elemBytes  = 16
	entryBytes = 48
)

// reset starts a new evaluation.
func (b *budget) reset() {
	b.ops, b.bytes = 0, 0
	clear(b.sizes)
}

// vmMemoryExceeded is what expr's VM panics with when its memory budget
// runs out (a string, with no error type to match).
const vmMemoryExceeded = "memory budget exceeded"

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
		b.bytes += int64(len(v))
	default:
		rv := reflect.ValueOf(v)
		switch rv.Kind() {
		case reflect.Slice, reflect.Array, reflect.Map:
			if rv.Len() > b.maxItems {
				return nil, fmt.Errorf("collection larger than %d elements", b.maxItems)
			}
			m := b.measure(v, 0)
			if m.depth > maxValueDepth {
				return nil, fmt.Errorf("values nested more than %d levels deep", maxValueDepth)
			}
			b.bytes += m.size
		}
	}
	if b.bytes > b.maxBytes {
		return nil, newLimitError(LimitExpressionMemory, b.bytes, b.maxBytes)
	}
	return params[1], nil
}

// measure measures v, which sits level collections deep. Depths are
// counted up to just past maxValueDepth and sizes up to just past the
// byte budget: the walk stops there, so it costs at most what the
// value would be allowed to hold.
func (b *budget) measure(v any, level int) valueSize {
	if level > maxValueDepth {
		return valueSize{depth: 1}
	}
	var id valueID
	switch x := v.(type) {
	case nil, bool, int, float64:
		return valueSize{size: 8}
	case string:
		return valueSize{size: int64(len(x))}
	case []any:
		if len(x) == 0 {
			return valueSize{depth: 1}
		}
		id = valueID{ptr: uintptr(unsafe.Pointer(&x[0])), n: len(x)}
	case map[string]any:
		if len(x) == 0 {
			return valueSize{depth: 1}
		}
		id = valueID{ptr: uintptr(reflect.ValueOf(x).UnsafePointer()), n: len(x), m: true}
	default:
		rv := reflect.ValueOf(v)
		switch rv.Kind() {
		case reflect.Slice, reflect.Map:
			if rv.Len() == 0 {
				return valueSize{depth: 1}
			}
			id = valueID{ptr: uintptr(rv.UnsafePointer()), n: rv.Len(), m: rv.Kind() == reflect.Map}
		case reflect.Array:
			id = valueID{} // not cached
		default:
			return valueSize{size: 8}
		}
	}
	if id.ptr != 0 {
		if m, ok := b.sizes[id]; ok {
			return m
		}
	}
	inner, size, whole := 0, int64(0), true
	each := func(e any, per int64) bool {
		m := b.measure(e, level+1)
		inner = max(inner, m.depth)
		size += m.size + per
		whole = level+1+inner <= maxValueDepth && size <= b.maxBytes
		return whole
	}
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if !each(e, elemBytes) {
				break
			}
		}
	case map[string]any:
		for k, e := range x {
			if !each(e, entryBytes+int64(len(k))) {
				break
			}
		}
	default:
		rv := reflect.ValueOf(v)
		if rv.Kind() == reflect.Map {
			for it := rv.MapRange(); it.Next(); {
				if !each(it.Value().Interface(), entryBytes) {
					break
				}
			}
		} else {
			for i := range rv.Len() {
				if !each(rv.Index(i).Interface(), elemBytes) {
					break
				}
			}
		}
	}
	m := valueSize{v: v, depth: 1 + inner, size: size}
	// A walk that stopped early measured only "too much", which is not kept.
	if id.ptr != 0 && whole && level+m.depth <= maxValueDepth {
		if b.sizes == nil {
			b.sizes = map[valueID]valueSize{}
		}
		b.sizes[id] = m
	}
	return m
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
		// The VM counts the elements of the ranges, arrays and maps it
		// makes before making them; its budget is the same bytes as ours.
		machine: vm.VM{MemoryBudget: uint(l.expressionMemory() / elemBytes)},
		budget: budget{
			maxOps:    ops,
			maxString: int(min(l.Bytes, 16<<20)),
			maxItems:  max(ops, 1_000_000),
			maxBytes:  l.expressionMemory(),
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
	ev.budget.reset()
	out, err = ev.machine.Run(x.prog, env)
	ev.budget.reset() // let go of what the evaluation made
	if err != nil {
		// The VM's own budget panics with a bare string: it is this limit.
		if le := (*LimitError)(nil); !errors.As(err, &le) && strings.Contains(err.Error(), vmMemoryExceeded) {
			err = newLimitError(LimitExpressionMemory, ev.budget.maxBytes+1, ev.budget.maxBytes)
		}
		msg := firstLine(err.Error())
		if le := (*LimitError)(nil); !errors.As(err, &le) {
			if hint := missingHint(x, env, err); hint != "" {
				msg = hint
			}
		}
		return nil, &ExpressionError{Path: x.path, Expression: x.src, Message: msg, Err: err}
	}
	return out, nil
}
