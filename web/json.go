package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"folio/app"
)

// MaxBody is the request body limit (SPEC.md, Payload limits).
const MaxBody = 10 << 20

// decode reads a JSON object body into v, turning every failure into a clear
// 400: malformed JSON, a wrong type (with the field), an oversized body.
func decode(r *http.Request, v any) error { return decodeWith(r, v, MaxBody) }

// decodeWith is decode with another body limit (asset uploads).
func decodeWith(r *http.Request, v any, limit int64) error {
	body := http.MaxBytesReader(nil, r.Body, limit)
	return decodeFrom(body, v, limit)
}

// decodeFrom reads one JSON object from body into v, as decode.
func decodeFrom(body io.Reader, v any, limit int64) error {
	dec := json.NewDecoder(body)
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("trailing data after the JSON object")
	}
	return bodyError(err, limit)
}

// bodyError is the 400 (or 413) for a failure to read or decode a JSON
// body; nil for nil.
func bodyError(err error, limit int64) error {
	var tooBig *http.MaxBytesError
	var typeErr *json.UnmarshalTypeError
	var synErr *json.SyntaxError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &tooBig):
		return (&app.Error{Code: app.ECodePayloadTooLarge, Message: "request body exceeds 10 MB"}).WithInfo("maxBytes", limit)
	case errors.Is(err, io.EOF):
		return &app.Error{Code: app.ECodeInvalidJSON, Message: "request body must be a JSON object"}
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return &app.Error{Code: app.ECodeInvalidJSON, Message: "request body must be a JSON object"}
		}
		return app.ErrInvalid(typeErr.Field, "%s must be of type %s", typeErr.Field, jsonType(typeErr.Type.Kind().String()))
	case errors.As(err, &synErr):
		return (&app.Error{Code: app.ECodeInvalidJSON, Message: "malformed JSON: " + synErr.Error()}).WithInfo("offset", synErr.Offset)
	default:
		return &app.Error{Code: app.ECodeInvalidJSON, Message: "malformed JSON: " + err.Error()}
	}
}

// decodeGenerate reads the body of a generate request: in one pass when
// it has the usual shape (app.DecodeGenerateInput), else as decode does,
// with the same answers for every body.
func decodeGenerate(r *http.Request) (app.GenerateInput, error) {
	body, err := readBody(r, MaxBody)
	if err != nil {
		return app.GenerateInput{}, bodyError(err, MaxBody)
	}
	if in, ok := app.DecodeGenerateInput(body); ok {
		return in, nil
	}
	var in app.GenerateInput
	return in, decodeFrom(bytes.NewReader(body), &in, MaxBody)
}

// readBody reads the whole body, at most limit bytes (else an
// *http.MaxBytesError), into a buffer of the announced length.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	body := http.MaxBytesReader(nil, r.Body, limit)
	var buf []byte
	if n := r.ContentLength; n > 0 && n <= limit {
		buf = make([]byte, 0, n+1) // +1: the read that finds the end needs room
	} else {
		buf = make([]byte, 0, 512)
	}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func jsonType(kind string) string {
	switch kind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "slice", "array":
		return "array"
	case "map", "struct":
		return "object"
	case "ptr":
		return "the documented type"
	}
	return "number"
}

// page reads page and limit query parameters with the spec's defaults.
func page(r *http.Request) (app.Page, error) {
	p := app.Page{Page: 1, Limit: app.DefaultLimit}
	q := r.URL.Query()
	if s := q.Get("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return p, app.ErrInvalid("page", "page must be a positive integer")
		}
		p.Page = n
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > app.MaxLimit {
			return p, app.ErrInvalid("limit", "limit must be an integer from 1 to %d", app.MaxLimit)
		}
		p.Limit = n
	}
	return p, nil
}

// boolQuery reads an optional boolean query parameter.
func boolQuery(r *http.Request, name string) (*bool, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return nil, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return nil, app.ErrInvalid(name, "%s must be true or false", name)
	}
	return &b, nil
}

// list is the list envelope.
type list struct {
	Data any      `json:"data"`
	Meta app.Meta `json:"meta"`
}

func itoa(n int) string { return strconv.Itoa(n) }
