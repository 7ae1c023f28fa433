package render

import (
	"fmt"
	"strings"
)

// maxIssues caps how many problems one error lists, so a hostile schema
// cannot produce an unbounded error body.
const maxIssues = 100

// Issue is one problem in a template definition, located by a JSON-pointer-like
// path such as "schema.sections[0].components[2].props.content".
type Issue struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// SchemaError reports every problem Compile found in a definition.
type SchemaError struct {
	Issues []Issue
	// Limit is set when the definition exceeds a limit on the template
	// itself (components, nesting depth, nested loops, nested conditions,
	// variables): the first of them in that order. Issues still lists
	// every problem, that one included.
	Limit *LimitError
	// Warnings are what the definition probably did not mean (see
	// Template.Warnings), found beside the errors.
	Warnings []Issue
}

// Error summarises the first issue and how many follow.
func (e *SchemaError) Error() string {
	return summarise("template schema is invalid", len(e.Issues), func(i int) string {
		return e.Issues[i].Path + ": " + e.Issues[i].Message
	})
}

// VariableIssue is one request variable that does not fit its declaration.
type VariableIssue struct {
	Variable string `json:"variable"`
	Message  string `json:"message"`
}

// VariableError reports every request variable that failed validation.
type VariableError struct {
	Errors []VariableIssue
}

// Error summarises the first offending variable and how many follow.
func (e *VariableError) Error() string {
	return summarise("variable validation failed", len(e.Errors), func(i int) string {
		return e.Errors[i].Variable + ": " + e.Errors[i].Message
	})
}

// ExpressionError reports an expression that failed while a document was
// rendered, for example a type mismatch or an exhausted operation budget.
type ExpressionError struct {
	Path       string // where the expression sits, e.g. "schema.sections[0].components[1].props.content"
	Expression string // the expression's source
	Message    string
	Err        error // the cause, when there is one (a *LimitError, say)
}

// Unwrap returns the cause.
func (e *ExpressionError) Unwrap() error { return e.Err }

// Error names the expression and why it failed.
func (e *ExpressionError) Error() string {
	return fmt.Sprintf("expression %q at %s failed: %s", e.Expression, e.Path, e.Message)
}

func summarise(head string, n int, item func(int) string) string {
	if n == 0 {
		return head
	}
	var b strings.Builder
	b.WriteString(head)
	b.WriteString(": ")
	b.WriteString(item(0))
	if n > 1 {
		fmt.Fprintf(&b, " (and %d more)", n-1)
	}
	return b.String()
}

// issues collects schema problems while a definition is compiled.
type issues struct {
	list []Issue
}

func (is *issues) add(path, format string, args ...any) {
	if len(is.list) >= maxIssues {
		return
	}
	is.list = append(is.list, Issue{Path: path, Message: fmt.Sprintf(format, args...)})
}

func (is *issues) err() *SchemaError {
	if len(is.list) == 0 {
		return nil
	}
	return &SchemaError{Issues: is.list}
}
