package jsonrpc

import "encoding/binary"

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

// SkipWS returns the index of the first byte at or after b[i] that is not
// JSON whitespace (RFC 8259 §2), or len(b).
func SkipWS(b []byte, i int) int {
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

// SkipValue returns the index after the valid JSON value starting at b[i].
func SkipValue(b []byte, i int) (int, error) { return scanValue(b, i, 0) }

// scanValue validates the JSON value starting at b[i] (leading whitespace
// allowed) and returns the index after it. depth is the nesting level of the
// container that holds the value (0 at top level). It does not recurse:
// the kinds of the open containers are kept in a bit stack.
func scanValue(b []byte, i, depth int) (int, error) {
	var (
		open bitStack // the kinds of the open containers
		n    int      // open containers
		arr  bool
		c    byte
	)
value:
	i = SkipWS(b, i)
	if i >= len(b) {
		return 0, errBadJSON
	}
	switch c = b[i]; c {
	case '"':
		i, _ = scanString(b, i)
	case '{', '[':
		if depth+n >= MaxJSONDepth {
			return 0, errTooDeep
		}
		arr = c == '['
		open.set(n, arr)
		n++
		i = SkipWS(b, i+1)
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
		i = scanLiteral(b, i, "true")
	case 'f':
		i = scanLiteral(b, i, "false")
	case 'n':
		i = scanLiteral(b, i, "null")
	default:
		i = scanNumber(b, i)
	}
	if i < 0 { // a malformed string, literal or number
		return 0, errBadJSON
	}
	// After a value: close containers, or go on to the next element.
	for n > 0 {
		i = SkipWS(b, i)
		if i >= len(b) {
			return 0, errBadJSON
		}
		arr = open.isArray(n - 1)
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
	if i = SkipWS(b, i); i >= len(b) || b[i] != '"' {
		return 0, errBadJSON
	}
	if i, _ = scanString(b, i); i < 0 {
		return 0, errBadJSON
	}
	if i = SkipWS(b, i); i >= len(b) || b[i] != ':' {
		return 0, errBadJSON
	}
	i++
	goto value
}

// scanLiteral validates the literal lit (true, false or null) at b[i]
// and returns the index after it, or -1.
func scanLiteral(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// bitStack holds the kinds of scanValue's open containers, one bit each
// (set for an array): 256 levels in place, deeper ones (up to
// MaxJSONDepth) in ext, allocated when first needed.
type bitStack struct {
	stk [4]uint64
	ext []uint64
}

// set records the kind of open container k (0 is the outermost).
func (s *bitStack) set(k int, arr bool) {
	if k >= 256 {
		s.setDeep(k, arr)
		return
	}
	if arr {
		s.stk[k>>6] |= 1 << (k & 63)
	} else {
		s.stk[k>>6] &^= 1 << (k & 63)
	}
}

// setDeep is set beyond 256 levels.
func (s *bitStack) setDeep(k int, arr bool) {
	if s.ext == nil {
		s.ext = make([]uint64, MaxJSONDepth/64+1)
	}
	if arr {
		s.ext[k>>6] |= 1 << (k & 63)
	} else {
		s.ext[k>>6] &^= 1 << (k & 63)
	}
}

// isArray reports whether open container k is an array.
func (s *bitStack) isArray(k int) bool {
	if k < 256 {
		return s.stk[k>>6]&(1<<(k&63)) != 0
	}
	return s.ext[k>>6]&(1<<(k&63)) != 0
}
