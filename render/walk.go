package render

import (
	"context"
	"fmt"
	"reflect"
)

// run is the state one render shares across output formats: limits,
// the expression evaluator and the loop-iteration count.
type run struct {
	ctx        context.Context
	limits     Limits
	ev         *evaluator
	iterations int
	mem        memoryMeter
}

func newRun(ctx context.Context, limits Limits) *run {
	return &run{ctx: ctx, limits: limits, ev: newEvaluator(limits), mem: memoryMeter{budget: limits.Memory, res: reservationOf(ctx)}}
}

// emitFunc draws one component instance in env.
type emitFunc func(c *component, env map[string]any) error

// walk expands "if" and "each" over list and calls emit for every instance.
// Inside a loop the element is bound to the component's "as" name and its
// position (from 0) to "index".
func (r *run) walk(list []*component, env map[string]any, emit emitFunc) error {
	for _, c := range list {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		if c.cond != nil {
			v, err := r.ev.run(c.cond, env)
			if err != nil {
				return err
			}
			if !truthy(v) {
				continue
			}
		}
		if c.each == nil {
			if err := emit(c, env); err != nil {
				return err
			}
			continue
		}
		v, err := r.ev.run(c.each, env)
		if err != nil {
			return err
		}
		n, ok := listLen(v)
		if !ok {
			return &ExpressionError{Path: c.each.path, Expression: c.each.src,
				Message: fmt.Sprintf("\"each\" needs an array, got %s", describe(v))}
		}
		if total := r.iterations + n; total > r.limits.LoopIterations {
			return newLimitError(LimitLoopIterations, int64(total), int64(r.limits.LoopIterations))
		}
		items, _ := toList(v)
		for i, item := range items {
			r.iterations++
			if r.iterations > r.limits.LoopIterations {
				return newLimitError(LimitLoopIterations, int64(r.iterations), int64(r.limits.LoopIterations))
			}
			child := make(map[string]any, len(env)+2)
			for k, v := range env {
				child[k] = v
			}
			child[c.as] = item
			child["index"] = i
			if err := emit(c, child); err != nil {
				return err
			}
		}
	}
	return nil
}

// truthy decides "if": false, nil, 0, "" and empty collections are false.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	}
	if f, ok := toFloat(v); ok {
		return f != 0
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		return rv.Len() > 0
	}
	return true
}

// listLen returns the length of an array value; nil is empty.
func listLen(v any) (int, bool) {
	if v == nil {
		return 0, true
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return 0, false
	}
	return rv.Len(), true
}

// toList returns the elements of an array value; nil is an empty list.
func toList(v any) ([]any, bool) {
	switch x := v.(type) {
	case nil:
		return nil, true
	case []any:
		return x, true
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return nil, false
	}
	out := make([]any, rv.Len())
	for i := range out {
		out[i] = rv.Index(i).Interface()
	}
	return out, true
}
