package driver

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// The JSON-RPC layer of the hot path: incoming messages are classified by a
// scan of their top-level keys (no reflection, no allocation); only the rare
// parts (error messages, initialize results, server→client requests) go
// through encoding/json.

// Kind is the kind of a JSON-RPC message.
type Kind uint8

const (
	KindInvalid      Kind = iota // not a JSON-RPC 2.0 object
	KindRequest                  // method and id
	KindNotification             // method, no id
	KindResponse                 // id with result or error
)

// Message is a scanned JSON-RPC message. Its slices alias the input.
type Message struct {
	Kind   Kind
	ID     []byte // raw JSON id (number or string with quotes), nil if none
	Method []byte // method name (unquoted; escapes left as they were)
	Params []byte // raw params, nil if none
	Result []byte // raw result, nil if none
	Error  []byte // raw error object, nil if none
}

var errNotObject = errors.New("not a JSON object")

// ParseMessage scans one JSON-RPC message (a JSON object). It checks the
// structure only as far as it reads: values it skips must be well-formed
// JSON, values it keeps are validated by whoever decodes them.
func ParseMessage(b []byte) (Message, error) {
	var m Message
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return m, errNotObject
	}
	i++
	var hasMethod bool
	for {
		i = skipWS(b, i)
		if i >= len(b) {
			return m, errBadJSON
		}
		if b[i] == '}' {
			i++
			break
		}
		if b[i] == ',' {
			i++
			continue
		}
		if b[i] != '"' {
			return m, errBadJSON
		}
		ks := i + 1
		ke, err := skipString(b, i)
		if err != nil {
			return m, err
		}
		key := b[ks : ke-1]
		i = skipWS(b, ke)
		if i >= len(b) || b[i] != ':' {
			return m, errBadJSON
		}
		i = skipWS(b, i+1)
		vs := i
		ve, err := skipValue(b, i)
		if err != nil {
			return m, err
		}
		v := b[vs:ve]
		i = ve
		switch string(key) {
		case "id":
			if !bytes.Equal(v, litNull) {
				m.ID = v
			}
		case "method":
			if len(v) < 2 || v[0] != '"' {
				return m, errBadJSON
			}
			m.Method = v[1 : len(v)-1]
			hasMethod = true
		case "params":
			m.Params = v
		case "result":
			m.Result = v
		case "error":
			m.Error = v
		}
	}
	if skipWS(b, i) != len(b) {
		return m, errBadJSON
	}
	switch {
	case hasMethod && m.ID != nil:
		m.Kind = KindRequest
	case hasMethod:
		m.Kind = KindNotification
	case m.Result != nil || m.Error != nil:
		m.Kind = KindResponse
	default:
		return m, errNotJSONRPC
	}
	return m, nil
}

var (
	errBadJSON       = errors.New("malformed JSON")
	errNotJSONRPC    = errors.New("not a JSON-RPC message")
	litNull          = []byte("null")
	litTrue          = []byte("true")
	litInputRequired = []byte(`"input_required"`)
)

// Field returns the raw value of key in the JSON object obj, or nil.
func Field(obj []byte, key string) []byte {
	i := skipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil
	}
	i++
	for {
		i = skipWS(obj, i)
		if i >= len(obj) || obj[i] == '}' {
			return nil
		}
		if obj[i] == ',' {
			i++
			continue
		}
		if obj[i] != '"' {
			return nil
		}
		ke, err := skipString(obj, i)
		if err != nil {
			return nil
		}
		k := obj[i+1 : ke-1]
		i = skipWS(obj, ke)
		if i >= len(obj) || obj[i] != ':' {
			return nil
		}
		i = skipWS(obj, i+1)
		ve, err := skipValue(obj, i)
		if err != nil {
			return nil
		}
		if string(k) == key {
			return obj[i:ve]
		}
		i = ve
	}
}

// FieldNumber returns key's value as a float64 (ok false when absent or not
// a number).
func FieldNumber(obj []byte, key string) (float64, bool) {
	v := Field(obj, key)
	if len(v) == 0 || !(v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil
}

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index after the closing quote of the string at b[i].
func skipString(b []byte, i int) (int, error) {
	i++ // opening quote
	for {
		j := bytes.IndexAny(b[i:], "\"\\")
		if j < 0 {
			return 0, errBadJSON
		}
		i += j
		if b[i] == '"' {
			return i + 1, nil
		}
		i += 2 // backslash and the escaped byte
		if i > len(b) {
			return 0, errBadJSON
		}
	}
}

// skipValue returns the index after the JSON value starting at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errBadJSON
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{' || c == '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				e, err := skipString(b, i)
				if err != nil {
					return 0, err
				}
				i = e
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
			i++
		}
		return 0, errBadJSON
	default:
		s := i
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				if i == s {
					return 0, errBadJSON
				}
				return i, nil
			}
			i++
		}
		if i == s {
			return 0, errBadJSON
		}
		return i, nil
	}
}

// IDEqual reports whether the raw JSON id equals the integer id n.
func IDEqual(raw []byte, n int64) bool {
	if len(raw) == 0 || raw[0] == '"' {
		return false
	}
	var buf [20]byte
	return bytes.Equal(raw, strconv.AppendInt(buf[:0], n, 10))
}

// RPCError is a JSON-RPC error response (JSON-RPC 2.0 §5.1).
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *RPCError) Error() string {
	return "JSON-RPC error " + strconv.Itoa(e.Code) + ": " + e.Message
}

// parseRPCError decodes a raw error object. Malformed ones become code 0.
func parseRPCError(raw []byte) *RPCError {
	e := &RPCError{}
	if json.Unmarshal(raw, e) != nil {
		e.Message = "malformed error object"
	}
	return e
}

// appendRequest renders {"jsonrpc":"2.0","id":ID,"method":M,"params":P} where
// P is params with "_meta" merged in when meta is non-empty (meta is the
// inside of the _meta object, without braces).
func appendRequest(dst []byte, id int64, method string, params []byte, meta []byte) []byte {
	return appendRequestExtra(dst, id, method, params, nil, meta)
}

// appendRequestExtra is appendRequest with extra top-level params fields
// (without braces; e.g. the inputResponses of a multi round-trip retry).
func appendRequestExtra(dst []byte, id int64, method string, params, extra, meta []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = strconv.AppendInt(dst, id, 10)
	dst = append(dst, `,"method":"`...)
	dst = append(dst, method...)
	dst = append(dst, '"')
	if len(extra) > 0 {
		p := bytes.TrimSpace(params)
		if len(p) < 2 {
			p = []byte("{}")
		}
		merged := make([]byte, 0, len(p)+len(extra)+1)
		merged = append(merged, p[:len(p)-1]...)
		if !isEmptyObject(p) {
			merged = append(merged, ',')
		}
		merged = append(merged, extra...)
		merged = append(merged, '}')
		params = merged
	}
	return appendParams(dst, params, meta)
}

// appendNotification renders a notification without an id.
func appendNotification(dst []byte, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":"`...)
	dst = append(dst, method...)
	dst = append(dst, '"')
	return appendParams(dst, params, nil)
}

func appendParams(dst, params, meta []byte) []byte {
	if len(params) == 0 && len(meta) == 0 {
		return append(dst, '}')
	}
	dst = append(dst, `,"params":`...)
	if len(meta) == 0 {
		dst = append(dst, params...)
		return append(dst, '}')
	}
	p := bytes.TrimSpace(params)
	if len(p) < 2 {
		p = []byte("{}")
	}
	dst = append(dst, p[:len(p)-1]...) // without the closing brace
	if !isEmptyObject(p) {
		dst = append(dst, ',')
	}
	dst = append(dst, `"_meta":{`...)
	dst = append(dst, meta...)
	return append(dst, "}}}"...)
}

func isEmptyObject(p []byte) bool {
	return len(bytes.TrimSpace(p[1:len(p)-1])) == 0
}

// appendResponse renders a response to a server→client request.
func appendResponse(dst []byte, id []byte, result []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"result":`...)
	dst = append(dst, result...)
	return append(dst, '}')
}

// appendErrorResponse renders an error response to a server→client request.
func appendErrorResponse(dst []byte, id []byte, code int, msg string) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(dst, `,"message":`...)
	dst = appendJSONString(dst, msg)
	return append(dst, "}}"...)
}
