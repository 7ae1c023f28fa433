package render

import "encoding/json"

// Format is an output format.
type Format string

// Output formats.
const (
	PDF  Format = "pdf"
	XLSX Format = "xlsx"
)

// Variable declares one template input.
type Variable struct {
	Name         string `json:"name"`
	Type         string `json:"type"` // string, number, integer, boolean, date, array or object
	Required     bool   `json:"required"`
	DefaultValue any    `json:"defaultValue"`
	Description  string `json:"description"`
}

// CalculatedVariable is a value computed from an expression over the other values.
type CalculatedVariable struct {
	Name       string `json:"name"`
	Expression string `json:"expression"`
}

// Definition is everything a stored template holds that rendering needs.
type Definition struct {
	// Schema is {format, pageSize, orientation, margins, sections:[{id, name,
	// role, components:[{type, props, if, each, as}]}]}.
	Schema              json.RawMessage      `json:"schema"`
	Variables           []Variable           `json:"variables"`
	Constants           map[string]any       `json:"constants"`
	CalculatedVariables []CalculatedVariable `json:"calculatedVariables"`
	// Locale, when set, overrides the schema's "locale" (a request's
	// "locale"): a BCP 47 tag such as de-DE. It is not stored with a
	// template; a bad tag is a schema issue at the path "locale".
	Locale string `json:"-"`
}
