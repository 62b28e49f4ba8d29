package jsonrpc

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// AppendRequest renders {"jsonrpc":"2.0","id":ID,"method":M,"params":P} where
// P is params with "_meta" merged in when meta is non-empty (meta is the
// inside of the _meta object, without braces).
func AppendRequest(dst []byte, id int64, method string, params []byte, meta []byte) []byte {
	return AppendRequestExtra(dst, id, method, params, nil, meta)
}

// AppendRequestExtra is AppendRequest with extra top-level params fields
// (without braces; e.g. the inputResponses of a multi round-trip retry).
func AppendRequestExtra(dst []byte, id int64, method string, params, extra, meta []byte) []byte {
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
	return AppendParams(dst, params, meta)
}

// AppendNotification renders a notification without an id.
func AppendNotification(dst []byte, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":"`...)
	dst = append(dst, method...)
	dst = append(dst, '"')
	return AppendParams(dst, params, nil)
}

// AppendParams ends a message being rendered: `,"params":P}` where P is
// params (a raw JSON object) with a "_meta" member holding meta (raw JSON
// members) merged in when meta is non-empty; just `}` when both are empty.
func AppendParams(dst, params, meta []byte) []byte {
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

// AppendResponse renders a response to a server→client request.
func AppendResponse(dst []byte, id []byte, result []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"result":`...)
	dst = append(dst, result...)
	return append(dst, '}')
}

// AppendErrorResponse renders an error response to a server→client request.
func AppendErrorResponse(dst []byte, id []byte, code int, msg string) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(dst, `,"message":`...)
	dst = AppendString(dst, msg)
	return append(dst, "}}"...)
}

// AppendString appends s as a JSON string literal (RFC 8259 §7).
func AppendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
			i++
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			i++
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, `\ufffd`...)
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size
		}
	}
	return append(dst, '"')
}
