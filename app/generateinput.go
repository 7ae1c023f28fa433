package app

import "encoding/json"

// DecodeGenerateInput decodes the body of POST /api/v1/documents/generate
// in one pass, its variables and metadata included, when the body has the
// usual shape: an object whose members are, each at most once and spelled
// exactly, templateId, format, filename and locale (strings), version (a
// string or a number) and variables and metadata (objects). ok is false
// for anything else — other members, other spellings (encoding/json
// matches names without regard to case), duplicates, other types, invalid
// JSON — and the caller then decodes the body with encoding/json, which
// gives the result or the error it always gave. What it decodes is what
// encoding/json would have made of the body, with the variables and
// metadata already checked (decodeBody uses them instead of decoding the
// raw bytes again). Before, a synchronous generate scanned the body twice
// in encoding/json (its validity scan and its decode, the variables copied
// as raw bytes) and then decoded the variables (fastObject): 3 % of its
// CPU (issue 24, fourth pass). TestDecodeGenerateInput and
// FuzzDecodeGenerateInput hold it to encoding/json.
func DecodeGenerateInput(body []byte) (in GenerateInput, ok bool) {
	d := objDecoder{data: body}
	d.space()
	if d.i >= len(d.data) || d.data[d.i] != '{' {
		return in, false
	}
	d.i++
	d.space()
	if d.i < len(d.data) && d.data[d.i] == '}' {
		d.i++
		return in, d.end()
	}
	var seen uint8
	for {
		d.space()
		if d.i >= len(d.data) || d.data[d.i] != '"' {
			return in, false
		}
		k, ok := d.str()
		if !ok {
			return in, false
		}
		d.space()
		if d.i >= len(d.data) || d.data[d.i] != ':' {
			return in, false
		}
		d.i++
		d.space()
		if d.i >= len(d.data) {
			return in, false
		}
		var bit uint8
		switch k {
		case "templateId":
			bit, ok = 1, d.string(&in.TemplateID)
		case "format":
			bit, ok = 2, d.string(&in.Format)
		case "filename":
			bit, ok = 4, d.string(&in.Filename)
		case "locale":
			bit, ok = 8, d.string(&in.Locale)
		case "variables":
			bit = 16
			in.Variables, in.vars, ok = d.rawObject()
		case "metadata":
			bit = 32
			in.Metadata, in.meta, ok = d.rawObject()
		case "version":
			bit = 64
			start := d.i
			switch c := d.data[d.i]; {
			case c == '"':
				_, ok = d.str()
			case c == '-' || c >= '0' && c <= '9':
				_, ok = d.number()
			default:
				ok = false
			}
			in.Version = json.RawMessage(d.data[start:d.i])
		default:
			return in, false
		}
		if !ok || seen&bit != 0 {
			return in, false
		}
		seen |= bit
		if end, ok := d.separator('}'); !ok {
			return in, false
		} else if end {
			return in, d.end()
		}
	}
}

// end reports whether only white space follows.
func (d *objDecoder) end() bool {
	d.space()
	return d.i == len(d.data)
}

// string decodes a JSON string at d.i into s; anything else is not ok.
func (d *objDecoder) string(s *string) bool {
	if d.data[d.i] != '"' {
		return false
	}
	v, ok := d.str()
	*s = v
	return ok
}

// rawObject decodes the object at d.i (a member of the body: nested once)
// and returns its bytes beside it; anything else is not ok.
func (d *objDecoder) rawObject() (json.RawMessage, map[string]any, bool) {
	if d.data[d.i] != '{' {
		return nil, nil, false
	}
	start := d.i
	m, ok := d.object(2) // counted as encoding/json counts the body's depth, or deeper
	if !ok {
		return nil, nil, false
	}
	return json.RawMessage(d.data[start:d.i]), m, true
}
