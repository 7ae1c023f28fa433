package app

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// fastObject decodes a JSON object into the map encoding/json would make
// of it (objects map[string]any, arrays []any, numbers float64, strings,
// bools, nil), in one pass over the bytes: a synchronous generate's
// variables were read three times by encoding/json (its validity scan,
// its decode, and the request's own decode before), 1.6 % of the CPU of a
// generate of the example invoice (issue 24, third pass). ok is false for
// anything it does not decode exactly like encoding/json — invalid JSON, a
// number out of float64's range, nesting deeper than encoding/json allows
// — and the caller then asks encoding/json, for its result or its error.
// FuzzFastObject holds it to encoding/json's result.
func fastObject(data []byte) (m map[string]any, ok bool) {
	d := objDecoder{data: data}
	d.space()
	if d.i >= len(d.data) || d.data[d.i] != '{' {
		return nil, false
	}
	v, ok := d.object(0)
	if !ok {
		return nil, false
	}
	d.space()
	if d.i != len(d.data) {
		return nil, false
	}
	return v, true
}

// maxObjectDepth is encoding/json's nesting limit: deeper input is left
// to it (it fails).
const maxObjectDepth = 10000

type objDecoder struct {
	data []byte
	i    int
}

func (d *objDecoder) space() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *objDecoder) value(depth int) (any, bool) {
	d.space()
	if d.i >= len(d.data) {
		return nil, false
	}
	switch c := d.data[d.i]; {
	case c == '{':
		m, ok := d.object(depth + 1)
		return m, ok
	case c == '[':
		return d.array(depth + 1)
	case c == '"':
		s, ok := d.str()
		return s, ok
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	}
	return nil, false
}

func (d *objDecoder) literal(s string) bool {
	if len(d.data)-d.i < len(s) || string(d.data[d.i:d.i+len(s)]) != s {
		return false
	}
	d.i += len(s)
	return true
}

// object decodes the object at d.i ('{').
func (d *objDecoder) object(depth int) (map[string]any, bool) {
	if depth > maxObjectDepth {
		return nil, false
	}
	d.i++
	m := map[string]any{}
	d.space()
	if d.i < len(d.data) && d.data[d.i] == '}' {
		d.i++
		return m, true
	}
	for {
		d.space()
		if d.i >= len(d.data) || d.data[d.i] != '"' {
			return nil, false
		}
		k, ok := d.str()
		if !ok {
			return nil, false
		}
		d.space()
		if d.i >= len(d.data) || d.data[d.i] != ':' {
			return nil, false
		}
		d.i++
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		m[k] = v
		if end, ok := d.separator('}'); !ok {
			return nil, false
		} else if end {
			return m, true
		}
	}
}

// array decodes the array at d.i ('['); an empty one is an empty slice,
// not nil, as encoding/json makes it.
func (d *objDecoder) array(depth int) (any, bool) {
	if depth > maxObjectDepth {
		return nil, false
	}
	d.i++
	a := make([]any, 0)
	d.space()
	if d.i < len(d.data) && d.data[d.i] == ']' {
		d.i++
		return a, true
	}
	for {
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		if end, ok := d.separator(']'); !ok {
			return nil, false
		} else if end {
			return a, true
		}
	}
}

// separator reads what follows a member or an element: a comma (more
// follow), or closing, which ends the object or array (end); anything
// else is not ok.
func (d *objDecoder) separator(closing byte) (end, ok bool) {
	d.space()
	if d.i >= len(d.data) {
		return false, false
	}
	switch d.data[d.i] {
	case ',':
		d.i++
		return false, true
	case closing:
		d.i++
		return true, true
	}
	return false, false
}

// str decodes the string at d.i ('"'). One without escapes and of valid
// UTF-8 is its bytes; others (escapes, invalid UTF-8, which encoding/json
// replaces) are decoded by encoding/json, once their end is found.
func (d *objDecoder) str() (string, bool) {
	start := d.i
	d.i++
	simple := true
	for d.i < len(d.data) {
		c := d.data[d.i]
		switch {
		case c == '"':
			d.i++
			if simple {
				return string(d.data[start+1 : d.i-1]), true
			}
			var s string
			if json.Unmarshal(d.data[start:d.i], &s) != nil {
				return "", false
			}
			return s, true
		case c == '\\':
			simple = false
			d.i += 2 // the escaped byte cannot end the string
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(d.data[d.i:])
			if r == utf8.RuneError && n == 1 {
				simple = false
			}
			d.i += n
		default:
			d.i++
		}
	}
	return "", false
}

// number decodes the number at d.i by JSON's grammar
// (-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?) as a float64.
func (d *objDecoder) number() (any, bool) {
	start := d.i
	digits := func() int {
		n := 0
		for d.i < len(d.data) && d.data[d.i] >= '0' && d.data[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if d.data[d.i] == '-' {
		d.i++
	}
	if d.i < len(d.data) && d.data[d.i] == '0' {
		d.i++
	} else if digits() == 0 {
		return nil, false
	}
	float := false
	if d.i < len(d.data) && d.data[d.i] == '.' {
		float = true
		d.i++
		if digits() == 0 {
			return nil, false
		}
	}
	if d.i < len(d.data) && (d.data[d.i] == 'e' || d.data[d.i] == 'E') {
		float = true
		d.i++
		if d.i < len(d.data) && (d.data[d.i] == '+' || d.data[d.i] == '-') {
			d.i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	if n := d.i - start; n <= 15 && !float {
		// An integer of up to 15 digits is exact in a float64, as
		// ParseFloat makes it, without the string it would need.
		var v int64
		for _, c := range d.data[start:d.i] {
			if c != '-' {
				v = v*10 + int64(c-'0')
			}
		}
		if d.data[start] == '-' {
			return -float64(v), true // -0 stays negative zero, as ParseFloat's
		}
		return float64(v), true
	}
	f, err := strconv.ParseFloat(string(d.data[start:d.i]), 64)
	if err != nil {
		return nil, false // out of range: encoding/json's error
	}
	return f, true
}
