package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"
)

// An incoming message is validated as JSON and classified in one pass
// over its bytes (no reflection, no allocation); only the rare parts
// (error messages, initialize results, server→client requests, a method
// name with escapes) go through encoding/json.

// Kind is the kind of a JSON-RPC message.
type Kind uint8

const (
	KindInvalid      Kind = iota // not a JSON-RPC 2.0 object
	KindRequest                  // method and id
	KindNotification             // method, no id
	KindResponse                 // id with result or error
)

// MaxJSONDepth is the deepest nesting of objects and arrays Parse
// accepts, the message object itself counting as level 1: 10000, the limit
// of encoding/json, so both accept the same messages. Validation does not
// recurse: depth costs no stack, and up to 256 levels no allocation.
const MaxJSONDepth = 10000

// Message is a scanned JSON-RPC message. Its slices alias the input (except
// a Method that needed unescaping).
type Message struct {
	Kind   Kind
	ID     []byte // raw JSON id (number, or string with its quotes), nil if absent or null
	Method []byte // method name, unquoted and unescaped as encoding/json decodes it
	Params []byte // raw params, nil if none
	Result []byte // raw result, nil if none (a null result is "null")
	Error  []byte // raw error object, nil if none
}

var (
	errNotObject  = errors.New("not a JSON object")
	errBadJSON    = errors.New("malformed JSON")
	errTooDeep    = errors.New("JSON nested deeper than 10000 levels")
	errBadID      = errors.New("JSON-RPC id is not a string, number or null")
	errBadMethod  = errors.New("JSON-RPC method is not a string")
	errNotJSONRPC = errors.New("not a JSON-RPC message")
)

// Parse validates one JSON-RPC message and classifies it. The whole
// input must be one RFC 8259 JSON object (nested values included:
// structure, string escapes, no raw control characters, number grammar,
// literals, nothing but whitespace after it; strings are not checked for
// valid UTF-8, as encoding/json does not), nested at most MaxJSONDepth
// levels. Keys are matched after unescaping, exactly (not case-folded); a
// duplicate key's last value wins (as with encoding/json). The kind comes
// from the top-level keys: method and a non-null id make a request, method
// alone a notification, result or error a response. An id that is not a
// string, number or null, or a method that is not a string, makes the
// message invalid. Errors are unexported sentinels (callers wrap them with
// ErrBadResponse). No allocation unless the method needs unescaping. Safe
// for concurrent use.
func Parse(b []byte) (Message, error) {
	var m Message
	i := SkipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return m, errNotObject
	}
	idRaw, methodRaw, i, err := m.scanMembers(b, i+1)
	if err != nil {
		return Message{}, err
	}
	if SkipWS(b, i) != len(b) {
		return Message{}, errBadJSON
	}
	if err := m.classify(idRaw, methodRaw); err != nil {
		return Message{}, err
	}
	return m, nil
}

// scanMembers validates the members of the object whose '{' is just before
// b[i] and returns the index after its '}'. It sets m's Params, Result and
// Error, and returns the raw id and method values (nil when absent).
func (m *Message) scanMembers(b []byte, i int) (idRaw, methodRaw []byte, end int, err error) {
	i = SkipWS(b, i)
	if i < len(b) && b[i] == '}' {
		return nil, nil, i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return nil, nil, 0, errBadJSON
		}
		ke, esc := scanString(b, i)
		if ke < 0 {
			return nil, nil, 0, errBadJSON
		}
		key := b[i+1 : ke-1]
		i = SkipWS(b, ke)
		if i >= len(b) || b[i] != ':' {
			return nil, nil, 0, errBadJSON
		}
		vs := SkipWS(b, i+1)
		ve, err := scanValue(b, vs, 1)
		if err != nil {
			return nil, nil, 0, err
		}
		v := b[vs:ve]
		switch keyName(key, esc) {
		case keyID:
			idRaw = v
		case keyMethod:
			methodRaw = v
		case keyParams:
			m.Params = v
		case keyResult:
			m.Result = v
		case keyError:
			m.Error = v
		}
		i = SkipWS(b, ve)
		if i >= len(b) {
			return nil, nil, 0, errBadJSON
		}
		if b[i] == ',' {
			i = SkipWS(b, i+1)
			continue
		}
		if b[i] != '}' {
			return nil, nil, 0, errBadJSON
		}
		return idRaw, methodRaw, i + 1, nil
	}
}

// classify sets m's ID, Method and Kind from the raw id and method values
// (nil when absent) and the Result and Error scanMembers set.
func (m *Message) classify(idRaw, methodRaw []byte) error {
	if idRaw != nil {
		switch c := idRaw[0]; {
		case c == 'n': // null: no id
		case c == '"' || c == '-' || c >= '0' && c <= '9':
			m.ID = idRaw
		default:
			return errBadID
		}
	}
	if methodRaw != nil {
		if methodRaw[0] != '"' {
			return errBadMethod
		}
		m.Method = unquote(methodRaw)
	}
	switch {
	case methodRaw != nil && m.ID != nil:
		m.Kind = KindRequest
	case methodRaw != nil:
		m.Kind = KindNotification
	case m.Result != nil || m.Error != nil:
		m.Kind = KindResponse
	default:
		return errNotJSONRPC
	}
	return nil
}

// The top-level keys Parse looks at.
const (
	keyOther = iota
	keyID
	keyMethod
	keyParams
	keyResult
	keyError
)

// keyName identifies a key's contents (between the quotes; esc when it
// holds a backslash) after unescaping.
func keyName(k []byte, esc bool) int {
	if esc {
		// Rare: unescape into a small array; a longer or non-ASCII key is
		// none of ours.
		var buf [8]byte
		n := 0
		for i := 0; i < len(k); i++ {
			c := k[i]
			if c == '\\' {
				i++
				switch k[i] {
				case 'u':
					r := hexVal[k[i+1]]<<12 | hexVal[k[i+2]]<<8 | hexVal[k[i+3]]<<4 | hexVal[k[i+4]]
					if r >= 0x80 {
						return keyOther
					}
					c = byte(r)
					i += 4
				case 'b':
					c = '\b'
				case 'f':
					c = '\f'
				case 'n':
					c = '\n'
				case 'r':
					c = '\r'
				case 't':
					c = '\t'
				default: // '"', '\\', '/'
					c = k[i]
				}
			}
			if n == len(buf) {
				return keyOther
			}
			buf[n] = c
			n++
		}
		k = buf[:n]
	}
	switch string(k) {
	case "id":
		return keyID
	case "method":
		return keyMethod
	case "params":
		return keyParams
	case "result":
		return keyResult
	case "error":
		return keyError
	}
	return keyOther
}

// unquote returns the contents of the valid JSON string s decoded as
// encoding/json decodes it: the bytes between the quotes when they hold no
// escape and are valid UTF-8 (no allocation), else a decoded copy (invalid
// UTF-8 becomes U+FFFD).
func unquote(s []byte) []byte {
	in := s[1 : len(s)-1]
	plain := true
	for _, c := range in {
		if c == '\\' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain || bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
		return in
	}
	var out string
	if json.Unmarshal(s, &out) != nil {
		return in // not reached for a string Parse validated
	}
	return []byte(out)
}

// Field returns the raw value of key in the JSON object obj, or nil. Keys
// are compared after unescaping, and a duplicate key's last value wins, as
// with encoding/json. obj is meant to be valid JSON (a slice of a message
// Parse accepted); where it is not, Field returns nil. No allocation
// unless a key holds an escape. Safe for concurrent use.
func Field(obj []byte, key string) []byte {
	i := SkipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil
	}
	i = SkipWS(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return nil
	}
	var found []byte
	for {
		if i >= len(obj) || obj[i] != '"' {
			return nil
		}
		ke, esc := scanString(obj, i)
		if ke < 0 {
			return nil
		}
		k := obj[i:ke]
		i = SkipWS(obj, ke)
		if i >= len(obj) || obj[i] != ':' {
			return nil
		}
		vs := SkipWS(obj, i+1)
		ve, err := scanValue(obj, vs, 1)
		if err != nil {
			return nil
		}
		if string(k[1:len(k)-1]) == key || esc && string(unquote(k)) == key {
			found = obj[vs:ve]
		}
		i = SkipWS(obj, ve)
		if i >= len(obj) {
			return nil
		}
		if obj[i] == '}' {
			return found
		}
		if obj[i] != ',' {
			return nil
		}
		i = SkipWS(obj, i+1)
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

// IDEqual reports whether the raw JSON id equals the integer id n.
func IDEqual(raw []byte, n int64) bool {
	if len(raw) == 0 || raw[0] == '"' {
		return false
	}
	var buf [20]byte
	return bytes.Equal(raw, strconv.AppendInt(buf[:0], n, 10))
}

// Error is a JSON-RPC error response (JSON-RPC 2.0 §5.1).
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	return "JSON-RPC error " + strconv.Itoa(e.Code) + ": " + e.Message
}

// ParseError decodes a raw error object. Malformed ones become code 0.
func ParseError(raw []byte) *Error {
	e := &Error{}
	if json.Unmarshal(raw, e) != nil {
		e.Message = "malformed error object"
	}
	return e
}
