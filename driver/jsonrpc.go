package driver

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"
)

// The JSON-RPC layer of the hot path: an incoming message is validated as
// JSON and classified in one pass over its bytes (no reflection, no
// allocation); only the rare parts (error messages, initialize results,
// server→client requests, a method name with escapes) go through
// encoding/json.

// Kind is the kind of a JSON-RPC message.
type Kind uint8

const (
	KindInvalid      Kind = iota // not a JSON-RPC 2.0 object
	KindRequest                  // method and id
	KindNotification             // method, no id
	KindResponse                 // id with result or error
)

// MaxJSONDepth is the deepest nesting of objects and arrays ParseMessage
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

	litNull          = []byte("null")
	litTrue          = []byte("true")
	litInputRequired = []byte(`"input_required"`)
)

// ParseMessage validates one JSON-RPC message and classifies it. The whole
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
func ParseMessage(b []byte) (Message, error) {
	var m Message
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return m, errNotObject
	}
	i = skipWS(b, i+1)
	var idRaw, methodRaw []byte
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		for {
			if i >= len(b) || b[i] != '"' {
				return Message{}, errBadJSON
			}
			ke, esc := scanString(b, i)
			if ke < 0 {
				return Message{}, errBadJSON
			}
			key := b[i+1 : ke-1]
			i = skipWS(b, ke)
			if i >= len(b) || b[i] != ':' {
				return Message{}, errBadJSON
			}
			vs := skipWS(b, i+1)
			ve, err := scanValue(b, vs, 1)
			if err != nil {
				return Message{}, err
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
			i = skipWS(b, ve)
			if i >= len(b) {
				return Message{}, errBadJSON
			}
			if b[i] == ',' {
				i = skipWS(b, i+1)
				continue
			}
			if b[i] != '}' {
				return Message{}, errBadJSON
			}
			i++
			break
		}
	}
	if skipWS(b, i) != len(b) {
		return Message{}, errBadJSON
	}
	if idRaw != nil {
		switch c := idRaw[0]; {
		case c == 'n': // null: no id
		case c == '"' || c == '-' || c >= '0' && c <= '9':
			m.ID = idRaw
		default:
			return Message{}, errBadID
		}
	}
	if methodRaw != nil {
		if methodRaw[0] != '"' {
			return Message{}, errBadMethod
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
		return Message{}, errNotJSONRPC
	}
	return m, nil
}

// The top-level keys ParseMessage looks at.
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
		return in // not reached for a string ParseMessage validated
	}
	return []byte(out)
}

// Byte classes of the scanner.
var (
	isSpace  [256]bool // JSON whitespace
	strPlain [256]bool // string bytes that need no attention
	hexVal   [256]rune // value of a hex digit, 0 otherwise
	isHex    [256]bool
	isDigit  [256]bool
)

func init() {
	for _, c := range []byte(" \t\n\r") {
		isSpace[c] = true
	}
	for c := 0x20; c < 256; c++ {
		strPlain[c] = c != '"' && c != '\\'
	}
	for c := '0'; c <= '9'; c++ {
		hexVal[c], isHex[c], isDigit[c] = c-'0', true, true
	}
	for c := 'a'; c <= 'f'; c++ {
		hexVal[c], isHex[c] = c-'a'+10, true
		hexVal[c-'a'+'A'], isHex[c-'a'+'A'] = c-'a'+10, true
	}
}

// Field returns the raw value of key in the JSON object obj, or nil. Keys
// are compared after unescaping, and a duplicate key's last value wins, as
// with encoding/json. obj is meant to be valid JSON (a slice of a message
// ParseMessage accepted); where it is not, Field returns nil. No allocation
// unless a key holds an escape. Safe for concurrent use.
func Field(obj []byte, key string) []byte {
	i := skipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil
	}
	i = skipWS(obj, i+1)
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
		i = skipWS(obj, ke)
		if i >= len(obj) || obj[i] != ':' {
			return nil
		}
		vs := skipWS(obj, i+1)
		ve, err := scanValue(obj, vs, 1)
		if err != nil {
			return nil
		}
		if string(k[1:len(k)-1]) == key || esc && string(unquote(k)) == key {
			found = obj[vs:ve]
		}
		i = skipWS(obj, ve)
		if i >= len(obj) {
			return nil
		}
		if obj[i] == '}' {
			return found
		}
		if obj[i] != ',' {
			return nil
		}
		i = skipWS(obj, i+1)
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
	for i < len(b) && isSpace[b[i]] {
		i++
	}
	return i
}

// Repeated-byte constants of the word-at-a-time string scan.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// scanString validates the JSON string starting at the quote b[i] and
// returns the index after its closing quote (-1 when it is malformed:
// unterminated, a raw control character, a bad escape), and whether it holds
// an escape.
func scanString(b []byte, i int) (int, bool) {
	esc := false
	i++ // opening quote
	for {
		// The bulk of a string, 8 bytes at a time: stop at a word holding a
		// quote, a backslash or a control character (exact "any byte"
		// tests: a borrow can only come from a byte that matches).
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			q := x ^ (lsb * '"')
			s := x ^ (lsb * '\\')
			if ((x-lsb*0x20)&^x|(q-lsb)&^q|(s-lsb)&^s)&msb != 0 {
				break
			}
			i += 8
		}
		for i < len(b) && strPlain[b[i]] {
			i++
		}
		if i >= len(b) {
			return -1, esc
		}
		switch b[i] {
		case '"':
			return i + 1, esc
		case '\\':
			esc = true
			if i+1 >= len(b) {
				return -1, esc
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex[b[i+2]] || !isHex[b[i+3]] || !isHex[b[i+4]] || !isHex[b[i+5]] {
					return -1, esc
				}
				i += 6
			default:
				return -1, esc
			}
		default: // a control character
			return -1, esc
		}
	}
}

// scanNumber validates the JSON number at b[i] (RFC 8259 §6:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?) and returns the index
// after it, or -1. What follows is the caller's to check.
func scanNumber(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return -1
	}
	if b[i] == '0' {
		i++
	} else if b[i] >= '1' && b[i] <= '9' {
		i++
		for i < len(b) && isDigit[b[i]] {
			i++
		}
	} else {
		return -1
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit[b[i]] {
			return -1
		}
		for i < len(b) && isDigit[b[i]] {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit[b[i]] {
			return -1
		}
		for i < len(b) && isDigit[b[i]] {
			i++
		}
	}
	return i
}

// skipValue returns the index after the valid JSON value starting at b[i].
func skipValue(b []byte, i int) (int, error) { return scanValue(b, i, 0) }

// scanValue validates the JSON value starting at b[i] (leading whitespace
// allowed) and returns the index after it. depth is the nesting level of the
// container that holds the value (0 at top level). It does not recurse:
// the kinds of the open containers are kept in a bit stack.
func scanValue(b []byte, i, depth int) (int, error) {
	var (
		stk [4]uint64 // open containers, 1 bit each: set for an array
		ext []uint64  // the bit stack beyond 256 levels
		n   int       // open containers
		arr bool
		c   byte
		e   int
	)
value:
	for i < len(b) && isSpace[b[i]] {
		i++
	}
	if i >= len(b) {
		return 0, errBadJSON
	}
	switch c = b[i]; c {
	case '"':
		if e, _ = scanString(b, i); e < 0 {
			return 0, errBadJSON
		}
		i = e
	case '{', '[':
		if depth+n >= MaxJSONDepth {
			return 0, errTooDeep
		}
		arr = c == '['
		if n < 256 {
			if arr {
				stk[n>>6] |= 1 << (n & 63)
			} else {
				stk[n>>6] &^= 1 << (n & 63)
			}
		} else {
			if ext == nil {
				ext = make([]uint64, MaxJSONDepth/64+1)
			}
			if arr {
				ext[n>>6] |= 1 << (n & 63)
			} else {
				ext[n>>6] &^= 1 << (n & 63)
			}
		}
		n++
		i++
		for i < len(b) && isSpace[b[i]] {
			i++
		}
		if i < len(b) && b[i] == c+2 { // '[' ']' and '{' '}' are 2 apart
			n--
			i++
			break
		}
		if arr {
			goto value
		}
		goto key
	case 't':
		if len(b)-i < 4 || string(b[i:i+4]) != "true" {
			return 0, errBadJSON
		}
		i += 4
	case 'f':
		if len(b)-i < 5 || string(b[i:i+5]) != "false" {
			return 0, errBadJSON
		}
		i += 5
	case 'n':
		if len(b)-i < 4 || string(b[i:i+4]) != "null" {
			return 0, errBadJSON
		}
		i += 4
	default:
		if i = scanNumber(b, i); i < 0 {
			return 0, errBadJSON
		}
	}
	// After a value: close containers, or go on to the next element.
	for n > 0 {
		for i < len(b) && isSpace[b[i]] {
			i++
		}
		if i >= len(b) {
			return 0, errBadJSON
		}
		k := n - 1
		if k < 256 {
			arr = stk[k>>6]&(1<<(k&63)) != 0
		} else {
			arr = ext[k>>6]&(1<<(k&63)) != 0
		}
		switch c = b[i]; {
		case c == ',':
			i++
			if arr {
				goto value
			}
			goto key
		case arr && c == ']', !arr && c == '}':
			n--
			i++
		default:
			return 0, errBadJSON
		}
	}
	return i, nil
key:
	for i < len(b) && isSpace[b[i]] {
		i++
	}
	if i >= len(b) || b[i] != '"' {
		return 0, errBadJSON
	}
	if e, _ = scanString(b, i); e < 0 {
		return 0, errBadJSON
	}
	i = e
	for i < len(b) && isSpace[b[i]] {
		i++
	}
	if i >= len(b) || b[i] != ':' {
		return 0, errBadJSON
	}
	i++
	goto value
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
